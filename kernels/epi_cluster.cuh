/* DBSCAN's clustering epilogues (src/cluster/dbscan.h has the definitions): what a
 * join kernel does with a pair instead of counting or listing it. The
 * union pass joins core-core pairs within eps in a lock-free union-find
 * whose links always go from the larger root to the smaller, so a root is
 * its component's smallest core index and the clusters are numbered by a
 * prefix sum over roots; the border pass gives each non-core row the
 * smallest root among its core neighbours. On the grid the union-find
 * runs over positions in cell order and each component's smallest row is
 * found after (clu_minrow_kernel), so the answer by row is the same.
 * Memory: the core flags and a few 32-bit words a row (O(n)); no
 * neighbour list is ever formed.
 *
 * An epilogue is a struct a join kernel is templated on: want_q(qp)
 * per query row (a group with none wanted walks nothing), want(q, c, at)
 * before the distance (pairs it would drop are never summed), emit(q, c,
 * d2, local, at) after it, flush(local) at the kernel's end; UPPER: only
 * pairs whose candidate follows the query in cell order are wanted (the
 * kernel starts each lane's candidates past its query); and the hooks a
 * role with memory of its own uses (kernels/fp64_grid.cu):
 * BLOCK_SMEM and block_begin/block_end (the block's shared memory,
 * between barriers), warp_begin once, warp_end after each query group,
 * every lane of the warp (`at` says where the warp's memory, the lane's
 * query slot and its sub-lanes are; at.cnt and at.val are the lane's own
 * registers, reset for each group, summed or reduced over the query's
 * sub-lanes there with fg_sub_sum/fg_sub_min; at.cnt is then added to the
 * thread's `local`, which flush gets). kern_join_epi is the
 * join's own (f64_emit); the union role needs none of the hooks
 * (FG_EPI_NO_HOOKS). The union-find itself is
 * kernels/clu_uf.cuh, shared with the pair consumer of the PAIRS-run
 * passes; the kernels below are static: kernels/kern_dbscan.cu runs some
 * of them too. */
#ifndef TCJ_EPI_CLUSTER_CUH
#define TCJ_EPI_CLUSTER_CUH

#include <stdint.h>

#include <cub/cub.cuh>

#include "clu_uf.cuh"
#include "f64_common.cuh"

/* Where a grid kernel's thread stands. A warp takes a group of len <= 32
 * query rows of one cell; its lanes are 2^lg query slots (the power of
 * two at or above len) times 32 / 2^lg sub-lanes: lane l holds query
 * slot qi = l mod 2^lg all the group long and takes every (32 / 2^lg)-th
 * candidate, so a lane's query row stays in registers, its count in
 * at.cnt, and no pair needs a division to find its query (the group's
 * lanes below len lead their slots: sub-lane 0). */
struct fg_at {
    unsigned long long *sm; /* the block's dynamic shared memory */
    int warp;               /* in the block */
    unsigned qi, lg;        /* query slot, log2 of the slots */
    size_t qp, cp;          /* the pair's positions in cell order */
    /* The query's sub-cell run [olo, ohi) (grid_dev.sid), clipped to the
     * item's candidates; olo == ohi where the index has no sub-cells
     * (positions: below 2^31, grid_build_gpu). */
    uint32_t olo, ohi;
    unsigned cnt; /* the lane's count (0 at a group's start; added to `local` at its end) */
    uint32_t val; /* the lane's value for its query (CLU_NONE at a group's start) */
};

/* A query slot's sum (minimum) over its sub-lanes, in every lane; all 32
 * lanes call it (lg uniform over the warp). */
__device__ __forceinline__ unsigned fg_sub_sum(unsigned v, unsigned lg)
{
    for (unsigned o = 1u << lg; o < 32; o <<= 1)
        v += __shfl_xor_sync(0xffffffffu, v, (int)o);
    return v;
}
__device__ __forceinline__ uint32_t fg_sub_min(uint32_t v, unsigned lg)
{
    for (unsigned o = 1u << lg; o < 32; o <<= 1) {
        const uint32_t w = __shfl_xor_sync(0xffffffffu, v, (int)o);
        v = w < v ? w : v;
    }
    return v;
}

