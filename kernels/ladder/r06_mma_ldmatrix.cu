/* Rung 6, mma-ldmatrix: PTX mma.sync m16n8k16 (FP16 in, FP32 accumulate)
 * fed by ldmatrix.x4 from plain row-major shared memory, k slices of 64
 * (128 bytes a row), one stage loaded synchronously (16-byte loads). The
 * epilogue tests d2 straight from the accumulator registers, whose owner
 * lanes the ISA fixes (frag_c_row / frag_c_col).
 *
 * The idea: take the fragments into our own hands. ldmatrix hands each lane
 * exactly its mma operand registers (one instruction for four 8x8 tiles),
 * and knowing the accumulator layout removes rung 5's store-and-reload
 * epilogue.
 * What the profiler shows: the epilogue's shared-memory round trip gone
 * (no STS of accumulators); but ldmatrix now dominates shared-memory time:
 * the 8 rows one ldmatrix phase reads are 128 bytes apart, so all sit in
 * the same 4 banks, an 8-way bank conflict on every ldmatrix. On an H200
 * (n 1000, d 3) ncu counted 459K bank conflicts in 569K shared wavefronts
 * (l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum), and at n 32768,
 * d 1024 this rung is slower than rung 5 (52 against 70 TFLOPS): the
 * conflicts cost more than the epilogue saves. Rung 7 removes them.
 * The lines that carry it: the ldmatrix_x4 / mma_sync_m16n8k16_f32_f16
 * loop and the register epilogue. */
#include "ladder_common.cuh"
#include "ptx.cuh"

constexpr int BM = LADDER_R06_BM, BN = LADDER_R06_BN, BK = LADDER_R06_BK, WM = LADDER_R06_WM,
              WN = LADDER_R06_WN, TH = LADDER_R06_TH;
constexpr int MT = WM / 16, NT = WN / 8; /* m16n8 tiles a warp tile */
static_assert((BM / WM) * (BN / WN) * 32 == TH, "one warp per warp tile");
static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole m16n8k16 steps, n16 pairs");
static_assert((BM * BK / 8) % TH == 0 && (BN * BK / 8) % TH == 0,
              "a slice is whole 16-byte loads, the same number a thread");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
constexpr size_t SMEM = (size_t)(BM + BN) * BK * sizeof(__half); /* kern_ladder_smem, 1 stage */

__global__ void __launch_bounds__(TH) ladder_r06_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ __align__(128) unsigned char smem[];
    __half *sa = (__half *)smem, *sb = sa + BM * BK; /* row-major, k contiguous */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wr0 = warp / (BN / WN) * WM, wc0 = warp % (BN / WN) * WN;
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    float acc[MT][NT][4] = {};
    for (size_t k0 = 0; k0 < v.ld; k0 += BK) {
#pragma unroll
        for (int p = 0; p < (BM + BN) * BK / 8 / TH; p++) {
            const int c = threadIdx.x + p * TH;
            const bool isA = p < BM * BK / 8 / TH; /* a constant once unrolled */
            const int cc = isA ? c : c - BM * BK / 8, r = cc / (BK / 8), ch = cc % (BK / 8);
            const __half *src = v.xh + ((isA ? row0 : col0) + r) * v.ld + k0 + ch * 8;
            *(uint4 *)((isA ? sa : sb) + r * BK + ch * 8) = *(const uint4 *)src;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            uint32_t af[MT][4], bf[NT][2];
#pragma unroll
            for (int mt = 0; mt < MT; mt++) {
                const int r = wr0 + mt * 16 + ldsm_a_row(lane), ch = kk * 2 + ldsm_a_chunk(lane);
                ldmatrix_x4(af[mt], smem_u32(sa + r * BK + ch * 8));
            }
#pragma unroll
            for (int np = 0; np < NT / 2; np++) { /* one x4 load: two n8 tiles of B */
                const int r = wc0 + np * 16 + ldsm_b_row(lane), ch = kk * 2 + ldsm_b_chunk(lane);
                uint32_t t[4];
                ldmatrix_x4(t, smem_u32(sb + r * BK + ch * 8));
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
        __syncthreads();
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

static int ladder_r06_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(6, smem, SMEM);
    return ladder_launch_2d(ladder_r06_kernel, v, BM, BN, dim3(TH), smem, blocks);
}

const ladder_kernel ladder_r06 = {(const void *)ladder_r06_kernel, true, ladder_r06_launch};
