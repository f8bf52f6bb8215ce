/* DBSCAN's clustering epilogue on the tensor-core kernels (modes
 * FASTED_CLU_UNION and FASTED_CLU_BORDER, arguments p.dbs; the passes are
 * driven by kernels/fasted_dbscan.cu): what a warp does with a pair of
 * its fragments that is within eps instead of counting or listing it.
 *   union:  both rows core -> clu_union (kernels/clu_uf.cuh), each
 *           unordered pair once in a symmetric run (the upper triangle);
 *           one row core, the other not, and lists given (p.dbs.nb): the
 *           core row onto the other's list (clu_note), from which the
 *           border follows without a join of its own;
 *   border: a non-core row with a core neighbour takes the least root
 *           among them (atomicMin; parent flattened: parent[c] is c's
 *           root), in both directions where the element stands for both
 *           orders (weight 2, a symmetric run).
 * The pair test is the join's (epi_frag::weight: eps, padding, the
 * diagonal), so the eps-graph is exactly the one the same kernel's
 * PAIRS pass lists and dbscan_generic (src/dbscan.c) clusters; an
 * interior block tests each element with its compare alone, as COUNT
 * does. Pairs within eps are rare in a tile: a lane collects its hits of
 * one n8 block as bits, and the work on a hit is one out-of-line
 * function, so the unrolled loops hold a compare per element and nothing
 * else. No memory
 * beyond the O(n) arrays; no pair leaves the device. */
#ifndef TCJ_EPI_CLU_CUH
#define TCJ_EPI_CLU_CUH

#include "clu_uf.cuh"
#include "epi_frag.cuh"

/* One pair (i, j), i != j, within eps; both: the element stands for
 * (j, i) too. Returns 1 for a core-core pair the union pass joined. The
 * arguments by value: a reference to the kernel's parameters would make
 * the compiler copy them to local memory for the call. Static: one copy
 * a translation unit (a header function out of line). */
static __device__ __noinline__ unsigned epi_clu_pair(fasted_clu_params c, int mode, int both,
                                                     unsigned i, unsigned j)
{
    const uint8_t ci = c.core[i], cj = c.core[j];
    if (mode == FASTED_CLU_UNION) {
        if (ci && cj) {
            clu_union(c.parent, i, j);
            return 1;
        }
        if (c.nb && !ci && cj)
            clu_note(c.nb, c.fill, c.cap, i, j);
        if (c.nb && both && ci && !cj)
            clu_note(c.nb, c.fill, c.cap, j, i);
        return 0;
    }
    if (!ci && cj)
        atomicMin(&c.border[i], c.parent[j]);
    if (both && ci && !cj)
        atomicMin(&c.border[j], c.parent[i]);
    return 0;
}

template <class F, int MT, int NT>
__device__ __forceinline__ void epi_clu(const epi_frag<F, MT, NT> &f,
                                        typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::dist D;
    static_assert(MT * 4 <= 32, "a lane's hits of one n8 block fit a word");
    const fasted_params &p = f.p;
    /* A hit with i != j weighs 2 exactly when the run is symmetric
     * (epi_frag::weight_at). */
    const int both = p.sym != 0;
    unsigned joined = 0;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const float2 sj = f.sj(nt);
        unsigned bits = 0;
        if (f.interior) { /* no padding, no i == j, every hit weighs wint */
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    bits |= f.interior_hit(acc[mt][nt][e], f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x)
                            << (mt * 4 + e);
        } else {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    const unsigned i = f.row(mt, e), j = f.col(nt, e);
                    const int wt =
                        f.weight(i, j, acc[mt][nt][e], f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2);
                    if (wt && i != j)
                        bits |= 1u << (mt * 4 + e);
                }
        }
        while (bits) {
            const int b = __ffs(bits) - 1;
            bits &= bits - 1;
            joined += epi_clu_pair(p.dbs, p.mode, both, f.row(b >> 2, b & 3), f.col(nt, b & 3));
        }
    }
    /* The union pass's core-core pairs, for the run's record. */
    if (p.mode == FASTED_CLU_UNION) {
        joined = __reduce_add_sync(FASTED_FULL_MASK, joined);
        if (f.lane == 0 && joined)
            atomicAdd(&p.ctl->count, (unsigned long long)joined);
    }
}

#endif
