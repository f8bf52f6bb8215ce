#include "sweep.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "par.h"
#include "sort_f64.h"

#define SAMPLE_QUERIES 2000
#define SAMPLE_VALUES_DEFAULT ((size_t)1 << 21)

void sweep_opts_default(sweep_opts *o)
{
    memset(o, 0, sizeof *o);
    o->tol = SWEEP_TOL_DEFAULT;
    o->max_passes = SWEEP_MAX_PASSES_DEFAULT;
    o->bins = 1024;
    o->refine_bins = 2048;
}

int sweep_validate(const dataset *ds, double target)
{
    if (!ds || ds->n == 0 || !ds->v)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (!(target > 0) || !isfinite(target))
        return err_set(TCJ_EINVAL, "target selectivity must be a number > 0 (got %g)", target);
    if (ds->n < 2 || target >= (double)(ds->n - 1))
        return err_set(TCJ_EINVAL,
                       "target selectivity %g must be below n-1 = %zu (at n-1 every point is a "
                       "neighbour of every other)",
                       target, ds->n < 2 ? (size_t)0 : ds->n - 1);
    size_t d = ds->d;
    double *r0 = xmalloc(2 * d * sizeof *r0), *rb = r0 + d;
    dataset_rows_f64(ds, 0, 1, r0);
    for (size_t i = 1; i < ds->n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        for (size_t k = 0; k < d; k++)
            if (x[k] != r0[k]) {
                free(r0);
                return 0;
            }
    }
    free(r0);
    return err_set(TCJ_EINVAL,
                   "every point is identical: all distances are 0, no eps gives selectivity %g",
                   target);
}

/* The sample's distances, a range of candidates k at a time (par_for):
 * candidate k's value against query q in slot k * m + q, -1 where the two
 * are one row (dropped after). */
typedef struct smp_job {
    const dataset *ds;
    size_t n, d, m, c;
    double *qx; /* the query rows, m x d */
    double *d2;
} smp_job;

static size_t smp_query_row(const smp_job *j, size_t q)
{
    return (size_t)((double)q * (double)j->n / (double)j->m);
}

static void smp_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const smp_job *j = ctx;
    const size_t d = j->d, n = j->n, m = j->m;
    double *cb = xmalloc(d * sizeof *cb);
    for (size_t k = a; k < b; k++) {
        size_t r = (size_t)((2.0 * (double)k + 1.0) * (double)n / (2.0 * (double)j->c));
        if (r >= n)
            r = n - 1;
        const double *x = dataset_row_f64(j->ds, r, cb);
        for (size_t q = 0; q < m; q++) {
            double s = -1;
            if (smp_query_row(j, q) != r) {
                const double *y = j->qx + q * d;
                s = 0;
                for (size_t u = 0; u < d; u++) {
                    double df = y[u] - x[u];
                    s += df * df;
                }
            }
            j->d2[k * m + q] = s;
        }
    }
    free(cb);
}

/* The bounding box and whether every value is an integer, a range of rows
 * at a time (par_for): range t's in box[t * (2d + 1)...]. Min, max and
 * "and" combine in any order: the same box on every machine. */
typedef struct box_job {
    const dataset *ds;
    size_t d;
    double *box;
} box_job;

static void box_range(void *ctx, int t, size_t a, size_t b)
{
    const box_job *j = ctx;
    const size_t d = j->d;
    double *lo = j->box + (size_t)t * (2 * d + 1), *hi = lo + d, *ints = hi + d;
    for (size_t u = 0; u < d; u++) {
        lo[u] = INFINITY;
        hi[u] = -INFINITY;
    }
    int in = 1;
    /* Widened a block of rows at a time: a call a row would be most of a
     * low-d sweep at 3.7e7 x 3. */
    const size_t br = dataset_block_rows(j->ds);
    double *blk = xmalloc(br * d * sizeof *blk);
    for (size_t i0 = a; i0 < b; i0 += br) {
        const size_t m = b - i0 < br ? b - i0 : br;
        dataset_rows_f64(j->ds, i0, m, blk);
        for (size_t i = 0; i < m; i++)
            for (size_t u = 0; u < d; u++) {
                double v = blk[i * d + u];
                lo[u] = v < lo[u] ? v : lo[u];
                hi[u] = v > hi[u] ? v : hi[u];
                in = in && v == floor(v);
            }
    }
    free(blk);
    *ints = in;
}

/* The last sample, kept: a sweep or curve again on the same values draws
 * the same sample (it depends on the values and max_values only), and its
 * bounding box reads every row (a visible share of a 3.7e7 x 3 sweep on
 * the 2-core build machine). One dataset's, 16 MB at most. */
static pthread_mutex_t smp_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int valid;
    dataset_key key;
    size_t max_values;
    sweep_sample s;
} smp_kept;

