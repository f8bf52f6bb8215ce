/* The curve's per-point lists on the host (the types: kernels/
 * cluster_types.h): what the host sink keeps of each pair and how two
 * ranks' lists of a point combine. The device keeps them the same way
 * (kernels/kern_curve.cu), so both give the same lists. */
#ifndef TCJ_CURVE_LIST_H
#define TCJ_CURVE_LIST_H

#include "cluster_types.h"

/* e into l: kept while l has room or e is lighter than its heaviest; an
 * edge l holds already is not added again. */
void curve_list_put(curve_list *l, const curve_edge *e);
/* The edges of in put into out: out holds the CURVE_LIST least of both. */
void curve_list_merge(const curve_list *in, curve_list *out);

#endif
