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
 * refine it; at 10^6 x 128 about eight times a COUNT join at max).
 *
 * Per row: a set of the K least (d2, j) it was offered (K >= k; K > k
 * where the caller wants each row's K nearest too, the curve's first
 * round of lists: src/cluster/curve_knn.h), each other row j once (the same pair
 * may come as (i, j) and (j, i), or from two launches of a cluster cut,
 * always with the same d2: one computation, mirrored) and its length,
 * kept by the row sets of kernels/kern_rowsets.cuh (a launch's pairs
 * sorted by row, a warp a row, no lock). At the end (kcc_final_kernel)
 * each set is sorted once, cleaned of repeats and padded to K with
 * (+inf, KERN_ROW_PAD). It holds K distinct rows whose d2 are the K least
 * values offered, whatever order the pairs came in: its k-th is the k-th
 * least d2, what a host sink gives from the same
 * pairs (src/cluster/curve_knn.c). With each value put in turn under its row's
 * lock (a few shuffles a value, a scan of the set for its largest once
 * full), the consumer takes under a tenth of the MNIST-like curve (3.7
 * million pairs, K = 64). Where the caller wants the curve's first
 * round, each point's list, bound and reachability are built here from
 * its set (kernels/knn_lists.h, the host route's code) and only they come
 * back (536 bytes a point, not the 12K of the K nearest: 768 MB at 10^6
 * points, K = 64).
 *
 * Memory beyond the dataset and the run's pair buffer: 12K + 4 bytes a
 * row (set values and rows, length), 12 bytes a pair for the order (16
 * where pairs go to rows outside the run's query rows), and n doubles
 * out (and on the first device 536 bytes a row for the lists). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "kern_consume.cuh"
#include "kern_drive.cuh" /* kern_now */
#include "kern_rowsets.cuh"
#include "knn_lists.h"

#define KCC_THREADS 256

/* One device's state, by the dataset's row. */
struct kcc_dev {
    int device;
    krs_sets s;         /* n x K values and rows (sorted and padded by kcc_final_kernel) */
    double *core;       /* n: the k-th least, out (the first device) */
    curve_list *ol;     /* n: the first round's lists, out */
    double *orch, *okb; /* n each: reachabilities and bounds, out */
    kern_rowmap rm;     /* a layout's rows (run row -> dataset row) */
    krs_order order;    /* a launch's pairs in their rows' order */
};

static std::mutex g_kcc_mu;
static kcc_dev *g_kcc[KERN_DEV_SLOTS];
static uint32_t g_kcc_k; /* the set's size, K */
static int g_kcc_trace;
static double g_kcc_consume_s, g_kcc_collect_s; /* the trace's */
static size_t g_kcc_launches;                   /* the trace's: consumer launches */

/* The core join's offer (krs_pairs_kernel): each pair's d2 to both rows'
 * sets, as (d2, other row). */
struct kcc_offer {
    __device__ uint32_t row(uint32_t r) const
    {
        return r;
    }
    __device__ void value(uint32_t row, uint32_t o, double d2, bool query, double *v,
                          uint32_t *j) const
    {
        (void)row;
        (void)query;
        *v = d2;
        *j = o;
    }
};

/* Each row's set sorted by (d2, j), its repeats dropped and padded to K
 * with (+inf, KERN_ROW_PAD) (krs_row_put leaves sets that fit unordered),
 * and its k-th least to core, +inf where the row has fewer than k or it
 * lies above max2: a warp a row. */
template <int S>
static __global__ void __launch_bounds__(KRS_PUT_WARPS * 32)
    kcc_final_kernel(krs_sets c, size_t n, uint32_t k, double *core, double max2)
{
    __shared__ double xd[KRS_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KRS_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const uint32_t K = c.k;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t len = krs_row_clean<S>(c, p, xd[wid], xj[wid], lane);
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
            orc = krs_consume(d->order, d->s, kcc_offer(), map, run, b, st, "dbscan curve's order");
        });
    return rc ? rc : orc;
}

static void kcc_free(kcc_dev &d)
{
    kern_consume_free(d.device, {d.s.hd, d.s.hj, d.s.len, d.core, d.ol, d.orch, d.okb, d.rm.map});
    krs_order_free(d.device, d.order);
}

static int kcc_malloc(void *p, size_t bytes)
{
    return kern_consume_malloc(p, bytes, "dbscan curve");
}

static int kcc_alloc(kcc_dev &d, size_t n, size_t k)
{
    KERN_CUDA(cudaSetDevice(d.device));
    const int rc = krs_alloc(&d.s, n, (uint32_t)k, "dbscan curve");
    if (rc)
        return rc;
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* Every other device's sets into the first's, then the first's k-th
 * least values to io->core2 (and the first round's lists from its sorted
 * sets to io->list, io->reach2, io->kb). */
static int kcc_collect(std::vector<kcc_dev> &dv, size_t n, const curve_core_io *io,
                       const uint32_t *parts)
{
    const size_t k = io->K;
    kcc_dev &d0 = dv[0];
    for (size_t t = 1; t < dv.size(); t++) {
        const int rc = krs_gather(d0.s, d0.device, dv[t].s, dv[t].device, n);
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
    krs_by_slots(g_kcc_k, [&](auto s) {
        kcc_final_kernel<decltype(s)::value><<<krs_warp_blocks(n), KRS_PUT_WARPS * 32>>>(
            d0.s, n, (uint32_t)io->k, d0.core, io->max2);
    });
    KERN_CUDA(cudaGetLastError());
    if (kern_trace_on()) { /* the trace's: the step's kernels in its time */
        KERN_CUDA(cudaDeviceSynchronize());
        kern_trace_mark("core collect: state, core distances");
    }
    if (io->list) { /* the sets are sorted and padded: the K nearest as they are */
        kcc_lists_kernel<<<kern_grid_blocks(n, KCC_THREADS), KCC_THREADS>>>(
            n, k, d0.s.hd, d0.s.hj, d0.core, io->max2, d0.ol, d0.orch, d0.okb);
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
            io->merge->fresh = 1;
        }
        const int mrc = io->merge ? kern_curve_merge_run(n, d0.ol, d0.okb, io->merge) : KERN_ENOMEM;
        if (io->merge) { /* the caller's merging, kept for the later rounds: no device arrays */
            io->merge->core_dev = io->merge->reach_dev = NULL;
            io->merge->part = NULL;
            io->merge->fresh = 0;
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
        k >= a0->n || k > 32 * KRS_SLOTS || (!io->list && k != io->k) ||
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
        order = std::max(order, krs_order_bytes(d.order));
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
