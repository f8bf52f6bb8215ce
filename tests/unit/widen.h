/* Test helper: a dataset held in another type (loaded or generated f32,
 * u8, f16) widened in place to FP64, so a test's brute-force reference can
 * read ((double *)ds->v)[k]. The values and the hash stay the same. For
 * tests only: the program never widens a whole dataset. */
#ifndef TCJ_T_WIDEN_H
#define TCJ_T_WIDEN_H

#include <stdlib.h>

#include "dataset.h"

static inline void t_widen_f64(dataset *ds)
{
    if (ds->type == DTYPE_F64 || !ds->v)
        return;
    double *x = malloc((ds->n * ds->d ? ds->n * ds->d : 1) * sizeof *x);
    dataset_rows_f64(ds, 0, ds->n, x);
    free(ds->v);
    ds->v = x;
    ds->type = DTYPE_F64;
}

/* FP64 squared distance of rows i and j, direct form, dimension order
 * (the cpu engine's arithmetic), whatever type ds is held in. */
static inline double t_d2(const dataset *ds, size_t i, size_t j)
{
    double sa[4096], sb[4096];
    double *ba = ds->d <= 4096 ? sa : malloc(ds->d * sizeof *ba);
    double *bb = ds->d <= 4096 ? sb : malloc(ds->d * sizeof *bb);
    const double *a = dataset_row_f64(ds, i, ba), *b = dataset_row_f64(ds, j, bb);
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = a[k] - b[k];
        s += u * u;
    }
    if (ba != sa) {
        free(ba);
        free(bb);
    }
    return s;
}

#endif
