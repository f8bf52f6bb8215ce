#include "exact_predict.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "center_exact.h"
#include "err.h"
#include "exact_path.h"
#include "kernels.h"

/* The largest norm of ds (less m when given) times sc: the facts' norm
 * scaled where it is finite, else measured row by row at the scale, where
 * data near the largest double do not overflow. */
static double predict_nmax_scaled(const dataset *ds, const double *m, double nmax, double sc)
{
    if (isfinite(nmax))
        return nmax * sc;
    const size_t d = ds->d;
    double *x = xmalloc(d * sizeof *x), best = 0;
    for (size_t i = 0; i < ds->n; i++) {
        dataset_rows_f64(ds, i, 1, x);
        double s = 0;
        for (size_t k = 0; k < d; k++) {
            const double v = (m ? x[k] - m[k] : x[k]) * sc;
            s += v * v;
        }
        best = fmax(best, sqrt(s));
    }
    free(x);
    return best;
}

/* delta(eps) at the largest norm relative to eps^2, taken where the engine
 * runs: at the power-of-two scale that brings vmax into FP16's range, so
 * neither the norms nor eps^2 overflow (relative error is the same at any
 * power-of-two scale but for FP16's subnormals, which the scale decides). */
static double predict_err_rel(const dataset *ds, const exact_bound *b, const double *m, double nmax,
                              double vmax, double eps)
{
    const double sc = center_exact_scale(vmax), es = eps * sc;
    const double ns = predict_nmax_scaled(ds, m, nmax, sc);
    return exact_bound_delta(b, ns, ns, es) / (es * es);
}

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
    p->err_raw = predict_err_rel(ds, &b, NULL, f.nmax_raw, f.vmax_raw, eps);
    /* Columns without a finite mean are never centred: the data run as
     * loaded, and so does their bound. */
    const double *mon = center_pick(ds, CENTER_ON, 1);
    p->err_centred =
        mon ? predict_err_rel(ds, &b, mon, f.nmax_centred, f.vmax_centred, eps) : p->err_raw;
    const double *m = center_pick_exact(ds, CENTER_AUTO, eps);
    p->auto_centres = m != NULL;
    /* The band as the GPU engine draws it: each pair's own norms and each
     * row's measured FP16 rounding, at the scale it runs at. Everything
     * below is in the scaled units, eps and d^2 included. */
    const double sc = center_exact_scale(m ? f.vmax_centred : f.vmax_raw);
    const double es = eps * sc, e2 = es * es;
    const size_t n = ds->n, d = ds->d;
    p->rows = n < max_rows ? n : max_rows;
    p->cols = n < max_cols ? n : max_cols;
    double *cn = xmalloc(p->cols * sizeof *cn), *cr = xmalloc(p->cols * sizeof *cr);
    double *rn = xmalloc(p->rows * sizeof *rn), *rr = xmalloc(p->rows * sizeof *rr);
    /* The sampled rows widened once (at most max_rows x d), the columns a
     * block of PREDICT_BLOCK rows at a time: no copy the size of the
     * sample's columns. */
    enum { PREDICT_BLOCK = 256 };
    double *rx = xmalloc(p->rows * d * sizeof *rx), *cx = xmalloc(PREDICT_BLOCK * d * sizeof *cx);
    double *row = xmalloc(d * sizeof *row);
    for (size_t r = 0; r < p->rows; r++) {
        dataset_rows_f64(ds, (size_t)((double)r * (double)n / (double)p->rows), 1, row);
        center_row_scaled(row, d, m, sc, rx + r * d);
        center_row_rho(rx + r * d, d, NULL, 1, &rn[r], &rr[r]);
    }
    for (size_t c0 = 0; c0 < p->cols; c0 += PREDICT_BLOCK) {
        const size_t nc = p->cols - c0 < PREDICT_BLOCK ? p->cols - c0 : PREDICT_BLOCK;
        for (size_t c = c0; c < c0 + nc; c++) {
            dataset_rows_f64(ds, (size_t)((double)c * (double)n / (double)p->cols), 1, row);
            center_row_scaled(row, d, m, sc, cx + (c - c0) * d);
            center_row_rho(cx + (c - c0) * d, d, NULL, 1, &cn[c], &cr[c]);
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
                const double delta = exact_bound_delta_rho(&b, rn[r], cn[c], rr[r], cr[c], es);
                p->band += fabs(s - e2) <= delta;
            }
        }
    }
    p->band_fraction = p->in ? (double)p->band / (double)p->in : 0;
    free(row);
    free(rx);
    free(cx);
    free(rn);
    free(rr);
    free(cn);
    free(cr);
}

int exact_path_needs_prediction(int setting, size_t d)
{
    return setting == EXACT_PATH_AUTO && d <= EXACT_GRID_MAX_D;
}

int exact_path_choose(int setting, size_t d, const exact_prediction *p)
{
    if (setting != EXACT_PATH_AUTO)
        return setting == EXACT_PATH_GRID; /* the pass, whole or cut by clusters */
    if (d > EXACT_GRID_MAX_D || !p)
        return 0;
    const double pairs = (double)p->rows * (double)p->cols;
    return p->band_fraction > EXACT_GRID_BAND ||
           (pairs > 0 && (double)p->in < EXACT_GRID_SPARSE * pairs);
}

/* The last prediction, kept: exact run again at the same eps on the same
 * data (a second `run`, a `compare` after a run, a bench's warm runs)
 * would draw the same sample again, a few milliseconds of host time each
 * (docs/ACCURACY.md, "The FP64 grid path"). The prediction depends on
 * the values (the content hash, n, d), eps and the sample's size only. */
static pthread_mutex_t predict_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int valid;
    dataset_key key;
    size_t rows, cols;
    double eps;
    exact_prediction p;
} predict_memo;

int exact_predict_cached(const dataset *ds, double eps, size_t max_rows, size_t max_cols,
                         exact_prediction *p)
{
    int hit = 0;
    pthread_mutex_lock(&predict_mu);
    if (ds && predict_memo.valid && dataset_key_is(&predict_memo.key, ds) &&
        predict_memo.eps == eps && predict_memo.rows == max_rows && predict_memo.cols == max_cols) {
        *p = predict_memo.p;
        hit = 1;
    }
    pthread_mutex_unlock(&predict_mu);
    if (hit)
        return 1;
    exact_predict(ds, eps, max_rows, max_cols, p);
    if (!ds)
        return 0;
    pthread_mutex_lock(&predict_mu);
    predict_memo.valid = 1;
    predict_memo.key = dataset_key_of(ds);
    predict_memo.eps = eps;
    predict_memo.rows = max_rows;
    predict_memo.cols = max_cols;
    predict_memo.p = *p;
    pthread_mutex_unlock(&predict_mu);
    return 0;
}
