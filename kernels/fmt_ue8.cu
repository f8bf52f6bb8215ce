/* The unsigned 8-bit formats ue5m3 and ue4m4 (src/fmt8.h, docs/FORMATS.md):
 * stored in 8 bits on the device (half FP16's memory and traffic), widened
 * to FP16 inside the kernels, as mixed-input GEMMs do, and multiplied on
 * the FP16 tensor cores with FP32 accumulation; all-on only.
 *
 * Widening is exact and cheap because every value of both formats is an
 * FP16 value:
 *  - ue5m3 is FP16 without its sign bit and its low 7 mantissa bits: the
 *    FP16 encoding is code << 7 (subnormals and Inf included);
 *  - ue4m4 (bias 7): code << 6 read as FP16 is 2^-8 times the value, for
 *    normals and subnormals alike, so the device holds the values times
 *    2^-8 (value_log2; the host scales the data, eps^2 and the edges and
 *    the distances back, exactly) and widens with the shift alone.
 *    Rounding commutes with the power of two: the scaled format is FP16
 *    with 5 significand bits, exponents -14..0, saturating at 496 2^-8.
 * mma.sync takes the codes in the 8-bit m16n8k32 fragments (32 bytes of k,
 * as FP8) and widens each register of 4 codes into two registers of 2 FP16
 * values for two m16n8k16 MMAs: the k order inside them is permuted, but
 * identically for A and B (a thread holds the same k in both), and a dot
 * product does not care. The wgmma kernel (fasted_wg_ue8.cuh) widens A in
 * the consumer warps' registers and B once per tile slice in shared
 * memory, in one permuted k order.
 *
 * Rounding from FP32 (the host rounds FP64 to FP32 to odd first, 24 >= 5 +
 * 2 bits, so this is the rounding of the FP64 value) is src/fmt8.c's: to
 * nearest even, gradual underflow; ue5m3 overflows to Inf from 63488 (the
 * tie past 61440 goes to the even 65536), ue4m4 saturates at 496. The data
 * are non-negative (the host refuses negative data or shifts them). */
#include <cuda_fp16.h>

#include "fasted_format.cuh"
#include "fasted_mma.cuh"
#include "fasted_wg_ue8.cuh"

/* x > 0 rounded to nearest even with P significand bits, the quantum never
 * below 2^(EMIN-P+1) (gradual underflow); overflow is the caller's. */
template <int P, int EMIN> __device__ __forceinline__ float ue8_round(float x)
{
    if (!(x > 0.0f))
        return 0.0f;
    const int e = max(ilogbf(x), EMIN);
    const float q = __int_as_float((e - (P - 1) + 127) << 23);    /* 2^(e-P+1) */
    const float iq = __int_as_float((127 - (e - (P - 1))) << 23); /* 1/q */
    return rintf(__fmul_rn(x, iq)) * q;
}

struct fmt_ue8_base : fasted_fp32_acc {
    typedef uint8_t elem;
    static constexpr int min_cc = 80;
    static constexpr bool widen = true;
    /* wgmma rings (fasted_wg_ue8.cuh): 4 FP16 B slices of 32 KB and 4
     * slices of B codes of 16 KB (193 KB; a histogram of up to 4351 bins
     * fits beside them, larger ones take the mma.sync kernel). */
    static constexpr int wg_stages = 4, wg_stages8 = 4;
    /* v*v is exact in FP32 (at most 5-bit significands); the sum rounds
     * toward zero, as for every format. */
    __device__ static float norm_add(float s, float v)
    {
        return __fmaf_rz(v, v, s);
    }
};

/* Widen: codes 0,1 of the register c (its low bytes) into lo, 2,3 into hi,
 * each a pair of FP16 encodings: byte b to code << SH in its 16-bit half. */
template <int SH> __device__ __forceinline__ void ue8_spread(uint32_t c, uint32_t &lo, uint32_t &hi)
{
    lo = __byte_perm(c, 0, 0x4140) << SH;
    hi = __byte_perm(c, 0, 0x4342) << SH;
}

template <class W> struct fmt_ue8_mma : fmt_ue8_base {
    __device__ static void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2])
    {
        uint32_t al[4], ah[4], bl[2], bh[2];
#pragma unroll
        for (int i = 0; i < 4; i++)
            W::widen4(a[i], al[i], ah[i]);
        W::widen4(b[0], bl[0], bh[0]);
        W::widen4(b[1], bl[1], bh[1]);
        mma_sync_m16n8k16_f32_f16(d, al, bl);
        mma_sync_m16n8k16_f32_f16(d, ah, bh);
    }
};

struct fmt_ue5m3 : fmt_ue8_mma<fmt_ue5m3> {
    static constexpr const char *name = "ue5m3";
    __device__ static uint8_t from_float(float x)
    {
        if (x != x)
            return 0xff; /* a NaN code */
        if (x >= 63488.0f)
            return 0xf8; /* +Inf */
        return (uint8_t)(__half_as_ushort(__float2half_rn(ue8_round<4, -14>(x))) >> 7);
    }
    __device__ static float to_float(uint8_t v)
    {
        return __half2float(__ushort_as_half((unsigned short)(v << 7)));
    }
    __device__ static void widen4(uint32_t c, uint32_t &lo, uint32_t &hi)
    {
        ue8_spread<7>(c, lo, hi);
    }
};

struct fmt_ue4m4 : fmt_ue8_mma<fmt_ue4m4> {
    static constexpr const char *name = "ue4m4";
    static constexpr int value_log2 = -8;
    /* x is 2^-8 times the data value. */
    __device__ static uint8_t from_float(float x)
    {
        const float top = 496.0f * 0x1p-8f;
        const float r = x >= top ? top : fminf(ue8_round<5, -14>(x), top);
        return (uint8_t)(__half_as_ushort(__float2half_rn(r)) >> 6);
    }
    __device__ static float to_float(uint8_t v)
    {
        return __half2float(__ushort_as_half((unsigned short)(v << 6)));
    }
    __device__ static void widen4(uint32_t c, uint32_t &lo, uint32_t &hi)
    {
        ue8_spread<6>(c, lo, hi);
    }
};

static const kern_variant ue8_variants[] = {fasted_variant_row<all_on>()};

static void ue5m3_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_ue5m3, all_on>(func, func_pairs);
}

static void ue4m4_mma_kernels(unsigned off, const void **func, const void **func_pairs)
{
    *func = *func_pairs = NULL;
    if (off == all_on::OFF)
        fasted_mma_kernels<fmt_ue4m4, all_on>(func, func_pairs);
}

FASTED_FORMAT(fmt_ue5m3, kern_fmt_ue5m3, ue8_variants, ue5m3_mma_kernels,
              ((const void *)fasted_wg_ue8_kernel<fmt_ue5m3, false>),
              ((const void *)fasted_wg_ue8_kernel<fmt_ue5m3, true>), UE8_WG_SMEM_OF(fmt_ue5m3));
FASTED_FORMAT(fmt_ue4m4, kern_fmt_ue4m4, ue8_variants, ue4m4_mma_kernels,
              ((const void *)fasted_wg_ue8_kernel<fmt_ue4m4, false>),
              ((const void *)fasted_wg_ue8_kernel<fmt_ue4m4, true>), UE8_WG_SMEM_OF(fmt_ue4m4));
