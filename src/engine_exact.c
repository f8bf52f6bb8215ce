/* `exact`: the FP64 pair set at tensor-core speed. FASTED's FP16 pass keeps
 * every pair the error bound (kernels/exact_bound.h, docs/ACCURACY.md) says
 * could be within eps, and the GPU computes each of those again with the
 * fp64 engine's arithmetic: fp64's count, per-point counts, histogram and
 * pair set with FP64 distances. On a GPU it is the ground truth compare and
 * sweep use by default. */
#include "engine.h"
#include "kernels.h"

KERN_FORMAT_DECL(fp16);

const engine engine_exact = {
    .name = "exact",
    .precision = "fp16-32+fp64",
    .summary = "FASTED's FP16 pass bounded by its error, the candidates recomputed in FP64: "
               "fp64's results (the GPU ground truth)",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .rank = {[ENGINE_ROLE_TRUTH] = 3},
    .run = engine_gpu_run,
    .kjoin = kern_exact_run,
    .format = KERN_FORMAT(fp16),
    .centers = 1,
};
