/* Random inputs of the curve's later rows (curve_later_rows,
 * src/cluster/curve_later.c; kernels/kern_curve_later.cu), shared by
 * tests/unit/t_curve_later.c and tests/gpu/g_curve.c: n rows in about
 * ncomp components (each a row's root, comp[root] = root), a share of the
 * roots with their bound set, some rows with no core distance, nparts
 * parts (1: every row in part 0). */
#ifndef TCJ_TEST_LATER_CASE_H
#define TCJ_TEST_LATER_CASE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels.h"

typedef struct later_case_in {
    size_t n;
    uint32_t *comp, *part;
    curve_edge *bound;
    double *core;
} later_case_in;

static inline uint32_t later_case_draw(uint64_t *rng, uint32_t m)
{
    *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((*rng >> 33) % m);
}

static inline later_case_in later_case_make(uint64_t *rng, size_t n, uint32_t ncomp,
                                            uint32_t nparts, uint32_t open_pct)
{
    later_case_in c = {n, calloc(n, sizeof *c.comp), calloc(n, sizeof *c.part),
                       calloc(n, sizeof *c.bound), calloc(n, sizeof *c.core)};
    for (size_t i = 0; i < n; i++) {
        /* roots: the first ncomp rows; others join a root at random,
         * skewed so that one component is largest by a margin or ties */
        const uint32_t r = later_case_draw(rng, 4) == 0
                               ? 0
                               : later_case_draw(rng, ncomp < n ? ncomp : (uint32_t)n);
        c.comp[i] = i < ncomp ? (uint32_t)i : r;
        c.bound[i].w =
            later_case_draw(rng, 100) < open_pct ? 1.0 + later_case_draw(rng, 10) : INFINITY;
        c.bound[i].a = c.bound[i].b = 0;
        c.core[i] = later_case_draw(rng, 10) == 0 ? INFINITY : 0.5;
        /* a part is a row */
        c.part[i] = nparts > 1 ? later_case_draw(rng, nparts < n ? nparts : (uint32_t)n) : 0;
    }
    return c;
}

static inline void later_case_free(later_case_in *c)
{
    free(c->comp);
    free(c->part);
    free(c->bound);
    free(c->core);
}

#endif
