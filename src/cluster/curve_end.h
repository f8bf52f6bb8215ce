/* The end of DBSCAN's curve (src/cluster/dbscan_curve.c): the forest's
 * weights, the core distances and the reachabilities sorted, and the
 * largest core component as eps grows replayed from the forest's edges;
 * on the host, or handed over sorted by the device where the curve ended
 * there (curve_end_take). */
#ifndef TCJ_CURVE_END_H
#define TCJ_CURVE_END_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "curve_result.h"

/* The forest's m edges e: their weights ascending into *w_out (malloc'd)
 * and their ends (a << 32 | b) in that order into *ab_out (malloc'd);
 * core and reach (n each) sorted in place; on device dev where >= 0 and
 * it can, else on the cores (the same values and order). */
void curve_end_sorts(int dev, const curve_edge *e, size_t m, double *core, double *reach, size_t n,
                     double **w_out, uint64_t **ab_out);
/* c->big_at and c->big from the forest's ends ab in c->edge2's order
 * (c->nedge of them), then (curve_end_first) the first point's
 * activation from the ascending core distances. */
void curve_end_replay(dbscan_curve *c, const uint64_t *ab);
void curve_end_first(dbscan_curve *c, const double *core2);

/* The curve's end on the device (curve_merge.take: curve_end_take): the forest's
 * weights kept, its ends replayed while the device sorts the rest, the
 * sorted core distances and reachabilities copied to where the curve
 * keeps them. */
typedef struct curve_end {
    dbscan_curve *c;
    double *core, *reach;
    int keep_ends; /* copy the ends into c->edge_ab too */
} curve_end;

void curve_end_take(void *ctx, int what, const void *v, size_t m);

#endif
