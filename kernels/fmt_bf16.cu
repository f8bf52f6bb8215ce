/* The BF16 format: BF16 inputs, FP32 accumulation, on the mma.sync
 * (m16n8k16.bf16) and wgmma (m64n256k16.bf16) paths, all-on only. */
#include <cuda_bf16.h>

#include "fasted_format.cuh"
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"

struct fmt_bf16 : fasted_fp32_acc {
    typedef __nv_bfloat16 elem;
    static constexpr const char *name = "bf16";
    static constexpr int min_cc = 80;
    /* Round to nearest even to 8 significand bits, FP32's exponent range. */
    __device__ static __nv_bfloat16 from_float(float x)
    {
        return __float2bfloat16_rn(x);
    }
    __device__ static float to_float(__nv_bfloat16 v)
    {
        return __bfloat162float(v);
    }
    /* v*v is exact in FP32 (8-bit significands); the sum rounds toward zero. */
    __device__ static float norm_add(float s, float v)
    {
        return __fmaf_rz(v, v, s);
    }
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k16_f32_bf16(d, a, b);
    }
    __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k16_f32_bf16(d, da, db, 1);
    }
};

static const kern_variant bf16_variants[] = {fasted_variant_row<all_on>()};

static void bf16_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_bf16, all_on>(func, func_pairs);
}

FASTED_FORMAT(fmt_bf16, kern_fmt_bf16, bf16_variants, bf16_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_bf16, false>),
              ((const void *)fasted_wg_kernel<fmt_bf16, true>), FASTED_WG_SMEM);
