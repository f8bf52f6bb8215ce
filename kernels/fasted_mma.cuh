/* The FASTED mma.sync kernel (the FASTED paper, section 3): the teaching
 * configurations, the mainloop (ldmatrix from a cp.async pipeline of
 * swizzled shared-memory stages, or fragments straight from global memory)
 * and the kernel that joins it to the scheduler and the epilogue. Templated
 * on the number format F (its mma.sync instruction) and the configuration
 * C; included by the format instance files kernels/fmt_*.cu only.
 *
 * The mainloop addresses rows in 16-bit units and moves 32 bytes of k per
 * MMA: every format's m16n8 instruction has the same fragments in bytes
 * (ptx.cuh, frag_ab_row), so only F::mma differs between formats. */
#ifndef TCJ_FASTED_MMA_CUH
#define TCJ_FASTED_MMA_CUH

#include "fasted_epilogue.cuh"
#include "fasted_sched.cuh"
#include "kernels.h"
#include "ptx.cuh"

/* The configurations: all_on is the paper's kernel (with a 3-stage
 * pipeline); each teaching variant differs from it in one line. The
 * block-tile ordering switch needs no configuration of its own: it changes
 * only the tile enumeration, a launch parameter. */
struct all_on {
    static constexpr unsigned OFF = 0;
    static constexpr int WM = 64, WN = 64; /* warp tile; 2x2 warps a block */
    static constexpr int STAGES = FASTED_STAGES, MINB = 2;
    static constexpr bool SMEM = true, ASYNC = true, SWZ = true, ALIGN = true;
};
/* One line per configuration, so each reads as its difference from all_on. */
/* clang-format off */
struct no_smem_buffer : all_on { static constexpr unsigned OFF = FASTED_OFF_SMEM_BUFFER; static constexpr bool SMEM = false; };
struct no_async_copy : all_on { static constexpr unsigned OFF = FASTED_OFF_ASYNC_COPY; static constexpr bool ASYNC = false; };
struct no_pipeline : all_on { static constexpr unsigned OFF = FASTED_OFF_PIPELINE; static constexpr int STAGES = 1; };
struct no_async_pipeline : all_on { static constexpr unsigned OFF = FASTED_OFF_ASYNC_COPY | FASTED_OFF_PIPELINE; static constexpr bool ASYNC = false; static constexpr int STAGES = 1; };
struct no_residency : all_on { static constexpr unsigned OFF = FASTED_OFF_RESIDENCY; static constexpr int MINB = 1; };
struct no_warp_tile : all_on { static constexpr unsigned OFF = FASTED_OFF_WARP_TILE; static constexpr int WM = 32, WN = 32; };
struct no_swizzle : all_on { static constexpr unsigned OFF = FASTED_OFF_SWIZZLE; static constexpr bool SWZ = false; };
struct no_align : all_on { static constexpr unsigned OFF = FASTED_OFF_ALIGN; static constexpr bool ALIGN = false; };
/* clang-format on */

/* The shared-memory layout of a configuration: STAGES stages of the block's
 * A (BM rows) and B (BN rows) slices, 128 bytes a row, then the histogram
 * (edges and counters) from HIST_OFF; ALIGN off shifts the stages by 16
 * bytes. Its size is the launch's dynamic shared memory. */
template <class C> struct fasted_smem_layout {
    static constexpr int BM = 2 * C::WM, BN = 2 * C::WN;
    static constexpr size_t STAGE_UNITS = (size_t)(BM + BN) * FASTED_BK; /* 16-bit units */
    static constexpr size_t HIST_OFF = (C::SMEM ? C::STAGES * STAGE_UNITS * 2 : 0) + 128;
    static constexpr size_t bytes(int nbins)
    {
        return HIST_OFF + (nbins ? (size_t)(nbins + 1) * 8 : 0);
    }
};

/* Shared-memory index (in 16-byte chunks) of chunk ch of row r: eq. 2 of
 * the paper, chunk XOR (row mod 8), so the 8 rows one ldmatrix phase reads
 * land in 8 different bank groups. */
template <bool SWZ> __device__ __forceinline__ int fasted_swz(int r, int ch)
{
    return SWZ ? (ch ^ (r & 7)) : ch; /* [swizzle] */
}

__device__ __forceinline__ uint32_t fasted_ld32(const uint16_t *p)
{
    return __ldg((const unsigned int *)p);
}

/* The block tile's products: acc[mt][nt] += A(rows wr0..) x B(cols wc0..)
 * over the whole row length, for warp tile WM x WN. */
