/* DBSCAN's curve, its core distances on the device (kern_curve_core,
 * kernels.h): the join at the curve's max, fn's PAIRS run through
 * kern_drive, hands every launch's pairs to a consumer kernel on the
 * launch's stream (kern_join_args.pair_dev) that keeps each row its k
 * nearest other rows seen, and no pair crosses to the host. The curve
 * needs a core distance only where it is at most max (a point whose
 * (minPts-1)-th neighbour lies beyond max is core at no eps the curve
 * covers), and below max the k nearest are all pairs of that join: one
 * PAIRS run instead of a k-distance over all n^2 products (exact's: an
 * FP16 top-k pass of about three COUNT joins and two dozen FP64 joins to
 * refine it; 3.1-3.4 s at 10^6 x 128 on an H200, against 0.41 s for a
 * COUNT join at max).
 *
 * Per row: a max-heap of the k least (d2, j) it was offered, each other
 * row j once (the same pair may come as (i, j) and (j, i), or from two
 * launches of a cluster cut), its length, a lock, and the full heap's
 * largest d2 (top, +inf before). top only falls, so a stale read only
 * sends a value to the lock: a value not below it cannot change the k-th
 * least and is dropped without the lock. Under the lock (a spin on a
 * 32-bit word, each lane retrying until it takes it) the heap is read and
 * written through volatile pointers between fences. The heap ends holding
 * k distinct rows whose d2 are the k least values offered, whatever order
 * the pairs came in: its root is the k-th least d2, what the host's sink
 * (src/dbscan_curve.c, core_range) gives from the same pairs.
 *
 * Memory beyond the dataset and the run's pair buffer: 12k + 16 bytes a
 * row (heap values and rows, length, lock, top), and n doubles out. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "kern_consume.cuh"
#include "kern_drive.cuh" /* kern_now */

#define KCC_THREADS 256

/* One device's state, by the dataset's row. */
struct kcc_dev {
    int device;
    double *hd;   /* n x k heap values */
    uint32_t *hj; /* n x k heap rows */
    uint32_t *len, *lock;
    double *top;    /* the full heap's largest value: +inf before */
    double *core;   /* n: the k-th least, out (the first device) */
    kern_rowmap rm; /* a layout's rows (run row -> dataset row) */
};

/* What the consumer reads, by value. */
struct kcc_arrays {
    double *hd;
    uint32_t *hj, *len, *lock;
    double *top;
    uint32_t k;
};

static std::mutex g_kcc_mu;
static kcc_dev *g_kcc[KERN_DEV_SLOTS];
static uint32_t g_kcc_k;
static int g_kcc_trace;
static double g_kcc_consume_s;

static unsigned kcc_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KCC_THREADS - 1) / KCC_THREADS, (size_t)4096));
}

/* Whether d2 cannot change row p's k-th least (its heap is full and its
 * largest is not above d2): dropped without the lock. */
__device__ __forceinline__ bool kcc_skip(const kcc_arrays &c, uint32_t p, double d2)
{
    return !(d2 < ((volatile double *)c.top)[p]);
}

/* (d2, j) into row p's heap; the caller holds p's lock. */
__device__ void kcc_heap_put(const kcc_arrays &c, uint32_t p, double d2, uint32_t j)
{
    const uint32_t K = c.k;
    volatile double *hd = c.hd + (size_t)p * K;
    volatile uint32_t *hj = c.hj + (size_t)p * K;
    volatile uint32_t *len = c.len;
    const uint32_t m = len[p];
    for (uint32_t t = 0; t < m; t++)
        if (hj[t] == j)
            return; /* row j is in already (both orders of a pair) */
    uint32_t t;
    if (m < K) {
        t = m;
        while (t > 0 && hd[(t - 1) / 2] < d2) {
            hd[t] = hd[(t - 1) / 2];
            hj[t] = hj[(t - 1) / 2];
            t = (t - 1) / 2;
        }
        hd[t] = d2;
        hj[t] = j;
        len[p] = m + 1;
        if (m + 1 == K)
            ((volatile double *)c.top)[p] = hd[0];
        return;
    }
    if (!(d2 < hd[0]))
        return;
    t = 0;
    for (;;) { /* the new root sifted down */
        uint32_t ch = 2 * t + 1;
        if (ch >= K)
            break;
        if (ch + 1 < K && hd[ch] < hd[ch + 1])
            ch++;
        if (!(d2 < hd[ch]))
            break;
        hd[t] = hd[ch];
        hj[t] = hj[ch];
        t = ch;
    }
    hd[t] = d2;
    hj[t] = j;
    ((volatile double *)c.top)[p] = hd[0];
}

