/* FP16 for the exact engine's PAIRS, PERPOINT and HIST passes at large d
 * (kern_fmt_fp16xl): kern_fmt_fp16x's promoting wgmma kernel and its rows
 * (rows_of: FP64-summed norms, so the cached dataset serves both), but
 * without the band's epilogue. These modes list every candidate, and
 * fp16x's PAIRS kernel carries the band's test beside the plain one in
 * pass 2, chosen at run time (docs/history/ACCURACY-2026-11.md, "Warm
 * medians"): fp16
 * does the same at d <= 256 (kernels/exact.cu). The pass runs the PAIRS
 * kernel only, so that is the one built; the mma.sync path (no wgmma)
 * runs fp16's, as fp16x does. */
#include "fmt_fp16x.cuh"

struct fmt_fp16xl : fmt_fp16x {
    static constexpr bool band = false;
    static constexpr const kern_format *rows_of = &kern_fmt_fp16x;
};

static const kern_variant fp16xl_variants[] = {fasted_variant_row<all_on>()};

FASTED_FORMAT(fmt_fp16xl, kern_fmt_fp16xl, fp16xl_variants, fp16_twin_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_fp16xl, true>),
              ((const void *)fasted_wg_kernel<fmt_fp16xl, true>), FASTED_WG_SMEM);
