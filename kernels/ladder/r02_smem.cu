/* Rung 2, smem: a block of 32x32 threads stages 32-value k slices of its
 * 32 A rows and 32 B rows in shared memory; each value loaded from global
 * memory is then used by 32 threads.
 *
 * The idea: data reuse through shared memory. Global loads drop 32-fold
 * (each thread loads one value of A and one of B a slice, coalesced: a
 * warp reads 128 contiguous bytes of one row), and the inner loop reads
 * shared memory. Rows are padded by one float (LDS = BK + 1) so that the
 * 32 threads of a warp, which read 32 different B rows at the same k, hit
 * 32 different banks instead of one (a 32-way conflict without the pad).
 * What the profiler shows: DRAM and L2 traffic ~32x lower than rung 1;
 * the limit moves to shared-memory bandwidth (two LDS per FMA+FADD).
 * The lines that carry it: the slice loads, the __syncthreads pair and the
 * inner loop over sa/sb. */
#include "ladder_common.cuh"

constexpr int BM = LADDER_R02_BM, BN = LADDER_R02_BN, BK = LADDER_R02_BK, TH = LADDER_R02_TH;
static_assert(BM * BN == TH, "one thread per pair of the block tile");
static_assert(BM == BK && BN == BK, "a thread loads one value of A and one of B a slice");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
constexpr int LDS = BK + 1; /* one float of padding a row: conflict-free column reads */
constexpr size_t SMEM = (size_t)(BM + BN) * LDS * sizeof(float); /* kern_ladder_smem */

__global__ void __launch_bounds__(TH) ladder_r02_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ float smem[];
    float *sa = smem, *sb = smem + BM * LDS;
    const int tx = threadIdx.x, ty = threadIdx.y;
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    const float *ga = v.xf + (row0 + ty) * v.ld + tx, *gb = v.xf + (col0 + ty) * v.ld + tx;
    float d2 = 0;
    for (size_t k0 = 0; k0 < v.ld; k0 += BK) {
        sa[ty * LDS + tx] = ga[k0];
        sb[ty * LDS + tx] = gb[k0];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            const float t = sa[ty * LDS + k] - sb[tx * LDS + k];
            d2 = fmaf(t, t, d2);
        }
        __syncthreads();
    }
    const size_t i = row0 + ty, j = col0 + tx;
    ladder_count_add(v, i < v.n && j < v.n && d2 <= v.eps2);
}

static int ladder_r02_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(2, smem, SMEM);
    return ladder_launch_2d(ladder_r02_kernel, v, BM, BN, dim3(BN, BM), smem, blocks);
}

const ladder_kernel ladder_r02 = {(const void *)ladder_r02_kernel, false, ladder_r02_launch};
