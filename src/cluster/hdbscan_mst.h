/* The rest of HDBSCAN*'s minimum spanning tree beyond a forest (the
 * curve's, whose edges are every tree edge of weight up to its maximum):
 * Borůvka rounds over the forest's components, each component but the
 * largest finding its lightest mutual-reachability edge to another over
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

/* core2: each point's squared core distance; the forest's nf edges
 * (squared weights fw2, ends fab = a << 32 | b). On success *w2 and *ab
 * (malloc'd, n - 1 each) hold the whole tree in the order (weight, ab),
 * *rounds the rounds taken. TCJ_ECANCEL when *cancel is set. */
int hdbscan_mst_complete(const dataset *ds, const double *core2, size_t nf, const double *fw2,
                         const uint64_t *fab, const volatile int *cancel, double **w2,
                         uint64_t **ab, int *rounds);

#endif
