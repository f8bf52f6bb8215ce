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
 * round of lists: src/cluster/curve_knn.h), each other row j once (the same pair
 * may come as (i, j) and (j, i), or from two launches of a cluster cut,
 * always with the same d2: one computation, mirrored) and its length. A
 * launch's pairs are sorted by their row first (kcc_order: a CUB radix
 * sort of the row numbers), so each row's values lie together and one
 * warp takes them whole, with no lock (kcc_row_put): appended where they
 * fit the set's room, else sorted
 * with the set by a bitonic network over the warp, the repeats (equal
 * (d2, j), now neighbours) dropped and the K least kept. At the end
 * (kcc_final_kernel) each set is sorted once, cleaned of repeats and
 * padded to K with (+inf, KERN_ROW_PAD). It holds K distinct rows whose
 * d2 are the K least values offered, whatever order the pairs came in:
 * its k-th is the k-th least d2, what a host sink gives from the same
 * pairs (src/cluster/curve_knn.c). With each value put in turn under its row's
 * lock (a few shuffles a value, a scan of the set for its largest once
 * full), the consumer took 0.62 ms of the MNIST-like curve's 7.8 (3.7
 * million pairs, K = 64, H200). Where the caller wants the curve's first
 * round, each point's list, bound and reachability are built here from
 * its set (kernels/knn_lists.h, the host route's code) and only they come
 * back (152 bytes a point, not the 12K of the K nearest: 768 MB at 10^6
 * points, K = 64).
 *
 * Memory beyond the dataset and the run's pair buffer: 12K + 4 bytes a
 * row (set values and rows, length), 12 bytes a pair for the order (16
 * where pairs go to rows outside the run's query rows), and n doubles
 * out (and on the first device 152 bytes a row for the lists). */
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
#define KCC_PUT_WARPS 4 /* a put kernel's block: its warps' exchange rooms fit */
/* The pairs kernel's blocks an SM at least, up to S = 2 (K <= 64): its
 * chain of loads a value (the order, the pair, the row map) wants warps
 * to hide it (ncu: 28% occupancy at 80 registers); S = 4 and 8 would
 * spill */
#define KCC_PUT_BLOCKS 8

/* One device's state, by the dataset's row. */
struct kcc_dev {
    int device;
    double *hd;   /* n x K set values (sorted and padded by kcc_final_kernel) */
    uint32_t *hj; /* n x K set rows */
    uint32_t *len;
    double *core;       /* n: the k-th least, out (the first device) */
    curve_list *ol;     /* n: the first round's lists, out */
    double *orch, *okb; /* n each: reachabilities and bounds, out */
    kern_rowmap rm;     /* a layout's rows (run row -> dataset row) */
    /* a launch's pairs in their rows' order (kcc_order): the keys (the
     * rows, and the other ends' where the run is not whole), the sorted
     * keys, 0..cap-1, the order, CUB's temporary storage */
    uint32_t *okin, *okey, *oiota, *oord;
    void *otmp;
    size_t ocap, otmp_bytes;
};

/* What the consumer reads, by value. */
struct kcc_arrays {
    double *hd;
    uint32_t *hj, *len;
    uint32_t k;
};

static std::mutex g_kcc_mu;
static kcc_dev *g_kcc[KERN_DEV_SLOTS];
static uint32_t g_kcc_k; /* the set's size, K */
static int g_kcc_trace;
static double g_kcc_consume_s, g_kcc_collect_s; /* the trace's */
static size_t g_kcc_launches;                   /* the trace's: consumer launches */

static unsigned kcc_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KCC_THREADS - 1) / KCC_THREADS, (size_t)4096));
}

#define KCC_FULL 0xffffffffu
/* A set's slots a lane: K <= 32 KCC_SLOTS (KDIST_MAX_K, 256). The
 * consumer is built for S = 1, 2, 4 and 8 slots a lane and launched with
 * the fewest that hold K (kcc_by_slots): a put sorts 64 S entries, so the
 * curve's usual K = 64 takes two, not eight. */
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

/* (x, y) before (u, v) in (d2, j) order. */
__device__ __forceinline__ bool kcc_less(double x, uint32_t y, double u, uint32_t v)
{
    return x < u || (x == u && y < v);
}

