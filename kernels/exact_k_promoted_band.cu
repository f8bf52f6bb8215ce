/* exact's COUNT pass at large d (exact_kern_promoted_band,
 * exact_kern.cuh): the promoting mainloop with exact's band epilogue, so
 * the bound does not grow with d. Its rows are its own: the same FP16
 * values as kern_fmt_fp16, but the squared norms summed in FP64 (each
 * square exact) and rounded once to FP32, not summed in FP32 toward zero.
 * exact's other modes at large d run exact_kern_promoted on these rows. */
#include "exact_kern.cuh"

/* One warp a row: FP64 sum of the exact squares of its FP16 values (the
 * order does not matter to the bound: FP64's error over d terms is far
 * below the one FP32 rounding that follows). */
__global__ void exact_k_norms_kernel(const __half *X, float *s, size_t n_alloc, size_t dp)
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

static void exact_k_norms(const void *X, float *s, size_t n_alloc, size_t dp, cudaStream_t st)
{
    const unsigned threads = 256, rows_per_block = threads / 32;
    exact_k_norms_kernel<<<(unsigned)((n_alloc + rows_per_block - 1) / rows_per_block), threads, 0,
                           st>>>((const __half *)X, s, n_alloc, dp);
}

/* The pass runs the PAIRS kernel only (it lists the band), so that is
 * the one built, in both slots. */
static const fasted_fmt_ops exact_k_promoted_band_ops = {
    fasted_convert<exact_k_promoted_band>,
    exact_k_norms,
    fp16_twin_mma_kernels,
    (const void *)fasted_wg_kernel<exact_k_promoted_band, true>,
    (const void *)fasted_wg_kernel<exact_k_promoted_band, true>,
    NULL,
    NULL,
    NULL}; /* rows of its own: FP64-summed norms */

static const kern_variant exact_k_promoted_band_variants[] = {fasted_variant_row<all_on>()};

extern "C" const kern_format exact_kern_promoted_band = {exact_k_promoted_band::name,
                                                         (int)sizeof(__half),
                                                         exact_k_promoted_band::min_cc,
                                                         FASTED_WG_SMEM,
                                                         exact_k_promoted_band::int_dist,
                                                         exact_k_promoted_band_variants,
                                                         1, /* all-on only: exact's pass */
                                                         &exact_k_promoted_band_ops,
                                                         exact_k_promoted_band::widen,
                                                         exact_k_promoted_band::value_log2};
