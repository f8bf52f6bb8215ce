#include "center.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"
#include "par.h"

/* The means of the last CENTER_SLOTS datasets, each found by its rows as
 * a set (dataset_set_hash): a reordered copy of the rows (a k-distance's
 * refinement, the curve's later joins) takes its source's, and a switch
 * between datasets does not take the two passes over the data again. */
#define CENTER_SLOTS 4
static pthread_mutex_t center_mu = PTHREAD_MUTEX_INITIALIZER;
static struct center_slot {
    uint64_t hash; /* the rows as a set: a reordered copy finds its source's means */
    const void *x; /* where hash is 0 (not computed), only these rows match */
    size_t n, d;
    double *means;
    center_facts f;
} g_center[CENTER_SLOTS];
static unsigned g_center_next;

/* One range of rows' share of the means: compensated column sums (each
 * range its own, combined with compensation again) and, in a second pass
 * with the means known, the largest norms and values. */
typedef struct center_part {
    const dataset *ds;
    const double *m;    /* pass 2: the means */
    double *sum, *comp; /* ranges x d */
    double *rb;         /* ranges x br x d: each range's rows widened to FP64 */
    size_t br;          /* rows widened at a time */
    center_facts f[PAR_MAX_THREADS];
} center_part;

/* Compensated (Kahan) addition of y into the sum *s with its error *c. */
static inline void kahan_add(double *s, double *c, double y)
{
    const double u = y - *c, t = *s + u;
    *c = (t - *s) - u;
    *s = t;
}

static void center_sums(void *ctx, int t, size_t a, size_t b)
{
    center_part *p = ctx;
    const size_t d = p->ds->d, br = p->br;
    double *m = p->sum + (size_t)t * d, *c = p->comp + (size_t)t * d;
    double *rb = p->rb + (size_t)t * br * d;
    /* Widened a block of rows at a time, each column summed down the
     * block by four compensated sums at once (four chains of dependent
     * adds, not one), each over a quarter of the block's rows in their
     * order (an even count: a row and its negation next to it still
     * cancel exactly), which then join the range's. A row at a time, one
     * chain through memory, this was most of the means' time at low d. */
    for (size_t i0 = a; i0 < b; i0 += br) {
        const size_t nb = b - i0 < br ? b - i0 : br, q = (nb / 4) & ~(size_t)1;
        dataset_rows_f64(p->ds, i0, nb, rb);
        for (size_t k = 0; k < d; k++) {
            double s4[4] = {0, 0, 0, 0}, c4[4] = {0, 0, 0, 0};
            for (size_t j = 0; j < q; j++)
                for (size_t l = 0; l < 4; l++)
                    kahan_add(&s4[l], &c4[l], rb[(l * q + j) * d + k]);
            for (size_t i = 4 * q; i < nb; i++)
                kahan_add(&s4[3], &c4[3], rb[i * d + k]);
            for (int l = 0; l < 4; l++) {
                kahan_add(&m[k], &c[k], s4[l]);
                kahan_add(&m[k], &c[k], -c4[l]);
            }
        }
    }
}

static double max2(double a, double b)
{
    return b > a ? b : a;
}

static void center_norms(void *ctx, int t, size_t a, size_t b)
{
    center_part *p = ctx;
    const size_t d = p->ds->d, br = p->br;
    center_facts f = {0, 0, 0, 0};
    double *rb = p->rb + (size_t)t * br * d;
    for (size_t i0 = a; i0 < b; i0 += br) {
        const size_t nb = b - i0 < br ? b - i0 : br;
        dataset_rows_f64(p->ds, i0, nb, rb);
        for (size_t i = 0; i < nb; i++) {
            const double *x = rb + i * d;
            double r = 0, cc = 0;
            for (size_t k = 0; k < d; k++) {
                const double v = x[k], w = v - p->m[k];
                r += v * v;
                cc += w * w;
                f.vmax_raw = max2(f.vmax_raw, fabs(v));
                f.vmax_centred = max2(f.vmax_centred, fabs(w));
            }
            /* b > a is false for a NaN b: it stays out, as with fmax */
            f.nmax_raw = max2(f.nmax_raw, sqrt(r));
            f.nmax_centred = max2(f.nmax_centred, sqrt(cc));
        }
    }
    p->f[t] = f;
}

