/* The PAIRS epilogue over a warp's fragments (epi_frag.cuh): each pair
 * within eps written as (i, j, d2) into the run's buffers (p.pi, p.pj,
 * p.pd), both orders in a symmetric run. A warp reserves its slots at once,
 * all or nothing (fasted_reserve_pairs), so a warp whose pairs do not fit
 * is done again whole (the redo list, kernels/fasted_sched.cuh). Two forms
 * of the same two passes: the wgmma warp slice (MT = 1), which also serves
 * exact's band kernels through the hooks of epi_band.cuh, and the mma.sync
 * warp tile (MT > 1). */
#ifndef TCJ_EPI_PAIRS_CUH
#define TCJ_EPI_PAIRS_CUH

#include "epi_band.cuh"
#include "epi_frag.cuh"

/* The wgmma warp slice (MT = 1). Pass 1 counts the lane's pairs as COUNT
 * does, leaving the accumulators as they are, and the warp reserves its
 * slots at once; it also marks the n8 blocks that hold a pair. Pass 2 runs
 * only in lanes that have pairs, a group of G blocks at a time: one copy
 * of the writing code serves each marked block, its accumulators picked by
 * a select chain. Nothing per element is held between the passes (the hit
 * bits and the d2 copy of an earlier version spilled), and the code stays
 * small enough for the instruction cache.
 *
 * In exact's band kernels pass 1 also tells the band from the sure pairs:
 * in an interior block by the split on moved thresholds
 * (epi_band_split_count), elsewhere by a second look at the marked blocks
 * (epi_band_recount); the sure pairs are counted (epi_band_add_sure), the
 * band is listed (epi_band_pad_pick, epi_band_split_pick, or by the bound:
 * cand_weight, list_weight).
 *
 * The slice builds its own fragment context and tests w.mask after its
 * interior test, as the one-function epilogue did: built by the dispatcher
 * and handed in, the same code compiles to other SASS (the compiler's
 * choices depend on where a value is first formed). */
template <class F, int MT, int NT>
__device__ __forceinline__ void
epi_pairs_slice(const fasted_params &p, typename F::acc (&acc)[MT][NT][4], const fasted_epi &w)
{
    typedef typename F::acc A;
    typedef typename F::dist D;
    float si[MT][2];
    const epi_frag<F, MT, NT> f(p, w, si);
    /* interior: see epi_frag */
    const unsigned wr0 = w.i0, wr1 = w.i0 + 16 * MT, wc0 = w.j0, wc1 = w.j0 + 8 * NT;
    const bool interior = !w.diag && wr1 <= p.q1 && wc1 <= p.n && (wc0 >= wr1 || wc1 <= wr0);
    const unsigned wint = p.sym ? 2u : 1u;
    if (!(w.mask & (1u << w.warp)))
        return;
    static_assert(NT <= 32, "one mark bit per n8 block");
    unsigned cnt = 0, marks_all = 0, sure = 0;
    bool split = false; /* the band and the sure pairs are told apart already */
    float tlo[2] = {0.0f, 0.0f}, thi[2] = {0.0f, 0.0f}; /* exact's split: the rows' T_lo, T_hi */
    /* exact's band decisions (epi_band.cuh); for any other F the weight.
     * list_weight does not reach into the band for other formats: a call
     * that does compiles differently even when it returns wt unchanged. */
    auto cand_weight = [&](unsigned i, unsigned j, A a, float s_i, float sjv, D &d2, int h) -> int {
        return epi_band_cand_weight(f, i, j, a, s_i, sjv, d2, h);
    };
    auto list_weight = [&](int wt, D d2, int h) -> int {
        if constexpr (fasted_band<F>::value)
            return epi_band_list_weight(f, wt, d2, h);
        else
            return wt;
    };
    if (interior) {
        if constexpr (fasted_band<F>::value) {
            if (p.band.bnd) {
                epi_band_split_count(f, acc, wint, tlo, thi, cnt, marks_all, sure);
                split = true;
            }
        }
        if (!split) {
            const D thr[2] = {epi_band_cand_thr(f, 0), epi_band_cand_thr(f, 1)};
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const unsigned c = f.interior_count(acc, nt, f.sj(nt), thr);
                cnt += c;
                marks_all |= (c ? 1u : 0u) << nt;
            }
            cnt *= wint;
        }
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
            unsigned c = 0;
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    c += epi_band_cand_weight(f, f.row(mt, e), f.col(nt, e), acc[mt][nt][e],
                                              f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2, e >> 1);
                }
            cnt += c;
            marks_all |= (c ? 1u : 0u) << nt;
        }
    }
    constexpr int G = NT < 8 ? NT : 8;
    static_assert(NT % G == 0, "whole groups of n8 blocks");
    if constexpr (fasted_band<F>::value) {
        if (p.band.bnd && !split && marks_all)
            epi_band_recount<G>(f, acc, cnt, marks_all, sure);
    }
    const long long o0 = fasted_reserve_pairs(p, cnt, f.lane, w.warp, w.fail);
    if (o0 < 0)
        return;
    epi_band_add_sure(f, sure);
    if (!cnt)
        return;
    unsigned long long o = (unsigned long long)o0;
