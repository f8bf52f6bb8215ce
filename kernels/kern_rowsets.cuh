/* Each row's K least values offered, kept on the device with no lock:
 * what the curve's consumers share (its core distances,
 * kernels/kern_curve_core.cu: a row's K nearest (d2, j); its Borůvka
 * rounds, kernels/kern_curve.cu: a row's CURVE_LIST lightest edges
 * (w, other row)). A launch's pairs are sorted by their row first
 * (krs_order: a CUB radix sort of the row numbers), so each row's values
 * lie together and one warp takes them whole (krs_row_put): appended
 * where they fit the set's room, else sorted with the set by a bitonic
 * network over the warp, the repeats (equal (v, j), now neighbours)
 * dropped and the K least kept. A set holds the K least distinct (v, j)
 * it was offered by (v, j), whatever order the values came in; a set
 * that took its values by appending is unordered until krs_row_clean.
 *
 * A lock a row does the same with far less parallelism: a max-heap a row,
 * each edge put under the row's lock, keeps 6.8 of a warp's 32 lanes busy
 * and waits on memory 35 of 56 cycles (ncu, a LiDAR scan's 1.3 million
 * pairs, H200); sorted by row, a warp works on one row's values at a time
 * and reads them in order. */
#ifndef TCJ_KERN_ROWSETS_CUH
#define TCJ_KERN_ROWSETS_CUH

#include <string.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cub/cub.cuh>

#include "kern_consume.cuh"

#define KRS_FULL 0xffffffffu
/* A set's slots a lane: K <= 32 KRS_SLOTS (KDIST_MAX_K, 256). The
 * kernels are built for S = 1, 2, 4 and 8 slots a lane and launched with
 * the fewest that hold K (krs_by_slots): a put sorts 64 S entries, so
 * the curve's usual K = 64 takes two, not eight. */
#define KRS_SLOTS 8
#define KRS_PUT_WARPS 4 /* a put kernel's block: its warps' exchange rooms fit */
/* The pairs kernel's blocks an SM at least, up to S = 2 (K <= 64): its
 * chain of loads a value (the order, the pair, the row map) wants warps
 * to hide it (ncu: 28% occupancy at 80 registers); S = 4 and 8 would
 * spill */
#define KRS_PUT_BLOCKS 8

/* The sets of n rows: values and rows n x K (unordered up to len, past
 * it unread), lengths. */
struct krs_sets {
    double *hd;
    uint32_t *hj, *len;
    uint32_t k;
};

/* The fewest slots S a lane that hold K (1, 2, 4 or KRS_SLOTS); a K known
 * at compile time names its kernel with it alone. */
static constexpr int krs_slots_for(uint32_t K)
{
    return K <= 32 ? 1 : K <= 64 ? 2 : K <= 128 ? 4 : KRS_SLOTS;
}
/* f(std::integral_constant<int, S>) with S = krs_slots_for(K), for a K
 * known at run time: the kernels' launches. */
template <typename F> static void krs_by_slots(uint32_t K, F f)
{
    switch (krs_slots_for(K)) {
    case 1:
        f(std::integral_constant<int, 1>());
        break;
    case 2:
        f(std::integral_constant<int, 2>());
        break;
    case 4:
        f(std::integral_constant<int, 4>());
        break;
    default:
        f(std::integral_constant<int, KRS_SLOTS>());
        break;
    }
}

/* A put kernel's blocks for n warps' work. */
static inline unsigned krs_warp_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KRS_PUT_WARPS - 1) / KRS_PUT_WARPS, (size_t)8192));
}

/* (x, y) before (u, v) in (value, row) order. */
__device__ __forceinline__ bool krs_less(double x, uint32_t y, double u, uint32_t v)
{
    return x < u || (x == u && y < v);
}

/* The warp's 32 N entries (entry 32 u + lane in slot u of each lane)
 * sorted ascending by (v, j): a bitonic network, its exchanges across
 * lanes by shuffles, across a lane's slots in registers (every index a
 * constant once unrolled). */
template <int N>
__device__ __forceinline__ void krs_bitonic(double (&v)[N], uint32_t (&r)[N], unsigned lane)
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
                    if (krs_less(v[o], r[o], v[u], r[u]) == asc) {
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
                    const double ov = __shfl_xor_sync(KRS_FULL, v[u], h);
                    const uint32_t orow = __shfl_xor_sync(KRS_FULL, r[u], h);
                    const uint32_t e = 32u * (uint32_t)u + lane;
                    /* the lower entry of an ascending pair keeps the least */
                    const bool least = ((e & h) == 0) == ((e & w) == 0);
                    if (least == krs_less(ov, orow, v[u], r[u])) {
                        v[u] = ov;
                        r[u] = orow;
                    }
                }
            }
        }
    }
}

