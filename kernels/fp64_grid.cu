/* The FP64 grid join: `exact`'s path for low-dimensional data whose band
 * is large (src/engine_exact.c decides), `fp64`'s arithmetic over the
 * candidates of ted-index's grid index (kernels/grid_index.cuh). A warp
 * takes a group of up to 32 query points of one cell and the 3^k cells
 * around it; each candidate pair's d2 is fp64.cu's: the sum over
 * k = 0..d-1, in that order, of (a_k - b_k)^2 with __dsub_rn/__dmul_rn/
 * __dadd_rn (no contraction), on the values as loaded. The variance order
 * of the index picks cells only; the rows are uploaded in their own
 * dimension order, never centred, so each pair's d2 is bit-identical to
 * fp64's and every mode equals fp64's (COUNT, PERPOINT, HIST; PAIRS the
 * same set with the same FP64 distances). The loop over dimensions stops
 * once the partial sum passes eps^2, as fp64's does (such a pair is out
 * either way). Like fp64 it ignores `set symmetric` (every ordered pair is
 * computed); PAIRS drain through f64_out and kern_drive, refills split
 * items; a device list shares ranges of query groups through kern_multi's
 * queue. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f64_common.cuh"
#include "epi_cluster.cuh"
#include "grid_gpu.cuh"
#include "grid_index.cuh"
#include "kern_util.cuh"

#define FG_WARPS 8  /* warps per block */
#define FG_GROUP 32 /* query points of one cell per warp: a lane each */
#define FG_K 6      /* dimensions indexed (ted-index's default) */
/* Cells per indexed dimension at most. A cell index is floor((v - lo) /
 * side) in FP64: its absolute error is at most about 2^-52 times the index
 * (one rounding in v - lo, one in the division), 2^26 cells keep it under
 * 2^-25, far inside the 1e-6 margin the cell side has over eps; so a pair
 * that fp64 puts in the join (each rounded (a_k - b_k)^2 <= its sum <=
 * eps^2, hence |a_k - b_k| <= eps (1 + 2^-51)) is never more than one cell
 * apart along any indexed dimension. A dimension needing more cells is
 * left out of the index (candidates grow, the result does not change). */
#define FG_MAX_CELLS 67108864.0
/* Sub-cells up to this d: each cell cut in 2 along every dimension
 * (grid_build_gpu's sub = 1), side s = eps (1 + 1e-6) / 2. Two rows of
 * one sub-cell have equal fine indices floor((v - lo) / s), so each
 * coordinate differs by under s (1 + 2^-23) (the index's error above, a
 * fine index below 2^27), and fp64's d2 of the pair, d such terms each
 * rounded at most (d + 2) 2^-53 relatively, is at most
 * 3 (s (1 + 2^-23))^2 (1 + 2^-50) < 0.76 eps^2 at d = 3: within eps with
 * room to spare, so a sub-cell's pairs need no distance. (At d = 4 the
 * bound reaches eps^2: a finer cut would be needed.) */
#define FG_SUB_MAX_D 3
/* A query's own sub-cell is decided without distances from
 * KERN_GRID_OWN_MIN rows (kernels.h). */
#define FG_OWN_MIN KERN_GRID_OWN_MIN

/* One pair's d2 exactly as fp64_join_kernel forms it; stops once it passes
 * eps2 (or is NaN), when the pair is out either way. D > 0: d known at
 * compile time. */
template <int D>
__device__ __forceinline__ double fg_d2(const double *__restrict__ a, const double *__restrict__ b,
                                        size_t d, double eps2)
{
    double s = 0.0;
    if (D > 0) {
#pragma unroll
        for (int k = 0; k < D; k++) {
            double t = __dsub_rn(a[k], b[k]);
            s = __dadd_rn(s, __dmul_rn(t, t));
        }
    } else {
        for (size_t k = 0; k < d; k++) {
            double t = __dsub_rn(a[k], b[k]);
            s = __dadd_rn(s, __dmul_rn(t, t));
            if (!(s <= eps2))
                break;
        }
    }
    return s;
}

/* Query groups [ga, gb) against candidate positions [pa, pb). x: n rows of
 * d values in cell order. A warp takes groups grp, grp + (warps
 * launched), ... (fg_blocks launches one a group, or fewer for an
 * epilogue with block memory to flush). In a group of len query rows the
 * warp's lanes are 2^lg query slots times 32 / 2^lg sub-lanes (fg_at): a
 * lane keeps its query row in registers and takes every (32 / 2^lg)-th
 * candidate of each neighbour range, so a full group keeps one query a
 * lane and half a group two lanes a query. (The lanes once shared out
 * the group's (query, candidate) pairs by a 64-bit division and modulo a
 * pair, each pair reading its query row again and counting in a shared
 * atomic: 2.4*10^11 candidates a second at 3.7*10^7 x 3, now 5*10^11.)
 * The neighbour ranges (3^(k-1) binary searches of the cell keys) are
 * looked up by up to 32 lanes at once and handed round by shuffles. The
 * epilogue's hooks (epi_cluster.cuh): block_begin/block_end around the
 * block's work with its shared memory (Epi::BLOCK_SMEM: a barrier each,
 * so no warp returns early), warp_begin once, want_q per query row (a
 * group with none wanted walks no cell), want/emit per pair, warp_end
 * after each group (every lane: its sub-lanes hand their counts on),
 * flush at the end with the warp's `local` summed (one atomic a warp: a
 * thread's own on one counter, 2*10^6 threads a launch, serialised in L2).
 * examined (NULL: not counted) gets the distances computed, the
 * candidates of the query rows wanted. */
