/* k-distance on the tensor cores: for every query row, the K-th smallest
 * squared distance to another row in FASTED's arithmetic (the d2 its join
 * compares with eps^2, in the args' format), from three passes of the
 * FASTED kernels (fasted_run with a kernel mode of its own, the epilogue's
 * FASTED_KD_* branches):
 *
 *   A (bound)  rows x a strided sample of column tiles: each row's least
 *              d2 in every column chunk (64 or 256 columns). The K-th
 *              smallest chunk minimum is d2 to K different rows, so it
 *              bounds the row's K-th d2 from above: u2.
 *   B (hist)   every tile (symmetric where allowed): each pair with
 *              d2 <= u2 of its row is counted in the row's histogram of
 *              FASTED_KD_BINS bins linear in d2 up to u2, and its d2 kept
 *              in the row's slots while they last. A row that kept all its
 *              values (about K * KD_SAMPLE; 4x that many slots) takes the
 *              K-th smallest of them: done.
 *   C (band)   only for rows with more values than slots: every tile
 *              again; each such row keeps the values that fall in the bin
 *              where its histogram reaches K, and a warp per row picks the
 *              right one of them.
 *
 * Sampling 1/16 of the columns puts a few hundred candidates under u2, so
 * B's atomics and stores touch a tiny fraction of the n^2/2 products; the
 * epilogue tests each product against the two bounds only and runs the
 * exact checks for the rare n8 blocks that pass. A costs 1/8 of a
 * symmetric pass. Memory: the bound, histogram and slots of each query
 * row (at most KD_DIRECT_BYTES of slots), the chunk minima of a block of
 * rows (at most KD_MIN_BYTES) and the values of pass C's bins (at most
 * KD_VALS_MAX a pass; rows beyond it wait for another pass C), each at
 * most an eighth of a cap (set gpu-mem): never the
 * pair set. A row whose histogram holds fewer than K values (A and B
 * disagreeing, which their identical arithmetic rules out) gets a 16x
 * larger bound and goes round again; the last round's bound is infinite,
 * which cannot fail.
 *
 * A dataset larger than the device (kern_stream_kdist) comes here cut:
 * the query rows are a chunk, run as a dataset of its own in every pass,
 * and passes B and C also visit each piece of the other rows as a cross
 * run (queries the chunk, candidates the piece, symmetric off), the
 * chunk's per-row state staying on the device between them. Pass A's
 * bound from the chunk alone holds: any K of a row's values bound its K-th
 * smallest. Each d2 is the whole run's (a pair's products and sums do not
 * depend on the tile or run that holds it), so the answers are too.
 *
 * exact's k-distance (kern_join_args.kd_exact) runs the same passes with
 * pass B keeping the other row of each value: a row that kept all its
 * values under a bound that reaches as far as FP64's K nearest can lie
 * from its K-th estimate (exact_bound_reach) is decided in FP64 from them
 * (fasted_kdist_exact.cu); a row whose bound falls short goes round again
 * with that reach as its bound; a row that needs pass C, and a cut's
 * rows, keep the estimate for the caller's joins. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include "exact_kern.h"
#include "fasted_int.cuh"
#include "fasted_kdist_exact.cuh"
#include "fasted_run.cuh"
#include "fasted_wgmma.cuh"
#include "kern_kd_prune.h"
#include "kern_pool.cuh"
#include "kern_util.cuh"
#include "kernels.h"

#define KD_MIN_BYTES ((size_t)256 << 20)  /* chunk minima of one block of rows */
#define KD_VALS_MAX ((size_t)64 << 20)    /* bin values held on the device at once */
#define KD_DIRECT_BYTES ((size_t)2 << 30) /* pass B's slots for the values under the bounds */
#define KD_SAMPLE 16                      /* pass A reads 1/KD_SAMPLE of the column tiles */
#define KD_ROUNDS 4                       /* rounds of B and C before the bound is infinite */

/* TCJOIN_KDIST_PRUNE=0: exact's passes in the dataset's order, every
 * item (tests and A/B runs; kern_kd_prune.h). */
static bool kd_prune_wanted(void)
{
    const char *e = getenv("TCJOIN_KDIST_PRUNE");
    return !(e && e[0] == '0');
}

/* A row's reach in the data's units (kern_kd_prune.h): the real distance
 * within which every estimate under its bound u2 lies, over the passes'
 * scale. */
struct kd_reach_ctx {
    const exact_bound *b;
    double nm, sc;
};
static double kd_reach(const void *vc, double nx, double u2)
{
    const kd_reach_ctx *c = (const kd_reach_ctx *)vc;
    return exact_bound_within(c->b, nx, c->nm, u2) / c->sc;
}

/* The k-th smallest (k >= 1, k <= m) of v[0..m), by a warp: bisection over
 * the bits of non-negative floats, whose order is the integers'. */
__device__ float kd_kth_warp(const float *v, size_t m, unsigned k)
{
    const unsigned lane = threadIdx.x & 31;
    unsigned lo = 0, hi = 0x7f800000u; /* +inf: every value is at most it */
    while (lo < hi) {
        const unsigned mid = lo + (hi - lo) / 2;
        const float x = __uint_as_float(mid);
        unsigned c = 0;
        for (size_t t = lane; t < m; t += 32)
            c += v[t] <= x;
        c = __reduce_add_sync(0xffffffffu, c);
        if (c >= k)
            hi = mid;
        else
            lo = mid + 1;
    }
    return __uint_as_float(lo);
}

/* kd_kth_warp's bisection for the k-th and the k2-th smallest of a row's
 * m <= 32 V values held in registers (V a lane, +inf past m: no probe
 * below +inf counts it), both in one sweep: the same values. Read from
 * memory at each of the 31 steps, twice, the loads bound the kernel; in
 * registers a step is a compare a value. */
template <int V>
__device__ void kd_kth2_regs(const float *row, unsigned m, unsigned k, unsigned k2, bool two,
                             float &x, float &y)
{
    const unsigned lane = threadIdx.x & 31;
    float v[V];
#pragma unroll
    for (int u = 0; u < V; u++) {
        const unsigned t = 32u * (unsigned)u + lane;
        v[u] = t < m ? row[t] : INFINITY;
    }
    unsigned lo = 0, hi = 0x7f800000u, lo2 = 0, hi2 = two ? 0x7f800000u : 0u;
    while (lo < hi || lo2 < hi2) {
        const unsigned mid = lo + (hi - lo) / 2, mid2 = lo2 + (hi2 - lo2) / 2;
        const float a = __uint_as_float(mid), b = __uint_as_float(mid2);
        unsigned c = 0, c2 = 0;
#pragma unroll
        for (int u = 0; u < V; u++) {
            c += v[u] <= a;
            c2 += v[u] <= b;
        }
        c = __reduce_add_sync(0xffffffffu, c);
        c2 = __reduce_add_sync(0xffffffffu, c2);
        if (lo < hi) {
            if (c >= k)
                hi = mid;
            else
                lo = mid + 1;
        }
        if (lo2 < hi2) {
            if (c2 >= k2)
                hi2 = mid2;
            else
                lo2 = mid2 + 1;
        }
    }
    x = __uint_as_float(lo);
    y = __uint_as_float(lo2);
}

