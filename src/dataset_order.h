/* A dataset's rows in another order (src/dataset_order.c): a copy whose
 * first rows are given ones, for a join whose query rows are scattered
 * (exact's k-distance in order of estimate, dbscan curve's later joins
 * over the rows that can still hold an undecided edge). An engine joins
 * query rows [0, m) of the copy against all its rows: every row once, so
 * each pair's d2 is the one the rows give in their own order. */
#ifndef TCJ_DATASET_ORDER_H
#define TCJ_DATASET_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

/* g: a copy of ds whose rows [0, m) are ds's rows first[0..m) (distinct),
 * then ds's other rows in their own order; at (n entries, or NULL): at[k]
 * is the ds row of g's row k (TCJ_EINVAL where n does not fit 32 bits, as no engine joins such a
 * dataset: engine_run). g's hash names that content
 * (the engines' device caches compare it), its set_hash is ds's (the caches of facts of the rows as
 * a set find ds's); its name, path and format are ds's (not owned). TCJ_ENOMEM (err_msg set) where
 * the copy does not fit. */
int dataset_order_first(const dataset *ds, const size_t *first, size_t m, dataset *g, uint32_t *at);

/* The copy's values (the rest is borrowed). */
void dataset_order_free(dataset *g);

#endif
