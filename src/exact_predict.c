#include "exact_predict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "center_exact.h"
#include "err.h"
#include "kernels.h"

void exact_predict(const dataset *ds, double eps, size_t max_rows, size_t max_cols,
                   exact_prediction *p)
{
    memset(p, 0, sizeof *p);
    if (!ds || ds->n == 0 || !(eps > 0))
        return;
    center_facts f;
    center_means(ds, &f);
    /* The GPU pass's bound: (2') where it promotes, (2) below. The largest
     * error takes the worst-case input rounding u16 |x| at the largest
     * norm (the data's own rounding is at most that). */
    exact_bound b;
    center_exact_bound(ds->d, &b);
    const double e2 = eps * eps;
    p->err_raw = exact_bound_delta(&b, f.nmax_raw, f.nmax_raw, eps) / e2;
    p->err_centred = exact_bound_delta(&b, f.nmax_centred, f.nmax_centred, eps) / e2;
    const double *m = center_pick_exact(ds, CENTER_AUTO, eps);
    p->auto_centres = m != NULL;
    /* The band as the GPU engine draws it: each pair's own norms and each
     * row's measured FP16 rounding, at the scale it runs at. */
    const double sc = center_exact_scale(m ? f.vmax_centred : f.vmax_raw);
    const size_t n = ds->n, d = ds->d;
    p->rows = n < max_rows ? n : max_rows;
    p->cols = n < max_cols ? n : max_cols;
    double *cn = xmalloc(p->cols * sizeof *cn), *cr = xmalloc(p->cols * sizeof *cr);
    size_t *ci = xmalloc(p->cols * sizeof *ci);
    for (size_t c = 0; c < p->cols; c++) {
        ci[c] = (size_t)((double)c * (double)n / (double)p->cols);
        center_row_rho(ds, ci[c], m, sc, &cn[c], &cr[c]);
    }
    for (size_t r = 0; r < p->rows; r++) {
        const size_t i = (size_t)((double)r * (double)n / (double)p->rows);
        double ni, ri;
        center_row_rho(ds, i, m, sc, &ni, &ri);
        for (size_t c = 0; c < p->cols; c++) {
            const size_t j = ci[c];
            double s = 0;
            for (size_t k = 0; k < d; k++) {
                const double u = ds->x[i * d + k] - ds->x[j * d + k];
                s += u * u;
            }
            p->in += s <= e2;
            const double delta =
                exact_bound_delta_rho(&b, ni * sc, cn[c] * sc, ri * sc, cr[c] * sc, eps * sc) /
                (sc * sc);
            p->band += fabs(s - e2) <= delta;
        }
    }
    p->band_fraction = p->in ? (double)p->band / (double)p->in : 0;
    free(cn);
    free(cr);
    free(ci);
}
