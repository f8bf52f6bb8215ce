/* The GPU engines' host side by role, shared by the join (engine_gpu_run)
 * and the k-distance (engine_gpu_kdist) of src/engine_gpu.c:
 * - src/engine_gpu_args.c: a run's kern_join_args from the dataset, the
 *   rows and the session's options (engine_opts read in one place);
 * - src/engine_gpu_xform.c: the format transforms that leave distances
 *   unchanged or scale them exactly (centring, the unsigned formats'
 *   shift, FP8's power-of-two scale);
 * - src/engine_gpu_result.c: the kern_join_result as a join_result
 *   (phases, the metrics every GPU run records, exact's counters,
 *   multi-GPU shares, TFLOPS) and kernel return codes as TCJ_E* codes.
 * Private to those files. */
#ifndef TCJ_ENGINE_GPU_INT_H
#define TCJ_ENGINE_GPU_INT_H

#include "engine.h"
#include "fmt_fit.h"
#include "kernels.h"

/* The arguments every GPU run shares: the dataset as the kernels read it,
 * query rows [q0, q1), the options (o: never NULL), cancel and progress,
 * kernel format fmt. mode, eps and the outputs are the caller's. */
void engine_gpu_args(const dataset *ds, size_t q0, size_t q1, const engine_opts *o,
                     const volatile int *cancel, void (*progress)(void *ctx, double frac),
                     void *progress_ctx, const struct kern_format *fmt, kern_join_args *a);

/* What the transforms did to a run's data. */
typedef struct gpu_xform {
    int shifted; /* unsigned format under `set shift on`: column minima subtracted */
    int scaled;  /* scaled format (FP8): data times 2^fit.scale */
    fmt_fit fit;
} gpu_xform;
/* Choose row e's transforms into a->center and a->scale: the column means
 * when the row centres (`set center`; an exact row joining at *eps by its
 * own rule; eps NULL: no join, the k-distance), or the minima of an unsigned row under `set shift
 * on` (without it negative data are refused with one line); then a scaled format's power of two,
 * else scale (0: none). 0 or a TCJ_E* code with err_msg. */
int engine_gpu_xform(const engine *e, const dataset *ds, const engine_opts *o, const double *eps,
                     double scale, kern_join_args *a, gpu_xform *x);

/* The arguments and transforms of row e's PAIRS run at eps over query rows
 * [q0, q1) whose pairs a device consumer takes (DBSCAN's passes, the
 * curve's joins): engine_gpu_args, then engine_gpu_xform at eps. */
int engine_gpu_pairs_args(const engine *e, const dataset *ds, size_t q0, size_t q1, double eps,
                          const engine_opts *o, double scale, const volatile int *cancel,
                          void (*progress)(void *ctx, double frac), void *progress_ctx,
                          kern_join_args *a, gpu_xform *x);

/* Timings: kernel_seconds, d_padded and the phases in order, the last
 * one named tail (t_sink: "sink", "select"; NULL: none); the device. */
void engine_gpu_timing(const kern_join_result *r, const dataset *ds, const char *tail,
                       join_result *res);
/* The metrics of a GPU run of row e over args a: the cache, the
 * transforms, launches and memory, exact's counters, the devices' shares,
 * streaming and clusters, TFLOPS and the scale. join = 0 (the k-distance)
 * leaves out what only a join has (refills, pair buffers, clusters,
 * TFLOPS). */
void engine_gpu_metrics(const engine *e, const kern_join_args *a, const kern_join_result *r,
                        const gpu_xform *x, int join, join_result *res);
/* A kernel entry's return code as a TCJ_E* code with its message. */
int engine_gpu_error(const char *name, int rc);

#endif
