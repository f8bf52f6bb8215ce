/* Collectives over the processes that share a run (tcjoin-mpi's ranks,
 * src/dist.h), spelled so that an algorithm calls them without asking how
 * many processes there are: in one process each does nothing and returns
 * 0, so clustering code (src/cluster/) has one path for both. Each
 * returns 0 or a TCJ_E* code with err_msg. */
#ifndef TCJ_RANKS_H
#define TCJ_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"

/* Processes sharing each join: 1 in the plain tcjoin. */
int ranks_count(void);
/* parent[x] (a union-find forest, parent[x] <= x) becomes the root of x's
 * component in the union of every rank's forest (its smallest index). */
int ranks_forest_merge(uint32_t *parent, size_t n);
/* v[x] = the minimum (sum) of v[x] over the ranks, on every rank. */
int ranks_min_i32(int32_t *v, size_t n);
int ranks_min_f64(double *v, size_t n);
int ranks_sum_u64(uint64_t *v, size_t n);
/* l[x] = the merge (curve_list_merge) of l[x] over the ranks. */
int ranks_merge_lists(curve_list *l, size_t n);

#endif
