/* The integer formats: 8-bit integer inputs (u8 for data in [0, 255], s8
 * for [-128, 127]: the host picks), S32 accumulation, on the mma.sync
 * (m16n8k32, sm_80) and wgmma (m64n256k32, sm_90a) paths, all-on only.
 * Every squared distance is exact:
 *  - the norms are sums of v^2 <= 65025 in unsigned 32-bit integers, kept
 *    in the FP32 norm array as their bits (norm_add), exact while
 *    d 65025 < 2^32;
 *  - the dot products a are exact in S32 while d 65025 < 2^31 (the host
 *    refuses d > 33025);
 *  - d2 = s_i + s_j - 2a in unsigned 32-bit arithmetic is exact modulo
 *    2^32, and the true d2 = sum (x - y)^2 <= d 255^2 < 2^32, so it is the
 *    exact integer;
 *  - a pair is kept when d2 <= p.eps2_u, the integer part of the FP64
 *    eps^2 (times the scale^2 of `set int8-scale`), which is fp64's
 *    decision for integer d2.
 * Pairs carry d2 as the nearest FP32 value (exact below 2^24). */
#include "fasted_format.cuh"
#include "fasted_mma.cuh"
#include "fasted_wgmma.cuh"

struct fmt_int_acc {
    typedef unsigned acc;
    static constexpr int promote = 0; /* integer sums are exact */
    typedef unsigned dist;
    static constexpr int int_dist = 1;
    static constexpr bool widen = false;
    static constexpr int value_log2 = 0;
    static constexpr int min_cc = 80;
    __device__ static unsigned d2(unsigned a, float si, float sj)
    {
        return __float_as_uint(si) + __float_as_uint(sj) - 2u * a;
    }
    __device__ static unsigned thr(const fasted_params &p)
    {
        return p.eps2_u;
    }
    __device__ static float to_f(unsigned d)
    {
        return __uint2float_rn(d);
    }
    __device__ static unsigned to_acc(unsigned d)
    {
        return d;
    }
    __device__ static unsigned from_acc(unsigned a)
    {
        return a;
    }
    /* v^2 exact in FP32 (v integral, |v| <= 255), added as an integer to
     * the bits of s. */
    __device__ static float norm_add(float s, float v)
    {
        return __uint_as_float(__float_as_uint(s) + __float2uint_rn(v * v));
    }
};

struct fmt_int8_u8 : fmt_int_acc {
    typedef uint8_t elem;
    static constexpr const char *name = "int8-u8";
    /* The values are integers already (or quantized by the host): round
     * to nearest and clamp, so a stray value cannot wrap. */
    __device__ static uint8_t from_float(float x)
    {
        return (uint8_t)min(255, max(0, __float2int_rn(x)));
    }
    __device__ static float to_float(uint8_t v)
    {
        return (float)v;
    }
    __device__ static void mma(unsigned (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k32_s32_u8(d, a, b);
    }
    __device__ static void wgmma(unsigned (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k32_s32_u8(d, da, db, 1);
    }
};

struct fmt_int8_s8 : fmt_int_acc {
    typedef int8_t elem;
    static constexpr const char *name = "int8-s8";
    __device__ static int8_t from_float(float x)
    {
        return (int8_t)min(127, max(-128, __float2int_rn(x)));
    }
    __device__ static float to_float(int8_t v)
    {
        return (float)v;
    }
    __device__ static void mma(unsigned (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        mma_sync_m16n8k32_s32_s8(d, a, b);
    }
    __device__ static void wgmma(unsigned (&d)[128], uint64_t da, uint64_t db)
    {
        wgmma_mma_async_m64n256k32_s32_s8(d, da, db, 1);
    }
};

static const kern_variant int8_variants[] = {fasted_variant_row<all_on>()};

static void u8_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_int8_u8, all_on>(func, func_pairs);
}

static void s8_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_int8_s8, all_on>(func, func_pairs);
}

FASTED_FORMAT(fmt_int8_u8, kern_fmt_int8_u8, int8_variants, u8_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_int8_u8, false>),
              ((const void *)fasted_wg_kernel<fmt_int8_u8, true>), FASTED_WG_SMEM);
FASTED_FORMAT(fmt_int8_s8, kern_fmt_int8_s8, int8_variants, s8_mma_kernels,
              ((const void *)fasted_wg_kernel<fmt_int8_s8, false>),
              ((const void *)fasted_wg_kernel<fmt_int8_s8, true>), FASTED_WG_SMEM);