template <class F, class C>
__device__ __forceinline__ void
fasted_mma_mainloop(const fasted_params &p, uint16_t *sbuf, unsigned row0, unsigned col0, int wr0,
                    int wc0, typename F::acc (&acc)[C::WM / 16][C::WN / 8][4])
{
    using L = fasted_smem_layout<C>;
    constexpr int BM = L::BM, BN = L::BN, BK = FASTED_BK, MT = C::WM / 16, NT = C::WN / 8;
    const int lane = threadIdx.x & 31;
    const int KT = p.ld / BK;
    if (C::SMEM) { /* [smem-buffer] { */
        auto load_stage = [&](int st, int kt) {
            uint16_t *sA = sbuf + st * L::STAGE_UNITS, *sB = sA + BM * BK;
            const uint16_t *ga = p.X + (size_t)row0 * p.ld + kt * BK;
            const uint16_t *gb = p.X + (size_t)col0 * p.ld + kt * BK;
#pragma unroll
            for (int c = threadIdx.x; c < (BM + BN) * 8; c += FASTED_THREADS) {
                const bool isA = c < BM * 8;
                const int cc = isA ? c : c - BM * 8;
                const int r = cc >> 3, ch = cc & 7;
                uint16_t *dst = (isA ? sA : sB) + r * BK + fasted_swz<C::SWZ>(r, ch) * 8;
                const uint16_t *src = (isA ? ga : gb) + (size_t)r * p.ld + ch * 8;
                if (C::ASYNC)
                    cp_async_cg_16(smem_u32(dst), src); /* [async-copy] */
                else
                    *(uint4 *)dst = __ldg((const uint4 *)src);
            }
        };
        /* Per-lane ldmatrix offsets (16-bit units) within a warp's 16-row
         * group, one per 32-byte k step: the rows a lane addresses are
         * congruent to lane mod 8 in every group, so the swizzle term is
         * fixed per lane and step, computed once per tile. */
        int a_off[BK / 16], b_off[BK / 16];
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            a_off[kk] = ldsm_a_row(lane) * BK +
                        fasted_swz<C::SWZ>(lane & 7, kk * 2 + ldsm_a_chunk(lane)) * 8;
            b_off[kk] = ldsm_b_row(lane) * BK +
                        fasted_swz<C::SWZ>(lane & 7, kk * 2 + ldsm_b_chunk(lane)) * 8;
        }
        auto compute_stage = [&](int st) {
            const uint32_t sA = smem_u32(sbuf + st * L::STAGE_UNITS + wr0 * BK);
            const uint32_t sB = smem_u32(sbuf + st * L::STAGE_UNITS + BM * BK + wc0 * BK);
#pragma unroll
            for (int kk = 0; kk < BK / 16; kk++) {
                uint32_t af[MT][4], bf[NT][2];
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
                    ldmatrix_x4(af[mt], sA + (mt * 16 * BK + a_off[kk]) * 2);
#pragma unroll
                for (int np = 0; np < NT / 2; np++) {
                    uint32_t t[4];
                    ldmatrix_x4(t, sB + (np * 16 * BK + b_off[kk]) * 2);
                    bf[2 * np][0] = t[0];
                    bf[2 * np][1] = t[1];
                    bf[2 * np + 1][0] = t[2];
                    bf[2 * np + 1][1] = t[3];
                }
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
                        F::mma(acc[mt][nt], af[mt], bf[nt]);
            }
        };
        if (C::STAGES >= 2) { /* [pipeline] { */
                              /* STAGES-1 slices in flight; one barrier per slice both
                               * publishes slice kt and frees the stage read at kt-1, which
                               * the copy issued next overwrites. */
#pragma unroll
            for (int st = 0; st < C::STAGES - 1; st++) {
                if (st < KT)
                    load_stage(st, st);
                if (C::ASYNC)
                    cp_async_commit();
            }
            for (int kt = 0; kt < KT; kt++) {
                if (C::ASYNC)
                    cp_async_wait_group<(C::STAGES >= 2 ? C::STAGES - 2 : 0)>();
                __syncthreads();
                if (kt + C::STAGES - 1 < KT)
                    load_stage((kt + C::STAGES - 1) % C::STAGES, kt + C::STAGES - 1);
                if (C::ASYNC)
                    cp_async_commit();
                compute_stage(kt % C::STAGES);
            }
            __syncthreads();
        } else { /* } */
            for (int kt = 0; kt < KT; kt++) {
                load_stage(0, kt);
                if (C::ASYNC) {
                    cp_async_commit();
                    cp_async_wait_group<0>();
                }
                __syncthreads();
                compute_stage(0);
                __syncthreads();
            }
        }
    } else { /* } */
        /* No block buffer: each warp loads its fragments from global memory
         * in the mma layout (frag_ab_row, frag_ab_word). */
        const uint16_t *ga = p.X + (size_t)(row0 + wr0) * p.ld;
        const uint16_t *gb = p.X + (size_t)(col0 + wc0) * p.ld;
        const int r = frag_ab_row(lane), wd = 2 * frag_ab_word(lane);
        for (int k = 0; k < p.ld; k += 16) {
            uint32_t af[MT][4], bf[NT][2];
            const int kq = k + wd;
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                const uint16_t *q = ga + (size_t)(mt * 16 + r) * p.ld + kq;
                af[mt][0] = fasted_ld32(q);
                af[mt][1] = fasted_ld32(q + 8 * (size_t)p.ld);
                af[mt][2] = fasted_ld32(q + 8);
                af[mt][3] = fasted_ld32(q + 8 * (size_t)p.ld + 8);
            }
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                const uint16_t *q = gb + (size_t)(nt * 8 + r) * p.ld + kq;
                bf[nt][0] = fasted_ld32(q);
                bf[nt][1] = fasted_ld32(q + 8);
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    F::mma(acc[mt][nt], af[mt], bf[nt]);
        }
    }
}