/* Values (d2[t], j[t]) for the bits t of mask into row p's heap under its
 * lock (each lane retrying until it takes it, so no lane of a warp waits
 * in one iteration on another's release). */
__device__ void kcc_put_all(const kcc_arrays &c, uint32_t p, const double *d2, const uint32_t *j,
                            unsigned mask)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(&c.lock[p], 0u, 1u) == 0u) {
            __threadfence();
            for (unsigned g = mask; g; g &= g - 1) {
                const int t = __ffs(g) - 1;
                kcc_heap_put(c, p, d2[t], j[t]);
            }
            __threadfence();
            atomicExch(&c.lock[p], 0u);
            done = true;
        }
    }
}

__device__ void kcc_put(const kcc_arrays &c, uint32_t p, double d2, uint32_t j)
{
    if (kcc_skip(c, p, d2))
        return;
    kcc_put_all(c, p, &d2, &j, 1u);
}

/* One launch's pairs: each pair's d2 to its query row, and to its other
 * row where that is not a query row of the run (a query row gets the pair
 * as one of its own, (j, i), from any run that lists every ordered pair
 * of its query rows). The lanes of a warp with the same query row hand
 * their values to one lane, which puts them all under one take of the
 * row's lock (as kern_curve.cu's consumer). */
static __global__ void __launch_bounds__(KCC_THREADS)
    kcc_pairs_kernel(kcc_arrays c, const uint32_t *__restrict__ map, kern_pair_batch b, size_t q0,
                     size_t q1)
{
    __shared__ double s_d[KCC_THREADS];
    __shared__ uint32_t s_j[KCC_THREADS];
    const double sc = b.d2_scale ? b.d2_scale : 1.0;
    const unsigned lane = threadIdx.x & 31, wbase = threadIdx.x & ~31u;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t0 = (unsigned long long)blockIdx.x * blockDim.x + wbase; t0 < b.np;
         t0 += stride) {
        const unsigned long long t = t0 + lane;
        bool mine = false, other = false;
        uint32_t i = 0, j = 0;
        double d2 = 0;
        if (t < b.np) {
            const uint32_t jr = b.pj[t];
            i = b.pi[t];
            j = jr;
            bool ok = true;
            if (map) {
                i = map[i];
                j = map[j];
                ok = i != KERN_ROW_PAD && j != KERN_ROW_PAD;
            }
            if (ok && i != j) {
                d2 = b.d2_bytes == 8 ? ((const double *)b.pd)[t]
                                     : (double)((const float *)b.pd)[t] * sc;
                mine = !kcc_skip(c, i, d2);
                other = (jr < q0 || jr >= q1) && !kcc_skip(c, j, d2);
            }
        }
        const unsigned want = __ballot_sync(0xffffffffu, mine);
        if (mine) {
            const unsigned grp = __match_any_sync(want, i);
            s_d[threadIdx.x] = d2;
            s_j[threadIdx.x] = j;
            __syncwarp(grp);
            if (lane == (unsigned)(__ffs(grp) - 1))
                kcc_put_all(c, i, s_d + wbase, s_j + wbase, grp);
        }
        if (other)
            kcc_put(c, j, d2, i);
        __syncwarp();
    }
}

static __global__ void kcc_init_kernel(size_t n, double *top)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        top[p] = INFINITY;
}

/* Another device's heaps (values, rows, lengths) into this one's. */
static __global__ void kcc_merge_kernel(kcc_arrays c, size_t n, const double *hd,
                                        const uint32_t *hj, const uint32_t *len)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        for (uint32_t t = 0; t < len[p] && t < c.k; t++)
            kcc_put(c, (uint32_t)p, hd[p * c.k + t], hj[p * c.k + t]);
}