/* The hooks of a role that keeps nothing in shared memory. */
#define FG_EPI_NO_HOOKS                                                                            \
    static const bool BLOCK_SMEM = false;                                                          \
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}                     \
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}                 \
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}                        \
    __device__ __forceinline__ void warp_end(const fg_at &, int, unsigned, uint32_t, size_t) const \
    {                                                                                              \
    }

/* The roles that write the run's f64_out want every pair at its eps: the
 * join's own (below) and kernels/fp64_grid.cu's COUNT, PERPOINT and HIST
 * derive from this. */
struct fg_out_base {
    f64_out o;
    __device__ __forceinline__ double d2max() const
    {
        return o.eps2;
    }
    __device__ __forceinline__ bool want_q(const fg_at &) const
    {
        return true;
    }
    __device__ __forceinline__ bool own(fg_at &, bool) const
    {
        return false;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &) const
    {
        return true;
    }
};

/* The join's epilogue: every pair to the run's f64_out (COUNT, PERPOINT,
 * PAIRS, HIST). */
struct kern_join_epi : fg_out_base {
    FG_EPI_NO_HOOKS
    static const bool UPPER = false;
    __device__ __forceinline__ void emit(uint32_t q, uint32_t c, double d2,
                                         unsigned long long &local, const fg_at &) const
    {
        f64_emit(o, q, c, d2, local);
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        f64_flush(o, local);
    }
};

/* Pass 2 on a grid index, in its cell order: core, parent by
 * position, so a warp's candidates, which are consecutive positions, read
 * consecutive flags and parents (in row order each was a random read of
 * 10^7-entry arrays). Core-core pairs within eps, each unordered pair once
 * (UPPER: q < c by position). The distance comes first: the rows are
 * read-only and cached near the SM. A pair within eps is joined unless
 * c's parent is at.val, a row the lane already knows to be in q's tree
 * (the root its last union returned): parents only move to ancestors and
 * trees only merge, so that match means one component at any moment, and
 * so does a stale parent (any parent c ever had is in c's tree): the test
 * reads parent[c] through the L1 like the rows, and only the union's own
 * walk (clu_uf.cuh) reads what other threads wrote. Most
 * pairs of a dense region end there once its first pairs are joined.
 * Roots are smallest positions; clu_minrow_kernel then gives each
 * component its smallest row. */
struct clu_union_epi {
    double eps2;
    const uint8_t *core;       /* by position */
    uint32_t *parent;          /* by position */
    unsigned long long *edges; /* unions called (a counter, for the record) */
    FG_EPI_NO_HOOKS
    static const bool UPPER = true;
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(const fg_at &at) const
    {
        return core[at.qp];
    }
    __device__ __forceinline__ bool own(fg_at &, bool) const
    {
        return false;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &at) const
    {
        return core[at.cp];
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &local,
                                         fg_at &at) const
    {
        if (d2 <= eps2 && parent[at.cp] != at.val) {
            at.val = clu_union(parent, (uint32_t)at.qp, (uint32_t)at.cp);
            local++;
        }
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        if (local)
            atomicAdd(edges, local);
    }
};

/* Pass 3, by position: a non-core row's smallest cluster number (its
 * component's smallest row, minrow of its root) among its core
 * neighbours (parent flattened: parent[c] is c's root), the lane's
 * smallest in at.val, the query's over its sub-lanes into border[qp]
 * at the group's end (atomicMin: an item may hold part of a group's
 * candidates). */
struct clu_border_epi {
    double eps2;
    const uint8_t *core;    /* by position */
    const uint32_t *parent; /* by position */
    const uint32_t *minrow; /* by root position */
    uint32_t *border;       /* by position; CLU_NONE before the pass */
    static const bool BLOCK_SMEM = false, UPPER = false;
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(const fg_at &at) const
    {
        return !core[at.qp];
    }
    __device__ __forceinline__ bool own(fg_at &, bool) const
    {
        return false;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &at) const
    {
        return core[at.cp];
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         fg_at &at) const
    {
        if (d2 <= eps2) {
            const uint32_t m = minrow[parent[at.cp]];
            at.val = m < at.val ? m : at.val;
        }
    }
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}
    __device__ __forceinline__ void warp_end(const fg_at &at, int lane, unsigned len, uint32_t,
                                             size_t qp) const
    {
        const uint32_t v = fg_sub_min(at.val, at.lg);
        if (lane < (int)len && v != CLU_NONE)
            atomicMin(&border[qp], v);
    }
    __device__ __forceinline__ void flush(unsigned long long) const {}
};

