/* DBSCAN for every eps up to a maximum at once, exactly (docs/CLUSTERING.md):
 * core distances c_i (the k-distance at k = minPts-1, src/cluster/kdist.h; +inf
 * where above max: core at no eps covered),
 * reachabilities r_i = min_j max(c_j, d2_ij) and the minimum spanning
 * forest of the mutual-reachability weights max(c_i, c_j, d2_ij) <= max^2,
 * built by Boruvka rounds over the pairs of the join at max streamed
 * through a sink (O(n) memory). All values are squared distances as the
 * engine computes them; at eps, with eps2 = eps*eps:
 *   core(eps)     = #{i : c_i <= eps2}
 *   clusters(eps) = core(eps) - #{forest edges of weight <= eps2}
 *   noise(eps)    = #{i : r_i > eps2}
 * the counts dbscan_run gives at eps on the same engine (ties included: an
 * edge exactly at eps counts). Library code: nothing here prints. */
#ifndef TCJ_DBSCAN_CURVE_H
#define TCJ_DBSCAN_CURVE_H

#include <stddef.h>

#include "curve_plan.h"
#include "curve_result.h"
#include "engine.h"

/* Run it on engine e (which needs a kdist entry) by the plan
 * curve_plan_choose gives for dbscan_curve_plan_in's facts. TCJ_EINVAL/
 * TCJ_EUNSUP with one line for bad input or a route that cannot be, the
 * engine's error otherwise. On success *c is the caller's:
 * dbscan_curve_free. */
int dbscan_curve_run(const engine *e, const dbscan_curve_spec *spec, dbscan_curve *c);
/* The facts the plan is chosen from: the shape, e's capability, the
 * ranks, `set curve-route` (spec->opts) and the memory the K nearest may
 * take (curve_knn_room). */
void dbscan_curve_plan_in(const engine *e, const dbscan_curve_spec *spec, curve_plan_in *in);
/* dbscan_curve_run by plan p (tests run each route this way; every route
 * gives the same curve). */
int dbscan_curve_run_plan(const engine *e, const dbscan_curve_spec *spec, const curve_plan *p,
                          dbscan_curve *c);
void dbscan_curve_free(dbscan_curve *c);

/* The counts at eps (compared as eps*eps; eps > max reads as max). Any
 * pointer may be NULL. largest: the largest cluster's core points. */
void dbscan_curve_at(const dbscan_curve *c, double eps, size_t *clusters, size_t *core,
                     size_t *noise, size_t *largest);

/* Plateaus and the eps `dbscan curve use` picks: src/cluster/curve_pick.h. */

#endif
