/* DBSCAN on the tensor-core rows (engine.cluster of every float format
 * row, src/dbscan.h): the core flags from a PERPOINT run as usual
 * (dbscan_pass_core), then the union pass inside the join kernel's
 * clustering epilogue (kern_fasted_cluster, kernels/epi_clu.cuh), the
 * border from the lists it keeps (or a border pass)
 * over the same args and transforms as the row's runs: no pair leaves the
 * device, where dbscan_generic streams every pair to the host twice. The
 * eps-graph is the row's own, so the labels equal dbscan_generic's on the
 * same row. exact off its FP64 grid path (src/engine_exact_cluster.c)
 * the same way through kern_exact_cluster: its PAIRS runs with the pairs
 * consumed on the device. A dataset that does not fit the device goes the
 * generic way after the core pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "dist.h"
#include "engine_gpu_int.h"
#include "err.h"

typedef int (*gpu_cluster_fn)(const kern_join_args *a, const uint8_t *core, size_t minpts,
                              uint32_t *root, kern_join_result *r);

/* The core pass, then fn's device passes over the row's args (scale as
 * engine_gpu_run_fmt takes it). */
static int gpu_dbscan(const dbscan_spec *spec, dbscan_result *res, double scale, gpu_cluster_fn fn)
{
    /* Under several ranks (tcjoin-mpi) the generic passes, whose joins the
     * ranks share tile by tile and whose forests they merge (src/dist.h):
     * these device passes would each run whole on every rank. */
    if (dist && dist->nranks > 1)
        return dbscan_generic(spec, res);
    const engine *e = spec->engine;
    const dataset *ds = spec->ds;
    const size_t n = ds->n;
    size_t ncore = 0;
    int rc = dbscan_pass_core(spec, res, &ncore);
    if (rc)
        return rc;
    const double t0 = engine_now();
    uint32_t *root = xmalloc(n * sizeof *root);
    join_result *jr = &res->pass[DBSCAN_PASS_UNION];
    if (ncore == 0) {
        memset(root, 0xff, n * sizeof *root); /* every row noise */
    } else {
        engine_opts def;
        const engine_opts *o = engine_opts_or_default(spec->opts, &def);
        kern_join_args a;
        engine_gpu_args(ds, 0, n, o, spec->cancel, NULL, NULL, e->format, &a);
        a.eps = spec->eps;
        a.mode = KJOIN_COUNT;
        gpu_xform x;
        const double eps = spec->eps;
        rc = engine_gpu_xform(e, ds, o, &eps, scale, &a, &x);
        if (rc)
            goto out;
        kern_join_result r;
        memset(&r, 0, sizeof r);
        const int krc = fn(&a, spec->core, spec->minpts, root, &r);
        if (krc == KERN_ENOMEM) {
            free(root);
            return dbscan_generic_links(spec, res, ncore);
        }
        res->ran[DBSCAN_PASS_UNION] = 1;
        res->pass_mode[DBSCAN_PASS_UNION] = JOIN_COUNT;
        jr->pairs = r.pairs;
        engine_gpu_timing(&r, ds, NULL, jr);
        snprintf(jr->variant, sizeof jr->variant, "%.90s", r.variant);
        snprintf(jr->precision, sizeof jr->precision, "%s", e->precision);
        rc = engine_gpu_error(e->name, krc);
    }
    if (rc == 0)
        dbscan_number(spec->core, root, n, spec->labels);
out:
    free(root);
    /* One call does both device passes: its time is the union's. */
    res->pass_seconds[DBSCAN_PASS_UNION] = engine_now() - t0;
    jr->seconds = res->pass_seconds[DBSCAN_PASS_UNION];
    if (rc == 0 && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    return rc;
}

int engine_gpu_dbscan(const dbscan_spec *spec, dbscan_result *res)
{
    return gpu_dbscan(spec, res, 0, kern_fasted_cluster);
}

int engine_gpu_dbscan_exact(const dbscan_spec *spec, dbscan_result *res, double scale)
{
    return gpu_dbscan(spec, res, scale, kern_exact_cluster);
}
