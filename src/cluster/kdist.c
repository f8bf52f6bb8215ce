#include "kdist.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "err.h"
#include "kdist_refine.h"
#include "mem.h"
#include "sort_f64.h"

/* An entry's estimates in s->out made the engine's exact k-distances by its
 * joins (kdist_refine, reading a copy while it writes s->out). res holds
 * the entry's record of its estimates: its phases stay first, and its
 * kernel seconds and metrics follow the refinement's, so that the record
 * reads as the refinement's joins with the estimate's cost added. */
static int kdist_refined(const kdist_spec *s, join_result *res)
{
    const size_t nq = s->q1 - s->q0;
    double *est = mem_alloc(s->engine->name, "the k-distance's estimates", nq, sizeof *est, 0);
    if (!est)
        return TCJ_ENOMEM;
    memcpy(est, s->out, nq * sizeof *est);
    const int nm = res->nmetric;
    join_metric *m = xmalloc((size_t)(nm ? nm : 1) * sizeof *m);
    memcpy(m, res->metric, (size_t)nm * sizeof *m);
    const double kernel_s = res->kernel_seconds;
    res->nmetric = 0;
    res->kernel_seconds = 0;
    int rc = kdist_refine(s, est, res);
    res->kernel_seconds += kernel_s;
    for (int k = 0; k < nm; k++)
        join_result_metric(res, m[k].name, m[k].value, m[k].unit);
    free(m);
    free(est);
    return rc;
}

int kdist_run(const engine *e, const kdist_spec *s, join_result *res)
{
    memset(res, 0, sizeof *res);
    /* tcjoin-mpi: rows shared by every rank (src/cli/mpi_run.c). */
    if (dist && dist->kdist) {
        int drc = dist->kdist(e, s, res);
        if (drc != DIST_LOCAL)
            return drc;
    }
    if (!s->ds || s->ds->n == 0)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (!e->kdist)
        return err_set(TCJ_EUNSUP, "%s has no k-distance yet; engine=cpu computes it", e->name);
    if (s->k < 1 || s->k > KDIST_MAX_K)
        return err_set(TCJ_EINVAL, "K must be 1 to %d, got %d", KDIST_MAX_K, s->k);
    if ((size_t)s->k > s->ds->n - 1)
        return err_set(TCJ_EINVAL, "K=%d needs at least %d points; the dataset has %zu", s->k,
                       s->k + 1, s->ds->n);
    if (s->q0 >= s->q1 || s->q1 > s->ds->n)
        return err_set(TCJ_EINVAL, "query rows [%zu, %zu) outside the dataset's %zu rows", s->q0,
                       s->q1, s->ds->n);
    if (!s->out)
        return err_set(TCJ_EINVAL, "k-distance needs an output array");
    int arc = engine_available(e, s->opts);
    if (arc)
        return arc;
    double t0 = engine_now();
    kdist_spec s2 = *s;
    s2.engine = e;
    s2.known = mem_alloc(e->name, "the k-distance's rows", s->q1 - s->q0, 1, 1);
    if (!s2.known)
        return TCJ_ENOMEM;
    int rc = e->kdist(&s2, res);
    if (rc == ENGINE_ESTIMATE)
        rc = kdist_refined(&s2, res);
    free(s2.known);
    res->seconds = engine_now() - t0;
    if (!res->precision[0])
        snprintf(res->precision, sizeof res->precision, "%s", e->precision);
    return rc;
}

