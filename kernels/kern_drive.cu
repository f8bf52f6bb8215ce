/* The launch/drain loop of every GPU engine: see kern_drive.cuh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern_drive.cuh"
#include "kern_multi.cuh"
#include "kern_util.cuh"

#define KERN_DEFAULT_BATCH ((size_t)1 << 22)
#define KERN_MAX_CAP ((size_t)1 << 28)

double kern_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double kern_event_s(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return 1e-3 * ms;
}

/* Pair buffers kept across runs: a sweep of PAIRS runs would otherwise
 * pin and free tens of MB each time. One per device ordinal, touched only
 * by the thread running on that device (kern_multi.cuh). */
struct kern_pairs {
    int dev, d2_bytes;
    size_t cap;
    uint32_t *pi, *pj, *hi, *hj;
    void *pd, *hd;
    double *wide; /* FP32 d2 widened for the callback, one batch */
    size_t wide_cap;
};
static kern_pairs g_pairs_dev[KERN_DEV_SLOTS];

static size_t kern_pair_bytes(size_t cap, int d2_bytes)
{
    return cap * (8 + (size_t)d2_bytes);
}

static void kern_pairs_free(kern_pairs &g_pairs)
{
    cudaFree(g_pairs.pi);
    cudaFree(g_pairs.pj);
    cudaFree(g_pairs.pd);
    cudaFreeHost(g_pairs.hi);
    cudaFreeHost(g_pairs.hj);
    cudaFreeHost(g_pairs.hd);
    free(g_pairs.wide);
    memset(&g_pairs, 0, sizeof g_pairs);
    g_pairs.dev = -1;
}

void kern_drive_release(void)
{
    int cur = 0;
    cudaGetDevice(&cur);
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        if (g_pairs_dev[d].pi || g_pairs_dev[d].hi || g_pairs_dev[d].wide) {
            cudaSetDevice(d);
            kern_pairs_free(g_pairs_dev[d]);
        }
    cudaSetDevice(cur);
    cudaGetLastError();
}

int kern_malloc_host(void **p, size_t bytes, const char *what)
{
    *p = NULL;
    cudaError_t e = cudaMallocHost(p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return kern_fail(KERN_ENOMEM, "%s: %.1f MB of pinned host memory refused", what,
                         (double)bytes / 1e6);
    }
    if (e != cudaSuccess)
        return kern_cuda_fail(e, what, __FILE__, __LINE__);
    return 0;
}

int kern_charge(kern_run *k, size_t bytes, const char *what)
{
    if (k->mem_cap && k->mem_used + bytes > k->mem_cap)
        return kern_fail(KERN_ENOMEM,
                         "%s needs %.1f MB of device memory; the cap (set gpu-mem) is %.1f MB "
                         "and %.1f MB of it are in use",
                         what, (double)bytes / 1e6, (double)k->mem_cap / 1e6,
                         (double)k->mem_used / 1e6);
    k->mem_used += bytes;
    if (k->mem_used > k->r->mem_peak)
        k->r->mem_peak = k->mem_used;
    return 0;
}

void kern_uncharge(kern_run *k, size_t bytes)
{
    k->mem_used = bytes > k->mem_used ? 0 : k->mem_used - bytes;
}

int kern_malloc(kern_run *k, void **p, size_t bytes, const char *what)
{
    *p = NULL;
    int rc = kern_charge(k, bytes, what);
    if (rc)
        return rc;
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        kern_uncharge(k, bytes);
        size_t fr = 0, tot = 0;
        cudaMemGetInfo(&fr, &tot);
        cudaGetLastError();
        return kern_fail(KERN_ENOMEM, "%s needs %.1f MB of device memory; %.1f MB are free on %s",
                         what, (double)bytes / 1e6, (double)fr / 1e6, k->prop.name);
    }
    if (e != cudaSuccess) {
        kern_uncharge(k, bytes);
        return kern_cuda_fail(e, what, __FILE__, __LINE__);
    }
    return 0;
}

void kern_free(kern_run *k, void *p, size_t bytes)
{
    if (!p)
        return;
    cudaFree(p);
    kern_uncharge(k, bytes);
}

