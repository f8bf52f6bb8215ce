/* exact's tensor-core kernels (kernels/exact.cu): fp16's number format
 * (fmt_fp16.cuh) with exact's own mainloop and epilogue choices. They are
 * not formats of the engine table: each is a kern_format handle
 * (exact_kern.h) that exact hands the FASTED driver (fasted_run.cuh),
 * built by one instance file:
 *   exact_k_band.cu           COUNT at d <= 256: fp16's mainloop, exact's
 *                             band epilogue (epi_band.cuh), padded
 *   exact_k_promoted_band.cu  COUNT at large d: the promoting mainloop,
 *                             the band epilogue
 *   exact_k_promoted.cu       the other modes at large d: the promoting
 *                             mainloop, the join's epilogue; and its
 *                             instance without PAIRS, exact's k-distance
 *                             passes at large d (fasted_kdist.cu)
 * Below d = 256 the other modes run fp16's own kernels. The joins run in
 * PAIRS mode (the pass lists its candidates), so the band kernels build
 * the wgmma PAIRS kernel only; without wgmma
 * they run fp16's mma.sync kernels (fp16_twin_mma_kernels), unpromoted,
 * which exact's bound follows (its params hook learns which runs). */
#ifndef TCJ_EXACT_KERN_CUH
#define TCJ_EXACT_KERN_CUH

#include "exact_kern.h"
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"
#include "fmt_fp16.cuh"

/* Mainloop option: FP32 promotion (fasted_wg_promote). Chunks of
 * KERN_FP16X_PROMOTE_SLICES k slices (128 FP16 values) are summed in the
 * tensor core from zero (an m64n128 instruction) and added into FP32
 * registers, so the product's accumulation error is gamma_128 +
 * gamma_(d/128) instead of gamma_d (kernels/exact_bound.h,
 * exact_bound_init_promoted); the two consumer warpgroups take turns
 * issuing their chunks, so one's drain overlaps the other's products. */
template <class Base> struct exact_ml_promote : Base {
    static constexpr int promote = KERN_FP16X_PROMOTE_SLICES;
    static constexpr bool turns = true; /* fasted_turns */
    __device__ static void wgmma_half(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
    {
        wgmma_mma_async_m64n128k16_f32_f16(d, da, db, scale_d);
    }
};

/* Epilogue option: the PAIRS epilogue lists only exact's band
 * (epi_band.cuh); PAD: its interior blocks' slots are reserved
 * whole and padded, which pays where the band is sparse (d <= 256). */
template <class Base, bool PAD> struct exact_epi_band : Base {
    static constexpr bool band = true; /* fasted_band */
    static constexpr bool band_pad = PAD;
};

/* The three kernels' traits. rows_of: the kernels read the rows and norms
 * of that handle, so the cached dataset serves both. */
struct exact_k_band : exact_epi_band<fmt_fp16, true> {
    static constexpr const kern_format *rows_of = &kern_fmt_fp16;
};
struct exact_k_promoted_band : exact_epi_band<exact_ml_promote<fmt_fp16>, false> {
};
struct exact_k_promoted : exact_ml_promote<fmt_fp16> {
    static constexpr const kern_format *rows_of = &exact_kern_promoted_band;
};

#endif