static int sample_kept(const dataset *ds, size_t max_values, sweep_sample *smp, double t0)
{
    pthread_mutex_lock(&smp_mu);
    const int hit =
        smp_kept.valid && dataset_key_is(&smp_kept.key, ds) && smp_kept.max_values == max_values;
    if (hit) {
        *smp = smp_kept.s;
        smp->d2 = xmalloc((smp->nval ? smp->nval : 1) * sizeof *smp->d2);
        memcpy(smp->d2, smp_kept.s.d2, smp->nval * sizeof *smp->d2);
        smp->seconds = engine_now() - t0;
    }
    pthread_mutex_unlock(&smp_mu);
    return hit;
}

static void sample_keep(const dataset *ds, size_t max_values, const sweep_sample *smp)
{
    pthread_mutex_lock(&smp_mu);
    free(smp_kept.s.d2);
    smp_kept.s = *smp;
    smp_kept.s.d2 = xmalloc((smp->nval ? smp->nval : 1) * sizeof *smp->d2);
    memcpy(smp_kept.s.d2, smp->d2, smp->nval * sizeof *smp->d2);
    smp_kept.key = dataset_key_of(ds);
    smp_kept.max_values = max_values;
    smp_kept.valid = 1;
    pthread_mutex_unlock(&smp_mu);
}

int sweep_sample_build(const dataset *ds, size_t max_values, sweep_sample *smp)
{
    memset(smp, 0, sizeof *smp);
    if (!ds || ds->n == 0 || !ds->v)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (ds->n < 2)
        return err_set(TCJ_EINVAL, "a selectivity needs at least 2 points (the dataset has 1)");
    double t0 = engine_now();
    const size_t asked = max_values;
    if (sample_kept(ds, asked, smp, t0))
        return 0;
    size_t n = ds->n, d = ds->d;
    if (!max_values) {
        /* At most about an eighth of the work of one pass. */
        double eighth = (double)n * (double)n / 8;
        max_values = SAMPLE_VALUES_DEFAULT;
        if (eighth < (double)max_values)
            max_values = eighth > 20000 ? (size_t)eighth : 20000;
    }
    size_t m = n < SAMPLE_QUERIES ? n : SAMPLE_QUERIES;
    size_t c = max_values / m;
    if (c < 2)
        c = 2;
    if (c > n)
        c = n;
    smp->n = n;
    smp->m = m;
    smp->c = c;
    smp->d2 = xmalloc(m * c * sizeof *smp->d2);
    /* Queries and candidates on evenly strided rows, the candidates at a
     * half-stride phase; with m == n or c == n every row is taken. The
     * query rows widened once (m x d), each candidate row once; ranges of
     * candidates over the cores. */
    smp_job sj = {ds, n, d, m, c, xmalloc(m * d * sizeof(double)), smp->d2};
    for (size_t q = 0; q < m; q++)
        dataset_rows_f64(ds, smp_query_row(&sj, q), 1, sj.qx + q * d);
    int nt;
    par_for(c, m * d, smp_range, &sj, &nt);
    free(sj.qx);
    size_t nv = 0;
    for (size_t k = 0; k < m * c; k++)
        if (smp->d2[k] != -1.0)
            smp->d2[nv++] = smp->d2[k];
    smp->nval = nv;
    sort_f64(smp->d2, nv);

    /* The bounding box bounds every distance; FP16 rounding of coordinates
     * and the norm expansion can exceed it a little, hence the margin. */
    double box2 = 0, absmax = 0, norm2max = 0;
    double *box = xmalloc((size_t)PAR_MAX_THREADS * (2 * d + 1) * sizeof *box);
    box_job bj = {ds, d, box};
    par_for(n, d, box_range, &bj, &nt);
    int ints = 1;
    for (size_t u = 0; u < d; u++) {
        double lo = INFINITY, hi = -INFINITY;
        for (int t = 0; t < nt; t++) {
            const double *b = box + (size_t)t * (2 * d + 1);
            lo = b[u] < lo ? b[u] : lo;
            hi = b[d + u] > hi ? b[d + u] : hi;
            ints = ints && b[2 * d] != 0;
        }
        box2 += (hi - lo) * (hi - lo);
        double am = fmax(fabs(lo), fabs(hi));
        absmax = fmax(absmax, am);
        norm2max += am * am;
    }
    free(box);
    smp->d2_max = 1.05 * box2 + norm2max * 0x1p-8 + 1e-300;
    /* Integer coordinates give integer d2, computed exactly while every
     * partial sum (norms and dot products included) stays below 2^24 for
     * FP16 in / FP32 accumulate (FP16 holds integers up to 2048), below
     * 2^53 for FP64. */
    double bound = 4.0 * (double)d * absmax * absmax;
    smp->int_grid = ints && absmax <= 2048 && bound < 0x1p24;
    smp->int_grid64 = ints && bound < 0x1p50;
    smp->ints = ints;
    smp->absmax = absmax;
    smp->sum_max = bound;
    smp->norm2max = norm2max;
    smp->d = d;
    smp->seconds = engine_now() - t0;
    sample_keep(ds, asked, smp);
    return 0;
}

void sweep_sample_free(sweep_sample *smp)
{
    free(smp->d2);
    memset(smp, 0, sizeof *smp);
}

/* The sample rank of the target: values expected at or below its ε². */
static double sample_rank(const sweep_sample *smp, double target)
{
    return target * (double)smp->nval / (double)(smp->n - 1);
}