/* The warp's 32 N entries, sorted: the repeats (equal (v, j), each now
 * after its first) and the unusable (j = KERN_ROW_PAD) dropped, the first
 * K of the rest into the warp's exchange room (xd, xj) in order by their
 * ranks (ballots in entry order); their count returned (all of them, not
 * only the K). */
template <int N>
__device__ __forceinline__ uint32_t krs_keep(const double (&v)[N], const uint32_t (&j)[N],
                                             uint32_t K, double *xd, uint32_t *xj, unsigned lane)
{
    uint32_t kept = 0;
#pragma unroll
    for (int u = 0; u < N; u++) {
        double pv = __shfl_up_sync(KRS_FULL, v[u], 1);
        uint32_t pj = __shfl_up_sync(KRS_FULL, j[u], 1);
        if (u > 0) {
            const double wv = __shfl_sync(KRS_FULL, v[u - 1], 31);
            const uint32_t wj = __shfl_sync(KRS_FULL, j[u - 1], 31);
            if (lane == 0) {
                pv = wv;
                pj = wj;
            }
        }
        const bool first = u == 0 && lane == 0;
        const bool keep = j[u] != KERN_ROW_PAD && (first || pj != j[u] || !(pv == v[u]));
        const unsigned b = __ballot_sync(KRS_FULL, keep);
        const uint32_t at = kept + (uint32_t)__popc(b & ((1u << lane) - 1u));
        if (keep && at < K) {
            xd[at] = v[u];
            xj[at] = j[u];
        }
        kept += (uint32_t)__popc(b);
    }
    return kept;
}

/* Row r's set and the values get(t, &v, &j) gives for t = 0, 1, ...
 * (false: past the row's last; a value may be marked unusable by j =
 * KERN_ROW_PAD), by the whole warp, 32 S values at a time, with no lock:
 * a kernel puts each row's values in one warp, and the kernels that put
 * values into one device's sets run one after another (a run's launches
 * hand their pairs on its stream in turn: kern_join_args.pair_dev).
 * Where the row's values all fit the set's room, they are appended as
 * they come (the set unordered, repeats and all: krs_row_clean sorts
 * and cleans it once at the end); else the set and the values are sorted
 * together by a bitonic network (2 S slots a lane), the repeats dropped
 * and the K least kept (krs_keep, through the warp's exchange room xd,
 * xj: 32 S entries). Once a sort has left the set full, a value not
 * before its heaviest cannot be kept (the set's K are distinct and
 * before it, or it is one of them): such values are dropped as they are
 * read, and 32 S values with none left need no sort (a row of hundreds
 * of values, as in a dense cluster, mostly reads). At K = 64 the MNIST-like curve's
 * 60,000 rows mostly fit: sorting every row's values would leave its
 * consumer instruction-bound at 28% occupancy (ncu, H200). */
