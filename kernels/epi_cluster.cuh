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
 * the join's own (f64_emit). */
#ifndef TCJ_EPI_CLUSTER_CUH
#define TCJ_EPI_CLUSTER_CUH

#include <stdint.h>

#include "f64_common.cuh"

#define CLU_NONE 0xffffffffu /* a non-core row without a core neighbour */

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

/* The root of x, halving the path as it goes (a racing writer only ever
 * moves a parent to an ancestor, so any value read is on x's path). */
__device__ __forceinline__ uint32_t clu_find(uint32_t *parent_, uint32_t x)
{
    volatile uint32_t *parent = parent_; /* re-read: other threads link and halve */
    uint32_t p = parent[x];
    while (p != x) {
        const uint32_t g = parent[p];
        if (g != p)
            parent[x] = g;
        x = p;
        p = g;
    }
    return x;
}

/* Join the components of a and b: the larger root is linked under the
 * smaller by compare-and-swap, retried from the new roots when another
 * thread linked it first. */
__device__ __forceinline__ void clu_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    for (;;) {
        a = clu_find(parent, a);
        b = clu_find(parent, b);
        if (a == b)
            return;
        if (a < b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicCAS(&parent[a], a, b);
        if (old == a)
            return;
        a = old;
    }
}

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
__global__ void clu_init_kernel(const uint8_t *__restrict__ core, size_t n, uint32_t *parent,
                                uint32_t *border)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        parent[i] = core[i] ? (uint32_t)i : CLU_NONE;
        border[i] = CLU_NONE;
    }
}

/* Every core row's parent made its root (after the union pass). */
__global__ void clu_flatten_kernel(const uint8_t *__restrict__ core, size_t n, uint32_t *parent)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (core[i])
            parent[i] = clu_find(parent, (uint32_t)i);
}

/* The answer a row gets: its root if core, else its border root. */
__global__ void clu_merge_kernel(const uint8_t *__restrict__ core, size_t n,
                                 const uint32_t *__restrict__ border, uint32_t *parent)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (!core[i])
            parent[i] = border[i];
}

#endif
