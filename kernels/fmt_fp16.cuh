/* The FP16 format (FASTED as in the paper): traits shared by its instance
 * files fmt_fp16.cu (descriptor, all-on and wgmma kernels) and
 * fmt_fp16_va.cu / fmt_fp16_vb.cu (the teaching variants, split so they
 * compile in parallel). */
#ifndef TCJ_FMT_FP16_CUH
#define TCJ_FMT_FP16_CUH

#include <cuda_fp16.h>

#include "fasted_format.cuh"
#include "ptx.cuh"

struct fmt_fp16 : fasted_fp32_acc {
    typedef __half elem;
    static constexpr const char *name = "fp16";
    static constexpr int min_cc = 80;
    /* Round to nearest even; |x| >= 65520 becomes Inf, tiny values
     * subnormal or 0 (__float2half_rn). */
    __device__ static __half from_float(float x)
    {
        return __float2half_rn(x);
    }
    __device__ static float to_float(__half v)
    {
        return __half2float(v);
    }
    /* v*v is exact in FP32 (11-bit significands); the sum rounds toward
     * zero, as the paper forms its norms. */
    __device__ static float norm_add(float s, float v)
    {
        return __fmaf_rz(v, v, s);
    }
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k16_f32_f16(d, a, b);
    }
    __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k16_f32_f16(d, da, db, 1);
    }
};

/* exact's kernels (exact_kern.cuh) change only the wgmma
 * kernels: without wgmma they run fp16's own mma.sync kernels. */
static inline void fp16_twin_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    kern_fmt_fp16.ops->mma_kernels(off, func, func_pairs);
}

/* The teaching variants' kernels (fmt_fp16_va.cu, fmt_fp16_vb.cu): false
 * when off is not one of that file's configurations. */
bool fasted_fp16_va(unsigned off, const void **func, const void **func_pairs);
bool fasted_fp16_vb(unsigned off, const void **func, const void **func_pairs);

#endif
