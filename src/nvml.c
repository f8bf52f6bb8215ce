/* NVML through dlopen and a table of function pointers; the few types and
 * constants used are declared here (no build-time nvml.h), the way nvtop
 * does it. A missing library, driver or device is "not available" with a
 * reason, never an error that stops a run. */
#include "nvml.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"

typedef int nvml_ret; /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct nvml_dev_s *nvml_dev;

enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_TEMPERATURE_GPU = 0 };

static struct {
    nvml_ret (*init)(void);
    nvml_ret (*shutdown)(void);
    const char *(*error_string)(nvml_ret);
    nvml_ret (*count)(unsigned *);
    nvml_ret (*by_index)(unsigned, nvml_dev *);
    nvml_ret (*clock)(nvml_dev, int, unsigned *);
    nvml_ret (*power)(nvml_dev, unsigned *);
    nvml_ret (*power_limit)(nvml_dev, unsigned *);
    nvml_ret (*temp)(nvml_dev, int, unsigned *);
    nvml_ret (*reasons)(nvml_dev, unsigned long long *);
} fn;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int opened;    /* 0 not tried, 1 ok, -1 unavailable */
static char why[192]; /* reason when unavailable */
static void *lib;
static const char *lib_path; /* NULL: the default names */

void nvml_set_library(const char *path)
{
    pthread_mutex_lock(&lock);
    if (opened == 1 && fn.shutdown)
        fn.shutdown();
    if (lib)
        dlclose(lib);
    lib = NULL;
    opened = 0;
    why[0] = '\0';
    memset(&fn, 0, sizeof fn);
    lib_path = path;
    pthread_mutex_unlock(&lock);
}

static int open_locked(void)
{
    if (opened)
        return opened > 0 ? 0 : TCJ_EUNSUP;
    opened = -1;
    const char *names[] = {lib_path ? lib_path : "libnvidia-ml.so.1",
                           lib_path ? NULL : "libnvidia-ml.so", NULL};
    for (int k = 0; names[k] && !lib; k++)
        lib = dlopen(names[k], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, sizeof why, "libnvidia-ml.so.1 not found (no NVIDIA driver)");
        return TCJ_EUNSUP;
    }
    /* Newer drivers name the reasons call "clocks event"; older ones
     * "clocks throttle". Either gives the same bitmask. */
    *(void **)&fn.init = dlsym(lib, "nvmlInit_v2");
    *(void **)&fn.shutdown = dlsym(lib, "nvmlShutdown");
    *(void **)&fn.error_string = dlsym(lib, "nvmlErrorString");
    *(void **)&fn.count = dlsym(lib, "nvmlDeviceGetCount_v2");
    *(void **)&fn.by_index = dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
    *(void **)&fn.clock = dlsym(lib, "nvmlDeviceGetClockInfo");
    *(void **)&fn.power = dlsym(lib, "nvmlDeviceGetPowerUsage");
    *(void **)&fn.power_limit = dlsym(lib, "nvmlDeviceGetEnforcedPowerLimit");
    *(void **)&fn.temp = dlsym(lib, "nvmlDeviceGetTemperature");
    *(void **)&fn.reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (!fn.reasons)
        *(void **)&fn.reasons = dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    if (!fn.init || !fn.count || !fn.by_index) {
        snprintf(why, sizeof why, "libnvidia-ml lacks nvmlInit_v2 (driver too old)");
        dlclose(lib);
        lib = NULL;
        return TCJ_EUNSUP;
    }
    nvml_ret r = fn.init();
    if (r != 0) {
        snprintf(why, sizeof why, "nvmlInit failed: %s",
                 fn.error_string ? fn.error_string(r) : "error");
        return TCJ_EUNSUP;
    }
    unsigned n = 0;
    if (fn.count(&n) != 0 || n == 0) {
        snprintf(why, sizeof why, "NVML sees no GPU");
        return TCJ_EUNSUP;
    }
    opened = 1;
    return 0;
}

