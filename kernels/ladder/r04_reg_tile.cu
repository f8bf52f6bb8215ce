/* Rung 4, reg-tile: a 128x128 block tile computed by 256 threads, each
 * keeping an 8x8 tile of dot products in registers (SGEMM's 2-D block
 * tiling); shared memory holds k slices of 16, k-major.
 *
 * The idea: register reuse. Per k a thread loads 8 values of A and 8 of B
 * from shared memory (four LDS.128, the slices being k-major so a thread's
 * 8 values are contiguous) and does 64 FMAs with them: 16 shared-memory
 * values per 64 FMAs instead of 2 per FMA, so the FMA pipe, not shared
 * memory, is the limit; each global value is reused by 128 pairs.
 * What the profiler shows: the FMA pipe busy most cycles (sm__pipe_fma
 * well over 50%), shared-memory wavefronts per FMA down ~8x from rung 3,
 * ~120 registers a thread. Measured by `ladder` (H200, n 16384, d 1024):
 * FMA pipe 57%, shared memory 62% of its bandwidth, and 46% of the shared
 * wavefronts bank conflicts, more than the 4-way transposing stores into
 * the k-major slices alone would make; padding the slices is the step
 * this ladder leaves out (rung 5 moves to tensor cores instead).
 * The lines that carry it: acc[TM][TN], the a[]/b[] loads and the 8x8 FMA
 * nest. */
#include "ladder_common.cuh"

constexpr int BM = LADDER_R04_BM, BN = LADDER_R04_BN, BK = LADDER_R04_BK, TM = LADDER_R04_TM,
              TN = LADDER_R04_TN, TH = LADDER_R04_TH;
static_assert((BM / TM) * (BN / TN) == TH, "one thread per TM x TN tile of the block tile");
static_assert(BK % 4 == 0 && (BM * BK / 4) % TH == 0 && (BN * BK / 4) % TH == 0,
              "a slice is whole float4 loads, the same number a thread");
static_assert(TM % 4 == 0 && TN % 4 == 0, "a thread's values are whole float4");
static_assert(LADDER_ROW_PAD % BM == 0 && LADDER_K_PAD % BK == 0, "tiles divide the padding");
constexpr size_t SMEM = (size_t)(BM + BN) * BK * sizeof(float); /* kern_ladder_smem */

__global__ void __launch_bounds__(TH) ladder_r04_kernel(const ladder_view v, size_t m0)
{
    extern __shared__ __align__(16) float smem[];
    float *sa = smem, *sb = smem + BK * BM; /* sa[k * BM + r]: k-major */
    const int tr = threadIdx.x / (BN / TN), tc = threadIdx.x % (BN / TN);
    const size_t row0 = (m0 + blockIdx.y) * BM, col0 = (size_t)blockIdx.x * BN;
    float acc[TM][TN] = {};
    for (size_t k0 = 0; k0 < v.ld; k0 += BK) {
        /* Row-major float4 loads from global memory, stored transposed. */
#pragma unroll
        for (int p = 0; p < (BM + BN) * BK / 4 / TH; p++) {
            const int c = threadIdx.x + p * TH;
            const bool isA = p < BM * BK / 4 / TH; /* a constant once unrolled */
            const int cc = isA ? c : c - BM * BK / 4, r = cc / (BK / 4), k = cc % (BK / 4) * 4;
            const float4 q = *(const float4 *)(v.xf + ((isA ? row0 : col0) + r) * v.ld + k0 + k);
            const int L = isA ? BM : BN; /* the slice's k stride */
            float *s = (isA ? sa : sb) + k * L + r;
            s[0] = q.x;
            s[L] = q.y;
            s[2 * L] = q.z;
            s[3 * L] = q.w;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int m = 0; m < TM; m += 4)
                *(float4 *)&a[m] = *(const float4 *)&sa[k * BM + tr * TM + m];
#pragma unroll
            for (int n = 0; n < TN; n += 4)
                *(float4 *)&b[n] = *(const float4 *)&sb[k * BN + tc * TN + n];
#pragma unroll
            for (int m = 0; m < TM; m++)
#pragma unroll
                for (int n = 0; n < TN; n++)
                    acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        __syncthreads();
    }
    unsigned c = 0;
#pragma unroll
    for (int m = 0; m < TM; m++)
#pragma unroll
        for (int n = 0; n < TN; n++) {
            const size_t i = row0 + tr * TM + m, j = col0 + tc * TN + n;
            c += i < v.n && j < v.n && v.norm[i] + v.norm[j] - 2 * acc[m][n] <= v.eps2;
        }
    ladder_count_add(v, c);
}

static int ladder_r04_launch(const ladder_view &v, size_t smem, unsigned long long *blocks)
{
    if (smem != SMEM)
        return ladder_smem_differs(4, smem, SMEM);
    return ladder_launch_2d(ladder_r04_kernel, v, BM, BN, dim3(TH), smem, blocks);
}

const ladder_kernel ladder_r04 = {(const void *)ladder_r04_kernel, false, ladder_r04_launch};