template <int D, class Epi, bool OWN>
__global__ void __launch_bounds__(FG_WARPS * 32)
    fg_join_kernel(const double *__restrict__ x, size_t d, const uint32_t *__restrict__ ids,
                   const long long *__restrict__ ukey, const size_t *__restrict__ cstart,
                   size_t ncell, const size_t *__restrict__ gpos, const uint32_t *__restrict__ glen,
                   const uint32_t *__restrict__ gcell, const size_t *__restrict__ qpos,
                   const uint32_t *__restrict__ sid, const uint32_t *__restrict__ sbeg,
                   grid_dims grid, size_t ga, size_t gb, size_t pa, size_t pb, Epi e,
                   unsigned long long *examined)
{
    extern __shared__ unsigned long long fg_smem[];
    const unsigned lane = threadIdx.x & 31;
    fg_at at = {fg_smem, (int)(threadIdx.x >> 5), 0, 0, 0, 0, 0, 0, 0, CLU_NONE};
    if (Epi::BLOCK_SMEM) {
        e.block_begin(fg_smem);
        __syncthreads();
    }
    e.warp_begin(at, (int)lane);
    unsigned long long local = 0, exam = 0, skip = 0;
    const double d2max = e.d2max();
    const size_t step = ((size_t)gridDim.x * blockDim.x) >> 5;
    for (size_t grp = ga + (((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5); grp < gb;
         grp += step) { /* uniform over the warp */
        const unsigned len = glen[grp];
        const size_t first = gpos[grp];
        at.lg = len > 1 ? 32 - __clz((int)(len - 1)) : 0;
        const unsigned sub = lane >> at.lg, R = 32u >> at.lg;
        at.qi = lane & ((1u << at.lg) - 1);
        at.cnt = 0;
        at.val = CLU_NONE;
        const bool act = at.qi < len;
        at.qp = act ? qpos[first + at.qi] : 0;
        at.olo = at.ohi = 0;
        if (OWN && act) { /* the query's sub-cell, as the item's candidates hold it */
            const uint32_t r = sid[at.qp];
            const size_t lo = sbeg[r] > pa ? sbeg[r] : pa, hi = sbeg[r + 1] < pb ? sbeg[r + 1] : pb;
            at.olo = (uint32_t)lo;
            at.ohi = (uint32_t)(hi > lo ? hi : lo);
        }
        const uint32_t qid = act ? ids[at.qp] : 0u;
        /* A group none of whose query rows the role wants (DBSCAN's border
         * pass over a dense region's core rows) walks nothing. */
        const bool wq = act && e.want_q(at);
        /* The own sub-cell decided without distances where the role can
         * (its lead lane credits it once): those candidates are skipped.
         * Only a sub-cell of FG_OWN_MIN rows or more: a smaller one saves
         * less than splitting the candidate ranges costs. */
        const bool own = OWN && wq && at.ohi - at.olo >= FG_OWN_MIN && e.own(at, sub == 0);
        if (own && sub == 0)
            skip += at.ohi - at.olo;
        double qv[D > 0 ? D : 1];
        if (D > 0 && wq)
#pragma unroll
            for (int k = 0; k < (D > 0 ? D : 1); k++)
                qv[k] = x[at.qp * d + k];
        const double *qrow = D > 0 ? qv : x + at.qp * d;
        grid_walk gw;
        grid_walk_init(grid, ukey[gcell[grp]], gw);
        if (!__any_sync(0xffffffffu, wq))
            gw.nnb = 0;
        for (int nb0 = 0; nb0 < gw.nnb; nb0 += 32) {
            size_t mcs = 0, mce = 0;
            const bool ok =
                nb0 + (int)lane < gw.nnb &&
                grid_walk_range(grid, gw, nb0 + (int)lane, ukey, ncell, cstart, pa, pb, mcs, mce);
            for (unsigned m = __ballot_sync(0xffffffffu, ok); m; m &= m - 1) {
                const int j = __ffs(m) - 1;
                const size_t cs = __shfl_sync(0xffffffffu, mcs, j);
                const size_t ce = __shfl_sync(0xffffffffu, mce, j);
                if (!wq)
                    continue;
                const size_t c0 = Epi::UPPER && cs <= at.qp ? at.qp + 1 : cs;
                /* [c0, ce) less the own sub-cell where it was decided */
                for (int part = 0; part < (OWN ? 1 + own : 1); part++) {
                    size_t c = part ? ((size_t)at.ohi > c0 ? at.ohi : c0) : c0;
                    const size_t end = own && !part ? ((size_t)at.olo < ce ? at.olo : ce) : ce;
                    c += ((size_t)sub - c) & (R - 1); /* c = sub mod R */
                    if (c < end)
                        exam += (end - c + R - 1) >> (5 - at.lg);
                    for (; c < end; c += R) {
                        at.cp = c;
                        const uint32_t cid = ids[c];
                        if (!e.want(qid, cid, at))
                            continue;
                        const double s = fg_d2<D>(qrow, x + c * d, d, d2max);
                        e.emit(qid, cid, s, local, at);
                    }
                }
            }
        }
        e.warp_end(at, (int)lane, len, qid, at.qp);
        local += at.cnt;
    }
    for (int o = 16; o; o >>= 1) {
        local += __shfl_xor_sync(0xffffffffu, local, o);
        exam += __shfl_xor_sync(0xffffffffu, exam, o);
        skip += __shfl_xor_sync(0xffffffffu, skip, o);
    }
    e.flush(lane == 0 ? local : 0);
    if (examined && lane == 0 && exam)
        atomicAdd(examined, exam);
    if (examined && lane == 0 && skip)
        atomicAdd(examined + 1, skip);
    if (Epi::BLOCK_SMEM) {
        __syncthreads();
        e.block_end(fg_smem);
    }
}

/* HIST with the bins in shared memory: a pair's slot is searched in the
 * block's copy of the edges and counted with a shared atomic; the block
 * adds its non-zero bins to the run's once at its end. (One global atomic
 * a pair on ~1000 bins, most pairs in the top few, serialises in L2 and
 * dominates a 10^7 x 3 sweep: docs/history/BENCHMARKS-2026-11.md.) Each
 * bin of a block counts at most
 * its warps' candidates, 64-bit. */
struct fg_hist_epi : fg_out_base {
    static const bool BLOCK_SMEM = true, UPPER = false;
    static size_t smem_bytes(int nbins)
    {
        return (size_t)(nbins + 1) * (sizeof(unsigned long long) + sizeof(double));
    }
    __device__ __forceinline__ void block_begin(unsigned long long *sm) const
    {
        double *ed = (double *)(sm + o.nbins + 1);
        for (int s = threadIdx.x; s <= o.nbins; s += blockDim.x) {
            sm[s] = 0;
            ed[s] = o.edges[s];
        }
    }
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         const fg_at &at) const
    {
        if (d2 <= o.eps2)
            atomicAdd(&at.sm[kern_hist_slot(d2, (const double *)(at.sm + o.nbins + 1), o.nbins)],
                      1ULL);
    }
    __device__ __forceinline__ void warp_end(const fg_at &, int, unsigned, uint32_t, size_t) const
    {
    }
    __device__ __forceinline__ void flush(unsigned long long) const {}
    __device__ __forceinline__ void block_end(const unsigned long long *sm) const
    {
        for (int s = threadIdx.x; s <= o.nbins; s += blockDim.x)
            if (sm[s])
                atomicAdd(&o.hist[s], sm[s]);
    }
};

/* PERPOINT with each query row's count in its lanes' registers (at.cnt),
 * summed over its sub-lanes at the group's end and added by its lead
 * lane: one global add a query row a group (was a 64-bit global atomic
 * a pair: DBSCAN's core pass). A count holds at most the
 * candidates of one group: below 2^32 (n < 2^31). */
struct fg_pp_epi : fg_out_base {
    static const bool BLOCK_SMEM = false, UPPER = false;
    /* every row of the query's own sub-cell is within eps of it */
    __device__ __forceinline__ bool own(fg_at &at, bool lead) const
    {
        if (lead)
            at.cnt += (unsigned)(at.ohi - at.olo);
        return true;
    }
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         fg_at &at) const
    {
        at.cnt += d2 <= o.eps2;
    }
    __device__ __forceinline__ void warp_end(const fg_at &at, int lane, unsigned len, uint32_t q,
                                             size_t) const
    {
        const unsigned v = fg_sub_sum(at.cnt, at.lg);
        if (lane < (int)len && v)
            atomicAdd(&o.counts[q - o.q0], (unsigned long long)v);
    }
    __device__ __forceinline__ void flush(unsigned long long) const {}
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}
};

