/* The AVX-512 path: 8 doubles (16 floats) per vector, 4 query rows per
 * FP64 call (2 vectors x 4 rows = 8 independent sums) and 8 per FP32 call
 * (a group is one zmm). Compiled for AVX-512F here only; cpu_simd_get calls
 * it only on a CPU that has it. */
#include "cpu_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx512f,popcnt")
#include <immintrin.h>
#define CS_LE(v, lim) ((unsigned)_mm512_cmp_pd_mask((__m512d)(v), _mm512_set1_pd(lim), _CMP_LE_OQ))
#define CS_ABOVE(v, lim)                                                                           \
    ((unsigned)_mm512_cmp_pd_mask((__m512d)(v), _mm512_set1_pd(lim), _CMP_GT_OQ))
#define CS_NGTF(v, lim)                                                                            \
    ((unsigned)_mm512_cmp_ps_mask((__m512)(v), _mm512_set1_ps(lim), _CMP_NGT_UQ))
#define CS_VW 8
#define CS_R64 4
#define CS_R32 8
#define CS_FN(x) cs_avx512_##x
#include "cpu_simd_body.h"

const cpu_simd_ops cpu_simd_avx512 = {
    .name = "avx512",
    .isa = CPU_SIMD_AVX512,
    .f64 = cs_avx512_f64,
    .f64_rows = CS_R64,
    .f32 = cs_avx512_f32,
    .f32_rows = CS_R32,
    .f32_screen = cs_avx512_f32_screen,
    .gap2 = cs_avx512_gap2,
    .box_live = cs_avx512_box_live,
    .f64_lanes = 8,
};
#else
const cpu_simd_ops cpu_simd_avx512 = {.name = "avx512", .isa = CPU_SIMD_AVX512};
#endif
