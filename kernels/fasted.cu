/* FASTED host driver, for every number format: upload and conversion
 * (FP64 host -> FP32 rounded to odd -> the format on the device, squared
 * norms as the format's traits form them), the device-side dataset cache,
 * the kernel choice (fasted_choose), the launch loop over bounded batches
 * of tiles (cancel, progress, pair buffer drains) and the result. The
 * kernels are in fasted_mma.cuh and fasted_wgmma.cuh, the formats in
 * fmt_*.cu. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "fasted_format.cuh"
#include "fasted_int.cuh"
#include "fasted_wgmma.cuh"
#include "kern_util.cuh"
#include "kernels.h"

#define FASTED_CHUNK_BYTES ((size_t)32 << 20) /* FP32 staging chunk */
#define FASTED_MIN_CAP ((size_t)1 << 15)      /* a warp emits at most 2*64*64 pairs */

/* The converted dataset, kept on the device across runs. */
static struct {
    const double *x;
    size_t n, d;
    uint64_t hash;
    int dev;
    const kern_format *fmt;
    uint16_t *X;
    float *s;
    size_t n_alloc, dp; /* rows allocated; values a row (padded) */
} g_ds;

/* Pinned staging and the pair buffers, kept across runs. */
static struct {
    float *stage_h[2];
    float *stage_d[2];
    unsigned *pi, *pj;
    float *pd;
    unsigned *hi, *hj; /* pinned host copies */
    float *hd;
    size_t cap;
    fasted_ctrl *ctl;
    fasted_redo *redo[2];
    size_t redo_cap;
    int dev;
} g_buf = {{0, 0}, {0, 0}, 0, 0, 0, 0, 0, 0, 0, 0, {0, 0}, 0, -1};

static void fasted_free_ds(void)
{
    cudaFree(g_ds.X);
    cudaFree(g_ds.s);
    memset(&g_ds, 0, sizeof g_ds);
}

static void fasted_free_buf(void)
{
    for (int k = 0; k < 2; k++) {
        cudaFreeHost(g_buf.stage_h[k]);
        cudaFree(g_buf.stage_d[k]);
        cudaFree(g_buf.redo[k]);
    }
    cudaFree(g_buf.pi);
    cudaFree(g_buf.pj);
    cudaFree(g_buf.pd);
    cudaFreeHost(g_buf.hi);
    cudaFreeHost(g_buf.hj);
    cudaFreeHost(g_buf.hd);
    cudaFree(g_buf.ctl);
    memset(&g_buf, 0, sizeof g_buf);
    g_buf.dev = -1;
}

extern "C" void kern_fasted_release(void)
{
    fasted_free_ds();
    fasted_free_buf();
    cudaGetLastError();
}

unsigned long long fasted_tiles_total(unsigned T, unsigned U, int sym, int order)
{
    const unsigned long long G = FASTED_GROUP;
    if (order) {
        unsigned long long S = (T + G - 1) / G, SC = (U + G - 1) / G;
        return (sym ? S * (S + 1) / 2 : S * SC) * G * G;
    }
    return sym ? (unsigned long long)T * (T + 1) / 2 : (unsigned long long)T * U;
}

/* FP64 -> FP32 rounding to odd: with 24 >= 11 + 2 bits, rounding the result
 * to FP16 (nearest) on the device gives exactly the nearest FP16 of the
 * double, with no double-rounding error. */
static inline float fasted_round_odd(double x)
{
    float f = (float)x;
    if ((double)f != x && f == f) {
        unsigned u;
        memcpy(&u, &f, 4);
        if (fabs((double)f) > fabs(x))
            u -= 1;
        u |= 1u;
        memcpy(&f, &u, 4);
    }
    return f;
}

static void fasted_to_float(const double *src, float *dst, size_t cnt)
{
    for (size_t k = 0; k < cnt; k++)
        dst[k] = fasted_round_odd(src[k]);
}

