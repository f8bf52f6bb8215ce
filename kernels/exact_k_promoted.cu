/* exact's PAIRS, PERPOINT and HIST passes at large d (exact_kern_promoted,
 * exact_kern.cuh): the promoting mainloop with the join's epilogue, on the
 * rows of exact_kern_promoted_band (rows_of: FP64-summed norms). These
 * modes list every candidate (below d = 256 fp16's kernels do the same).
 * The join's other instance carries exact's k-distance passes (their
 * kernel modes, fasted_kdist.cu), so their bound is the promoted one. */
#include "exact_kern.cuh"

static const kern_variant exact_k_promoted_variants[] = {fasted_variant_row<all_on>()};

FASTED_FORMAT(exact_k_promoted, exact_kern_promoted, exact_k_promoted_variants,
              fp16_twin_mma_kernels, ((const void *)fasted_wg_kernel<exact_k_promoted, false>),
              ((const void *)fasted_wg_kernel<exact_k_promoted, true>), FASTED_WG_SMEM);
