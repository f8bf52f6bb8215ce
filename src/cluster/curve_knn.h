/* DBSCAN's curve: each point's K nearest from the core-distance join at
 * max, and the first Boruvka round's lists built from them
 * (docs/CLUSTERING.md, "The first lists from the K nearest").
 *
 * The join at max that gives the core distances c_i (the (minPts-1)-th
 * nearest) can keep each point's K >= minPts-1 nearest (d2, j) at no
 * extra join. Once every c is known, point p's mutual-reachability edges
 * w_pj = max(c_p, c_j, d2_pj) to its K nearest are known, and every edge
 * of p to a point beyond them weighs at least D_p, the K-th least d2
 * (w >= d2 >= D_p). So p's edges lighter than D_p are all among its K
 * nearest: a list of them is a prefix of p's edges in the total order,
 * bounded by D_p, which is what the Boruvka merging needs of a join's
 * lists (src/cluster/curve_merging.c, curve_merging_run). The first round of the
 * forest then needs no join of its own; the reachabilities too come from
 * the K nearest (r_p = min(c_p, min_j max(c_j, d2_pj)) is reached at some
 * j with d2_pj < c_p, among the minPts-2 nearest). */
#ifndef TCJ_CURVE_KNN_H
#define TCJ_CURVE_KNN_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "engine.h"

typedef struct curve_knn {
    size_t n, K;
    double *d2;    /* n x K: each point's K least d2, ascending by (d2, j) */
    uint32_t *row; /* n x K: their rows j; past a point's count +inf and UINT32_MAX */
} curve_knn;

/* The most nearest rows a row the core-distance join may keep at n
 * points: CURVE_CORE_MAX_K (64), fewer where 12 n K bytes would take more
 * than a quarter of the memory this process can get (the plan,
 * src/cluster/curve_plan.c, caps it at n - 1 and takes none below the
 * core rank). At 10^6 x 128 uniform, S = 64, minPts 10 the forest then
 * takes no join of its own; with K = 32 a later join over 592,262 rows,
 * with K = 0 (a first join of its own) one join at max
 * (docs/history/BENCHMARKS-2026-11.md). */
size_t curve_knn_room(size_t n);

/* n x K arrays, their pages faulted in on every core (par_zero); 0, or
 * TCJ_ENOMEM with one line and nothing held (src/mem.h). */
int curve_knn_alloc(curve_knn *nn, size_t n, size_t K);
void curve_knn_free(curve_knn *nn);

/* The host's route to the same arrays: js (a PAIRS join at max over every
 * row of js->ds; its sink is set here) through a sink keeping each
 * point's K least (d2, j) by (d2, j), each other row once; then core[i]
 * the k-th least (+inf where fewer). Any engine; one process. */
int curve_knn_join(const engine *e, const join_spec *js, size_t k, double *core, curve_knn *nn);

/* The first round from nn and the core distances core2 (+inf above
 * max2): reach2[p], p's list of its edges w <= max2 lighter than D_p to
 * its K nearest (the CURVE_LIST lightest of them), and kb[p] = D_p where
 * p has K nearest and is core within max (+inf: no edge of p is
 * missing). Runs on the cores (par_for). */
void curve_knn_lists(const curve_knn *nn, const double *core2, double max2, double *reach2,
                     curve_list *list, double *kb);

#endif
