#include "int8_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "err.h"
#include "par.h"

#define DS_NAME(ds) ((ds)->name ? (ds)->name : "the dataset")

#define DS_NAME(ds) ((ds)->name ? (ds)->name : "the dataset")

static pthread_mutex_t plan_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    dataset_key key;
    const void *x;
    int quantize, rc;
    const char *who;
    int8_plan plan;
    char msg[256];
} plan_last;

double int8_value(const int8_plan *p, double v)
{
    return p->inexact ? nearbyint(v * p->scale) : v;
}

/* One range's share of the scan: its range of values, its first value
 * that is not an integer and its first non-finite one (nv: none). */
typedef struct int8_scan {
    const dataset *ds;
    double lo[PAR_MAX_THREADS], hi[PAR_MAX_THREADS];
    size_t bad[PAR_MAX_THREADS], nonfin[PAR_MAX_THREADS];
} int8_scan;

static void scan_range(void *ctx, int t, size_t a, size_t b)
{
    int8_scan *sc = ctx;
    const size_t nv = sc->ds->n * sc->ds->d;
    double lo = INFINITY, hi = -INFINITY;
    size_t bad = nv, nonfin = nv;
    double buf[1024]; /* values widened a block at a time */
    for (size_t k0 = a; k0 < b; k0 += 1024) {
        const size_t nb = b - k0 < 1024 ? b - k0 : 1024;
        dataset_values_f64(sc->ds, k0, nb, buf);
        for (size_t j = 0; j < nb; j++) {
            const size_t k = k0 + j;
            const double v = buf[j];
            if (!isfinite(v)) {
                if (nonfin == nv)
                    nonfin = k;
                continue;
            }
            if (bad == nv && v != floor(v))
                bad = k;
            lo = fmin(lo, v);
            hi = fmax(hi, v);
        }
    }
    sc->lo[t] = lo;
    sc->hi[t] = hi;
    sc->bad[t] = bad;
    sc->nonfin[t] = nonfin;
}

static int plan_compute(const dataset *ds, int quantize, const char *who, int8_plan *out)
{
    const size_t nv = ds->n * ds->d;
    out->u8 = 1;
    out->scale = 1;
    out->inexact = 0;
    if (ds->d > INT8_MAX_D)
        return err_set(TCJ_EINVAL,
                       "%s: %s has d = %zu; int8's S32 dot products are exact up to d = %d: use "
                       "exact or fp64",
                       who, DS_NAME(ds), ds->d, INT8_MAX_D);
    int8_scan *sc = xmalloc(sizeof *sc);
    sc->ds = ds;
    int nt;
    par_for(nv, 1, scan_range, sc, &nt);
    double lo = INFINITY, hi = -INFINITY;
    size_t bad = nv, nonfin = nv;
    for (int t = 0; t < nt; t++) {
        lo = fmin(lo, sc->lo[t]);
        hi = fmax(hi, sc->hi[t]);
        bad = sc->bad[t] < bad ? sc->bad[t] : bad;
        nonfin = sc->nonfin[t] < nonfin ? sc->nonfin[t] : nonfin;
    }
    free(sc);
    if (nonfin < nv)
        return err_set(TCJ_EINVAL, "%s: %s has a non-finite value (row %zu, column %zu)", who,
                       DS_NAME(ds), nonfin / ds->d, nonfin % ds->d);
    const int ints = bad == nv;
    if (ints && lo >= 0 && hi <= 255)
        return 0;
    if (ints && lo >= -128 && hi <= 127) {
        out->u8 = 0;
        return 0;
    }
    if (!quantize) {
        if (!ints)
            return err_set(
                TCJ_EINVAL,
                "%s: %s has a value that is not an integer (row %zu, column %zu: %.17g); "
                "int8 takes integers in [0, 255] or [-128, 127]: use fasted or "
                "fp8-e4m3, or set int8-scale on to quantize",
                who, DS_NAME(ds), bad / ds->d, bad % ds->d, dataset_value(ds, bad));
        return err_set(TCJ_EINVAL,
                       "%s: %s has integers in [%.17g, %.17g], beyond 8 bits; int8 takes [0, 255] "
                       "or [-128, 127]: use fasted or exact, or set int8-scale on to quantize",
                       who, DS_NAME(ds), lo, hi);
    }
    out->inexact = 1;
    out->u8 = lo >= 0;
    const double m = out->u8 ? hi : fmax(fabs(lo), fabs(hi));
    out->scale = m > 0 ? (out->u8 ? 255.0 : 127.0) / m : 1.0;
    return 0;
}

int int8_plan_for(const dataset *ds, int quantize, const char *who, int8_plan *out)
{
    pthread_mutex_lock(&plan_mu);
    if (ds->hash && dataset_key_is(&plan_last.key, ds) && plan_last.x == ds->v &&
        plan_last.quantize == quantize && plan_last.who == who) {
        *out = plan_last.plan;
        int rc = plan_last.rc;
        if (rc)
            err_set(rc, "%s", plan_last.msg);
        pthread_mutex_unlock(&plan_mu);
        return rc;
    }
    pthread_mutex_unlock(&plan_mu);
    int rc = plan_compute(ds, quantize, who, out);
    pthread_mutex_lock(&plan_mu);
    plan_last.key = dataset_key_of(ds);
    plan_last.x = ds->v;
    plan_last.quantize = quantize;
    plan_last.who = who;
    plan_last.rc = rc;
    plan_last.plan = *out;
    snprintf(plan_last.msg, sizeof plan_last.msg, "%s", rc ? err_msg() : "");
    pthread_mutex_unlock(&plan_mu);
    return rc;
}

void int8_plan_record(const int8_plan *p, join_result *res)
{
    const size_t k = strlen(res->variant);
    snprintf(res->variant + k, sizeof res->variant - k, ", %s%s", p->u8 ? "u8" : "s8",
             p->inexact ? ", quantized" : "");
    join_result_metric(res, "inexact", p->inexact, "");
    if (p->inexact)
        join_result_metric(res, "int8_scale", p->scale, "");
}
