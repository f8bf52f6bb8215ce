/* After a Boruvka join of DBSCAN's curve, on the host: the components
 * whose cheapest outgoing edge the lists prove merged, again while any is
 * (src/cluster/dbscan_curve.c has why this keeps the one minimum forest).
 * The lists may come from a join's sink (src/cluster/curve_sink.h) or
 * from the device where its merging could not run there. */
#ifndef TCJ_CURVE_MERGING_H
#define TCJ_CURVE_MERGING_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"

/* The merging after each join (curve_merging_run): the points whose list may
 * still hold an edge out of their component (active), the components'
 * roots, and each root's lightest heaviest-list-edge among the members
 * whose full list is all inside (stat). A list that is all inside stays so
 * (components only grow), so such a point leaves the active set for good
 * and its bound joins stat. A component that took no other in the last
 * pass has the same members, and each member's edges lead out exactly as
 * before (an edge turns inward only when its ends' components join), so
 * its lightest edge out (cand) is the last pass's: a pass scans the active
 * members of the components that changed (chg) and visits the roots.
 * Scanning every list each pass took most of half a second at 10^6
 * points: some 200,000 of 300,000 points keep an edge out of components
 * that wait for the next join, pass after pass. */
typedef struct curve_merging {
    uint32_t *act, *roots;
    size_t nact, nroots;
    curve_edge *stat, *cand;
    uint8_t *chg;
    /* a pass's scan, by active index (scan_range): what it found, the
     * point's root, and the edge (its lightest out, or its bound) */
    uint8_t *kind;
    uint32_t *root;
    curve_edge *res;
    /* each point's list in ascending order from the join on (list_sort),
     * and how many of its first edges are inside its component: they stay
     * so (components only grow), so a scan starts past them and stops at
     * the first edge out, its lightest: one component read a point where
     * reading all eight took most of the merging (10^6 points, random
     * reads) */
    uint8_t *cur;
    size_t passes, scanned; /* the trace's */
    double seconds, s_init, s_scan, s_reduce, s_best;
} curve_merging;

/* The state for n points (O(n)); freed by curve_merging_free. */
void curve_merging_alloc(curve_merging *m, size_t n);
void curve_merging_free(curve_merging *m);
/* After a join: list (n, its lists as the join left them: sorted here)
 * and kb (NULL, or the K nearest's bounds) merged into parent, comp (every
 * row's root on entry and on return), bound (each root's) and the forest
 * (from forest[*nf] on, *nf grown). Returns the number of components that
 * may still have an outgoing edge the lists cannot name (open), 0 when
 * none has one. best: n, scratch. */
size_t curve_merging_run(curve_merging *m, curve_list *list, const double *kb, uint32_t *parent,
                         uint32_t *comp, curve_edge *best, curve_edge *bound, size_t n,
                         curve_edge *forest, size_t *nf);

/* A union-find of n points flattened on the cores: comp[i] its root,
 * found reading parent alone (the cores share it; union by size or rank
 * keeps the paths short), then parent[i] = comp[i]. */
void curve_flatten(uint32_t *parent, uint32_t *comp, size_t n);

#endif
