/* The curve's core distances (src/cluster/curve_core.h). */
#include "curve_core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curve_knn.h"
#include "err.h"
#include "kdist.h"
#include "kernels.h"

void curve_progress_fn(void *ctx, double frac)
{
    curve_progress *p = ctx;
    if (p->spec->progress)
        p->spec->progress(p->spec->progress_ctx, p->lo + p->span * frac);
}

/* Every use of a core distance compares it with some eps^2 <= max^2, so
 * one above is made +inf. Below max^2 a point's minPts-1 nearest others
 * are all pairs of the join at max, so they come from that join, which
 * keeps each point's K nearest too (src/cluster/curve_knn.h: the forest's
 * first round then needs no join), as the plan says (curve_plan.h):
 * - CURVE_CORE_DEVICE: its pairs consumed on the device (PAIRS_CURVE_CORE,
 *   kern_curve_core): one PAIRS run, against exact's k-distance over
 *   every pair (an FP16 top-k pass of about three COUNT joins and two
 *   dozen FP64 joins: about eight COUNTs at 10^6 x 128, S = 64);
 * - CURVE_CORE_SINK: through a host sink (curve_knn_join);
 * - CURVE_CORE_KDIST: the engine's k-distance, which gives the same values
 *   where they are at most max^2 (src/cluster/kdist.h), and no K nearest.
 * Each falls back to the next where it cannot (declined; the K nearest do
 * not fit). The values are the join's own d2, so the curve's core points
 * at eps are exactly its dbscan's. */
int curve_core_run(const engine *e, const dbscan_curve_spec *spec, const curve_plan *p,
                   double *core, curve_list *list, double *reach, double *kb, uint32_t *part,
                   curve_merge *merge, dbscan_curve *c)
{
    const dataset *ds = spec->ds;
    const size_t n = ds->n, k = spec->minpts - 1;
    curve_progress pg = {spec, 0, 0.2};
    const size_t K = p->knn;
    curve_knn nn = {0};
    join_spec js = {.ds = ds,
                    .engine = e,
                    .eps = spec->max,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = spec->opts,
                    .inner = 1,
                    .cancel = spec->cancel,
                    .progress = curve_progress_fn,
                    .progress_ctx = &pg};
    int rc = ENGINE_DECLINED;
    size_t got = 0; /* the K the lists came from */
    if (p->core == CURVE_CORE_DEVICE && e->consume) {
        /* with K, the first round's lists built on the device too (only
         * they come back: 536 bytes a point, not 12 K) */
        curve_core_io io = {.k = k,
                            .K = K ? K : k,
                            .max2 = c->max2,
                            .core2 = core,
                            .list = K ? list : NULL,
                            .reach2 = reach,
                            .kb = kb,
                            .part = part,
                            .merge = K ? merge : NULL};
        pair_consumer pc = {.use = PAIRS_CURVE_CORE, .core = &io};
        join_result jr;
        memset(&jr, 0, sizeof jr);
        rc = e->consume(&js, &pc, &jr);
        c->core_device = rc == 0;
        kern_trace_mark("curve core: device round");
        if (rc == 0 && jr.precision[0])
            snprintf(c->precision, sizeof c->precision, "%s", jr.precision);
        if (rc == 0)
            got = K;
    }
    /* the K nearest are a shortcut: where they do not fit, the k-distance */
    if (rc == ENGINE_DECLINED && p->core != CURVE_CORE_KDIST && K &&
        curve_knn_alloc(&nn, n, K) == 0) {
        if ((rc = curve_knn_join(e, &js, k, core, &nn)) == 0)
            got = K;
        else
            curve_knn_free(&nn);
    }
    if (rc == ENGINE_DECLINED) {
        kdist_spec ks = {.ds = ds,
                         .q0 = 0,
                         .q1 = n,
                         .k = (int)k,
                         .opts = spec->opts,
                         .out = core,
                         .cancel = spec->cancel,
                         .progress = curve_progress_fn,
                         .progress_ctx = &pg};
        join_result kr;
        rc = kdist_run(e, &ks, &kr);
        if (!rc && kr.precision[0])
            snprintf(c->precision, sizeof c->precision, "%s", kr.precision);
    }
    if (rc)
        return rc;
    if (!c->core_device) /* the device's come capped (kern_curve_core) */
        for (size_t i = 0; i < n; i++)
            if (!(core[i] <= c->max2))
                core[i] = INFINITY;
    kern_trace_mark("curve core: capped");
    if (nn.K) { /* the host's route: the lists from its K nearest */
        curve_knn_lists(&nn, core, c->max2, reach, list, kb);
        curve_knn_free(&nn);
    }
    c->knn = got;
    return 0;
}