/* Host threads convert one chunk. */
static void fasted_to_float_par(const double *src, float *dst, size_t cnt)
{
    unsigned nt = std::thread::hardware_concurrency();
    nt = std::min(std::max(nt, 1u), 16u);
    if (cnt < ((size_t)1 << 18) || nt == 1) {
        fasted_to_float(src, dst, cnt);
        return;
    }
    std::vector<std::thread> th;
    size_t per = (cnt + nt - 1) / nt;
    for (unsigned t = 0; t < nt; t++) {
        size_t a = t * per, b = std::min(cnt, a + per);
        if (a >= b)
            break;
        th.emplace_back(fasted_to_float, src + a, dst + a, b - a);
    }
    for (auto &t : th)
        t.join();
}

static float fasted_ev_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

/* Upload and convert unless the cache holds this dataset in this format. */
static int fasted_upload(const kern_fasted_args *a, const kern_format *fmt, kern_fasted_result *r,
                         cudaStream_t st)
{
    if (g_ds.X && g_ds.x == a->x && g_ds.n == a->n && g_ds.d == a->d && g_ds.hash == a->hash &&
        g_ds.dev == a->device && g_ds.fmt == fmt) {
        r->cache_hit = 1;
        return 0;
    }
    fasted_free_ds();
    /* Rows padded to whole 128-byte k slices of the format's values. */
    const size_t per_slice = (size_t)FASTED_BK * 2 / (size_t)fmt->elem_bytes;
    const size_t dp = (a->d + per_slice - 1) / per_slice * per_slice;
    const size_t row_bytes = dp * (size_t)fmt->elem_bytes;
    /* Whole 256-row tiles past n (the wgmma kernel's B tiles and
     * symmetric super tiles), zero rows. */
    const size_t n_alloc = (a->n + 255) / 256 * 256 + 256;
    KERN_CUDA(cudaMalloc(&g_ds.X, n_alloc * row_bytes));
    KERN_CUDA(cudaMalloc(&g_ds.s, n_alloc * sizeof(float)));
    KERN_CUDA(cudaMemsetAsync(g_ds.X, 0, n_alloc * row_bytes, st));

    size_t rows_chunk = std::max((size_t)1, FASTED_CHUNK_BYTES / (a->d * sizeof(float)));
    for (int k = 0; k < 2; k++) {
        if (!g_buf.stage_h[k])
            KERN_CUDA(cudaMallocHost(&g_buf.stage_h[k], FASTED_CHUNK_BYTES + a->d * 4));
        if (!g_buf.stage_d[k])
            KERN_CUDA(cudaMalloc(&g_buf.stage_d[k], FASTED_CHUNK_BYTES + a->d * 4));
    }
    size_t nchunks = (a->n + rows_chunk - 1) / rows_chunk;
    std::vector<cudaEvent_t> ev(2 * nchunks + 2);
    for (auto &e : ev)
        KERN_CUDA(cudaEventCreate(&e));
    cudaEvent_t copied[2];
    KERN_CUDA(cudaEventCreateWithFlags(&copied[0], cudaEventDisableTiming));
    KERN_CUDA(cudaEventCreateWithFlags(&copied[1], cudaEventDisableTiming));
    bool used[2] = {false, false};
    double t0 = 0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = ts.tv_sec + 1e-9 * ts.tv_nsec;
    }
    for (size_t c = 0; c < nchunks; c++) {
        const int b = c & 1;
        const size_t r0 = c * rows_chunk, rows = std::min(rows_chunk, a->n - r0);
        if (used[b])
            KERN_CUDA(cudaEventSynchronize(copied[b]));
        fasted_to_float_par(a->x + r0 * a->d, g_buf.stage_h[b], rows * a->d);
        KERN_CUDA(cudaMemcpyAsync(g_buf.stage_d[b], g_buf.stage_h[b], rows * a->d * 4,
                                  cudaMemcpyHostToDevice, st));
        KERN_CUDA(cudaEventRecord(ev[2 * c], st));
        fmt->ops->convert(g_buf.stage_d[b], (char *)g_ds.X + r0 * row_bytes, rows, a->d, dp, st);
        KERN_LAUNCH_CHECK("fasted_convert_kernel");
        KERN_CUDA(cudaEventRecord(ev[2 * c + 1], st));
        KERN_CUDA(cudaEventRecord(copied[b], st));
        used[b] = true;
    }
    KERN_CUDA(cudaEventRecord(ev[2 * nchunks], st));
    fmt->ops->norms(g_ds.X, g_ds.s, n_alloc, dp, st);
    KERN_LAUNCH_CHECK("fasted_norms_kernel");
    KERN_CUDA(cudaEventRecord(ev[2 * nchunks + 1], st));
    KERN_CUDA(cudaStreamSynchronize(st));
    double t1 = 0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t1 = ts.tv_sec + 1e-9 * ts.tv_nsec;
    }
    double conv = 0;
    for (size_t c = 0; c < nchunks; c++)
        conv += fasted_ev_ms(ev[2 * c], ev[2 * c + 1]) * 1e-3;
    r->t_norms = fasted_ev_ms(ev[2 * nchunks], ev[2 * nchunks + 1]) * 1e-3;
    r->t_convert = conv;
    r->t_h2d = std::max(0.0, (t1 - t0) - conv - r->t_norms);
    for (auto &e : ev)
        cudaEventDestroy(e);
    cudaEventDestroy(copied[0]);
    cudaEventDestroy(copied[1]);
    g_ds.x = a->x;
    g_ds.n = a->n;
    g_ds.d = a->d;
    g_ds.hash = a->hash;
    g_ds.dev = a->device;
    g_ds.fmt = fmt;
    g_ds.dp = dp;
    g_ds.n_alloc = n_alloc;
    return 0;
}