/* The k-th least (the full heap's root), +inf where fewer than k. */
static __global__ void kcc_out_kernel(kcc_arrays c, size_t n, double *core)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        core[p] = c.len[p] == c.k ? c.hd[p * c.k] : INFINITY;
}

static kcc_arrays kcc_of(const kcc_dev &d)
{
    return kcc_arrays{d.hd, d.hj, d.len, d.lock, d.top, g_kcc_k};
}

/* kern_join_args.pair_dev. */
static int kcc_consume(void *ctx, const kern_join_args *run, void *stream, const kern_pair_batch *b)
{
    (void)ctx;
    kcc_dev *d = g_kcc[run->device];
    cudaStream_t st = (cudaStream_t)stream;
    const uint32_t *map;
    const int rc = kern_rowmap_for(&d->rm, run, st, &map);
    if (rc)
        return rc;
    double t0 = 0;
    if (g_kcc_trace) {
        KERN_CUDA(cudaStreamSynchronize(st));
        t0 = kern_now();
    }
    kcc_pairs_kernel<<<kcc_blocks(b->np), KCC_THREADS, 0, st>>>(kcc_of(*d), map, *b, run->q0,
                                                                run->q1);
    KERN_CUDA(cudaGetLastError());
    if (g_kcc_trace) {
        KERN_CUDA(cudaStreamSynchronize(st));
        g_kcc_consume_s += kern_now() - t0;
    }
    return 0;
}

static void kcc_free(kcc_dev &d)
{
    cudaSetDevice(d.device);
    void *p[] = {d.hd, d.hj, d.len, d.lock, d.top, d.core, d.rm.map};
    for (void *q : p)
        cudaFree(q);
}

static int kcc_malloc(void *p, size_t bytes)
{
    return kern_consume_malloc(p, bytes, "dbscan curve");
}

static int kcc_alloc(kcc_dev &d, size_t n, size_t k)
{
    KERN_CUDA(cudaSetDevice(d.device));
    int rc;
    if ((rc = kcc_malloc(&d.hd, n * k * 8)) || (rc = kcc_malloc(&d.hj, n * k * 4)) ||
        (rc = kcc_malloc(&d.len, n * 4)) || (rc = kcc_malloc(&d.lock, n * 4)) ||
        (rc = kcc_malloc(&d.top, n * 8)))
        return rc;
    KERN_CUDA(cudaMemset(d.len, 0, n * 4));
    KERN_CUDA(cudaMemset(d.lock, 0, n * 4));
    kcc_init_kernel<<<kcc_blocks(n), KCC_THREADS>>>(n, d.top);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* Every other device's heaps into the first's (through the host: devices
 * need not see each other), then the first's k-th least values to core2. */
static int kcc_collect(std::vector<kcc_dev> &dv, size_t n, size_t k, double *core2)
{
    kcc_dev &d0 = dv[0];
    if (dv.size() > 1) {
        std::vector<double> hd(n * k);
        std::vector<uint32_t> hj(n * k), len(n);
        double *id = NULL;
        uint32_t *ij = NULL, *il = NULL;
        int rc = 0;
        KERN_CUDA(cudaSetDevice(d0.device));
        if ((rc = kcc_malloc(&id, n * k * 8)) || (rc = kcc_malloc(&ij, n * k * 4)) ||
            (rc = kcc_malloc(&il, n * 4))) {
            cudaFree(id);
            cudaFree(ij);
            return rc;
        }
        for (size_t t = 1; t < dv.size() && !rc; t++) {
            kcc_dev &d = dv[t];
            cudaError_t e;
            if ((e = cudaSetDevice(d.device)) ||
                (e = cudaMemcpy(hd.data(), d.hd, n * k * 8, cudaMemcpyDeviceToHost)) ||
                (e = cudaMemcpy(hj.data(), d.hj, n * k * 4, cudaMemcpyDeviceToHost)) ||
                (e = cudaMemcpy(len.data(), d.len, n * 4, cudaMemcpyDeviceToHost)) ||
                (e = cudaSetDevice(d0.device)) ||
                (e = cudaMemcpy(id, hd.data(), n * k * 8, cudaMemcpyHostToDevice)) ||
                (e = cudaMemcpy(ij, hj.data(), n * k * 4, cudaMemcpyHostToDevice)) ||
                (e = cudaMemcpy(il, len.data(), n * 4, cudaMemcpyHostToDevice))) {
                rc = kern_cuda_fail(e, "cudaMemcpy", __FILE__, __LINE__);
                break;
            }
            kcc_merge_kernel<<<kcc_blocks(n), KCC_THREADS>>>(kcc_of(d0), n, id, ij, il);
            if ((e = cudaGetLastError()) || (e = cudaDeviceSynchronize()))
                rc = kern_cuda_fail(e, "kcc_merge_kernel", __FILE__, __LINE__);
        }
        cudaSetDevice(d0.device);
        cudaFree(id);
        cudaFree(ij);
        cudaFree(il);
        if (rc)
            return rc;
    }
    KERN_CUDA(cudaSetDevice(d0.device));
    int rc = kcc_malloc(&d0.core, n * 8);
    if (rc)
        return rc;
    kcc_out_kernel<<<kcc_blocks(n), KCC_THREADS>>>(kcc_of(d0), n, d0.core);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaMemcpy(core2, d0.core, n * 8, cudaMemcpyDeviceToHost));
    return 0;
}

