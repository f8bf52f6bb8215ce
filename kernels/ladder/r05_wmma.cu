/* Rung 5, wmma: FP16 tensor cores through nvcuda::wmma 16x16x16
 * fragments with FP32 accumulation (TED-Join's way). A 64x64 block tile,
 * four warps of 32x32 (2x2 fragments each), k slices of 32 FP16 values in
 * shared memory; the epilogue stores each 16x16 accumulator to a per-warp
 * staging tile in shared memory, since WMMA does not say which lane holds
 * which element.
 *
 * The idea: the products move from the FP32 pipe to the tensor cores (one
 * mma_sync is 4096 multiply-adds of a warp) and the rows shrink to FP16,
 * half the bytes. The norms are those of the FP16-rounded rows.
 * What the profiler shows: the tensor pipe active (sm__pipe_tensor_op_hmma
 * nonzero), FP32 FMA nearly gone from the mainloop; the epilogue's
 * store_matrix_sync round trip and the synchronous global-to-shared loads
 * keep the tensor pipe well under half busy. Measured by `ladder` (H200,
 * n 16384, d 1024): tensor pipe 12% busy, 65% of the shared wavefronts
 * bank conflicts, 10% of cuBLAS's FP16 GEMM.
 * The lines that carry it: the wmma fragments, load_matrix_sync,
 * mma_sync, and the staged epilogue. */
#include <mma.h>

#include "ladder_common.cuh"

using namespace nvcuda;

constexpr int BM = LADDER_R05_BM, BN = LADDER_R05_BN, BK = LADDER_R05_BK, WM = LADDER_R05_WM,
              WN = LADDER_R05_WN, TH = LADDER_R05_TH;
constexpr int MT = WM / 16, NT = WN / 16; /* 16x16 fragments a warp tile */
static_assert((BM / WM) * (BN / WN) * 32 == TH, "one warp per warp tile");
static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole 16x16x16 fragments");
static_assert((BM * BK / 8) % TH == 0 && (BN * BK / 8) % TH == 0,
              "a slice is whole 16-byte loads, the same number a thread");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
constexpr size_t STAGE_OFF = (size_t)(BM + BN) * BK * sizeof(__half); /* FP16 slices first */
constexpr size_t SMEM = STAGE_OFF + (size_t)(TH / 32) * 16 * 16 * sizeof(float); /* + staging */

__global__ void __launch_bounds__(TH) ladder_r05_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ __align__(128) unsigned char smem[];
    __half *sa = (__half *)smem, *sb = sa + BM * BK; /* row-major, k contiguous */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float *stage = (float *)(smem + STAGE_OFF) + warp * 16 * 16;
    const int wr0 = warp / (BN / WN) * WM, wc0 = warp % (BN / WN) * WN;
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[MT][NT];
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
            wmma::fill_fragment(acc[mt][nt], 0.0f);
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
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[MT];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b[NT];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
                wmma::load_matrix_sync(a[mt], sa + (wr0 + mt * 16) * BK + kk, BK);
#pragma unroll
            for (int nt = 0; nt < NT; nt++) /* B(k, j) = X[j][k]: column-major */
                wmma::load_matrix_sync(b[nt], sb + (wc0 + nt * 16) * BK + kk, BK);
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    wmma::mma_sync(acc[mt][nt], a[mt], b[nt], acc[mt][nt]);
        }
        __syncthreads();
    }
    unsigned c = 0;
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            wmma::store_matrix_sync(stage, acc[mt][nt], 16, wmma::mem_row_major);
            __syncwarp();
#pragma unroll
            for (int e = lane; e < 16 * 16; e += 32) {
                const size_t i = row0 + wr0 + mt * 16 + e / 16, j = col0 + wc0 + nt * 16 + e % 16;
                c += i < v.n && j < v.n && v.norm[i] + v.norm[j] - 2 * stage[e] <= v.eps2;
            }
            __syncwarp(); /* the next store_matrix_sync overwrites the tile */
        }
    ladder_count_add(v, c);
}

static int ladder_r05_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(5, smem, SMEM);
    return ladder_launch_2d(ladder_r05_kernel, v, BM, BN, dim3(TH), smem, blocks);
}

const ladder_kernel ladder_r05 = {(const void *)ladder_r05_kernel, true, ladder_r05_launch};
