/* The k-distance's passes over a warp's fragments (epi_frag.cuh;
 * kern_fasted_kdist, kernels/fasted_kdist.cu): FASTED_KD_MIN, each row's
 * least d2 over a chunk of columns (the per-row bound's sample);
 * FASTED_KD_HIST, each row's pairs under its bound binned and kept while
 * its slots last (with the other row, for exact's FP64); FASTED_KD_BAND, the pairs in each row's
 * chosen bin. A pair counts only when it is real (epi_frag::kd_valid): two different rows, each
 * unordered pair once in a symmetric run. */
#ifndef TCJ_EPI_KDIST_CUH
#define TCJ_EPI_KDIST_CUH

#include "epi_frag.cuh"

/* Bin of d2 in a row's k-distance histogram (FASTED_KD_HIST and _BAND
 * compute it alike, so a row's band holds exactly its bin's count). */
__device__ __forceinline__ int fasted_kd_bin(float d2, float sc)
{
    return min(FASTED_KD_BINS - 1, (int)(d2 * sc));
}

/* FASTED_KD_MIN: each row's least d2 over the warp's columns (self
 * excluded): quad lanes share a row. One lane writes each (row, chunk). */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_kd_min(const epi_frag<F, MT, NT> &f,
                                           typename F::acc (&acc)[MT][NT][4])
{
    const fasted_params &p = f.p;
    float m[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
        m[mt][0] = m[mt][1] = __int_as_float(0x7f800000); /* +inf */
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const float2 sj = f.sj(nt);
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const unsigned i = f.row(mt, e), j = f.col(nt, e);
                const float d2 =
                    F::to_f(f.dist(i, j, acc[mt][nt][e], f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x));
                if (i != j && j < p.n)
                    m[mt][e >> 1] = fminf(m[mt][e >> 1], d2);
            }
    }
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float x = m[mt][h];
            x = fminf(x, __shfl_xor_sync(FASTED_FULL_MASK, x, 1));
            x = fminf(x, __shfl_xor_sync(FASTED_FULL_MASK, x, 2));
            const unsigned i = f.row(mt, 2 * h);
            if ((f.lane & 3) == 0 && i < p.q1)
                p.kd.min[(size_t)(i - p.q0) * p.kd.nchunk + f.w.chunk] = x;
        }
}

/* FASTED_KD_HIST and _BAND: a pair counts for its row when d2 <= the row's
 * bound (and, in a symmetric run, for its column likewise): HIST counts it
 * in the row's bin and keeps its d2 while the row's slots last, BAND keeps
 * its d2 when it falls in the row's chosen bin. Such pairs
 * are rare (a few hundred a row), so each n8 block is first tested with
 * the cheapest form, and the exact checks and the atomics run only for a
 * block that passes.
 *
 * n8 blocks in groups of G: the cheap test marks a group's blocks, then
 * one copy of the exact code serves each marked block, its accumulators
 * picked by a select chain (static register indices), so the code stays
 * small enough for the instruction cache and a group's accumulators die
 * with it. */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_kd_hist(const epi_frag<F, MT, NT> &f,
                                            typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::acc A;
    const fasted_params &p = f.p;
    float ui[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            ui[mt][h] = __ldg(p.kd.u2 + f.row(mt, 2 * h));
    const float2 none = make_float2(-1.0f, -1.0f);
    /* Row g takes d2, binned with the row's scale: HIST counts it in the
     * row's bin and keeps its d2 while the row's slots last, BAND keeps its
     * d2 when it falls in the row's chosen bin. */
    auto take = [&](unsigned g, unsigned other, float d2) {
        const unsigned r = g - p.q0;
        const int b = fasted_kd_bin(d2, __ldg(p.kd.sc + g));
        if (p.mode == FASTED_KD_HIST) {
            atomicAdd(&p.kd.hist[(size_t)r * FASTED_KD_BINS + b], 1u);
            const unsigned k = atomicAdd(&p.kd.dfill[r], 1u);
            if (k < p.kd.cap) {
                p.kd.dvals[(size_t)r * p.kd.cap + k] = d2;
                if (p.kd.dcols)
                    p.kd.dcols[(size_t)r * p.kd.cap + k] = other;
            }
        } else if (b == __ldg(p.kd.bin + g)) {
            const unsigned k = atomicAdd(&p.kd.fill[r], 1u);
            p.kd.vals[p.kd.off[r] + k] = d2;
        }
    };
    constexpr int G = NT < 8 ? NT : 8;
    static_assert(NT % G == 0, "whole groups of n8 blocks");
#pragma unroll
    for (int g0 = 0; g0 < NT; g0 += G) {
        unsigned marks = 0;
#pragma unroll
        for (int t = 0; t < G; t++) {
            const int nt = g0 + t;
            const float2 sj = f.sj(nt);
            const float2 uj = p.sym ? __ldg((const float2 *)(p.kd.u2 + f.col(nt, 0))) : none;
            /* d2 <= ui | d2 <= uj is d2 <= max(ui, uj) (no bound is
             * NaN): the maxima once a block, then one compare an
             * element instead of two. */
            float u[MT][2][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    u[mt][h][0] = fmaxf(ui[mt][h], uj.x);
                    u[mt][h][1] = fmaxf(ui[mt][h], uj.y);
                }
            bool hit = false;
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    hit |= F::to_f(F::d2(acc[mt][nt][e], f.si[mt][e >> 1],
                                         (e & 1) ? sj.y : sj.x)) <= u[mt][e >> 1][e & 1];
            marks |= (hit ? 1u : 0u) << t;
        }
#pragma unroll 1
        while (marks) {
            const int t = __ffs(marks) - 1;
            marks &= marks - 1;
            A v[MT][4];
            fasted_block_acc<G>(acc, g0, t, v);
            const int nt = g0 + t;
            const float2 sj = f.sj(nt);
            const float2 uj = p.sym ? __ldg((const float2 *)(p.kd.u2 + f.col(nt, 0))) : none;
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const unsigned i = f.row(mt, e), j = f.col(nt, e);
                    if (!f.kd_valid(i, j))
                        continue;
                    const float d2 =
                        F::to_f(f.dist(i, j, v[mt][e], f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x));
                    if (d2 <= ui[mt][e >> 1])
                        take(i, j, d2);
                    if (d2 <= ((e & 1) ? uj.y : uj.x))
                        take(j, i, d2);
                }
        }
    }
}

#endif