int nvml_open(void)
{
    pthread_mutex_lock(&lock);
    int rc = open_locked();
    pthread_mutex_unlock(&lock);
    if (rc)
        return err_set(rc, "NVML not available: %s", why);
    return 0;
}

const char *nvml_unavailable_reason(void)
{
    return opened > 0 ? "" : why;
}

/* The NVML index of CUDA device dev: CUDA_VISIBLE_DEVICES remaps ordinals
 * (NVML ignores it); a plain list of numbers is followed, anything else
 * (UUIDs) falls back to the ordinal. */
static unsigned nvml_index(int dev)
{
    const char *vis = getenv("CUDA_VISIBLE_DEVICES");
    if (vis && *vis) {
        const char *p = vis;
        for (int k = 0; *p; k++) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            if (k == dev)
                return (unsigned)v;
            p = *end == ',' ? end + 1 : end;
            if (!*end)
                break;
        }
    }
    return dev < 0 ? 0u : (unsigned)dev;
}

static void sample_invalid(nvml_sample *s)
{
    memset(s, 0, sizeof *s);
    s->sm_mhz = s->mem_mhz = s->power_w = s->temp_c = s->power_limit_w = NAN;
}

static int sample_dev(nvml_dev h, nvml_sample *s)
{
    unsigned v;
    unsigned long long m;
    if (fn.clock && fn.clock(h, NVML_CLOCK_SM, &v) == 0)
        s->sm_mhz = v, s->valid |= NVML_V_SM;
    if (fn.clock && fn.clock(h, NVML_CLOCK_MEM, &v) == 0)
        s->mem_mhz = v, s->valid |= NVML_V_MEM;
    if (fn.power && fn.power(h, &v) == 0)
        s->power_w = v / 1000.0, s->valid |= NVML_V_POWER;
    if (fn.power_limit && fn.power_limit(h, &v) == 0)
        s->power_limit_w = v / 1000.0, s->valid |= NVML_V_LIMIT;
    if (fn.temp && fn.temp(h, NVML_TEMPERATURE_GPU, &v) == 0)
        s->temp_c = v, s->valid |= NVML_V_TEMP;
    if (fn.reasons && fn.reasons(h, &m) == 0)
        s->reasons = m, s->valid |= NVML_V_REASONS;
    return 0;
}

static int handle_for(int dev, nvml_dev *h)
{
    if (open_locked())
        return TCJ_EUNSUP;
    if (fn.by_index(nvml_index(dev), h) != 0) {
        snprintf(why, sizeof why, "NVML has no device %u", nvml_index(dev));
        return TCJ_EUNSUP;
    }
    return 0;
}

int nvml_sample_now(int dev, nvml_sample *out)
{
    sample_invalid(out);
    nvml_dev h;
    pthread_mutex_lock(&lock);
    int rc = handle_for(dev, &h);
    pthread_mutex_unlock(&lock);
    if (rc)
        return err_set(rc, "NVML not available: %s", why);
    sample_dev(h, out);
    return 0;
}

/* ---- the sampler ---- */

#define RING 4096

/* One listed device's handle and running sums. */
typedef struct smp_dev {
    nvml_dev h;
    int dev; /* CUDA ordinal */
    nvml_stats st;
    double sum_sm, sum_mem, sum_pw, sum_t;
} smp_dev;

static struct {
    pthread_t th;
    int running;
    volatile int stop;
    smp_dev d[NVML_MAX_DEVS];
    int nd;
    int period_ms;
    double t0;
    nvml_sample ring[RING]; /* the first listed device's, for the clocks panel */
    size_t head, n;         /* oldest at head */
} smp;
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;
/* The sampler waits out its period on this, so that a stop wakes it at
 * once: a sleep of the whole period made every run wait up to 20 ms at
 * its end (a k-distance's refinement of 24 joins, a quarter second). */