/* COUNT: a pair adds its comparison to the lane's at.cnt (no branch and
 * no switch on the mode a pair, as kern_join_epi's f64_emit has), the
 * kernel sums those into `local` a group, one atomic a warp at the end. */
struct fg_count_epi : fg_out_base {
    FG_EPI_NO_HOOKS
    static const bool UPPER = false;
    /* every row of the query's own sub-cell is within eps of it */
    __device__ __forceinline__ bool own(fg_at &at, bool lead) const
    {
        if (lead)
            at.cnt += (unsigned)(at.ohi - at.olo);
        return true;
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         fg_at &at) const
    {
        at.cnt += d2 <= o.eps2;
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        f64_flush(o, local);
    }
};

struct fg_dev {
    double *x; /* n x d in cell order, each row's own dimension order */
    size_t d;
    grid_dev g;
    int dense;      /* the sub-cells' shortcuts taken (fg_dense_on) */
    int pass;       /* 0: the join (r->out); 1, 2: DBSCAN's union and border */
    int max_blocks; /* resident blocks of a block-memory epilogue (the SMs times 4) */
    clu_union_epi un;
    clu_border_epi bo;
    clu_core_epi co;
};

/* Blocks for an item of groups: one group a warp; an epilogue with block
 * memory to flush takes at most max_blocks, each warp looping. */
static unsigned fg_blocks(const f64_item *it, const fg_dev *v, bool block_smem)
{
    size_t blocks = (it->qb - it->qa + FG_WARPS - 1) / FG_WARPS;
    if (block_smem && v->max_blocks > 0 && blocks > (size_t)v->max_blocks)
        blocks = (size_t)v->max_blocks;
    return (unsigned)(blocks ? blocks : 1);
}

/* sub: whether the role decides a query's own sub-cell without distances
 * (its `own`), and so reads the sub-cells (where the index has them and
 * they are not turned off). The kernel without them is a variant of its
 * own (OWN false): no sub-cell is read and no range is split, so a run
 * that cannot use them costs what it did before they existed. */
