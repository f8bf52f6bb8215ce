/* The FASTED epilogue, written once for COUNT, PERPOINT, PAIRS and HIST and
 * used by both mainloops. It reads a warp's accumulators (F::acc: FP32, or
 * S32 for the integer formats) as MT x NT m16n8 fragments (the mma.sync
 * kernel's warp tile; a wgmma warp slice is MT = 1, NT = N/8), so fragment
 * ownership comes from frag_c_row/col.
 *
 * Per element: d2 = F::d2(a, s_i, s_j) (FP32 formats: RN(RN(s_i + s_j) - 2a),
 * 2a exact, clamped at 0; integer formats: the exact integer), exactly 0 on
 * the diagonal, compared with F::thr(p) in registers; F::to_f gives the
 * FP32 value that PAIRS writes and HIST and the k-distance bin. Weight 2
 * for off-diagonal pairs of a symmetric join (both orders), 1 otherwise, 0
 * for padding and, in a tile that reaches the diagonal, below it. */
#ifndef TCJ_FASTED_EPILOGUE_CUH
#define TCJ_FASTED_EPILOGUE_CUH

#include <type_traits>

#include "fasted_sched.cuh"
#include "kern_hist.cuh"
#include "kernels.h"
#include "ptx.cuh"
#include "fasted_format.cuh" /* fasted_band */

/* The accumulators of n8 block g0 + t of a warp's fragments, t < G known
 * only at run time, by a select chain over the group's blocks: every
 * register index stays static (g0 is, once the caller's loop is unrolled),
 * so the accumulators stay in registers. The epilogue's rare paths use it
 * to keep one copy of their code per group of blocks. */
template <int G, int MT, int NT, class A>
__device__ __forceinline__ void fasted_block_acc(const A (&acc)[MT][NT][4], int g0, int t,
                                                 A (&v)[MT][4])
{
#pragma unroll
    for (int u = 0; u < G; u++)
        if (u == t)
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    v[mt][e] = acc[mt][g0 + u][e];
}

/* F::band_pad where F declares it, else false (exact's kernel option,
 * kernels/exact_kern.cuh). */
template <class F, class = void> struct fasted_band_pad {
    static constexpr bool value = false;
};
template <class F> struct fasted_band_pad<F, std::void_t<decltype(F::band_pad)>> {
    static constexpr bool value = F::band_pad;
};

/* Where the epilogue of one warp's fragments writes. */
struct fasted_epi {
    unsigned i0, j0;    /* rows / columns of the warp's first m16 / n8 block */
    bool diag;          /* symmetric run, and the tile may hold j <= i */
    int warp;           /* the warp's bit in mask and *fail */
    unsigned mask;      /* PAIRS: warps of the tile still to emit */
    unsigned *fail;     /* PAIRS: shared bit set of warps whose pairs did not fit */
    const float *edges; /* HIST: shared copy of the edges */
    unsigned *hist;     /* HIST: shared slot counters */
    unsigned chunk;     /* KD_MIN: the warp's column chunk (kd_nchunk per row) */
    /* exact's band, PAIRS: the lane's two rows' thresholds (fasted_band_rows):
     * a pair is a candidate at d~2 <= bhi and sure to be in at <= blo. */
    float blo[2], bhi[2];
};

/* exact's pass (fasted_band: its band kernels, kernels/exact_kern.cuh)
 * with p.band.bnd set (COUNT) lists only its band: a candidate its bound puts
 * in is counted, not listed; one it puts out is never a candidate
 * (fasted_int.cuh). delta is taken with the row's own terms and the
 * column tile's largest (p.band.cmax), per row and tile, before the
 * tile's last wgmma is waited for, so the loads' latency hides behind it
 * and a candidate costs no load. Without p.band.bnd the thresholds are the
 * pass's: every candidate is listed. */
