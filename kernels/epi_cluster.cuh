/* DBSCAN's clustering epilogues (src/dbscan.h has the definitions): what a
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
 * d2, local, at) after it, flush(local) at the kernel's end; and the
 * hooks a role with shared memory uses (kernels/fp64_grid.cu, issue 44):
 * BLOCK_SMEM and block_begin/block_end (the block's memory, between
 * barriers), warp_begin/warp_end (a warp's memory, around each query
 * group; `at` says where the warp's and the pair's query slot are).
 * kern_join_epi is the join's own (f64_emit); the roles here need none
 * of the hooks (FG_EPI_NO_HOOKS). The union-find itself is
 * kernels/clu_uf.cuh, shared with the pair consumer of the PAIRS-run
 * passes; the kernels below are static: kernels/kern_dbscan.cu runs some
 * of them too. */
#ifndef TCJ_EPI_CLUSTER_CUH
#define TCJ_EPI_CLUSTER_CUH

#include <stdint.h>

#include "clu_uf.cuh"
#include "f64_common.cuh"

/* Where a grid kernel's thread stands: the block's dynamic shared memory,
 * its warp in the block, the query slot (0..31 in the warp's group) of
 * the pair being emitted. */
struct fg_at {
    unsigned long long *sm;
    int warp;
    unsigned qi;
    size_t qp, cp; /* the pair's positions in cell order */
};

/* The hooks of a role that keeps nothing in shared memory. */
#define FG_EPI_NO_HOOKS                                                                            \
    static const bool BLOCK_SMEM = false;                                                          \
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}                     \
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}                 \
    __device__ __forceinline__ void warp_begin(const fg_at &, int) const {}                        \
    __device__ __forceinline__ void warp_end(const fg_at &, int, unsigned, uint32_t, size_t) const \
    {                                                                                              \
    }

/* The join's epilogue: every pair to the run's f64_out (COUNT, PERPOINT,
 * PAIRS, HIST). */
