#include "exact_predict.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "center.h"
#include "err.h"
#include "kernels.h"

static double row_norm(const dataset *ds, size_t i, const double *m, double *rb)
{
    const double *x = dataset_row_f64(ds, i, rb);
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
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
    double *cn = xmalloc(p->cols * sizeof *cn);
    size_t *ci = xmalloc(p->cols * sizeof *ci);
    /* The sampled columns' rows widened once (cols x d), a query row at a
     * time. */
    double *cx = xmalloc(p->cols * d * sizeof *cx), *rb = xmalloc(d * sizeof *rb);
    for (size_t c = 0; c < p->cols; c++) {
        ci[c] = (size_t)((double)c * (double)n / (double)p->cols);
        dataset_rows_f64(ds, ci[c], 1, cx + c * d);
        cn[c] = row_norm(ds, ci[c], m, rb);
    }
    for (size_t r = 0; r < p->rows; r++) {
        const size_t i = (size_t)((double)r * (double)n / (double)p->rows);
        const double ni = row_norm(ds, i, m, rb);
        const double *xi = dataset_row_f64(ds, i, rb);
        for (size_t c = 0; c < p->cols; c++) {
            const double *xj = cx + c * d;
            double s = 0;
            for (size_t k = 0; k < d; k++) {
                const double u = xi[k] - xj[k];
                s += u * u;
            }
            p->in += s <= e2;
            p->band += fabs(s - e2) <= exact_bound_delta(&b, ni, cn[c], eps);
        }
    }
    p->band_fraction = p->in ? (double)p->band / (double)p->in : 0;
    free(cx);
    free(rb);
    free(cn);
    free(ci);
}