template <int D, class Epi, bool OWN>
static int fg_launch_o(f64_run *r, const f64_item *it, const fg_dev *v, const Epi &e, size_t smem)
{
    if (smem > 48 * 1024)
        KERN_CUDA(cudaFuncSetAttribute(fg_join_kernel<D, Epi, OWN>,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    fg_join_kernel<D, Epi, OWN>
        <<<fg_blocks(it, v, Epi::BLOCK_SMEM), FG_WARPS * 32, smem, r->k.st>>>(
            v->x, v->d, v->g.ids, v->g.ukey, v->g.cstart, v->g.ncell, v->g.gpos, v->g.glen,
            v->g.gcell, v->g.qpos, v->g.sid, v->g.sbeg, v->g.grid, it->qa, it->qb, it->ca, it->cb,
            e, v->pass ? NULL : r->out.examined);
    return 0;
}

template <int D, class Epi>
static int fg_launch_e(f64_run *r, const f64_item *it, const fg_dev *v, const Epi &e, size_t smem,
                       bool sub)
{
    if constexpr (D >= 1 && D <= FG_SUB_MAX_D)
        if (sub && v->dense && v->g.sid)
            return fg_launch_o<D, Epi, true>(r, it, v, e, smem);
    return fg_launch_o<D, Epi, false>(r, it, v, e, smem);
}

/* HIST's bins fit a block's shared memory up to this (a few blocks an SM);
 * more bins count in global memory as before. */
#define FG_HIST_SMEM_MAX (96 * 1024)

template <int D> static int fg_launch_d(f64_run *r, const f64_item *it, const fg_dev *v)
{
    /* DBSCAN's passes read no sub-cell in the kernel: the dense cells'
     * rows are left out of the core pass's queries (fg_dense_groups) and
     * each sub-cell's core rows joined before the union pass; splitting
     * the candidate ranges around a query's own sub-cell cost the core
     * and union passes 10-30% more than it saved (uniform and halo sets,
     * 3.7*10^7 x 3, H200). */
    if (v->pass == 1)
        return fg_launch_e<D>(r, it, v, v->un, 0, false);
    if (v->pass == 2)
        return fg_launch_e<D>(r, it, v, v->bo, 0, false);
    if (v->pass == 3)
        return fg_launch_e<D>(r, it, v, v->co, 0, false);
    if (r->out.mode == KJOIN_HIST && fg_hist_epi::smem_bytes(r->out.nbins) <= FG_HIST_SMEM_MAX)
        return fg_launch_e<D>(r, it, v, fg_hist_epi{{r->out}},
                              fg_hist_epi::smem_bytes(r->out.nbins), false);
    /* a sixteenth of the rows in sub-cells of FG_OWN_MIN rows or more:
     * below that the ranges split around them cost more than they save */
    const bool own = v->g.own_rows * 16 >= r->a->n;
    if (r->out.mode == KJOIN_PERPOINT)
        return fg_launch_e<D>(r, it, v, fg_pp_epi{{r->out}}, 0, own);
    if (r->out.mode == KJOIN_COUNT)
        return fg_launch_e<D>(r, it, v, fg_count_epi{{r->out}}, 0, own);
    return fg_launch_e<D>(r, it, v, kern_join_epi{{r->out}}, 0, false);
}

static int fg_launch(f64_run *r, const f64_item *it, void *user)
{
    const fg_dev *v = (const fg_dev *)user;
    int rc;
    /* The low dimensions the path is for, unrolled; any other d looped. */
    switch (v->d) {
    case 1:
        rc = fg_launch_d<1>(r, it, v);
        break;
    case 2:
        rc = fg_launch_d<2>(r, it, v);
        break;
    case 3:
        rc = fg_launch_d<3>(r, it, v);
        break;
    case 4:
        rc = fg_launch_d<4>(r, it, v);
        break;
    case 5:
        rc = fg_launch_d<5>(r, it, v);
        break;
    case 6:
        rc = fg_launch_d<6>(r, it, v);
        break;
    case 7:
        rc = fg_launch_d<7>(r, it, v);
        break;
    case 8:
        rc = fg_launch_d<8>(r, it, v);
        break;
    default:
        rc = fg_launch_d<0>(r, it, v);
        break;
    }
    if (rc)
        return rc;
    KERN_LAUNCH_CHECK("fg_join_kernel");
    return 0;
}

/* The sub-cells' shortcuts, on unless TCJOIN_GRID_DENSE=0 (tests and
 * benchmarks: the same answers computed pair by pair). */
static int fg_dense_on(void)
{
    const char *v = getenv("TCJOIN_GRID_DENSE");
    return !(v && !strcmp(v, "0"));
}

/* The index and rows in cell order, two slots per device ordinal
 * (grid_cache): the curve's first join over the dataset and its later
 * joins over a reordered copy of it take turns, and with one slot each
 * would build its index again. A miss replaces the slot used least
 * recently; the other stays only while it is small (an eighth of the
 * device's memory at most) and no cap (set gpu-mem) is set, so a kept
 * index never takes the room a run needs for its own. */
#define FG_SLOTS 2
static grid_cache g_fg[KERN_DEV_SLOTS][FG_SLOTS];
static unsigned long long g_fg_used[KERN_DEV_SLOTS][FG_SLOTS]; /* last use, 0: never */
static unsigned long long g_fg_clock[KERN_DEV_SLOTS];          /* a device's thread's alone */

void grid_kdist_release(void); /* kernels/grid_kdist.cu: its index and rows */

void fp64_grid_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        for (int t = 0; t < FG_SLOTS; t++) {
            grid_cache_free(g_fg[d][t]);
            g_fg_used[d][t] = 0;
        }
    grid_kdist_release();
}

/* Build the index of a's rows on the device (kernels/grid_gpu.cuh), the
 * rows in cell order beside it, into this device's slot (the run charged
 * for them). A value that is not finite has no cell: the build names it. */
static int fg_build(f64_run *r, const kern_join_args *a, double eps, grid_cache &c)
{
    const size_t used = r->k.mem_used;
    double *x = NULL;
    size_t ngroup = 0;
    int rc = grid_build_gpu(r, a, eps, FG_K, FG_MAX_CELLS, a->d <= FG_SUB_MAX_D ? 1 : 0, FG_GROUP,
                            &c.g, &ngroup, &x, "fp64 grid");
    c.rows[0] = x;
    c.dev = a->device;
    if (rc == 0 && c.g.sid) { /* the rows whose own sub-cell COUNT would credit */
        unsigned long long *cnt = NULL, h[2] = {0, 0};
        rc = kern_malloc(&r->k, (void **)&cnt, sizeof h, "the grid's sub-cells");
        if (rc == 0) {
            cudaStream_t st = r->k.st;
            cudaError_t e = cudaMemsetAsync(cnt, 0, sizeof h, st);
            if (e == cudaSuccess) {
                clu_dense_count_kernel<<<gg_blocks(c.g.nsub) < 1024 ? gg_blocks(c.g.nsub) : 1024,
                                         256, 0, st>>>(c.g.sbeg, c.g.nsub, FG_OWN_MIN, cnt);
                e = cudaGetLastError();
            }
            if (e == cudaSuccess)
                e = cudaMemcpyAsync(h, cnt, sizeof h, cudaMemcpyDeviceToHost, st);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(st);
            kern_free(&r->k, cnt, sizeof h);
            if (e != cudaSuccess)
                rc = kern_cuda_fail(e, "the grid's sub-cells", __FILE__, __LINE__);
            c.g.own_rows = h[1];
        }
    }
    if (rc == 0)
        grid_cache_keep(c, a, eps, FG_K, FG_GROUP, ngroup, r->k.mem_used - used);
    else
        grid_cache_free(c);
    return rc;
}

/* This device's index of a's rows at eps in *out: a slot's when its key
 * matches (charged to the run), else built anew into the slot used least
 * recently (g_fg). */
static int fg_index(f64_run *r, const kern_join_args *a, double eps, grid_cache **out)
{
    r->res->prep_name = "index";
    grid_cache *slot = g_fg[a->device];
    unsigned long long *used = g_fg_used[a->device];
    int t = 0;
    for (int u = 0; u < FG_SLOTS; u++)
        if (grid_cache_is(slot[u], a, eps, FG_K, FG_GROUP)) {
            used[u] = ++g_fg_clock[a->device];
            *out = &slot[u];
            r->res->cache_hit = 1;
            return kern_charge(&r->k, slot[u].bytes, "the grid index");
        }
    for (int u = 1; u < FG_SLOTS; u++)
        if (used[u] < used[t])
            t = u;
    for (int u = 0; u < FG_SLOTS; u++)
        if (u == t || a->mem_cap || slot[u].bytes > r->k.prop.totalGlobalMem / 8) {
            grid_cache_free(slot[u]);
            used[u] = 0;
        }
    used[t] = ++g_fg_clock[a->device];
    *out = &slot[t];
    return fg_build(r, a, eps, slot[t]);
}

/* The whole item list on one device (q NULL), or one device's share of a
 * run over several (kern_multi_fn): each device builds the same index
 * (or finds it in its slot) and takes ranges of query groups from q; a
 * group's candidates and arithmetic do not depend on the range or the
 * device. */
static int fg_run_q(const kern_join_args *a, kern_join_result *res, kern_queue *q,
                    unsigned long long *taken)
{
    double eps = a->mode == KJOIN_HIST ? sqrt(a->hist_edges[a->hist_nbins]) : a->eps;
    if (!(eps > 0) || !isfinite(eps))
        return kern_fail(KERN_EINVAL, "fp64 grid needs a positive finite eps (got %g)", eps);
    f64_run r;
    int rc = f64_begin(&r, a, res, "fp64 grid", 0);
    if (rc)
        return rc;
    r.q = q;
    grid_cache *cp = NULL;
    rc = fg_index(&r, a, eps, &cp);
    grid_cache &c = *cp;
    fg_dev v;
    memset(&v, 0, sizeof v);
    v.d = a->d;
    v.x = (double *)c.rows[0];
    v.g = c.g;
    v.max_blocks = r.k.prop.multiProcessorCount * 4;
    v.dense = fg_dense_on();
    if (rc == 0)
        rc = grid_drive(&r, c.ngroup, fg_launch, &v, "fp64 grid");
    if (rc == 0)
        rc = f64_finish(&r);
    res->d_padded = a->d;
    snprintf(res->variant, sizeof res->variant,
             "fp64 grid k=%d, %zu cells, %zu groups, direct (a-b)^2, no FMA", c.g.grid.k, c.g.ncell,
             c.ngroup);
    if (taken)
        *taken = r.taken;
    f64_end(&r);
    return rc;
}

extern "C" int kern_fp64_grid_run(const kern_join_args *a, kern_join_result *res)
{
    if (!a->x || a->n == 0 || a->d == 0) {
        memset(res, 0, sizeof *res);
        return kern_fail(KERN_EINVAL, "fp64 grid: bad sizes (n %zu, d %zu)", a->n, a->d);
    }
    if (a->c0) { /* kern_stream_run's cross run */
        memset(res, 0, sizeof *res);
        return kern_fail(KERN_ECROSS, "the FP64 grid path takes no cross run: its grid index "
                                      "covers every row of its run");
    }
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, res, fg_run_q);
    return fg_run_q(a, res, NULL, NULL);
}

