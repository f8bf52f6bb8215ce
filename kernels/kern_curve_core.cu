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
 * Per row: a set of the K least (d2, j) it was offered (K >= k; K > k
 * where the caller wants each row's K nearest too, the curve's first
 * round of lists: src/curve_knn.h), each other row j once (the same pair
 * may come as (i, j) and (j, i), or from two launches of a cluster cut),
 * its length, a lock, and the full set's largest d2 (top, +inf before).
 * top only falls, so a stale read only sends a value to the lock: a value
 * not below it cannot change the K least and is dropped without the lock.
 * A warp takes each row its lanes hold values for in turn, as a whole:
 * one lane spins on the row's 32-bit lock, the set is read through
 * volatile pointers between fences into the lanes' registers (eight
 * slots a lane: K <= 256), the values go in by shuffles and ballots, and
 * the set is written back (kcc_warp_put). The set ends holding K distinct
 * rows whose d2 are the K least values offered, whatever order the pairs
 * came in; sorted at the end by (d2, j), its k-th is the k-th least d2,
 * what a host sink gives from the same pairs (src/curve_knn.c). Where
 * the caller wants the curve's first round, each point's list, bound and
 * reachability are built here from its sorted set (kernels/knn_lists.h,
 * the host route's code) and only they come back (152 bytes a point, not
 * the 12K of the K nearest: 768 MB at 10^6 points, K = 64).
 *
 * Memory beyond the dataset and the run's pair buffer: 12K + 16 bytes a
 * row (set values and rows, length, lock, top), and n doubles out (and
 * on the first device 12K + 152 bytes a row for the lists). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <type_traits>
#include <vector>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_drive.cuh" /* kern_now */
#include "knn_lists.h"

#define KCC_THREADS 256

/* One device's state, by the dataset's row. */
struct kcc_dev {
    int device;
    double *hd;   /* n x k set values */
    uint32_t *hj; /* n x k set rows */
    uint32_t *len, *lock;
    double *top;  /* the full set's largest value: +inf before */
    double *core; /* n: the k-th least, out (the first device) */
    double *od;   /* n x K: the sorted sets (the first device, lists only) */
    uint32_t *oj;
    kern_curve_list *ol; /* n: the first round's lists, out */
    double *orch, *okb;  /* n each: reachabilities and bounds, out */
    kern_rowmap rm;      /* a layout's rows (run row -> dataset row) */
    /* a launch's pairs in their query row's order (kcc_order): sorted
     * keys, 0..cap-1, the order, CUB's temporary storage */
    uint32_t *okey, *oiota, *oord;
    void *otmp;
    size_t ocap, otmp_bytes;
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
static uint32_t g_kcc_k; /* the set's size, K */
static int g_kcc_trace;
static double g_kcc_consume_s, g_kcc_collect_s; /* the trace's */

static unsigned kcc_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KCC_THREADS - 1) / KCC_THREADS, (size_t)4096));
}

/* Whether d2 cannot change row p's K least (its set is full and its
 * largest is not above d2): dropped without the lock. */
__device__ __forceinline__ bool kcc_skip(const kcc_arrays &c, uint32_t p, double d2)
{
    return !(d2 < ((volatile double *)c.top)[p]);
}

#define KCC_FULL 0xffffffffu
/* A set's slots a lane: K <= 32 KCC_SLOTS (KDIST_MAX_K, 256). The
 * consumer is built for S = 1, 2, 4 and 8 slots a lane and launched with
 * the fewest that hold K (kcc_by_slots): every value offered costs a scan of
 * S slots (its argmax, its duplicate test), so the curve's usual K = 64
 * takes two, not eight. */
#define KCC_SLOTS 8

/* f(std::integral_constant<int, S>) with the fewest slots S that hold K:
 * the consumer's launches. */
template <typename F> static void kcc_by_slots(uint32_t K, F f)
{
    if (K <= 32)
        f(std::integral_constant<int, 1>());
    else if (K <= 64)
        f(std::integral_constant<int, 2>());
    else if (K <= 128)
        f(std::integral_constant<int, 4>());
    else
        f(std::integral_constant<int, KCC_SLOTS>());
}

