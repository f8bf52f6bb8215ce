/* DBSCAN's curve, one Boruvka join on the device (kern_curve_round,
 * kernels.h): the join's PAIRS run (fn through kern_drive: fasted's
 * formats, exact, exact over the cluster cut) hands every launch's pairs
 * to a consumer kernel on the launch's stream (kern_join_args.pair_dev),
 * as DBSCAN's passes do (kernels/kern_dbscan.cu), and no pair crosses to
 * the host. The host sink this replaces (src/cluster/dbscan_curve.c, round_put)
 * took 4.1 s of a 4.5 s join at 10^6 x 128, S = 64 on an H200: 6.5e7
 * pairs copied back, then every core read the whole batch for its share
 * of the points.
 *
 * Per row: the reachability as an order-preserving 64-bit key (one
 * atomicMin, read first so most pairs take none), and its list of the
 * CURVE_LIST least edges leaving its component as a max-heap of
 * (w, a<<32|b) with the heaviest weight also kept in top[] once the heap
 * is full. An edge heavier than top is dropped without the row's lock;
 * top only falls, so a stale read only sends an edge to the lock, never
 * drops one the heap wants. Under the lock (a spin on a 32-bit word, each
 * lane retrying until it gets it: no lane of a warp waits on another's
 * release inside one loop iteration) the heap is read and written through
 * volatile pointers (the L2, not a stale L1) between fences. The heap ends
 * holding the least edges offered by the total order (w, a, b), each once,
 * whatever order the pairs came in: what the host's curve_list_put gives.
 *
 * Memory beyond the dataset and the run's pair buffer: about 170 bytes a
 * row (core distance, component, the key, 8 x 16 bytes of heap, length,
 * top, lock), and the packed lists for the copy back (136 bytes a row). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "kern_consume.cuh"
#include "kern_drive.cuh" /* kern_now */
#include "ptx.cuh"        /* st_release_gpu_u64, ld_acquire_gpu_u64 */

#define KCV_THREADS 256
#define KCV_L CURVE_LIST

/* One device's state, by the curve's row. */
struct kcv_dev {
    int device;
    double *core2;
    uint32_t *comp, *at;
    unsigned long long *reach; /* keys; NULL: no reachability this round */
    double *lw;                /* n x L heap weights */
    unsigned long long *lab;   /* n x L heap ends, a << 32 | b */
    uint32_t *len, *lock;
    double *topw;              /* the full heap's heaviest edge: +inf before */
    unsigned long long *topab; /* its ends (~0 before) */
    curve_list *pack;          /* n: the lists packed for the copy back */
    double *rin;               /* n: another device's reachabilities (the first device) */
    kern_rowmap rm;            /* a layout's rows (run row -> at's row) */
};

/* What the consumer reads, by value. */
struct kcv_arrays {
    const double *core2;
    const uint32_t *comp, *at;
    unsigned long long *reach;
    double *lw;
    unsigned long long *lab;
    uint32_t *len, *lock;
    double *topw;
    unsigned long long *topab;
    double max2;
};

static std::mutex g_kcv_mu;
static kcv_dev *g_kcv[KERN_DEV_SLOTS];
static double g_kcv_max2;
/* TCJOIN_TRACE: the consumer's launches timed, each between two
 * stream synchronisations (the trace's runs lose the overlap). */
static int g_kcv_trace;
static double g_kcv_consume_s;

static unsigned kcv_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KCV_THREADS - 1) / KCV_THREADS, (size_t)4096));
}

/* x before y by (w, a, b): curve_edge_before's order. */
__device__ __forceinline__ bool kcv_before(double wx, unsigned long long x, double wy,
                                           unsigned long long y)
{
    if (wx != wy)
        return wx < wy;
    return x < y;
}

/* The full heap's heaviest edge for the lock-free filter (kcv_skip): the
 * ends first, then the weight with release semantics. A reader takes the
 * weight with acquire semantics, then the ends: it gets (w_k, ab_m) of
 * updates m >= k, and as the heaviest edge only falls, w_m <= w_k, so what
 * it reads is never lighter than the heaviest edge once the update it
 * overlaps is done: an edge not before it would not be kept. */
__device__ __forceinline__ void kcv_publish(const kcv_arrays &c, uint32_t p, double w,
                                            unsigned long long ab)
{
    ((volatile unsigned long long *)c.topab)[p] = ab;
    st_release_gpu_u64(c.topw + p, (unsigned long long)__double_as_longlong(w));
}

/* Whether edge (w, ab) cannot enter row p's heap (the heap is full and
 * its heaviest edge is before it): dropped without the lock. */
