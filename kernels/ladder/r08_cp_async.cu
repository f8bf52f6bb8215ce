/* Rung 8, cp-async: rung 7's slices copied with cp.async (global to
 * shared memory without passing through registers) into a 3-stage ring:
 * while the warps multiply slice kt, the copies of slices kt+1 and kt+2
 * are in flight.
 *
 * The idea: overlap memory with math. In rung 7 every thread waits for its
 * loads, stores them, and the block waits at a barrier before any MMA; here
 * a slice is waited for (cp_async_wait_group<ST - 2>) only when it is
 * needed, two slices after it was asked for. One barrier a slice both
 * publishes slice kt and frees the stage read at kt - 1, which the copy
 * issued right after it overwrites.
 * What the profiler shows: warp stalls on long scoreboard and at the
 * barrier drop sharply and the tensor pipe's active cycles rise (30% to
 * 42% on an H200, n 16384, d 1024, measured by `ladder`); dynamic shared
 * memory triples (3 stages, 48 KiB).
 * The lines that carry it: load_stage's cp_async_cg_16, the prologue of
 * ST - 1 slices and the kt loop's wait / barrier / refill. */
#include "ladder_common.cuh"
#include "ptx.cuh"

constexpr int BM = LADDER_R08_BM, BN = LADDER_R08_BN, BK = LADDER_R08_BK, WM = LADDER_R08_WM,
              WN = LADDER_R08_WN, ST = LADDER_R08_ST, TH = LADDER_R08_TH;
constexpr int MT = WM / 16, NT = WN / 8; /* m16n8 tiles a warp tile */
static_assert((BM / WM) * (BN / WN) * 32 == TH, "one warp per warp tile");
static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole m16n8k16 steps, n16 pairs");
static_assert((BM * BK / 8) % TH == 0 && (BN * BK / 8) % TH == 0,
              "a slice is whole 16-byte loads, the same number a thread");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
static_assert(ST >= 2 && ST <= 8, "a pipeline of 2..8 stages (wait_group takes ST - 2)");
constexpr int STAGE = (BM + BN) * BK;                        /* FP16 values a stage */
constexpr size_t SMEM = (size_t)ST * STAGE * sizeof(__half); /* kern_ladder_smem */
static_assert(BK / 8 == 8, "the swizzle permutes the 8 chunks of a 128-byte row");

/* Chunk position (16-byte units) of chunk ch of row r. */
static __device__ __forceinline__ int ladder_swz(int r, int ch)
{
    return ch ^ (r & 7);
}

__global__ void __launch_bounds__(TH) ladder_r08_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ __align__(128) unsigned char smem[];
    /* ST stages of [A slice | B slice], row-major, chunks swizzled */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr0 = warp / (BN / WN) * WM, wc0 = warp % (BN / WN) * WN;
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    float acc[MT][NT][4] = {};
    /* Copy slice kt into stage st: 16 bytes a cp.async, no registers. */
    auto load_stage = [&](int st, size_t kt) {
        __half *sa = (__half *)smem + st * STAGE, *sb = sa + BM * BK;
#pragma unroll
        for (int p = 0; p < (BM + BN) * BK / 8 / TH; p++) {
            const int c = threadIdx.x + p * TH;
            const bool isA = p < BM * BK / 8 / TH; /* a constant once unrolled */
            const int cc = isA ? c : c - BM * BK / 8, r = cc / (BK / 8), ch = cc % (BK / 8);
            const __half *src = v.xh + ((isA ? row0 : col0) + r) * v.ld + kt * BK + ch * 8;
            cp_async_cg_16(smem_u32((isA ? sa : sb) + r * BK + ladder_swz(r, ch) * 8), src);
        }
    };
    const size_t KT = v.ld / BK;
#pragma unroll
    for (int st = 0; st < ST - 1; st++) { /* prologue: ST - 1 slices in flight */
        if ((size_t)st < KT)
            load_stage(st, st);
        cp_async_commit(); /* an empty group past the end keeps the count */
    }
    for (size_t kt = 0; kt < KT; kt++) {
        cp_async_wait_group<ST - 2>(); /* slice kt has landed (this thread's part) */
        __syncthreads();               /* everyone's part; stage (kt - 1) % ST is free */
        if (kt + ST - 1 < KT)
            load_stage((kt + ST - 1) % ST, kt + ST - 1);
        cp_async_commit();
        const __half *sa = (const __half *)smem + kt % ST * STAGE, *sb = sa + BM * BK;
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t af[MT][4], bf[NT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                const int r = wr0 + mt * 16 + ldsm_a_row(lane), ch = kk * 2 + ldsm_a_chunk(lane);
                ldmatrix_x4(af[mt], smem_u32(sa + r * BK + ladder_swz(r, ch) * 8));
            }
#pragma unroll
            for (int np = 0; np < NT / 2; np++) { /* one x4 load: two n8 tiles of B */
                const int r = wc0 + np * 16 + ldsm_b_row(lane), ch = kk * 2 + ldsm_b_chunk(lane);
                uint32_t t[4];
                ldmatrix_x4(t, smem_u32(sb + r * BK + ladder_swz(r, ch) * 8));
                bf[2 * np][0] = t[0];
                bf[2 * np][1] = t[1];
                bf[2 * np + 1][0] = t[2];
                bf[2 * np + 1][1] = t[3];
            }
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    mma_sync_m16n8k16_f32_f16(acc[mt][nt], af[mt], bf[nt]);
        }
    }
    unsigned c = 0;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const size_t i = row0 + wr0 + mt * 16 + frag_c_row(lane, e);
                const size_t j = col0 + wc0 + nt * 8 + frag_c_col(lane, e);
                c += i < v.n && j < v.n && v.norm[i] + v.norm[j] - 2 * acc[mt][nt][e] <= v.eps2;
            }
    ladder_count_add(v, c);
}

static int ladder_r08_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(8, smem, SMEM);
    return ladder_launch_2d(ladder_r08_kernel, v, BM, BN, dim3(TH), smem, blocks);
}

const ladder_kernel ladder_r08 = {(const void *)ladder_r08_kernel, true, ladder_r08_launch};
