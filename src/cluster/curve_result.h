/* DBSCAN's curve's input and result (src/cluster/dbscan_curve.h says
 * what they mean), apart so that the curve's steps (src/cluster/curve_*.c)
 * and its run share them without including each other. */
#ifndef TCJ_CURVE_RESULT_H
#define TCJ_CURVE_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

typedef struct dbscan_curve_spec {
    const dataset *ds;
    size_t minpts; /* 1 .. min(n, KDIST_MAX_K + 1) */
    double max;    /* the largest eps covered, > 0 */
    /* Keep the forest's edges' ends (dbscan_curve.edge_ab): HDBSCAN*'s
     * hierarchy is built from them (src/cluster/hdbscan.h). */
    int keep_ends;
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
    /* With spec.keep_ends: edge k's ends, a << 32 | b (a < b), in edge2's
     * order; among equal weights the order is the forest's, not fixed. */
    uint64_t *edge_ab;
    /* The largest component of core points as eps grows: from squared
     * distance big_at[k] on it has big[k] core points (k < nbig). */
    double *big_at;
    size_t *big, nbig;
    int rounds;        /* Boruvka rounds (joins at max; the first from the K nearest not counted) */
    int rounds_device; /* of them, the rounds whose pairs stayed on the device */
    int core_device;   /* the core distances came from the join at max on the device */
    int merges_device; /* the mergings after a join done where its lists were (the device) */
    int end_device;    /* the curve's end (its sorts) made on the device after its last merging */
    size_t knn;        /* > 0: that join kept each point's knn nearest, the first
                        * round's lists (src/cluster/curve_knn.h): no join of its own */
    double seconds, kdist_seconds, forest_seconds;
    char precision[32];
} dbscan_curve;

#endif