__device__ __forceinline__ bool kcv_skip(const kcv_arrays &c, uint32_t p, double w,
                                         unsigned long long ab)
{
    const unsigned long long tw = ld_acquire_gpu_u64(c.topw + p);
    const unsigned long long tab = ((volatile unsigned long long *)c.topab)[p];
    return !kcv_before(w, ab, __longlong_as_double((long long)tw), tab);
}

/* Edge (w, ab) into row p's heap; the caller holds p's lock. */
__device__ void kcv_heap_put(const kcv_arrays &c, uint32_t p, double w, unsigned long long ab)
{
    volatile double *hw = c.lw + (size_t)p * KCV_L;
    volatile unsigned long long *hab = c.lab + (size_t)p * KCV_L;
    volatile uint32_t *len = c.len;
    const uint32_t m = len[p];
    for (uint32_t k = 0; k < m; k++)
        if (hab[k] == ab)
            return; /* the same edge: both orders of a pair, or both ends' runs */
    uint32_t k;
    if (m < KCV_L) {
        k = m;
        while (k > 0 && kcv_before(hw[(k - 1) / 2], hab[(k - 1) / 2], w, ab)) {
            hw[k] = hw[(k - 1) / 2];
            hab[k] = hab[(k - 1) / 2];
            k = (k - 1) / 2;
        }
        hw[k] = w;
        hab[k] = ab;
        len[p] = m + 1;
        if (m + 1 == KCV_L)
            kcv_publish(c, p, hw[0], hab[0]);
        return;
    }
    if (!kcv_before(w, ab, hw[0], hab[0]))
        return;
    k = 0;
    for (;;) { /* the new top sifted down */
        uint32_t ch = 2 * k + 1;
        if (ch >= KCV_L)
            break;
        if (ch + 1 < KCV_L && kcv_before(hw[ch], hab[ch], hw[ch + 1], hab[ch + 1]))
            ch++;
        if (!kcv_before(w, ab, hw[ch], hab[ch]))
            break;
        hw[k] = hw[ch];
        hab[k] = hab[ch];
        k = ch;
    }
    hw[k] = w;
    hab[k] = ab;
    kcv_publish(c, p, hw[0], hab[0]);
}

/* Edges (w[k], ab[k]) for the bits k of mask into row p's heap under its
 * lock (each lane retrying until it takes it, so no lane of a warp waits
 * in one iteration on another's release). */
__device__ void kcv_put_all(const kcv_arrays &c, uint32_t p, const double *w,
                            const unsigned long long *ab, unsigned mask)
{
    bool done = false;
    while (!done) {
        if (atomicCAS(&c.lock[p], 0u, 1u) == 0u) {
            __threadfence();
            for (unsigned g = mask; g; g &= g - 1) {
                const int k = __ffs(g) - 1;
                kcv_heap_put(c, p, w[k], ab[k]);
            }
            __threadfence();
            atomicExch(&c.lock[p], 0u);
            done = true;
        }
    }
}

__device__ void kcv_put(const kcv_arrays &c, uint32_t p, double w, unsigned long long ab)
{
    if (kcv_skip(c, p, w, ab))
        return;
    kcv_put_all(c, p, &w, &ab, 1u);
}

/* One launch's pairs: src/cluster/dbscan_curve.c's round_range for each. The
 * query row's list takes every pair's edge; the other row's only where it
 * is not a query row of the run (run rows outside [q0, q1)): a query row
 * gets each of its edges as a pair of its own, (j, i), from any run that
 * lists every ordered pair of its query rows. The lanes of a warp whose
 * query rows are the same (a tile's row) hand their edges to one lane,
 * which puts them all under one take of the row's lock. */
