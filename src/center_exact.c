/* The exact engines' `set center auto` at a threshold: centre when the
 * error bound of the GPU pass (kernels/exact_bound.h, with each row's
 * measured FP16 rounding) predicts a narrower band centred than as loaded.
 *
 * Why not the 2x norm rule of the other engines: the bound has two parts.
 * The accumulation term grows with the norms, so centring helps it; the
 * input term is each row's own FP16 rounding rho = |x^ - x|, which is 0 for
 * data FP16 holds exactly (integers up to 2048, pixel codes) and becomes
 * u16 |x| once centring makes the values fractional. So real-valued data
 * whose norms shrink 1.9x (gauss d=784) gain from centring though the norm
 * rule refuses them, and integer data can lose from it though their norms
 * shrink 2x. The sum of delta_ij over a sample of rows, both ways, at this
 * eps, decides. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "center_exact.h"
#include "err.h"
#include "fp16.h"
#include "kernels.h"

/* Rows sampled, evenly spaced: the choice needs the typical delta, not
 * every row's. At most 1024 rows and 2^19 values (128 rows at d = 4096):
 * their FP16 conversions once per dataset, delta_ii's arithmetic per eps. */
#define CENTER_SAMPLE 1024
#define CENTER_SAMPLE_VALUES ((size_t)1 << 19)

static pthread_mutex_t cx_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int valid;
    dataset_key key;
    double eps;
    int centre;
} g_cx;

/* The power of two the exact engine scales by when values exceed FP16's
 * range (src/engine_exact.c's fmt_fit: never up). */
double center_exact_scale(double vmax)
{
    double sc = 1;
    while (vmax * sc > EXACT_FP16_MAX)
        sc *= 0.5;
    return sc;
}

void center_row_rho(const double *x, size_t d, const double *m, double sc, double *norm,
                    double *rho)
{
    double s = 0, r = 0;
    for (size_t k = 0; k < d; k++) {
        const double v = m ? x[k] - m[k] : x[k];
        const double e = (double)fp16_round(v * sc) / sc - v;
        s += v * v;
        r += e * e;
    }
    *norm = sqrt(s);
    *rho = sqrt(r);
}

void center_row_scaled(const double *x, size_t d, const double *m, double sc, double *y)
{
    for (size_t k = 0; k < d; k++)
        y[k] = x[k] * sc - (m ? m[k] * sc : 0);
}

void center_exact_bound(size_t d, exact_bound *b)
{
    if (d > 2 * KERN_FP16X_PROMOTE_VALUES)
        exact_bound_init_promoted(b, d, KERN_FP16X_PROMOTE_VALUES);
    else
        exact_bound_init(b, d);
}

/* The sample's rows at the pass's scale, as loaded (side 0) and centred
 * (side 1): each row's norm and FP16 rounding, which do not depend on eps.
 * Kept for the last dataset: auto decides again at every eps (each of a
 * k-distance's refinement joins has its own), and only delta_ii's
 * arithmetic is eps's. Guarded by cx_mu. */
static struct {
    int valid;
    dataset_key key;
    const double *m;
    size_t rows;
    double sc[2], *nx[2], *rx[2];
} g_cs;

static void cs_side(const dataset *ds, const double *m, double vmax, int side, double *buf,
                    double *y)
{
    const double sc = center_exact_scale(vmax);
    g_cs.sc[side] = sc;
    for (size_t r = 0; r < g_cs.rows; r++) {
        const size_t i = (size_t)((double)r * (double)ds->n / (double)g_cs.rows);
        center_row_scaled(dataset_row_f64(ds, i, buf), ds->d, m, sc, y);
        center_row_rho(y, ds->d, NULL, 1, &g_cs.nx[side][r], &g_cs.rx[side][r]);
    }
}

static void cs_fill(const dataset *ds, const double *m, const center_facts *f)
{
    if (g_cs.valid && dataset_key_is(&g_cs.key, ds) && g_cs.m == m)
        return;
    size_t rows = CENTER_SAMPLE_VALUES / ds->d;
    rows = rows < 16 ? 16 : rows > CENTER_SAMPLE ? CENTER_SAMPLE : rows;
    rows = ds->n < rows ? ds->n : rows;
    for (int s = 0; s < 2; s++) {
        free(g_cs.nx[s]);
        free(g_cs.rx[s]);
        g_cs.nx[s] = xmalloc(rows * sizeof(double));
        g_cs.rx[s] = xmalloc(rows * sizeof(double));
    }
    g_cs.rows = rows;
    double *buf = xmalloc(ds->d * sizeof *buf), *y = xmalloc(ds->d * sizeof *y);
    cs_side(ds, NULL, f->vmax_raw, 0, buf, y);
    cs_side(ds, m, f->vmax_centred, 1, buf, y);
    free(buf);
    free(y);
    g_cs.key = dataset_key_of(ds);
    g_cs.m = m;
    g_cs.valid = 1;
}

/* Sum over the sample of delta_ii (a row paired with itself: its own norm
 * and rounding on both sides) relative to eps^2, taken at the scale the
 * pass runs at, where neither the norms nor eps^2 overflow. */
static double center_delta_sum(const dataset *ds, int side, double eps)
{
    exact_bound b;
    center_exact_bound(ds->d, &b);
    const double es = eps * g_cs.sc[side];
    double sum = 0;
    for (size_t r = 0; r < g_cs.rows; r++) {
        const double nx = g_cs.nx[side][r], rx = g_cs.rx[side][r];
        sum += exact_bound_delta_rho(&b, nx, nx, rx, rx, es) / (es * es);
    }
    return sum;
}

const double *center_pick_exact(const dataset *ds, int setting, double eps)
{
    const int exact = 1;
    if (setting == CENTER_DEFAULT || setting == CENTER_LOCAL)
        setting = CENTER_AUTO; /* local: exact whatever the centring, auto's choice */
    if (!(setting == CENTER_AUTO && eps > 0 && isfinite(eps)))
        return center_pick(ds, setting, exact);
    /* The means, and whether any may be used at all (finite columns). */
    center_facts f;
    const double *m = center_pick(ds, CENTER_ON, exact);
    if (!m || !center_means(ds, &f))
        return NULL;
    /* A value that is not finite leaves no bound either way: the norm
     * rule decides, and the engine refuses the value. */
    if (!isfinite(f.vmax_raw) || !isfinite(f.vmax_centred))
        return center_pick(ds, setting, exact);
    pthread_mutex_lock(&cx_mu);
    int centre;
    if (g_cx.valid && dataset_key_is(&g_cx.key, ds) && g_cx.eps == eps) {
        centre = g_cx.centre;
    } else {
        cs_fill(ds, m, &f);
        const double raw = center_delta_sum(ds, 0, eps);
        const double cen = center_delta_sum(ds, 1, eps);
        centre = cen < raw;
        g_cx.valid = 1;
        g_cx.key = dataset_key_of(ds);
        g_cx.eps = eps;
        g_cx.centre = centre;
    }
    pthread_mutex_unlock(&cx_mu);
    return centre ? m : NULL;
}

const double *center_pick_kdist(const dataset *ds, int setting)
{
    if (setting == CENTER_DEFAULT || setting == CENTER_LOCAL)
        setting = CENTER_AUTO;
    if (setting != CENTER_AUTO)
        return center_pick(ds, setting, 1);
    center_facts f;
    const double *m = center_pick(ds, CENTER_ON, 1);
    if (!m || !center_means(ds, &f))
        return NULL;
    return f.nmax_centred <= f.nmax_raw ? m : NULL;
}
