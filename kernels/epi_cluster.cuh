/* DBSCAN's clustering epilogues (src/dbscan.h has the definitions): what a
 * join kernel does with a pair instead of counting or listing it. The
 * union pass joins core-core pairs within eps in a lock-free union-find
 * whose links always go from the larger root to the smaller, so a root is
 * its component's smallest core index and the clusters are numbered by a
 * prefix sum over roots; the border pass gives each non-core row the
 * smallest root among its core neighbours. Memory: the core flags and one
 * 32-bit parent a row (O(n)); no neighbour list is ever formed.
 *
 * An epilogue is a struct a join kernel is templated on: want(q, c)
 * before the distance (pairs it would drop are never summed), emit(q, c,
 * d2, local) after it, flush(local) at the kernel's end. kern_join_epi is
 * the join's own (f64_emit). The union-find itself is kernels/clu_uf.cuh,
 * shared with the tensor-core kernels' clustering epilogue (epi_clu.cuh);
 * the kernels below are static: kernels/fasted_dbscan.cu runs them too. */
#ifndef TCJ_EPI_CLUSTER_CUH
#define TCJ_EPI_CLUSTER_CUH

#include <stdint.h>

#include "clu_uf.cuh"
#include "f64_common.cuh"

/* The join's epilogue: every pair to the run's f64_out (COUNT, PERPOINT,
 * PAIRS, HIST). */
struct kern_join_epi {
    f64_out o;
    __device__ __forceinline__ double d2max() const
    {
        return o.eps2;
    }
    __device__ __forceinline__ bool want(uint32_t, uint32_t) const
    {
        return true;
    }
    __device__ __forceinline__ void emit(uint32_t q, uint32_t c, double d2,
                                         unsigned long long &local) const
    {
        f64_emit(o, q, c, d2, local);
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        f64_flush(o, local);
    }
};

/* Pass 2: core-core pairs within eps, each unordered pair once (q < c). */
struct clu_union_epi {
    double eps2;
    const uint8_t *core;
    uint32_t *parent;
    unsigned long long *edges; /* pairs joined (a counter, for the record) */
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want(uint32_t q, uint32_t c) const
    {
        return q < c && core[q] && core[c];
    }
    __device__ __forceinline__ void emit(uint32_t q, uint32_t c, double d2,
                                         unsigned long long &local) const
    {
        if (d2 <= eps2) {
            clu_union(parent, q, c);
            local++;
        }
    }
    __device__ __forceinline__ void flush(unsigned long long local) const
    {
        if (local)
            atomicAdd(edges, local);
    }
};

/* Pass 3: a non-core row's smallest root among its core neighbours
 * (parent flattened: parent[c] is c's root). */
struct clu_border_epi {
    double eps2;
    const uint8_t *core;
    const uint32_t *parent;
    uint32_t *border; /* CLU_NONE before the pass */
    __device__ __forceinline__ double d2max() const
    {
        return eps2;
    }
    __device__ __forceinline__ bool want(uint32_t q, uint32_t c) const
    {
        return !core[q] && core[c];
    }
    __device__ __forceinline__ void emit(uint32_t q, uint32_t c, double d2,
                                         unsigned long long &) const
    {
        if (d2 <= eps2)
            atomicMin(&border[q], parent[c]);
    }
    __device__ __forceinline__ void flush(unsigned long long) const {}
};

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