const double *center_means(const dataset *ds, center_facts *facts)
{
    if (!ds || ds->n == 0 || ds->d == 0)
        return NULL;
    const size_t n = ds->n, d = ds->d;
    err_clear();
    pthread_mutex_lock(&center_mu);
    struct center_slot *sl = NULL;
    for (int k = 0; k < CENTER_SLOTS && !sl; k++)
        if (g_center[k].means && g_center[k].hash == dataset_set_hash(ds) &&
            (g_center[k].hash || g_center[k].x == ds->v) && g_center[k].n == n &&
            g_center[k].d == d)
            sl = &g_center[k];
    if (!sl) {
        sl = &g_center[g_center_next++ % CENTER_SLOTS];
        free(sl->means);
        sl->means = NULL;
        /* Means by compensated column sums: the FP64 mean of up to 1e8
         * values stays within a few ulps. Rows in parallel ranges. */
        center_part *p = xcalloc(1, sizeof *p);
        p->ds = ds;
        /* (2 + br) ranges x d + d doubles: at d = 2^28 (br 1) and 16
         * ranges that is 103 GB for a dataset of 537 MB, so it is checked
         * (src/mem.h) */
        const int nr = par_ranges(n, d);
        p->br = dataset_block_rows(ds);
        double *m = NULL;
        const char *who = ds->name ? ds->name : "dataset";
        if (mem_check(who, "the column means and their sums",
                      (uint64_t)((2 + p->br) * (size_t)nr + 1) * d, sizeof(double), 0) ||
            !(p->sum = mem_alloc(who, "column sums", (size_t)nr * d, sizeof(double), 1)) ||
            !(p->comp = mem_alloc(who, "column sums", (size_t)nr * d, sizeof(double), 1)) ||
            !(p->rb = mem_alloc(who, "row buffers", (size_t)nr * p->br * d, sizeof(double), 0)) ||
            !(m = mem_alloc(who, "column means", d, sizeof(double), 1))) {
            free(p->sum);
            free(p->comp);
            free(p->rb);
            free(p);
            pthread_mutex_unlock(&center_mu);
            return NULL;
        }
        int nt;
        par_for(n, d, center_sums, p, &nt);
        for (size_t k = 0; k < d; k++) {
            double s = 0, c = 0;
            for (int t = 0; t < nt; t++) {
                const double y = (p->sum[(size_t)t * d + k] - p->comp[(size_t)t * d + k]) - c,
                             u = s + y;
                c = (u - s) - y;
                s = u;
            }
            m[k] = s / (double)n;
        }
        p->m = m;
        par_for(n, d, center_norms, p, &nt);
        center_facts f = {0, 0, 0, 0};
        for (int t = 0; t < nt; t++) {
            f.nmax_raw = fmax(f.nmax_raw, p->f[t].nmax_raw);
            f.nmax_centred = fmax(f.nmax_centred, p->f[t].nmax_centred);
            f.vmax_raw = fmax(f.vmax_raw, p->f[t].vmax_raw);
            f.vmax_centred = fmax(f.vmax_centred, p->f[t].vmax_centred);
        }
        free(p->sum);
        free(p->comp);
        free(p->rb);
        free(p);
        sl->means = m;
        sl->hash = dataset_set_hash(ds);
        sl->x = ds->v;
        sl->n = n;
        sl->d = d;
        sl->f = f;
    }
    const double *m = sl->means;
    if (facts)
        *facts = sl->f;
    pthread_mutex_unlock(&center_mu);
    return m;
}

const double *center_pick(const dataset *ds, int setting, int exact)
{
    if (setting == CENTER_DEFAULT)
        setting = exact ? CENTER_AUTO : CENTER_OFF;
    /* local reaches here only for the exact engines (engine_run refuses
     * it for the others that centre globally; the CPU emulations that
     * centre per cell do not ask): their results do not depend on it. */
    if (setting == CENTER_LOCAL)
        setting = CENTER_AUTO;
    if (setting == CENTER_OFF)
        return NULL;
    center_facts f;
    const double *m = center_means(ds, &f);
    if (!m)
        return NULL;
    /* A column holding Inf or NaN has no finite mean: subtracting it
     * would turn the whole column into Inf and NaN. Such data stay as
     * loaded (the engines then see the one bad value, not a column). */
    for (size_t k = 0; k < ds->d; k++)
        if (!isfinite(m[k]))
            return NULL;
    if (setting == CENTER_AUTO && !(f.nmax_centred * 2 <= f.nmax_raw))
        return NULL;
    return m;
}

const char *center_name(int setting)
{
    switch (setting) {
    case CENTER_AUTO:
        return "auto";
    case CENTER_ON:
        return "on";
    case CENTER_OFF:
        return "off";
    case CENTER_LOCAL:
        return "local";
    default:
        return "default";
    }
}