/* The largest of a full set held S slots a lane (slot u 32 + lane;
 * slots from K on hold -inf) and its slot (the lowest holding it). */
template <int S>
__device__ __forceinline__ void kcc_argmax(const double *v, uint32_t K, double *mv, uint32_t *ms)
{
    double m = -INFINITY;
#pragma unroll
    for (int u = 0; u < S; u++)
        m = v[u] > m ? v[u] : m;
    for (int o = 16; o; o >>= 1) {
        const double x = __shfl_xor_sync(KCC_FULL, m, o);
        m = x > m ? x : m;
    }
    *mv = m;
    *ms = K;
#pragma unroll
    for (int u = S - 1; u >= 0; u--) {
        const unsigned b = __ballot_sync(KCC_FULL, v[u] == m);
        if (b)
            *ms = 32u * (uint32_t)u + (uint32_t)(__ffs(b) - 1);
    }
}

/* The whole warp puts the values (d2, col) of the lanes in grp into row
 * r's set under r's lock: the set (unordered, at most K <= 32 S entries)
 * read into registers, S slots a lane, each value offered in turn (a
 * full set's largest replaced when the value is below it; a row already
 * in the set skipped, by a ballot), written back, the full set's largest
 * published to top. A few shuffles a value where a heap in memory took
 * dozens of dependent loads and stores under the lock (with K = 32 that
 * consumer took about 2.3 s against 0.13 s at K = 9, 10^6 x 128 on an
 * H100). */
template <int S>
__device__ void kcc_warp_put(const kcc_arrays &c, uint32_t r, unsigned grp, double d2, uint32_t col,
                             unsigned lane)
{
    const uint32_t K = c.k;
    if (lane == 0)
        while (atomicCAS(&c.lock[r], 0u, 1u) != 0u) {
        }
    __syncwarp();
    __threadfence();
    volatile double *hd = c.hd + (size_t)r * K;
    volatile uint32_t *hj = c.hj + (size_t)r * K;
    uint32_t len = ((volatile uint32_t *)c.len)[r];
    double v[S];
    uint32_t jv[S];
#pragma unroll
    for (int u = 0; u < S; u++) {
        const uint32_t t = 32u * (uint32_t)u + lane;
        v[u] = t < len ? hd[t] : -INFINITY;
        jv[u] = t < len ? hj[t] : KERN_ROW_PAD;
    }
    double mv = INFINITY;
    uint32_t ms = 0;
    if (len == K)
        kcc_argmax<S>(v, K, &mv, &ms);
    for (unsigned g = grp; g; g &= g - 1) {
        const int src = __ffs(g) - 1;
        const double cd = __shfl_sync(KCC_FULL, d2, src);
        const uint32_t cj = __shfl_sync(KCC_FULL, col, src);
        if (len == K && !(cd < mv))
            continue;
        bool dup = false;
#pragma unroll
        for (int u = 0; u < S; u++)
            dup |= jv[u] == cj;
        if (__any_sync(KCC_FULL, dup))
            continue; /* row cj is in already (both orders of a pair) */
        const uint32_t t = len < K ? len : ms;
#pragma unroll
        for (int u = 0; u < S; u++)
            if (t == 32u * (uint32_t)u + lane) {
                v[u] = cd;
                jv[u] = cj;
            }
        if (len < K)
            len++;
        if (len == K)
            kcc_argmax<S>(v, K, &mv, &ms);
    }
#pragma unroll
    for (int u = 0; u < S; u++) {
        const uint32_t t = 32u * (uint32_t)u + lane;
        if (t < len) {
            hd[t] = v[u];
            hj[t] = jv[u];
        }
    }
    if (lane == 0) {
        ((volatile uint32_t *)c.len)[r] = len;
        ((volatile double *)c.top)[r] = len == K ? mv : INFINITY;
    }
    __threadfence();
    __syncwarp();
    if (lane == 0)
        atomicExch(&c.lock[r], 0u);
    __syncwarp();
}

/* Each lane's value (act: it has one) to its row: the warp takes the rows
 * in turn, each with all the lanes that hold a value for it. */
