/* kern_fmt_fp16x's traits (FP16 values, promoted wgmma sums, the
 * warpgroups' turns), shared by its formats: fmt_fp16x.cu (exact's COUNT
 * pass at large d, listing its band) and fmt_fp16xl.cu (exact's other
 * modes, listing every candidate). */
#ifndef TCJ_FMT_FP16X_CUH
#define TCJ_FMT_FP16X_CUH

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
