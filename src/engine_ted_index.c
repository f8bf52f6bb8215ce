/* `ted-index`: TED-Join with GDS-Join's grid index over the index_k
 * highest-variance dimensions (set index-k N), FP64 tensor cores. */
#include "engine.h"
#include "kernels.h"

static int ted_index_available(const engine_opts *o)
{
    return engine_gpu_fp64_tc("ted-index", o);
}

const engine engine_ted_index = {
    .name = "ted-index",
    .precision = "fp64-tc",
    .summary = "TED-Join with a grid index of cells of side eps, FP64 tensor cores",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 0,
    .in_bits = 53,
    .available = ted_index_available,
    .run = engine_gpu_run,
    .kjoin = kern_ted_index_run,
};
