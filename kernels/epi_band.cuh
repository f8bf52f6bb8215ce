/* exact's band inside the PAIRS epilogue of the wgmma slice
 * (epi_pairs.cuh): exact's band kernels (kernels/exact_kern.cuh) set
 * fasted_band<F>, and F::band_pad for their padded form. exact's pass with
 * p.band.bnd set (COUNT) lists only its band: a candidate its bound puts
 * in is counted, not listed; one it puts out is never a candidate
 * (fasted_int.cuh). Each row has two thresholds (fasted_band_rows): a pair
 * is a candidate at d~2 <= bhi and sure to be in at <= blo. The PAIRS
 * epilogue asks this header each band decision: a candidate's weight and
 * the weight it is listed with, the sure pairs' count, in an interior
 * block the split of sure pairs from the band on each row's moved
 * thresholds (epi_band_split_count) and pass 2's pick after a split. For
 * any other F the weights are the join's and the rest does nothing. */
#ifndef TCJ_EPI_BAND_CUH
#define TCJ_EPI_BAND_CUH

#include <type_traits>

#include "epi_frag.cuh"

/* F::band_pad where F declares it, else false (exact's kernel option,
 * kernels/exact_kern.cuh). */
template <class F, class = void> struct fasted_band_pad {
    static constexpr bool value = false;
};
template <class F> struct fasted_band_pad<F, std::void_t<decltype(F::band_pad)>> {
    static constexpr bool value = F::band_pad;
};

/* The rows' thresholds. delta is taken with the row's own terms and the
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

/* A candidate's weight against its row's threshold (h: the lane's row 0
 * or 1): the row's bhi in exact's band kernels, F::thr otherwise. */
template <class F, int MT, int NT>
__device__ __forceinline__ int epi_band_cand_weight(const epi_frag<F, MT, NT> &f, unsigned i,
                                                    unsigned j, typename F::acc a, float si,
                                                    float sjv, typename F::dist &d2, int h)
{
    if constexpr (fasted_band<F>::value)
        return f.weight_at(i, j, a, si, sjv, d2, f.w.bhi[h]);
    else
        return f.weight(i, j, a, si, sjv, d2);
}

/* cand_weight's threshold, for the interior count: the row's bhi in
 * exact's band kernels (p.eps2 without p.band.bnd), F::thr otherwise. */
template <class F, int MT, int NT>
__device__ __forceinline__ typename F::dist epi_band_cand_thr(const epi_frag<F, MT, NT> &f, int h)
{
    typedef typename F::dist D;
    constexpr bool band = fasted_band<F>::value;
    return band ? (D)f.w.bhi[h] : f.eps2;
}

/* The weight a candidate of weight wt is listed with: 0 when its bound
 * puts it in (its row's blo), wt otherwise. */
template <class F, int MT, int NT>
__device__ __forceinline__ int epi_band_list_weight(const epi_frag<F, MT, NT> &f, int wt,
                                                    typename F::dist d2, int h)
{
    if constexpr (fasted_band<F>::value)
        return F::to_f(d2) <= f.w.blo[h] ? 0 : wt;
    else
        return wt;
}

/* The pairs `sure` counts, added once the warp's listed pairs have their
 * slots (a warp that fails is done again whole). */
template <class F, int MT, int NT>
__device__ __forceinline__ void epi_band_add_sure(const epi_frag<F, MT, NT> &f, unsigned sure)
{
    if constexpr (fasted_band<F>::value) {
        if (f.p.band.bnd) {
            sure = __reduce_add_sync(FASTED_FULL_MASK, sure);
            if (f.lane == 0 && sure)
                atomicAdd(f.p.band.count, (unsigned long long)sure);
        }
    }
}

/* exact's split: one element against its row's thresholds moved onto
 * v = s_j - 2a (tlo, thi: epi_band_split_count): the sign bits of
 * RN(T_lo - v) and RN(T_hi - v). */
template <class A>
__device__ __forceinline__ void epi_band_x(const float (&tlo)[2], const float (&thi)[2], A a,
                                           float sjv, int h, unsigned &xl, unsigned &xh)
{
    const float v = __fmaf_rn(-2.0f, a, sjv);
    xl = __float_as_uint(__fsub_rn(tlo[h], v));
    xh = __float_as_uint(__fsub_rn(thi[h], v));
}

/* exact's COUNT in an interior block (wgmma, MT = 1): a candidate at or
 * below its row's blo is sure to be in (counted), the rest up to bhi is
 * the band, listed; a block is marked when it holds band. Rather than form
 * d~2 and compare it twice, the row's terms go into its thresholds once a
 * tile: T_lo = RD(blo - s_i), T_hi = RU(bhi - s_i), and an element is
 * v = RN(s_j - 2a) against them, the sign bit of RN(T - v) set exactly
 * when v > T (round to nearest keeps a difference's sign and gives +0 for
 * T = v; every value here is finite). Then v <= T_lo means s_i + v <= blo
 * and v > T_hi means s_i + v > bhi, with s_i + v taken exactly: it carries
 * one rounding (of at most 2^-24 |s_j - 2a| <= 2^-24 (N_x + N_y)^2) where
 * d~2 = RN(RN(s_i + s_j) - 2a) carries two, and the bound's c_acc allows
 * for those two (kernels/exact_bound.h), so s_i + v lies within delta of
 * d2 as d~2 does and blo, bhi decide it alike. T_lo <= T_hi, so an element
 * out at T_hi is out at T_lo: the band is the count out at T_lo less the
 * count out at T_hi. An FFMA, two FADDs and two shift-adds (LEA.HI) an
 * element, against an FADD, an FFMA and two compares, selects and counts.
 * (Testing blo only in blocks where the warp has a candidate is slower:
 * the compiler predicates that path; docs/ACCURACY.md.)
 *
 * With F::band_pad, where the band is sparse, one test an element:
 * y = RN(v - T_lo), whose sign bit is set exactly when v < T_lo (sure:
 * counted). A band element (T_lo <= v <= T_hi) has 0 <= y <= RN(T_hi -
 * T_lo) <= W, the rows' larger RU(T_hi - T_lo), and a y >= 0 orders as its
 * bits (below 2^31, every y < 0 above), so a block whose least y is at
 * most W holds all its band, and is marked; a y above W is out. A marked
 * block's slots are reserved whole (4 a lane) and pass 2 pads the ones its
 * band does not fill (epi_band_pad_pick). An FFMA, an FADD, a shift-add and a
 * min an element.
 *
 * Either way a split lists a band pair once, without its mirror: an
 * interior block of a symmetric run lies above the diagonal (i < j), and
 * the classify takes (i, j) for both orders and skips every (j, i)
 * (exact_classify_kernel), so the mirrors only cost pass 2 its stores and
 * the classify its reads. sure counts both. */