int kern_begin(kern_run *k, const kern_join_args *a, kern_join_result *r, const char *who,
               int need_f64_mma)
{
    memset(k, 0, sizeof *k);
    memset(r, 0, sizeof *r);
    k->a = a;
    k->r = r;
    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return kern_fail(KERN_ENODEV, "no CUDA device%s%s", e != cudaSuccess ? ": " : "",
                         e != cudaSuccess ? cudaGetErrorString(e) : "");
    }
    if (a->device < 0 || a->device >= ndev)
        return kern_fail(KERN_ENODEV, "CUDA device %d does not exist (%d present)", a->device,
                         ndev);
    if (a->ndevices > 1)
        return kern_fail(KERN_EINVAL,
                         "%s runs on one GPU and set devices lists %d; set devices default (or "
                         "one ordinal) for it",
                         who, a->ndevices);
    if (a->x == NULL || a->n == 0 || a->d == 0 || a->q0 > a->q1 || a->q1 > a->n ||
        a->n >= 0xffffff00u)
        return kern_fail(KERN_EINVAL, "%s: bad sizes (n %zu, d %zu, rows [%zu, %zu))", who, a->n,
                         a->d, a->q0, a->q1);
    switch (a->mode) {
    case KJOIN_COUNT:
        break;
    case KJOIN_PERPOINT:
        if (!a->counts)
            return kern_fail(KERN_EINVAL, "%s: per-point mode needs a counts array", who);
        break;
    case KJOIN_PAIRS:
        if (!a->pair_fn)
            return kern_fail(KERN_EINVAL, "%s: pair mode needs a callback", who);
        break;
    case KJOIN_HIST:
        if (!a->hist_edges || a->hist_nbins == 0 || a->hist_nbins > 4096 || !a->hist ||
            !a->hist_below)
            return kern_fail(KERN_EINVAL, "%s: 1 to 4096 histogram bins with edges (got %zu)", who,
                             a->hist_nbins);
        break;
    default:
        return kern_fail(KERN_EINVAL, "%s: unknown output mode %d", who, a->mode);
    }
    KERN_CUDA(cudaSetDevice(a->device));
    KERN_CUDA(cudaGetDeviceProperties(&k->prop, a->device));
    k->cc = k->prop.major * 10 + k->prop.minor;
    snprintf(r->device_name, sizeof r->device_name, "%.80s (sm_%d%d, %d SMs)", k->prop.name,
             k->prop.major, k->prop.minor, k->prop.multiProcessorCount);
    if (need_f64_mma && !kern_cc_has_f64_mma(k->cc))
        return kern_fail(KERN_ENODEV, "%s has no FP64 tensor cores (sm_%d%d; need sm_80 or sm_90+)",
                         k->prop.name, k->prop.major, k->prop.minor);
    k->mem_cap = a->mem_cap;
    /* A blocking stream: the engines' synchronous copies (legacy default
     * stream) order with it. */
    int rc = 0;
    e = cudaStreamCreate(&k->st);
    if (e == cudaSuccess)
        e = cudaEventCreate(&k->e0);
    if (e == cudaSuccess)
        e = cudaEventCreate(&k->e1);
    if (e != cudaSuccess) {
        rc = kern_cuda_fail(e, "stream and events", __FILE__, __LINE__);
        kern_end(k);
    }
    return rc;
}

void kern_end(kern_run *k)
{
    if (k->e0)
        cudaEventDestroy(k->e0);
    if (k->e1)
        cudaEventDestroy(k->e1);
    if (k->st)
        cudaStreamDestroy(k->st);
    k->e0 = k->e1 = NULL;
    k->st = NULL;
    cudaGetLastError();
}

/* Give back cached pair buffers this run charged. */
static void kern_pairs_free_charged(kern_run *k, size_t bytes)
{
    kern_uncharge(k, bytes);
    kern_pairs_free(g_pairs_dev[k->a->device]);
}

/* Pair buffers of as many pairs as wanted, halved (down to w->min_cap)
 * while the budget or the device refuses them. */
static int kern_pairs_setup(kern_run *k, const kern_work *w)
{
    const kern_join_args *a = k->a;
    size_t want = a->batch_pairs ? a->batch_pairs : KERN_DEFAULT_BATCH;
    want = want < w->min_cap ? w->min_cap : want;
    want = want > KERN_MAX_CAP ? KERN_MAX_CAP : want;
    const int dev = a->device;
    kern_pairs &g_pairs = g_pairs_dev[dev];
    for (;;) {
        const size_t bytes = kern_pair_bytes(want, w->d2_bytes);
        if (g_pairs.pi && (g_pairs.d2_bytes != w->d2_bytes || g_pairs.cap != want))
            kern_pairs_free(g_pairs);
        int rc = 0;
        if (g_pairs.pi) {
            rc = kern_charge(k, bytes, "the pair buffer");
        } else {
            /* Device buffers first: they are what the budget caps. */
            void *pi = NULL, *pj = NULL, *pd = NULL;
            rc = kern_malloc(k, &pi, want * 4, "the pair buffer (rows)");
            if (rc == 0)
                rc = kern_malloc(k, &pj, want * 4, "the pair buffer (columns)");
            if (rc == 0)
                rc = kern_malloc(k, &pd, want * (size_t)w->d2_bytes, "the pair buffer (d2)");
            g_pairs.pi = (uint32_t *)pi;
            g_pairs.pj = (uint32_t *)pj;
            g_pairs.pd = pd;
            g_pairs.dev = dev;
            g_pairs.d2_bytes = w->d2_bytes;
            g_pairs.cap = want;
            if (rc == 0)
                rc = kern_malloc_host((void **)&g_pairs.hi, want * 4, "the pair buffer (host)");
            if (rc == 0)
                rc = kern_malloc_host((void **)&g_pairs.hj, want * 4, "the pair buffer (host)");
            if (rc == 0)
                rc = kern_malloc_host(&g_pairs.hd, want * (size_t)w->d2_bytes,
                                      "the pair buffer (host)");
            if (rc) {
                /* What was charged goes back with the buffers. */
                kern_uncharge(k, (pi ? want * 4 : 0) + (pj ? want * 4 : 0) +
                                     (pd ? want * (size_t)w->d2_bytes : 0));
                kern_pairs_free(g_pairs);
            }
        }
        if (rc == 0 && w->extra_per_pair) {
            /* Room for the engine's own per-pair buffers, allocated later. */
            rc = kern_charge(k, want * w->extra_per_pair, "the refined pairs");
            if (rc == 0)
                kern_uncharge(k, want * w->extra_per_pair);
            else
                kern_pairs_free_charged(k, bytes);
        }
        if (rc == 0)
            break;
        if (rc != KERN_ENOMEM || want / 2 < w->min_cap)
            return rc;
        want /= 2;
        k->r->shrunk = 1;
    }
    k->pi = g_pairs.pi;
    k->pj = g_pairs.pj;
    k->pd = g_pairs.pd;
    k->cap = g_pairs.cap;
    k->d2_bytes = w->d2_bytes;
    k->r->pair_cap = g_pairs.cap;
    return 0;
}