static double fasted_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

/* Hand the pairs of one launch to the host callback in batches. */
static int fasted_drain(const kern_fasted_args *a, size_t np, cudaStream_t st)
{
    size_t batch = std::max((size_t)1, a->batch_pairs);
    for (size_t k0 = 0; k0 < np; k0 += g_buf.cap) {
        size_t k = std::min(g_buf.cap, np - k0);
        KERN_CUDA(cudaMemcpyAsync(g_buf.hi, g_buf.pi + k0, k * 4, cudaMemcpyDeviceToHost, st));
        KERN_CUDA(cudaMemcpyAsync(g_buf.hj, g_buf.pj + k0, k * 4, cudaMemcpyDeviceToHost, st));
        KERN_CUDA(cudaMemcpyAsync(g_buf.hd, g_buf.pd + k0, k * 4, cudaMemcpyDeviceToHost, st));
        KERN_CUDA(cudaStreamSynchronize(st));
        for (size_t b0 = 0; b0 < k; b0 += batch) {
            size_t m = std::min(batch, k - b0);
            if (a->pair_fn(a->pair_ctx, m, g_buf.hi + b0, g_buf.hj + b0, g_buf.hd + b0))
                return kern_fail(KERN_ESINK, "the pair sink stopped the run");
        }
    }
    return 0;
}

