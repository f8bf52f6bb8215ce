/* `fp64`: exact FP64 join on the GPU's CUDA cores, direct (a-b)^2 form, no
 * FMA contraction; its pair set equals the `cpu` engine's bit for bit. */
#include "engine.h"
#include "kernels.h"

static int fp64_available(const engine_opts *o)
{
    return engine_gpu_device("fp64", o, NULL);
}

const engine engine_fp64 = {
    .name = "fp64",
    .precision = "fp64",
    .summary = "exact FP64 on CUDA cores, direct (a-b)^2 form: the ground truth on the GPU",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .rank = {[ENGINE_ROLE_TRUTH] = 2},
    .available = fp64_available,
    .run = engine_gpu_run,
    .kjoin = kern_fp64_run,
};
