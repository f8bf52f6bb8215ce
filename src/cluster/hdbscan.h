/* HDBSCAN* (Campello, Moulavi and Sander; scikit-learn's `HDBSCAN`, so
 * that labels compare; docs/CLUSTERING.md): core distances to the
 * min_samples-th nearest point (itself included), the minimum spanning
 * tree of the mutual-reachability distances max(core_a, core_b, d_ab)
 * over all points, then the hierarchy, its condensed tree and the
 * selection (src/cluster/hdbscan_tree.h). The tree, on the host engines
 * of FP64 arithmetic (cpu, cpu-exact) at d <= 32: a k-d tree gives the core
 * distances and each point's min_samples nearest, and Borůvka rounds over
 * the same tree join everything from single points, the nearest deciding
 * most points' lightest edges with no search (src/cluster/hdbscan_mst.h).
 * On the others: the core distances from the engine's k-distance;
 * DBSCAN's curve's forest (every tree edge of weight up to a maximum,
 * src/cluster/dbscan_curve.h) up to the 97th-percentile core distance or
 * the eps of selectivity 256, the smaller, where its join's pairs are few
 * and on the GPU engines stay on the device; then Borůvka rounds, on the
 * device where the engine offers them (exact), else on the host's cores
 * over a k-d tree, in FP64's direct form (exact's, cpu's and fp64's
 * arithmetic; on the other engines the edges above the maximum are
 * FP64's). Memory: O(n) and the nearest (12 bytes each) beyond the
 * tree's boxes.
 * Library code: nothing here prints. */
#ifndef TCJ_HDBSCAN_H
#define TCJ_HDBSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"
#include "hdbscan_tree.h"

typedef struct hdbscan_spec {
    const dataset *ds;
    size_t min_cluster_size; /* >= 2 */
    size_t min_samples;      /* 1 .. min(n, KDIST_MAX_K + 1); 0: min_cluster_size */
    hdbscan_method method;
    double epsilon; /* cluster_selection_epsilon (0: none) */
    int allow_single;
    const engine_opts *opts;
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
} hdbscan_spec;

typedef struct hdbscan_result {
    hdbscan_tree tree;  /* labels, probabilities, scores, clusters */
    size_t min_samples; /* as used */
    size_t noise;
    double max;                /* the curve's maximum (HD_FOREST_QUANTILE's core distance) */
    int rounds, rounds_device; /* the curve's Boruvka joins; of them, on the device */
    size_t forest_edges;       /* the tree's edges the curve's forest gave */
    size_t nearest;            /* the host's k-d tree: each point's nearest kept (no forest then) */
    int host_rounds;           /* the rounds on the host's cores that joined the rest */
    int device_rounds;         /* the rounds before those on the engine's device */
    size_t rows_fp64;          /* rows the device rounds' screen left to FP64 */
    double seconds, tree_seconds, select_seconds; /* end to end; the spanning tree; the rest */
    /* of tree_seconds: the core distances, the curve's forest, the rest */
    double core_seconds, forest_seconds, complete_seconds;
    char precision[32];
} hdbscan_result;

/* Check the spec, run it on engine e (which needs a k-distance where
 * min_samples > 1). TCJ_EINVAL with one line for bad input, the engine's
 * error otherwise (TCJ_ECANCEL when cancelled). On success *r is the
 * caller's: hdbscan_result_free. */
int hdbscan_run(const engine *e, const hdbscan_spec *spec, hdbscan_result *r);
void hdbscan_result_free(hdbscan_result *r);

#endif
