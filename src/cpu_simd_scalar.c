/* The portable path: plain C vectors of two doubles (SSE2 on x86-64, NEON
 * on arm64, scalar code elsewhere), one query row per call. It is what
 * the CPU engines ran before the wider paths, and their reference. */
#define CS_VW 2
#define CS_R64 1
#define CS_R32 1
#define CS_FN(x) cs_scalar_##x
/* NaN compares false, as in the scalar test s > lim */
#define CS_LE(v, lim) ((unsigned)((v)[0] <= (lim)) | (unsigned)((v)[1] <= (lim)) << 1)
#define CS_ABOVE(v, lim) ((unsigned)((v)[0] > (lim)) | (unsigned)((v)[1] > (lim)) << 1)
#define CS_NGTF(v, lim)                                                                            \
    ((unsigned)!((v)[0] > (lim)) | (unsigned)!((v)[1] > (lim)) << 1 |                              \
     (unsigned)!((v)[2] > (lim)) << 2 | (unsigned)!((v)[3] > (lim)) << 3)
#include "cpu_simd_body.h"

const cpu_simd_ops cpu_simd_scalar = {
    .name = "scalar",
    .isa = CPU_SIMD_SCALAR,
    .f64 = cs_scalar_f64,
    .f64_rows = CS_R64,
    .f32 = cs_scalar_f32,
    .f32_rows = CS_R32,
    .f32_screen = cs_scalar_f32_screen,
    .gap2 = cs_scalar_gap2,
    .box_live = cs_scalar_box_live,
    .f64_lanes = 1,
};
