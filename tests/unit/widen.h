/* Test helper: the FP64 reference distance of two rows of a dataset held
 * in any type (loaded or generated f32, u8, f16), widened row by row. */
#ifndef TCJ_T_WIDEN_H
#define TCJ_T_WIDEN_H

#include <stdlib.h>

#include "dataset.h"

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