/* The warp's 32 N entries (entry 32 u + lane in slot u of each lane)
 * sorted ascending by (d2, j): a bitonic network, its exchanges across
 * lanes by shuffles, across a lane's slots in registers (every index a
 * constant once unrolled). */
template <int N>
__device__ __forceinline__ void kcc_bitonic(double (&v)[N], uint32_t (&r)[N], unsigned lane)
{
    constexpr int LOG = N == 1 ? 5 : N == 2 ? 6 : N == 4 ? 7 : N == 8 ? 8 : 9; /* log2(32 N) */
    static_assert(N == 1 || N == 2 || N == 4 || N == 8 || N == 16, "S or 2 S slots");
#pragma unroll
    for (int lw = 1; lw <= LOG; lw++) {
#pragma unroll
        for (int lh = lw - 1; lh >= 0; lh--) {
            const uint32_t w = 1u << lw, h = 1u << lh;
            if (h >= 32) {
                const int hu = (int)(h >> 5);
#pragma unroll
                for (int u = 0; u < N; u++) {
                    if (u & hu)
                        continue;
                    const int o = u | hu;
                    /* entry 32 u + lane below 32 o + lane: the lower keeps
                     * the least where its w-block ascends */
                    const bool asc = ((32u * (uint32_t)u + lane) & w) == 0;
                    if (kcc_less(v[o], r[o], v[u], r[u]) == asc) {
                        const double tv = v[u];
                        const uint32_t tr = r[u];
                        v[u] = v[o];
                        r[u] = r[o];
                        v[o] = tv;
                        r[o] = tr;
                    }
                }
            } else {
#pragma unroll
                for (int u = 0; u < N; u++) {
                    const double ov = __shfl_xor_sync(KCC_FULL, v[u], h);
                    const uint32_t orow = __shfl_xor_sync(KCC_FULL, r[u], h);
                    const uint32_t e = 32u * (uint32_t)u + lane;
                    /* the lower entry of an ascending pair keeps the least */
                    const bool least = ((e & h) == 0) == ((e & w) == 0);
                    if (least == kcc_less(ov, orow, v[u], r[u])) {
                        v[u] = ov;
                        r[u] = orow;
                    }
                }
            }
        }
    }
}

/* The warp's 32 N entries, sorted: the repeats (equal (d2, j), each now
 * after its first) and the unusable (j = KERN_ROW_PAD) dropped, the first
 * K of the rest into the warp's exchange room (xd, xj) in order by their
 * ranks (ballots in entry order); their count returned (all of them, not
 * only the K). */
template <int N>
__device__ __forceinline__ uint32_t kcc_keep(const double (&v)[N], const uint32_t (&j)[N],
                                             uint32_t K, double *xd, uint32_t *xj, unsigned lane)
{
    uint32_t kept = 0;
#pragma unroll
    for (int u = 0; u < N; u++) {
        double pv = __shfl_up_sync(KCC_FULL, v[u], 1);
        uint32_t pj = __shfl_up_sync(KCC_FULL, j[u], 1);
        if (u > 0) {
            const double wv = __shfl_sync(KCC_FULL, v[u - 1], 31);
            const uint32_t wj = __shfl_sync(KCC_FULL, j[u - 1], 31);
            if (lane == 0) {
                pv = wv;
                pj = wj;
            }
        }
        const bool first = u == 0 && lane == 0;
        const bool keep = j[u] != KERN_ROW_PAD && (first || pj != j[u] || !(pv == v[u]));
        const unsigned b = __ballot_sync(KCC_FULL, keep);
        const uint32_t at = kept + (uint32_t)__popc(b & ((1u << lane) - 1u));
        if (keep && at < K) {
            xd[at] = v[u];
            xj[at] = j[u];
        }
        kept += (uint32_t)__popc(b);
    }
    return kept;
}

/* Row r's set and the values get(t, &d2, &j) gives for t = 0, 1, ...
 * (false: past the row's last; a value may be marked unusable by j =
 * KERN_ROW_PAD), by the whole warp, 32 S values at a time, with no lock:
 * a kernel puts each row's values in one warp, and the kernels that put
 * values into one device's sets run one after another (a run's launches
 * hand their pairs on its stream in turn: kern_join_args.pair_dev).
 * Where the row's values all fit the set's room, they are appended as
 * they come (the set unordered, repeats and all: kcc_final_kernel sorts
 * and cleans each set once at the end); else the set and the values are
 * sorted together by a bitonic network (2 S slots a lane), the repeats
 * dropped and the K least kept (kcc_keep, through the warp's exchange
 * room xd, xj: 32 S entries). At K = 64 the MNIST-like curve's 60,000
 * rows mostly fit: sorting every row's values took its consumer 0.43 ms
 * (ncu, H200: instruction-bound at 28% occupancy). */