template <int S>
__device__ __forceinline__ void kcc_warp_rows(const kcc_arrays &c, bool act, uint32_t row,
                                              double d2, uint32_t col, unsigned lane)
{
    unsigned want = __ballot_sync(KCC_FULL, act);
    while (want) {
        const uint32_t r = __shfl_sync(KCC_FULL, row, __ffs(want) - 1);
        const unsigned grp = __ballot_sync(KCC_FULL, act && row == r);
        want &= ~grp;
        kcc_warp_put<S>(c, r, grp, d2, col, lane);
    }
}

/* One launch's pairs: each pair's d2 to its query row, and to its other
 * row where that is not a query row of the run (a query row gets the pair
 * as one of its own, (j, i), from any run that lists every ordered pair
 * of its query rows). With ord (kcc_order: the pairs by query row) a
 * warp's 32 pairs share one or two query rows, and each row's values go
 * in under one take of its lock. */
template <int S>
static __global__ void __launch_bounds__(KCC_THREADS)
    kcc_pairs_kernel(kcc_arrays c, const uint32_t *__restrict__ map, kern_pair_batch b,
                     const uint32_t *__restrict__ ord, size_t q0, size_t q1)
{
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
            const unsigned long long s = ord ? ord[t] : t; /* the pair's slot in the batch */
            const uint32_t jr = b.pj[s];
            i = b.pi[s];
            j = jr;
            bool ok = true;
            if (map) {
                i = map[i];
                j = map[j];
                ok = i != KERN_ROW_PAD && j != KERN_ROW_PAD;
            }
            if (ok && i != j) {
                d2 = b.d2_bytes == 8 ? ((const double *)b.pd)[s]
                                     : (double)((const float *)b.pd)[s] * sc;
                mine = !kcc_skip(c, i, d2);
                other = (jr < q0 || jr >= q1) && !kcc_skip(c, j, d2);
            }
        }
        kcc_warp_rows<S>(c, mine, i, d2, j, lane);
        kcc_warp_rows<S>(c, other, j, d2, i, lane);
    }
}

static __global__ void kcc_init_kernel(size_t n, double *top)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        top[p] = INFINITY;
}

/* Another device's sets (values, rows, lengths) into this one's: a warp
 * a row, its entries offered as a launch's values are. */
template <int S>
static __global__ void kcc_merge_kernel(kcc_arrays c, size_t n, const double *hd,
                                        const uint32_t *hj, const uint32_t *len)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps)
        for (uint32_t h = 0; h < c.k; h += 32) { /* warp-uniform */
            const uint32_t t = h + lane;
            const bool act = t < len[p] && t < c.k;
            kcc_warp_rows<S>(c, act, (uint32_t)p, act ? hd[p * c.k + t] : 0.0,
                             act ? hj[p * c.k + t] : 0u, lane);
        }
}

/* Each row's k-th least to core, +inf where fewer than k (K == k: the
 * full set's largest). */
static __global__ void kcc_out_kernel(kcc_arrays c, size_t n, double *core)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        const uint32_t K = c.k, m = c.len[p];
        double x = -INFINITY;
        for (uint32_t t = 0; t < m; t++)
            x = c.hd[p * K + t] > x ? c.hd[p * K + t] : x;
        core[p] = m == K ? x : INFINITY;
    }
}

/* (x, y) before (u, v) in (d2, j) order. */
__device__ __forceinline__ bool kcc_less(double x, uint32_t y, double u, uint32_t v)
{
    return x < u || (x == u && y < v);
}

/* Each row's set sorted by (d2, j) into od and oj (K <= KERN_CORE_MAX_K,
 * 64; the slots past the count +inf and KERN_ROW_PAD, which sort last),
 * the k-th least to core where it is at most max2 (else +inf): a warp a
 * row, two entries a lane (entry 32 u + lane), sorted by a bitonic
 * network of 64 (its exchanges across lanes by shuffles, across a lane's
 * two entries in registers). With a thread's insertion sort of its row
 * in local memory here, the sort, the lists and the merging's start took
 * 22 ms at 10^6 rows, K = 64; with the warp's, 4 ms (H200, 2026-11-29).
 * The sets hold each row once, so (d2, j) is a total order and any sort
 * gives the same. */