long kdist_kneedle(const double *x, const double *y, size_t n, double s)
{
    if (n < 3)
        return -1;
    double x0 = x[0], xs = x[n - 1] - x[0], y0 = y[0], ys = y[n - 1] - y[0];
    if (!(xs > 0) || !(ys > 0))
        return -1;
    /* The difference curve, walked from the large-x end: for a convex
     * increasing curve Kneedle flips it into a concave one, whose
     * difference curve is D[t] = x_n - y_n at original index n-1-t. */
    double *dd = xmalloc(n * sizeof *dd);
    for (size_t t = 0; t < n; t++) {
        size_t i = n - 1 - t;
        dd[t] = (x[i] - x0) / xs - (y[i] - y0) / ys;
    }
    /* Mean spacing of the normalised x: 1/(n-1). */
    double step = 1.0 / (double)(n - 1);
    /* Local maxima and minima as the kneed library finds them
     * (argrelextrema with greater_equal / less_equal, ends clipped). */
#define KD_MAX(t) (((t) == 0 || dd[t] >= dd[(t)-1]) && ((t) + 1 == n || dd[t] >= dd[(t) + 1]))
#define KD_MIN(t) (((t) == 0 || dd[t] <= dd[(t)-1]) && ((t) + 1 == n || dd[t] <= dd[(t) + 1]))
    size_t first = 0;
    while (first < n && !KD_MAX(first))
        first++;
    long knee = -1;
    double thr = 0;
    size_t thr_at = first;
    for (size_t t = first; t + 1 < n; t++) {
        if (KD_MAX(t)) {
            thr = dd[t] - s * step;
            thr_at = t;
        }
        if (KD_MIN(t))
            thr = 0;
        /* A knee lies below the chord (kneed would also take a maximum at
         * or above it, e.g. an end point of a concave curve). */
        if (dd[t + 1] < thr && dd[thr_at] > 0) {
            knee = (long)(n - 1 - thr_at);
            break;
        }
    }
#undef KD_MAX
#undef KD_MIN
    free(dd);
    return knee;
}

/* The knee of y over x[0..m): Kneedle's, else the point farthest below
 * the chord; -1 when there is none (flat, straight or concave). */
static long knee_in(const double *x, const double *y, size_t m, const char **method)
{
    *method = "kneedle";
    long kn = kdist_kneedle(x, y, m, KDIST_KNEEDLE_S);
    if (kn >= 0 || m < 3 || !(y[m - 1] > y[0]))
        return kn;
    double best = 0;
    for (size_t j = 1; j + 1 < m; j++) {
        double dv = (x[j] - x[0]) / (x[m - 1] - x[0]) - (y[j] - y[0]) / (y[m - 1] - y[0]);
        if (dv > best) {
            best = dv;
            kn = (long)j;
        }
    }
    *method = "farthest below the chord";
    return kn;
}

/* The stored points [*lo, *hi) whose ranks lie from the median to the
 * 90th percentile (KDIST_KNEE_LO, KDIST_KNEE_HI), where the knee is
 * sought; the whole curve when fewer than 3 do. Below the median more
 * than half the points would be non-core, so noise could be the
 * majority; above the 90th percentile lies the tail of outliers, whose
 * large k-distances would set Kneedle's scale and draw its knee into the
 * tail (letter.csv, K = 9: rank 98.9%, one cluster of 99% core points). */
static void knee_window(const kdist_curve *c, size_t *lo, size_t *hi)
{
    double top = (double)(c->n - 1);
    size_t a = 0, b = c->npts;
    while (a < c->npts && (double)c->rank[a] < KDIST_KNEE_LO * top)
        a++;
    while (b > a && (double)c->rank[b - 1] > KDIST_KNEE_HI * top)
        b--;
    if (b - a < 3)
        a = 0, b = c->npts;
    *lo = a;
    *hi = b;
}

void kdist_curve_build(double *d2, size_t n, int k, kdist_curve *c)
{
    memset(c, 0, sizeof *c);
    sort_f64(d2, n);
    c->n = n;
    c->k = k;
    size_t m = n < KDIST_MAX_POINTS ? n : KDIST_MAX_POINTS;
    double x[KDIST_MAX_POINTS] = {0};
    for (size_t j = 0; j < m; j++) {
        /* ranks spread evenly from the first to the last, both kept */
        size_t r = m > 1 ? (j * (n - 1) + (m - 1) / 2) / (m - 1) : 0;
        c->rank[j] = r;
        c->dist[j] = sqrt(d2[r]);
        x[j] = (double)r;
    }
    c->npts = m;
    size_t lo, hi;
    knee_window(c, &lo, &hi);
    long kn = knee_in(x + lo, c->dist + lo, hi - lo, &c->knee_method);
    if (kn >= 0)
        kn += (long)lo;
    if (kn < 0) {
        c->knee_method = "none";
        return;
    }
    c->have_knee = 1;
    c->knee_point = (size_t)kn;
    c->knee_d2 = d2[c->rank[kn]];
    c->eps = kdist_eps_for(c->knee_d2);
}