/* Pass 1 on the grid: each query row's neighbours within eps
 * (itself included) counted in its lanes' at.cnt, summed over the
 * sub-lanes at the group's end, where the lead lane sets core[qp] =
 * count >= minpts; the join's pairs are the counts' sum (`local`). A group's launch
 * covers every candidate (grid_drive: items over all positions), so the
 * sum is the row's whole count; at most n < 2^32. Where the index has
 * sub-cells, the rows of a dense cell (a sub-cell of minpts rows or more,
 * every pair in it within eps) are core without any distance and are not
 * among the pass's queries (kernels/fp64_grid.cu, fg_dense_groups), so
 * `pairs` then sums the other rows' counts only. */
struct clu_core_epi {
    double eps2;
    uint64_t minpts;
    uint8_t *core;             /* by position */
    unsigned long long *pairs; /* the join's pairs */
    static const bool BLOCK_SMEM = false, UPPER = false;
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(const fg_at &) const
    {
        return true;
    }
    __device__ __forceinline__ bool own(fg_at &, bool) const
    {
        return false;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &) const
    {
        return true;
    }
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         fg_at &at) const
    {
        at.cnt += d2 <= eps2;
    }
    __device__ __forceinline__ void warp_end(const fg_at &at, int lane, unsigned len, uint32_t,
                                             size_t qp) const
    {
        const unsigned v = fg_sub_sum(at.cnt, at.lg);
        if (lane < (int)len)
            core[qp] = v >= minpts;
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        if (local)
            atomicAdd(pairs, local);
    }
};

/* Before the union pass, where the index has sub-cells: every core row
 * linked to the first core row of its sub-cell (all within eps of each
 * other, so one component): parent[p] = that row, which is <= p and its
 * own root, as clu_union's links are, so the pass's pairs inside a
 * sub-cell find one tree and call no union. A sub-cell of minpts rows or
 * more is all core (its first row is its start); a smaller one is walked
 * from its start (fewer than minpts steps). */
static __global__ void clu_sub_unite_kernel(const uint8_t *__restrict__ core,
                                            const uint32_t *__restrict__ sid,
                                            const uint32_t *__restrict__ sbeg, size_t n,
                                            uint64_t minpts, uint32_t *parent)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        if (!core[p])
            continue;
        const uint32_t r = sid[p];
        uint32_t f = sbeg[r];
        if (sbeg[r + 1] - f < minpts)
            while (!core[f])
                f++;
        parent[p] = f;
    }
}

/* The dense cells' tally for the record: sub-cells of at least minpts
 * rows (out[0]) and the rows they hold (out[1]); one atomic a block. */
static __global__ void clu_dense_count_kernel(const uint32_t *__restrict__ sbeg, size_t nsub,
                                              uint64_t minpts, unsigned long long *out)
{
    typedef cub::BlockReduce<unsigned long long, 256> red;
    __shared__ typename red::TempStorage tmp;
    unsigned long long cells = 0, rows = 0;
    for (size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x; r < nsub;
         r += (size_t)gridDim.x * blockDim.x) {
        const uint32_t m = sbeg[r + 1] - sbeg[r];
        if (m >= minpts) {
            cells++;
            rows += m;
        }
    }
    cells = red(tmp).Sum(cells);
    __syncthreads();
    rows = red(tmp).Sum(rows);
    if (threadIdx.x == 0 && (cells || rows)) {
        atomicAdd(&out[0], cells);
        atomicAdd(&out[1], rows);
    }
}

/* The flags back in row order: core[ids[p]] = core_pos[p]. */
static __global__ void clu_core_scatter_kernel(const uint32_t *__restrict__ ids,
                                               const uint8_t *__restrict__ core_pos, size_t n,
                                               uint8_t *core)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        core[ids[p]] = core_pos[p];
}

