/* The TF32 format: TF32 inputs (FP32 storage, 10 stored significand bits),
 * FP32 accumulation, on the mma.sync (m16n8k8.tf32) and wgmma
 * (m64n256k8.tf32) paths, all-on only. A row of TF32 values takes twice
 * the bytes of FP16, so a 128-byte k slice holds 32 of them and each MMA
 * takes 8: the same 32 bytes of k as every other format. */
#include "fasted_format.cuh"
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"

struct fmt_tf32 : fasted_fp32_acc {
    typedef float elem;
    static constexpr const char *name = "tf32";
    static constexpr int min_cc = 80;
    /* Round to nearest even at the 13th bit of the FP32 significand (TF32
     * keeps 10 stored bits), carrying into the exponent (the largest values
     * round to Inf); Inf and NaN pass unchanged. The tensor core then reads
     * the value exactly (it ignores the 13 low bits, which are zero). */
    __device__ static float from_float(float x)
    {
        unsigned u = __float_as_uint(x);
        if ((u & 0x7f800000u) == 0x7f800000u)
            return x;
        u += 0xfffu + ((u >> 13) & 1u);
        return __uint_as_float(u & 0xffffe000u);
    }
    __device__ static float to_float(float v)
    {
        return v;
    }
    /* v*v is exact in FP32 (11-bit significands); the sum rounds toward zero. */
    __device__ static float norm_add(float s, float v)
    {
        return __fmaf_rz(v, v, s);
    }
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k8_f32_tf32(d, a, b);
    }
    __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k8_f32_tf32(d, da, db, 1);
    }
};

static const kern_variant tf32_variants[] = {fasted_variant_row<all_on>()};

static void tf32_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_tf32, all_on>(func, func_pairs);
}

FASTED_FORMAT(fmt_tf32, kern_fmt_tf32, tf32_variants, tf32_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_tf32, false>),
              ((const void *)fasted_wg_kernel<fmt_tf32, true>), FASTED_WG_SMEM);
