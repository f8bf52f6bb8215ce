/* The FP16 format's descriptor, kern_fmt_fp16: its all-on and wgmma
 * kernels and the table of compiled teaching variants. */
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"
#include "fmt_fp16.cuh"

static const kern_variant fp16_variants[] = {
    fasted_variant_row<all_on>(),
    fasted_variant_row<no_smem_buffer>(),
    fasted_variant_row<no_async_copy>(),
    fasted_variant_row<no_pipeline>(),
    fasted_variant_row<no_async_pipeline>(),
    fasted_variant_row<no_residency>(),
    fasted_variant_row<no_warp_tile>(),
    fasted_variant_row<no_swizzle>(),
    fasted_variant_row<no_align>(),
};

static void fp16_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_fp16, all_on>(func, func_pairs);
    else if (!fasted_fp16_va(off, func, func_pairs))
        fasted_fp16_vb(off, func, func_pairs);
}

FASTED_FORMAT(fmt_fp16, kern_fmt_fp16, fp16_variants, fp16_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_fp16, false>),
              ((const void *)fasted_wg_kernel<fmt_fp16, true>), FASTED_WG_SMEM);
