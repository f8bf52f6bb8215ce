/* What every role of the FASTED epilogue shares (kernels/fasted_epilogue.cuh
 * dispatches to them): where a warp writes (fasted_epi), the select chain
 * that picks one n8 block's accumulators (fasted_block_acc), and the
 * fragment context epi_frag<F, MT, NT>: the lane's rows and columns of a
 * warp's MT x NT m16n8 fragments (the mma.sync kernel's warp tile; a wgmma
 * warp slice is MT = 1, NT = N/8), so fragment ownership comes from
 * frag_c_row/col in one place.
 *
 * Per element: d2 = F::d2(a, s_i, s_j) (FP32 formats: RN(RN(s_i + s_j) - 2a),
 * 2a exact, clamped at 0; integer formats: the exact integer), exactly 0 on
 * the diagonal, compared with F::thr(p) in registers; F::to_f gives the
 * FP32 value that PAIRS writes and HIST and the k-distance bin. Weight 2
 * for off-diagonal pairs of a symmetric join (both orders), 1 otherwise, 0
 * for padding and, in a tile that reaches the diagonal, below it. */
#ifndef TCJ_EPI_FRAG_CUH
#define TCJ_EPI_FRAG_CUH

#include <type_traits>

#include "fasted_format.cuh" /* fasted_band */
#include "fasted_sched.cuh"
#include "kernels.h"
#include "ptx.cuh"

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
    /* A wgmma warp slice (epi_sj_staged): the s_j of column j0 and the
     * tile's columns after it, staged in shared memory by the kernel's
     * producer (fasted_wg_slots); unused by the mma.sync warp tiles. */
    const float *sjs;
};

/* Whether a warp's MT x NT fragments read their columns' s_j from the
 * tile's copy in shared memory (fasted_epi.sjs) instead of global memory:
 * the wgmma warp slice (one m64 block of FASTED_WG_BN = 256 columns),
 * whose producer stages them with the tile. The mma.sync warp tiles read
 * p.s (fasted_mma.cuh asserts that none has the slice's shape). */
template <int MT, int NT> struct epi_sj_staged {
    static constexpr bool value = MT == 1 && NT == 32;
};

/* The lane's view of a warp's fragments, built once by the dispatcher
 * before any role runs: its first row and column, its rows' s_i and the
 * pass's threshold.
 *
 * The warp's block is interior when it holds no padding (every row below
 * q1, every column below n), no i == j and, in a symmetric run, no element
 * on or below the diagonal: then every element that passes weighs the
 * same (wint: 2 symmetric, 1 not), and its test is the compare alone.
 * Almost every block of a large join is interior; at small d the epilogue
 * is most of the kernel, so the per-element checks of `weight` are worth
 * leaving out there (COUNT, and PAIRS' first pass). The test is written
 * out where the one-function epilogue had it (the dispatcher, and the
 * wgmma slice's PAIRS pass), not in a function of its own: returned from
 * one, the same test compiles to other code (folded to selects before the
 * branch on it is seen). */
template <class F, int MT, int NT> struct epi_frag {
    typedef typename F::acc A;
    typedef typename F::dist D;
    const fasted_params &p;
    const fasted_epi &w;
    int lane;
    unsigned gi, gj;    /* the lane's row of element 0 of block 0, its column */
    D eps2;             /* F::thr(p) */
    float (&si)[MT][2]; /* the caller's s of the lane's rows, 2 an m16 block */
    bool interior;      /* set by the dispatcher (COUNT) */
    unsigned wint;      /* 2 in a symmetric run, else 1 */

    __device__ __forceinline__ epi_frag(const fasted_params &p_, const fasted_epi &w_,
                                        float (&si_)[MT][2])
        : p(p_), w(w_), si(si_)
    {
        lane = threadIdx.x & 31;
        gi = w.i0 + frag_c_row(lane, 0);
        gj = w.j0 + frag_c_col(lane, 0);
        eps2 = F::thr(p);
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                si[mt][h] = p.s[row(mt, 2 * h)];
    }

    /* Row of element e of block mt, column of element e of block nt. */
    __device__ __forceinline__ unsigned row(int mt, int e) const
    {
        return gi + mt * 16 + (frag_c_row(lane, e) - frag_c_row(lane, 0));
    }
    __device__ __forceinline__ unsigned col(int nt, int e) const
    {
        return gj + nt * 8 + (frag_c_col(lane, e) - frag_c_col(lane, 0));
    }
    /* s_j of the lane's two columns of n8 block nt. */
    __device__ __forceinline__ float2 sj(int nt) const
    {
        if constexpr (epi_sj_staged<MT, NT>::value)
            return *(const float2 *)(w.sjs + (col(nt, 0) - w.j0));
        else
            return __ldg((const float2 *)(p.s + col(nt, 0)));
    }

    /* d2, exactly 0 for i == j (static: it reads nothing of the context). */
    static __device__ __forceinline__ D dist(unsigned i, unsigned j, A a, float s_i, float s_j)
    {
        return i == j ? D(0) : F::d2(a, s_i, s_j);
    }
    __device__ __forceinline__ int weight_at(unsigned i, unsigned j, A a, float s_i, float s_j,
                                             D &d2, D thr) const
    {
        d2 = dist(i, j, a, s_i, s_j);
        if (i >= p.q1 || j >= p.n || !(d2 <= thr))
            return 0;
        /* A point with itself weighs 1; a cluster layout's padding row's
         * self-pair too, which exact's bound lists and its classify drops
         * (exact_bnd_kernel): a test for it costs every pass
         * (docs/ACCURACY.md). */
        if (w.diag)
            return i < j ? 2 : (i == j ? 1 : 0);
        return p.sym ? 2 : 1;
    }
    __device__ __forceinline__ int weight(unsigned i, unsigned j, A a, float s_i, float s_j,
                                          D &d2) const
    {
        return weight_at(i, j, a, s_i, s_j, d2, eps2);
    }

    /* Interior: elements with d2 <= thr(h) among the lane's elements of n8
     * block nt (thr per row: h = e >> 1). */
    __device__ __forceinline__ unsigned interior_count(const A (&acc)[MT][NT][4], int nt,
                                                       const float2 &s_j, const D (&thr)[2]) const
    {
        unsigned c = 0;
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const float sjv = (e & 1) ? s_j.y : s_j.x;
                if constexpr (std::is_same<D, float>::value)
                    c -= F::le_mask(acc[mt][nt][e], si[mt][e >> 1], sjv, thr[e >> 1]);
                else
                    c += F::d2(acc[mt][nt][e], si[mt][e >> 1], sjv) <= thr[e >> 1] ? 1u : 0u;
            }
        return c;
    }

    /* Interior: 1 when the element's d2 <= eps2, by the compare COUNT's
     * interior_count makes (PERPOINT's interior blocks). */
    __device__ __forceinline__ unsigned interior_hit(A a, float s_i, float s_j) const
    {
        if constexpr (std::is_same<D, float>::value)
            return 0u - F::le_mask(a, s_i, s_j, eps2);
        else
            return F::d2(a, s_i, s_j) <= eps2 ? 1u : 0u;
    }

    /* k-distance pairs: a real pair of two different rows, each unordered
     * pair once in a symmetric run. */
    __device__ __forceinline__ bool kd_valid(unsigned i, unsigned j) const
    {
        return i < p.q1 && j < p.n && i != j && (!w.diag || i < j);
    }
};

#endif
