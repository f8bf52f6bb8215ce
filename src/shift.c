#include "shift.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

#include "err.h"

static pthread_mutex_t shift_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    const void *x;
    size_t n, d;
    double *mins;
} g_shift;

const double *shift_mins(const dataset *ds)
{
    if (!ds || ds->n == 0 || ds->d == 0)
        return NULL;
    const size_t n = ds->n, d = ds->d;
    pthread_mutex_lock(&shift_mu);
    if (!(g_shift.mins && g_shift.hash == ds->hash && g_shift.x == ds->v && g_shift.n == n &&
          g_shift.d == d)) {
        free(g_shift.mins);
        double *m = xmalloc(d * sizeof *m);
        for (size_t k = 0; k < d; k++)
            m[k] = INFINITY;
        double *rb = xmalloc(d * sizeof *rb);
        for (size_t i = 0; i < n; i++) {
            const double *x = dataset_row_f64(ds, i, rb);
            for (size_t k = 0; k < d; k++)
                m[k] = fmin(m[k], x[k]);
        }
        free(rb);
        g_shift.mins = m;
        g_shift.hash = ds->hash;
        g_shift.x = ds->v;
        g_shift.n = n;
        g_shift.d = d;
    }
    const double *m = g_shift.mins;
    pthread_mutex_unlock(&shift_mu);
    return m;
}

/* The last dataset found non-negative (its hash, data pointer and sizes):
 * a warm run of a large dataset does not scan it again. */
static struct {
    uint64_t hash;
    const void *x;
    size_t n, d;
} g_nonneg;

int shift_refuse_negative(const dataset *ds, const char *who, const char *fmt, const char *alt)
{
    pthread_mutex_lock(&shift_mu);
    const int known = g_nonneg.x && g_nonneg.x == ds->v && g_nonneg.hash == ds->hash &&
                      g_nonneg.n == ds->n && g_nonneg.d == ds->d;
    pthread_mutex_unlock(&shift_mu);
    if (known)
        return 0;
    const size_t nv = ds->n * ds->d;
    double buf[1024]; /* values widened a block at a time */
    for (size_t k0 = 0; k0 < nv; k0 += 1024) {
        const size_t nb = nv - k0 < 1024 ? nv - k0 : 1024;
        dataset_values_f64(ds, k0, nb, buf);
        for (size_t j = 0; j < nb; j++)
            if (!(buf[j] >= 0))
                return err_set(TCJ_EINVAL,
                               "%s: %s has a negative value (%g, row %zu, column %zu); %s holds "
                               "no sign: set shift on, or use %s",
                               who, ds->name, buf[j], (k0 + j) / ds->d, (k0 + j) % ds->d, fmt, alt);
    }
    pthread_mutex_lock(&shift_mu);
    g_nonneg.hash = ds->hash;
    g_nonneg.x = ds->v;
    g_nonneg.n = ds->n;
    g_nonneg.d = ds->d;
    pthread_mutex_unlock(&shift_mu);
    return 0;
}