/* Pass A's bound of each row of a block: the k-th smallest chunk minimum;
 * with u2w, the k2-th too (how far twice the sample's values reach). V:
 * the chunks a lane holds (nchunk <= 32 V), 0: read from memory. */
template <int V>
__global__ void kd_bound_kernel(const float *mins, unsigned rows, unsigned nchunk, int k, float *u2,
                                int k2, float *u2w)
{
    const unsigned w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (w >= rows)
        return;
    const float *row = mins + (size_t)w * nchunk;
    float x, y = 0.0f;
    if constexpr (V > 0) {
        kd_kth2_regs<V>(row, nchunk, (unsigned)k, (unsigned)k2, u2w != NULL, x, y);
    } else {
        x = kd_kth_warp(row, nchunk, (unsigned)k);
        if (u2w)
            y = kd_kth_warp(row, nchunk, (unsigned)k2);
    }
    if ((threadIdx.x & 31) == 0) {
        u2[w] = x;
        if (u2w)
            u2w[w] = y;
    }
}

/* regs false: the memory path at any nchunk (the tests' yardstick). */
static void kd_bound_launch(const float *mins, unsigned rows, unsigned nchunk, int k, float *u2,
                            int k2, float *u2w, bool regs = true)
{
    const unsigned g = (rows + 7) / 8;
    if (!regs)
        kd_bound_kernel<0><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
    else if (nchunk <= 32)
        kd_bound_kernel<1><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
    else if (nchunk <= 256)
        kd_bound_kernel<8><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
    else if (nchunk <= 512)
        kd_bound_kernel<16><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
    else if (nchunk <= 1024)
        kd_bound_kernel<32><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
    else
        kd_bound_kernel<0><<<g, 256>>>(mins, rows, nchunk, k, u2, k2, u2w);
}

extern "C" int kern_kd_bounds(const float *mins, size_t rows, unsigned nchunk, int k, int k2,
                              float *u2, float *u2w, int regs)
{
    if (rows == 0)
        return 0;
    float *dm = NULL, *du = NULL, *dw = NULL;
    cudaError_t e = kern_pool_malloc((void **)&dm, rows * nchunk * 4);
    if (e == cudaSuccess)
        e = kern_pool_malloc((void **)&du, rows * 4);
    if (e == cudaSuccess)
        e = kern_pool_malloc((void **)&dw, rows * 4);
    if (e == cudaSuccess)
        e = cudaMemcpy(dm, mins, rows * nchunk * 4, cudaMemcpyHostToDevice);
    if (e == cudaSuccess) {
        kd_bound_launch(dm, (unsigned)rows, nchunk, k, du, k2, u2w ? dw : NULL, regs != 0);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess)
        e = cudaMemcpy(u2, du, rows * 4, cudaMemcpyDeviceToHost);
    if (e == cudaSuccess && u2w)
        e = cudaMemcpy(u2w, dw, rows * 4, cudaMemcpyDeviceToHost);
    const int rc = e == cudaSuccess ? 0 : kern_cuda_fail(e, "kern_kd_bounds", __FILE__, __LINE__);
    kern_pool_free(dm);
    kern_pool_free(du);
    kern_pool_free(dw);
    return rc;
}

/* kd_exact_bound on the device: the reach of a K-th estimate at most u,
 * rounded up to FP32 (inf stays inf), the host's value exactly. */
__device__ float kd_reach_f(const exact_bound &b, double nx, double nm, float u)
{
    if (!(u < INFINITY))
        return u;
    const double r = exact_bound_reach(&b, nx, nm, (double)u);
    float f = __double2float_rn(r);
    if ((double)f < r)
        f = nextafterf(f, INFINITY);
    return f;
}

/* exact's first bounds, a thread a query row (the host loop's xk branch
 * in kd_run): a bound of 0 the reach from 0; a finite one two ulps wider,
 * then the reach of it where that is at most u2w, the sample's 2K-th
 * chunk minimum, else u2w itself: the row's K-th estimate lies below the
 * sample's K-th chunk minimum, often well below, so its reach often lies
 * within u2w when the sample bound's does not, and the row is decided in
 * round 0 instead of going round again. */
__global__ void kd_widen_kernel(float *u2, const float *u2w, const double *nx,
                                const unsigned long long *nmax, exact_bound b, size_t q0, size_t nq)
{
    const size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nq)
        return;
    const size_t g = q0 + r;
    const double nm = __longlong_as_double((long long)*nmax);
    float u = u2[g];
    if (u == 0.0f) {
        u = kd_reach_f(b, nx[g], nm, 0.0f);
    } else if (isfinite(u)) {
        u = nextafterf(nextafterf(u, INFINITY), INFINITY);
        const float w = kd_reach_f(b, nx[g], nm, u);
        if (w <= u2w[g])
            u = w;
        else if (isfinite(u2w[g]) && u2w[g] > u)
            u = u2w[g];
    }
    u2[g] = u;
}

/* Each row's bin scale from its bound: FASTED_KD_BINS bins over [0, u2)
 * (none where the row takes no value). */
__global__ void kd_scale_kernel(const float *u2, float *sc, size_t na)
{
    for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < na;
         g += (size_t)gridDim.x * blockDim.x)
        sc[g] = u2[g] > 0 ? (float)FASTED_KD_BINS / u2[g] : 0.0f;
}

/* Thread per query row after pass B: the bin where the cumulative count
 * reaches k, how many of its values the row needs, and how many it holds;
 * bin -1 and need 0 for a row that is done, need -1 when the histogram
 * holds fewer than k values. */
__global__ void kd_bins_kernel(const unsigned *hist, const float *u2, unsigned q0, unsigned nq,
                               int k, int *bin, int *need, unsigned *cnt)
{
    const unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nq)
        return;
    int b = -1, nd = 0;
    unsigned inbin = 0;
    if (u2[q0 + r] >= 0.0f) {
        unsigned cum = 0;
        nd = -1;
        for (int t = 0; t < FASTED_KD_BINS; t++) {
            const unsigned c = hist[(size_t)r * FASTED_KD_BINS + t];
            if (cum + c >= (unsigned)k) {
                b = t;
                nd = k - (int)cum;
                inbin = c;
                break;
            }
            cum += c;
        }
    }
    bin[r] = b;
    need[r] = nd;
    cnt[r] = inbin;
}

/* Warp per query row after pass B: a pending row that kept all its values
 * under the bound (at least k, at most cap) takes the k-th smallest of them
 * (status 1). A row with more values than slots gets the k-th smallest of
 * the ones it kept, k values to distinct rows and so a smaller bound
 * (status 2). Status 0: fewer than k values, or not pending. */