/* Each component's smallest row: minrow[root] (CLU_NONE before). The
 * lanes of a warp with one root (consecutive positions: mostly one
 * component) take their minimum first and send one atomic: a component
 * of 3.7*10^7 rows was as many atomics on one word, serialised in L2.
 * Every lane runs every step of the loop (the shuffles' full mask). */
static __global__ void clu_minrow_kernel(const uint8_t *__restrict__ core,
                                         const uint32_t *__restrict__ parent,
                                         const uint32_t *__restrict__ ids, size_t n,
                                         uint32_t *minrow)
{
    const unsigned lane = threadIdx.x & 31;
    for (size_t b = (size_t)blockIdx.x * blockDim.x + (threadIdx.x & ~31u); b < n;
         b += (size_t)gridDim.x * blockDim.x) {
        const size_t p = b + lane;
        const bool in = p < n && core[p];
        const uint32_t root = in ? parent[p] : CLU_NONE;
        const unsigned same = __match_any_sync(0xffffffffu, root);
        const uint32_t m = __reduce_min_sync(same, in ? ids[p] : CLU_NONE);
        if (in && lane == (unsigned)(__ffs(same) - 1))
            atomicMin(&minrow[root], m);
    }
}

/* The numbering on the device (src/cluster/dbscan.h: clusters in order of each
 * one's smallest core row), after the border pass: head[r] = 1 where row
 * r is its component's smallest row (head zeroed before); an exclusive
 * sum of head in row order is then each such row's cluster number. */
static __global__ void clu_head_kernel(const uint8_t *__restrict__ core,
                                       const uint32_t *__restrict__ parent,
                                       const uint32_t *__restrict__ minrow,
                                       const uint32_t *__restrict__ ids, size_t n, uint32_t *head)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        if (core[p] && minrow[parent[p]] == ids[p])
            head[ids[p]] = 1;
}

/* The labels by row: a core row's component's number, a non-core row's
 * border component's (border[p]: that component's smallest row), -1 for
 * noise; num the exclusive sum of clu_head_kernel's flags. */
static __global__ void clu_label_kernel(const uint8_t *__restrict__ core,
                                        const uint32_t *__restrict__ parent,
                                        const uint32_t *__restrict__ minrow,
                                        const uint32_t *__restrict__ border,
                                        const uint32_t *__restrict__ ids,
                                        const uint32_t *__restrict__ num, size_t n, int32_t *lab)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x) {
        const uint32_t m = core[p] ? minrow[parent[p]] : border[p];
        lab[ids[p]] = m == CLU_NONE ? -1 : (int32_t)num[m];
    }
}

/* parent[i] = i for core rows, CLU_NONE for the others. */
static __global__ void clu_init_kernel(const uint8_t *__restrict__ core, size_t n, uint32_t *parent,
                                       uint32_t *border)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        parent[i] = core[i] ? (uint32_t)i : CLU_NONE;
        border[i] = CLU_NONE;
    }
}

/* Every core row's parent made its root (after the union pass). The
 * walk only reads: a thread writes its own row's entry, and only its
 * root, so any entry another thread reads is an ancestor and every walk
 * ends at the root. (clu_find's path halving here wrote other rows'
 * entries: a halving step that read a row's parent before that row's
 * own thread wrote the root could put an inner ancestor back after it,
 * leaving a row off its root: labels split, seen under racecheck's
 * scheduling on trees four deep.) */
static __global__ void clu_flatten_kernel(const uint8_t *__restrict__ core, size_t n,
                                          uint32_t *parent)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (core[i]) {
            const volatile uint32_t *p = parent;
            uint32_t r = (uint32_t)i, q = p[r];
            while (q != r) {
                r = q;
                q = p[r];
            }
            parent[i] = r;
        }
}

/* The answer a row gets: its root if core, else its border root. */
static __global__ void clu_merge_kernel(const uint8_t *__restrict__ core, size_t n,
                                        const uint32_t *__restrict__ border, uint32_t *parent)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (!core[i])
            parent[i] = border[i];
}

#endif
