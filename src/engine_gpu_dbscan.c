/* DBSCAN on the device off the FP64 grid (engine.cluster of the
 * tensor-core rows, and exact's off its grid path): the three passes as
 * the row's own PAIRS runs whose pairs are consumed on the device
 * (kern_dbscan, kernels/kern_dbscan.cu), over the same args and
 * transforms as the row's runs: the eps-graph is the row's own, so the
 * labels equal dbscan_generic's on the same row, and no pair leaves the
 * device where dbscan_generic streams every pair to the host three times.
 * A dataset that does not fit the device goes the generic way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "dist.h"
#include "engine_gpu_int.h"
#include "err.h"

/* A pass's record from its kernel run: a run's timings and metrics (the
 * cluster cut's groups among them). */
static void gpu_dbscan_pass(const dbscan_spec *spec, dbscan_result *res, int pass, int mode,
                            const kern_join_args *a, const gpu_xform *x, const kern_join_result *r,
                            double seconds)
{
    join_result *jr = &res->pass[pass];
    res->ran[pass] = 1;
    res->pass_mode[pass] = mode;
    jr->pairs = r->pairs;
    engine_gpu_timing(r, spec->ds, NULL, jr);
    engine_gpu_metrics(spec->engine, a, r, x, 1, jr);
    snprintf(jr->variant, sizeof jr->variant, "%.90s", r->variant);
    snprintf(jr->precision, sizeof jr->precision, "%s", spec->engine->precision);
    jr->seconds = seconds;
    res->pass_seconds[pass] = seconds;
}

int engine_gpu_dbscan_fn(const dbscan_spec *spec, dbscan_result *res, double scale,
                         engine_kjoin_fn fn)
{
    /* Under several ranks (tcjoin-mpi) the generic passes, whose joins the
     * ranks share tile by tile and whose forests they merge (src/dist.h):
     * these device passes would each run whole on every rank. */
    if (dist && dist->nranks > 1)
        return dbscan_generic(spec, res);
    const engine *e = spec->engine;
    const dataset *ds = spec->ds;
    const size_t n = ds->n;
    const double t0 = engine_now();
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(spec->opts, &def);
    kern_join_args a;
    gpu_xform x;
    int rc =
        engine_gpu_pairs_args(e, ds, 0, n, spec->eps, o, scale, spec->cancel, NULL, NULL, &a, &x);
    if (rc)
        return rc;
    kern_trace_mark("gpu dbscan: args");
    uint32_t *root = xmalloc(n * sizeof *root);
    kern_dbscan_io io;
    memset(&io, 0, sizeof io);
    io.minpts = spec->minpts;
    io.core = spec->core;
    io.root = root;
    kern_join_result r;
    const int krc = kern_dbscan(fn, &a, &io, &r);
    kern_trace_mark("gpu dbscan: kern_dbscan");
    if (krc == KERN_ENOMEM) {
        free(root);
        return dbscan_generic(spec, res);
    }
    rc = engine_gpu_error(e->name, krc);
    const double all = engine_now() - t0;
    if (rc == 0) {
        gpu_dbscan_pass(spec, res, DBSCAN_PASS_CORE, JOIN_PERPOINT, &a, &x, &io.rcore, io.core_s);
        res->pairs = io.rcore.pairs;
        if (io.ncore > 0) /* one call does the union and border passes: its time is the union's */
            gpu_dbscan_pass(spec, res, DBSCAN_PASS_UNION, JOIN_PAIRS, &a, &x, &r, all - io.core_s);
        kern_trace_mark("gpu dbscan: records");
        dbscan_number(spec->core, root, n, spec->labels);
    }
    kern_trace_mark("gpu dbscan: labels");
    free(root);
    if (rc == 0 && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    return rc;
}

int engine_gpu_dbscan(const dbscan_spec *spec, dbscan_result *res)
{
    return engine_gpu_dbscan_fn(spec, res, 0, spec->engine->kjoin);
}