static double sample_d2_at(const sweep_sample *smp, double rank)
{
    if (smp->nval == 0)
        return smp->d2_max;
    double r = ceil(rank) - 1;
    if (r < 0)
        r = 0;
    if (r > (double)(smp->nval - 1))
        r = (double)(smp->nval - 1);
    return smp->d2[(size_t)r];
}

/* Where the target's rank holds few sample values (2^21 values over n^2
 * pairs: 4 at n = 3.7e7 and S = 64) the value at that rank is a draw of a
 * few: a third off in eps on uniform data. Pairs within eps grow as eps^D
 * at small eps (D the data's dimension there), so the estimate reads the
 * sample at an anchor rank where its values are many and extrapolates down
 * by D: the Hill (maximum-likelihood) estimate over the values below the
 * anchor, or the dimension d itself where that estimate is within three of
 * its standard errors (D / sqrt(anchor)) of d or above it (full-
 * dimensional data such as uniform: the exact exponent). The anchor is
 * 2048 values (D within 2%), fewer in a small sample, never past 1/256 of
 * it, where the data's bounds bend the power law. Integer data (discrete
 * distances) and duplicates below the anchor keep the plain rank.
 * tests/unit/t_sweep.c holds the estimate to a tenth of eps on uniform
 * data of d 1 to 6. */
#define SAMPLE_ANCHOR_MAX 2048
#define SAMPLE_ANCHOR_MIN 256

static size_t sample_anchor(const sweep_sample *smp)
{
    size_t a = smp->nval / 256;
    return a > SAMPLE_ANCHOR_MAX   ? SAMPLE_ANCHOR_MAX
           : a < SAMPLE_ANCHOR_MIN ? SAMPLE_ANCHOR_MIN
                                   : a;
}

double sweep_sample_dim(const sweep_sample *smp)
{
    const size_t na = sample_anchor(smp);
    if (smp->ints || smp->nval < 2 * na || !(smp->d2[0] > 0))
        return 0;
    const double *v = smp->d2, top = v[na - 1];
    double s = 0;
    for (size_t i = 0; i + 1 < na; i++)
        s += log(top / v[i]);
    if (!(s > 0))
        return 0;
    /* the exponent of d2 is D / 2 */
    const double dim = 2.0 * (double)(na - 1) / s, d = (double)smp->d;
    if (dim > d || fabs(dim - d) <= 3.0 * dim / sqrt((double)na))
        return d;
    return dim;
}

/* The dimension the estimate at rank extrapolates by: 0 where the
 * sample's own value serves (ranks it holds many of). */
static double sample_dim_at(const sweep_sample *smp, double rank)
{
    return rank < (double)sample_anchor(smp) ? sweep_sample_dim(smp) : 0;
}

/* The d2 the target's rank is estimated at: the sample's own value, or
 * extrapolated from the anchor by dim (sample_dim_at's). */
static double sample_d2_est(const sweep_sample *smp, double rank, double dim)
{
    if (!(dim > 0))
        return sample_d2_at(smp, rank);
    const size_t na = sample_anchor(smp);
    const double r = rank > 0 ? rank : 0.5;
    return smp->d2[na - 1] * pow(r / (double)na, 2.0 / dim);
}

double sweep_sample_eps(const sweep_sample *smp, double target)
{
    const double k = sample_rank(smp, target);
    return sqrt(sample_d2_est(smp, k, sample_dim_at(smp, k)));
}

void sweep_curve_range(const sweep_sample *smp, double *lo, double *hi)
{
    double top = (double)(smp->n - 1) / 2;
    if (top > 1000)
        top = 1000;
    *lo = 0.8 * sweep_sample_eps(smp, 0.01);
    *hi = 1.25 * sweep_sample_eps(smp, top);
    if (*hi > sqrt(smp->d2_max))
        *hi = sqrt(smp->d2_max);
    if (!(*hi > *lo))
        *hi = *lo > 0 ? 2 * *lo : 1;
}

/* How an engine's squared distances are resolved: an integer grid when the
 * data allows (then one bin per integer proves a single distance), else
 * doubles, or floats for FP32 engines. */
typedef struct resolution {
    int grid;
    int f32;    /* the engine compares d2 in FP32: edges are snapped to floats */
    double top; /* bounds every d2 the engine computes (>= smp->d2_max) */
} resolution;

/* From the engine row alone: integer coordinates give integer d2, computed
 * exactly when the input format holds every coordinate (|x| <= 2^in_bits)
 * and every partial sum (norms and dot products included, at most
 * 4 d absmax^2) stays below 2^24 for FP32 distances, 2^50 for FP64 ones
 * (a margin under 2^53). */
