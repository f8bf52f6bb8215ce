/* exact's k-distance (engine.kdist): fp64's k-distances, the cpu engine's
 * values. For small work every pair in FP64 on the device (one launch,
 * kern_fp64_kdist_brute); on its FP64 grid path (low d) the device grid's passes
 * (src/engine_exact_kdist_grid.c); elsewhere its FP16 passes
 * (kern_fasted_kdist in exact's format, kern_join_args.kd_exact): each row
 * whose values under its bound the passes kept is decided in FP64 on the
 * device (its K nearest lie among those within the error bound's reach of
 * its K-th estimate); a row that needed the band pass keeps its estimate,
 * and where any does the entry returns ENGINE_ESTIMATE: kdist_run makes
 * those exact with exact's joins (src/cluster/kdist_refine.c), leaving
 * the decided rows (spec->known). Either way the answer is FP64's. */
#include <string.h>

#include "engine.h"
#include "exact_kdist_grid.h"
#include "kernels.h"
#include "exact_path.h"
#include "exact_predict.h"

/* The k-distance takes the grid wherever exact's join could (auto at d
 * <= EXACT_GRID_MAX_D, or `set exact-path grid`), whatever the band the
 * join's rule weighs: off the grid it is the FP16 pass's brute force, n^2
 * candidates and their refinement (uniform 10^6 x 4: some twenty times
 * the grid's time), where the grid visits a few cells a row. */
static int kdist_on_grid(const dataset *ds, const engine_opts *o)
{
    if (o->exact_path == EXACT_PATH_AUTO)
        return ds->d <= EXACT_GRID_MAX_D;
    return exact_path_choose(o->exact_path, ds->d, NULL);
}

/* Small work, (q1 - q0) n d at most KERN_KDIST_BRUTE_WORK: every pair in
 * FP64, whose products cost less there than the grid's index builds and
 * doubling passes or the tensor-core passes' launches, copies and FP64
 * decision (docs/BENCHMARKS.md). Auto only:
 * `set exact-path` keeps the path it names. */
static int kdist_brute(const kdist_spec *s, const engine_opts *o)
{
    return o->exact_path == EXACT_PATH_AUTO &&
           (double)(s->q1 - s->q0) * (double)s->ds->n * (double)s->ds->d <= KERN_KDIST_BRUTE_WORK;
}

int exact_kdist(const kdist_spec *s, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    if (kdist_brute(s, o)) {
        const int rc = engine_gpu_brute_kdist(s, res);
        join_result_metric(res, "path", 2, "");
        return rc;
    }
    if (kdist_on_grid(s->ds, o))
        return exact_kdist_grid_at(s, exact_kdist_grid_radius(s->ds, s->k), res);
    join_result er;
    memset(&er, 0, sizeof er);
    const double t0 = engine_now();
    const int rc = engine_gpu_kdist(s, &er);
    const double t_est = engine_now() - t0;
    if (rc)
        return rc;
    size_t fp64 = 0;
    const size_t nq = s->q1 - s->q0;
    for (size_t q = 0; s->known && q < nq; q++)
        fp64 += s->known[q] != 0;
    if (fp64 == nq) {
        *res = er; /* every row decided on the device: the passes are the run */
    } else {
        /* Only the estimate's time and kernels: the refinement's joins
         * describe the run (device, variant, precision). */
        join_result_phase(res, "estimate", t_est);
        res->kernel_seconds += er.kernel_seconds;
        join_result_metric(res, "estimate_s", t_est, "s");
        static const char *const kept[] = {"clusters", "cluster_work"};
        for (int k = 0; k < 2; k++) {
            const double v = join_result_metric_value(&er, kept[k]);
            if (v == v)
                join_result_metric(res, kept[k], v, "");
        }
    }
    join_result_metric(res, "path", 0, "");
    join_result_metric(res, "rows_fp64_device", (double)fp64, "");
    return fp64 == nq ? 0 : ENGINE_ESTIMATE;
}
