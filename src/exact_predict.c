#include "exact_predict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "center.h"
#include "err.h"
#include "kernels.h"

/* The norm of a row of d FP64 values, less the means m when given. */
static double row_norm(const double *x, size_t d, const double *m)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double v = m ? x[k] - m[k] : x[k];
        s += v * v;
    }
    return sqrt(s);
}

void exact_predict(const dataset *ds, double eps, size_t max_rows, size_t max_cols,
                   exact_prediction *p)
{
    memset(p, 0, sizeof *p);
    if (!ds || ds->n == 0 || !(eps > 0))
        return;
    center_facts f;
    center_means(ds, &f);
    exact_bound b;
    exact_bound_init(&b, ds->d);
    const double e2 = eps * eps;
    p->err_raw = exact_bound_delta(&b, f.nmax_raw, f.nmax_raw, eps) / e2;
    p->err_centred = exact_bound_delta(&b, f.nmax_centred, f.nmax_centred, eps) / e2;
    const double *m = center_pick(ds, CENTER_AUTO, 1);
    p->auto_centres = m != NULL;
    const size_t n = ds->n, d = ds->d;
    p->rows = n < max_rows ? n : max_rows;
    p->cols = n < max_cols ? n : max_cols;
    double *cn = xmalloc(p->cols * sizeof *cn), *rn = xmalloc(p->rows * sizeof *rn);
    size_t *ci = xmalloc(p->cols * sizeof *ci);
    /* The sampled rows widened once (at most max_rows x d), the columns a
     * block of PREDICT_BLOCK rows at a time: no copy the size of the
     * sample's columns. */
    enum { PREDICT_BLOCK = 256 };
    double *rx = xmalloc(p->rows * d * sizeof *rx), *cx = xmalloc(PREDICT_BLOCK * d * sizeof *cx);
    for (size_t r = 0; r < p->rows; r++) {
        dataset_rows_f64(ds, (size_t)((double)r * (double)n / (double)p->rows), 1, rx + r * d);
        rn[r] = row_norm(rx + r * d, d, m);
    }
    for (size_t c0 = 0; c0 < p->cols; c0 += PREDICT_BLOCK) {
        const size_t nc = p->cols - c0 < PREDICT_BLOCK ? p->cols - c0 : PREDICT_BLOCK;
        for (size_t c = c0; c < c0 + nc; c++) {
            ci[c] = (size_t)((double)c * (double)n / (double)p->cols);
            dataset_rows_f64(ds, ci[c], 1, cx + (c - c0) * d);
            cn[c] = row_norm(cx + (c - c0) * d, d, m);
        }
        for (size_t r = 0; r < p->rows; r++) {
            const double *xi = rx + r * d;
            for (size_t c = c0; c < c0 + nc; c++) {
                const double *xj = cx + (c - c0) * d;
                double s = 0;
                for (size_t k = 0; k < d; k++) {
                    const double u = xi[k] - xj[k];
                    s += u * u;
                }
                p->in += s <= e2;
                p->band += fabs(s - e2) <= exact_bound_delta(&b, rn[r], cn[c], eps);
            }
        }
    }
    p->band_fraction = p->in ? (double)p->band / (double)p->in : 0;
    free(rx);
    free(cx);
    free(rn);
    free(cn);
    free(ci);
}