/* The dense cells' rows, by position: core[p] = 1 where p's sub-cell
 * holds minpts rows or more (core without a distance), else 0; q[p] = 1
 * for the other rows (the core pass's queries), q[n] = 0. */
static __global__ void fg_dense_flag_kernel(const uint32_t *__restrict__ sid,
                                            const uint32_t *__restrict__ sbeg, size_t n,
                                            uint64_t minpts, uint8_t *core, size_t *q)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p <= n;
         p += (size_t)gridDim.x * blockDim.x) {
        if (p == n) {
            q[n] = 0;
            continue;
        }
        const uint32_t r = sid[p];
        const bool d = sbeg[r + 1] - sbeg[r] >= minpts;
        core[p] = d;
        q[p] = !d;
    }
}

static __global__ void fg_qpos_kernel(const size_t *__restrict__ q,
                                      const size_t *__restrict__ qpos_of, size_t n, size_t *qpos)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        if (q[p])
            qpos[qpos_of[p]] = p;
}

/* Query groups of the rows outside dense cells (the core pass's only
 * queries: a group of dense rows would walk its cells for nothing, and
 * one mixing them walks for the others), as grid_build_gpu forms them:
 * each cell's such rows cut into groups of FG_GROUP. g gets the index
 * with those groups, *ngroup their number; t the scratch. */
