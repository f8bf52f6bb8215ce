/* FP16 for the exact engine's pass at large d (kern_fmt_fp16x): the same
 * FP16 values as kern_fmt_fp16, but a bound that does not grow with d.
 *   - The wgmma kernel promotes: each chunk of 2 k slices (128 values) is
 *     summed in the tensor core from zero and added into FP32 registers
 *     (round to nearest), so the product's accumulation error is
 *     gamma_128 + gamma_(d/128) instead of gamma_d (kernels/exact_bound.h,
 *     exact_bound_init_promoted).
 *   - The two consumer warpgroups take turns issuing their chunks, so
 *     one's drain overlaps the other's products (F::turns).
 *   - The squared norms are summed in FP64 (each square exact) and rounded
 *     once to FP32, not summed in FP32 toward zero.
 * The mma.sync path (no wgmma, or a teaching switch off) runs fp16's own
 * kernels without promotion; exact then takes the unpromoted bound
 * (kernels/exact.cu learns which kernel runs from its params hook). */
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"
#include "fmt_fp16.cuh"

/* PTX ISA, "wgmma.mma_async" (sm_90a), .f16 inputs at m64n128k16: half
 * the columns of m64n256k16, 64 accumulator floats per thread in the same
 * D fragment layout; K-major A and B (no transposes). */
__device__ __forceinline__ void wgmma_mma_async_m64n128k16_f32_f16(float (&d)[64], uint64_t desc_a,
                                                                   uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " TCJ_WGMMA_D64
                 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : TCJ_WGMMA_C64
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

struct fmt_fp16x : fmt_fp16 {
    /* exact's pass only: its COUNT epilogue lists only the band. */
    static constexpr bool band = true;
    static constexpr int promote = KERN_FP16X_PROMOTE_SLICES; /* fasted_wg_promote */
    static constexpr bool turns = true; /* the warpgroups' ping-pong (fasted_format.cuh) */
    __device__ static void wgmma_half(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
    {
        wgmma_mma_async_m64n128k16_f32_f16(d, da, db, scale_d);
    }
};

/* One warp a row: FP64 sum of the exact squares of its FP16 values (the
 * order does not matter to the bound: FP64's error over d terms is far
 * below the one FP32 rounding that follows). */
__global__ void fp16x_norms_kernel(const __half *X, float *s, size_t n_alloc, size_t dp)
{
    const size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (r >= n_alloc)
        return;
    double acc = 0;
    for (size_t k = lane; k < dp; k += 32) {
        const double v = (double)__half2float(X[r * dp + k]);
        acc += v * v;
    }
    for (int m = 16; m; m >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, m);
    if (lane == 0)
        s[r] = __double2float_rn(acc);
}

static void fp16x_norms(const void *X, float *s, size_t n_alloc, size_t dp, cudaStream_t st)
{
    const unsigned threads = 256, rows_per_block = threads / 32;
    fp16x_norms_kernel<<<(unsigned)((n_alloc + rows_per_block - 1) / rows_per_block), threads, 0,
                         st>>>((const __half *)X, s, n_alloc, dp);
}

/* The mma.sync kernels are fp16's (no promotion there). */
static void fp16x_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    kern_fmt_fp16.ops->mma_kernels(off, func, func_pairs);
}

static const fasted_fmt_ops fp16x_ops = {fasted_convert<fmt_fp16x>,
                                         fp16x_norms,
                                         fp16x_mma_kernels,
                                         (const void *)fasted_wg_kernel<fmt_fp16x, false>,
                                         (const void *)fasted_wg_kernel<fmt_fp16x, true>,
                                         NULL,
                                         NULL,
                                         NULL}; /* rows of its own: FP64-summed norms */

static const kern_variant fp16x_variants[] = {fasted_variant_row<all_on>()};

extern "C" const kern_format kern_fmt_fp16x = {fmt_fp16x::name,
                                               (int)sizeof(__half),
                                               fmt_fp16x::min_cc,
                                               FASTED_WG_SMEM,
                                               fmt_fp16x::int_dist,
                                               fp16x_variants,
                                               1, /* all-on only: exact's pass */
                                               &fp16x_ops,
                                               fmt_fp16x::widen,
                                               fmt_fp16x::value_log2};