template <int S, class Get>
__device__ void kcc_row_put(const kcc_arrays &c, uint32_t r, Get get, double *xd, uint32_t *xj,
                            unsigned lane)
{
    constexpr int N = 2 * S;
    const uint32_t K = c.k;
    double *hd = c.hd + (size_t)r * K;
    uint32_t *hj = c.hj + (size_t)r * K;
    uint32_t len = c.len[r];
    double v[N];
    uint32_t j[N];
    bool sorted = false; /* the set in registers, v[0..S) */
    for (uint32_t t0 = 0;; t0 += 32u * S) {
        bool last_in = false;
        uint32_t cnt = 0;
#pragma unroll
        for (int u = S; u < N; u++) {
            double d2 = INFINITY;
            uint32_t col = KERN_ROW_PAD;
            const bool in = get(t0 + 32u * (uint32_t)(u - S) + lane, &d2, &col);
            v[u] = in && col != KERN_ROW_PAD ? d2 : INFINITY;
            j[u] = in ? col : KERN_ROW_PAD;
            cnt += (uint32_t)__popc(__ballot_sync(KCC_FULL, j[u] != KERN_ROW_PAD));
            if (u == N - 1)
                last_in = in;
        }
        const bool ended = !__shfl_sync(KCC_FULL, last_in, 31);
        if (!sorted && ended && len + cnt <= K) { /* they fit: appended */
            uint32_t at = len;
#pragma unroll
            for (int u = S; u < N; u++) {
                const bool ok = j[u] != KERN_ROW_PAD;
                const unsigned b = __ballot_sync(KCC_FULL, ok);
                if (ok) {
                    const uint32_t t = at + (uint32_t)__popc(b & ((1u << lane) - 1u));
                    hd[t] = v[u];
                    hj[t] = j[u];
                }
                at += (uint32_t)__popc(b);
            }
            len = at;
            break;
        }
        if (!sorted) {
#pragma unroll
            for (int u = 0; u < S; u++) {
                const uint32_t t = 32u * (uint32_t)u + lane;
                v[u] = t < len ? hd[t] : INFINITY;
                j[u] = t < len ? hj[t] : KERN_ROW_PAD;
            }
            sorted = true;
        }
        kcc_bitonic<N>(v, j, lane);
        const uint32_t kept = kcc_keep<N>(v, j, K, xd, xj, lane);
        len = kept < K ? kept : K;
        __syncwarp();
#pragma unroll
        for (int u = 0; u < S; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            v[u] = t < len ? xd[t] : INFINITY;
            j[u] = t < len ? xj[t] : KERN_ROW_PAD;
        }
        __syncwarp();
        if (ended)
            break;
    }
    if (sorted) {
#pragma unroll
        for (int u = 0; u < S; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            if (t < K) {
                hd[t] = v[u];
                hj[t] = j[u];
            }
        }
    }
    if (lane == 0)
        c.len[r] = len;
    __syncwarp();
}

/* One launch's pairs, m entries in their rows' order (key: the sorted
 * run rows; ord: each entry's pair, from np on the pair's other end's:
 * kcc_order): a warp for each row whose entries start among its 32, the
 * row's entries whole (kcc_row_put). */
