/* The rest of HDBSCAN*'s minimum spanning tree beyond a forest (the
 * curve's, whose edges are every tree edge of weight up to its maximum):
 * Borůvka rounds over the forest's components, each component but the
 * largest finding its lightest mutual-reachability edge to another: on
 * the device where the engine offers it (exact: a tensor-core pass whose
 * estimates its error bound screens, the rest in FP64), else over
 * a k-d tree of every point, on the host's cores, in FP64's direct
 * (a - b)^2 form (cpu's, fp64's and exact's arithmetic, bit for bit);
 * on the host engines from single points, each point's nearest kept by
 * the core distances' search (hdbscan_knn). Edges compare by (weight,
 * smaller end, larger end), the curve's order, so the tree is the one
 * minimum spanning tree in that order. Memory beyond the dataset: the
 * k-d tree (src/kd_tree.h: the rows in FP64 and the boxes), some 60
 * bytes a point, and the nearest where kept (12 bytes each). */
#ifndef TCJ_HDBSCAN_MST_H
#define TCJ_HDBSCAN_MST_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "kd_tree.h"

struct engine;
struct engine_opts;

/* The rounds a completion took. */
typedef struct hdbscan_mst_stats {
    int host_rounds, device_rounds;
    size_t rows_fp64; /* the device's rounds: rows their screen left to FP64 */
} hdbscan_mst_stats;

/* The host's k-d tree over every point and each point's kl nearest
 * (kd_tree_knn's lists), made with the core distances where the engine's
 * arithmetic is cpu's FP64 direct form: the host's rounds then search
 * this tree, and a point whose nearest already hold its lightest edge out
 * searches nothing. */
typedef struct hdbscan_knn {
    kd_tree tree;
    size_t kl;    /* nearest kept a point (0: none: too little memory) */
    uint32_t *nb; /* n x kl rows, ascending by (d2, row) */
    double *nd2;  /* n x kl squared distances */
} hdbscan_knn;

/* The tree, the lists and core2[i] = point i's (ms - 1)-th least squared
 * distance to another point (min_samples ms counts the point itself;
 * ms >= 2), in FP64's direct form. 0, TCJ_ENOMEM or TCJ_ECANCEL. */
int hdbscan_knn_make(const dataset *ds, const struct engine_opts *opts, size_t ms,
                     const volatile int *cancel, double *core2, hdbscan_knn *hk);
void hdbscan_knn_free(hdbscan_knn *hk);

/* core2: each point's squared core distance; the forest's nf edges
 * (squared weights fw2, ends fab = a << 32 | b). Each round is engine e's
 * where it offers one (engine.consume, PAIRS_MST_ROUND: exact's on the
 * device, kern_mst_round; NULL e: none), else the host's, from the first
 * round it declines on. On success *w2 and *ab (malloc'd, n - 1 each)
 * hold the whole tree in the order (weight, ab), *st the rounds taken.
 * hk (may be NULL): the host's rounds search its tree and try its lists;
 * without it they build a tree of their own.
 * TCJ_ECANCEL when *cancel is set. */
int hdbscan_mst_complete(const struct engine *e, const struct engine_opts *opts, const dataset *ds,
                         const double *core2, size_t nf, const double *fw2, const uint64_t *fab,
                         const hdbscan_knn *hk, const volatile int *cancel, double **w2,
                         uint64_t **ab, hdbscan_mst_stats *st);

/* 1 where engine e offers the rounds over ds (a probe: no round runs;
 * it may still decline one later, where its state does not fit), else 0. */
int hdbscan_mst_offered(const struct engine *e, const struct engine_opts *opts, const dataset *ds);

#endif
