/* The AVX2 path: 4 doubles (8 floats) per vector, 2 query rows per FP64
 * call (4 vectors x 2 rows = 8 independent sums in 16 ymm registers) and 4
 * per FP32 call. Compiled for AVX2 here only; cpu_simd_get calls it only
 * on a CPU that has it. */
#include "cpu_simd.h"

#if defined(__x86_64__) && defined(__GNUC__)
#pragma GCC target("avx2,popcnt")
#include <immintrin.h>
#define CS_LE(v, lim)                                                                              \
    ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((__m256d)(v), _mm256_set1_pd(lim), _CMP_LE_OQ)))
#define CS_ABOVE(v, lim)                                                                           \
    ((unsigned)_mm256_movemask_pd(_mm256_cmp_pd((__m256d)(v), _mm256_set1_pd(lim), _CMP_GT_OQ)))
#define CS_NGTF(v, lim)                                                                            \
    ((unsigned)_mm256_movemask_ps(_mm256_cmp_ps((__m256)(v), _mm256_set1_ps(lim), _CMP_NGT_UQ)))
#define CS_VW 4
#define CS_R64 2
#define CS_R32 4
#define CS_FN(x) cs_avx2_##x
#include "cpu_simd_body.h"

const cpu_simd_ops cpu_simd_avx2 = {
    .name = "avx2",
    .isa = CPU_SIMD_AVX2,
    .f64 = cs_avx2_f64,
    .f64_rows = CS_R64,
    .f32 = cs_avx2_f32,
    .f32_rows = CS_R32,
    .f32_screen = cs_avx2_f32_screen,
    .gap2 = cs_avx2_gap2,
    .box_live = cs_avx2_box_live,
    .f64_lanes = 4,
};
#else
const cpu_simd_ops cpu_simd_avx2 = {.name = "avx2", .isa = CPU_SIMD_AVX2};
#endif
