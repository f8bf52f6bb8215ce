/* The first radius of exact's grid k-distance (src/engine_exact_kdist_grid.c)
 * against the formula worked by hand: rows spread evenly over the
 * bounding box of their widest (up to 6) dimensions hold 2 (K + 1) rows
 * in a ball of it. Uniform in a cube, a segment, d = 8 (6 dimensions
 * counted), every row alike (1), extents of 1e300 (finite). */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "dataset.h"
#include "err.h"
#include "exact_kdist_grid.h"

static uint64_t rng = 3;
static double unit(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1p-53;
}

/* n rows of d values: dimension j uniform on [0, span[j]). */
static dataset make(size_t n, size_t d, const double *span)
{
    dataset ds = {0};
    ds.name = xstrdup("t");
    ds.n = n;
    ds.d = d;
    ds.type = DTYPE_F64;
    ds.v = xmalloc(n * d * sizeof(double));
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            ((double *)ds.v)[i * d + j] = span[j] * unit();
    return ds;
}

TEST(first_radius_follows_the_density)
{
    const double cube[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    dataset ds = make(100000, 3, cube);
    /* 10 rows in (4/3) pi r^3 at density 1e5 */
    double want = cbrt(10.0 / (1e5 * 4.0 * M_PI / 3.0));
    double r = exact_kdist_grid_radius(&ds, 4);
    CHECK_MSG(fabs(r / want - 1) < 0.01, "cube: %g, want %g", r, want);
    dataset_free(&ds);

    const double seg[3] = {50, 0, 0}; /* one spread dimension: 2r holds 10 of 1e4 per 50 */
    ds = make(10000, 3, seg);
    want = 10.0 * 50.0 / (1e4 * 2.0);
    r = exact_kdist_grid_radius(&ds, 4);
    CHECK_MSG(fabs(r / want - 1) < 0.01, "segment: %g, want %g", r, want);
    dataset_free(&ds);

    const double wide[8] = {1, 1, 1, 1, 1, 1, 1e-3, 1e-3}; /* the 6 widest counted */
    ds = make(50000, 8, wide);
    want = pow(2.0 * 17 / (5e4 * M_PI * M_PI * M_PI / 6.0), 1.0 / 6.0);
    r = exact_kdist_grid_radius(&ds, 16);
    CHECK_MSG(fabs(r / want - 1) < 0.02, "d=8: %g, want %g", r, want);
    dataset_free(&ds);

    const double none[2] = {0, 0};
    ds = make(1000, 2, none);
    CHECK_NEAR(exact_kdist_grid_radius(&ds, 4), 1.0, 0);
    dataset_free(&ds);

    const double huge[3] = {1e300, 1e300, 1e300};
    ds = make(1000, 3, huge);
    r = exact_kdist_grid_radius(&ds, 4);
    CHECK_MSG(r > 0 && isfinite(r), "huge: %g", r);
    dataset_free(&ds);
}
