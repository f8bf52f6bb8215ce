/* exact's k-distance (engine.kdist): fp64's k-distances, the cpu engine's
 * values. On its FP64 grid path (low d) the device grid's passes
 * (src/engine_exact_kdist_grid.c); elsewhere its FP16 pass's own
 * k-distance (kern_fasted_kdist in exact's format, three passes) gives
 * each row an estimate, returned as ENGINE_ESTIMATE: kdist_run makes them
 * exact with exact's joins (src/cluster/kdist_refine.c: PAIRS joins at
 * about the estimates, each row's K smallest FP64 d2 kept, rows short of K
 * joined again a little wider). The estimates only decide how wide the
 * joins are: the answer is exact's pair set's either way. */
#include <string.h>

#include "engine.h"
#include "exact_kdist_grid.h"
#include "exact_path.h"
#include "exact_predict.h"

/* The k-distance takes the grid wherever exact's join could (auto at d
 * <= EXACT_GRID_MAX_D, or `set exact-path grid`), whatever the band the
 * join's rule weighs: off the grid it is the FP16 pass's brute force, n^2
 * candidates and their refinement (uniform 10^6 x 4: 2.4 s against the
 * grid's 0.1 s, H200), where the grid visits a few cells a row. */
static int kdist_on_grid(const dataset *ds, const engine_opts *o)
{
    if (o->exact_path == EXACT_PATH_AUTO)
        return ds->d <= EXACT_GRID_MAX_D;
    return exact_path_choose(o->exact_path, ds->d, NULL);
}

int exact_kdist(const kdist_spec *s, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    if (kdist_on_grid(s->ds, o))
        return exact_kdist_grid_at(s, exact_kdist_grid_radius(s->ds, s->k), res);
    kdist_spec e = *s;
    e.progress = NULL; /* the refinement reports the rows it settles */
    join_result er;
    memset(&er, 0, sizeof er);
    const double t0 = engine_now();
    const int rc = engine_gpu_kdist(&e, &er);
    const double t_est = engine_now() - t0;
    if (rc)
        return rc;
    /* Only the estimate's time and kernels: the refinement's joins
     * describe the run (device, variant, precision). */
    join_result_phase(res, "estimate", t_est);
    res->kernel_seconds += er.kernel_seconds;
    join_result_metric(res, "estimate_s", t_est, "s");
    join_result_metric(res, "path", 0, "");
    return ENGINE_ESTIMATE;
}