static int kcc_run(kern_join_fn fn, const kern_join_args *a, std::vector<kcc_dev> &dv, size_t k,
                   double *core2, kern_join_result *r, double *t_alloc)
{
    int rc;
    const double t0 = kern_now();
    for (auto &d : dv)
        if ((rc = kcc_alloc(d, a->n, k)))
            return rc;
    *t_alloc = kern_now() - t0;
    kern_join_args b = *a;
    b.mode = KJOIN_PAIRS;
    b.pair_fn = NULL;
    b.pair_dev = kcc_consume;
    b.pair_dev_ctx = NULL;
    b.pair_dev_ids = 0;
    b.counts = NULL;
    if ((rc = fn(&b, r)))
        return rc;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return kcc_collect(dv, a->n, k, core2);
}

extern "C" int kern_curve_core(kern_join_fn fn, const kern_join_args *a0, size_t k, double *core2,
                               kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a0->x || a0->n == 0 || a0->d == 0 || a0->c0 || a0->rows || a0->origin_of || a0->tiles ||
        a0->q0 != 0 || a0->q1 != a0->n || a0->n >= KERN_ROW_PAD || k == 0 || k >= a0->n ||
        k > UINT32_MAX)
        return kern_fail(KERN_EINVAL, "dbscan curve: bad core-distance run (n %zu, d %zu, k %zu)",
                         a0->n, a0->d, k);
    kern_join_args a = *a0;
    std::vector<int> devs;
    const int drc = kern_consume_devices(&a, devs);
    if (drc)
        return drc;
    const int nd = (int)devs.size();
    std::vector<kcc_dev> dv(devs.size());
    for (size_t t = 0; t < devs.size(); t++) {
        memset(&dv[t], 0, sizeof dv[t]);
        dv[t].device = devs[t];
    }
    std::lock_guard<std::mutex> hold(g_kcc_mu);
    g_kcc_k = (uint32_t)k;
    g_kcc_trace = getenv("TCJOIN_DBSCAN_TRACE") != NULL;
    g_kcc_consume_s = 0;
    for (auto &d : dv)
        g_kcc[d.device] = &d;
    const double t0 = kern_now();
    double t_alloc = 0;
    const int rc = kcc_run(fn, &a, dv, k, core2, res, &t_alloc);
    for (auto &d : dv) {
        g_kcc[d.device] = NULL;
        kcc_free(d);
    }
    res->mem_peak += (size_t)nd * a.n * (12 * k + 16) + a.n * 8;
    const double spent = kern_now() - t0;
    res->t_d2h += std::max(0.0, spent - res->t_kernel - res->t_sink);
    if (g_kcc_trace)
        fprintf(stderr,
                "dbscan curve core trace (ms): state %.3f, run+collect+free %.3f, kernels %.3f, "
                "consumer %.3f, pairs %llu\n",
                t_alloc * 1e3, (spent - t_alloc) * 1e3, res->t_kernel * 1e3, g_kcc_consume_s * 1e3,
                (unsigned long long)res->pairs);
    snprintf(res->variant + strlen(res->variant), sizeof res->variant - strlen(res->variant), "%s",
             ", core distances on the device");
    return rc;
}