static __global__ void kcc_sorted_kernel(kcc_arrays c, size_t n, uint32_t k, double *core,
                                         double *od, uint32_t *oj, double max2)
{
    const unsigned lane = threadIdx.x & 31;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint32_t K = c.k;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t m = c.len[p];
        double v[2];
        uint32_t r[2];
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            v[u] = t < m ? c.hd[p * K + t] : INFINITY;
            r[u] = t < m ? c.hj[p * K + t] : KERN_ROW_PAD;
        }
        for (uint32_t w = 2; w <= 64; w <<= 1)
            for (uint32_t h = w >> 1; h > 0; h >>= 1) {
                if (h == 32) { /* w == 64: entry lane against entry 32 + lane */
                    if (kcc_less(v[1], r[1], v[0], r[0])) {
                        const double tv = v[0];
                        const uint32_t tr = r[0];
                        v[0] = v[1];
                        r[0] = r[1];
                        v[1] = tv;
                        r[1] = tr;
                    }
                    continue;
                }
#pragma unroll
                for (int u = 0; u < 2; u++) {
                    const double ov = __shfl_xor_sync(KCC_FULL, v[u], h);
                    const uint32_t orow = __shfl_xor_sync(KCC_FULL, r[u], h);
                    const uint32_t e = 32u * (uint32_t)u + lane;
                    /* the lower entry of an ascending pair keeps the least */
                    const bool least = ((e & h) == 0) == ((e & w) == 0);
                    const bool other = least == kcc_less(ov, orow, v[u], r[u]);
                    if (other) {
                        v[u] = ov;
                        r[u] = orow;
                    }
                }
            }
        const double vk = __shfl_sync(KCC_FULL, k <= 32 ? v[0] : v[1], (k - 1) % 32);
        if (lane == 0)
            core[p] = m >= k && vk <= max2 ? vk : INFINITY;
#pragma unroll
        for (int u = 0; u < 2; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            if (t < K) {
                od[p * K + t] = v[u];
                oj[p * K + t] = r[u];
            }
        }
    }
}

/* The first round's lists from the sorted sets and the core distances
 * (whole: a launch after kcc_sorted_kernel's). */
static __global__ void kcc_lists_kernel(size_t n, size_t K, const double *od, const uint32_t *oj,
                                        const double *core, double max2, kern_curve_list *l,
                                        double *reach, double *kb)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        knn_point_list((uint32_t)p, od + p * K, oj + p * K, K, core, max2, l + p, reach + p,
                       kb + p);
}

static kcc_arrays kcc_of(const kcc_dev &d)
{
    return kcc_arrays{d.hd, d.hj, d.len, d.lock, d.top, g_kcc_k};
}

/* The launch's pairs in the order of their query rows (*ord; NULL: as
 * they came). A run hands its pairs over in no row order (exact's come as
 * its candidates were compacted), so a warp's 32 pairs fell on as many
 * rows: a lock take and the whole set read and written back for each
 * value. Sorted, a row's values come together and go in under one take.
 * Where the order's arrays do not fit, the pairs go as they came. */
static int kcc_order(kcc_dev &d, const kern_join_args *run, const kern_pair_batch *b,
                     cudaStream_t st, const uint32_t **ord)
{
    *ord = NULL;
    const size_t np = (size_t)b->np;
    if (np < 64 || np > (size_t)INT32_MAX)
        return 0;
    if (np > d.ocap) {
        kern_pool_free(d.okey);
        kern_pool_free(d.oiota);
        kern_pool_free(d.oord);
        kern_pool_free(d.otmp);
        d.okey = d.oiota = d.oord = NULL;
        d.otmp = NULL;
        d.ocap = d.otmp_bytes = 0;
        size_t tmp = 0;
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tmp, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (int)np));
        if (kern_pool_malloc((void **)&d.okey, np * 4) != cudaSuccess ||
            kern_pool_malloc((void **)&d.oiota, np * 4) != cudaSuccess ||
            kern_pool_malloc((void **)&d.oord, np * 4) != cudaSuccess ||
            kern_pool_malloc(&d.otmp, tmp) != cudaSuccess) {
            (void)cudaGetLastError(); /* short of memory: unsorted */
            return 0;
        }
        kern_iota_kernel<<<kcc_blocks(np), KCC_THREADS, 0, st>>>(d.oiota, np);
        KERN_CUDA(cudaGetLastError());
        d.ocap = np;
        d.otmp_bytes = tmp;
    }
    int bits = 1;
    while (bits < 32 && ((size_t)1 << bits) < run->n)
        bits++;
    size_t tmp = d.otmp_bytes;
    KERN_CUDA(cub::DeviceRadixSort::SortPairs(d.otmp, tmp, b->pi, d.okey, d.oiota, d.oord, (int)np,
                                              0, bits, st));
    *ord = d.oord;
    return 0;
}