static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t stop_cv = PTHREAD_COND_INITIALIZER;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void stat_add(nvml_stat *s, double *sum, double v)
{
    if (s->n == 0 || v < s->min)
        s->min = v;
    if (s->n == 0 || v > s->max)
        s->max = v;
    *sum += v;
    s->n++;
}

/* Device k's sample s; the first device's goes into the ring too. */
static void record(int k, const nvml_sample *s)
{
    pthread_mutex_lock(&ring_lock);
    if (k == 0) {
        size_t at = (smp.head + smp.n) % RING;
        if (smp.n == RING)
            smp.head = (smp.head + 1) % RING;
        else
            smp.n++;
        smp.ring[at] = *s;
    }
    smp_dev *d = &smp.d[k];
    nvml_stats *st = &d->st;
    st->samples++;
    if (s->valid & NVML_V_SM)
        stat_add(&st->sm_mhz, &d->sum_sm, s->sm_mhz);
    if (s->valid & NVML_V_MEM)
        stat_add(&st->mem_mhz, &d->sum_mem, s->mem_mhz);
    if (s->valid & NVML_V_POWER)
        stat_add(&st->power_w, &d->sum_pw, s->power_w);
    if (s->valid & NVML_V_TEMP)
        stat_add(&st->temp_c, &d->sum_t, s->temp_c);
    if (s->valid & NVML_V_LIMIT)
        st->power_limit_w = s->power_limit_w;
    if (s->valid & NVML_V_REASONS) {
        st->reasons_any |= s->reasons;
        st->have_reasons = 1;
    }
    pthread_mutex_unlock(&ring_lock);
}

/* One sample of every listed device. */
static void sample_all(void)
{
    for (int k = 0; k < smp.nd; k++) {
        nvml_sample s;
        sample_invalid(&s);
        sample_dev(smp.d[k].h, &s);
        s.t = now_s() - smp.t0;
        record(k, &s);
    }
}

static void *sampler_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&stop_mu);
    while (!smp.stop) {
        pthread_mutex_unlock(&stop_mu);
        sample_all();
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += (long)smp.period_ms * 1000000L;
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_mutex_lock(&stop_mu);
        while (!smp.stop && pthread_cond_timedwait(&stop_cv, &stop_mu, &ts) == 0)
            ; /* woken without a stop (spurious): wait out the period */
    }
    pthread_mutex_unlock(&stop_mu);
    return NULL;
}

static void stats_reset(nvml_stats *st)
{
    memset(st, 0, sizeof *st);
    nvml_stat none = {NAN, NAN, NAN, 0};
    st->sm_mhz = st->mem_mhz = st->power_w = st->temp_c = none;
    st->power_limit_w = NAN;
}

int nvml_sampler_start(int dev, int period_ms)
{
    return nvml_sampler_start_list(&dev, 1, period_ms);
}

int nvml_sampler_start_list(const int *devs, int ndev, int period_ms)
{
    if (smp.running)
        return 0;
    if (ndev < 1)
        ndev = 1;
    if (ndev > NVML_MAX_DEVS)
        ndev = NVML_MAX_DEVS;
    nvml_dev h[NVML_MAX_DEVS];
    int rc = 0;
    pthread_mutex_lock(&lock);
    for (int k = 0; k < ndev && rc == 0; k++)
        rc = handle_for(devs ? devs[k] : 0, &h[k]);
    pthread_mutex_unlock(&lock);
    pthread_mutex_lock(&ring_lock);
    smp.head = smp.n = 0;
    for (int k = 0; k < NVML_MAX_DEVS; k++) {
        memset(&smp.d[k], 0, sizeof smp.d[k]);
        stats_reset(&smp.d[k].st);
    }
    smp.nd = rc ? 1 : ndev; /* a failed start still stops with one device's (empty) stats */
    pthread_mutex_unlock(&ring_lock);
    if (rc)
        return err_set(rc, "NVML not available: %s", why);
    for (int k = 0; k < ndev; k++) {
        smp.d[k].h = h[k];
        smp.d[k].dev = devs ? devs[k] : 0;
    }
    smp.period_ms = period_ms > 0 ? period_ms : 20;
    smp.stop = 0;
    smp.t0 = now_s();
    /* One sample before the run starts, so even a run shorter than the
     * period has a value. */
    sample_all();
    if (pthread_create(&smp.th, NULL, sampler_main, NULL) != 0)
        return err_set(TCJ_EUNSUP, "cannot start the NVML sampler thread");
    smp.running = 1;
    return 0;
}

