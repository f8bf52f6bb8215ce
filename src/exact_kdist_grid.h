/* exact's k-distance on its FP64 grid path (src/engine_exact_kdist_grid.c,
 * kernels/grid_kdist.cu): cpu's k-distances exactly. */
#ifndef TCJ_EXACT_KDIST_GRID_H
#define TCJ_EXACT_KDIST_GRID_H

#include "engine.h"

/* The kdist hook on the grid path: where exact_grid_path holds (at the
 * first radius below), the device grid's k-distances; elsewhere
 * TCJ_EUNSUP with one line. */
int exact_kdist_grid(const kdist_spec *s, join_result *res);
/* 0 where the grid path holds for K on ds (exact_kdist_grid runs), else
 * TCJ_EUNSUP with one line. */
int exact_kdist_grid_ok(const dataset *ds, int k, const engine_opts *o);
/* The first radius of the grid passes for K on ds: rows spread evenly
 * over a sample's bounding box hold 2 (K + 1) rows in a ball of it. */
double exact_kdist_grid_radius(const dataset *ds, int k);

/* exact's kdist (src/engine_exact_kdist.c): the grid's where it holds,
 * else its FP16 pass's estimates refined by its own joins. */
int exact_kdist(const kdist_spec *s, join_result *res);

#endif
