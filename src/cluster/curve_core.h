/* The core distances of DBSCAN's curve (src/cluster/dbscan_curve.c), and
 * with them, where the plan keeps each row's K nearest, the first
 * Boruvka round's lists (src/cluster/curve_knn.h). */
#ifndef TCJ_CURVE_CORE_H
#define TCJ_CURVE_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "curve_plan.h"
#include "curve_result.h"

/* A step's share of the curve's progress: [lo, lo + span). */
typedef struct curve_progress {
    const dbscan_curve_spec *spec;
    double lo, span;
} curve_progress;
void curve_progress_fn(void *ctx, double frac);

/* core[0..n) the squared core distances, +inf above max^2 (such a point
 * is core at no eps the curve covers); where p->knn and the route kept
 * them, list, reach and kb the first round's (c->knn the K they came
 * from, 0: the first round joins), and with merge (the device's merging)
 * that round merged there (merge->done; merge->finished: the curve's end
 * made there too). part (n): the core join's parts where its run cut the
 * rows. c->core_device and c->precision set. 0 or the engine's error. */
int curve_core_run(const engine *e, const dbscan_curve_spec *spec, const curve_plan *p,
                   double *core, curve_list *list, double *reach, double *kb, uint32_t *part,
                   curve_merge *merge, dbscan_curve *c);

#endif
