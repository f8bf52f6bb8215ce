/* exact's engine.consume. On the FP64 grid path DBSCAN's three passes run
 * in one device run over the grid (kern_fp64_grid_dbscan: the core flags
 * formed there, the union-find in the index's cell order, the labels
 * numbered there too), and the curve's joins are the grid join's PAIRS
 * runs (kern_fp64_grid_run, fp64's pairs) consumed on the device as the
 * pass's are (src/engine_gpu_consume.c). Off the grid, the tensor-core pass and its FP64 refinement
 * as exact's runs do them (exact_pass_fn, exact_pass_scale), the refined
 * pairs consumed on the device (src/engine_gpu_consume.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "err.h"
#include "ranks.h"
#include "exact_predict.h"
#include "kernels.h"

/* DBSCAN on the grid: the core pass recorded as its PERPOINT join (its
 * pairs and time), the rest of the run as the union pass (a COUNT: no
 * pair is listed). */
static int exact_grid_dbscan(const join_spec *s, pair_consumer *c, join_result *res,
                             const engine_opts *o)
{
    dbscan_dev_io *io = c->dbscan;
    const double t0 = engine_now();
    double core_s = 0;
    uint64_t pairs = 0;
    const int rc = engine_gpu_grid_dbscan(s->engine, s->ds, s->eps, io->minpts, o, s->cancel,
                                          io->core, io->labels, &pairs, &core_s, res);
    const double all = engine_now() - t0;
    join_result *first = c->first;
    *first = *res;
    first->pairs = pairs;
    first->seconds = first->kernel_seconds = core_s;
    first->nphase = 0;
    join_result_phase(first, "compute", core_s);
    snprintf(first->precision, sizeof first->precision, "%s", s->engine->precision);
    join_result_metric(first, "path", 1, "");
    res->seconds = all - core_s;
    io->pairs = pairs;
    io->core_s = core_s;
    io->numbered = 1;
    c->rest_ran = 1;
    c->rest_mode = JOIN_COUNT;
    return rc;
}

int exact_consume(const join_spec *s, pair_consumer *c, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    if (ranks_count() > 1)
        return ENGINE_DECLINED;
    kern_trace_mark("exact consume: start");
    /* HDBSCAN*'s round is a brute-force pass over every pair: where the
     * data are low-dimensional (exact's grid dimensions) the host's k-d
     * tree prunes nearly all of them, and its cost grows as n log n
     * where the pass's grows as n^2. Above them, the pass at every d. */
    if (c->use == PAIRS_MST_ROUND && s->ds->d <= EXACT_GRID_MAX_D)
        return ENGINE_DECLINED;
    if (c->use != PAIRS_MST_ROUND && exact_grid_path(s->ds, s->eps, o, NULL)) {
        if (s->sub) /* the grid's joins take every row */
            return ENGINE_DECLINED;
        if (c->use == PAIRS_DBSCAN)
            return s->q0 != 0 || s->q1 != s->ds->n ? ENGINE_DECLINED
                                                   : exact_grid_dbscan(s, c, res, o);
        /* the curve: the grid join's pairs (fp64's, in FP64) consumed on
         * the device as the pass's are */
        join_spec g = *s;
        g.engine = exact_grid_engine();
        kern_trace_mark("exact consume: grid path");
        return engine_gpu_consume_fn(&g, c, res, 0, kern_fp64_grid_run);
    }
    kern_trace_mark("exact consume: tensor path");
    return engine_gpu_consume_fn(s, c, res, exact_pass_scale(s->ds, o, s->eps), exact_pass_fn(o));
}
