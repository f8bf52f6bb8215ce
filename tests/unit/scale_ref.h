/* The power of two a scaled format (FP8) multiplies a dataset by, found
 * by doubling and halving, independently of src/fmt_fit.c's log2: the
 * largest s with max |v| 2^s <= smax; 0 for smax 0 (no scale) or all-zero
 * data. Shared by t_engine_emul and g_fasted. */
#ifndef TCJ_SCALE_REF_H
#define TCJ_SCALE_REF_H

#include <math.h>

#include "dataset.h"

static inline int scale_ref(const dataset *ds, double smax)
{
    double m = 0;
    for (size_t t = 0; t < ds->n * ds->d; t++)
        m = fmax(m, fabs(dataset_value(ds, t)));
    if (!smax || m == 0)
        return 0;
    int s = 0;
    while (ldexp(m, s) > smax)
        s--;
    while (ldexp(m, s + 1) <= smax)
        s++;
    return s;
}

#endif
