/* DBSCAN with its pairs consumed where the engine computes them
 * (engine.consume, PAIRS_DBSCAN; src/cluster/dbscan.h): the eps-graph is
 * the engine's own PAIRS run's, so the labels equal dbscan_generic's on
 * the same engine, and no pair crosses to the host where the generic path
 * streams them. ENGINE_DECLINED where the engine cannot here: the caller
 * takes dbscan_generic. */
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "err.h"
#include "kernels.h"
#include "mem.h"

int dbscan_device(const engine *e, const dbscan_spec *spec, dbscan_result *res)
{
    if (!e->consume)
        return ENGINE_DECLINED;
    const size_t n = spec->ds->n;
    uint32_t *root = mem_alloc("dbscan", "the components' roots", n, sizeof *root, 0);
    if (!root)
        return TCJ_ENOMEM;
    join_spec js = {.ds = spec->ds,
                    .engine = e,
                    .eps = spec->eps,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = spec->opts,
                    .cancel = spec->cancel};
    dbscan_dev_io io = {
        .minpts = spec->minpts, .core = spec->core, .root = root, .labels = spec->labels};
    join_result *first = &res->pass[DBSCAN_PASS_CORE], *rest = &res->pass[DBSCAN_PASS_UNION];
    pair_consumer c = {.use = PAIRS_DBSCAN, .dbscan = &io, .first = first};
    const int rc = e->consume(&js, &c, rest);
    if (rc == 0) {
        res->ran[DBSCAN_PASS_CORE] = 1;
        res->pass_mode[DBSCAN_PASS_CORE] = JOIN_PERPOINT;
        res->pass_seconds[DBSCAN_PASS_CORE] = first->seconds;
        res->ran[DBSCAN_PASS_UNION] = c.rest_ran;
        if (c.rest_ran) {
            res->pass_mode[DBSCAN_PASS_UNION] = c.rest_mode;
            res->pass_seconds[DBSCAN_PASS_UNION] = rest->seconds;
        } else
            memset(rest, 0, sizeof *rest);
        res->pairs = io.pairs;
        kern_trace_mark("dbscan device: records");
        if (!io.numbered)
            dbscan_number(spec->core, root, n, spec->labels);
        kern_trace_mark("dbscan device: labels");
        if (spec->progress)
            spec->progress(spec->progress_ctx, 1.0);
    } else if (rc == ENGINE_DECLINED)
        memset(res, 0, sizeof *res);
    free(root);
    return rc;
}
