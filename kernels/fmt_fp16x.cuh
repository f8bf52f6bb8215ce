/* kern_fmt_fp16x's traits (FP16 values, promoted wgmma sums, the
 * warpgroups' turns), shared by its formats: fmt_fp16x.cu (exact's COUNT
 * pass at large d, listing its band) and fmt_fp16xl.cu (exact's other
 * modes, listing every candidate). */
#ifndef TCJ_FMT_FP16X_CUH
#define TCJ_FMT_FP16X_CUH

#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"
#include "fmt_fp16.cuh"

struct fmt_fp16x : fmt_fp16 {
    /* exact's COUNT pass: its epilogue lists only the band (fmt_fp16xl
     * turns this off). */
    static constexpr bool band = true;
    static constexpr int promote = KERN_FP16X_PROMOTE_SLICES; /* fasted_wg_promote */
    static constexpr bool turns = true; /* the warpgroups' ping-pong (fasted_format.cuh) */
    __device__ static void wgmma_half(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
    {
        wgmma_mma_async_m64n128k16_f32_f16(d, da, db, scale_d);
    }
};

#endif
