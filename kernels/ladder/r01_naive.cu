/* Rung 1, naive: one thread per pair (i, j) sums (a_k - b_k)^2 over k,
 * reading both rows straight from global memory (FP32, CUDA cores).
 *
 * The idea: none yet; this is the baseline every later rung is measured
 * against. A block is 16x16 threads, one pair each.
 * What the profiler shows: memory bound on L1/L2, not DRAM: every pair
 * reads 2*d floats and nothing is reused on purpose, so the FMA pipe idles
 * (sm__pipe_fma_cycles_active well under 10%), and the 16 threads of a
 * half-warp read 16 different rows (uncoalesced B loads, ~16 sectors a
 * request).
 * The lines that carry it: the k loop of ladder_r01_kernel. */
#include "ladder_common.cuh"

constexpr int BM = LADDER_R01_BM, BN = LADDER_R01_BN, TH = LADDER_R01_TH;
static_assert(BM * BN == TH, "one thread per pair of the block tile");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_ROW_PAD % BN == 0, "tiles divide the padded rows");
constexpr size_t SMEM = 0; /* kern_ladder_smem: none */

__global__ void __launch_bounds__(TH) ladder_r01_kernel(const ladder_view v, size_t m0)
{
    const size_t i = (m0 + blockIdx.y) * BM + threadIdx.y;
    const size_t j = (size_t)blockIdx.x * BN + threadIdx.x;
    const float *a = v.xf + i * v.ld, *b = v.xf + j * v.ld;
    float d2 = 0;
    for (size_t k = 0; k < v.ld; k++) {
        const float t = a[k] - b[k];
        d2 = fmaf(t, t, d2);
    }
    ladder_count_add(v, i < v.n && j < v.n && d2 <= v.eps2);
}

static int ladder_r01_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(1, smem, SMEM);
    return ladder_launch_2d(ladder_r01_kernel, v, BM, BN, dim3(BN, BM), smem, blocks);
}

const ladder_kernel ladder_r01 = {(const void *)ladder_r01_kernel, false, ladder_r01_launch};
