#include "exact_predict.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "center_exact.h"
#include "err.h"
#include "exact_path.h"
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
    double *rn = xmalloc(p->rows * sizeof *rn), *rr = xmalloc(p->rows * sizeof *rr);
    size_t *ci = xmalloc(p->cols * sizeof *ci);
    /* The sampled rows widened once (at most max_rows x d), the columns a
     * block of PREDICT_BLOCK rows at a time: no copy the size of the
     * sample's columns. */
    enum { PREDICT_BLOCK = 256 };
    double *rx = xmalloc(p->rows * d * sizeof *rx), *cx = xmalloc(PREDICT_BLOCK * d * sizeof *cx);
    for (size_t r = 0; r < p->rows; r++) {
        dataset_rows_f64(ds, (size_t)((double)r * (double)n / (double)p->rows), 1, rx + r * d);
        center_row_rho(rx + r * d, d, m, sc, &rn[r], &rr[r]);
    }
    for (size_t c0 = 0; c0 < p->cols; c0 += PREDICT_BLOCK) {
        const size_t nc = p->cols - c0 < PREDICT_BLOCK ? p->cols - c0 : PREDICT_BLOCK;
        for (size_t c = c0; c < c0 + nc; c++) {
            ci[c] = (size_t)((double)c * (double)n / (double)p->cols);
            dataset_rows_f64(ds, ci[c], 1, cx + (c - c0) * d);
            center_row_rho(cx + (c - c0) * d, d, m, sc, &cn[c], &cr[c]);
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
                const double delta = exact_bound_delta_rho(&b, rn[r] * sc, cn[c] * sc, rr[r] * sc,
                                                           cr[c] * sc, eps * sc) /
                                     (sc * sc);
                p->band += fabs(s - e2) <= delta;
            }
        }
    }
    p->band_fraction = p->in ? (double)p->band / (double)p->in : 0;
    free(rx);
    free(cx);
    free(rn);
    free(rr);
    free(cn);
    free(cr);
    free(ci);
}

int exact_path_needs_prediction(int setting, size_t d)
{
    return setting == EXACT_PATH_AUTO && d <= EXACT_GRID_MAX_D;
}

int exact_path_choose(int setting, size_t d, double band_fraction)
{
    if (setting != EXACT_PATH_AUTO)
        return setting == EXACT_PATH_GRID; /* the pass, whole or cut by clusters */
    return d <= EXACT_GRID_MAX_D && band_fraction > EXACT_GRID_BAND;
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
