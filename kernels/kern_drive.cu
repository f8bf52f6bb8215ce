/* The launch/drain loop of every GPU engine: see kern_drive.cuh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kern_drive.cuh"
#include "kern_multi.cuh"
#include "kern_pool.cuh"
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

/* One pair buffer: where a launch writes its pairs on the device, the
 * pinned host arrays they are copied to, and that copy's events (timed:
 * the copy's own duration is the run's d2h). */
struct kern_pair_buf {
    uint32_t *pi, *pj, *hi, *hj;
    void *pd, *hd;
    cudaEvent_t c0, c1;
    size_t np; /* pairs copied (or being copied) to hi/hj/hd, not yet sunk */
};

/* Pair buffers kept across runs: a sweep of PAIRS runs would otherwise
 * pin and free tens of MB each time. Two when the budget allows: launch
 * N+1 writes one while launch N's pairs are copied out of the other on
 * the copy stream and handed to the sink on the host; one (the launch,
 * copy and sink in turn) when only one fits. Everything about the pair
 * buffers of a device lives here: one per device ordinal, touched only by
 * the thread running on that device (kern_multi.cuh). */
struct kern_pairs {
    int dev, d2_bytes, nbuf;
    int host;   /* the pinned host arrays are there (a run consumed on the device needs none) */
    size_t cap; /* pairs each buffer holds */
    kern_pair_buf b[2];
    cudaStream_t cs;   /* the copies out, beside the launches' stream */
    cudaEvent_t ready; /* on the launch stream: a launch and its collect done */
    int cur;           /* the buffer the next launch writes */
    double *wide;      /* FP32 d2 widened for the callback, one batch */
    size_t wide_cap;
};
static kern_pairs g_pairs_dev[KERN_DEV_SLOTS];

static size_t kern_pair_bytes(size_t cap, int d2_bytes)
{
    return cap * (8 + (size_t)d2_bytes);
}

static void kern_pairs_free(kern_pairs &g_pairs)
{
    for (int b = 0; b < 2; b++) {
        kern_pair_buf *p = &g_pairs.b[b];
        cudaFree(p->pi);
        cudaFree(p->pj);
        cudaFree(p->pd);
        cudaFreeHost(p->hi);
        cudaFreeHost(p->hj);
        cudaFreeHost(p->hd);
        if (p->c0)
            cudaEventDestroy(p->c0);
        if (p->c1)
            cudaEventDestroy(p->c1);
    }
    if (g_pairs.cs)
        cudaStreamDestroy(g_pairs.cs);
    if (g_pairs.ready)
        cudaEventDestroy(g_pairs.ready);
    free(g_pairs.wide);
    memset(&g_pairs, 0, sizeof g_pairs);
    g_pairs.dev = -1;
}

