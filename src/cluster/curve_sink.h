/* One Boruvka round of DBSCAN's curve through a pair sink, where the
 * engine cannot consume its pairs on the device (src/cluster/
 * dbscan_curve.c): each pair (i, j), i != j, lowers i's reachability
 * (while reach2 is set: the first round) to max(core2[j], d2), and offers
 * its edge w = max(core2[i], core2[j], d2), when w <= max2 and i and j are
 * in different components, to both ends' lists (curve_list_put): the
 * lists the device builds from the same pairs (kernels/kern_curve.cu). */
#ifndef TCJ_CURVE_SINK_H
#define TCJ_CURVE_SINK_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "engine.h"

typedef struct curve_sink {
    pthread_mutex_t mu;
    size_t n;
    const double *core2;
    double max2;
    const uint32_t *comp; /* each point's component (its root) this round */
    double *reach2;       /* first round only: NULL after */
    curve_list *list;     /* point p's cheapest edges leaving its component */
    const uint32_t *at;   /* NULL, or a reordered copy's rows to the curve's */
    uint32_t *i, *j;      /* a batch's rows mapped through at */
    size_t cap;
} curve_sink;

void curve_sink_init(curve_sink *r, size_t n, const double *core2, double max2,
                     const uint32_t *comp, double *reach2, curve_list *list);
void curve_sink_free(curve_sink *r);
/* The pair sink of a join over the dataset (at NULL) or over a copy whose
 * row k is the dataset's row at[k] (dataset_order_first). */
pair_sink curve_sink_pairs(curve_sink *r, const uint32_t *at);
/* Every list emptied (a sink's join starts from none; the device's are
 * written whole). */
void curve_sink_clear(curve_list *list, size_t n);

#endif