template <int S>
static __global__ void __launch_bounds__(KCC_PUT_WARPS * 32, S <= 2 ? KCC_PUT_BLOCKS : 1)
    kcc_pairs_kernel(kcc_arrays c, const uint32_t *__restrict__ map, kern_pair_batch b,
                     const uint32_t *__restrict__ key, const uint32_t *__restrict__ ord,
                     unsigned long long m)
{
    __shared__ double xd[KCC_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KCC_PUT_WARPS][32 * S];
    const double sc = b.d2_scale ? b.d2_scale : 1.0;
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned long long np = b.np;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t0 = (unsigned long long)blockIdx.x * blockDim.x + wid * 32; t0 < m;
         t0 += stride) {
        const unsigned long long t = t0 + lane;
        const uint32_t rk = t < m ? key[t] : KERN_ROW_PAD;
        const bool head = t < m && rk != KERN_ROW_PAD && (t == 0 || key[t - 1] != rk);
        for (unsigned heads = __ballot_sync(KCC_FULL, head); heads; heads &= heads - 1) {
            const int h = __ffs(heads) - 1;
            const uint32_t run_row = __shfl_sync(KCC_FULL, rk, h);
            const unsigned long long s0 = t0 + (unsigned long long)h;
            const uint32_t row = map ? map[run_row] : run_row;
            if (row == KERN_ROW_PAD)
                continue;
            kcc_row_put<S>(
                c, row,
                [&](uint32_t x, double *d2, uint32_t *col) {
                    const unsigned long long p = s0 + x;
                    if (p >= m || key[p] != run_row)
                        return false;
                    const unsigned long long e = ord[p];
                    const unsigned long long s = e < np ? e : e - np; /* the pair's slot */
                    uint32_t o = e < np ? b.pj[s] : b.pi[s];          /* the other end */
                    if (map)
                        o = map[o];
                    *col = o == row ? KERN_ROW_PAD : o;
                    *d2 = b.d2_bytes == 8 ? ((const double *)b.pd)[s]
                                          : (double)((const float *)b.pd)[s] * sc;
                    return true;
                },
                xd[wid], xj[wid], lane);
        }
    }
}

/* Another device's sets (values, rows, lengths) into this one's: a warp
 * a row, its entries put as a launch's values are. */
template <int S>
static __global__ void __launch_bounds__(KCC_PUT_WARPS * 32)
    kcc_merge_kernel(kcc_arrays c, size_t n, const double *hd, const uint32_t *hj,
                     const uint32_t *len)
{
    __shared__ double xd[KCC_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KCC_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t m = len[p];
        if (m == 0)
            continue;
        kcc_row_put<S>(
            c, (uint32_t)p,
            [&](uint32_t x, double *d2, uint32_t *col) {
                if (x >= m)
                    return false;
                *d2 = hd[p * c.k + x];
                *col = hj[p * c.k + x];
                return true;
            },
            xd[wid], xj[wid], lane);
    }
}

/* Each row's set sorted by (d2, j), its repeats dropped and padded to K
 * with (+inf, KERN_ROW_PAD) (kcc_row_put leaves sets that fit unordered),
 * and its k-th least to core, +inf where the row has fewer than k or it
 * lies above max2: a warp a row. */
template <int S>
static __global__ void __launch_bounds__(KCC_PUT_WARPS * 32)
    kcc_final_kernel(kcc_arrays c, size_t n, uint32_t k, double *core, double max2)
{
    __shared__ double xd[KCC_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KCC_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint32_t K = c.k;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t m = c.len[p];
        double v[S];
        uint32_t j[S];
#pragma unroll
        for (int u = 0; u < S; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            v[u] = t < m ? c.hd[p * K + t] : INFINITY;
            j[u] = t < m ? c.hj[p * K + t] : KERN_ROW_PAD;
        }
        kcc_bitonic<S>(v, j, lane);
        const uint32_t kept = kcc_keep<S>(v, j, K, xd[wid], xj[wid], lane);
        const uint32_t len = kept < K ? kept : K;
        __syncwarp();
#pragma unroll
        for (int u = 0; u < S; u++) {
            const uint32_t t = 32u * (uint32_t)u + lane;
            if (t < K) {
                c.hd[p * K + t] = t < len ? xd[wid][t] : INFINITY;
                c.hj[p * K + t] = t < len ? xj[wid][t] : KERN_ROW_PAD;
            }
        }
        const double x = len >= k ? xd[wid][k - 1] : INFINITY;
        if (lane == 0) {
            c.len[p] = len;
            core[p] = len >= k && x <= max2 ? x : INFINITY;
        }
        __syncwarp();
    }
}

/* The first round's lists from the sorted sets and the core distances
 * (whole: a launch after kcc_final_kernel's). */
static __global__ void kcc_lists_kernel(size_t n, size_t K, const double *od, const uint32_t *oj,
                                        const double *core, double max2, curve_list *l,
                                        double *reach, double *kb)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        knn_point_list((uint32_t)p, od + p * K, oj + p * K, K, core, max2, l + p, reach + p,
                       kb + p);
}

