/* Rung 3, gemm-form: d2 = |a|^2 + |b|^2 - 2 a.b with the norms computed
 * once per row (FP32, by the driver), so the inner loop is one FMA a value
 * instead of a subtract and an FMA.
 *
 * The idea: the ε-join becomes a matrix product X X^T plus a rank-one
 * correction, so everything GEMM kernels know applies from here on (rungs
 * 4..10 only change how the product is computed).
 * What the profiler shows: the same tiles and memory traffic as rung 2,
 * one FP32 instruction a value fewer (inst_executed of the inner loop drops
 * by ~1/3); still shared-memory bound (two LDS a FMA).
 * The lines that carry it: acc = fmaf(...) in the inner loop and the
 * ε-test on v.norm[i] + v.norm[j] - 2 * acc. */
#include "ladder_common.cuh"

constexpr int BM = LADDER_R03_BM, BN = LADDER_R03_BN, BK = LADDER_R03_BK, TH = LADDER_R03_TH;
static_assert(BM * BN == TH, "one thread per pair of the block tile");
static_assert(BM == BK && BN == BK, "a thread loads one value of A and one of B a slice");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
constexpr int LDS = BK + 1; /* one float of padding a row: conflict-free column reads */
constexpr size_t SMEM = (size_t)(BM + BN) * LDS * sizeof(float); /* kern_ladder_smem */

__global__ void __launch_bounds__(TH) ladder_r03_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ float smem[];
    float *sa = smem, *sb = smem + BM * LDS;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    const float *ga = v.xf + (row0 + ty) * v.ld + tx, *gb = v.xf + (col0 + ty) * v.ld + tx;
    float acc = 0;
    for (size_t k0 = 0; k0 < v.ld; k0 += BK) {
        sa[ty * LDS + tx] = ga[k0];
        sb[ty * LDS + tx] = gb[k0];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++)
            acc = fmaf(sa[ty * LDS + k], sb[tx * LDS + k], acc);
        __syncthreads();
    }
    const size_t i = row0 + ty, j = col0 + tx;
    ladder_count_add(v, i < v.n && j < v.n && v.norm[i] + v.norm[j] - 2 * acc <= v.eps2);
}

static int ladder_r03_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(3, smem, SMEM);
    return ladder_launch_2d(ladder_r03_kernel, v, BM, BN, dim3(BN, BM), smem, blocks);
}

const ladder_kernel ladder_r03 = {(const void *)ladder_r03_kernel, false, ladder_r03_launch};