template <class F, bool PAIRS>
__device__ __forceinline__ void fasted_band_rows(const fasted_params &p, fasted_epi &w)
{
    w.blo[0] = w.blo[1] = -1.0f;
    w.bhi[0] = w.bhi[1] = p.eps2;
    if constexpr (fasted_band<F>::value && PAIRS) {
        if (!p.band.bnd)
            return;
        const int lane = threadIdx.x & 31;
        const float2 cm = __ldg(p.band.cmax + w.j0 / 256);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const float2 bi = __ldg(p.band.bnd + w.i0 + frag_c_row(lane, 2 * h));
            const float e = __fadd_ru(bi.x, cm.x), s = __fadd_ru(bi.y, cm.y);
            float dl = __fmaf_ru(__fmul_ru(p.band.k2, e), e, __fmul_ru(p.band.k1, e));
            dl = __fmaf_ru(__fmul_ru(p.band.k3, s), s, dl);
            w.blo[h] = __fsub_rd(p.band.lo, dl);
            w.bhi[h] = __fadd_ru(p.band.hi, dl);
        }
    }
}

/* Bin of d2 in a row's k-distance histogram (FASTED_KD_HIST and _BAND
 * compute it alike, so a row's band holds exactly its bin's count). */
__device__ __forceinline__ int fasted_kd_bin(float d2, float sc)
{
    return min(FASTED_KD_BINS - 1, (int)(d2 * sc));
}

