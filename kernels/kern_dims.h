/* The dimensions of a run's rows ordered by variance, largest first, and
 * each one's range: the grid index's choice of the dimensions it cuts in
 * cells and (ted-index) of the order the rows are uploaded in
 * (kernels/grid_index.cuh), and what kern_stream_run's slab cut hands to
 * every slab's run (kern_join_args.dim_order), so a slab's run uses the
 * whole run's order and sums each d2 in the same order as the whole run.
 * One definition for both, in C and C++: the two must agree bit for bit. */
#ifndef TCJ_KERN_DIMS_H
#define TCJ_KERN_DIMS_H

#include <stdlib.h>

#include "kernels.h"

#define KERN_DIMS_BLOCK 524288 /* values (4 MB) widened at a time */

/* perm (d entries): dimensions by variance, descending, ties by index
 * (stable); mn, mx (d entries each, may be NULL): each one's range. FP64
 * mean in one pass, the variance about it in a second. 0 or KERN_ENOMEM
 * (with its message). */
static inline int kern_dims_by_variance(const kern_join_args *a, int *perm, double *mn, double *mx)
{
    const size_t n = a->n, d = a->d;
    size_t blk = KERN_DIMS_BLOCK / d > 0 ? KERN_DIMS_BLOCK / d : 1;
    blk = n < blk ? n : blk;
    double *rbuf = (double *)malloc(blk * d * sizeof *rbuf);
    double *mean = (double *)calloc(2 * d, sizeof *mean), *var = mean + d;
    if (!rbuf || !mean) {
        free(rbuf);
        free(mean);
        return kern_fail_msg(KERN_ENOMEM, "out of host memory ordering the dimensions");
    }
    for (size_t i0 = 0; i0 < n; i0 += blk) {
        const size_t m = n - i0 < blk ? n - i0 : blk;
        kern_rows_f64(a, i0, m, rbuf);
        for (size_t i = 0; i < m; i++) {
            const double *x = rbuf + i * d;
            for (size_t j = 0; j < d; j++) {
                mean[j] += x[j];
                if (mn && (i0 + i == 0 || x[j] < mn[j]))
                    mn[j] = x[j];
                if (mx && (i0 + i == 0 || x[j] > mx[j]))
                    mx[j] = x[j];
            }
        }
    }
    for (size_t j = 0; j < d; j++)
        mean[j] /= (double)n;
    for (size_t i0 = 0; i0 < n; i0 += blk) {
        const size_t m = n - i0 < blk ? n - i0 : blk;
        kern_rows_f64(a, i0, m, rbuf);
        for (size_t i = 0; i < m; i++) {
            const double *x = rbuf + i * d;
            for (size_t j = 0; j < d; j++) {
                const double v = x[j] - mean[j];
                var[j] += v * v;
            }
        }
    }
    for (size_t j = 0; j < d; j++) {
        size_t m = j;
        while (m > 0 && var[perm[m - 1]] < var[j]) {
            perm[m] = perm[m - 1];
            m--;
        }
        perm[m] = (int)j;
    }
    free(rbuf);
    free(mean);
    return 0;
}

#endif
