/* The rest of HDBSCAN*'s minimum spanning tree beyond a forest (the
 * curve's, whose edges are every tree edge of weight up to its maximum):
 * Borůvka rounds over the forest's components, each component but the
 * largest finding its lightest mutual-reachability edge to another: on
 * the device where the engine offers it (exact: a tensor-core pass whose
 * estimates its error bound screens, the rest in FP64), else over
 * a k-d tree of every point, on the host's cores, in FP64's direct
 * (a - b)^2 form (cpu's, fp64's and exact's arithmetic, bit for bit).
 * Edges compare by (weight, smaller end, larger end), the curve's order,
 * so the tree is the one minimum spanning tree in that order. Memory
 * beyond the dataset: the tree's boxes (16 bytes a dimension for each of
 * at most n / 8 + 3 nodes), some 60 bytes a point, and a float64 copy of
 * the dataset where it is held in another type than f32 or f64. */
#ifndef TCJ_HDBSCAN_MST_H
#define TCJ_HDBSCAN_MST_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

struct engine;
struct engine_opts;

/* The rounds a completion took. */
typedef struct hdbscan_mst_stats {
    int host_rounds, device_rounds;
    size_t rows_fp64; /* the device's rounds: rows their screen left to FP64 */
} hdbscan_mst_stats;

/* core2: each point's squared core distance; the forest's nf edges
 * (squared weights fw2, ends fab = a << 32 | b). Each round is engine e's
 * where it offers one (engine.consume, PAIRS_MST_ROUND: exact's on the
 * device, kern_mst_round; NULL e: none), else the host's, from the first
 * round it declines on. On success *w2 and *ab (malloc'd, n - 1 each)
 * hold the whole tree in the order (weight, ab), *st the rounds taken.
 * TCJ_ECANCEL when *cancel is set. */
int hdbscan_mst_complete(const struct engine *e, const struct engine_opts *opts, const dataset *ds,
                         const double *core2, size_t nf, const double *fw2, const uint64_t *fab,
                         const volatile int *cancel, double **w2, uint64_t **ab,
                         hdbscan_mst_stats *st);

#endif
