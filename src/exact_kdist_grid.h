/* exact's k-distance on its FP64 grid path (src/engine_exact_kdist_grid.c,
 * kernels/grid_kdist.cu): cpu's k-distances exactly. */
#ifndef TCJ_EXACT_KDIST_GRID_H
#define TCJ_EXACT_KDIST_GRID_H

#include "engine.h"

/* The device grid's k-distances from first radius r0 (where exact could
 * join over its grid: src/engine_exact_kdist.c), metrics "path" 1 and
 * "radius0". */
int exact_kdist_grid_at(const kdist_spec *s, double r0, join_result *res);
/* The first radius of the grid passes for K on ds: rows spread evenly
 * over a sample's bounding box hold 2 (K + 1) rows in a ball of it. */
double exact_kdist_grid_radius(const dataset *ds, int k);

/* exact's kdist (src/engine_exact_kdist.c): the grid's where it holds,
 * else its FP16 pass's estimates, returned as ENGINE_ESTIMATE for
 * kdist_run to refine with exact's joins. */
int exact_kdist(const kdist_spec *s, join_result *res);

#endif
