/* The engines' settings that persist across runs (`set`), apart from the
 * engine table (src/engine.h): what src/devices.c and the settings parse
 * and show without knowing the engines. */
#ifndef TCJ_ENGINE_OPTS_H
#define TCJ_ENGINE_OPTS_H

#include <stddef.h>

/* Engine settings that persist across runs (`set`). */
typedef struct engine_opts {
    int threads;         /* CPU threads, 0 = one per core */
    int symmetric;       /* GPU: compute tiles on/above the diagonal only */
    unsigned fasted_off; /* FASTED optimizations turned off (bit per switch) */
    int ted_paper;       /* ted: 1 = the TED-Join paper's WMMA kernel */
    int index_k;         /* ted-index: dimensions indexed, default 6 */
    size_t batch_pairs;  /* pairs per sink batch (host and device buffers) */
    int device;          /* CUDA device ordinal */
    size_t gpu_mem;      /* GPU: device bytes a run may hold, 0 = the device's (buffers shrink) */
    /* CPU engines: kernels' instruction set (cpu_simd_isa; 0 = auto: the
     * widest the CPU has; `set cpu-simd`) and the grid index (CPU_INDEX_*
     * of src/cpu_join.h: 0 = auto, when it prunes; 1 = off; 2 = on whenever
     * it can be built; `set cpu-index`). */
    int cpu_simd;
    int cpu_index;
    /* Low-precision engines (rows with .centers): subtract the FP64 column
     * means before converting (src/center.h: CENTER_DEFAULT, _AUTO, _ON,
     * _OFF, _LOCAL). */
    int center;
    /* int8 engines: quantize data that are not 8-bit integers (round to
     * nearest after a per-dataset scale; the run is marked inexact)
     * instead of refusing them. */
    int int8_scale;
    /* Unsigned formats (ue5m3, ue4m4): translate each column by its
     * minimum (src/shift.h) instead of refusing negative data. */
    int shift;
    /* FP8 engines on Hopper's wgmma kernel: 1 = accumulate in the tensor
     * core alone (~13 significand bits), 0 = promote each 256-value k
     * chunk into FP32 registers (the default; `set fp8-acc`). */
    int fp8_acc_fast;
    /* `set devices` (src/devices.h): the GPUs a FASTED-format run is
     * spread over, bit k for ordinal k, or devices_all; neither: device
     * alone. */
    unsigned long long devices;
    int devices_all;
    /* exact: which path computes the join (src/exact_path.h: EXACT_PATH_AUTO,
     * _PASS, _GRID, _CLUSTERS; `set exact-path`). */
    int exact_path;
    /* ladder: the rung the engine runs (kernels.h's kern_ladder_rungs,
     * 1..KERN_LADDER_OWN; 0: the last own rung; `set ladder-rung`). */
    int ladder_rung;
    /* DBSCAN's curve: its route (src/cluster/curve_plan.h: CURVE_ROUTE_AUTO,
     * _DEVICE, _HOST; `set curve-route`). */
    int curve_route;
} engine_opts;

void engine_opts_default(engine_opts *o);
/* o, or the defaults filled into *def when o is NULL (a spec without
 * options). */
const engine_opts *engine_opts_or_default(const engine_opts *o, engine_opts *def);

#endif