/* Copy np pairs back and hand them to the callback in batches, FP32 d2
 * widened (exactly) to double. */
static int kern_pairs_drain(kern_run *k, const kern_step *st)
{
    const size_t np = (size_t)st->np;
    const uint32_t *pi = st->pi ? st->pi : k->pi, *pj = st->pj ? st->pj : k->pj;
    const void *pd = st->pd ? st->pd : k->pd;
    const kern_join_args *a = k->a;
    kern_join_result *r = k->r;
    kern_pairs &g_pairs = g_pairs_dev[a->device];
    if (np == 0)
        return 0;
    double t0 = kern_now();
    KERN_CUDA(cudaMemcpyAsync(g_pairs.hi, pi, np * 4, cudaMemcpyDeviceToHost, k->st));
    KERN_CUDA(cudaMemcpyAsync(g_pairs.hj, pj, np * 4, cudaMemcpyDeviceToHost, k->st));
    KERN_CUDA(
        cudaMemcpyAsync(g_pairs.hd, pd, np * (size_t)k->d2_bytes, cudaMemcpyDeviceToHost, k->st));
    KERN_CUDA(cudaStreamSynchronize(k->st));
    double t1 = kern_now();
    r->t_d2h += t1 - t0;
    const size_t batch = a->batch_pairs ? a->batch_pairs : KERN_DEFAULT_BATCH;
    int rc = 0;
    for (size_t s = 0; s < np && rc == 0; s += batch) {
        size_t m = np - s < batch ? np - s : batch;
        const double *d2;
        if (k->d2_bytes == 8) {
            d2 = (const double *)g_pairs.hd + s;
        } else {
            if (g_pairs.wide_cap < m) {
                free(g_pairs.wide);
                g_pairs.wide = (double *)malloc(m * sizeof(double));
                g_pairs.wide_cap = g_pairs.wide ? m : 0;
                if (!g_pairs.wide) {
                    rc = kern_fail(KERN_ENOMEM, "out of host memory for %zu pair distances", m);
                    break;
                }
            }
            const float *f = (const float *)g_pairs.hd + s;
            const double sc = k->d2_scale ? k->d2_scale : 1.0;
            for (size_t t = 0; t < m; t++)
                g_pairs.wide[t] = f[t] * sc;
            d2 = g_pairs.wide;
        }
        if (a->pair_fn(a->pair_ctx, m, g_pairs.hi + s, g_pairs.hj + s, d2))
            rc = kern_fail(KERN_ESINK, "the pair sink stopped the run");
    }
    r->pairs += np;
    r->t_sink += kern_now() - t1;
    return rc;
}

int kern_drive(kern_run *k, const kern_work *w)
{
    const kern_join_args *a = k->a;
    kern_join_result *r = k->r;
    int rc = 0;
    if (a->mode == KJOIN_PAIRS && (rc = kern_pairs_setup(k, w)) != 0)
        return rc;
    while (w->more(w->eng)) {
        if (a->cancel && *a->cancel)
            return kern_fail(KERN_ECANCEL, "cancelled");
        KERN_CUDA(cudaEventRecord(k->e0, k->st));
        if ((rc = w->launch(w->eng, k)) != 0)
            return rc;
        KERN_LAUNCH_CHECK("join kernel");
        KERN_CUDA(cudaEventRecord(k->e1, k->st));
        KERN_CUDA(cudaEventSynchronize(k->e1));
        r->t_kernel += kern_event_s(k->e0, k->e1);
        r->launches++;
        kern_step s;
        memset(&s, 0, sizeof s);
        if ((rc = w->collect(w->eng, k, &s)) != 0)
            return rc;
        if (s.overflow)
            r->refills++;
        if (a->mode == KJOIN_PAIRS && (rc = kern_pairs_drain(k, &s)) != 0)
            return rc;
        if (a->progress)
            a->progress(a->progress_ctx, s.frac);
    }
    return 0;
}