static __global__ void __launch_bounds__(KCV_THREADS)
    kcv_pairs_kernel(kcv_arrays c, const uint32_t *__restrict__ map, kern_pair_batch b, size_t q0,
                     size_t q1)
{
    __shared__ double s_w[KCV_THREADS];
    __shared__ unsigned long long s_ab[KCV_THREADS];
    const double sc = b.d2_scale ? b.d2_scale : 1.0;
    const unsigned lane = threadIdx.x & 31, wbase = threadIdx.x & ~31u;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long t0 = (unsigned long long)blockIdx.x * blockDim.x + wbase; t0 < b.np;
         t0 += stride) {
        const unsigned long long t = t0 + lane;
        bool edge = false, other = false;
        uint32_t i = 0, j = 0;
        double w = 0;
        unsigned long long ab = 0;
        if (t < b.np) {
            const uint32_t ir = b.pi[t], jr = b.pj[t];
            i = ir;
            j = jr;
            bool ok = true;
            if (map) {
                i = map[i];
                j = map[j];
                ok = i != KERN_ROW_PAD && j != KERN_ROW_PAD;
            }
            if (ok && c.at) {
                i = c.at[i];
                j = c.at[j];
            }
            if (ok && i != j) {
                const double d2 = b.d2_bytes == 8 ? ((const double *)b.pd)[t]
                                                  : (double)((const float *)b.pd)[t] * sc;
                const double ci = c.core2[i], cj = c.core2[j];
                if (c.reach) {
                    const unsigned long long v = kern_f64_key(cj > d2 ? cj : d2);
                    if (v < ((volatile unsigned long long *)c.reach)[i])
                        atomicMin(&c.reach[i], v);
                }
                w = ci > cj ? ci : cj;
                if (d2 > w)
                    w = d2;
                if (w <= c.max2 && c.comp[i] != c.comp[j]) {
                    ab = i < j ? ((unsigned long long)i << 32 | j)
                               : ((unsigned long long)j << 32 | i);
                    edge = !kcv_skip(c, i, w, ab);
                    other = (jr < q0 || jr >= q1) && !kcv_skip(c, j, w, ab);
                }
            }
        }
        /* The query rows' edges, one lane a row. */
        const unsigned want = __ballot_sync(0xffffffffu, edge);
        if (edge) {
            const unsigned grp = __match_any_sync(want, i);
            s_w[threadIdx.x] = w;
            s_ab[threadIdx.x] = ab;
            __syncwarp(grp);
            if (lane == (unsigned)(__ffs(grp) - 1))
                kcv_put_all(c, i, s_w + wbase, s_ab + wbase, grp);
        }
        if (other)
            kcv_put(c, j, w, ab);
        __syncwarp();
    }
}

/* Empty heaps; the reachabilities (uploaded as doubles) to keys. */
static __global__ void kcv_init_kernel(size_t n, double *topw, unsigned long long *topab,
                                       unsigned long long *reach)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        topw[i] = INFINITY;
        topab[i] = ~0ull;
        if (reach)
            reach[i] = kern_f64_key(__longlong_as_double((long long)reach[i]));
    }
}

/* The heaps packed as curve_list (slots past len zero); the keys back
 * to doubles. */
static __global__ void kcv_pack_kernel(kcv_arrays c, size_t n, curve_list *out)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        curve_list l;
        l.len = c.len[p];
        l.pad = 0;
        for (uint32_t k = 0; k < KCV_L; k++) {
            const bool in = k < l.len;
            const unsigned long long ab = c.lab[p * KCV_L + k];
            l.e[k].w = in ? c.lw[p * KCV_L + k] : 0;
            l.e[k].a = in ? (uint32_t)(ab >> 32) : 0;
            l.e[k].b = in ? (uint32_t)ab : 0;
        }
        out[p] = l;
        if (c.reach)
            c.reach[p] = (unsigned long long)__double_as_longlong(kern_f64_unkey(c.reach[p]));
    }
}

/* Another device's packed lists and reachabilities (as doubles) into
 * this one's heaps and keys. */
static __global__ void kcv_merge_kernel(kcv_arrays c, size_t n, const curve_list *in,
                                        const double *reach_in)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        const curve_list &l = in[p];
        for (uint32_t k = 0; k < l.len && k < KCV_L; k++)
            kcv_put(c, (uint32_t)p, l.e[k].w,
                    (unsigned long long)l.e[k].a << 32 | (unsigned long long)l.e[k].b);
        if (c.reach && reach_in) {
            const unsigned long long v = kern_f64_key(reach_in[p]);
            if (v < c.reach[p])
                c.reach[p] = v;
        }
    }
}

static kcv_arrays kcv_of(const kcv_dev &d)
{
    return kcv_arrays{d.core2, d.comp, d.at,   d.reach, d.lw,      d.lab,
                      d.len,   d.lock, d.topw, d.topab, g_kcv_max2};
}

/* kern_join_args.pair_dev. */
static int kcv_consume(void *ctx, const kern_join_args *run, void *stream, const kern_pair_batch *b)
{
    (void)ctx;
    kcv_dev *d = g_kcv[run->device];
    cudaStream_t st = (cudaStream_t)stream;
    return kern_consume_launch(&d->rm, run, st, g_kcv_trace, &g_kcv_consume_s,
                               [&](const uint32_t *map) {
                                   kcv_pairs_kernel<<<kcv_blocks(b->np), KCV_THREADS, 0, st>>>(
                                       kcv_of(*d), map, *b, run->q0, run->q1);
                               });
}