__global__ void kd_direct_kernel(const float *dvals, const unsigned *dfill, unsigned cap,
                                 const float *u2, unsigned q0, unsigned nq, int k, bool shrink,
                                 float *out, int *status)
{
    const unsigned r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (r >= nq)
        return;
    const unsigned m = dfill[r];
    const int st = u2[q0 + r] < 0.0f || m < (unsigned)k ? 0
                   : m <= cap                           ? 1
                   : cap >= (unsigned)k                 ? 2
                                                        : 0;
    /* status 2's value (the smaller bound its slots give) is used in the
     * first round alone; later such a row goes to pass C */
    const float x = st == 1 || (st == 2 && shrink)
                        ? kd_kth_warp(dvals + (size_t)r * cap, min(m, cap), (unsigned)k)
                        : 0.0f;
    if ((threadIdx.x & 31) == 0) {
        status[r] = st;
        out[r] = x;
    }
}

/* Warp per row of pass C's group: the need-th smallest of the row's bin
 * values; NaN when the row kept another number of values than pass B
 * counted (the host reports it). */
__global__ void kd_pick_kernel(const float *vals, const unsigned long long *off,
                               const unsigned *fill, const unsigned *cnt, const int *need,
                               const int *bin, unsigned nq, float *out)
{
    const unsigned r = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (r >= nq || bin[r] < 0 || need[r] <= 0)
        return;
    const float x = fill[r] == cnt[r] ? kd_kth_warp(vals + off[r], cnt[r], (unsigned)need[r])
                                      : __int_as_float(0x7fc00000);
    if ((threadIdx.x & 31) == 0)
        out[r] = x;
}

namespace
{

/* Device arrays of one computation. u2, sc, gbin: by global row (padded
 * like the dataset: tiles read past n); the rest by query row. */
struct kd_dev {
    float *u2, *sc, *mins, *vals, *outv, *dvals;
    int *gbin, *bin, *need, *status;
    unsigned *hist, *cnt, *fill, *dfill, *dcols;
    unsigned long long *off;
    unsigned *rowmap; /* row tiles holding pending rows, after round 0 */
    size_t na, nq, min_rows, vals_cap;
    unsigned cap; /* slots a row keeps its values in during pass B */
    size_t bytes;
};

struct kd_ctx {
    const kern_join_args *a;
    kd_dev *dv;
    int mode;           /* FASTED_KD_* of the pass */
    unsigned ua, cskip; /* pass A: column tiles, tiles skipped between them */
    unsigned nchunk;
    unsigned ntiles;    /* > 0: the pass runs the row tiles in dv->rowmap only */
    const uint2 *items; /* set: the pass runs these items only (kern_kd_prune.h) */
    size_t nitems;
    double base, span; /* the pass's share of the whole computation's progress */
};

int kd_params(void *vc, kern_run *k, fasted_params *p, int use_wg)
{
    (void)k;
    (void)use_wg;
    kd_ctx *c = (kd_ctx *)vc;
    kd_dev *dv = c->dv;
    p->mode = c->mode;
    p->kd.u2 = dv->u2;
    p->kd.sc = dv->sc;
    p->kd.bin = dv->gbin;
    p->kd.hist = dv->hist;
    p->kd.off = dv->off;
    p->kd.fill = dv->fill;
    p->kd.vals = dv->vals;
    p->kd.cap = dv->cap;
    p->kd.dfill = dv->dfill;
    p->kd.dvals = dv->dvals;
    p->kd.dcols = dv->dcols;
    if (c->items) {
        p->tiles = ts_table{(const uint32_t *)c->items, c->nitems};
    } else if (c->ntiles) {
        p->T = c->ntiles;
        p->rowmap = dv->rowmap;
    }
    if (c->mode == FASTED_KD_MIN) {
        p->U = c->ua;
        p->cskip = c->cskip;
        p->kd.min = dv->mins;
        p->kd.nchunk = c->nchunk;
    }
    return 0;
}

void kd_progress(void *vc, double f)
{
    const kd_ctx *c = (const kd_ctx *)vc;
    if (c->a->progress)
        c->a->progress(c->a->progress_ctx, c->base + c->span * f);
}

void kd_free(kd_dev *dv)
{
    void *ps[] = {dv->u2,    dv->sc,    dv->mins,   dv->vals,   dv->outv, dv->gbin,
                  dv->bin,   dv->need,  dv->hist,   dv->cnt,    dv->fill, dv->off,
                  dv->dvals, dv->dfill, dv->status, dv->rowmap, dv->dcols};
    for (void *q : ps)
        kern_pool_free(q);
    memset(dv, 0, sizeof *dv);
}

int kd_alloc(void **p, size_t size, size_t total)
{
    /* the pool's: a run's seventeen arrays cost microseconds, not
     * cudaMalloc's and cudaFree's tens each (kern_pool.cuh) */
    return kern_pool_alloc(p, size, "the k-distance (beside the dataset)", total);
}

/* Add one pass's result to the whole computation's. */
void kd_add(kern_join_result *r, const kern_join_result *p, int first)
{
    r->t_h2d += p->t_h2d;
    r->t_convert += p->t_convert;
    r->t_prep += p->t_prep;
    r->t_kernel += p->t_kernel;
    r->t_d2h += p->t_d2h;
    r->launches += p->launches;
    r->mem_peak = std::max(r->mem_peak, p->mem_peak);
    r->shrunk |= p->shrunk;
    r->symmetric |= p->symmetric;
    if (first) {
        r->convert_name = p->convert_name;
        r->prep_name = p->prep_name;
        r->cache_hit = p->cache_hit;
        r->centred = p->centred;
        r->d_padded = p->d_padded;
        r->off = p->off;
        memcpy(r->variant, p->variant, sizeof r->variant);
        memcpy(r->device_name, p->device_name, sizeof r->device_name);
    }
}

} // namespace

static int kd_run(const kern_join_args *a, int K, const kern_kd_cut *cut, double *out,
                  kern_join_result *r);

/* Several devices (a->ndevices > 0): the query rows in blocks, handed out
 * by the run's queue (kern_multi_run); each block is a k-distance of its
 * own on the device that takes it, against all rows, and writes its own
 * part of out. A block is not the whole row range, so it runs without
 * symmetric tiles: each d2(q, j) is then computed as the row q's, with the
 * same products and sums as the mirrored tile's, so the result is the
 * one-device run's. K and out are the run's (kernels/kern_multi.cuh's
 * threads take no context; one k-distance runs at a time). */
static struct {
    int K;
    double *out;
    const kern_kd_cut *cut; /* a streamed chunk (NULL: none): each block is cut alike */
} g_kd_list;

