/* exact's DBSCAN (engine.cluster, src/dbscan.h). The core flags come from a
 * PERPOINT run as usual; the union and border passes run on the device:
 * on the FP64 grid path over the same cached index
 * (kernels/epi_cluster.cuh), elsewhere (the FP16 pass) as exact's PAIRS
 * runs whose refined pairs are consumed on the device
 * (src/engine_gpu_dbscan.c, kernels/fasted_dbscan.cu). No pair leaves the
 * GPU, where the generic path streams every pair to the host twice.
 * Labels equal fp64's eps-graph's either way. */
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "dist.h"
#include "engine.h"
#include "err.h"
#include "exact_predict.h"

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
    if (!exact_grid_path(spec->ds, spec->eps, o, NULL))
        return engine_gpu_dbscan_exact(spec, res, exact_pass_scale(spec->ds, o, spec->eps));
    const size_t n = spec->ds->n;
    size_t ncore = 0;
    int rc = dbscan_pass_core(spec, res, &ncore);
    if (rc)
        return rc;
    double t0 = engine_now();
    uint32_t *root = xmalloc(n * sizeof *root);
    res->ran[DBSCAN_PASS_UNION] = 1;
    res->pass_mode[DBSCAN_PASS_UNION] = JOIN_COUNT;
    rc = engine_gpu_cluster(spec->engine, spec->ds, spec->eps, o, spec->cancel, spec->core, root,
                            &res->pass[DBSCAN_PASS_UNION]);
    if (rc == 0)
        dbscan_number(spec->core, root, n, spec->labels);
    free(root);
    /* One device run does both passes: its time is the union's. */
    res->pass_seconds[DBSCAN_PASS_UNION] = engine_now() - t0;
    if (rc == 0 && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    return rc;
}
