/* `ted`: TED-Join brute force on FP64 tensor cores; `set ted paper` runs the
 * paper's m8n8k4 kernel, the default is the redesigned one (sm_90). */
#include "engine.h"
#include "kernels.h"

static int ted_available(const engine_opts *o)
{
    return engine_gpu_fp64_tc("ted", o);
}

const engine engine_ted = {
    .name = "ted",
    .precision = "fp64-tc",
    .summary = "TED-Join brute force on FP64 tensor cores (set ted paper|redesigned)",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 0,
    .in_bits = 53,
    .available = ted_available,
    .run = engine_gpu_run,
    .kjoin = kern_ted_run,
};
