/* The FP8 formats: E4M3 and E5M2 inputs on the mma.sync (m16n8k32, sm_89
 * and later) and wgmma (m64n128k32 / m64n256k32, sm_90a) paths, all-on
 * only. A row of FP8 values takes half the bytes of FP16, so a 128-byte k
 * slice holds 128 of them and each MMA takes 32: the same 32 bytes of k
 * as every other format.
 *
 * The tensor core's FP8 accumulator keeps only ~13 significand bits. The
 * wgmma kernel promotes: each chunk of KERN_FP8_PROMOTE_SLICES 128-value k
 * slices is summed in the tensor core and added into FP32 registers
 * (fasted_wgmma.cuh), unless
 * the run asks for the tensor core's accumulation alone (`set fp8-acc
 * fast`: the _fast kernels below). The mma.sync path does not promote.
 *
 * The host scales the data by a power of two first (kern_join_args.scale:
 * the largest |v| just under the format's largest finite value, after
 * centring), which is exact, and reports distances unscaled. Conversion
 * rounds to nearest even and saturates to the largest finite value
 * (448 for E4M3, which has no Inf; 57344 for E5M2), as cvt.rn.satfinite
 * does; after the scale only Inf inputs can reach it. */
#include <cuda_fp8.h>

#include "fasted_format.cuh"
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"

template <__nv_fp8_interpretation_t I> struct fmt_fp8_base : fasted_fp32_acc {
    typedef __nv_fp8_storage_t elem;
    static constexpr int promote = KERN_FP8_PROMOTE_SLICES; /* fasted_wg_promote */
    static constexpr int min_cc = 89;
    __device__ static elem from_float(float x)
    {
        return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, I);
    }
    __device__ static float to_float(elem v)
    {
        return __half2float(__half(__nv_cvt_fp8_to_halfraw(v, I)));
    }
    /* v*v is exact in FP32 (at most 4-bit significands); the sum rounds
     * toward zero, as for every format. */
    __device__ static float norm_add(float s, float v)
    {
        return __fmaf_rz(v, v, s);
    }
};

struct fmt_fp8_e4m3 : fmt_fp8_base<__NV_E4M3> {
    static constexpr const char *name = "fp8-e4m3";
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k32_f32_e4m3(d, a, b);
    }
    __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k32_f32_e4m3(d, da, db, 1);
    }
    __device__ static void wgmma_half(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
    {
        wgmma_mma_async_m64n128k32_f32_e4m3(d, da, db, scale_d);
    }
};

struct fmt_fp8_e5m2 : fmt_fp8_base<__NV_E5M2> {
    static constexpr const char *name = "fp8-e5m2";
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k32_f32_e5m2(d, a, b);
    }
    __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k32_f32_e5m2(d, da, db, 1);
    }
    __device__ static void wgmma_half(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
    {
        wgmma_mma_async_m64n128k32_f32_e5m2(d, da, db, scale_d);
    }
};

static const kern_variant fp8_variants[] = {fasted_variant_row<all_on>()};

static void e4m3_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_fp8_e4m3, all_on>(func, func_pairs);
}

static void e5m2_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_fp8_e5m2, all_on>(func, func_pairs);
}

/* The kernels of `set fp8-acc fast`: the same formats without promotion. */
struct fmt_fp8_e4m3_fast : fmt_fp8_e4m3 {
    static constexpr int promote = 0;
};
struct fmt_fp8_e5m2_fast : fmt_fp8_e5m2 {
    static constexpr int promote = 0;
};

FASTED_FORMAT_ACC(fmt_fp8_e4m3, kern_fmt_fp8_e4m3, fp8_variants, e4m3_mma_kernels,
                  ((const void *)fasted_wg_kernel<fmt_fp8_e4m3, false>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e4m3, true>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e4m3_fast, false>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e4m3_fast, true>), FASTED_WG_SMEM);
FASTED_FORMAT_ACC(fmt_fp8_e5m2, kern_fmt_fp8_e5m2, fp8_variants, e5m2_mma_kernels,
                  ((const void *)fasted_wg_kernel<fmt_fp8_e5m2, false>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e5m2, true>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e5m2_fast, false>),
                  ((const void *)fasted_wg_kernel<fmt_fp8_e5m2_fast, true>), FASTED_WG_SMEM);