static void kcv_free(kcv_dev &d)
{
    kern_consume_free(d.device, {d.core2, d.comp, d.at, d.reach, d.lw, d.lab, d.len, d.lock, d.topw,
                                 d.topab, d.pack, d.rin, d.rm.map});
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
        (rc = kcv_malloc(&d.lw, n * KCV_L * 8)) || (rc = kcv_malloc(&d.lab, n * KCV_L * 8)) ||
        (rc = kcv_malloc(&d.len, n * 4)) || (rc = kcv_malloc(&d.lock, n * 4)) ||
        (rc = kcv_malloc(&d.topw, n * 8)) || (rc = kcv_malloc(&d.topab, n * 8)) ||
        (rc = kcv_malloc(&d.pack, n * sizeof(curve_list))))
        return rc;
    KERN_CUDA(cudaMemcpy(d.core2, io->core2, n * 8, cudaMemcpyHostToDevice));
    KERN_CUDA(cudaMemcpy(d.comp, io->comp, n * 4, cudaMemcpyHostToDevice));
    if (io->at)
        KERN_CUDA(cudaMemcpy(d.at, io->at, a->n * 4, cudaMemcpyHostToDevice));
    if (io->reach2)
        KERN_CUDA(cudaMemcpy(d.reach, io->reach2, n * 8, cudaMemcpyHostToDevice));
    KERN_CUDA(cudaMemset(d.len, 0, n * 4));
    KERN_CUDA(cudaMemset(d.lock, 0, n * 4));
    kcv_init_kernel<<<kcv_blocks(n), KCV_THREADS>>>(n, d.topw, d.topab, d.reach);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* Every device's lists and reachabilities into the first's (through the
 * host: devices need not see each other), then the first's to io. */
static int kcv_collect(std::vector<kcv_dev> &dv, const curve_round_io *io)
{
    const size_t n = io->n;
    kcv_dev &d0 = dv[0];
    std::vector<curve_list> t(dv.size() > 1 ? n : 0);
    std::vector<double> rt(dv.size() > 1 && io->reach2 ? n : 0);
    for (size_t k = 1; k < dv.size(); k++) {
        kcv_dev &d = dv[k];
        KERN_CUDA(cudaSetDevice(d.device));
        kcv_pack_kernel<<<kcv_blocks(n), KCV_THREADS>>>(kcv_of(d), n, d.pack);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaMemcpy(t.data(), d.pack, n * sizeof(curve_list), cudaMemcpyDeviceToHost));
        if (io->reach2)
            KERN_CUDA(cudaMemcpy(rt.data(), d.reach, n * 8, cudaMemcpyDeviceToHost));
        KERN_CUDA(cudaSetDevice(d0.device));
        KERN_CUDA(cudaMemcpy(d0.pack, t.data(), n * sizeof(curve_list), cudaMemcpyHostToDevice));
        if (io->reach2) {
            int rc = d0.rin ? 0 : kcv_malloc(&d0.rin, n * 8);
            if (rc)
                return rc;
            KERN_CUDA(cudaMemcpy(d0.rin, rt.data(), n * 8, cudaMemcpyHostToDevice));
        }
        kcv_merge_kernel<<<kcv_blocks(n), KCV_THREADS>>>(kcv_of(d0), n, d0.pack,
                                                         io->reach2 ? d0.rin : NULL);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cudaDeviceSynchronize());
    }
    KERN_CUDA(cudaSetDevice(d0.device));
    kcv_pack_kernel<<<kcv_blocks(n), KCV_THREADS>>>(kcv_of(d0), n, d0.pack);
    KERN_CUDA(cudaGetLastError());
    /* the merging where the lists are; where its state does not fit, the
     * lists back to the host's */
    const int mrc = io->merge ? kern_curve_merge_run(n, d0.pack, NULL, io->merge) : KERN_ENOMEM;
    if (mrc && mrc != KERN_ENOMEM)
        return mrc;
    if (mrc)
        KERN_CUDA(cudaMemcpy(io->list, d0.pack, n * sizeof(curve_list), cudaMemcpyDeviceToHost));
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
    for (auto &d : dv) {
        g_kcv[d.device] = NULL;
        kcv_free(d);
    }
    res->mem_peak += (size_t)nd * io->n * (8 + 4 + 8 + 16 * KCV_L + 4 + 4 + 8 + sizeof(curve_list));
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