/* kern_join_args.pair_dev: the order and the consumer, both in the
 * trace's consumer time. */
static int kcc_consume(void *ctx, const kern_join_args *run, void *stream, const kern_pair_batch *b)
{
    (void)ctx;
    kcc_dev *d = g_kcc[run->device];
    cudaStream_t st = (cudaStream_t)stream;
    int orc = 0;
    const int rc = kern_consume_launch(
        &d->rm, run, st, g_kcc_trace, &g_kcc_consume_s, [&](const uint32_t *map) {
            const uint32_t *ord;
            if ((orc = kcc_order(*d, run, b, st, &ord)))
                return;
            kcc_by_slots(g_kcc_k, [&](auto s) {
                kcc_pairs_kernel<decltype(s)::value><<<kcc_blocks(b->np), KCC_THREADS, 0, st>>>(
                    kcc_of(*d), map, *b, ord, run->q0, run->q1);
            });
        });
    return rc ? rc : orc;
}

static void kcc_free(kcc_dev &d)
{
    kern_consume_free(d.device, {d.hd, d.hj, d.len, d.lock, d.top, d.core, d.od, d.oj, d.ol, d.orch,
                                 d.okb, d.rm.map, d.okey, d.oiota, d.oord, d.otmp});
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

/* Every other device's sets into the first's (through the host: devices
 * need not see each other), then the first's k-th least values to
 * io->core2 (and the first round's lists from its sorted sets to
 * io->list, io->reach2, io->kb). */
static int kcc_collect(std::vector<kcc_dev> &dv, size_t n, const kern_core_io *io)
{
    const size_t k = io->K;
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
            kern_pool_free(id);
            kern_pool_free(ij);
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
            kcc_by_slots(g_kcc_k, [&](auto s) {
                kcc_merge_kernel<decltype(s)::value>
                    <<<kcc_blocks(n), KCC_THREADS>>>(kcc_of(d0), n, id, ij, il);
            });
            if ((e = cudaGetLastError()) || (e = cudaDeviceSynchronize()))
                rc = kern_cuda_fail(e, "kcc_merge_kernel", __FILE__, __LINE__);
        }
        cudaSetDevice(d0.device);
        kern_pool_free(id);
        kern_pool_free(ij);
        kern_pool_free(il);
        if (rc)
            return rc;
    }
    KERN_CUDA(cudaSetDevice(d0.device));
    int rc = kcc_malloc(&d0.core, n * 8);
    if (rc)
        return rc;
    if (io->list && ((rc = kcc_malloc(&d0.od, n * k * 8)) || (rc = kcc_malloc(&d0.oj, n * k * 4)) ||
                     (rc = kcc_malloc(&d0.ol, n * sizeof *d0.ol)) ||
                     (rc = kcc_malloc(&d0.orch, n * 8)) || (rc = kcc_malloc(&d0.okb, n * 8))))
        return rc;
    if (io->list)
        kcc_sorted_kernel<<<kcc_blocks(32 * n), KCC_THREADS>>>(kcc_of(d0), n, (uint32_t)io->k,
                                                               d0.core, d0.od, d0.oj, io->max2);
    else
        kcc_out_kernel<<<kcc_blocks(n), KCC_THREADS>>>(kcc_of(d0), n, d0.core);
    KERN_CUDA(cudaGetLastError());
    if (io->list) {
        kcc_lists_kernel<<<kcc_blocks(n), KCC_THREADS>>>(n, k, d0.od, d0.oj, d0.core, io->max2,
                                                         d0.ol, d0.orch, d0.okb);
        KERN_CUDA(cudaGetLastError());
        /* the first round's merging where the lists are; where its state
         * does not fit, the lists back to the host's */
        const int mrc = io->merge ? kern_curve_merge_run(n, d0.ol, d0.okb, io->merge) : KERN_ENOMEM;
        if (mrc && mrc != KERN_ENOMEM)
            return mrc;
        if (mrc) { /* the bounds too: the host's merging reads them */
            KERN_CUDA(cudaMemcpy(io->list, d0.ol, n * sizeof *d0.ol, cudaMemcpyDeviceToHost));
            KERN_CUDA(cudaMemcpy(io->kb, d0.okb, n * 8, cudaMemcpyDeviceToHost));
        }
        KERN_CUDA(cudaMemcpy(io->reach2, d0.orch, n * 8, cudaMemcpyDeviceToHost));
    }
    KERN_CUDA(cudaMemcpy(io->core2, d0.core, n * 8, cudaMemcpyDeviceToHost));
    return 0;
}