void kern_drive_release(void)
{
    int cur = 0;
    cudaGetDevice(&cur);
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        if (g_pairs_dev[d].b[0].pi || g_pairs_dev[d].b[0].hi || g_pairs_dev[d].b[1].pi ||
            g_pairs_dev[d].b[1].hi || g_pairs_dev[d].cs || g_pairs_dev[d].wide) {
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

static int kern_malloc_from(kern_run *k, void **p, size_t bytes, const char *what, int pooled)
{
    *p = NULL;
    int rc = kern_charge(k, bytes, what);
    if (rc)
        return rc;
    /* the consumers' pool's idle memory released where it is short */
    cudaError_t e = pooled ? kern_pool_malloc(p, bytes ? bytes : 1)
                           : kern_pool_cuda_malloc(p, bytes ? bytes : 1);
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

int kern_malloc(kern_run *k, void **p, size_t bytes, const char *what)
{
    return kern_malloc_from(k, p, bytes, what, 0);
}

int kern_malloc_pooled(kern_run *k, void **p, size_t bytes, const char *what)
{
    return kern_malloc_from(k, p, bytes, what, 1);
}

void kern_free_pooled(kern_run *k, void *p, size_t bytes)
{
    if (!p)
        return;
    kern_pool_free(p);
    kern_uncharge(k, bytes);
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
    const int trace = kern_trace_on();
    k->tr_on = trace;
    kern_trace_mark("kern_begin");
    if (trace)
        k->tr_t0 = k->tr_t = kern_now();
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
    if (a->c0 &&
        (a->q0 != 0 || a->q1 > a->c0 || a->c0 >= a->n || a->c0 % KERN_STREAM_ALIGN || !a->xc))
        return kern_fail(KERN_EINVAL,
                         "%s: bad cross run (queries [%zu, %zu), candidates [%zu, %zu) of %zu)",
                         who, a->q0, a->q1, a->c0, a->n, a->n);
    switch (a->mode) {
    case KJOIN_COUNT:
        break;
    case KJOIN_PERPOINT:
        if (!a->counts)
            return kern_fail(KERN_EINVAL, "%s: per-point mode needs a counts array", who);
        break;
    case KJOIN_PAIRS:
        if (!a->pair_fn && !a->pair_dev)
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
    if (k->tr_on)
        k->tr_begin = kern_now() - k->tr_t0;
    return rc;
}

/* TCJOIN_TRACE's line (kern_run.tr_*), in milliseconds. */
static void kern_trace_print(const kern_run *k)
{
    const double all = kern_now() - k->tr_t0;
    fprintf(stderr,
            "kern trace (ms): mode %d all %.3f begin %.3f pre %.3f launches %u enqueue %.3f wait "
            "%.3f collect %.3f pairs %.3f drive %.3f post %.3f kernels %.3f\n",
            k->a ? k->a->mode : -1, all * 1e3, k->tr_begin * 1e3, k->tr_pre * 1e3, k->tr_launches,
            k->tr_enq * 1e3, k->tr_wait * 1e3, k->tr_coll * 1e3, k->tr_pairs * 1e3,
            k->tr_drive * 1e3, (all - k->tr_pre - k->tr_begin - k->tr_drive) * 1e3,
            k->r ? k->r->t_kernel * 1e3 : 0.0);
}

void kern_end(kern_run *k)
{
    if (k->tr_on && k->tr_t0 > 0) {
        kern_trace_mark("kern_end");
        kern_trace_print(k);
        k->tr_t0 = 0;
    }
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

/* nbuf buffers of cap pairs on the run's device into g_pairs (empty on
 * entry), the device arrays through the budget first, the pinned host
 * arrays where host says (a run whose pairs go to pair_dev copies none:
 * pinning 100 MB took most of a small set's first DBSCAN pass); on
 * failure what was charged goes back and g_pairs is empty again. */
static int kern_pairs_alloc(kern_run *k, size_t cap, int d2_bytes, int nbuf, int host)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    g_pairs.dev = k->a->device;
    g_pairs.d2_bytes = d2_bytes;
    g_pairs.cap = cap;
    g_pairs.nbuf = nbuf;
    g_pairs.host = host;
    const size_t dbytes = cap * (size_t)d2_bytes;
    size_t charged = 0;
    int rc = 0;
    for (int b = 0; b < nbuf && rc == 0; b++) {
        kern_pair_buf *p = &g_pairs.b[b];
        void *v = NULL;
        if ((rc = kern_malloc(k, &v, cap * 4, "the pair buffer (rows)")) != 0)
            break;
        p->pi = (uint32_t *)v;
        charged += cap * 4;
        if ((rc = kern_malloc(k, &v, cap * 4, "the pair buffer (columns)")) != 0)
            break;
        p->pj = (uint32_t *)v;
        charged += cap * 4;
        if ((rc = kern_malloc(k, &p->pd, dbytes, "the pair buffer (d2)")) != 0)
            break;
        charged += dbytes;
    }
    for (int b = 0; b < nbuf && rc == 0 && host; b++) {
        kern_pair_buf *p = &g_pairs.b[b];
        if ((rc = kern_malloc_host((void **)&p->hi, cap * 4, "the pair buffer (host)")) != 0 ||
            (rc = kern_malloc_host((void **)&p->hj, cap * 4, "the pair buffer (host)")) != 0 ||
            (rc = kern_malloc_host(&p->hd, dbytes, "the pair buffer (host)")) != 0)
            break;
        cudaError_t e = cudaEventCreate(&p->c0);
        if (e == cudaSuccess)
            e = cudaEventCreate(&p->c1);
        if (e != cudaSuccess)
            rc = kern_cuda_fail(e, "the pair copy's events", __FILE__, __LINE__);
    }
    if (rc == 0) {
        /* Non-blocking: a legacy-stream copy of an engine's collect does not
         * wait for a pair copy, nor a pair copy for it. */
        cudaError_t e = cudaStreamCreateWithFlags(&g_pairs.cs, cudaStreamNonBlocking);
        if (e == cudaSuccess)
            e = cudaEventCreateWithFlags(&g_pairs.ready, cudaEventDisableTiming);
        if (e != cudaSuccess)
            rc = kern_cuda_fail(e, "the pair copy stream", __FILE__, __LINE__);
    }
    if (rc) {
        kern_uncharge(k, charged);
        kern_pairs_free(g_pairs);
    }
    return rc;
}

/* Pair buffers of as many pairs as wanted: two, halved (down to
 * w->min_cap) while the budget or the device refuses them, then one of
 * the smallest size (the launch, copy and sink in turn, as before the
 * copies overlapped) before giving up. */
static int kern_pairs_setup(kern_run *k, const kern_work *w)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    const kern_join_args *a = k->a;
    size_t want = a->batch_pairs ? a->batch_pairs : KERN_DEFAULT_BATCH;
    want = want < w->min_cap ? w->min_cap : want;
    want = want > KERN_MAX_CAP ? KERN_MAX_CAP : want;
    const int dev = a->device;
    const int host = a->pair_dev == NULL;
    int nbuf = 2;
    for (;;) {
        const size_t bytes = (size_t)nbuf * kern_pair_bytes(want, w->d2_bytes);
        /* Buffers made for a run consumed on the device serve one that
         * copies out only once their host arrays are there. */
        if (g_pairs.b[0].pi &&
            (g_pairs.dev != dev || g_pairs.d2_bytes != w->d2_bytes || g_pairs.cap != want ||
             g_pairs.nbuf != nbuf || (host && !g_pairs.host))) {
            int cur = 0;
            cudaGetDevice(&cur);
            if (g_pairs.dev >= 0)
                cudaSetDevice(g_pairs.dev);
            kern_pairs_free(g_pairs);
            cudaSetDevice(cur);
        }
        int rc = 0;
        if (g_pairs.b[0].pi)
            rc = kern_charge(k, bytes, "the pair buffers");
        else
            rc = kern_pairs_alloc(k, want, w->d2_bytes, nbuf, host);
        if (rc == 0 && w->extra_per_pair) {
            /* Room for the engine's own per-pair buffers, allocated later. */
            rc = kern_charge(k, want * w->extra_per_pair, "the refined pairs");
            if (rc == 0) {
                kern_uncharge(k, want * w->extra_per_pair);
            } else {
                kern_uncharge(k, bytes);
                kern_pairs_free(g_pairs);
            }
        }
        if (rc == 0)
            break;
        if (rc != KERN_ENOMEM)
            return rc;
        if (want / 2 >= w->min_cap)
            want /= 2;
        else if (nbuf == 2)
            nbuf = 1;
        else
            return rc;
        k->r->shrunk = 1;
    }
    for (int b = 0; b < g_pairs.nbuf; b++)
        g_pairs.b[b].np = 0;
    g_pairs.cur = 0;
    k->cap = g_pairs.cap;
    k->d2_bytes = w->d2_bytes;
    k->r->pair_cap = g_pairs.cap;
    return 0;
}

/* The next launch writes buffer b. */
static void kern_pairs_point(kern_run *k, int b)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    k->pi = g_pairs.b[b].pi;
    k->pj = g_pairs.b[b].pj;
    k->pd = g_pairs.b[b].pd;
}

/* Start copying what the launch just collected left (st->np pairs, in
 * the current buffer or where the engine put them) to the current
 * buffer's host arrays, on the copy stream once the launch stream's work
 * so far (the launch, and whatever its collect enqueued) is done. */
static int kern_pairs_copy(kern_run *k, const kern_step *st)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    const size_t np = (size_t)st->np;
    kern_pair_buf *b = &g_pairs.b[g_pairs.cur];
    if (np == 0)
        return 0;
    const uint32_t *pi = st->pi ? st->pi : b->pi, *pj = st->pj ? st->pj : b->pj;
    const void *pd = st->pd ? st->pd : b->pd;
    if (k->a->pair_dev) {
        /* Consumed on the device, in the launch stream's order: nothing to
         * copy or sink, and the next launch may reuse the buffer. */
        k->r->pairs += np;
        const kern_pair_batch pb = {pi, pj, pd, k->d2_bytes, k->d2_scale, np};
        return k->a->pair_dev(k->a->pair_dev_ctx, k->a, (void *)k->st, &pb);
    }
    cudaStream_t cs = g_pairs.cs;
    KERN_CUDA(cudaEventRecord(g_pairs.ready, k->st));
    KERN_CUDA(cudaStreamWaitEvent(cs, g_pairs.ready, 0));
    KERN_CUDA(cudaEventRecord(b->c0, cs));
    KERN_CUDA(cudaMemcpyAsync(b->hi, pi, np * 4, cudaMemcpyDeviceToHost, cs));
    KERN_CUDA(cudaMemcpyAsync(b->hj, pj, np * 4, cudaMemcpyDeviceToHost, cs));
    KERN_CUDA(cudaMemcpyAsync(b->hd, pd, np * (size_t)k->d2_bytes, cudaMemcpyDeviceToHost, cs));
    KERN_CUDA(cudaEventRecord(b->c1, cs));
    b->np = np;
    /* The next launch writes the other buffer; with one, the caller sinks
     * this copy before launching again. */
    g_pairs.cur = (g_pairs.cur + 1) % g_pairs.nbuf;
    return 0;
}

/* Wait for buffer b's copy and hand its pairs to the callback in
 * batches, FP32 d2 widened (exactly) to double. */
static int kern_pairs_sink(kern_run *k, int bi)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    kern_pair_buf *b = &g_pairs.b[bi];
    const size_t np = b->np;
    const kern_join_args *a = k->a;
    kern_join_result *r = k->r;
    if (np == 0)
        return 0;
    KERN_CUDA(cudaEventSynchronize(b->c1));
    b->np = 0;
    r->t_d2h += kern_event_s(b->c0, b->c1);
    const double t1 = kern_now();
    const size_t batch = a->batch_pairs ? a->batch_pairs : KERN_DEFAULT_BATCH;
    int rc = 0;
    for (size_t s = 0; s < np && rc == 0; s += batch) {
        size_t m = np - s < batch ? np - s : batch;
        const double *d2;
        if (k->d2_bytes == 8) {
            d2 = (const double *)b->hd + s;
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
            for (size_t t = 0; t < m; t++)
                g_pairs.wide[t] = kern_pair_d2(b->hd, 4, k->d2_scale, s + t);
            d2 = g_pairs.wide;
        }
        if (a->pair_fn(a->pair_ctx, m, b->hi + s, b->hj + s, d2))
            rc = kern_fail(KERN_ESINK, "the pair sink stopped the run");
    }
    r->pairs += np;
    r->t_sink += kern_now() - t1;
    return rc;
}

