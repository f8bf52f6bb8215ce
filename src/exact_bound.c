/* The exact engines' error bound: see exact_bound.h and docs/ACCURACY.md. */
#include "exact_bound.h"

#include <math.h>

/* gamma_m(u) = m u / (1 - m u): the relative error bound of m roundings of
 * unit u (Higham, Accuracy and Stability of Numerical Algorithms, 3.1). */
static double exact_gamma(double m, double u)
{
    return m * u / (1.0 - m * u);
}

void exact_bound_init(exact_bound *b, size_t d)
{
    const double rd = sqrt((double)d);
    b->c_in = 0x1p-11;
    b->c_sub = 0x1p-24 * rd;
    b->n_abs = 0x1p-25 * rd;
    /* Sums of d terms with unit 2^-23 (round toward zero, the norms; and a
     * tensor core's truncating accumulation), twice (norms and product),
     * plus the two roundings of s_x + s_y - 2 x.y: (2 gamma_d + 2^-21). */
    b->c_acc = 2.0 * exact_gamma((double)d, 0x1p-23) + 0x1p-21;
    /* Tensor cores do not document their accumulation's order or rounding
     * (measured: truncation, blocks of products aligned to the largest):
     * twice the bound; docs/ACCURACY.md gives the measured worst case. */
    b->safety = 2.0;
}