extern "C" int kern_fasted_run(const kern_fasted_args *a, kern_fasted_result *r)
{
    memset(r, 0, sizeof *r);
    const unsigned off = a->off;
    const kern_format *fmt = a->format ? a->format : &kern_fmt_fp16;
    if (a->n == 0 || a->d == 0 || a->q0 > a->q1 || a->q1 > a->n || a->n >= 0xffffff00u)
        return kern_fail(KERN_EINVAL, "%s: bad sizes (n=%zu d=%zu rows %zu..%zu)", fmt->name, a->n,
                         a->d, a->q0, a->q1);
    if (a->mode == KFASTED_HIST && (a->hist_nbins == 0 || a->hist_nbins > FASTED_MAX_BINS))
        return kern_fail(KERN_EINVAL, "%s: 1 to %d histogram bins (got %zu)", fmt->name,
                         FASTED_MAX_BINS, a->hist_nbins);
    if (a->mode == KFASTED_PAIRS && !a->pair_fn)
        return kern_fail(KERN_EINVAL, "%s: pair mode needs a callback", fmt->name);
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return kern_fail(KERN_ENODEV, "no CUDA device");
    }
    if (a->device < 0 || a->device >= ndev)
        return kern_fail(KERN_ENODEV, "no CUDA device %d (%d present)", a->device, ndev);
    KERN_CUDA(cudaSetDevice(a->device));
    cudaDeviceProp prop;
    KERN_CUDA(cudaGetDeviceProperties(&prop, a->device));
    snprintf(r->device_name, sizeof r->device_name, "%.80s (sm_%d%d, %d SMs)", prop.name,
             prop.major, prop.minor, prop.multiProcessorCount);
    if (g_buf.dev != a->device) {
        fasted_free_ds();
        fasted_free_buf();
        g_buf.dev = a->device;
    }
    r->off = off;
    const kern_caps caps = {prop.major * 10 + prop.minor, fasted_wg_usable(a->device),
                            prop.sharedMemPerBlockOptin};
    fasted_choice ch;
    int rc = fasted_choose(off, a->mode, fmt, &caps, a->hist_nbins, &ch);
    if (rc)
        return kern_fail(rc, "%s", ch.why);
    const int use_wg = ch.kind == FASTED_KIND_WGMMA;
    const void *func = NULL, *func_pairs = NULL;
    if (use_wg) {
        func = fmt->ops->wg_func;
        func_pairs = fmt->ops->wg_func_pairs;
    } else {
        fmt->ops->mma_kernels(ch.v->off, &func, &func_pairs);
    }
    if (!func || !func_pairs)
        return kern_fail(KERN_EINVAL, "%s: the %s kernel is not compiled", fmt->name, ch.variant);
    if (a->mode == KFASTED_PAIRS)
        func = func_pairs;
    snprintf(r->variant, sizeof r->variant, "%s", ch.variant);

    cudaStream_t st;
    KERN_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    rc = fasted_upload(a, fmt, r, st);
    if (rc) {
        cudaStreamDestroy(st);
        fasted_free_ds();
        return rc;
    }
    r->d_padded = g_ds.dp;

    const int sym = a->symmetric && a->q0 == 0 && a->q1 == a->n;
    r->symmetric = sym;
    fasted_params p;
    memset(&p, 0, sizeof p);
    p.X = g_ds.X;
    p.s = g_ds.s;
    p.ld = (int)(g_ds.dp * (size_t)fmt->elem_bytes / 2);
    p.n = (unsigned)a->n;
    p.q0 = (unsigned)a->q0;
    p.q1 = (unsigned)a->q1;
    p.sym = sym;
    p.order = ch.order;
    p.mode = a->mode;
    if (use_wg) {
        fasted_wg_grid(&p, a->q1 - a->q0, a->n);
    } else {
        p.T = (unsigned)((a->q1 - a->q0 + ch.v->bm - 1) / ch.v->bm);
        p.U = (unsigned)((a->n + ch.v->bn - 1) / ch.v->bn);
    }
    const size_t smem = ch.smem;
    if (a->mode == KFASTED_HIST) {
        p.eps2 = (float)a->hist_edges[a->hist_nbins];
        p.nbins = (int)a->hist_nbins;
    } else {
        p.eps2 = (float)(a->eps * a->eps);
    }
    const int grid = prop.multiProcessorCount * (use_wg ? 1 : ch.v->minb);

    /* Buffers for this run. */
    unsigned *d_counts = NULL;
    float *d_edges = NULL;
    unsigned long long *d_hist = NULL;
    size_t nq = a->q1 - a->q0;
    std::vector<float> edges_f;