static int fg_dense_groups(f64_run *r, const grid_dev &g0, size_t n, uint64_t minpts,
                           uint8_t *dcore, gg_tmp &t, grid_dev &g, size_t *ngroup)
{
    cudaStream_t st = r->k.st;
    const size_t nc = g0.ncell;
    size_t *q, *qpos_of, *qpos, *ng, *goff, *gpos, bytes = 0, b2 = 0, ngr = 0;
    uint32_t *glen, *gcell;
    void *tmp;
    int rc;
    KERN_CUDA(
        cub::DeviceScan::ExclusiveSum(NULL, bytes, (size_t *)NULL, (size_t *)NULL, (int)n + 1, st));
    KERN_CUDA(
        cub::DeviceScan::ExclusiveSum(NULL, b2, (size_t *)NULL, (size_t *)NULL, (int)nc + 1, st));
    bytes = bytes > b2 ? bytes : b2;
    if ((rc = gg_alloc(t, (void **)&q, (n + 1) * sizeof *q, "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&qpos_of, (n + 1) * sizeof *qpos_of,
                       "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&qpos, n * sizeof *qpos, "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&ng, (nc + 1) * sizeof *ng, "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&goff, (nc + 1) * sizeof *goff, "the dense cells' queries")) ||
        (rc = gg_alloc(t, &tmp, bytes, "the dense cells' queries")))
        return rc;
    fg_dense_flag_kernel<<<gg_blocks(n + 1), GG_THREADS, 0, st>>>(g0.sid, g0.sbeg, n, minpts, dcore,
                                                                  q);
    KERN_LAUNCH_CHECK("fg_dense_flag_kernel");
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(tmp, bytes, q, qpos_of, (int)n + 1, st));
    fg_qpos_kernel<<<gg_blocks(n), GG_THREADS, 0, st>>>(q, qpos_of, n, qpos);
    KERN_LAUNCH_CHECK("fg_qpos_kernel");
    gg_ngroup_kernel<<<gg_blocks(nc + 1), GG_THREADS, 0, st>>>(g0.cstart, qpos_of, nc, FG_GROUP,
                                                               ng);
    KERN_LAUNCH_CHECK("gg_ngroup_kernel");
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(tmp, bytes, ng, goff, (int)nc + 1, st));
    KERN_CUDA(cudaMemcpyAsync(&ngr, goff + nc, sizeof ngr, cudaMemcpyDeviceToHost, st));
    KERN_CUDA(cudaStreamSynchronize(st));
    if ((rc = gg_alloc(t, (void **)&gpos, (ngr ? ngr : 1) * sizeof *gpos,
                       "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&glen, (ngr ? ngr : 1) * sizeof *glen,
                       "the dense cells' queries")) ||
        (rc = gg_alloc(t, (void **)&gcell, (ngr ? ngr : 1) * sizeof *gcell,
                       "the dense cells' queries")))
        return rc;
    if (ngr) {
        gg_group_kernel<<<gg_blocks(ngr), GG_THREADS, 0, st>>>(g0.cstart, qpos_of, goff, nc, ngr,
                                                               FG_GROUP, gpos, glen, gcell);
        KERN_LAUNCH_CHECK("gg_group_kernel");
    }
    g = g0;
    g.qpos = qpos;
    g.gpos = gpos;
    g.glen = glen;
    g.gcell = gcell;
    *ngroup = ngr;
    return 0;
}

/* TCJOIN_TRACE: fg_dbscan's steps, each after a stream
 * synchronisation, in milliseconds on stderr (benchmarks; the
 * synchronisations change nothing else). */
struct fg_trace {
    int on;
    cudaStream_t st;
    double t;
    char line[384];
    size_t len;
};

static void fg_mark(fg_trace &t, const char *step)
{
    if (!t.on)
        return;
    cudaStreamSynchronize(t.st); /* its error, if any, is the next call's */
    const double now = kern_now();
    if (t.len < sizeof t.line)
        t.len += (size_t)snprintf(t.line + t.len, sizeof t.line - t.len, " %s %.2f", step,
                                  (now - t.t) * 1e3);
    t.t = now;
}

