/* DBSCAN's curve, one Boruvka join on the device (kern_curve_round,
 * kernels.h): the join's PAIRS run (fn through kern_drive: fasted's
 * formats, exact, exact over the cluster cut) hands every launch's pairs
 * to a consumer kernel on the launch's stream (kern_join_args.pair_dev),
 * as DBSCAN's passes do (kernels/kern_dbscan.cu), and no pair crosses to
 * the host. The host sink (src/cluster/dbscan_curve.c, round_put) takes
 * most of a join at 10^6 x 128, S = 64: 6.5e7 pairs copied back, then
 * every core reads the whole batch for its share of the points
 * (docs/history/BENCHMARKS-2026-11.md).
 *
 * Per row: the reachability as an order-preserving 64-bit key (one
 * atomicMin, read first so most pairs take none), and the CURVE_LIST
 * least edges leaving its component as a row set of (w, other row)
 * (kernels/kern_rowsets.cuh: a launch's pairs sorted by row, a warp a
 * row, no lock). For a fixed row p, (w, other row) orders its edges as
 * (w, a, b) does (a, b the ends, a < b: with the other row below p, the
 * ends are (other, p); above, (p, other); either way the other row
 * decides), so the set holds the least edges offered by the total order,
 * each once, whatever order the pairs came in: what the host's
 * curve_list_put gives. Packed for the merging (kcv_pack_kernel) in
 * descending order, a max-heap as curve_list promises.
 *
 * Memory beyond the dataset and the run's pair buffer: 792 bytes a row
 * (core distance, component, the key, 64 x 12 bytes of set, length), the
 * packed lists for the merging or the copy back (1,032 bytes a row), and
 * the order's 12 bytes a pair of a launch (16 where pairs go to rows
 * outside the run's query rows). */
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

#define KCV_THREADS 256
#define KCV_L CURVE_LIST
/* One device's state, by the curve's row. */
struct kcv_dev {
    int device;
    double *core2;
    uint32_t *comp, *at;
    unsigned long long *reach; /* keys; NULL: no reachability this round */
    krs_sets s;                /* n x L edges, (w, other row) */
    curve_list *pack;          /* n: the lists packed for the merging or the copy back */
    unsigned long long *rin;   /* n: another device's reachability keys (the first device) */
    kern_rowmap rm;            /* a layout's rows (run row -> at's row) */
    krs_order order;           /* a launch's pairs in their rows' order */
};

static std::mutex g_kcv_mu;
static kcv_dev *g_kcv[KERN_DEV_SLOTS];
static double g_kcv_max2;
/* TCJOIN_TRACE: the consumer's launches timed, each between two
 * stream synchronisations (the trace's runs lose the overlap). */
static int g_kcv_trace;
static double g_kcv_consume_s;

/* The round's offer (krs_pairs_kernel), src/cluster/dbscan_curve.c's
 * round_range for each pair: the reachability of the pair's query row,
 * and the edge w = max(core2[row], core2[o], d2) to row's set where it
 * is at most max2 and leaves row's component. The query row's set takes
 * every pair's edge; the other row's only where it is not a query row of
 * the run (krs_order keys it then): a query row gets each of its edges
 * as a pair of its own, (j, i), from any run that lists every ordered
 * pair of its query rows. */
struct kcv_offer {
    const double *core2;
    const uint32_t *comp, *at;
    unsigned long long *reach;
    double max2;
    __device__ uint32_t row(uint32_t r) const
    {
        return at ? at[r] : r;
    }
    __device__ void value(uint32_t row, uint32_t o, double d2, bool query, double *v,
                          uint32_t *j) const
    {
        const double ci = core2[row], co = core2[o];
        if (query && reach) {
            const unsigned long long k = kern_f64_key(co > d2 ? co : d2);
            if (k < ((volatile unsigned long long *)reach)[row])
                atomicMin(&reach[row], k);
        }
        double w = ci > co ? ci : co;
        if (d2 > w)
            w = d2;
        if (w <= max2 && comp[row] != comp[o]) {
            *v = w;
            *j = o;
        }
    }
};

/* The reachabilities (uploaded as doubles) to keys. */
static __global__ void kcv_init_kernel(size_t n, unsigned long long *reach)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        reach[i] = kern_f64_key(__longlong_as_double((long long)reach[i]));
}

/* Another device's reachability keys into this one's. */
static __global__ void kcv_reach_min_kernel(size_t n, unsigned long long *reach,
                                            const unsigned long long *in)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (in[i] < reach[i])
            reach[i] = in[i];
}

/* Each row's set sorted, its repeats dropped, packed as a curve_list in
 * descending order (a max-heap: e[0] the heaviest; slots past len zero),
 * a warp a row, S slots a lane (krs_slots_for of the list's length);
 * the keys back to doubles. */