#pragma unroll
    for (int g0 = 0; g0 < NT; g0 += G) {
        unsigned marks = (marks_all >> g0) & ((1u << G) - 1u);
#pragma unroll 1
        while (marks) {
            const int t = __ffs(marks) - 1;
            marks &= marks - 1;
            A v[MT][4];
            fasted_block_acc<G>(acc, g0, t, v);
            const int nt = g0 + t;
            const float2 sj = f.sj(nt);
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const unsigned i = f.row(mt, e);
                    unsigned j = f.col(nt, e);
                    const float sjv = (e & 1) ? sj.y : sj.x;
                    D d2;
                    int wt;
                    auto by_bound = [&]() {
                        wt = list_weight(
                            cand_weight(i, j, v[mt][e], f.si[mt][e >> 1], sjv, d2, e >> 1), d2,
                            e >> 1);
                    };
                    if constexpr (fasted_band_pad<F>::value) {
                        if (split)
                            wt = epi_band_pad_pick<F>(tlo, thi, v[mt][e], f.si[mt][e >> 1], sjv,
                                                      e >> 1, i, j, d2);
                        else
                            by_bound();
                    } else if (fasted_band<F>::value && split) {
                        wt = epi_band_split_pick<F>(tlo, thi, v[mt][e], f.si[mt][e >> 1], sjv,
                                                    e >> 1, d2);
                    } else {
                        by_bound();
                    }
                    if (!wt)
                        continue;
                    p.pi[o] = i;
                    p.pj[o] = j;
                    p.pd[o] = F::to_f(d2);
                    o++;
                    if (wt == 2) { /* a symmetric run: the other order too */
                        p.pi[o] = j;
                        p.pj[o] = i;
                        p.pd[o] = F::to_f(d2);
                        o++;
                    }
                }
        }
    }
}

/* The mma.sync warp tile (MT > 1): pass 1 turns the accumulators into d2
 * in place and keeps one hit bit per element, so pass 2 holds no second
 * copy of the tile (the two-pass form of the wgmma slice spills more
 * here). Only the warps of the tile still to emit (w.mask) write. */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_pairs_tile(const epi_frag<F, MT, NT> &f,
                                               typename F::acc (&acc)[MT][NT][4])
{
    typedef typename F::dist D;
    const fasted_params &p = f.p;
    if (!(f.w.mask & (1u << f.w.warp)))
        return;
    constexpr int WORDS = MT * NT * 4 / 32;
    unsigned cnt = 0, hits[WORDS];
#pragma unroll
    for (int k = 0; k < WORDS; k++)
        hits[k] = 0;
#pragma unroll
    for (int nt = 0; nt < NT; nt++) {
        const float2 sj = f.sj(nt);
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int bit = (nt * MT + mt) * 4 + e;
                D d2;
                const int wt = f.weight(f.row(mt, e), f.col(nt, e), acc[mt][nt][e],
                                        f.si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2);
                acc[mt][nt][e] = F::to_acc(d2);
                cnt += wt;
                hits[bit / 32] |= (wt ? 1u : 0u) << (bit % 32);
            }
    }
    const long long o0 = fasted_reserve_pairs(p, cnt, f.lane, f.w.warp, f.w.fail);
    if (o0 < 0 || !cnt)
        return;
    unsigned long long o = (unsigned long long)o0;
#pragma unroll
    for (int nt = 0; nt < NT; nt++)
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int bit = (nt * MT + mt) * 4 + e;
                if (!(hits[bit / 32] >> (bit % 32) & 1u))
                    continue;
                const unsigned i = f.row(mt, e), j = f.col(nt, e);
                const float d2 = F::to_f(F::from_acc(acc[mt][nt][e]));
                p.pi[o] = i;
                p.pj[o] = j;
                p.pd[o] = d2;
                o++;
                if (i != j && p.sym) {
                    p.pi[o] = j;
                    p.pj[o] = i;
                    p.pd[o] = d2;
                    o++;
                }
            }
}

#endif