static int kd_run_queue(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                        unsigned long long *items)
{
    memset(r, 0, sizeof *r);
    const size_t nq = a->q1 - a->q0;
    /* About four blocks a device, whole 128-row tiles, at least 1024 rows
     * (a block's fixed cost is its passes' setup). */
    const size_t blk = std::max((size_t)1024, (nq / (4 * (size_t)q->ndev) + 127) / 128 * 128);
    const unsigned long long nb = (nq + blk - 1) / blk;
    int rc = kern_queue_open(q, a->device, nb, "k-distance");
    unsigned long long b, e;
    int first = 1;
    while (rc == 0 && kern_queue_take(q, 1, 1, &b, &e)) {
        for (unsigned long long t = b; t < e && rc == 0; t++) {
            kern_join_args s = *a;
            s.q0 = a->q0 + (size_t)t * blk;
            s.q1 = std::min(a->q1, s.q0 + blk);
            s.symmetric = 0;
            s.progress = NULL; /* the calling thread reports the queue's */
            s.kd_exact = a->kd_exact ? a->kd_exact + (s.q0 - a->q0) : NULL;
            kern_join_result pr;
            /* In a streamed chunk, the block's candidates are the block and
             * the rest of the rows in pieces of the chunk's size. */
            const kern_kd_cut bc = {s.q0, s.q1, g_kd_list.cut ? g_kd_list.cut->rows : 0};
            rc = kd_run(&s, g_kd_list.K, g_kd_list.cut ? &bc : NULL, g_kd_list.out + (s.q0 - a->q0),
                        &pr);
            kd_add(r, &pr, first);
            first = 0;
            *items += 1;
            q->done++;
        }
    }
    return rc;
}

/* kern_kd_fn: the query rows (a's, or the cut's) on one device or, over a
 * device list, in blocks from the run's queue. */
static int kd_entry(const kern_join_args *a, int K, const kern_kd_cut *cut, double *out,
                    kern_join_result *r)
{
    if (a->ndevices <= 0)
        return kd_run(a, K, cut, out, r);
    memset(r, 0, sizeof *r);
    const size_t n = a->n;
    if (K < 1 || (size_t)K >= n || a->q0 >= a->q1 || a->q1 > n || n >= ((size_t)1 << 31))
        return kern_fail(KERN_EINVAL, "k-distance: K=%d for rows [%zu, %zu) of %zu", K, a->q0,
                         a->q1, n);
    kern_join_args m = *a;
    m.mode = KJOIN_COUNT; /* nothing per mode for the runner to add */
    if (cut) {
        m.q0 = cut->q0;
        m.q1 = cut->q1;
    }
    g_kd_list.K = K;
    g_kd_list.out = out;
    g_kd_list.cut = cut;
    const int rc = kern_multi_run(&m, r, kd_run_queue);
    if (rc == 0 && a->progress)
        a->progress(a->progress_ctx, 1.0);
    return rc;
}

extern "C" int kern_fasted_kdist(const kern_join_args *a, int K, double *out, kern_join_result *r)
{
    const int rc = kern_stream_kdist(kd_entry, a, K, out, r);
    /* Streamed (the whole computation did not fit): the chunks' runs keep
     * estimates, and a flag the whole run's attempt set no longer holds. */
    if (a->kd_exact && (rc != 0 || r->chunks))
        memset(a->kd_exact, 0, a->q1 - a->q0);
    return rc;
}

/* The candidates beyond a computation's own rows: a cut's pieces of the
 * other rows of the dataset (kern_kd_pieces), none without a cut. */
struct kd_pieces {
    const kern_join_args *whole; /* the dataset's args */
    const kern_kd_cut *cut;      /* NULL: no pieces */
    const size_t *b0, *b1;
    size_t np;
};

/* One pass over the candidates of a computation whose query rows are the
 * run's rows [0, q1) of `own` (a cut's chunk: its own rows; else the
 * dataset): own's run, then (pieces) each piece of the cut as a cross run,
 * with symmetric tiles off (only the query rows hold per-row state). The
 * pass's progress span is shared by the runs by their products. */
