/* DBSCAN's lock-free union-find on the device (src/cluster/dbscan.h has the
 * definitions): parent[x] <= x always, links from the larger root to the
 * smaller, so a root is its component's smallest core index. Shared by
 * the FP64 grid path's epilogues (kernels/epi_cluster.cuh) and the pair
 * consumer of the PAIRS-run passes (kernels/kern_dbscan.cu); device
 * functions only. */
#ifndef TCJ_CLU_UF_CUH
#define TCJ_CLU_UF_CUH

#include <stdint.h>

#define CLU_NONE 0xffffffffu /* a non-core row without a core neighbour */

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
 * thread linked it first. Returns the smaller root, a row of the joined
 * tree (its root when no other thread has linked it since). */
__device__ __forceinline__ uint32_t clu_union(uint32_t *parent, uint32_t a, uint32_t b)
{
    for (;;) {
        a = clu_find(parent, a);
        b = clu_find(parent, b);
        if (a == b)
            return a;
        if (a < b) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        const uint32_t old = atomicCAS(&parent[a], a, b);
        if (old == a)
            return b;
        a = old;
    }
}

/* Row i's list of core neighbours (cap a row at nb + i * cap) gains j;
 * fill past cap says the list overflowed (its caller then runs the border
 * pass). */
__device__ __forceinline__ void clu_note(uint32_t *nb, unsigned *fill, unsigned cap, uint32_t i,
                                         uint32_t j)
{
    const unsigned k = atomicAdd(&fill[i], 1u);
    if (k < cap)
        nb[(size_t)i * cap + k] = j;
}

#endif
