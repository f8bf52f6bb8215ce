/* FP16 for the exact engine's COUNT pass at large d (kern_fmt_fp16x): the
 * same FP16 values as kern_fmt_fp16, but a bound that does not grow with
 * d. Its epilogue lists only the band (F::band); exact's other modes run
 * the same kernel without it (kern_fmt_fp16xl, on these rows).
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
#include "fmt_fp16x.cuh"

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

/* The pass runs the PAIRS kernel only (it lists the band), so that is
 * the one built, in both slots. */
static const fasted_fmt_ops fp16x_ops = {fasted_convert<fmt_fp16x>,
                                         fp16x_norms,
                                         fp16_twin_mma_kernels,
                                         (const void *)fasted_wg_kernel<fmt_fp16x, true>,
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