/* Every copied batch not yet sunk (at most one: the previous launch's). */
static int kern_pairs_flush(kern_run *k)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    int rc = 0;
    for (int b = 0; b < g_pairs.nbuf && rc == 0; b++)
        rc = kern_pairs_sink(k, b);
    return rc;
}

/* TCJOIN_TRACE: the time since *t added to *sum, *t moved on. */
static void kern_trace_add(kern_run *k, double *t, double *sum)
{
    if (!k->tr_on)
        return;
    const double now = kern_now();
    *sum += now - *t;
    *t = now;
}

/* The loop. PAIRS with two buffers: launch N+1 is enqueued before launch
 * N's pairs (copying since N's collect) are sunk, so the kernel, the copy
 * and the sink overlap; the engine's collect still runs after its launch
 * and before the next one is enqueued, as it decides what comes next. */
static int kern_drive_loop(kern_run *k, const kern_work *w)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    const kern_join_args *a = k->a;
    kern_join_result *r = k->r;
    const int pairs = a->mode == KJOIN_PAIRS;
    int rc = 0;
    while (w->more(w->eng)) {
        if (a->cancel && *a->cancel) {
            if (pairs && (rc = kern_pairs_flush(k)) != 0)
                return rc;
            return kern_fail(KERN_ECANCEL, "cancelled");
        }
        if (pairs)
            kern_pairs_point(k, g_pairs.cur);
        double t = k->tr_on ? kern_now() : 0;
        KERN_CUDA(cudaEventRecord(k->e0, k->st));
        if ((rc = w->launch(w->eng, k)) != 0)
            return rc;
        KERN_LAUNCH_CHECK("join kernel");
        KERN_CUDA(cudaEventRecord(k->e1, k->st));
        /* While it runs: the previous launch's pairs. */
        if (pairs && (rc = kern_pairs_flush(k)) != 0)
            return rc;
        kern_trace_add(k, &t, &k->tr_enq);
        KERN_CUDA(cudaEventSynchronize(k->e1));
        kern_trace_add(k, &t, &k->tr_wait);
        r->t_kernel += kern_event_s(k->e0, k->e1);
        r->launches++;
        kern_step s;
        memset(&s, 0, sizeof s);
        if ((rc = w->collect(w->eng, k, &s)) != 0)
            return rc;
        kern_trace_add(k, &t, &k->tr_coll);
        if (s.overflow)
            r->refills++;
        if (pairs && (rc = kern_pairs_copy(k, &s)) != 0)
            return rc;
        kern_trace_add(k, &t, &k->tr_pairs);
        k->tr_launches++;
        /* One buffer: this launch's pairs go before the next launch. */
        if (pairs && g_pairs.nbuf == 1 && (rc = kern_pairs_flush(k)) != 0)
            return rc;
        if (a->progress)
            a->progress(a->progress_ctx, s.frac);
    }
    return pairs ? kern_pairs_flush(k) : 0;
}

int kern_drive(kern_run *k, const kern_work *w)
{
    kern_pairs &g_pairs = g_pairs_dev[k->a->device];
    int rc = 0;
    double t = 0;
    if (k->tr_on) {
        t = kern_now();
        k->tr_pre = t - k->tr_t0 - k->tr_begin;
    }
    if (k->a->mode == KJOIN_PAIRS && (rc = kern_pairs_setup(k, w)) != 0)
        return rc;
    rc = kern_drive_loop(k, w);
    if (k->tr_on)
        k->tr_drive = kern_now() - t;
    if (rc) {
        /* Stopped early (the sink, cancel, an error): nothing may still
         * write the buffers or the engine's memory once the engine frees
         * it, and no copied batch is left to a later run. */
        cudaStreamSynchronize(k->st);
        if (k->a->mode == KJOIN_PAIRS) {
            cudaStreamSynchronize(g_pairs.cs);
            for (int b = 0; b < 2; b++)
                g_pairs.b[b].np = 0;
        }
    }
    return rc;
}