#define FASTED_TRY(call)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            rc = kern_cuda_fail(e_, #call, __FILE__, __LINE__);                                    \
            goto out;                                                                              \
        }                                                                                          \
    } while (0)
    if (!g_buf.ctl)
        FASTED_TRY(cudaMalloc(&g_buf.ctl, sizeof(fasted_ctrl)));
    if (g_buf.redo_cap < (size_t)grid * 2) {
        for (int k = 0; k < 2; k++) {
            cudaFree(g_buf.redo[k]);
            g_buf.redo[k] = NULL;
            FASTED_TRY(cudaMalloc(&g_buf.redo[k], (size_t)grid * 2 * sizeof(fasted_redo)));
        }
        g_buf.redo_cap = (size_t)grid * 2;
    }
    if (a->mode == KFASTED_PAIRS) {
        size_t cap = std::max(a->batch_pairs, FASTED_MIN_CAP);
        cap = std::min(cap, (size_t)1 << 28);
        if (g_buf.cap != cap) {
            cudaFree(g_buf.pi);
            cudaFree(g_buf.pj);
            cudaFree(g_buf.pd);
            cudaFreeHost(g_buf.hi);
            cudaFreeHost(g_buf.hj);
            cudaFreeHost(g_buf.hd);
            g_buf.pi = g_buf.pj = g_buf.hi = g_buf.hj = NULL;
            g_buf.pd = g_buf.hd = NULL;
            g_buf.cap = 0;
            FASTED_TRY(cudaMalloc(&g_buf.pi, cap * 4));
            FASTED_TRY(cudaMalloc(&g_buf.pj, cap * 4));
            FASTED_TRY(cudaMalloc(&g_buf.pd, cap * 4));
            FASTED_TRY(cudaMallocHost(&g_buf.hi, cap * 4));
            FASTED_TRY(cudaMallocHost(&g_buf.hj, cap * 4));
            FASTED_TRY(cudaMallocHost(&g_buf.hd, cap * 4));
            g_buf.cap = cap;
        }
        p.pi = g_buf.pi;
        p.pj = g_buf.pj;
        p.pd = g_buf.pd;
        p.cap = g_buf.cap;
    }
    if (a->mode == KFASTED_PERPOINT) {
        FASTED_TRY(cudaMalloc(&d_counts, std::max(nq, (size_t)1) * 4));
        FASTED_TRY(cudaMemsetAsync(d_counts, 0, nq * 4, st));
        p.counts = d_counts;
    }
    if (a->mode == KFASTED_HIST) {
        edges_f.resize(a->hist_nbins + 1);
        for (size_t b = 0; b <= a->hist_nbins; b++)
            edges_f[b] = (float)a->hist_edges[b];
        FASTED_TRY(cudaMalloc(&d_edges, edges_f.size() * 4));
        FASTED_TRY(cudaMalloc(&d_hist, edges_f.size() * 8));
        FASTED_TRY(cudaMemcpyAsync(d_edges, edges_f.data(), edges_f.size() * 4,
                                   cudaMemcpyHostToDevice, st));
        FASTED_TRY(cudaMemsetAsync(d_hist, 0, edges_f.size() * 8, st));
        p.edges = d_edges;
        p.hist = d_hist;
    }
    if (!use_wg)
        FASTED_TRY(
            cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    {
        const unsigned long long total =
            use_wg ? fasted_wg_items(&p) : fasted_tiles_total(p.T, p.U, sym, p.order);
        /* Bounded launches: the host checks cancel and reports progress
         * between them; 64 tiles per block keeps the tail of each small. */
        const unsigned long long chunk = std::max((unsigned long long)grid * 64, total / 64 + 1);
        unsigned long long t_next = 0;
        unsigned nredo = 0;
        int cur = 0;
        cudaEvent_t e0, e1;
        FASTED_TRY(cudaEventCreate(&e0));
        FASTED_TRY(cudaEventCreate(&e1));
        double t_drain = 0;
        while (nredo > 0 || t_next < total) {
            if (a->cancel && *a->cancel) {
                rc = kern_fail(KERN_ECANCEL, "cancelled");
                break;
            }
            fasted_ctrl c0;
            memset(&c0, 0, sizeof c0);
            c0.valid_end = ~0ull;
            FASTED_TRY(cudaMemcpyAsync(g_buf.ctl, &c0, sizeof c0, cudaMemcpyHostToDevice, st));
            p.ctl = g_buf.ctl;
            p.redo_in = g_buf.redo[cur];
            p.nredo_in = nredo;
            p.redo_out = g_buf.redo[cur ^ 1];
            p.t_base = t_next;
            p.t_end = nredo > 0 ? t_next : std::min(total, t_next + chunk);
            void *args[] = {&p};
            FASTED_TRY(cudaEventRecord(e0, st));
            if (use_wg)
                FASTED_TRY(fasted_wg_launch(func, &p, g_ds.n_alloc, grid, smem, st));
            else
                FASTED_TRY(
                    cudaLaunchKernel(func, dim3(grid), dim3(FASTED_THREADS), args, smem, st));
            FASTED_TRY(cudaGetLastError());
            FASTED_TRY(cudaEventRecord(e1, st));
            fasted_ctrl c1;
            FASTED_TRY(cudaMemcpyAsync(&c1, g_buf.ctl, sizeof c1, cudaMemcpyDeviceToHost, st));
            FASTED_TRY(cudaStreamSynchronize(st));
            r->t_kernel += fasted_ev_ms(e0, e1) * 1e-3;
            r->launches++;
            unsigned long long items = nredo + (p.t_end - p.t_base);
            unsigned long long fetched = std::min(c1.queue, items);
            if (a->mode == KFASTED_PAIRS) {
                unsigned long long np = std::min(c1.pos, c1.valid_end);
                np = std::min(np, (unsigned long long)g_buf.cap);
                double td = fasted_now();
                rc = fasted_drain(a, np, st);
                t_drain += fasted_now() - td;
                r->pairs += np;
                if (rc)
                    break;
                if (c1.full)
                    r->refills++;
                unsigned nout = c1.nredo;
                if (fetched < nredo) {
                    /* Redo items this launch never reached go on. */
                    FASTED_TRY(cudaMemcpyAsync(
                        g_buf.redo[cur ^ 1] + nout, g_buf.redo[cur] + fetched,
                        (nredo - fetched) * sizeof(fasted_redo), cudaMemcpyDeviceToDevice, st));
                    nout += (unsigned)(nredo - fetched);
                }
                if (nredo == 0)
                    t_next = p.t_base + fetched;
                nredo = nout;
                cur ^= 1;
            } else {
                r->pairs += c1.count;
                t_next = p.t_end;
            }
            if (a->progress)
                a->progress(a->progress_ctx, (double)t_next / (double)total);
        }
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
        r->t_drain = t_drain;
    }
    if (rc == 0 && a->mode == KFASTED_PERPOINT) {
        double td = fasted_now();
        std::vector<unsigned> hc(nq);
        FASTED_TRY(cudaMemcpy(hc.data(), d_counts, nq * 4, cudaMemcpyDeviceToHost));
        uint64_t sum = 0;
        for (size_t k = 0; k < nq; k++) {
            a->counts[k] = hc[k];
            sum += hc[k];
        }
        r->pairs = sum;
        r->t_drain += fasted_now() - td;
    }
    if (rc == 0 && a->mode == KFASTED_HIST) {
        std::vector<unsigned long long> hh(a->hist_nbins + 1);
        FASTED_TRY(cudaMemcpy(hh.data(), d_hist, hh.size() * 8, cudaMemcpyDeviceToHost));
        uint64_t sum = 0;
        *a->hist_below = hh[0];
        for (size_t b = 0; b < a->hist_nbins; b++)
            a->hist[b] = hh[b + 1];
        for (auto v : hh)
            sum += v;
        r->pairs = sum;
    }
out:
#undef FASTED_TRY
    cudaFree(d_counts);
    cudaFree(d_edges);
    cudaFree(d_hist);
    cudaStreamDestroy(st);
    cudaGetLastError();
    return rc;
}
