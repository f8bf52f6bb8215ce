/* TCJOIN_TRACE: what to trace, for benchmarks (scripts/bench_cluster.sh,
 * scripts/gpu-h43.sh) and for a look inside a run; a comma list of the
 * parts of kt_parts below ("1" or "all": every part that prints on
 * stderr, which is what TCJOIN_TRACE=1 has always meant). A new part is
 * one enum value (kernels.h) and one row here.
 * steps: every step line on stderr. kern_trace_on is the one switch
 * that DBSCAN's, the curve's and the k-distance's step lines read too. A
 * mark is a run's host step, one line: the milliseconds since the
 * previous mark, the minor page faults in them and the resident set
 * after them (which step holds the memory a run peaks at), where a small set's
 * run spends what its kernels do not (the engine's set-up, the cut's
 * plan, each kern_run's begin, launches and end: kern_drive.cu's line;
 * the curve's steps, src/cluster/dbscan_curve.c). Off, a mark is
 * pthread_once's test, one load and a test.
 * cut-dump=FILE: each new layout of the cluster cut written to FILE
 * (kernels/kern_cluster.c). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kernels.h"

/* One row per part: its name, whether it takes "=FILE", and whether "1"
 * and "all" turn it on (the parts that print on stderr). */
static const struct {
    const char *name;
    int file;
    int in_all;
} kt_parts[KERN_TRACE_NPARTS] = {
    [KERN_TRACE_STEPS] = {.name = "steps", .in_all = 1},
    [KERN_TRACE_CUT_DUMP] = {.name = "cut-dump", .file = 1},
};

static int g_kt_on;                             /* the steps part, read by every mark */
static int g_kt_part[KERN_TRACE_NPARTS];        /* each part on */
static char g_kt_file[KERN_TRACE_NPARTS][1024]; /* the parts' files */
static pthread_once_t g_kt_once = PTHREAD_ONCE_INIT;
static double g_kt_last;
static long g_kt_faults; /* the process's minor page faults at the last mark */

/* The parts' names as a bad word's line lists them. */
static void kt_names(char *b, size_t n)
{
    size_t k = 0;
    b[0] = '\0';
    for (int p = 0; p < KERN_TRACE_NPARTS && k < n; p++)
        k += (size_t)snprintf(b + k, n - k, "%s%s", kt_parts[p].name,
                              kt_parts[p].file ? "=FILE, " : ", ");
    if (k < n)
        snprintf(b + k, n - k, "all (or 1), 0");
}

/* The trace spec asks for, replacing the last: 0, or nonzero with why
 * naming the first word that is no part (the other words are taken). */
static int kt_apply(const char *spec, char *why, size_t wn)
{
    int bad = 0;
    memset(g_kt_part, 0, sizeof g_kt_part);
    memset(g_kt_file, 0, sizeof g_kt_file);
    why[0] = '\0';
    for (const char *w = spec; w && *w;) {
        const size_t len = strcspn(w, ","), key = strcspn(w, ",=");
        const char *val = key < len ? w + key + 1 : NULL;
        const int vlen = val ? (int)(len - key - 1) : 0;
        int part = -1;
        for (int p = 0; p < KERN_TRACE_NPARTS; p++)
            if (strlen(kt_parts[p].name) == key && strncmp(w, kt_parts[p].name, key) == 0)
                part = p;
        const char *err = NULL;
        if (len == 0) {
            /* an empty word (",,", a trailing comma) asks for nothing */
        } else if (!val && ((len == 1 && w[0] == '1') || (len == 3 && !strncmp(w, "all", 3)))) {
            for (int p = 0; p < KERN_TRACE_NPARTS; p++)
                g_kt_part[p] |= kt_parts[p].in_all;
        } else if (!val && len == 1 && w[0] == '0') {
            /* nothing */
        } else if (part < 0) {
            err = "is no part";
        } else if (kt_parts[part].file && (!val || vlen == 0)) {
            err = "needs a file";
        } else if (!kt_parts[part].file && val) {
            err = "takes no value";
        } else if (val && (size_t)vlen >= sizeof g_kt_file[part]) {
            err = "has a file name too long";
        } else {
            g_kt_part[part] = 1;
            if (val)
                snprintf(g_kt_file[part], sizeof g_kt_file[part], "%.*s", vlen, val);
        }
        if (err && !bad) {
            char names[256];
            kt_names(names, sizeof names);
            snprintf(why, wn, "TCJOIN_TRACE: '%.*s' %s (parts: %s)", (int)len, w, err, names);
            bad = 1;
        }
        w += len + (w[len] == ',');
    }
    g_kt_on = g_kt_part[KERN_TRACE_STEPS];
    return bad;
}

/* The environment's trace, once; a word that is no part is said in one
 * line on stderr (the rest is taken). */
static void kt_init(void)
{
    char why[512];
    if (kt_apply(getenv("TCJOIN_TRACE"), why, sizeof why))
        fprintf(stderr, "tcjoin: %s\n", why);
}

int kern_trace_set(const char *spec)
{
    pthread_once(&g_kt_once, kt_init);
    char why[512];
    return kt_apply(spec, why, sizeof why) ? kern_fail_msg(KERN_EINVAL, why) : 0;
}

const char *kern_trace_file(kern_trace_part p)
{
    pthread_once(&g_kt_once, kt_init);
    return p >= 0 && p < KERN_TRACE_NPARTS && g_kt_part[p] && g_kt_file[p][0] ? g_kt_file[p] : NULL;
}

/* Minor page faults so far: a host step's fresh pages (each fault dear,
 * more so in the H200 host's sandbox) told apart from its work. */
static long kt_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

static double kt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int kern_trace_on(void)
{
    pthread_once(&g_kt_once, kt_init);
    return g_kt_on;
}

/* The resident set in MB now (/proc/self/statm; 0 where it cannot be
 * read): which step holds the host memory a run peaks at. */
static double kt_rss_mb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long size = 0, res = 0;
    if (!f)
        return 0;
    const int got = fscanf(f, "%ld %ld", &size, &res);
    fclose(f);
    return got == 2 ? (double)res * (double)sysconf(_SC_PAGESIZE) / 1e6 : 0;
}

void kern_trace_mark(const char *what)
{
    if (!kern_trace_on())
        return;
    const double now = kt_now();
    const long f = kt_faults();
    if (g_kt_last > 0)
        fprintf(stderr, "kern mark %s +%.3f ms, %ld faults, %.0f MB resident\n", what,
                (now - g_kt_last) * 1e3, f - g_kt_faults, kt_rss_mb());
    else
        fprintf(stderr, "kern mark %s\n", what);
    g_kt_faults = f;
    g_kt_last = kt_now();
}
