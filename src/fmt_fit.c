#include "fmt_fit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "par.h"

const fmt_fit_format *fmt_fit_find(const char *name)
{
    const fmt_fit_format *f = tc_format_find(name);
    return f && fmt_fit_is_range(f) ? f : NULL;
}

/* Values are read a block at a time, widened to FP64. */
#define FIT_BLOCK 1024

/* One range's share of a fit: pass 1 the largest |v|, pass 2 the counts
 * against the (unscaled) limits. */
typedef struct fit_part {
    const dataset *ds;
    const double *center;
    const fmt_fit_format *f;
    int pass;
    double hi, lo;
    double vmax[PAR_MAX_THREADS];
    fmt_fit cnt[PAR_MAX_THREADS];
} fit_part;

static void fit_range(void *ctx, int t, size_t a, size_t b)
{
    fit_part *p = ctx;
    double buf[FIT_BLOCK], m = 0;
    fmt_fit c = {0, 0, 0, 0};
    const size_t d = p->ds->d;
    for (size_t k0 = a; k0 < b; k0 += FIT_BLOCK) {
        const size_t nb = b - k0 < FIT_BLOCK ? b - k0 : FIT_BLOCK;
        dataset_values_f64(p->ds, k0, nb, buf);
        for (size_t j = 0; j < nb; j++) {
            const double v = p->center ? buf[j] - p->center[(k0 + j) % d] : buf[j], av = fabs(v);
            if (p->pass == 1) {
                if (isfinite(v))
                    m = fmax(m, av);
                continue;
            }
            c.overflow += av > p->hi;
            c.underflow += av > 0 && av < p->lo;
            c.negative += p->f->is_unsigned && v < 0;
        }
    }
    if (p->pass == 1)
        p->vmax[t] = m;
    else
        p->cnt[t] = c;
}

static void fit_compute(const dataset *ds, const double *center, const fmt_fit_format *f,
                        fmt_fit *out)
{
    out->scale = 0;
    out->overflow = out->underflow = out->negative = 0;
    const size_t nv = ds->n * ds->d;
    static fit_part zero;
    fit_part *p = xmalloc(sizeof *p);
    *p = zero;
    p->ds = ds;
    p->center = center;
    p->f = f;
    p->pass = 1;
    int nt;
    par_for(nv, 1, fit_range, p, &nt);
    double vmax = 0;
    for (int t = 0; t < nt; t++)
        vmax = fmax(vmax, p->vmax[t]);
    if (f->scaled && vmax > 0) {
        /* the largest s with vmax 2^s <= max; from the exponents, as
         * max / vmax overflows to Inf for a subnormal vmax (its int
         * conversion was undefined, then 2^31 steps of the loops) */
        int s = ilogb(f->max) - ilogb(vmax);
        while (ldexp(vmax, s + 1) <= f->max)
            s++;
        while (ldexp(vmax, s) > f->max)
            s--;
        out->scale = s;
    }
    /* The limits unscaled (exact: powers of two), so the scan is compares. */
    p->hi = ldexp(f->max, -out->scale);
    p->lo = ldexp(f->min_sub, -out->scale);
    p->pass = 2;
    par_for(nv, 1, fit_range, p, &nt);
    for (int t = 0; t < nt; t++) {
        out->overflow += p->cnt[t].overflow;
        out->underflow += p->cnt[t].underflow;
        out->negative += p->cnt[t].negative;
    }
    free(p);
}

void fmt_fit_compute(const dataset *ds, const fmt_fit_format *f, fmt_fit *out)
{
    fit_compute(ds, NULL, f, out);
}

/* The last fits the engines asked for: a run of a scaled format asks once,
 * a comparison once per block of rows, and the precision lab and `exact`
 * (which scales data beyond FP16) take turns, so a few are kept. */
#define FIT_SLOTS 4
static pthread_mutex_t fit_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fit_slot {
    uint64_t hash;
    size_t n, d;
    const double *center;
    const fmt_fit_format *f;
    fmt_fit fit;
} fit_slot[FIT_SLOTS];
static unsigned fit_next;

void fmt_fit_engine(const dataset *ds, const double *center, const fmt_fit_format *f, fmt_fit *out)
{
    pthread_mutex_lock(&fit_mu);
    for (int k = 0; k < FIT_SLOTS; k++) {
        const struct fit_slot *e = &fit_slot[k];
        /* the rows as a set: a reordered copy's fit is its source's */
        if (ds->hash && e->f == f && e->hash == dataset_set_hash(ds) && e->n == ds->n &&
            e->d == ds->d && e->center == center) {
            *out = e->fit;
            pthread_mutex_unlock(&fit_mu);
            return;
        }
    }
    pthread_mutex_unlock(&fit_mu);
    fit_compute(ds, center, f, out);
    pthread_mutex_lock(&fit_mu);
    struct fit_slot *e = &fit_slot[fit_next++ % FIT_SLOTS];
    e->hash = dataset_set_hash(ds);
    e->n = ds->n;
    e->d = ds->d;
    e->center = center;
    e->f = f;
    e->fit = *out;
    pthread_mutex_unlock(&fit_mu);
}

int fmt_fit_int8(const dataset *ds, size_t *nonint, double *lo, double *hi)
{
    const size_t nv = ds->n * ds->d;
    *nonint = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    double buf[FIT_BLOCK];
    for (size_t k0 = 0; k0 < nv; k0 += FIT_BLOCK) {
        const size_t nb = nv - k0 < FIT_BLOCK ? nv - k0 : FIT_BLOCK;
        dataset_values_f64(ds, k0, nb, buf);
        for (size_t j = 0; j < nb; j++) {
            const double v = buf[j];
            *nonint += !(v == floor(v));
            *lo = fmin(*lo, v);
            *hi = fmax(*hi, v);
        }
    }
    if (*nonint)
        return 0;
    if (*lo >= 0 && *hi <= 255)
        return FMT_INT8_U8;
    if (*lo >= -128 && *hi <= 127)
        return FMT_INT8_S8;
    return FMT_INT8_NO;
}