template <class F, int MT, int NT>
__device__ __forceinline__ void
epi_band_split_count(const epi_frag<F, MT, NT> &f, typename F::acc (&acc)[MT][NT][4], unsigned wint,
                     float (&tlo)[2], float (&thi)[2], unsigned &cnt, unsigned &marks_all,
                     unsigned &sure)
{
    const fasted_params &p = f.p;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        tlo[h] = __fsub_rd(f.w.blo[h], f.si[0][h]);
        thi[h] = __fsub_ru(f.w.bhi[h], f.si[0][h]);
    }
    if constexpr (fasted_band_pad<F>::value) {
        const unsigned wb = max(__float_as_uint(__fsub_ru(thi[0], tlo[0])),
                                __float_as_uint(__fsub_ru(thi[1], tlo[1])));
        unsigned in = 0;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = f.sj(nt);
            unsigned m = ~0u;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float v = __fmaf_rn(-2.0f, acc[0][nt][e], (e & 1) ? sj.y : sj.x);
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
            const float2 sj = f.sj(nt);
#pragma unroll
            for (int e = 0; e < 4; e++) {
                unsigned xl, xh;
                epi_band_x(tlo, thi, acc[0][nt][e], (e & 1) ? sj.y : sj.x, e >> 1, xl, xh);
                olo += xl >> 31;
                ohi += xh >> 31;
            }
            /* the block holds band when the band's count grew */
            marks_all |= (olo - ohi != band ? 1u : 0u) << nt;
            band = olo - ohi;
        }
        sure = (unsigned)(4 * NT - olo) * wint;
        cnt = band; /* one slot a pair (epi_band_split_pick) */
    }
}

/* Outside a split, exact's band kernels look at the lane's candidates
 * (rare) again, a marked block at a time in one copy of the code: those
 * sure to be in are counted, the band is what pass 2 lists. */
template <int G, class F, int MT, int NT>
__device__ __forceinline__ void epi_band_recount(const epi_frag<F, MT, NT> &f,
                                                 typename F::acc (&acc)[MT][NT][4], unsigned &cnt,
                                                 unsigned &marks_all, unsigned &sure)
{
    typedef typename F::acc A;
    typedef typename F::dist D;
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
            const float2 sj = f.sj(nt);
            unsigned c = 0;
#pragma unroll
            for (int e = 0; e < 4; e++) {
                D d2;
                const int wt =
                    epi_band_cand_weight(f, f.row(0, e), f.col(nt, e), v[0][e], f.si[0][e >> 1],
                                         (e & 1) ? sj.y : sj.x, d2, e >> 1);
                const int lw = epi_band_list_weight(f, wt, d2, e >> 1);
                sure += (unsigned)(wt - lw);
                c += (unsigned)lw;
            }
            cnt += c;
            keep |= (c ? 1u : 0u) << nt;
        }
    }
    marks_all = keep;
}

/* Pass 2 after a split, F::band_pad: every element fills its slot: a band
 * element (not sure by pass 1's y, not out at T_hi) with its pair, any
 * other with a pad (i, i, +inf), which the classify drops and counts
 * (exact_classify_kernel). */
template <class F>
__device__ __forceinline__ int epi_band_pad_pick(const float (&tlo)[2], const float (&thi)[2],
                                                 typename F::acc a, float si, float sjv, int h,
                                                 unsigned i, unsigned &j, typename F::dist &d2)
{
    const float vv = __fmaf_rn(-2.0f, a, sjv);
    const unsigned y = __float_as_uint(__fsub_rn(vv, tlo[h]));
    const unsigned xh = __float_as_uint(__fsub_rn(thi[h], vv));
    if ((y | xh) >> 31) {
        j = i;
        d2 = __int_as_float(0x7f800000);
    } else {
        d2 = F::d2(a, si, sjv);
    }
    return 1;
}

/* Pass 2 after a split without pads: pass 1's test, so the pairs fill the
 * slots it counted; the d~2 written is the classify's. */
template <class F>
__device__ __forceinline__ int epi_band_split_pick(const float (&tlo)[2], const float (&thi)[2],
                                                   typename F::acc a, float si, float sjv, int h,
                                                   typename F::dist &d2)
{
    unsigned xl, xh;
    epi_band_x(tlo, thi, a, sjv, h, xl, xh);
    const int wt = (xl & ~xh) >> 31 ? 1 : 0;
    d2 = F::d2(a, si, sjv);
    return wt;
}

#endif
