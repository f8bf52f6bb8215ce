/* The FASTED epilogue, written once for COUNT, PERPOINT, PAIRS and HIST and
 * used by both mainloops. It reads a warp's FP32 accumulators as MT x NT
 * m16n8 fragments (the mma.sync kernel's warp tile; a wgmma warp slice is
 * MT = 1, NT = N/8), so fragment ownership comes from frag_c_row/col.
 *
 * Per element: d2 = RN(RN(s_i + s_j) - 2a) (2a is exact), clamped at 0,
 * exactly 0 on the diagonal, compared with eps^2 in registers. Weight 2 for
 * off-diagonal pairs of a symmetric join (both orders), 1 otherwise, 0 for
 * padding and, in a tile that reaches the diagonal, below it. */
#ifndef TCJ_FASTED_EPILOGUE_CUH
#define TCJ_FASTED_EPILOGUE_CUH

#include "fasted_sched.cuh"
#include "kern_hist.cuh"
#include "kernels.h"
#include "ptx.cuh"

/* Where the epilogue of one warp's fragments writes. */
struct fasted_epi {
    unsigned i0, j0;    /* rows / columns of the warp's first m16 / n8 block */
    bool diag;          /* symmetric run, and the tile may hold j <= i */
    int warp;           /* the warp's bit in mask and *fail */
    unsigned mask;      /* PAIRS: warps of the tile still to emit */
    unsigned *fail;     /* PAIRS: shared bit set of warps whose pairs did not fit */
    const float *edges; /* HIST: shared copy of the edges */
    unsigned *hist;     /* HIST: shared slot counters */
};

template <int MT, int NT, bool PAIRS>
__device__ __forceinline__ void fasted_epilogue(const fasted_params &p, float (&acc)[MT][NT][4],
                                                const fasted_epi &w)
{
    static_assert(MT * NT * 4 % 32 == 0, "hit bits fill whole words");
    const int lane = threadIdx.x & 31;
    const unsigned gi = w.i0 + frag_c_row(lane, 0), gj = w.j0 + frag_c_col(lane, 0);
    const float eps2 = p.eps2;
    auto weight = [&](unsigned i, unsigned j, float a, float si, float sjv, float &d2) -> int {
        d2 = __fmaf_rn(-2.0f, a, __fadd_rn(si, sjv));
        d2 = fmaxf(d2, 0.0f);
        if (i == j)
            d2 = 0.0f;
        if (i >= p.q1 || j >= p.n || !(d2 <= eps2))
            return 0;
        if (w.diag)
            return i < j ? 2 : (i == j ? 1 : 0);
        return p.sym ? 2 : 1;
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

    if (!PAIRS && p.mode == KJOIN_COUNT) {
        unsigned cnt = 0;
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float d2;
                    cnt += weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                  (e & 1) ? sj.y : sj.x, d2);
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
                    float d2;
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
                    float d2;
                    const int wt = weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                          (e & 1) ? sj.y : sj.x, d2);
                    acc[mt][nt][e] = d2;
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
                    const float d2 = acc[mt][nt][e];
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
    } else {
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            const float2 sj = __ldg((const float2 *)(p.s + col(nt, 0)));
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    float d2;
                    const int wt = weight(row(mt, e), col(nt, e), acc[mt][nt][e], si[mt][e >> 1],
                                          (e & 1) ? sj.y : sj.x, d2);
                    if (wt)
                        atomicAdd(&w.hist[kern_hist_slot(d2, w.edges, p.nbins)], (unsigned)wt);
                }
        }
    }
}

#endif