struct kern_join_epi {
    f64_out o;
    FG_EPI_NO_HOOKS
    __device__ __forceinline__ double d2max() const
    {
        return o.eps2;
    }
    __device__ __forceinline__ bool want_q(size_t) const
    {
        return true;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &) const
    {
        return true;
    }
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

/* Pass 2 on a grid index, in its cell order (issue 44): core, parent by
 * position, so a warp's candidates, which are consecutive positions, read
 * consecutive flags and parents (in row order each was a random read of
 * 10^7-entry arrays). Core-core pairs within eps, each unordered pair once
 * (q < c by position). A pair whose rows already share a parent is in one
 * component: its distance is never summed (parents only move to
 * ancestors, so equal parents read at any moment mean one tree; most
 * pairs of a dense region end there once its first pairs are joined).
 * Roots are smallest positions; clu_minrow_kernel then gives each
 * component its smallest row. */
struct clu_union_epi {
    double eps2;
    const uint8_t *core;       /* by position */
    uint32_t *parent;          /* by position */
    unsigned long long *edges; /* pairs joined (a counter, for the record) */
    FG_EPI_NO_HOOKS
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(size_t qp) const
    {
        return core[qp];
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &at) const
    {
        if (!(at.qp < at.cp && core[at.qp] && core[at.cp]))
            return false;
        const volatile uint32_t *p = parent;
        return p[at.qp] != p[at.cp];
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &local,
                                         const fg_at &at) const
    {
        if (d2 <= eps2) {
            clu_union(parent, (uint32_t)at.qp, (uint32_t)at.cp);
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
 * neighbours (parent flattened: parent[c] is c's root). A neighbour whose
 * number is no smaller than q's so far changes nothing: its distance is
 * never summed. */
struct clu_border_epi {
    double eps2;
    const uint8_t *core;    /* by position */
    const uint32_t *parent; /* by position */
    const uint32_t *minrow; /* by root position */
    uint32_t *border;       /* by position; CLU_NONE before the pass */
    FG_EPI_NO_HOOKS
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(size_t qp) const
    {
        return !core[qp];
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &at) const
    {
        return !core[at.qp] && core[at.cp] &&
               minrow[parent[at.cp]] < *(const volatile uint32_t *)&border[at.qp];
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &,
                                         const fg_at &at) const
    {
        if (d2 <= eps2)
            atomicMin(&border[at.qp], minrow[parent[at.cp]]);
    }
    __device__ __forceinline__ void flush(unsigned long long) const {}
};

/* Pass 1 on the grid (issue 44): each query row's neighbours within eps
 * (itself included) counted in its warp's shared slot (at.qi), the flag
 * core[qp] = count >= minpts set by its lane at the group's end; the
 * join's pairs summed in `local`. A group's launch covers every
 * candidate (grid_drive: items over all positions), so a slot holds the
 * row's whole count; at most n < 2^32. */
struct clu_core_epi {
    double eps2;
    uint64_t minpts;
    uint8_t *core;                        /* by position */
    unsigned long long *pairs;            /* the join's pairs */
    static const bool BLOCK_SMEM = false; /* a warp's 32 slots: 32 words a warp */
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want_q(size_t) const
    {
        return true;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t, const fg_at &) const
    {
        return true;
    }
    __device__ __forceinline__ void block_begin(unsigned long long *) const {}
    __device__ __forceinline__ void block_end(const unsigned long long *) const {}
    __device__ __forceinline__ void warp_begin(const fg_at &at, int lane) const
    {
        ((uint32_t *)at.sm)[at.warp * 32 + lane] = 0;
        __syncwarp();
    }
    __device__ __forceinline__ void emit(uint32_t, uint32_t, double d2, unsigned long long &local,
                                         const fg_at &at) const
    {
        if (d2 <= eps2) {
            atomicAdd(&((uint32_t *)at.sm)[at.warp * 32 + at.qi], 1u);
            local++;
        }
    }
    __device__ __forceinline__ void warp_end(const fg_at &at, int lane, unsigned len, uint32_t,
                                             size_t qp) const
    {
        __syncwarp();
        uint32_t *slot = (uint32_t *)at.sm + at.warp * 32 + lane;
        if (lane < (int)len)
            core[qp] = *slot >= minpts;
        *slot = 0;
        __syncwarp();
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        if (local)
            atomicAdd(pairs, local);
    }
};

/* The flags back in row order: core[ids[p]] = core_pos[p]. */
static __global__ void clu_core_scatter_kernel(const uint32_t *__restrict__ ids,
                                               const uint8_t *__restrict__ core_pos, size_t n,
                                               uint8_t *core)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        core[ids[p]] = core_pos[p];
}

/* Each component's smallest row: minrow[root] (CLU_NONE before). */
static __global__ void clu_minrow_kernel(const uint8_t *__restrict__ core,
                                         const uint32_t *__restrict__ parent,
                                         const uint32_t *__restrict__ ids, size_t n,
                                         uint32_t *minrow)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        if (core[p])
            atomicMin(&minrow[parent[p]], ids[p]);
}

/* The answer by row: a core row's component's smallest row, a non-core
 * row's border number. */
static __global__ void clu_out_kernel(const uint8_t *__restrict__ core,
                                      const uint32_t *__restrict__ parent,
                                      const uint32_t *__restrict__ minrow,
                                      const uint32_t *__restrict__ border,
                                      const uint32_t *__restrict__ ids, size_t n, uint32_t *root)
{
    for (size_t p = (size_t)blockIdx.x * blockDim.x + threadIdx.x; p < n;
         p += (size_t)gridDim.x * blockDim.x)
        root[ids[p]] = core[p] ? minrow[parent[p]] : border[p];
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

/* Every core row's parent made its root (after the union pass). */
static __global__ void clu_flatten_kernel(const uint8_t *__restrict__ core, size_t n,
                                          uint32_t *parent)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (core[i])
            parent[i] = clu_find(parent, (uint32_t)i);
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
