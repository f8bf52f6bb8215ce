/* FP16 for the exact engine's COUNT pass at d <= 256 (kern_fmt_fp16b):
 * fp16's values, norms and mma.sync kernels, but a wgmma PAIRS kernel
 * whose epilogue can list only exact's band (F::band, fasted_epilogue.cuh).
 * A format of its own so that fasted's fp16 kernels compile without that
 * code; its rows are fp16's (rows_of), so the cached dataset serves
 * fasted and exact alike. The pass runs the PAIRS kernel only, so that is
 * the one built; the mma.sync path (no wgmma) runs fp16's, which list
 * every candidate. exact's other modes list every candidate and run
 * fp16's own PAIRS kernel (kernels/exact.cu). */
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"
#include "fmt_fp16.cuh"

struct fmt_fp16b : fmt_fp16 {
    static constexpr bool band = true;
    static constexpr bool band_pad = true; /* the band is sparse at d <= 256 */
    static constexpr const kern_format *rows_of = &kern_fmt_fp16;
};

static const kern_variant fp16b_variants[] = {fasted_variant_row<all_on>()};

FASTED_FORMAT(fmt_fp16b, kern_fmt_fp16b, fp16b_variants, fp16_twin_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_fp16b, true>),
              ((const void *)fasted_wg_kernel<fmt_fp16b, true>), FASTED_WG_SMEM);