/* Persistent blocks of 2x2 warps take block tiles from the work queue,
 * multiply them (mainloop) and hand the accumulators to the epilogue. */
template <class F, class C, bool PAIRS>
__global__ void __launch_bounds__(FASTED_THREADS, C::MINB) /* [residency] */
    fasted_mma_kernel(const fasted_params p)
{
    using L = fasted_smem_layout<C>;
    constexpr int MT = C::WM / 16, NT = C::WN / 8; /* [warp-tile] */
    static_assert(C::WM % 16 == 0 && C::WN % 16 == 0, "warp tile is whole m16 / n16 steps");
    static_assert(!epi_sj_staged<MT, NT>::value, "the warp tile reads s_j from global memory");

    extern __shared__ __align__(128) unsigned char fasted_smem[];
    uint16_t *sbuf = (uint16_t *)(fasted_smem + (C::ALIGN ? 0 : 16)); /* [align] */
    float *s_edges = (float *)(fasted_smem + L::HIST_OFF);
    unsigned *s_hist = (unsigned *)(s_edges + p.nbins + 1);
    __shared__ unsigned long long s_tile;
    __shared__ unsigned s_mask, s_fail[2];
    __shared__ int s_state;

    const int warp = threadIdx.x >> 5;
    const int wr0 = (warp >> 1) * C::WM, wc0 = (warp & 1) * C::WN;
    const unsigned long long items = p.nredo_in + (p.t_end - p.t_base);

    if (p.mode == KJOIN_HIST) {
        for (int k = threadIdx.x; k <= p.nbins; k += FASTED_THREADS) {
            s_edges[k] = p.edges[k];
            s_hist[k] = 0;
        }
    }

    /* s_fail alternates by iteration parity: it is read after the closing
     * barrier of one tile while thread 0 already resets the next one's. */
    for (int it = 0;; it ^= 1) {
        if (threadIdx.x == 0) {
            unsigned long long tile;
            unsigned mask;
            const int state = fasted_take_item(p, items, 0xfu, tile, mask);
            s_tile = tile;
            s_mask = mask;
            s_state = state;
            s_fail[it] = 0;
        }
        __syncthreads();
        if (!s_state)
            break;
        const unsigned long long tile = s_tile;
        unsigned bi, bj;
        if (fasted_tile_of(p, tile, bi, bj)) {
            const unsigned row0 = p.q0 + (p.rowmap ? p.rowmap[bi] : bi) * L::BM;
            const unsigned col0 = p.c0 + bj * L::BN * (1 + p.cskip);
            typename F::acc acc[MT][NT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[mt][nt][e] = 0;
            fasted_mma_mainloop<F, C>(p, sbuf, row0, col0, wr0, wc0, acc);
            const fasted_epi w = {row0 + wr0, col0 + wc0, fasted_tri(p) && bi == bj,
                                  warp,       s_mask,     &s_fail[it],
                                  s_edges,    s_hist,     bj * 2 + (warp & 1)};
            fasted_epilogue<F, MT, NT, PAIRS>(p, acc, w);
        }
        __syncthreads();
        if (threadIdx.x == 0)
            fasted_hand_back(p, tile, s_fail[it]);
    }
    if (p.mode == KJOIN_HIST) {
        __syncthreads();
        for (int k = threadIdx.x; k <= p.nbins; k += FASTED_THREADS)
            if (s_hist[k])
                atomicAdd(&p.hist[k], (unsigned long long)s_hist[k]);
    }
}

/* The variant-table row of configuration C (constant: the host's kernel
 * choice reads it). */
template <class C> constexpr kern_variant fasted_variant_row()
{
    return kern_variant{C::OFF, 2 * C::WM, 2 * C::WN, C::MINB, fasted_smem_layout<C>::bytes(0)};
}

/* The two kernels (COUNT/PERPOINT/HIST and PAIRS) of format F, config C. */
template <class F, class C> void fasted_mma_kernels(const void **func, const void **func_pairs)
{
    *func = (const void *)fasted_mma_kernel<F, C, false>;
    *func_pairs = (const void *)fasted_mma_kernel<F, C, true>;
}

#endif
