/* Host memory on the GPU: every GPU engine gives identical
 * results on copies of the same values held as u8, f16, f32 and f64 (the
 * kernels widen the typed rows a block at a time, kern_rows_f64), so the
 * typed uploads of fasted, exact, fp64, ted and ted-index are the FP64
 * ones. Skips without a GPU. */
#include "same_types.h"

TEST(gpu_engines_same_on_every_type_integers)
{
    /* 1500 points of d = 24 in [0, 255]: every type holds them. d^2 has
     * mean 24 x 255^2 / 6 = 260k and std about 62k: eps 370 (d^2 137k, 2
     * std below) gives some tens of neighbours a point. */
    double *x = values(1500, 24, 0, 5);
    same_everywhere(x, 1500, 24, 370.0, 0xf, 1);
    free(x);
}

TEST(gpu_engines_same_on_every_type_fractions)
{
    /* 3000 points of d = 40 on a 2^-10 grid: f16, f32 and f64 hold them.
     * d^2 has mean 40/6 = 6.7 and std 1.25: eps 2 (d^2 4, 2 std below). */
    double *x = values(3000, 40, 1, 6);
    same_everywhere(x, 3000, 40, 2.0, (1 << DTYPE_F64) | (1 << DTYPE_F32) | (1 << DTYPE_F16), 1);
    free(x);
}
