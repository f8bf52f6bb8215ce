/* The exact engines' centring rule and the per-row facts of their error
 * bound (src/center_exact.c): which choice the GPU pass's bound favours at
 * a threshold, each row's norm and measured FP16 rounding, and the bound
 * the pass takes at a dimension. Library code: nothing here prints. */
#ifndef TCJ_CENTER_EXACT_H
#define TCJ_CENTER_EXACT_H

#include <stddef.h>

#include "center.h"
#include "dataset.h"
#include "exact_bound.h"

/* center_pick for an exact engine (exact, cpu-exact: an FP16 pass bounded
 * and refined in FP64) at threshold eps (in HIST mode the root of the last
 * edge). Under AUTO (or DEFAULT), the means when the sum of delta_ii over a
 * sample of rows (each row's own norm and FP16 rounding, the bound
 * center_exact_bound gives) is smaller centred than as loaded, NULL
 * otherwise; the choice is cached per dataset and eps. ON and OFF, and
 * data with a value that is not finite, are center_pick(ds, setting, 1). */
const double *center_pick_exact(const dataset *ds, int setting, double eps);

/* center_pick for an exact engine's k-distance, whose thresholds are each
 * row's own: the passes' bound takes no measured rounding (its input term
 * is the worst case c_in (|x| + |y|)) and both its terms grow with the
 * row's norm and the largest, so under AUTO (or DEFAULT, LOCAL) the means
 * whenever the centred largest norm is at most the loaded one (centring
 * never lengthens the mean squared norm). ON and OFF, and data with a
 * value that is not finite, are center_pick(ds, setting, 1). */
const double *center_pick_kdist(const dataset *ds, int setting);

/* The FP64 norm of the row x of d values (centred by m when m) and its
 * FP16 rounding rho = |fp16(sc v) / sc - v| at the power-of-two scale sc. */
void center_row_rho(const double *x, size_t d, const double *m, double sc, double *norm,
                    double *rho);
/* y = (x - m) sc (m NULL: x sc), the values the FP16 pass converts, in FP64,
 * scaled before the subtraction so that data near the largest double stay
 * finite (a power of two scales exactly). center_row_rho(y, d, NULL, 1)
 * then gives the norm and rounding in the scaled units. */
void center_row_scaled(const double *x, size_t d, const double *m, double sc, double *y);

/* The bound the GPU exact pass takes at dimension d: the promoting pass's
 * (2') above 2 KERN_FP16X_PROMOTE_VALUES, (2) below. */
void center_exact_bound(size_t d, exact_bound *b);

/* The power of two exact scales by when |v| reaches beyond FP16: 1, or the
 * largest 2^-k with vmax 2^-k <= 65504. */
double center_exact_scale(double vmax);

#endif