int nvml_sampler_running(void)
{
    return smp.running;
}

static void finish_stat(nvml_stat *s, double sum)
{
    s->mean = s->n ? sum / (double)s->n : NAN;
}

/* Device k's summary (ring_lock held). */
static void summary(int k, nvml_stats *out)
{
    const smp_dev *d = &smp.d[k];
    *out = d->st;
    finish_stat(&out->sm_mhz, d->sum_sm);
    finish_stat(&out->mem_mhz, d->sum_mem);
    finish_stat(&out->power_w, d->sum_pw);
    finish_stat(&out->temp_c, d->sum_t);
    if (out->samples == 0)
        snprintf(out->reason, sizeof out->reason, "%.150s", why[0] ? why : "not sampled");
}

void nvml_sampler_stop(nvml_stats *out)
{
    if (smp.running) {
        pthread_mutex_lock(&stop_mu);
        smp.stop = 1;
        pthread_cond_signal(&stop_cv);
        pthread_mutex_unlock(&stop_mu);
        pthread_join(smp.th, NULL);
        smp.running = 0;
        /* And one after, so the end of the run is seen. */
        sample_all();
    }
    if (!out)
        return;
    pthread_mutex_lock(&ring_lock);
    summary(0, out);
    pthread_mutex_unlock(&ring_lock);
}

int nvml_sampler_devices(nvml_stats *out, int *devs, int max)
{
    pthread_mutex_lock(&ring_lock);
    int n = smp.nd < max ? smp.nd : max;
    for (int k = 0; k < n; k++) {
        summary(k, &out[k]);
        devs[k] = smp.d[k].dev;
    }
    pthread_mutex_unlock(&ring_lock);
    return n;
}

size_t nvml_series(nvml_sample *out, size_t max)
{
    pthread_mutex_lock(&ring_lock);
    size_t n = smp.n < max ? smp.n : max;
    size_t first = smp.n - n;
    for (size_t k = 0; k < n; k++)
        out[k] = smp.ring[(smp.head + first + k) % RING];
    pthread_mutex_unlock(&ring_lock);
    return n;
}

void nvml_reasons_str(unsigned long long m, char *buf, size_t size)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } names[] = {
        {NVML_R_GPU_IDLE, "idle"},
        {NVML_R_APP_CLOCKS, "app clocks"},
        {NVML_R_SW_POWER_CAP, "power cap"},
        {NVML_R_HW_SLOWDOWN, "hw slowdown"},
        {NVML_R_SYNC_BOOST, "sync boost"},
        {NVML_R_SW_THERMAL, "sw thermal"},
        {NVML_R_HW_THERMAL, "hw thermal"},
        {NVML_R_HW_POWER_BRAKE, "power brake"},
        {NVML_R_DISPLAY_CLOCKS, "display clocks"},
    };
    size_t k = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if ((m & names[i].bit) && k < size)
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? ", " : "", names[i].name);
    unsigned long long known = 0x1FF;
    if ((m & ~known) && k < size)
        k += (size_t)snprintf(buf + k, size - k, "%s0x%llx", k ? ", " : "", m & ~known);
    if (k == 0)
        snprintf(buf, size, "none");
}

void nvml_metric_name(char *buf, size_t size, int dev, const char *base)
{
    if (dev < 0)
        snprintf(buf, size, "%s", base);
    else
        snprintf(buf, size, "dev%d_%s", dev, base);
}
