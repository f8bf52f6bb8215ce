/* The join's epilogues over a warp's fragments (epi_frag.cuh): COUNT, the
 * number of pairs within eps; PERPOINT, each row's (and, in a symmetric
 * run, each column's) count; HIST, the pairs' d2 binned by the shared
 * edges. Each counts an element with its weight (epi_frag::weight: 2 for
 * both orders of a symmetric run's pair, 1 otherwise, 0 for padding and
 * below the diagonal). */
#ifndef TCJ_EPI_JOIN_CUH
#define TCJ_EPI_JOIN_CUH

#include "epi_frag.cuh"
#include "kern_hist.cuh"

/* COUNT: an interior block (epi_frag.cuh) tests each element with its
 * compare alone; the warp adds its count once. */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_join_count(const epi_frag<F, MT, NT> &f,
                                               typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::dist D;
    const fasted_params &p = f.p;
    const bool interior = f.interior;
    const unsigned wint = f.wint;
    unsigned cnt = 0;
    if (interior) {
        const D thr[2] = {f.eps2, f.eps2};
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            cnt += f.interior_count(acc, nt, f.sj(nt), thr);
        cnt *= wint;
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    cnt += f.weight(f.row(mt, e), f.col(nt, e), acc[mt][nt][e], f.si[mt][e >> 1],
                                    (e & 1) ? sj.y : sj.x, d2);
                }
        }
    }
    cnt = __reduce_add_sync(FASTED_FULL_MASK, cnt);
    if (f.lane == 0 && cnt)
        atomicAdd(&p.ctl->count, (unsigned long long)cnt);
}

/* PERPOINT: rows: the 4 lanes of a quad share a row; columns: the 8 lanes
 * with the same lane%4 share a column, reduced per n8 block so no column
 * counters stay live. Pairs within eps are rare in most blocks: an
 * interior block (no padding, no diagonal: every hit weighs wint) tests
 * each element with its compare alone, as COUNT does, and a column block
 * with no hit in the warp skips its shuffles and atomics (one vote). */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_join_perpoint(const epi_frag<F, MT, NT> &f,
                                                  typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::dist D;
    const fasted_params &p = f.p;
    unsigned v[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
        v[mt][0] = v[mt][1] = 0;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const float2 sj = f.sj(nt);
        unsigned c[2] = {0, 0};
        if (f.interior) {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const unsigned h =
                        f.interior_hit(acc[mt][nt][e], f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x);
                    v[mt][e >> 1] += h;
                    c[e & 1] += h; /* read only when symmetric: then every hit weighs 2 */
                }
        } else {
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    const int wt = f.weight(f.row(mt, e), f.col(nt, e), acc[mt][nt][e],
                                            f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2);
                    v[mt][e >> 1] += wt ? 1 : 0;
                    c[e & 1] += wt == 2 ? 1 : 0;
                }
        }
        if (p.sym && __any_sync(FASTED_FULL_MASK, (c[0] | c[1]) != 0)) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                unsigned x = c[e];
                x += __shfl_xor_sync(FASTED_FULL_MASK, x, 4);
                x += __shfl_xor_sync(FASTED_FULL_MASK, x, 8);
                x += __shfl_xor_sync(FASTED_FULL_MASK, x, 16);
                if (f.lane < 4 && x)
                    atomicAdd(&p.counts[f.col(nt, e)], x);
            }
        }
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            unsigned x = v[mt][h];
            x += __shfl_xor_sync(FASTED_FULL_MASK, x, 1);
            x += __shfl_xor_sync(FASTED_FULL_MASK, x, 2);
            if ((f.lane & 3) == 0 && x)
                atomicAdd(&p.counts[f.row(mt, 2 * h) - p.q0], x);
        }
}

/* HIST: each pair's d2 into the block's shared slot counters (w.hist),
 * weighted as COUNT counts it. */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_join_hist(const epi_frag<F, MT, NT> &f,
                                              typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::dist D;
    const fasted_params &p = f.p;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const float2 sj = f.sj(nt);
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                D d2;
                const int wt = f.weight(f.row(mt, e), f.col(nt, e), acc[mt][nt][e],
                                        f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2);
                if (wt)
                    atomicAdd(&f.w.hist[kern_hist_slot(F::to_f(d2), f.w.edges, p.nbins)],
                              (unsigned)wt);
            }
    }
}

#endif