template <int S>
static __global__ void __launch_bounds__(KRS_PUT_WARPS * 32)
    kcv_pack_kernel(krs_sets c, size_t n, curve_list *out, unsigned long long *reach)
{
    __shared__ double xd[KRS_PUT_WARPS][32 * S];
    __shared__ uint32_t xj[KRS_PUT_WARPS][32 * S];
    const unsigned lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    for (size_t p = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; p < n; p += warps) {
        const uint32_t len = krs_row_clean<S>(c, p, xd[wid], xj[wid], lane);
        curve_list *l = out + p;
#pragma unroll
        for (int u = 0; u < S; u++) {
            const uint32_t s = 32u * (uint32_t)u + lane;
            if (s < KCV_L) {
                curve_edge e = {0, 0, 0};
                if (s < len) {
                    const uint32_t t = len - 1 - s, o = xj[wid][t], q = (uint32_t)p;
                    e.w = xd[wid][t];
                    e.a = o < q ? o : q;
                    e.b = o < q ? q : o;
                }
                l->e[s] = e;
            }
        }
        if (lane == 0) {
            l->len = len;
            l->pad = 0;
            if (reach)
                reach[p] = (unsigned long long)__double_as_longlong(kern_f64_unkey(reach[p]));
        }
        __syncwarp();
    }
}

/* kern_join_args.pair_dev: the order and the consumer, both in the
 * trace's consumer time. */
static int kcv_consume(void *ctx, const kern_join_args *run, void *stream, const kern_pair_batch *b)
{
    (void)ctx;
    kcv_dev *d = g_kcv[run->device];
    cudaStream_t st = (cudaStream_t)stream;
    const kcv_offer off = {d->core2, d->comp, d->at, d->reach, g_kcv_max2};
    int orc = 0;
    const int rc = kern_consume_launch(
        &d->rm, run, st, g_kcv_trace, &g_kcv_consume_s, [&](const uint32_t *map) {
            orc = krs_consume(d->order, d->s, off, map, run, b, st, "dbscan curve's order");
        });
    return rc ? rc : orc;
}

static void kcv_free(kcv_dev &d)
{
    kern_consume_free(d.device, {d.core2, d.comp, d.at, d.reach, d.s.hd, d.s.hj, d.s.len, d.pack,
                                 d.rin, d.rm.map});
    krs_order_free(d.device, d.order);
}

static int kcv_malloc(void *p, size_t bytes)
{
    return kern_consume_malloc(p, bytes, "dbscan curve");
}

