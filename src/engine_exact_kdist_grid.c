/* exact's k-distance on the FP64 grid path: where exact could
 * join over the grid (src/engine_exact_kdist.c: auto at d <= 4, or the
 * grid set), the K-th smallest
 * FP64 direct-form d2 of each query row through the device's grid index
 * (kernels/grid_kdist.cu): cpu's k-distances exactly. Elsewhere exact
 * has no k-distance here (the FP16 pass's is another file's).
 *
 * The first radius: the rows spread evenly over the bounding box of a
 * strided sample of rows, over its widest (up to 6, the grid's) spread
 * dimensions, hold 2 (K + 1) rows in a ball of it. Too small costs a
 * doubling pass or a few; clustered rows (cells far denser) have it
 * narrowed on the device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "err.h"
#include "exact_kdist_grid.h"

#define EKG_SAMPLE 65536 /* rows read for the bounding box */
#define EKG_DIMS 6       /* the grid's indexed dimensions (KD_K) */

static int ekg_cmp_desc(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

double exact_kdist_grid_radius(const dataset *ds, int k)
{
    const size_t n = ds->n, d = ds->d, m = n < EKG_SAMPLE ? n : EKG_SAMPLE;
    double *lo = xmalloc(3 * d * sizeof *lo), *hi = lo + d, *row = hi + d;
    for (size_t j = 0; j < d; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (size_t i = 0; i < m; i++) {
        const double *x = dataset_row_f64(ds, (size_t)((double)i * (double)n / (double)m), row);
        for (size_t j = 0; j < d; j++)
            if (isfinite(x[j])) {
                lo[j] = x[j] < lo[j] ? x[j] : lo[j];
                hi[j] = x[j] > hi[j] ? x[j] : hi[j];
            }
    }
    size_t ne = 0;
    for (size_t j = 0; j < d; j++)
        if (hi[j] > lo[j] && isfinite(hi[j] - lo[j]))
            lo[ne++] = hi[j] - lo[j];
    qsort(lo, ne, sizeof *lo, ekg_cmp_desc);
    const int kd = ne < EKG_DIMS ? (int)ne : EKG_DIMS;
    double r = 1; /* every row alike: any radius ends the first pass */
    if (kd > 0) {
        /* log-volume, so that 6 extents of 1e300 stay finite */
        double lv = 0;
        for (int j = 0; j < kd; j++)
            lv += log(lo[j]);
        /* the unit ball's volume in kd dimensions */
        static const double ball_of[EKG_DIMS + 1] = {1,
                                                     2,
                                                     M_PI,
                                                     4 * M_PI / 3,
                                                     M_PI * M_PI / 2,
                                                     8 * M_PI * M_PI / 15,
                                                     M_PI * M_PI * M_PI / 6};
        const double ball = ball_of[kd];
        r = exp((log(2.0 * (k + 1)) + lv - log((double)n) - log(ball)) / kd);
        if (!(r > 0) || !isfinite(r))
            r = lo[0] / 1024;
    }
    free(lo);
    return r;
}

int exact_kdist_grid_at(const kdist_spec *s, double r0, join_result *res)
{
    int rc = engine_gpu_grid_kdist(s, r0, res);
    join_result_metric(res, "path", 1, "");
    join_result_metric(res, "radius0", r0, "");
    return rc;
}