static kcc_arrays kcc_of(const kcc_dev &d)
{
    return kcc_arrays{d.hd, d.hj, d.len, g_kcc_k};
}

/* A run over part of the rows (a device's share of a device list): each
 * pair's other end keyed too where it is not a query row of the run (that
 * row gets the pair only here), the rest KERN_ROW_PAD (sorted last,
 * skipped). */
static __global__ void kcc_keys_kernel(const uint32_t *pi, const uint32_t *pj, size_t np, size_t q0,
                                       size_t q1, uint32_t *key)
{
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < np;
         t += (size_t)gridDim.x * blockDim.x) {
        key[t] = pi[t];
        key[np + t] = pj[t] < q0 || pj[t] >= q1 ? pj[t] : KERN_ROW_PAD;
    }
}

/* The launch's pairs in their rows' order: *m entries, *key the sorted
 * run rows, *ord each entry's pair (from np on: the pair's other end's).
 * A run hands its pairs over in no row order (exact's come as its
 * candidates were compacted); sorted, a row's values lie together and go
 * in whole (kcc_pairs_kernel). KERN_ENOMEM where the order's arrays do
 * not fit (the caller's host route then). */
static int kcc_order(kcc_dev &d, const kern_join_args *run, const kern_pair_batch *b,
                     cudaStream_t st, const uint32_t **key, const uint32_t **ord, size_t *m)
{
    const size_t np = (size_t)b->np;
    const int whole = run->q0 == 0 && run->q1 == run->n;
    const size_t M = whole ? np : 2 * np;
    *m = M;
    *key = *ord = NULL;
    if (M == 0)
        return 0;
    if (M > (size_t)INT32_MAX)
        return kern_fail(KERN_EINVAL, "dbscan curve: %zu pairs in one launch", np);
    if (M > d.ocap || (!whole && !d.okin)) {
        const size_t cap = std::max(M, d.ocap);
        kern_pool_free(d.okin);
        kern_pool_free(d.okey);
        kern_pool_free(d.oiota);
        kern_pool_free(d.oord);
        kern_pool_free(d.otmp);
        d.okin = d.okey = d.oiota = d.oord = NULL;
        d.otmp = NULL;
        d.ocap = d.otmp_bytes = 0;
        size_t tmp = 0;
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tmp, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (int)cap));
        int rc;
        if ((!whole && (rc = kern_consume_malloc(&d.okin, cap * 4, "dbscan curve's order"))) ||
            (rc = kern_consume_malloc(&d.okey, cap * 4, "dbscan curve's order")) ||
            (rc = kern_consume_malloc(&d.oiota, cap * 4, "dbscan curve's order")) ||
            (rc = kern_consume_malloc(&d.oord, cap * 4, "dbscan curve's order")) ||
            (rc = kern_consume_malloc(&d.otmp, tmp, "dbscan curve's order")))
            return rc;
        kern_iota_kernel<<<kcc_blocks(cap), KCC_THREADS, 0, st>>>(d.oiota, cap);
        KERN_CUDA(cudaGetLastError());
        d.ocap = cap;
        d.otmp_bytes = tmp;
    }
    int bits = 32; /* KERN_ROW_PAD's, where the other ends are keyed */
    const uint32_t *in = b->pi;
    if (whole) {
        bits = 1;
        while (bits < 32 && ((size_t)1 << bits) < run->n)
            bits++;
    } else {
        kcc_keys_kernel<<<kcc_blocks(np), KCC_THREADS, 0, st>>>(b->pi, b->pj, np, run->q0, run->q1,
                                                                d.okin);
        KERN_CUDA(cudaGetLastError());
        in = d.okin;
    }
    size_t tmp = d.otmp_bytes;
    KERN_CUDA(cub::DeviceRadixSort::SortPairs(d.otmp, tmp, in, d.okey, d.oiota, d.oord, (int)M, 0,
                                              bits, st));
    *key = d.okey;
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
    g_kcc_launches++;
    const int rc = kern_consume_launch(
        &d->rm, run, st, g_kcc_trace, &g_kcc_consume_s, [&](const uint32_t *map) {
            const uint32_t *key, *ord;
            size_t m;
            if ((orc = kcc_order(*d, run, b, st, &key, &ord, &m)) || m == 0)
                return;
            const unsigned blocks = (unsigned)std::max(
                (size_t)1,
                std::min((m + KCC_PUT_WARPS * 32 - 1) / (KCC_PUT_WARPS * 32), (size_t)8192));
            kcc_by_slots(g_kcc_k, [&](auto s) {
                kcc_pairs_kernel<decltype(s)::value>
                    <<<blocks, KCC_PUT_WARPS * 32, 0, st>>>(kcc_of(*d), map, *b, key, ord, m);
            });
        });
    return rc ? rc : orc;
}

