#include "mem.h"

#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "err.h"

/* "Key:   N kB" from /proc/meminfo (or /proc/self/status), in bytes; 0 if
 * absent. */
static uint64_t proc_kb(const char *file, const char *key)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return 0;
    char line[256];
    uint64_t v = 0;
    size_t k = strlen(key);
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, key, k) && line[k] == ':') {
            v = strtoull(line + k + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

/* The first number in a file, UINT64_MAX if none ("max"). */
static uint64_t file_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return UINT64_MAX;
    char line[64] = "";
    uint64_t v = UINT64_MAX;
    if (fgets(line, sizeof line, f) && line[0] >= '0' && line[0] <= '9')
        v = strtoull(line, NULL, 10);
    fclose(f);
    return v;
}

static uint64_t mem_cap;

void mem_cap_for_tests(uint64_t bytes)
{
    mem_cap = bytes;
}

uint64_t mem_available(void)
{
    uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable");
    if (!avail) {
        long pages = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        avail = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize : UINT64_MAX;
    }
    /* a container's limit, cgroup v2 then v1 */
    static const char *const lim[][2] = {
        {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
         "/sys/fs/cgroup/memory/memory.usage_in_bytes"},
    };
    for (int i = 0; i < 2; i++) {
        uint64_t max = file_number(lim[i][0]), cur = file_number(lim[i][1]);
        if (max != UINT64_MAX && cur != UINT64_MAX) {
            uint64_t left = max > cur ? max - cur : 0;
            if (left < avail)
                avail = left;
            break;
        }
    }
    /* ulimit -v: the address space left */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t used = proc_kb("/proc/self/status", "VmSize");
        uint64_t left = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
        if (left < avail)
            avail = left;
    }
    if (mem_cap && mem_cap < avail)
        avail = mem_cap;
    return avail;
}

const char *mem_bytes_str(uint64_t b, char *buf)
{
    static const char *unit[] = {"bytes", "KB", "MB", "GB", "TB", "PB", "EB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1000 && u < 6) {
        v /= 1000;
        u++;
    }
    if (u == 0)
        snprintf(buf, 32, "%llu bytes", (unsigned long long)b);
    else
        snprintf(buf, 32, "%.1f %s", v, unit[u]);
    return buf;
}

/* Below this an allocation is not worth reading /proc for: malloc's own
 * failure is still a line. */
#define MEM_CHECK_MIN ((uint64_t)16 << 20)

static int mem_refuse(const char *what, const char *for_what, uint64_t bytes, uint64_t avail)
{
    char a[32], b[32];
    if (bytes == UINT64_MAX)
        return err_set(TCJ_ENOMEM, "%s: %s needs more than 2^63 bytes of memory", what, for_what);
    return err_set(TCJ_ENOMEM, "%s: needs %s of memory for %s; %s available", what,
                   mem_bytes_str(bytes, a), for_what, mem_bytes_str(avail, b));
}

static uint64_t mem_bytes(uint64_t cnt, uint64_t size, uint64_t extra)
{
    uint64_t b;
    if (__builtin_mul_overflow(cnt, size, &b) || __builtin_add_overflow(b, extra, &b) ||
        b > SIZE_MAX / 2)
        return UINT64_MAX;
    return b;
}

int mem_check(const char *what, const char *for_what, uint64_t cnt, uint64_t size, uint64_t extra)
{
    uint64_t bytes = mem_bytes(cnt, size, extra);
    if (bytes == UINT64_MAX)
        return mem_refuse(what, for_what, bytes, 0);
    if (bytes < MEM_CHECK_MIN)
        return 0;
    uint64_t avail = mem_available();
#ifdef __GLIBC__
    if (bytes > avail && malloc_trim(0)) /* what mem_keep_freed kept, back */
        avail = mem_available();
#endif
    if (bytes > avail)
        return mem_refuse(what, for_what, bytes, avail);
    return 0;
}

void mem_keep_freed(void)
{
#ifdef __GLIBC__
    if (getenv("GLIBC_TUNABLES") || getenv("MALLOC_TRIM_THRESHOLD_") ||
        getenv("MALLOC_MMAP_THRESHOLD_"))
        return;
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
#endif
}

void mem_free_promptly(void)
{
#ifdef __GLIBC__
    if (getenv("GLIBC_TUNABLES") || getenv("MALLOC_TRIM_THRESHOLD_") ||
        getenv("MALLOC_MMAP_THRESHOLD_"))
        return;
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 20);
#endif
}

void *mem_alloc(const char *what, const char *for_what, size_t cnt, size_t size, int zero)
{
    if (mem_check(what, for_what, cnt, size, 0))
        return NULL;
    size_t bytes = cnt * size;
    void *p = zero ? calloc(bytes ? bytes : 1, 1) : malloc(bytes ? bytes : 1);
    if (!p)
        mem_refuse(what, for_what, bytes, mem_available());
    return p;
}
