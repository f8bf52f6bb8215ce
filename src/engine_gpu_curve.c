/* One Boruvka join of DBSCAN's curve on the device (engine.curve_round of
 * the tensor-core rows, and exact's off its grid path): the row's own
 * PAIRS run at max over the same args and transforms as its runs, its
 * pairs consumed where they are computed (kern_curve_round,
 * kernels/kern_curve.cu) into the lists and reachabilities the curve's
 * host sink would build from the same pairs (src/cluster/dbscan_curve.c): the
 * same edges, so the same forest and curve, without 6.5e7 pairs (10^6 x
 * 128, S = 64) crossing to the host and read there by every core. The
 * same entry gives the curve's core distances from the join at max
 * (io->core_k: kern_curve_core). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "engine_gpu_int.h"
#include "err.h"

/* The device's lists are the host's (src/dist.h), byte for byte. */
_Static_assert(DIST_LIST == KERN_CURVE_LIST, "dist_list and kern_curve_list differ");
_Static_assert(sizeof(dist_list) == sizeof(kern_curve_list), "dist_list's size");
_Static_assert(sizeof(dist_edge) == sizeof(kern_curve_edge), "dist_edge's size");
_Static_assert(offsetof(dist_list, len) == offsetof(kern_curve_list, len), "dist_list.len");
_Static_assert(offsetof(dist_edge, a) == offsetof(kern_curve_edge, a), "dist_edge.a");
_Static_assert(offsetof(dist_edge, b) == offsetof(kern_curve_edge, b), "dist_edge.b");
_Static_assert(offsetof(dist_edge, w) == offsetof(kern_curve_edge, w), "dist_edge.w");
_Static_assert(KNN_MAX_K == KERN_CORE_MAX_K && KERN_ROW_PAD == UINT32_MAX, "the K nearest");
_Static_assert((int)CURVE_END_WEIGHTS == (int)KERN_CURVE_END_WEIGHTS &&
                   (int)CURVE_END_ENDS == (int)KERN_CURVE_END_ENDS &&
                   (int)CURVE_END_CORE == (int)KERN_CURVE_END_CORE &&
                   (int)CURVE_END_REACH == (int)KERN_CURVE_END_REACH,
               "the curve's end's arrays");

int engine_gpu_curve_fn(const join_spec *s, const curve_round_io *io, join_result *res,
                        double scale, engine_kjoin_fn fn)
{
    /* Under several ranks each rank's sink takes its share of the pairs
     * (src/dist.h): this run would be whole on every rank. */
    if (dist && dist->nranks > 1)
        return ENGINE_DECLINED;
    /* TCJOIN_CURVE_SINK=1: the rounds through the host sink (tests compare
     * the two). */
    const char *ev = getenv("TCJOIN_CURVE_SINK");
    if (!io->core_k && ev && strcmp(ev, "1") == 0)
        return ENGINE_DECLINED;
    if (io->core_k && (io->at || s->q0 != 0 || s->q1 != s->ds->n))
        return ENGINE_DECLINED;
    const engine *e = s->engine;
    const dataset *ds = s->ds;
    if (ds->n > UINT32_MAX - 1)
        return ENGINE_DECLINED;
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    kern_join_args a;
    gpu_xform x;
    int rc = engine_gpu_pairs_args(e, ds, s->q0, s->q1, s->eps, o, scale, s->cancel, s->progress,
                                   s->progress_ctx, &a, &x);
    if (rc)
        return rc;
    uint32_t *at = NULL;
    if (io->at) {
        at = xmalloc(ds->n * sizeof *at);
        for (size_t r = 0; r < ds->n; r++)
            at[r] = (uint32_t)io->at[r];
    }
    kern_curve_merge m = {0};
    if (io->merge)
        m = (kern_curve_merge){.comp = io->merge->comp,
                               .bound = (kern_curve_edge *)io->merge->bound,
                               .forest = (kern_curve_edge *)io->merge->forest,
                               .nf = io->merge->nf,
                               .take = io->merge->take,
                               .take_ctx = io->merge->take_ctx};
    kern_curve_merge *mp = io->merge && (!io->core_k || io->knn_k) ? &m : NULL;
    const kern_curve_io k = {
        io->n, io->core2, io->comp, at, io->max2, io->reach2, (kern_curve_list *)io->list, mp};
    kern_join_result r;
    const kern_core_io c = {io->core_k,
                            io->knn_k ? io->knn_k : io->core_k,
                            io->max2,
                            io->core_out,
                            io->knn_k ? (kern_curve_list *)io->list : NULL,
                            io->reach2,
                            io->knn_kb,
                            io->part,
                            mp};
    const int krc = io->core_k ? kern_curve_core(fn, &a, &c, &r) : kern_curve_round(fn, &a, &k, &r);
    free(at);
    if (io->merge) {
        io->merge->done = krc == 0 && m.done;
        io->merge->finished = io->merge->done && m.finished;
        if (io->merge->done) {
            io->merge->nf = m.nf;
            io->merge->open = m.open;
            io->merge->passes += m.passes;
            io->merge->seconds += m.seconds;
        }
    }
    if (krc == KERN_ENOMEM) { /* the state or the dataset does not fit: the sink */
        err_clear();
        return ENGINE_DECLINED;
    }
    res->pairs = r.pairs;
    engine_gpu_timing(&r, ds, NULL, res);
    snprintf(res->variant, sizeof res->variant, "%.90s", r.variant);
    engine_gpu_metrics(e, &a, &r, &x, 1, res);
    return engine_gpu_error(e->name, krc);
}

int engine_gpu_curve(const join_spec *s, const curve_round_io *io, join_result *res)
{
    return engine_gpu_curve_fn(s, io, res, 0, s->engine->kjoin);
}