static int kd_pass(const kd_pieces &pc, const kern_join_args &own, bool pieces, kd_ctx &c,
                   const fasted_post &post, kern_join_result *r, int &first, int trace)
{
    const size_t nq = own.q1 - own.q0, np = pieces ? pc.np : 0;
    const double base = c.base, span = c.span;
    double tot = (double)nq * (double)own.n;
    for (size_t t = 0; t < np; t++)
        tot += (double)nq * (double)(pc.b1[t] - pc.b0[t]);
    double at = base;
    int rc = 0;
    for (size_t t = 0; t <= np && rc == 0; t++) {
        kern_join_args s = own;
        size_t m = own.n;
        if (t > 0) {
            const size_t b0 = pc.b0[t - 1], b1 = pc.b1[t - 1];
            s.symmetric = 0;
            s.c0 = (nq + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
            s.xc = (const char *)pc.whole->x + b0 * pc.whole->d * pc.whole->x_bytes;
            s.n = s.c0 + (b1 - b0);
            s.hash = kern_kd_hash(pc.whole->hash, pc.cut, b0);
            m = b1 - b0;
        }
        c.base = at;
        c.span = span * (double)nq * (double)m / tot;
        at += c.span;
        kern_join_result pr;
        rc = fasted_run(&s, &pr, &post);
        if (trace)
            fprintf(stderr, "kdist: pass %d rows %zu..%zu piece %zu sym %d: kernel %.3f ms\n",
                    c.mode, s.q0, s.q1, t, pr.symmetric, pr.t_kernel * 1e3);
        kd_add(r, &pr, first);
        first = 0;
    }
    c.base = base;
    c.span = span;
    return rc;
}

/* One device: the rows [a->q0, a->q1) against every row; with a cut, the
 * cut's rows against themselves (as a dataset of their own: every pass)
 * and each piece (passes B and C; pass A's bound from the cut's rows alone
 * holds, as any K of a row's d2 values bound its K-th smallest). */
static int kd_run(const kern_join_args *a, int K, const kern_kd_cut *cut, double *out,
                  kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    if (K < 1 || (size_t)K >= a->n || a->q0 >= a->q1 || a->q1 > a->n || a->n >= ((size_t)1 << 31) ||
        (cut && (cut->q0 >= cut->q1 || cut->q1 > a->n)))
        return kern_fail(KERN_EINVAL, "k-distance: K=%d for rows [%zu, %zu) of %zu", K,
                         cut ? cut->q0 : a->q0, cut ? cut->q1 : a->q1, a->n);
    kern_trace_mark("kdist: start");
    kd_pieces pc = {a, cut, NULL, NULL, 0};
    /* exact's FP64 on the device: the whole dataset's run only (a cut's
     * rows keep estimates). */
    unsigned char *known = cut ? NULL : a->kd_exact;
    std::vector<size_t> pb0, pb1;
    kern_join_args la;
    if (cut) {
        /* The cut's rows as a dataset of their own, numbered from 0. */
        pb0.resize(a->n / std::max(cut->rows, (size_t)1) + 2);
        pb1.resize(pb0.size());
        pc.np = kern_kd_pieces(a->n, cut, pb0.data(), pb1.data());
        pc.b0 = pb0.data();
        pc.b1 = pb1.data();
        la = *a;
        la.x = (const char *)a->x + cut->q0 * a->d * a->x_bytes;
        la.n = cut->q1 - cut->q0;
        la.q0 = 0;
        la.q1 = la.n;
        la.hash = kern_kd_hash(a->hash, cut, cut->q0);
        a = &la;
    }
    const size_t n = a->n, nq = a->q1 - a->q0;
    const int ndev = kern_device_count();
    if (ndev <= 0)
        return KERN_ENODEV;
    if (a->device < 0 || a->device >= ndev)
        return kern_fail(KERN_ENODEV, "no CUDA device %d", a->device);
    KERN_CUDA(cudaSetDevice(a->device));
    const kern_format *fmt = a->format ? a->format : &kern_fmt_fp16;
    /* The kernel fasted_run will choose, for the column tiling of pass A. */
    int major = 0, minor = 0, optin = 0;
    KERN_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, a->device));
    KERN_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, a->device));
    KERN_CUDA(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, a->device));
    const kern_caps caps = {major * 10 + minor, fasted_wg_usable(a->device), (size_t)optin};
    /* exact's passes run the promoting kernel at large d, as its join
     * does (exact_kern_pass), whose bound does not grow with d: a row's
     * reach then holds a few of its neighbours' values instead of
     * hundreds (docs/ACCURACY.md (2')). The answers are FP64's either
     * way. */
    bool promoted = false;
    kern_join_args lp;
    if (known) {
        lp = *a;
        lp.format = fmt = exact_kern_pass(a, &promoted);
        a = &lp;
    }
    fasted_choice ch;
    int rc = fasted_choose(a->off, KJOIN_COUNT, fmt, &caps, 0, &ch);
    if (rc)
        return kern_fail(rc, "%s", ch.why);
    const double sc = fasted_scale(a, fmt); /* the device values' factor */
    const int use_wg = ch.kind == FASTED_KIND_WGMMA;
    const size_t bn = use_wg ? FASTED_WG_BN : (size_t)ch.v->bn;
    const size_t bm = use_wg ? FASTED_WG_BM : (size_t)ch.v->bm;
    const unsigned cpt = use_wg ? 1 : 2; /* column chunks per tile: warps across */
    const size_t ufull = (n + bn - 1) / bn;
    size_t ua = std::max((n / KD_SAMPLE + bn - 1) / bn,
                         (std::max((size_t)4 * K, (size_t)64) + cpt - 1) / cpt);
    size_t step = 1;
    if (2 * ua > ufull)
        ua = ufull;
    else
        step = ufull / ua;
    const unsigned nchunk = (unsigned)(ua * cpt);

    kd_dev dv;
    memset(&dv, 0, sizeof dv);
    dv.na = (n + 255) / 256 * 256 + 256; /* as the dataset's rows: tiles read past n */
    dv.nq = nq;
    /* Under a cap (set gpu-mem) pass A's minima and pass C's values take
     * at most an eighth of it each, the minima in smaller blocks of rows,
     * the values in more groups (a row whose bin alone holds more still
     * goes, in a group of its own). */
    const size_t min_bytes = a->mem_cap ? std::min(KD_MIN_BYTES, a->mem_cap / 8) : KD_MIN_BYTES;
    const size_t vals_max =
        a->mem_cap ? std::max((size_t)1, std::min(KD_VALS_MAX, a->mem_cap / 8 / 4)) : KD_VALS_MAX;
    dv.min_rows = std::min(nq, std::max((size_t)256, min_bytes / 4 / nchunk));
    dv.bytes = dv.na * 12 + nq * (40 + 4 * FASTED_KD_BINS) + dv.min_rows * nchunk * 4 +
               (nq / bm + 2) * 4 + (a->mem_cap ? vals_max * 4 : 0);
    kd_exact ex;
    bool xk = false; /* rows decided in FP64 here (fasted_kdist_exact.cuh) */
    if (known) {
        memset(known, 0, nq);
        const int xrc = kd_exact_open(a, sc, nq, promoted, &ex);
        if (xrc != 0 && xrc != KERN_ENOMEM) {
            kd_exact_close(&ex);
            return xrc;
        }
        xk = xrc == 0;
        /* under a cap (set gpu-mem) the rows' copy counts in it */
        if (xk && a->mem_cap && dv.bytes + ex.bytes >= a->mem_cap / 2)
            xk = false;
        if (xk)
            dv.bytes += ex.bytes;
        else
            kd_exact_close(&ex);
    }

    {
        /* Pass B's slots: about K * KD_SAMPLE values fall under a row's
         * bound; 4x that (exact: 16x), within KD_DIRECT_BYTES (exact: 2x)
         * and an eighth of what the device has free. A row with more goes
         * through pass C. */
        size_t fr = 0, tot = 0;
        KERN_CUDA(kern_pool_meminfo(&fr, &tot));
        /* exact: each slot also keeps its other row (8 bytes a slot) */
        const size_t slot = xk ? 8 : 4;
        size_t budget = std::min(KD_DIRECT_BYTES * (slot / 4), fr / 8);
        if (a->mem_cap)
            budget = std::min(budget, a->mem_cap / 8);
        /* exact's rows go round again at their reach, which in high
         * dimensions can hold several times the sample's values */
        const size_t want = (size_t)(xk ? 16 : 4) * K * KD_SAMPLE;
        const size_t cap = std::min(want, budget / slot / nq);
        dv.cap = cap >= (size_t)K ? (unsigned)cap : 0;
        /* TCJOIN_KDIST_SLOTS=N: N slots a row (tests send rows through
         * pass C with it). */
        if (const char *sl = getenv("TCJOIN_KDIST_SLOTS"))
            dv.cap = std::min((unsigned)strtoul(sl, NULL, 10), (unsigned)cap);
        dv.bytes += nq * dv.cap * slot;
    }
    if (a->mem_cap && dv.bytes >= a->mem_cap) {
        if (xk)
            kd_exact_close(&ex);
        return kern_fail(KERN_ENOMEM,
                         "k-distance needs %.1f MB of device memory for its bounds and "
                         "histograms; the cap (set gpu-mem) is %.1f MB",
                         (double)dv.bytes / 1e6, (double)a->mem_cap / 1e6);
    }
    std::vector<float> hu2(dv.na, -1.0f), hout(nq), hu2w(xk ? dv.na : 0);
    std::vector<int> hbin(nq), hneed(nq), hstat(nq), gbin(dv.na, -1);
    std::vector<unsigned> hcnt(nq);
    std::vector<unsigned long long> hoff(nq + 1);
    std::vector<unsigned char> done(nq, 0);
    std::vector<double> hx(xk ? nq : 0);
    kd_ctx c;
    memset((void *)&c, 0, sizeof c);
    c.a = a;
    c.dv = &dv;
    c.ua = (unsigned)ua;
    c.cskip = (unsigned)(step - 1);
    c.nchunk = nchunk;
    kern_join_args pa = *a;
    pa.mem_cap = a->mem_cap ? a->mem_cap - dv.bytes : 0;
    pa.mode = KJOIN_COUNT;
    pa.progress = kd_progress;
    pa.progress_ctx = &c;
    pa.counts = NULL;
    pa.pair_fn = NULL;
    pa.hist = pa.hist_below = NULL;
    pa.hist_edges = NULL;
    pa.hist_nbins = 0;
    const fasted_post post = {&c, 4, 0.0, 0, NULL, NULL, kd_params};
    int first = 1;
    size_t left = nq;
    double t0 = kern_now();
    /* TCJOIN_TRACE: each pass's kernel time and the band's size on
     * stderr (benchmarks). */
    const int trace = kern_trace_on();
    /* Clustered rows: passes B and C over the cluster cut's order, only
     * the items whose rows reach each other (kern_kd_prune.h); the rounds
     * then hold their rows' answers by pass row until the end. */
    kd_prune pr;
    memset(&pr, 0, sizeof pr);
    std::vector<double> vout, vnx; /* vnx: the rows' norms by pass row */
    kd_reach_ctx rctx = {NULL, 0, 1};
    std::vector<unsigned char> vknown;
    double *rout = out;
    unsigned char *rknown = known;
    uint2 *ditems = NULL;
    size_t ditems_cap = 0, kept_items = 0, all_items = 0;
    double t_host = 0; /* the trace's host steps */