static resolution engine_resolution(const engine *e, const sweep_sample *smp)
{
    resolution r = {0, e->dist == ENGINE_DIST_FP32, smp->d2_max};
    int in_bits = e->in_bits > 0 ? e->in_bits : 53;
    r.grid =
        smp->ints && smp->absmax <= ldexp(1.0, in_bits) && smp->sum_max < (r.f32 ? 0x1p24 : 0x1p50);
    /* The engine's d2 can exceed the box: inputs rounded with u = 2^-in_bits
     * move each point by r <= 2u sqrt(N) (N = norm2max), so
     * (D + r)^2 <= D^2 (1 + 2u) + N (2u + 4u^2); the norm expansion's
     * rounding adds at most (2d + 2) 2^-23 (S + D_h^2) <= (2d + 2) 2^-20 N
     * in FP32 (2^-50 in FP64). d2_max allows 5% of the box and N 2^-8;
     * the rest is added here. */
    double m = 3 * ldexp(1.0, -in_bits) + (2.0 * (double)smp->d + 2) * (r.f32 ? 0x1p-20 : 0x1p-50);
    if (m > 0x1p-8)
        r.top += smp->norm2max * (m - 0x1p-8);
    return r;
}

/* An edge where the engine can represent it: a half-integer on the grid,
 * a float for FP32 comparisons. */