/* DBSCAN on the grid (kernels/epi_cluster.cuh), one device, the index
 * and rows shared with the join's runs through the slot: the core flags
 * formed on the device (each query row's count in its lanes' registers,
 * compared with minpts at the group's end, so no count leaves the
 * device; core_out, *pairs and *core_s get the flags by row, the join's
 * pairs and the pass's time); then the union pass over core-core
 * candidates, the roots flattened, each component's smallest row, the
 * border pass over non-core query rows, the labels numbered and sent back
 * by row. */
static int fg_dbscan(const kern_join_args *a0, uint64_t minpts, uint8_t *core_out, int32_t *labels,
                     unsigned long long *pairs, double *core_s, kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a0->x || a0->n == 0 || a0->d == 0 || a0->c0 || a0->q0 != 0 || a0->q1 != a0->n)
        return kern_fail(KERN_EINVAL, "fp64 grid dbscan: bad run (n %zu, d %zu, rows [%zu, %zu))",
                         a0->n, a0->d, a0->q0, a0->q1);
    if (a0->n >= (size_t)INT_MAX) /* the grid index's and the numbering's scan */
        return kern_fail(KERN_EINVAL, "fp64 grid dbscan: %zu rows (at most %d)", a0->n,
                         INT_MAX - 1);
    if (!(a0->eps > 0) || !isfinite(a0->eps))
        return kern_fail(KERN_EINVAL, "fp64 grid needs a positive finite eps (got %g)", a0->eps);
    kern_join_args a = *a0;
    a.mode = KJOIN_COUNT;
    if (a.ndevices > 0) /* the union-find lives on one device */
        a.device = a.devices[0];
    a.ndevices = 0;
    const size_t n = a.n;
    fg_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.on = kern_trace_on();
    tr.t = kern_now();
    f64_run r;
    int rc = f64_begin(&r, &a, res, "fp64 grid dbscan", 0);
    if (rc)
        return rc;
    tr.st = r.k.st;
    fg_mark(tr, "begin");
    grid_cache *cp = NULL;
    rc = fg_index(&r, &a, a.eps, &cp);
    grid_cache &c = *cp;
    fg_mark(tr, "index");
    /* By position in cell order (epi_cluster.cuh): the flags, parents,
     * border numbers; minrow by root; by row: the numbering's head flags
     * and then the labels in dout (n + 1: the scan's total), their sum in
     * num. */
    uint8_t *drow = NULL, *dcore = NULL;
    uint32_t *parent = NULL, *border = NULL, *minrow = NULL, *dout = NULL, *num = NULL;
    /* edges[0] the unions called; [1], [2] the dense cells and their rows */
    unsigned long long *edges = NULL, nedges = 0, dense[2] = {0, 0};
    void *scan_tmp = NULL;
    size_t scan_bytes = 0;
    fg_dev v;
    memset(&v, 0, sizeof v);
    v.d = a.d;
    v.x = (double *)c.rows[0];
    v.g = c.g;
    v.max_blocks = r.k.prop.multiProcessorCount * 4;
    v.dense = fg_dense_on();
    const unsigned blocks = gg_blocks(n);
    cudaStream_t st = r.k.st;
    if (rc == 0 && ((rc = f64_malloc(&r, (void **)&drow, n, "the core flags")) ||
                    (rc = f64_malloc(&r, (void **)&dcore, n, "the core flags")) ||
                    (rc = f64_malloc(&r, (void **)&parent, n * sizeof *parent, "the union-find")) ||
                    (rc = f64_malloc(&r, (void **)&border, n * sizeof *border, "the union-find")) ||
                    (rc = f64_malloc(&r, (void **)&minrow, n * sizeof *minrow, "the union-find")) ||
                    (rc = f64_malloc(&r, (void **)&dout, (n + 1) * sizeof *dout, "the labels")) ||
                    (rc = f64_malloc(&r, (void **)&num, (n + 1) * sizeof *num, "the labels")) ||
                    (rc = f64_malloc(&r, (void **)&edges, 3 * sizeof *edges, "the union-find"))))
        goto out;
    if (rc)
        goto out;
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, dout, num, (int)n + 1, st), out);
    scan_bytes = scan_bytes ? scan_bytes : 1;
    if ((rc = f64_malloc(&r, &scan_tmp, scan_bytes, "the labels")))
        goto out;
    KERN_CUDA_GOTO(cudaMemsetAsync(edges, 0, sizeof *edges, st), out);
    KERN_CUDA_GOTO(cudaMemsetAsync(minrow, 0xff, n * sizeof *minrow, st), out);
    fg_mark(tr, "alloc");
    if (v.dense && c.g.sid) { /* the dense cells and their rows */
        KERN_CUDA_GOTO(cudaMemsetAsync(edges + 1, 0, 2 * sizeof *edges, st), out);
        clu_dense_count_kernel<<<gg_blocks(c.g.nsub) < 1024 ? gg_blocks(c.g.nsub) : 1024, 256, 0,
                                 st>>>(c.g.sbeg, c.g.nsub, minpts, edges + 1);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        KERN_CUDA_GOTO(cudaMemcpyAsync(dense, edges + 1, sizeof dense, cudaMemcpyDeviceToHost, st),
                       out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        fg_mark(tr, "dense_count");
    }
    {
        const double t0 = kern_now();
        unsigned long long np = 0;
        fg_dev vc = v; /* the core pass's queries: every row, or those outside dense cells */
        size_t ncore_groups = c.ngroup;
        gg_tmp gt;
        memset(&gt, 0, sizeof gt);
        gt.k = &r.k;
        /* A sixteenth of the rows in dense cells at least: below that the
         * new groups cost more than leaving their rows out saves (at
         * 3.7*10^7 rows, with 1.7% of them left out, some three times
         * as much). */
        if (dense[1] * 16 >= n) {
            rc = fg_dense_groups(&r, c.g, n, minpts, dcore, gt, vc.g, &ncore_groups);
            fg_mark(tr, "dense_groups");
        } else {
            v.dense = vc.dense = 0;
            dense[0] = dense[1] = 0;
        }
        vc.pass = 3;
        vc.co = clu_core_epi{a.eps * a.eps, minpts, dcore, edges};
        if (rc == 0)
            rc = grid_drive(&r, ncore_groups, fg_launch, &vc, "fp64 grid dbscan core");
        gg_release(gt);
        if (rc)
            goto out;
        fg_mark(tr, "core");
        clu_core_scatter_kernel<<<blocks, GG_THREADS, 0, st>>>(c.g.ids, dcore, n, drow);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        KERN_CUDA_GOTO(cudaMemcpyAsync(core_out, drow, n, cudaMemcpyDeviceToHost, st), out);
        KERN_CUDA_GOTO(cudaMemcpyAsync(&np, edges, sizeof np, cudaMemcpyDeviceToHost, st), out);
        KERN_CUDA_GOTO(cudaMemsetAsync(edges, 0, sizeof *edges, st), out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        *pairs = np;
        *core_s = kern_now() - t0;
        fg_mark(tr, "flags_d2h");
    }
    clu_init_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, n, parent, border);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    if (v.dense && c.g.sid) { /* each sub-cell's core rows one component already */
        clu_sub_unite_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, c.g.sid, c.g.sbeg, n, minpts,
                                                            parent);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        fg_mark(tr, "sub_unite");
    }
    v.pass = 1;
    v.un = clu_union_epi{a.eps * a.eps, dcore, parent, edges};
    if ((rc = grid_drive(&r, c.ngroup, fg_launch, &v, "fp64 grid dbscan union")))
        goto out;
    fg_mark(tr, "union");
    clu_flatten_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, n, parent);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    fg_mark(tr, "flatten");
    clu_minrow_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, parent, c.g.ids, n, minrow);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    fg_mark(tr, "minrow");
    v.pass = 2;
    v.bo = clu_border_epi{a.eps * a.eps, dcore, parent, minrow, border};
    if ((rc = grid_drive(&r, c.ngroup, fg_launch, &v, "fp64 grid dbscan border")))
        goto out;
    fg_mark(tr, "border");
    /* The numbering: each component's smallest row flagged by row, the
     * flags' exclusive sum, the labels scattered by row over the flags. */
    KERN_CUDA_GOTO(cudaMemsetAsync(dout, 0, (n + 1) * sizeof *dout, st), out);
    clu_head_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, parent, minrow, c.g.ids, n, dout);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, dout, num, (int)n + 1, st),
                   out);
    clu_label_kernel<<<blocks, GG_THREADS, 0, st>>>(dcore, parent, minrow, border, c.g.ids, num, n,
                                                    (int32_t *)dout);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    fg_mark(tr, "labels");
    {
        const double t0 = kern_now();
        KERN_CUDA_GOTO(
            cudaMemcpyAsync(labels, dout, n * sizeof *labels, cudaMemcpyDeviceToHost, st), out);
        KERN_CUDA_GOTO(cudaMemcpyAsync(&nedges, edges, sizeof nedges, cudaMemcpyDeviceToHost, st),
                       out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        res->t_d2h += kern_now() - t0;
        fg_mark(tr, "labels_d2h");
    }
    res->pairs = nedges;
    res->dense_cells = dense[0];
    res->dense_rows = dense[1];
out:
    res->d_padded = a.d;
    snprintf(res->variant, sizeof res->variant,
             "fp64 grid k=%d, %zu cells, %zu groups, dbscan union-find in cell order + border pass",
             c.g.grid.k, c.g.ncell, c.ngroup);
    kern_free(&r.k, drow, n);
    kern_free(&r.k, dcore, n);
    kern_free(&r.k, parent, n * sizeof *parent);
    kern_free(&r.k, border, n * sizeof *border);
    kern_free(&r.k, minrow, n * sizeof *minrow);
    kern_free(&r.k, dout, (n + 1) * sizeof *dout);
    kern_free(&r.k, num, (n + 1) * sizeof *num);
    kern_free(&r.k, scan_tmp, scan_bytes);
    kern_free(&r.k, edges, 3 * sizeof *edges);
    fg_mark(tr, "free");
    f64_end(&r);
    if (tr.on)
        fprintf(stderr, "dbscan trace (ms):%s\n", tr.line);
    return rc;
}

extern "C" int kern_fp64_grid_dbscan(const kern_join_args *a, uint64_t minpts, uint8_t *core,
                                     int32_t *labels, unsigned long long *pairs, double *core_s,
                                     kern_join_result *res)
{
    *pairs = 0;
    *core_s = 0;
    if (!core || minpts < 1) {
        memset(res, 0, sizeof *res);
        return kern_fail(KERN_EINVAL, "fp64 grid dbscan: minpts %llu (at least 1)",
                         (unsigned long long)minpts);
    }
    return fg_dbscan(a, minpts, core, labels, pairs, core_s, res);
}