#define KD_TRY(call) KERN_CUDA_GOTO(call, out)
#define KD_PASS(args, pieces)                                                                      \
    do {                                                                                           \
        if ((rc = kd_pass(pc, (args), (pieces), c, post, r, first, trace)) != 0)                   \
            goto out;                                                                              \
    } while (0)
#define KD_ALLOC(ptr, size)                                                                        \
    do {                                                                                           \
        if ((rc = kd_alloc((void **)&(ptr), (size), dv.bytes)) != 0)                               \
            goto out;                                                                              \
    } while (0)
    KD_ALLOC(dv.u2, dv.na * 4);
    KD_ALLOC(dv.sc, dv.na * 4);
    KD_ALLOC(dv.gbin, dv.na * 4);
    KD_ALLOC(dv.bin, nq * 4);
    KD_ALLOC(dv.need, nq * 4);
    KD_ALLOC(dv.cnt, nq * 4);
    KD_ALLOC(dv.fill, nq * 4);
    KD_ALLOC(dv.outv, nq * 4);
    KD_ALLOC(dv.off, (nq + 1) * 8);
    KD_ALLOC(dv.hist, nq * 4 * FASTED_KD_BINS);
    KD_ALLOC(dv.mins, dv.min_rows * nchunk * 4);
    KD_ALLOC(dv.dfill, nq * 4);
    KD_ALLOC(dv.status, nq * 4);
    KD_ALLOC(dv.dvals, nq * dv.cap * 4);
    if (xk)
        KD_ALLOC(dv.dcols, nq * dv.cap * 4);
    KD_ALLOC(dv.rowmap, (nq / bm + 2) * 4);

    kern_trace_mark("kdist: set-up");
    /* Pass A, a block of rows at a time: each row's bound. */
    for (size_t b0 = a->q0; b0 < a->q1; b0 += dv.min_rows) {
        const size_t b1 = std::min(a->q1, b0 + dv.min_rows);
        kern_join_args pb = pa;
        pb.q0 = b0;
        pb.q1 = b1;
        pb.symmetric = 0;
        c.mode = FASTED_KD_MIN;
        c.base = 0.1 * (double)(b0 - a->q0) / (double)nq;
        c.span = 0.1 * (double)(b1 - b0) / (double)nq;
        KD_PASS(pb, false);
        const unsigned rows = (unsigned)(b1 - b0);
        t0 = kern_now();
        kd_bound_launch(dv.mins, rows, nchunk, K, dv.u2, (int)std::min(2 * (unsigned)K, nchunk),
                        xk ? dv.outv : NULL);
        KD_TRY(cudaGetLastError());
        KD_TRY(cudaMemcpy(hu2.data() + b0, dv.u2, rows * 4, cudaMemcpyDeviceToHost));
        if (xk)
            KD_TRY(cudaMemcpy(hu2w.data() + b0, dv.outv, rows * 4, cudaMemcpyDeviceToHost));
        r->t_sink += kern_now() - t0;
    }
    /* A row with K others at distance 0 is done; the others get their bound
     * two ulps wider (a recomputation a rounding apart still counts). For
     * exact no row is done yet (an estimate of 0 is no FP64 0: such a row's
     * bound is the error bound's reach from 0). For exact a bound is
     * widened from the start to the reach of the sample's bound where that
     * reach holds at most about twice the sample's values (it lies within
     * the 2K-th chunk minimum): the row is then decided in round 0. Else
     * to the 2K-th chunk minimum, and further only where its K-th estimate
     * shows it must be (KD_STATUS_WIDER): in clustered, high-dimensional
     * data a bound widened by the reach can hold far more values than the
     * slots. */
    if (xk) { /* on the device: every row's reach, a thread each */
        KD_TRY(cudaMemcpy(dv.u2, hu2.data(), dv.na * 4, cudaMemcpyHostToDevice));
        KD_TRY(cudaMemcpy(dv.sc, hu2w.data(), dv.na * 4, cudaMemcpyHostToDevice));
        kd_widen_kernel<<<(unsigned)((nq + 255) / 256), 256>>>(dv.u2, dv.sc, ex.nx, ex.nmax, ex.b,
                                                               a->q0, nq);
        KD_TRY(cudaGetLastError());
        KD_TRY(cudaMemcpy(hu2.data(), dv.u2, dv.na * 4, cudaMemcpyDeviceToHost));
    }
    for (size_t q = 0; q < nq && !xk; q++) {
        float &u = hu2[a->q0 + q];
        if (u == 0.0f) {
            out[q] = 0.0;
            done[q] = 1;
            left--;
            u = -1.0f;
        } else if (isfinite(u)) {
            u = nextafterf(nextafterf(u, INFINITY), INFINITY);
        }
    }
    t_host = kern_now();
    if (xk && !cut && a->q0 == 0 && a->q1 == n && a->symmetric && kd_prune_wanted()) {
        rctx = {&ex.b, ex.nm, sc};
        if ((rc = kd_prune_open(a, hu2.data(), ex.hnx, kd_reach, &rctx, &pr)) != 0)
            goto out;
        kern_trace_mark("kdist: order");
        if (pr.K) {
            if ((rc = kd_exact_order(&ex, pr.perm, n)) != 0)
                goto out;
            std::vector<float> h2(dv.na, -1.0f);
            std::vector<unsigned char> dn(nq);
            vout.assign(nq, 0.0);
            vknown.assign(nq, 0);
            vnx.resize(n);
            /* gathers at random: on every core */
            kern_par_rows(n, 16, [&](unsigned, size_t v0, size_t v1) {
                for (size_t v = v0; v < v1; v++) {
                    const uint32_t g = pr.perm[v];
                    h2[v] = hu2[g];
                    dn[v] = done[g];
                    vout[v] = out[g];
                    vnx[v] = ex.hnx[g];
                }
            });
            hu2.swap(h2);
            done.swap(dn);
            rout = vout.data();
            rknown = vknown.data();
            /* a view: the rows gathered on the device from the dataset as
             * an ordinary run converts it, so every d2 is the same */
            pa.base_n = a->n;
            pa.base_hash = a->hash;
            pa.rows = pr.perm;
            pa.hash = a->hash ^ 0x6b64206f72646572ull;
        }
        if (trace)
            fprintf(stderr, "kdist: passes B and C in the order of %d clusters (%.3f ms)\n", pr.K,
                    1e3 * (kern_now() - t_host));
    }

    for (int round = 0; left > 0; round++) {
        /* Round 0 runs every tile; later rounds only the row tiles that hold
         * a pending row, symmetric off. */
        t_host = kern_now();
        std::vector<unsigned> tiles;
        if (round > 0) {
            for (size_t q = 0; q < nq; q++)
                if (!done[q] && (tiles.empty() || tiles.back() != q / bm))
                    tiles.push_back((unsigned)(q / bm));
            KD_TRY(cudaMemcpy(dv.rowmap, tiles.data(), tiles.size() * 4, cudaMemcpyHostToDevice));
        }
        KD_TRY(cudaMemcpy(dv.u2, hu2.data(), dv.na * 4, cudaMemcpyHostToDevice));
        kd_scale_kernel<<<(unsigned)((dv.na + 255) / 256), 256>>>(dv.u2, dv.sc, dv.na);
        KD_TRY(cudaGetLastError());
        KD_TRY(cudaMemset(dv.hist, 0, nq * 4 * FASTED_KD_BINS));
        KD_TRY(cudaMemset(dv.dfill, 0, nq * 4));
        kern_trace_mark("kdist: the round's bounds");
        const double rs = 0.9 / (double)(round + 1);
        kern_join_args pb = pa;
        if (round > 0)
            pb.symmetric = 0;
        c.ntiles = (unsigned)tiles.size();
        c.items = NULL;
        c.nitems = 0;
        if (pr.K) {
            /* the items of fasted_run's grid (its units) whose rows reach
             * each other, where they are few enough to pay */
            const bool tri = pb.symmetric != 0;
            const size_t ur = use_wg ? (tri ? 2 * FASTED_WG_BM : FASTED_WG_BM) : bm;
            const size_t uc = use_wg ? (size_t)FASTED_WG_BN : bn;
            uint32_t *it = NULL;
            size_t ni = 0, tot = 0;
            if ((!tri || ur == uc) &&
                (rc = kd_prune_items(&pr, hu2.data(), vnx.data(), kd_reach, &rctx, ur, uc, tri, &it,
                                     &ni, &tot)) != 0)
                goto out;
            if (it && ni <= KD_PRUNE_ITEMS * (double)tot) {
                if (ni > ditems_cap) {
                    kern_pool_free(ditems);
                    ditems = NULL;
                    ditems_cap = 0;
                    if ((rc = kd_alloc((void **)&ditems, ni * sizeof(uint2), dv.bytes)) != 0) {
                        free(it);
                        goto out;
                    }
                    ditems_cap = ni;
                }
                const cudaError_t ce =
                    cudaMemcpy(ditems, it, ni * sizeof(uint2), cudaMemcpyHostToDevice);
                free(it);
                KD_TRY(ce);
                c.items = ditems;
                c.nitems = ni;
            } else {
                free(it);
            }
            if (round == 0) {
                kept_items = c.items ? ni : tot;
                all_items = tot;
            }
            if (trace)
                fprintf(stderr, "kdist: round %d: %zu of %zu items (%.3f ms)\n", round,
                        c.items ? ni : tot, tot, 1e3 * (kern_now() - t_host));
        }
        kern_trace_mark("kdist: the round's bounds and items");
        c.mode = FASTED_KD_HIST;
        c.base = 1.0 - rs;
        c.span = rs * 0.5;
        r->t_sink += kern_now() - t0;
        KD_PASS(pb, true);
        t0 = t_host = kern_now();
        kd_bins_kernel<<<(unsigned)((nq + 255) / 256), 256>>>(
            dv.hist, dv.u2, (unsigned)a->q0, (unsigned)nq, K, dv.bin, dv.need, dv.cnt);
        KD_TRY(cudaGetLastError());
        kd_direct_kernel<<<(unsigned)((nq + 7) / 8), 256>>>(dv.dvals, dv.dfill, dv.cap, dv.u2,
                                                            (unsigned)a->q0, (unsigned)nq, K,
                                                            round == 0, dv.outv, dv.status);
        KD_TRY(cudaGetLastError());
        if (trace) {
            KD_TRY(cudaDeviceSynchronize());
            kern_trace_mark("kdist: bins");
        }
        if (xk && (rc = kd_exact_finish(&ex, a, K, dv.u2, dv.dvals, dv.dcols, dv.dfill, dv.cap,
                                        dv.outv, dv.status, nq, hx.data())) != 0)
            goto out;
        kern_trace_mark("kdist: FP64 decision");
        KD_TRY(cudaMemcpy(hneed.data(), dv.need, nq * 4, cudaMemcpyDeviceToHost));
        KD_TRY(cudaMemcpy(hstat.data(), dv.status, nq * 4, cudaMemcpyDeviceToHost));
        KD_TRY(cudaMemcpy(hout.data(), dv.outv, nq * 4, cudaMemcpyDeviceToHost));
        kern_trace_mark("kdist: states down");
        /* Rows that kept all their values are done; in round 0 a row with
         * more takes the smaller bound its slots give and goes round again
         * (its row tile only); after that, pass C. */
        /* on every core, each range counting its own (a wider bound's
         * reach costs about as much as the rest of a row's step) */
        enum { KS_C, KS_SHRUNK, KS_SHORT, KS_FP64, KS_WIDER, KS_DONE, KS_N };
        size_t kst[KERN_PAR_THREADS][KS_N];
        memset(kst, 0, sizeof kst);
        kern_par_rows(nq, 8, [&](unsigned t, size_t q0, size_t q1) {
            size_t st[KS_N] = {0}; /* its own line: kst's rows share one */
            for (size_t q = q0; q < q1; q++) {
                if (done[q])
                    continue;
                float &u = hu2[a->q0 + q];
                if (hstat[q] == KD_STATUS_EXACT) {
                    rout[q] = hx[q]; /* FP64's, in the data's units */
                    rknown[q] = 1;
                    st[KS_FP64]++;
                    done[q] = 1;
                    st[KS_DONE]++;
                    u = -1.0f;
                    hneed[q] = 0;
                } else if (hstat[q] == 1) {
                    rout[q] = (double)hout[q] / (sc * sc); /* unscaled */
                    done[q] = 1;
                    st[KS_DONE]++;
                    u = -1.0f;
                    hneed[q] = 0;
                } else if (hstat[q] == KD_STATUS_WIDER && round + 1 < KD_ROUNDS) {
                    /* its K-th estimate is known: the bound that reaches
                     * FP64's K nearest from it, its row tile again */
                    u = kd_exact_bound(&ex, a->q0 + q,
                                       nextafterf(nextafterf(hout[q], INFINITY), INFINITY));
                    hneed[q] = 0;
                    st[KS_WIDER]++;
                } else if (hstat[q] == 2 && round == 0) {
                    u = nextafterf(nextafterf(hout[q], INFINITY), INFINITY);
                    if (xk)
                        u = kd_exact_bound(&ex, a->q0 + q, u);
                    hneed[q] = 0;
                    st[KS_SHRUNK]++;
                } else if (hneed[q] > 0) {
                    st[KS_C]++;
                } else {
                    /* Fewer than K values under the bound: widen it. */
                    u = round + 1 >= KD_ROUNDS ? INFINITY : u * 16.0f;
                    st[KS_SHORT]++;
                }
            }
            memcpy(kst[t], st, sizeof st);
        });
        size_t need_c = 0, shrunk = 0, short_rows = 0, fp64_rows = 0, wider = 0;
        for (int t = 0; t < KERN_PAR_THREADS; t++) {
            need_c += kst[t][KS_C];
            shrunk += kst[t][KS_SHRUNK];
            short_rows += kst[t][KS_SHORT];
            fp64_rows += kst[t][KS_FP64];
            wider += kst[t][KS_WIDER];
            left -= kst[t][KS_DONE];
        }
        if (trace)
            fprintf(stderr,
                    "kdist: round %d: %zu row tiles, %u slots a row; %zu rows decided in FP64, "
                    "%zu rows left, %zu with a smaller bound, %zu with a wider one, %zu for pass "
                    "C, %zu short (%.3f ms after the pass)\n",
                    round, tiles.size(), dv.cap, fp64_rows, left, shrunk, wider, need_c, short_rows,
                    1e3 * (kern_now() - t_host));
        if (need_c == 0)
            continue;
        /* Pass C, in groups of rows whose bins' values fit vals_max. */
        KD_TRY(cudaMemcpy(hbin.data(), dv.bin, nq * 4, cudaMemcpyDeviceToHost));
        KD_TRY(cudaMemcpy(hcnt.data(), dv.cnt, nq * 4, cudaMemcpyDeviceToHost));
        for (size_t g0 = 0; g0 < nq;) {
            size_t g1 = g0, tot = 0;
            while (g1 < nq && (g1 == g0 || tot + (hneed[g1] > 0 ? hcnt[g1] : 0) <= vals_max))
                tot += hneed[g1] > 0 ? hcnt[g1] : 0, g1++;
            std::fill(gbin.begin(), gbin.end(), -1);
            hoff[0] = 0;
            for (size_t q = 0; q < nq; q++) {
                const bool in = q >= g0 && q < g1 && hneed[q] > 0;
                if (in)
                    gbin[a->q0 + q] = hbin[q];
                hoff[q + 1] = hoff[q] + (in ? hcnt[q] : 0);
            }
            if (tot > dv.vals_cap) {
                kern_pool_free(dv.vals);
                dv.vals = NULL;
                dv.vals_cap = 0;
                KD_ALLOC(dv.vals, tot * 4);
                dv.vals_cap = tot;
            }
            KD_TRY(cudaMemcpy(dv.gbin, gbin.data(), dv.na * 4, cudaMemcpyHostToDevice));
            KD_TRY(cudaMemcpy(dv.off, hoff.data(), (nq + 1) * 8, cudaMemcpyHostToDevice));
            KD_TRY(cudaMemset(dv.fill, 0, nq * 4));
            r->t_sink += kern_now() - t0;
            if (tot > 0) {
                kern_join_args pcx = pa;
                if (round > 0)
                    pcx.symmetric = 0;
                c.mode = FASTED_KD_BAND;
                c.base = 1.0 - rs * 0.5 + rs * 0.5 * (double)g0 / (double)nq;
                c.span = rs * 0.5 * (double)(g1 - g0) / (double)nq;
                KD_PASS(pcx, true);
            }
            t0 = kern_now();
            kd_pick_kernel<<<(unsigned)((nq + 7) / 8), 256>>>(
                dv.vals, dv.off, dv.fill, dv.cnt, dv.need, dv.bin, (unsigned)nq, dv.outv);
            KD_TRY(cudaGetLastError());
            KD_TRY(cudaMemcpy(hout.data(), dv.outv, nq * 4, cudaMemcpyDeviceToHost));
            for (size_t q = g0; q < g1; q++) {
                if (done[q] || hneed[q] <= 0)
                    continue;
                if (hout[q] != hout[q]) {
                    rc = kern_fail(KERN_EGPU,
                                   "k-distance: row %zu kept another number of values in its "
                                   "bin than pass B counted (%u)",
                                   a->q0 + q, hcnt[q]);
                    goto out;
                }
                rout[q] = (double)hout[q] / (sc * sc); /* unscaled */
                done[q] = 1;
                left--;
                hu2[a->q0 + q] = -1.0f;
            }
            g0 = g1;
        }
        r->t_sink += kern_now() - t0;
    }
    if (pr.K) { /* the answers by the dataset's rows */
        kern_par_rows(n, 4, [&](unsigned, size_t v0, size_t v1) {
            for (size_t v = v0; v < v1; v++) {
                out[pr.perm[v]] = vout[v];
                if (known)
                    known[pr.perm[v]] = vknown[v];
            }
        });
        r->clusters = (unsigned)pr.K;
        r->cluster_work = all_items ? (double)kept_items / (double)all_items : 1.0;
    }
out:
#undef KD_TRY
#undef KD_PASS
#undef KD_ALLOC
    /* The passes' peaks, and the per-row state held through them all. */
    r->mem_peak += dv.bytes;
    kd_free(&dv);
    kern_pool_free(ditems);
    kd_prune_close(&pr);
    if (xk)
        kd_exact_close(&ex);
    cudaGetLastError();
    if (rc == 0 && a->progress)
        a->progress(a->progress_ctx, 1.0);
    return rc;
}
