/* exact's COUNT pass at d <= 256 (exact_kern_band, exact_kern.cuh): fp16's
 * mainloop with exact's band epilogue, padded (the band is sparse there).
 * Its rows are fp16's (rows_of), so the cached dataset serves fasted and
 * exact alike. */
#include "exact_kern.cuh"

static const kern_variant exact_k_band_variants[] = {fasted_variant_row<all_on>()};

FASTED_FORMAT(exact_k_band, exact_kern_band, exact_k_band_variants, fp16_twin_mma_kernels,
              ((const void *)fasted_wg_kernel<exact_k_band, true>),
              ((const void *)fasted_wg_kernel<exact_k_band, true>), FASTED_WG_SMEM);