template <class F, int MT, int NT, bool PAIRS>
__device__ __forceinline__ void
fasted_epilogue(const fasted_params &p, typename F::acc (&acc)[MT][NT][4], const fasted_epi &w)
{
    typedef typename F::acc A;
    typedef typename F::dist D;
    static_assert(MT * NT * 4 % 32 == 0, "hit bits fill whole words");
    const int lane = threadIdx.x & 31;
    const unsigned gi = w.i0 + frag_c_row(lane, 0), gj = w.j0 + frag_c_col(lane, 0);
    const D eps2 = F::thr(p);
    auto dist = [&](unsigned i, unsigned j, A a, float si, float sjv) -> D {
        return i == j ? D(0) : F::d2(a, si, sjv);
    };
    auto weight_at = [&](unsigned i, unsigned j, A a, float si, float sjv, D &d2, D thr) -> int {
        d2 = dist(i, j, a, si, sjv);
        if (i >= p.q1 || j >= p.n || !(d2 <= thr))
            return 0;
        /* A point with itself weighs 1; a cluster layout's padding row's
         * self-pair too, which exact's bound lists and its classify drops
         * (exact_bnd_kernel): a test for it costs every pass
         * (docs/ACCURACY.md). */
        if (w.diag)
            return i < j ? 2 : (i == j ? 1 : 0);
        return p.sym ? 2 : 1;
    };
    auto weight = [&](unsigned i, unsigned j, A a, float si, float sjv, D &d2) -> int {
        return weight_at(i, j, a, si, sjv, d2, eps2);
    };
    /* PAIRS, wgmma: a candidate's weight against its row's threshold
     * (fasted_band_rows; h: the lane's row 0 or 1), and the weight it is
     * listed with: 0 when its bound puts it in. */
    auto cand_weight = [&](unsigned i, unsigned j, A a, float si, float sjv, D &d2, int h) -> int {
        if constexpr (fasted_band<F>::value)
            return weight_at(i, j, a, si, sjv, d2, w.bhi[h]);
        else
            return weight(i, j, a, si, sjv, d2);
    };
    auto list_weight = [&](int wt, D d2, int h) -> int {
        if constexpr (fasted_band<F>::value)
            return F::to_f(d2) <= w.blo[h] ? 0 : wt;
        else
            return wt;
    };
    /* The pairs `sure` counts, added once the warp's listed pairs have
     * their slots (a warp that fails is done again whole). */
    auto add_sure = [&](unsigned sure) {
        if constexpr (fasted_band<F>::value) {
            if (p.band.bnd) {
                sure = __reduce_add_sync(FASTED_FULL_MASK, sure);
                if (lane == 0 && sure)
                    atomicAdd(p.band.count, (unsigned long long)sure);
            }
        }
    };
    /* Row of element e of block mt, column of element e of block nt. */
    auto row = [&](int mt, int e) {
        return gi + mt * 16 + (frag_c_row(lane, e) - frag_c_row(lane, 0));
    };
    auto col = [&](int nt, int e) {
        return gj + nt * 8 + (frag_c_col(lane, e) - frag_c_col(lane, 0));
    };
    float si[MT][2];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            si[mt][h] = p.s[row(mt, 2 * h)];
    /* The warp's block is interior when it holds no padding (every row
     * below q1, every column below n), no i == j and, in a symmetric run,
     * no element on or below the diagonal: then every element that passes
     * weighs the same (2 symmetric, 1 not), and its test is the compare
     * alone. Almost every block of a large join is interior; at small d
     * the epilogue is most of the kernel, so the per-element checks of
     * `weight` are worth leaving out there (COUNT, and PAIRS' first pass). */
    const unsigned wr0 = w.i0, wr1 = w.i0 + 16 * MT, wc0 = w.j0, wc1 = w.j0 + 8 * NT;
    const bool interior = !w.diag && wr1 <= p.q1 && wc1 <= p.n && (wc0 >= wr1 || wc1 <= wr0);
    const unsigned wint = p.sym ? 2u : 1u;
    /* Interior: elements with d2 <= thr(h) among the lane's elements of n8
     * block nt (thr per row: h = e >> 1). */
    auto interior_count = [&](int nt, const float2 &sj, const D(&thr)[2]) -> unsigned {
        unsigned c = 0;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float sjv = (e & 1) ? sj.y : sj.x;
                if constexpr (std::is_same<D, float>::value)
                    c -= F::le_mask(acc[mt][nt][e], si[mt][e >> 1], sjv, thr[e >> 1]);
                else
                    c += F::d2(acc[mt][nt][e], si[mt][e >> 1], sjv) <= thr[e >> 1] ? 1u : 0u;
            }
        return c;
    };

    /* k-distance pairs: a real pair of two different rows, each unordered
     * pair once in a symmetric run. */
    auto kd_valid = [&](unsigned i, unsigned j) {
        return i < p.q1 && j < p.n && i != j && (!w.diag || i < j);
    };
    if (!PAIRS && p.mode == FASTED_KD_MIN) {
        /* Each row's least d2 over the warp's columns (self excluded):
         * quad lanes share a row. One lane writes each (row, chunk). */
        float m[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
            m[mt][0] = m[mt][1] = __int_as_float(0x7f800000); /* +inf */
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const unsigned i = row(mt, e), j = col(nt, e);
                    const float d2 =
                        F::to_f(dist(i, j, acc[mt][nt][e], si[mt][e >> 1], (e & 1) ? sj.y : sj.x));
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
                const unsigned i = row(mt, 2 * h);
                if ((lane & 3) == 0 && i < p.q1)
                    p.kd.min[(size_t)(i - p.q0) * p.kd.nchunk + w.chunk] = x;
            }
        return;
    }
    if (!PAIRS && (p.mode == FASTED_KD_HIST || p.mode == FASTED_KD_BAND)) {
        /* A pair counts for its row when d2 <= the row's bound (and, in a
         * symmetric run, for its column likewise): HIST counts it in the
         * row's bin and keeps its d2 while the row's slots last, BAND keeps
         * its d2 when it falls in the row's chosen bin. Such pairs are rare (a few hundred a row),
         * so each n8 block is first tested with the cheapest form, and the exact checks and the
         * atomics run only for a block that passes. */
        float ui[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                ui[mt][h] = __ldg(p.kd.u2 + row(mt, 2 * h));
        const float2 none = make_float2(-1.0f, -1.0f);
        /* Row g takes d2, binned with the row's scale. */
        auto take = [&](unsigned g, float d2) {
            const unsigned r = g - p.q0;
            const int b = fasted_kd_bin(d2, __ldg(p.kd.sc + g));
            if (p.mode == FASTED_KD_HIST) {
                atomicAdd(&p.kd.hist[(size_t)r * FASTED_KD_BINS + b], 1u);
                const unsigned k = atomicAdd(&p.kd.dfill[r], 1u);
                if (k < p.kd.cap)
                    p.kd.dvals[(size_t)r * p.kd.cap + k] = d2;
            } else if (b == __ldg(p.kd.bin + g)) {
                const unsigned k = atomicAdd(&p.kd.fill[r], 1u);
                p.kd.vals[p.kd.off[r] + k] = d2;
            }
        };
        /* n8 blocks in groups of G: the cheap test marks a group's blocks,
         * then one copy of the exact code serves each marked block, its
         * accumulators picked by a select chain (static register indices),
         * so the code stays small enough for the instruction cache and
         * a group's accumulators die with it. */
        constexpr int G = NT < 8 ? NT : 8;
        static_assert(NT % G == 0, "whole groups of n8 blocks");
#pragma unroll
        for (int g0 = 0; g0 < NT; g0 += G) {
            unsigned marks = 0;
#pragma unroll
            for (int t = 0; t < G; t++) {
                const int nt = g0 + t;
                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
                const float2 uj = p.sym ? __ldg((const float2 *)(p.kd.u2 + col(nt, 0))) : none;
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
                        hit |= F::to_f(F::d2(acc[mt][nt][e], si[mt][e >> 1],
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
                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
                const float2 uj = p.sym ? __ldg((const float2 *)(p.kd.u2 + col(nt, 0))) : none;
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const unsigned i = row(mt, e), j = col(nt, e);
                        if (!kd_valid(i, j))
                            continue;
                        const float d2 =
                            F::to_f(dist(i, j, v[mt][e], si[mt][e >> 1], (e & 1) ? sj.y : sj.x));
                        if (d2 <= ui[mt][e >> 1])
                            take(i, d2);
                        if (d2 <= ((e & 1) ? uj.y : uj.x))
                            take(j, d2);
                    }
            }
        }
        return;
    }
    if (!PAIRS && p.mode == KJOIN_COUNT) {
        unsigned cnt = 0;
        if (interior) {
            const D thr[2] = {eps2, eps2};
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
                cnt += interior_count(nt, __ldg((const float2 *)(p.s + col(nt, 0))), thr);
            cnt *= wint;
        } else {
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        D d2;
                        cnt += weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                      (e & 1) ? sj.y : sj.x, d2);
                    }
            }
        }
        cnt = __reduce_add_sync(FASTED_FULL_MASK, cnt);
        if (lane == 0 && cnt)
            atomicAdd(&p.ctl->count, (unsigned long long)cnt);
    } else if (!PAIRS && p.mode == KJOIN_PERPOINT) {
        /* Rows: the 4 lanes of a quad share a row; columns: the 8 lanes
         * with the same lane%4 share a column, reduced per n8 block so no
         * column counters stay live. */
        unsigned v[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
            v[mt][0] = v[mt][1] = 0;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
            unsigned c[2] = {0, 0};
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    const int wt = weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                          (e & 1) ? sj.y : sj.x, d2);
                    v[mt][e >> 1] += wt ? 1 : 0;
                    c[e & 1] += wt == 2 ? 1 : 0;
                }
            if (p.sym) {
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    unsigned x = c[e];
                    x += __shfl_xor_sync(FASTED_FULL_MASK, x, 4);
                    x += __shfl_xor_sync(FASTED_FULL_MASK, x, 8);
                    x += __shfl_xor_sync(FASTED_FULL_MASK, x, 16);
                    if (lane < 4 && x)
                        atomicAdd(&p.counts[col(nt, e)], x);
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
                if ((lane & 3) == 0 && x)
                    atomicAdd(&p.counts[row(mt, 2 * h) - p.q0], x);
            }
    } else if (PAIRS) {
        if (!(w.mask & (1u << w.warp)))
            return;
        if constexpr (MT == 1) {
            /* Pass 1 counts the lane's pairs as COUNT does, leaving the
             * accumulators as they are, and the warp reserves its slots at
             * once (all or nothing, so a warp whose pairs do not fit is done
             * again whole); it also marks the n8 blocks that hold a pair. Pass 2
             * runs only in lanes that have pairs, a group of G blocks at a
             * time: one copy of the writing code serves each marked block,
             * its accumulators picked by a select chain. Nothing per element is
             * held between the passes (the hit bits and the d2 copy of an
             * earlier version spilled), and the code stays small enough for
             * the instruction cache. */
            static_assert(NT <= 32, "one mark bit per n8 block");
            unsigned cnt = 0, marks_all = 0, sure = 0;
            bool split = false; /* the band and the sure pairs are told apart already */
            /* exact's split (below): each row's thresholds moved onto
             * v = s_j - 2a, and the test of one element against them. */
            float tlo[2] = {0.0f, 0.0f}, thi[2] = {0.0f, 0.0f};
            auto band_x = [&](auto a, float sjv, int h, unsigned &xl, unsigned &xh) {
                const float v = __fmaf_rn(-2.0f, a, sjv);
                xl = __float_as_uint(__fsub_rn(tlo[h], v));
                xh = __float_as_uint(__fsub_rn(thi[h], v));
            };
            if (interior) {
                if constexpr (fasted_band<F>::value) {
                    if (p.band.bnd) {
                        /* exact's COUNT: a candidate at or below its row's
                         * blo is sure to be in (counted), the rest up to
                         * bhi is the band, listed; a block is marked when
                         * it holds band. Rather than form d~2 and compare
                         * it twice, the row's terms go into its thresholds
                         * once a tile: T_lo = RD(blo - s_i), T_hi =
                         * RU(bhi - s_i), and an element is
                         * v = RN(s_j - 2a) against them, the sign bit of
                         * RN(T - v) set exactly when v > T (round to
                         * nearest keeps a difference's sign and gives +0
                         * for T = v; every value here is finite). Then
                         * v <= T_lo means s_i + v <= blo and v > T_hi
                         * means s_i + v > bhi, with s_i + v taken exactly:
                         * it carries one rounding (of at most 2^-24
                         * |s_j - 2a| <= 2^-24 (N_x + N_y)^2) where d~2 =
                         * RN(RN(s_i + s_j) - 2a) carries two, and the
                         * bound's c_acc allows for those two
                         * (kernels/exact_bound.h), so s_i + v lies within
                         * delta of d2 as d~2 does and blo, bhi decide it
                         * alike. T_lo <= T_hi, so an element out at T_hi
                         * is out at T_lo: the band is the count out at
                         * T_lo less the count out at T_hi. An FFMA, two
                         * FADDs and two shift-adds (LEA.HI) an element,
                         * against an FADD, an FFMA and two compares,
                         * selects and counts. (Testing blo only in blocks
                         * where the warp has a candidate is slower: the
                         * compiler predicates that path; docs/ACCURACY.md.) */
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            tlo[h] = __fsub_rd(w.blo[h], si[0][h]);
                            thi[h] = __fsub_ru(w.bhi[h], si[0][h]);
                        }
                        if constexpr (fasted_band_pad<F>::value) {
                            /* Where the band is sparse, one test an
                             * element: y = RN(v - T_lo), whose sign bit is
                             * set exactly when v < T_lo (sure: counted).
                             * A band element (T_lo <= v <= T_hi) has
                             * 0 <= y <= RN(T_hi - T_lo) <= W, the rows'
                             * larger RU(T_hi - T_lo), and a y >= 0 orders
                             * as its bits (below 2^31, every y < 0 above),
                             * so a block whose least y is at most W holds
                             * all its band, and is marked; a y above W is
                             * out. A marked block's slots are reserved
                             * whole (4 a lane) and pass 2 pads the ones
                             * its band does not fill. An FFMA, an FADD, a
                             * shift-add and a min an element. */
                            const unsigned wb = max(__float_as_uint(__fsub_ru(thi[0], tlo[0])),
                                                    __float_as_uint(__fsub_ru(thi[1], tlo[1])));
                            unsigned in = 0;
#pragma unroll
                            for (int nt = 0; nt < NT; nt++) {
                                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
                                unsigned m = ~0u;
#pragma unroll
                                for (int e = 0; e < 4; e++) {
                                    const float v =
                                        __fmaf_rn(-2.0f, acc[0][nt][e], (e & 1) ? sj.y : sj.x);
                                    const unsigned y = __float_as_uint(__fsub_rn(v, tlo[e >> 1]));
                                    in += y >> 31;
                                    m = min(m, y);
                                }
                                marks_all |= (m <= wb ? 1u : 0u) << nt;
                            }
                            sure = in * wint;
                            cnt = (unsigned)__popc(marks_all) * 4u; /* one slot an element */
                        } else {
                            unsigned olo = 0, ohi = 0, band = 0; /* out at T_lo, at T_hi */
#pragma unroll
                            for (int nt = 0; nt < NT; nt++) {
                                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
                                for (int e = 0; e < 4; e++) {
                                    unsigned xl, xh;
                                    band_x(acc[0][nt][e], (e & 1) ? sj.y : sj.x, e >> 1, xl, xh);
                                    olo += xl >> 31;
                                    ohi += xh >> 31;
                                }
                                /* the block holds band when the band's count grew */
                                marks_all |= (olo - ohi != band ? 1u : 0u) << nt;
                                band = olo - ohi;
                            }
                            sure = (unsigned)(4 * NT - olo) * wint;
                            cnt = band; /* one slot a pair (below) */
                        }
                        /* Either way a split lists a band pair once,
                         * without its mirror: an interior block of a
                         * symmetric run lies above the diagonal (i < j),
                         * and the classify takes (i, j) for both orders
                         * and skips every (j, i) (exact_classify_kernel),
                         * so the mirrors only cost pass 2 its stores and
                         * the classify its reads. sure counts both. */
                        split = true;
                    }
                }
                if (!split) {
                    /* cand_weight's threshold: the row's bhi in exact's
                     * band kernels (p.eps2 without p.band.bnd), F::thr otherwise. */
                    constexpr bool band = fasted_band<F>::value;
                    const D thr[2] = {band ? (D)w.bhi[0] : eps2, band ? (D)w.bhi[1] : eps2};
#pragma unroll
                    for (int nt = 0; nt < NT; nt++) {
                        const unsigned c =
                            interior_count(nt, __ldg((const float2 *)(p.s + col(nt, 0))), thr);
                        cnt += c;
                        marks_all |= (c ? 1u : 0u) << nt;
                    }
                    cnt *= wint;
                }
            } else {
#pragma unroll
                for (int nt = 0; nt < NT; nt++) {
                    const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
                    unsigned c = 0;
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            D d2;
                            c += cand_weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                             (e & 1) ? sj.y : sj.x, d2, e >> 1);
                        }
                    cnt += c;
                    marks_all |= (c ? 1u : 0u) << nt;
                }
            }
            constexpr int G = NT < 8 ? NT : 8;
            static_assert(NT % G == 0, "whole groups of n8 blocks");
            if constexpr (fasted_band<F>::value) {
                if (p.band.bnd && !split && marks_all) {
                    /* The lane's candidates (rare) again, a marked block
                     * at a time in one copy of the code: those sure to be
                     * in are counted, the band is what pass 2 lists. */
                    unsigned keep = 0;
                    cnt = 0;
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
                            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
                            unsigned c = 0;
#pragma unroll
                            for (int e = 0; e < 4; e++) {
                                D d2;
                                const int wt =
                                    cand_weight(row(0, e), col(nt, e), v[0][e], si[0][e >> 1],
                                                (e & 1) ? sj.y : sj.x, d2, e >> 1);
                                const int lw = list_weight(wt, d2, e >> 1);
                                sure += (unsigned)(wt - lw);
                                c += (unsigned)lw;
                            }
                            cnt += c;
                            keep |= (c ? 1u : 0u) << nt;
                        }
                    }
                    marks_all = keep;
                }
            }
            const long long o0 = fasted_reserve_pairs(p, cnt, lane, w.warp, w.fail);
            if (o0 < 0)
                return;
            add_sure(sure);
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
                    const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int e = 0; e < 4; e++) {
                            const unsigned i = row(mt, e);
                            unsigned j = col(nt, e);
                            const float sjv = (e & 1) ? sj.y : sj.x;
                            D d2;
                            int wt;
                            auto by_bound = [&]() {
                                wt = list_weight(
                                    cand_weight(i, j, v[mt][e], si[mt][e >> 1], sjv, d2, e >> 1),
                                    d2, e >> 1);
                            };
                            if constexpr (fasted_band_pad<F>::value) {
                                if (split) {
                                    /* every element fills its slot: a band
                                     * element (not sure by pass 1's y, not
                                     * out at T_hi) with its pair, any other
                                     * with a pad (i, i, +inf), which the
                                     * classify drops and counts
                                     * (exact_classify_kernel) */
                                    const float vv = __fmaf_rn(-2.0f, v[mt][e], sjv);
                                    const unsigned y = __float_as_uint(__fsub_rn(vv, tlo[e >> 1]));
                                    const unsigned xh = __float_as_uint(__fsub_rn(thi[e >> 1], vv));
                                    wt = 1;
                                    if ((y | xh) >> 31) {
                                        j = i;
                                        d2 = __int_as_float(0x7f800000);
                                    } else {
                                        d2 = F::d2(v[mt][e], si[mt][e >> 1], sjv);
                                    }
                                } else {
                                    by_bound();
                                }
                            } else if (fasted_band<F>::value && split) {
                                /* pass 1's test, so the pairs fill the slots it
                                 * counted; the d~2 written is the classify's */
                                unsigned xl, xh;
                                band_x(v[mt][e], sjv, e >> 1, xl, xh);
                                wt = (xl & ~xh) >> 31 ? 1 : 0;
                                d2 = F::d2(v[mt][e], si[mt][e >> 1], sjv);
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
        } else {
            /* The mma.sync warp tile (MT > 1): pass 1 turns the accumulators
             * into d2 in place and keeps one hit bit per element, so pass 2
             * holds no second copy of the tile (the two-pass form above spills
             * more here). */
            /* Pass 1 turns the accumulators into d2 in place and keeps one hit
             * bit per element, so pass 2 holds no second copy of the tile. */
            constexpr int WORDS = MT * NT * 4 / 32;
            unsigned cnt = 0, hits[WORDS];
#pragma unroll
            for (int k = 0; k < WORDS; k++)
                hits[k] = 0;
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        const int bit = (nt * MT + mt) * 4 + e;
                        D d2;
                        const int wt = weight(row(mt, e), col(nt, e), acc[mt][nt][e],
                                              si[mt][e >> 1], (e & 1) ? sj.y : sj.x, d2);
                        acc[mt][nt][e] = F::to_acc(d2);
                        cnt += wt;
                        hits[bit / 32] |= (wt ? 1u : 0u) << (bit % 32);
                    }
            }
            const long long o0 = fasted_reserve_pairs(p, cnt, lane, w.warp, w.fail);
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
                        const unsigned i = row(mt, e), j = col(nt, e);
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
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    D d2;
                    const int wt = weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                          (e & 1) ? sj.y : sj.x, d2);
                    if (wt)
                        atomicAdd(&w.hist[kern_hist_slot(F::to_f(d2), w.edges, p.nbins)],
                                  (unsigned)wt);
                }
        }
    }
}

#endif
