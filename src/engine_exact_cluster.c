/* exact's DBSCAN (engine.cluster, src/cluster/dbscan.h) and its curve's rounds
 * (engine.curve_round). On the FP64 grid path
 * the core, union and border passes run on the device over the same
 * cached index (kernels/epi_cluster.cuh): no pair and no per-point count
 * leaves the GPU. Elsewhere (the FP16 pass, whole or over the cluster cut
 * as exact's runs take it) the three passes as exact's PAIRS runs whose
 * refined pairs are consumed on the device (src/engine_gpu_dbscan.c,
 * kernels/kern_dbscan.cu). The generic path would stream every pair to
 * the host three times. Labels equal fp64's eps-graph's either way. The
 * curve's rounds go on the device off the grid (src/engine_gpu_curve.c);
 * on the grid the curve's sink takes the pairs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "dist.h"
#include "engine.h"
#include "err.h"
#include "exact_predict.h"
#include "kernels.h"

int exact_cluster(const dbscan_spec *spec, dbscan_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(spec->opts, &def);
    /* Under several ranks (tcjoin-mpi) the generic passes, whose joins
     * the ranks share tile by tile and whose forests they merge
     * (src/dist.h); the device passes here would each run whole on every
     * rank. */
    if (dist && dist->nranks > 1)
        return dbscan_generic(spec, res);
    kern_trace_mark("exact dbscan: start");
    if (!exact_grid_path(spec->ds, spec->eps, o, NULL)) {
        kern_trace_mark("exact dbscan: grid path");
        const double sc = exact_pass_scale(spec->ds, o, spec->eps);
        kern_trace_mark("exact dbscan: scale");
        return engine_gpu_dbscan_fn(spec, res, sc, exact_pass_fn(o));
    }
    /* All three passes in one device run: the core flags formed there
     * (no per-point count crosses to the host), the union-find in the
     * index's cell order (kernels/epi_cluster.cuh), the labels numbered
     * there too. The core pass is recorded as its PERPOINT join (its
     * pairs and time), the rest of the run as the union pass. */
    double t0 = engine_now(), core_s = 0;
    uint64_t pairs = 0;
    join_result *rc_core = &res->pass[DBSCAN_PASS_CORE], *ru = &res->pass[DBSCAN_PASS_UNION];
    res->ran[DBSCAN_PASS_CORE] = res->ran[DBSCAN_PASS_UNION] = 1;
    res->pass_mode[DBSCAN_PASS_CORE] = JOIN_PERPOINT;
    res->pass_mode[DBSCAN_PASS_UNION] = JOIN_COUNT;
    int rc = engine_gpu_grid_dbscan(spec->engine, spec->ds, spec->eps, spec->minpts, o,
                                    spec->cancel, spec->core, spec->labels, &pairs, &core_s, ru);
    const double all = engine_now() - t0;
    *rc_core = *ru;
    rc_core->pairs = pairs;
    rc_core->seconds = rc_core->kernel_seconds = core_s;
    rc_core->nphase = 0;
    join_result_phase(rc_core, "compute", core_s);
    snprintf(rc_core->precision, sizeof rc_core->precision, "%s", spec->engine->precision);
    join_result_metric(rc_core, "path", 1, "");
    ru->seconds = all - core_s;
    res->pairs = pairs;
    res->pass_seconds[DBSCAN_PASS_CORE] = core_s;
    res->pass_seconds[DBSCAN_PASS_UNION] = all - core_s;
    if (rc == 0 && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    return rc;
}

int exact_curve_round(const join_spec *s, const curve_round_io *io, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    if (exact_grid_path(s->ds, s->eps, o, NULL))
        return ENGINE_DECLINED;
    return engine_gpu_curve_fn(s, io, res, exact_pass_scale(s->ds, o, s->eps), exact_pass_fn(o));
}