static void kcc_free(kcc_dev &d)
{
    kern_consume_free(d.device, {d.hd, d.hj, d.len, d.core, d.ol, d.orch, d.okb, d.rm.map, d.okin,
                                 d.okey, d.oiota, d.oord, d.otmp});
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
        (rc = kcc_malloc(&d.len, n * 4)))
        return rc;
    /* every set empty: no entry at or past a set's length is read before
     * kcc_final_kernel pads the sets (46 MB not written at 6·10^4 rows,
     * K = 64) */
    KERN_CUDA(cudaMemset(d.len, 0, n * 4));
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* Every other device's sets into the first's (through the host: devices
 * need not see each other), then the first's k-th least values to
 * io->core2 (and the first round's lists from its sorted sets to
 * io->list, io->reach2, io->kb). */
static int kcc_collect(std::vector<kcc_dev> &dv, size_t n, const curve_core_io *io,
                       const uint32_t *parts)
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
            const unsigned blocks = (unsigned)std::max(
                (size_t)1, std::min((n + KCC_PUT_WARPS - 1) / KCC_PUT_WARPS, (size_t)8192));
            kcc_by_slots(g_kcc_k, [&](auto s) {
                kcc_merge_kernel<decltype(s)::value>
                    <<<blocks, KCC_PUT_WARPS * 32>>>(kcc_of(d0), n, id, ij, il);
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
    if (io->list && ((rc = kcc_malloc(&d0.ol, n * sizeof *d0.ol)) ||
                     (rc = kcc_malloc(&d0.orch, n * 8)) || (rc = kcc_malloc(&d0.okb, n * 8))))
        return rc;
    {
        const unsigned blocks = (unsigned)std::max(
            (size_t)1, std::min((n + KCC_PUT_WARPS - 1) / KCC_PUT_WARPS, (size_t)8192));
        kcc_by_slots(g_kcc_k, [&](auto s) {
            kcc_final_kernel<decltype(s)::value>
                <<<blocks, KCC_PUT_WARPS * 32>>>(kcc_of(d0), n, (uint32_t)io->k, d0.core, io->max2);
        });
    }
    KERN_CUDA(cudaGetLastError());
    if (kern_trace_on()) { /* the trace's: the step's kernels in its time */
        KERN_CUDA(cudaDeviceSynchronize());
        kern_trace_mark("core collect: state, core distances");
    }
    if (io->list) { /* the sets are sorted and padded: the K nearest as they are */
        kcc_lists_kernel<<<kcc_blocks(n), KCC_THREADS>>>(n, k, d0.hd, d0.hj, d0.core, io->max2,
                                                         d0.ol, d0.orch, d0.okb);
        KERN_CUDA(cudaGetLastError());
        if (kern_trace_on()) {
            KERN_CUDA(cudaDeviceSynchronize());
            kern_trace_mark("core collect: lists");
        }
        /* the first round's merging where the lists are (and the curve's
         * end there where no later join is left); where its state does
         * not fit, the lists back to the host's */
        if (io->merge) {
            io->merge->core_dev = d0.core;
            io->merge->reach_dev = d0.orch;
            io->merge->part = parts;
        }
        const int mrc = io->merge ? kern_curve_merge_run(n, d0.ol, d0.okb, io->merge) : KERN_ENOMEM;
        if (io->merge) { /* the caller's merging, kept for the later rounds: no device arrays */
            io->merge->core_dev = io->merge->reach_dev = NULL;
            io->merge->part = NULL;
        }
        kern_trace_mark("core collect: merging");
        if (mrc && mrc != KERN_ENOMEM)
            return mrc;
        if (mrc) { /* the bounds too: the host's merging reads them */
            KERN_CUDA(cudaMemcpy(io->list, d0.ol, n * sizeof *d0.ol, cudaMemcpyDeviceToHost));
            KERN_CUDA(cudaMemcpy(io->kb, d0.okb, n * 8, cudaMemcpyDeviceToHost));
        }
        if (!mrc && io->merge->finished)
            return 0; /* the sorted arrays went to merge->take */
        KERN_CUDA(cudaMemcpy(io->reach2, d0.orch, n * 8, cudaMemcpyDeviceToHost));
    }
    KERN_CUDA(cudaMemcpy(io->core2, d0.core, n * 8, cudaMemcpyDeviceToHost));
    return 0;
}

static int kcc_run(kern_join_fn fn, const kern_join_args *a, std::vector<kcc_dev> &dv,
                   const curve_core_io *io, kern_join_result *r, double *t_alloc)
{
    int rc;
    const double t0 = kern_now();
    for (auto &d : dv)
        if ((rc = kcc_alloc(d, a->n, io->K)))
            return rc;
    *t_alloc = kern_now() - t0;
    kern_trace_mark("core: state");
    kern_join_args b = *a;
    b.mode = KJOIN_PAIRS;
    b.pair_fn = NULL;
    b.pair_dev = kcc_consume;
    b.pair_dev_ctx = NULL;
    b.pair_dev_ids = 0;
    b.counts = NULL;
    if ((rc = fn(&b, r)))
        return rc;
    kern_trace_mark("core: run");
    /* a cluster cut's groups: the curve's components closed without a
     * join (src/cluster/curve_later.c, curve_later_rows) */
    if (io->part && r->clusters && (rc = kern_cluster_parts(a->n, io->part)))
        return rc;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaDeviceSynchronize());
    }
    kern_trace_mark("core: parts, sync");
    const double tc = kern_now();
    rc = kcc_collect(dv, a->n, io, io->part && r->clusters ? io->part : NULL);
    kern_trace_mark("core: collect");
    g_kcc_collect_s = kern_now() - tc;
    return rc;
}

