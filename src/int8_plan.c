#include "int8_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdio.h>

#include "err.h"

#define DS_NAME(ds) ((ds)->name ? (ds)->name : "the dataset")

#define DS_NAME(ds) ((ds)->name ? (ds)->name : "the dataset")

static pthread_mutex_t plan_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    const double *x;
    size_t n, d;
    int quantize, rc;
    const char *who;
    int8_plan plan;
    char msg[256];
} plan_last;

double int8_value(const int8_plan *p, double v)
{
    return p->inexact ? nearbyint(v * p->scale) : v;
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
    double lo = INFINITY, hi = -INFINITY;
    size_t bad = nv;
    for (size_t k = 0; k < nv; k++) {
        const double v = ds->x[k];
        if (!isfinite(v))
            return err_set(TCJ_EINVAL, "%s: %s has a non-finite value (row %zu, column %zu)", who,
                           DS_NAME(ds), k / ds->d, k % ds->d);
        if (bad == nv && v != floor(v))
            bad = k;
        lo = fmin(lo, v);
        hi = fmax(hi, v);
    }
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
                who, DS_NAME(ds), bad / ds->d, bad % ds->d, ds->x[bad]);
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
    if (ds->hash && plan_last.hash == ds->hash && plan_last.x == ds->x && plan_last.n == ds->n &&
        plan_last.d == ds->d && plan_last.quantize == quantize && plan_last.who == who) {
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
    plan_last.hash = ds->hash;
    plan_last.x = ds->x;
    plan_last.n = ds->n;
    plan_last.d = ds->d;
    plan_last.quantize = quantize;
    plan_last.who = who;
    plan_last.rc = rc;
    plan_last.plan = *out;
    snprintf(plan_last.msg, sizeof plan_last.msg, "%s", rc ? err_msg() : "");
    pthread_mutex_unlock(&plan_mu);
    return rc;
}
