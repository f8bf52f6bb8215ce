#include "check.h"

#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>
#include <setjmp.h>

#define T_MAX 512

static struct {
    const char *name;
    void (*fn)(void);
} t_cases[T_MAX];
static int t_n;
static int t_failed_now;
static jmp_buf t_skip_jmp;
static char t_skip_reason[512];
static char t_tmp[256];

void t_register(const char *name, void (*fn)(void))
{
    if (t_n < T_MAX) {
        t_cases[t_n].name = name;
        t_cases[t_n].fn = fn;
        t_n++;
    }
}

static const char *t_current;

void t_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    printf("not ok - %s: %s:%d: %s\n", t_current, file, line, msg);
    fflush(stdout);
    t_failed_now = 1;
}

void t_skip(const char *reason)
{
    snprintf(t_skip_reason, sizeof t_skip_reason, "%s", reason);
    longjmp(t_skip_jmp, 1);
}

const char *t_dataset(const char *file)
{
    static char path[4][1024];
    static int k;
    const char *dir = getenv("TCJOIN_DATASETS");
    if (!dir)
        dir = "../shared/datasets";
    k = (k + 1) % 4;
    snprintf(path[k], sizeof path[k], "%s/%s", dir, file);
    return path[k];
}

const char *t_tmpdir(void)
{
    if (!t_tmp[0]) {
        snprintf(t_tmp, sizeof t_tmp, "/tmp/tcjoin-test-XXXXXX");
        if (!mkdtemp(t_tmp)) {
            perror("mkdtemp");
            exit(2);
        }
    }
    return t_tmp;
}

const char *t_path(const char *name)
{
    static char buf[32][1024];
    static int k;
    k = (k + 1) % 32;
    snprintf(buf[k], sizeof buf[k], "%s/%s", t_tmpdir(), name);
    return buf[k];
}

const char *t_write(const char *name, const void *data, size_t len)
{
    const char *p = t_path(name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(data, 1, len, f) != len) {
        perror(p);
        exit(2);
    }
    fclose(f);
    return p;
}

uint64_t t_splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

double t_unit(uint64_t *state)
{
    return (double)(t_splitmix(state) >> 11) * 0x1p-53;
}

static void t_cleanup(void)
{
    if (t_tmp[0]) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", t_tmp);
        if (system(cmd) != 0)
            fprintf(stderr, "could not remove %s\n", t_tmp);
    }
}

int main(int argc, char **argv)
{
    atexit(t_cleanup);
    static int failed;
    /* static: survives the longjmp of a skipped case */
    static int k;
    for (k = 0; k < t_n; k++) {
        if (argc > 1 && !strstr(t_cases[k].name, argv[1]))
            continue;
        t_current = t_cases[k].name;
        t_failed_now = 0;
        if (setjmp(t_skip_jmp)) {
            printf("skip - %s: %s\n", t_current, t_skip_reason);
            fflush(stdout);
            continue;
        }
        t_cases[k].fn();
        if (!t_failed_now)
            printf("ok - %s\n", t_current);
        else
            failed++;
        fflush(stdout);
    }
    return failed ? 1 : 0;
}