extern "C" int kern_curve_core(kern_join_fn fn, const kern_join_args *a0, const curve_core_io *io,
                               kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    const size_t k = io->K;
    if (!a0->x || a0->n == 0 || a0->d == 0 || a0->c0 || a0->rows || a0->origin_of || a0->tiles ||
        a0->q0 != 0 || a0->q1 != a0->n || a0->n >= KERN_ROW_PAD || io->k == 0 || io->k > k ||
        k >= a0->n || k > 32 * KCC_SLOTS || (!io->list && k != io->k) ||
        (io->list && (!io->reach2 || !io->kb || k > CURVE_CORE_MAX_K)))
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
    g_kcc_trace = kern_trace_on();
    g_kcc_consume_s = g_kcc_collect_s = 0;
    g_kcc_launches = 0;
    for (auto &d : dv)
        g_kcc[d.device] = &d;
    const double t0 = kern_now();
    double t_alloc = 0;
    const int rc = kcc_run(fn, &a, dv, io, res, &t_alloc);
    const double tf = kern_now();
    size_t order = 0; /* the order's arrays, the largest device's */
    for (auto &d : dv) {
        order = std::max(order, d.ocap * (d.okin ? 16 : 12) + d.otmp_bytes);
        g_kcc[d.device] = NULL;
        kcc_free(d);
    }
    const double t_free = kern_now() - tf;
    kern_trace_mark("core: free");
    res->mem_peak += (size_t)nd * a.n * (12 * k + 4) + order + a.n * 8 +
                     (io->list ? a.n * (sizeof(curve_list) + 16) : 0);
    const double spent = kern_now() - t0;
    res->t_d2h += std::max(0.0, spent - res->t_kernel - res->t_sink);
    if (g_kcc_trace)
        fprintf(stderr,
                "dbscan curve core trace (ms): state %.3f, run+collect+free %.3f, kernels %.3f, "
                "consumer %.3f (%zu launches), collect %.3f, free %.3f, pairs %llu\n",
                t_alloc * 1e3, (spent - t_alloc) * 1e3, res->t_kernel * 1e3, g_kcc_consume_s * 1e3,
                g_kcc_launches, g_kcc_collect_s * 1e3, t_free * 1e3,
                (unsigned long long)res->pairs);
    snprintf(res->variant + strlen(res->variant), sizeof res->variant - strlen(res->variant), "%s",
             ", core distances on the device");
    return rc;
}