static double snap(double v, const resolution *res)
{
    if (res->grid)
        return floor(v) + 0.5;
    if (res->f32)
        return (double)(float)v;
    return v;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Whether (a, b] can hold only one squared distance as the engine
 * computes it: one integer on the grid, else one representable value. */
static int one_value(double a, double b, const resolution *res)
{
    if (res->grid)
        return floor(b) - floor(a) <= 1;
    if (res->f32)
        return nextafterf((float)a, INFINITY) >= (float)b;
    return nextafter(a, INFINITY) >= b;
}

/* Edges over [lo, hi] (both kept): about nb/2 equal-count edges from the
 * sample values in the range and nb/2 spaced ones (even in ε when the range
 * starts at 0, geometric for wide ranges, else even in d2). On an integer
 * grid edges sit at half-integers. Returns the edge count (>= 2). */
static size_t build_edges(const sweep_sample *smp, double lo, double hi, size_t nb,
                          const resolution *res, double **out)
{
    size_t cap = 2 * nb + 8, ne = 0;
    double *e = xmalloc(cap * sizeof *e);
    e[ne++] = lo;
    e[ne++] = hi;
    size_t half = nb / 2 > 1 ? nb / 2 : 1;

    size_t i0 = 0, i1 = smp->nval;
    while (i0 < smp->nval && smp->d2[i0] <= lo)
        i0++;
    while (i1 > i0 && smp->d2[i1 - 1] >= hi)
        i1--;
    if (i1 > i0 + 1) {
        size_t span = i1 - 1 - i0;
        size_t ns = span < half ? span : half;
        /* Between two distinct sample values, never on a distance. */
        for (size_t t = 0; t < ns; t++) {
            size_t r = i0 + (size_t)((double)t * (double)span / (double)ns);
            while (r + 1 < i1 && smp->d2[r + 1] == smp->d2[r])
                r++;
            if (r + 1 < i1)
                e[ne++] = 0.5 * (smp->d2[r] + smp->d2[r + 1]);
        }
    }
    for (size_t t = 1; t < half; t++) {
        double f = (double)t / (double)half, v;
        if (lo <= 0) {
            double s = sqrt(hi) * f;
            v = s * s;
        } else if (hi > 4 * lo) {
            v = lo * pow(hi / lo, f);
        } else {
            v = lo + (hi - lo) * f;
        }
        e[ne++] = v;
    }
    for (size_t k = 2; k < ne; k++)
        e[k] = snap(e[k], res);
    qsort(e, ne, sizeof *e, cmp_double);
    size_t w = 0;
    for (size_t k = 0; k < ne; k++) {
        if (e[k] < lo || e[k] > hi)
            continue;
        if (w > 0 && e[k] == e[w - 1])
            continue;
        e[w++] = e[k];
    }
    *out = e;
    return w;
}

/* Refining edges inside (a, b]: one per integer when the grid allows, else
 * nb even sub-bins plus a one-value bin (prev(v), v] (doubles, or floats)
 * around each of the first sample distances v inside: a tie at v is then
 * proven in this pass instead of after several narrowing ones. */
static size_t refine_edges(const sweep_sample *smp, double a, double b, size_t nb,
                           const resolution *res, double **out)
{
    if (nb > SWEEP_MAX_BINS - 2 * 64 - 2)
        nb = SWEEP_MAX_BINS - 2 * 64 - 2;
    if (!res->grid) {
        size_t cap = nb + 1 + 2 * 64 + 2, ne = 0, ties = 0;
        double *e = xmalloc(cap * sizeof *e);
        e[ne++] = a;
        e[ne++] = b;
        for (size_t t = 1; t < nb; t++)
            e[ne++] = snap(a + (b - a) * (double)t / (double)nb, res);
        size_t i = 0;
        while (i < smp->nval && smp->d2[i] <= a)
            i++;
        for (; i < smp->nval && smp->d2[i] <= b && ties < 64; i++) {
            if (i > 0 && smp->d2[i] == smp->d2[i - 1])
                continue;
            double v = smp->d2[i], pv = nextafter(v, 0);
            if (res->f32) {
                v = (double)(float)v;
                pv = (double)nextafterf((float)v, 0);
            }
            if (pv > a)
                e[ne++] = pv;
            e[ne++] = v;
            ties++;
        }
        qsort(e, ne, sizeof *e, cmp_double);
        size_t w = 0;
        for (size_t k = 0; k < ne; k++)
            if (e[k] >= a && e[k] <= b && (w == 0 || e[k] > e[w - 1]))
                e[w++] = e[k];
        *out = e;
        return w;
    }
    if (res->grid && floor(b) - floor(a) < SWEEP_MAX_BINS) {
        size_t k = (size_t)(floor(b) - floor(a));
        double *e = xmalloc((k + 2) * sizeof *e);
        size_t ne = 0;
        e[ne++] = a;
        for (double v = floor(a) + 1.5; v < b; v += 1)
            e[ne++] = v;
        e[ne++] = b;
        *out = e;
        return ne;
    }
    double *e = xmalloc((nb + 1) * sizeof *e);
    size_t ne = 0;
    e[ne++] = a;
    for (size_t t = 1; t < nb; t++) {
        double v = snap(a + (b - a) * (double)t / (double)nb, res);
        if (v > e[ne - 1] && v < b)
            e[ne++] = v;
    }
    e[ne++] = b;
    *out = e;
    return ne;
}

/* A join of every row of ds at eps with the engine options and callbacks
 * of o; def receives the default options when o names none. */
static void spec_all(join_spec *spec, const dataset *ds, double eps, join_mode mode,
                     const sweep_opts *o, engine_opts *def)
{
    memset(spec, 0, sizeof *spec);
    if (!o->eopt)
        engine_opts_default(def);
    spec->ds = ds;
    spec->eps = eps;
    spec->q0 = 0;
    spec->q1 = ds->n;
    spec->mode = mode;
    spec->opts = o->eopt ? o->eopt : def;
    spec->cancel = o->cancel;
    spec->progress = o->progress;
    spec->progress_ctx = o->progress_ctx;
}

/* One histogram pass of o->eng: cum[k] = pairs with d2 <= edges[k]. */
static int hist_pass(const dataset *ds, const sweep_opts *o, const double *edges, size_t ne,
                     uint64_t *cum, double *seconds)
{
    size_t nb = ne - 1;
    uint64_t *hist = xcalloc(nb, sizeof *hist);
    uint64_t below = 0;
    engine_opts def;
    join_spec spec;
    spec_all(&spec, ds, sqrt(edges[nb]), JOIN_HIST, o, &def);
    spec.hist_edges = edges;
    spec.hist_nbins = nb;
    spec.hist = hist;
    spec.hist_below = &below;
    join_result res;
    double t0 = engine_now();
    int rc = engine_run(o->eng, &spec, &res);
    *seconds = engine_now() - t0;
    if (rc == 0) {
        cum[0] = below;
        for (size_t b = 0; b < nb; b++)
            cum[b + 1] = cum[b] + hist[b];
    }
    free(hist);
    return rc;
}

/* The pilot (large n): when the sample holds only a few values at or
 * below the target's rank (2^21 values over n^2 pairs: at n = 3.7e7 and
 * S = 64, about 4), its bracket spans from 0 to some 15 times the target's
 * pairs, and a pass through an index costs what its top edge holds (the
 * 10^7 x 3 sweep). The pilot runs the wide bracket's
 * histogram for PILOT_SLICES slices of PILOT_ROWS query rows spread over
 * the rows, and scales their counts by n over the rows: the target's
 * pairs within a few percent on rows in no particular order, a stratified
 * guess on ordered ones. The first full pass then spans a factor
 * PILOT_SPAN of pairs each way of the target; a miss widens as before.
 * A slice costs a run, and on exact's grid path a run of other query rows
 * builds its index again (kept by the rows it queries): at 3.7e7 x 3 a
 * slice costs about a fifth of a full pass. So four slices of 8192 rows,
 * the same 32768 rows as eight of 4096 (eight make the pilot cost nearly
 * two full passes). */
#define PILOT_MIN_N ((size_t)1 << 22)
#define PILOT_MAX_RANK 40.0 /* the sample's rank of the target below this */
#define PILOT_SLICES 4
#define PILOT_ROWS 8192
#define PILOT_SPAN 2.5

/* The pilot's estimate of the full pass's cum over edges (est[ne]). */
static int pilot_pass(const dataset *ds, const sweep_opts *o, const double *edges, size_t ne,
                      double *est, double *seconds)
{
    const size_t nb = ne - 1, n = ds->n;
    uint64_t *hist = xcalloc(nb, sizeof *hist);
    double rows = 0;
    *seconds = 0;
    for (size_t e = 0; e < ne; e++)
        est[e] = 0;
    int rc = 0;
    for (size_t t = 0; t < PILOT_SLICES && rc == 0; t++) {
        uint64_t below = 0;
        engine_opts def;
        join_spec spec;
        spec_all(&spec, ds, sqrt(edges[nb]), JOIN_HIST, o, &def);
        spec.q0 = (size_t)((double)t * (double)n / PILOT_SLICES);
        spec.q1 = spec.q0 + PILOT_ROWS < n ? spec.q0 + PILOT_ROWS : n;
        spec.hist_edges = edges;
        spec.hist_nbins = nb;
        spec.hist = hist;
        spec.hist_below = &below;
        spec.progress = NULL;
        memset(hist, 0, nb * sizeof *hist);
        join_result res;
        double t0 = engine_now();
        rc = engine_run(o->eng, &spec, &res);
        *seconds += engine_now() - t0;
        if (rc)
            break;
        double c = (double)below;
        est[0] += c;
        for (size_t b = 0; b < nb; b++) {
            c += (double)hist[b];
            est[b + 1] += c;
        }
        rows += (double)(spec.q1 - spec.q0);
    }
    for (size_t e = 0; e < ne && rows > 0; e++)
        est[e] *= (double)n / rows;
    free(hist);
    return rc;
}

static double sel_of(uint64_t pairs, size_t n)
{
    return engine_selectivity(pairs, n);
}

/* The largest ε with ε*ε <= v (as engines square ε), so a COUNT run at ε
 * counts exactly the pairs the histogram counted at edge v. */
static double eps_of(double v)
{
    if (!(v > 0))
        return 0;
    double e = sqrt(v);
    while (e > 0 && e * e > v)
        e = nextafter(e, 0);
    while (nextafter(e, INFINITY) * nextafter(e, INFINITY) <= v)
        e = nextafter(e, INFINITY);
    return e;
}

/* ε for a count known at edge k: the middle of the bin above when that bin
 * is empty (no distance near the edge, so rounding of ε² cannot move a
 * pair across), else the edge itself. */
static double eps_at(const double *edges, const uint64_t *cum, size_t ne, size_t k,
                     const resolution *res)
{
    if (k + 1 < ne && cum[k + 1] == cum[k]) {
        /* any value in [edges[k], edges[k+1]] counts the same */
        return eps_of(snap(0.5 * (edges[k] + edges[k + 1]), res));
    }
    return eps_of(edges[k]);
}

typedef struct search {
    const dataset *ds;
    const sweep_opts *o;
    sweep_result *r;
    double pstar, plo, phi;
} search;

/* Check the request and set up the search for target: r cleared, the pair
 * count aimed at (self-pairs included) and the window tol around it. */
static int search_init(search *s, const dataset *ds, double target, const sweep_opts *o,
                       sweep_result *r)
{
    memset(r, 0, sizeof *r);
    r->target = target;
    int rc = sweep_validate(ds, target);
    if (rc)
        return rc;
    if (!o->eng)
        return err_set(TCJ_EINVAL, "sweep: no engine given");
    double n = (double)ds->n;
    double tol = o->tol > 0 ? o->tol : SWEEP_TOL_DEFAULT;
    *s = (search){ds, o, r, 0, 0, 0};
    s->pstar = n + target * n;
    s->plo = s->pstar - tol * target * n;
    s->phi = s->pstar + tol * target * n;
    return 0;
}

static int emit_step(search *s, const char *method, double eps, uint64_t pairs, double seconds,
                     int pass)
{
    sweep_step st;
    st.step = s->r->steps++;
    st.method = method;
    st.eps = eps;
    st.pairs = pairs;
    st.selectivity = sel_of(pairs, s->ds->n);
    st.seconds = seconds;
    st.pass = pass;
    if (s->o->on_step)
        return s->o->on_step(s->o->step_ctx, &st);
    return 0;
}

static double dist_to(double pairs, double pstar)
{
    return fabs(pairs - pstar);
}

int sweep_solve(const dataset *ds, const sweep_sample *smp, double target, const sweep_opts *o,
                sweep_result *r)
{
    search s;
    int rc = search_init(&s, ds, target, o, r);
    if (rc)
        return rc;
    if (!smp || smp->n != ds->n || !smp->d2)
        return err_set(TCJ_EINVAL, "sweep: the sample is not of this dataset");
    double t0 = engine_now();
    size_t n = ds->n;
    int max_passes = o->max_passes > 0 ? o->max_passes : SWEEP_MAX_PASSES_DEFAULT;
    size_t nb1 = o->bins >= 4 && o->bins <= SWEEP_MAX_BINS - 8 ? o->bins : 1024;
    size_t nbr = o->refine_bins >= 4 ? o->refine_bins : 2048;
    resolution res = engine_resolution(o->eng, smp);

    /* The estimate and a bracket four times wider in rank each way: the
     * sample's own ranks, or where the estimate extrapolates (few values
     * at the target's rank), twice the pairs each way by D (the estimate
     * is within a few percent where D is the data's d). */
    double k = sample_rank(smp, target);
    const double dim = sample_dim_at(smp, k), est2 = sample_d2_est(smp, k, dim);
    r->est_eps = sqrt(est2);
    double rlo = floor(k / 4 - 10), rhi = ceil(4 * k + 40);
    double lo = 0, hi;
    if (dim > 0) {
        lo = est2 * pow(0.5, 2.0 / dim);
        hi = est2 * pow(2.0, 2.0 / dim);
        if (hi > res.top)
            hi = res.top;
    } else {
        if (rlo >= 1 && smp->nval > 1)
            lo = 0.5 * (smp->d2[(size_t)rlo - 1] + smp->d2[(size_t)rlo]);
        if (rhi >= (double)smp->nval)
            hi = res.top;
        else
            hi = 0.5 * (smp->d2[(size_t)rhi - 1] + smp->d2[(size_t)rhi]);
    }
    if (res.grid && lo > 0)
        lo = floor(lo) + 0.5;
    if (res.grid)
        hi = floor(hi) + 0.5;
    if (!(hi > lo))
        hi = res.top;
    rc = emit_step(&s, "sample", r->est_eps, (uint64_t)llround(s.pstar), smp->seconds, 0);
    if (rc)
        return rc;

    double *edges = NULL;
    size_t ne = build_edges(smp, lo, hi, nb1, &res, &edges);
    const size_t pilot_n = o->pilot_min_n ? o->pilot_min_n : PILOT_MIN_N;
    /* Where D is the data's own d the estimate already places the
     * target's pairs; the pilot would only confirm it. */
    const int placed = dim > 0 && dim == (double)smp->d;
    if (n >= pilot_n && k < PILOT_MAX_RANK && ne > 2 && !placed) {
        /* The first full pass's bracket from the pilot: the last edge
         * under the target's pairs over PILOT_SPAN, the first over it
         * times PILOT_SPAN (the sample's bounds where none is). */
        double *est = xmalloc(ne * sizeof *est), secs = 0;
        rc = pilot_pass(ds, o, edges, ne, est, &secs);
        if (rc) {
            free(est);
            free(edges);
            return rc;
        }
        double plo = lo, phi = hi;
        for (size_t e = 0; e < ne; e++) {
            if (est[e] <= s.pstar / PILOT_SPAN)
                plo = edges[e];
            if (est[e] >= s.pstar * PILOT_SPAN) {
                phi = edges[e];
                break;
            }
        }
        free(est);
        rc = emit_step(&s, "pilot", sqrt(phi), (uint64_t)llround(s.pstar), secs, 0);
        if (rc) {
            free(edges);
            return rc;
        }
        if (phi > plo && (plo > lo || phi < hi)) {
            free(edges);
            lo = plo;
            hi = phi;
            ne = build_edges(smp, lo, hi, nb1, &res, &edges);
        }
    }
    const char *method = "hist";
    int have_best = 0;
    double best_d = 0;
    while (1) {
        if (r->passes >= max_passes) {
            r->status = SWEEP_UNRESOLVED;
            break;
        }
        uint64_t *cum = xmalloc(ne * sizeof *cum);
        double secs = 0;
        rc = hist_pass(ds, o, edges, ne, cum, &secs);
        if (rc) {
            free(cum);
            break;
        }
        r->passes++;
        /* The edge nearest the target, and the nearest inside the window. */
        size_t near = 0, inwin = ne;
        for (size_t e = 0; e < ne; e++) {
            double dd = dist_to((double)cum[e], s.pstar);
            if (dd < dist_to((double)cum[near], s.pstar))
                near = e;
            if ((double)cum[e] >= s.plo && (double)cum[e] <= s.phi &&
                (inwin == ne || dd < dist_to((double)cum[inwin], s.pstar)))
                inwin = e;
        }
        if (!have_best || dist_to((double)cum[near], s.pstar) < best_d) {
            have_best = 1;
            best_d = dist_to((double)cum[near], s.pstar);
            r->eps = eps_at(edges, cum, ne, near, &res);
            r->pairs = cum[near];
        }
        rc = emit_step(&s, method, eps_at(edges, cum, ne, near, &res), cum[near], secs, 1);
        if (rc) {
            free(cum);
            break;
        }
        double *next = NULL;
        size_t nne = 0;
        if (inwin < ne) {
            r->status = SWEEP_OK;
            r->eps = eps_at(edges, cum, ne, inwin, &res);
            r->pairs = cum[inwin];
            free(cum);
            break;
        }
        int zero_low = edges[0] <= 0 || (res.grid && edges[0] < 1);
        if ((double)cum[0] > s.phi && zero_low) {
            /* Coincident points alone exceed the target: no ε > 0 gets
             * below their count. */
            r->status = SWEEP_UNREACHABLE;
            r->have_above = 1;
            size_t e = 0;
            while (e + 1 < ne && cum[e + 1] == cum[0])
                e++;
            r->above_eps = e > 0 ? eps_of(snap(0.5 * edges[e], &res)) : 0;
            r->above_s = sel_of(cum[0], n);
            r->eps = r->above_eps;
            r->pairs = cum[0];
            free(cum);
            break;
        }
        if ((double)cum[0] > s.phi) {
            nne = build_edges(smp, 0, edges[0], nb1, &res, &next);
            method = "widen";
        } else if ((double)cum[ne - 1] < s.plo) {
            if (edges[ne - 1] >= res.top) {
                rc = err_set(TCJ_EINVAL,
                             "the engine counts %llu pairs at the largest distance bound "
                             "(eps %g), short of selectivity %g",
                             (unsigned long long)cum[ne - 1], sqrt(res.top), target);
                free(cum);
                break;
            }
            /* Large n: a few times the top edge, not the box (a pass
             * through an index costs its top edge's pairs). */
            double top = res.top;
            if (n >= pilot_n && 4 * edges[ne - 1] < top)
                top = 4 * edges[ne - 1];
            nne = build_edges(smp, edges[ne - 1], top, nb1, &res, &next);
            method = "widen";
        } else {
            size_t b = 0;
            while (b + 1 < ne && !((double)cum[b] < s.plo && (double)cum[b + 1] > s.phi))
                b++;
            double a = edges[b], z = edges[b + 1];
            r->have_below = 1;
            r->below_eps = eps_at(edges, cum, ne, b, &res);
            r->below_s = sel_of(cum[b], n);
            r->have_above = 1;
            r->above_eps = eps_of(z);
            r->above_s = sel_of(cum[b + 1], n);
            int single = one_value(a, z, &res);
            if (single) {
                r->status = SWEEP_UNREACHABLE;
                int up = dist_to((double)cum[b + 1], s.pstar) < dist_to((double)cum[b], s.pstar);
                r->eps = up ? r->above_eps : r->below_eps;
                r->pairs = up ? cum[b + 1] : cum[b];
                free(cum);
                break;
            }
            nne = refine_edges(smp, a, z, nbr, &res, &next);
            method = "refine";
        }
        free(cum);
        free(edges);
        edges = next;
        ne = nne;
    }
    free(edges);
    if (rc)
        return rc;
    r->selectivity = sel_of(r->pairs, n);
    r->seconds = engine_now() - t0;
    r->sample_seconds = smp->seconds;
    return 0;
}

int sweep_bisect(const dataset *ds, const sweep_sample *smp, double target, const sweep_opts *o,
                 sweep_result *r)
{
    search s;
    int rc = search_init(&s, ds, target, o, r);
    if (rc)
        return rc;
    double t0 = engine_now();
    size_t n = ds->n;
    double lo = 0, hi = sqrt(engine_resolution(o->eng, smp).top);
    double best_d = -1;
    r->status = SWEEP_UNRESOLVED;
    for (int step = 0; step < 200; step++) {
        double mid = 0.5 * (lo + hi);
        if (!(mid > lo && mid < hi)) {
            r->status = SWEEP_UNREACHABLE;
            break;
        }
        engine_opts def;
        join_spec spec;
        spec_all(&spec, ds, mid, JOIN_COUNT, o, &def);
        join_result res;
        double ts = engine_now();
        rc = engine_run(o->eng, &spec, &res);
        if (rc)
            return rc;
        r->passes++;
        double p = (double)res.pairs;
        rc = emit_step(&s, "count", mid, res.pairs, engine_now() - ts, 1);
        if (rc)
            return rc;
        if (best_d < 0 || dist_to(p, s.pstar) < best_d) {
            best_d = dist_to(p, s.pstar);
            r->eps = mid;
            r->pairs = res.pairs;
        }
        if (p >= s.plo && p <= s.phi) {
            r->status = SWEEP_OK;
            r->eps = mid;
            r->pairs = res.pairs;
            break;
        }
        if (p < s.pstar) {
            lo = mid;
            r->have_below = 1;
            r->below_eps = mid;
            r->below_s = sel_of(res.pairs, n);
        } else {
            hi = mid;
            r->have_above = 1;
            r->above_eps = mid;
            r->above_s = sel_of(res.pairs, n);
        }
    }
    r->selectivity = sel_of(r->pairs, n);
    r->seconds = engine_now() - t0;
    return 0;
}

int sweep_curve(const dataset *ds, const engine *e, const engine_opts *eopt, double lo, double hi,
                size_t nbins, double *eps, double *sel, uint64_t *pairs, double *seconds,
                const volatile int *cancel)
{
    if (!ds || ds->n == 0 || !ds->v)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (!(lo >= 0) || !(hi > lo) || !isfinite(hi))
        return err_set(TCJ_EINVAL, "curve range must satisfy 0 <= LO < HI (got %g %g)", lo, hi);
    if (nbins < 1)
        return err_set(TCJ_EINVAL, "curve needs at least 1 bin");
    size_t ne = nbins + 1;
    double *edges = xmalloc(ne * sizeof *edges);
    for (size_t k = 0; k < ne; k++) {
        eps[k] = lo + (hi - lo) * (double)k / (double)nbins;
        edges[k] = eps[k] * eps[k];
    }
    eps[nbins] = hi;
    edges[nbins] = hi * hi;
    uint64_t *cum = xmalloc(ne * sizeof *cum);
    sweep_opts o = {.eng = e, .eopt = eopt, .cancel = cancel};
    int rc = hist_pass(ds, &o, edges, ne, cum, seconds);
    if (rc == 0)
        for (size_t k = 0; k < ne; k++) {
            sel[k] = sel_of(cum[k], ds->n);
            if (pairs)
                pairs[k] = cum[k];
        }
    free(cum);
    free(edges);
    return rc;
}