static int kcc_run(kern_join_fn fn, const kern_join_args *a, std::vector<kcc_dev> &dv,
                   const kern_core_io *io, kern_join_result *r, double *t_alloc)
{
    int rc;
    const double t0 = kern_now();
    for (auto &d : dv)
        if ((rc = kcc_alloc(d, a->n, io->K)))
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
    /* a cluster cut's groups: the curve's components closed without a
     * join (src/dbscan_curve.c, later_rows) */
    if (io->part && r->clusters && (rc = kern_cluster_parts(a->n, io->part)))
        return rc;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaDeviceSynchronize());
    }
    const double tc = kern_now();
    rc = kcc_collect(dv, a->n, io);
    g_kcc_collect_s = kern_now() - tc;
    return rc;
}

extern "C" int kern_curve_core(kern_join_fn fn, const kern_join_args *a0, const kern_core_io *io,
                               kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    const size_t k = io->K;
    if (!a0->x || a0->n == 0 || a0->d == 0 || a0->c0 || a0->rows || a0->origin_of || a0->tiles ||
        a0->q0 != 0 || a0->q1 != a0->n || a0->n >= KERN_ROW_PAD || io->k == 0 || io->k > k ||
        k >= a0->n || k > 32 * KCC_SLOTS || (!io->list && k != io->k) ||
        (io->list && (!io->reach2 || !io->kb || k > KERN_CORE_MAX_K)))
        return kern_fail(KERN_EINVAL,
                         "dbscan curve: bad core-distance run (n %zu, d %zu, k %zu, K %zu)", a0->n,
                         a0->d, io->k, k);
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
    g_kcc_consume_s = g_kcc_collect_s = 0;
    for (auto &d : dv)
        g_kcc[d.device] = &d;
    const double t0 = kern_now();
    double t_alloc = 0;
    const int rc = kcc_run(fn, &a, dv, io, res, &t_alloc);
    const double tf = kern_now();
    for (auto &d : dv) {
        g_kcc[d.device] = NULL;
        kcc_free(d);
    }
    const double t_free = kern_now() - tf;
    res->mem_peak += (size_t)nd * a.n * (12 * k + 16) + a.n * 8 +
                     (io->list ? a.n * (k * 12 + sizeof(kern_curve_list) + 16) : 0);
    const double spent = kern_now() - t0;
    res->t_d2h += std::max(0.0, spent - res->t_kernel - res->t_sink);
    if (g_kcc_trace)
        fprintf(stderr,
                "dbscan curve core trace (ms): state %.3f, run+collect+free %.3f, kernels %.3f, "
                "consumer %.3f, collect %.3f, free %.3f, pairs %llu\n",
                t_alloc * 1e3, (spent - t_alloc) * 1e3, res->t_kernel * 1e3, g_kcc_consume_s * 1e3,
                g_kcc_collect_s * 1e3, t_free * 1e3, (unsigned long long)res->pairs);
    snprintf(res->variant + strlen(res->variant), sizeof res->variant - strlen(res->variant), "%s",
             ", core distances on the device");
    return rc;
}