/* One device's state, the round's inputs uploaded. */
static int kcv_alloc(kcv_dev &d, const kern_join_args *a, const curve_round_io *io)
{
    const size_t n = io->n;
    KERN_CUDA(cudaSetDevice(d.device));
    int rc;
    if ((rc = kcv_malloc(&d.core2, n * 8)) || (rc = kcv_malloc(&d.comp, n * 4)) ||
        (io->at && (rc = kcv_malloc(&d.at, a->n * 4))) ||
        (io->reach2 && (rc = kcv_malloc(&d.reach, n * 8))) ||
        (rc = krs_alloc(&d.s, n, KCV_L, "dbscan curve")) ||
        (rc = kcv_malloc(&d.pack, n * sizeof(curve_list))))
        return rc;
    KERN_CUDA(cudaMemcpy(d.core2, io->core2, n * 8, cudaMemcpyHostToDevice));
    KERN_CUDA(cudaMemcpy(d.comp, io->comp, n * 4, cudaMemcpyHostToDevice));
    if (io->at)
        KERN_CUDA(cudaMemcpy(d.at, io->at, a->n * 4, cudaMemcpyHostToDevice));
    if (io->reach2) {
        KERN_CUDA(cudaMemcpy(d.reach, io->reach2, n * 8, cudaMemcpyHostToDevice));
        kcv_init_kernel<<<kern_grid_blocks(n, KCV_THREADS), KCV_THREADS>>>(n, d.reach);
        KERN_CUDA(cudaGetLastError());
    }
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* Every device's sets and reachabilities into the first's (through the
 * host: devices need not see each other), then the first's to io. */
static int kcv_collect(std::vector<kcv_dev> &dv, const curve_round_io *io)
{
    const size_t n = io->n;
    kcv_dev &d0 = dv[0];
    std::vector<unsigned long long> rt(dv.size() > 1 && io->reach2 ? n : 0);
    for (size_t k = 1; k < dv.size(); k++) {
        kcv_dev &d = dv[k];
        int rc = krs_gather(d0.s, d0.device, d.s, d.device, n);
        if (rc)
            return rc;
        if (!io->reach2)
            continue;
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaMemcpy(rt.data(), d.reach, n * 8, cudaMemcpyDeviceToHost));
        KERN_CUDA(cudaSetDevice(d0.device));
        if (!d0.rin && (rc = kcv_malloc(&d0.rin, n * 8)))
            return rc;
        KERN_CUDA(cudaMemcpy(d0.rin, rt.data(), n * 8, cudaMemcpyHostToDevice));
        kcv_reach_min_kernel<<<kern_grid_blocks(n, KCV_THREADS), KCV_THREADS>>>(n, d0.reach,
                                                                                d0.rin);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    KERN_CUDA(cudaSetDevice(d0.device));
    kcv_pack_kernel<krs_slots_for(KCV_L)>
        <<<krs_warp_blocks(n), KRS_PUT_WARPS * 32>>>(d0.s, n, d0.pack, d0.reach);
    KERN_CUDA(cudaGetLastError());
    /* the merging where the lists are (and the curve's end there where no
     * later join is left: the core distances and, where this round kept
     * them, the reachabilities read where they are); where its state does
     * not fit, the lists back to the host's */
    if (io->merge) {
        io->merge->core_dev = d0.core2;
        io->merge->reach_dev = io->reach2 ? (const double *)d0.reach : NULL;
    }
    const int mrc = io->merge ? kern_curve_merge_run(n, d0.pack, NULL, io->merge) : KERN_ENOMEM;
    if (io->merge) /* no device arrays kept past the round */
        io->merge->core_dev = io->merge->reach_dev = NULL;
    if (mrc && mrc != KERN_ENOMEM)
        return mrc;
    if (mrc)
        KERN_CUDA(cudaMemcpy(io->list, d0.pack, n * sizeof(curve_list), cudaMemcpyDeviceToHost));
    else if (io->merge->finished)
        return 0; /* the sorted arrays went to merge->take */
    if (io->reach2)
        KERN_CUDA(cudaMemcpy(io->reach2, d0.reach, n * 8, cudaMemcpyDeviceToHost));
    return 0;
}

static int kcv_run(kern_join_fn fn, const kern_join_args *a, std::vector<kcv_dev> &dv,
                   const curve_round_io *io, kern_join_result *r, double *t_alloc)
{
    int rc;
    const double t0 = kern_now();
    for (auto &d : dv)
        if ((rc = kcv_alloc(d, a, io)))
            return rc;
    *t_alloc = kern_now() - t0;
    kern_join_args b = *a;
    b.mode = KJOIN_PAIRS;
    b.pair_fn = NULL;
    b.pair_dev = kcv_consume;
    b.pair_dev_ctx = NULL;
    b.counts = NULL;
    if ((rc = fn(&b, r)))
        return rc;
    for (auto &d : dv) {
        KERN_CUDA(cudaSetDevice(d.device));
        KERN_CUDA(cudaDeviceSynchronize());
    }
    return kcv_collect(dv, io);
}

extern "C" int kern_curve_round(kern_join_fn fn, const kern_join_args *a0, const curve_round_io *io,
                                kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a0->x || a0->n == 0 || a0->d == 0 || a0->c0 || a0->rows || a0->origin_of || a0->tiles ||
        io->n == 0 || io->n >= KERN_ROW_PAD || (!io->at && a0->n != io->n))
        return kern_fail(KERN_EINVAL, "dbscan curve: bad run (n %zu, d %zu, rows %zu)", a0->n,
                         a0->d, io->n);
    kern_join_args a = *a0;
    std::vector<int> devs;
    const int drc = kern_consume_devices(&a, devs);
    if (drc)
        return drc;
    const int nd = (int)devs.size();
    std::vector<kcv_dev> dv(devs.size());
    for (size_t t = 0; t < devs.size(); t++) {
        memset(&dv[t], 0, sizeof dv[t]);
        dv[t].device = devs[t];
    }
    std::lock_guard<std::mutex> hold(g_kcv_mu);
    g_kcv_max2 = io->max2;
    g_kcv_trace = kern_trace_on();
    g_kcv_consume_s = 0;
    for (auto &d : dv)
        g_kcv[d.device] = &d;
    const double t0 = kern_now();
    double t_alloc = 0;
    const int rc = kcv_run(fn, &a, dv, io, res, &t_alloc);
    size_t order = 0; /* the order's arrays, the largest device's */
    for (auto &d : dv) {
        order = std::max(order, krs_order_bytes(d.order));
        g_kcv[d.device] = NULL;
        kcv_free(d);
    }
    res->mem_peak += (size_t)nd * io->n * (8 + 4 + 8 + 12 * KCV_L + 4 + sizeof(curve_list)) + order;
    const double spent = kern_now() - t0;
    res->t_d2h += std::max(0.0, spent - res->t_kernel - res->t_sink);
    if (kern_trace_on())
        fprintf(stderr,
                "dbscan curve round trace (ms): state %.3f, run+collect+free %.3f, kernels "
                "%.3f, consumer %.3f, pairs %llu\n",
                t_alloc * 1e3, (spent - t_alloc) * 1e3, res->t_kernel * 1e3, g_kcv_consume_s * 1e3,
                (unsigned long long)res->pairs);
    snprintf(res->variant + strlen(res->variant), sizeof res->variant - strlen(res->variant), "%s",
             ", curve edges on the device");
    return rc;
}
