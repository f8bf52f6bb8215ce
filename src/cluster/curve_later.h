/* Which rows a later Boruvka join of DBSCAN's curve queries
 * (src/cluster/dbscan_curve.c): the members of the components the lists
 * left open (bound[root] set), but the largest of them, and none of a
 * component closed by the core join's parts (part: each row's). Their
 * count returned, the rows in rows (n room) ascending, then the largest
 * open component's rows, ascending, their count in *nbig (the candidates
 * a join over these rows alone needs besides the queries: every edge out
 * of an open component ends in an open one); 0: no component has an edge
 * left. The reasoning: src/cluster/curve_later.c. */
#ifndef TCJ_CURVE_LATER_H
#define TCJ_CURVE_LATER_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"

size_t curve_later_rows(const uint32_t *comp, const curve_edge *bound, const double *core,
                        const uint32_t *part, size_t n, size_t *rows, size_t *nbig);

#endif