template <int S, class Get>
__device__ void krs_row_put(const krs_sets &c, uint32_t r, Get get, double *xd, uint32_t *xj,
                            unsigned lane)
{
    constexpr int N = 2 * S;
    const uint32_t K = c.k;
    double *hd = c.hd + (size_t)r * K;
    uint32_t *hj = c.hj + (size_t)r * K;
    uint32_t len = c.len[r];
    double v[N];
    uint32_t j[N];
    bool loaded = false; /* the set in registers, v[0..S) */
    bool dirty = false;  /* and changed there */
    /* sorted, clean and full: (tv, tj) its heaviest (a set appended to
     * may hold repeats until it is sorted) */
    bool full = false;
    double tv = INFINITY;
    uint32_t tj = KERN_ROW_PAD;
    for (uint32_t t0 = 0;; t0 += 32u * S) {
        bool last_in = false;
#pragma unroll
        for (int u = S; u < N; u++) {
            double d2 = INFINITY;
            uint32_t col = KERN_ROW_PAD;
            const bool in = get(t0 + 32u * (uint32_t)(u - S) + lane, &d2, &col);
            v[u] = in && col != KERN_ROW_PAD ? d2 : INFINITY;
            j[u] = in ? col : KERN_ROW_PAD;
            if (u == N - 1)
                last_in = in;
        }
        const bool ended = !__shfl_sync(KRS_FULL, last_in, 31);
        if (!loaded) {
            uint32_t cnt = 0;
#pragma unroll
            for (int u = S; u < N; u++)
                cnt += (uint32_t)__popc(__ballot_sync(KRS_FULL, j[u] != KERN_ROW_PAD));
            if (ended && len + cnt <= K) { /* they fit: appended */
                uint32_t at = len;
#pragma unroll
                for (int u = S; u < N; u++) {
                    const bool ok = j[u] != KERN_ROW_PAD;
                    const unsigned b = __ballot_sync(KRS_FULL, ok);
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
#pragma unroll
            for (int u = 0; u < S; u++) {
                const uint32_t t = 32u * (uint32_t)u + lane;
                v[u] = t < len ? hd[t] : INFINITY;
                j[u] = t < len ? hj[t] : KERN_ROW_PAD;
            }
            loaded = true;
        }
        bool any = false;
#pragma unroll
        for (int u = S; u < N; u++) {
            if (full && !krs_less(v[u], j[u], tv, tj)) {
                v[u] = INFINITY;
                j[u] = KERN_ROW_PAD;
            }
            any |= j[u] != KERN_ROW_PAD;
        }
        if (__any_sync(KRS_FULL, any)) {
            krs_bitonic<N>(v, j, lane);
            const uint32_t kept = krs_keep<N>(v, j, K, xd, xj, lane);
            len = kept < K ? kept : K;
            dirty = true;
            __syncwarp();
#pragma unroll
            for (int u = 0; u < S; u++) {
                const uint32_t t = 32u * (uint32_t)u + lane;
                v[u] = t < len ? xd[t] : INFINITY;
                j[u] = t < len ? xj[t] : KERN_ROW_PAD;
            }
            if (len == K) { /* sorted: the heaviest last */
                tv = xd[K - 1];
                tj = xj[K - 1];
                full = true;
            }
            __syncwarp();
        }
        if (ended)
            break;
    }
    if (dirty) {
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

/* Row p's set sorted by (v, j), its repeats dropped: its length returned
 * (at most K), its entries in order in the warp's exchange room (xd, xj;
 * read after the call, which ends on a __syncwarp); the set itself left
 * as it was. By the whole warp. */
template <int S>
__device__ __forceinline__ uint32_t krs_row_clean(const krs_sets &c, size_t p, double *xd,
                                                  uint32_t *xj, unsigned lane)
{
    const uint32_t K = c.k, m = c.len[p];
    double v[S];
    uint32_t j[S];
#pragma unroll
    for (int u = 0; u < S; u++) {
        const uint32_t t = 32u * (uint32_t)u + lane;
        v[u] = t < m ? c.hd[p * K + t] : INFINITY;
        j[u] = t < m ? c.hj[p * K + t] : KERN_ROW_PAD;
    }
    krs_bitonic<S>(v, j, lane);
    const uint32_t kept = krs_keep<S>(v, j, K, xd, xj, lane);
    __syncwarp();
    return kept < K ? kept : K;
}

/* How a pairs kernel offers a launch's pairs to the sets (Offer, by
 * value):
 *   uint32_t row(uint32_t r): the set's row of the run's row r after the
 *     layout (KERN_ROW_PAD: none);
 *   void value(uint32_t row, uint32_t o, double d2, bool query, double *v,
 *     uint32_t *j): the value pair (row, o), o != row, gives row's set
 *     (j = KERN_ROW_PAD: none); query: row is the pair's query row.
 * A launch's m entries are in their rows' order (key: the sorted run
 * rows; ord: each entry's pair, from np on the pair's other end's:
 * krs_order): a warp for each row whose entries start among its 32, the
 * row's entries whole (krs_row_put). */
template <int S, class Offer>
static __global__ void __launch_bounds__(KRS_PUT_WARPS * 32, S <= 2 ? KRS_PUT_BLOCKS : 1)
    krs_pairs_kernel(krs_sets c, Offer off, const uint32_t *__restrict__ map, kern_pair_batch b,
                     const uint32_t *__restrict__ key, const uint32_t *__restrict__ ord,
                     unsigned long long m)
{
    __shared__ double xd[KRS_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KRS_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned long long np = b.np;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t0 = (unsigned long long)blockIdx.x * blockDim.x + wid * 32; t0 < m;
         t0 += stride) {
        const unsigned long long t = t0 + lane;
        const uint32_t rk = t < m ? key[t] : KERN_ROW_PAD;
        const bool head = t < m && rk != KERN_ROW_PAD && (t == 0 || key[t - 1] != rk);
        for (unsigned heads = __ballot_sync(KRS_FULL, head); heads; heads &= heads - 1) {
            const int h = __ffs(heads) - 1;
            const uint32_t run_row = __shfl_sync(KRS_FULL, rk, h);
            const unsigned long long s0 = t0 + (unsigned long long)h;
            uint32_t row = map ? map[run_row] : run_row;
            if (row != KERN_ROW_PAD)
                row = off.row(row);
            if (row == KERN_ROW_PAD)
                continue;
            krs_row_put<S>(
                c, row,
                [&](uint32_t x, double *v, uint32_t *col) {
                    const unsigned long long p = s0 + x;
                    if (p >= m || key[p] != run_row)
                        return false;
                    const unsigned long long e = ord[p];
                    const bool query = e < np;
                    const unsigned long long s = query ? e : e - np; /* the pair's slot */
                    uint32_t o = query ? b.pj[s] : b.pi[s];          /* the other end */
                    if (map)
                        o = map[o];
                    if (o != KERN_ROW_PAD)
                        o = off.row(o);
                    *col = KERN_ROW_PAD;
                    if (o == KERN_ROW_PAD || o == row)
                        return true;
                    const double d2 = kern_pair_d2(b.pd, b.d2_bytes, b.d2_scale, s);
                    off.value(row, o, d2, query, v, col);
                    return true;
                },
                xd[wid], xj[wid], lane);
        }
    }
}

/* Another device's sets (values, rows, lengths, in this device's memory)
 * into this one's: a warp a row, its entries put as a launch's values
 * are. */
template <int S>
static __global__ void __launch_bounds__(KRS_PUT_WARPS * 32)
    krs_merge_kernel(krs_sets c, size_t n, const double *hd, const uint32_t *hj,
                     const uint32_t *len)
{
    __shared__ double xd[KRS_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KRS_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t m = len[p];
        if (m == 0)
            continue;
        krs_row_put<S>(
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

/* n rows' sets, every one empty, on the current device. */
static inline int krs_alloc(krs_sets *s, size_t n, uint32_t K, const char *what)
{
    s->k = K;
    int rc;
    if ((rc = kern_consume_malloc(&s->hd, n * K * 8, what)) ||
        (rc = kern_consume_malloc(&s->hj, n * K * 4, what)) ||
        (rc = kern_consume_malloc(&s->len, n * 4, what)))
        return rc;
    /* no entry at or past a set's length is read: only the lengths
     * written (46 MB not written at 6·10^4 rows, K = 64) */
    KERN_CUDA(cudaMemset(s->len, 0, n * 4));
    return 0;
}

/* Device src's sets into device dst's (through the host: devices need
 * not see each other); synchronises dst. */
static inline int krs_gather(const krs_sets &dst, int dst_dev, const krs_sets &src, int src_dev,
                             size_t n)
{
    const size_t k = dst.k;
    std::vector<double> hd(n * k);
    std::vector<uint32_t> hj(n * k), len(n);
    double *id = NULL;
    uint32_t *ij = NULL, *il = NULL;
    int rc = 0;
    KERN_CUDA(cudaSetDevice(dst_dev));
    if ((rc = kern_consume_malloc(&id, n * k * 8, "the sets' merge")) ||
        (rc = kern_consume_malloc(&ij, n * k * 4, "the sets' merge")) ||
        (rc = kern_consume_malloc(&il, n * 4, "the sets' merge"))) {
        kern_consume_free(dst_dev, {id, ij, il});
        return rc;
    }
    cudaError_t e;
    if ((e = cudaSetDevice(src_dev)) ||
        (e = cudaMemcpy(hd.data(), src.hd, n * k * 8, cudaMemcpyDeviceToHost)) ||
        (e = cudaMemcpy(hj.data(), src.hj, n * k * 4, cudaMemcpyDeviceToHost)) ||
        (e = cudaMemcpy(len.data(), src.len, n * 4, cudaMemcpyDeviceToHost)) ||
        (e = cudaSetDevice(dst_dev)) ||
        (e = cudaMemcpy(id, hd.data(), n * k * 8, cudaMemcpyHostToDevice)) ||
        (e = cudaMemcpy(ij, hj.data(), n * k * 4, cudaMemcpyHostToDevice)) ||
        (e = cudaMemcpy(il, len.data(), n * 4, cudaMemcpyHostToDevice)))
        rc = kern_cuda_fail(e, "cudaMemcpy", __FILE__, __LINE__);
    if (!rc) {
        krs_by_slots(dst.k, [&](auto s) {
            krs_merge_kernel<decltype(s)::value>
                <<<krs_warp_blocks(n), KRS_PUT_WARPS * 32>>>(dst, n, id, ij, il);
        });
        if ((e = cudaGetLastError()) || (e = cudaDeviceSynchronize()))
            rc = kern_cuda_fail(e, "krs_merge_kernel", __FILE__, __LINE__);
    }
    kern_consume_free(dst_dev, {id, ij, il});
    cudaSetDevice(dst_dev);
    return rc;
}

/* A launch's pairs in their rows' order, kept between launches: the keys
 * (the rows, and the other ends' where the run is not whole), the sorted
 * keys, 0..cap-1, the order, CUB's temporary storage. */
struct krs_order {
    uint32_t *okin, *okey, *oiota, *oord;
    void *otmp;
    size_t ocap, otmp_bytes;
};

/* The order's device bytes. */
static inline size_t krs_order_bytes(const krs_order &o)
{
    return o.ocap * (o.okin ? 16 : 12) + o.otmp_bytes;
}

static inline void krs_order_free(int device, krs_order &o)
{
    kern_consume_free(device, {o.okin, o.okey, o.oiota, o.oord, o.otmp});
    memset(&o, 0, sizeof o);
}

/* A run over part of the rows (a device's share of a device list): each
 * pair's other end keyed too where it is not a query row of the run (that
 * row gets the pair only here), the rest KERN_ROW_PAD (sorted last,
 * skipped). */
static __global__ void krs_keys_kernel(const uint32_t *pi, const uint32_t *pj, size_t np, size_t q0,
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
 * in whole (krs_pairs_kernel). KERN_ENOMEM where the order's arrays do
 * not fit (the caller's host route then). what names the consumer. */
static int krs_order_run(krs_order &d, const kern_join_args *run, const kern_pair_batch *b,
                         cudaStream_t st, const char *what, const uint32_t **key,
                         const uint32_t **ord, size_t *m)
{
    const size_t np = (size_t)b->np;
    const int whole = run->q0 == 0 && run->q1 == run->n;
    const size_t M = whole ? np : 2 * np;
    const unsigned threads = 256;
    const unsigned blocks = kern_grid_blocks(std::max(M, d.ocap), threads);
    *m = M;
    *key = *ord = NULL;
    if (M == 0)
        return 0;
    if (M > (size_t)INT32_MAX)
        return kern_fail(KERN_EINVAL, "%s: %zu pairs in one launch", what, np);
    if (M > d.ocap || (!whole && !d.okin)) {
        const size_t cap = std::max(M, d.ocap);
        kern_pool_free(d.okin);
        kern_pool_free(d.okey);
        kern_pool_free(d.oiota);
        kern_pool_free(d.oord);
        kern_pool_free(d.otmp);
        memset(&d, 0, sizeof d);
        size_t tmp = 0;
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tmp, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (const uint32_t *)NULL,
                                                  (uint32_t *)NULL, (int)cap));
        int rc;
        if ((!whole && (rc = kern_consume_malloc(&d.okin, cap * 4, what))) ||
            (rc = kern_consume_malloc(&d.okey, cap * 4, what)) ||
            (rc = kern_consume_malloc(&d.oiota, cap * 4, what)) ||
            (rc = kern_consume_malloc(&d.oord, cap * 4, what)) ||
            (rc = kern_consume_malloc(&d.otmp, tmp, what)))
            return rc;
        kern_iota_kernel<<<blocks, threads, 0, st>>>(d.oiota, cap);
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
        krs_keys_kernel<<<blocks, threads, 0, st>>>(b->pi, b->pj, np, run->q0, run->q1, d.okin);
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

/* One launch's pairs into the sets c on stream st: the order, then the
 * pairs kernel with Offer off (krs_pairs_kernel). */
template <class Offer>
static int krs_consume(krs_order &o, const krs_sets &c, Offer off, const uint32_t *map,
                       const kern_join_args *run, const kern_pair_batch *b, cudaStream_t st,
                       const char *what)
{
    const uint32_t *key, *ord;
    size_t m;
    int rc = krs_order_run(o, run, b, st, what, &key, &ord, &m);
    if (rc || m == 0)
        return rc;
    const unsigned blocks = (unsigned)std::max(
        (size_t)1, std::min((m + KRS_PUT_WARPS * 32 - 1) / (KRS_PUT_WARPS * 32), (size_t)8192));
    krs_by_slots(c.k, [&](auto s) {
        krs_pairs_kernel<decltype(s)::value, Offer>
            <<<blocks, KRS_PUT_WARPS * 32, 0, st>>>(c, off, map, *b, key, ord, m);
    });
    return 0;
}

#endif
