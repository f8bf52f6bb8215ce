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

#include "engine.h"

typedef struct dbscan_curve_spec {
    const dataset *ds;
    size_t minpts; /* 1 .. min(n, KDIST_MAX_K + 1) */
    double max;    /* the largest eps covered, > 0 */
    const engine_opts *opts;
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
} dbscan_curve_spec;

typedef struct dbscan_curve {
    size_t n, minpts;
    double max, max2; /* max2 = max*max */
    double *core2;    /* n, ascending: the core distances (squared) */
    double *reach2;   /* n, ascending: the reachabilities (squared) */
    double *edge2;    /* nedge, ascending: the forest's weights (all <= max2) */
    size_t nedge;
    /* The largest component of core points as eps grows: from squared
     * distance big_at[k] on it has big[k] core points (k < nbig). */
    double *big_at;
    size_t *big, nbig;
    int rounds;        /* Boruvka rounds (joins at max) */
    int rounds_device; /* of them, the rounds whose pairs stayed on the device */
    int core_device;   /* the core distances came from the join at max on the device */
    int merges_device; /* the mergings after a join done where its lists were (the device) */
    int end_device;    /* the curve's end (its sorts) made on the device after its first round */
    size_t knn;        /* > 0: that join kept each point's knn nearest, the first
                        * round's lists (src/cluster/curve_knn.h): no join of its own */
    double seconds, kdist_seconds, forest_seconds;
    char precision[32];
} dbscan_curve;

/* Run it on engine e (which needs a kdist entry). TCJ_EINVAL/TCJ_EUNSUP
 * with one line for bad input, the engine's error otherwise. On success
 * *c is the caller's: dbscan_curve_free. */
int dbscan_curve_run(const engine *e, const dbscan_curve_spec *spec, dbscan_curve *c);
void dbscan_curve_free(dbscan_curve *c);

/* The counts at eps (compared as eps*eps; eps > max reads as max). Any
 * pointer may be NULL. largest: the largest cluster's core points. */
void dbscan_curve_at(const dbscan_curve *c, double eps, size_t *clusters, size_t *core,
                     size_t *noise, size_t *largest);

/* Plateaus and the eps `dbscan curve use` picks: src/cluster/curve_pick.h. */

#endif
