#include "center.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static pthread_mutex_t center_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    const double *x;
    size_t n, d;
    double *means;
    center_facts f;
} g_center;

const double *center_means(const dataset *ds, center_facts *facts)
{
    if (!ds || ds->n == 0 || ds->d == 0)
        return NULL;
    const size_t n = ds->n, d = ds->d;
    pthread_mutex_lock(&center_mu);
    if (!(g_center.means && g_center.hash == ds->hash && g_center.x == ds->x && g_center.n == n &&
          g_center.d == d)) {
        free(g_center.means);
        double *m = xcalloc(d, sizeof *m);
        /* Means by compensated column sums: the FP64 mean of up to 1e8
         * values stays within a few ulps. */
        double *c = xcalloc(d, sizeof *c);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 0; k < d; k++) {
                const double y = ds->x[i * d + k] - c[k], t = m[k] + y;
                c[k] = (t - m[k]) - y;
                m[k] = t;
            }
        for (size_t k = 0; k < d; k++)
            m[k] /= (double)n;
        free(c);
        center_facts f = {0, 0, 0, 0};
        for (size_t i = 0; i < n; i++) {
            double r = 0, cc = 0;
            for (size_t k = 0; k < d; k++) {
                const double v = ds->x[i * d + k], w = v - m[k];
                r += v * v;
                cc += w * w;
                f.vmax_raw = fmax(f.vmax_raw, fabs(v));
                f.vmax_centred = fmax(f.vmax_centred, fabs(w));
            }
            f.nmax_raw = fmax(f.nmax_raw, sqrt(r));
            f.nmax_centred = fmax(f.nmax_centred, sqrt(cc));
        }
        g_center.means = m;
        g_center.hash = ds->hash;
        g_center.x = ds->x;
        g_center.n = n;
        g_center.d = d;
        g_center.f = f;
    }
    const double *m = g_center.means;
    if (facts)
        *facts = g_center.f;
    pthread_mutex_unlock(&center_mu);
    return m;
}

const double *center_pick(const dataset *ds, int setting, int exact)
{
    if (setting == CENTER_DEFAULT)
        setting = exact ? CENTER_AUTO : CENTER_OFF;
    if (setting == CENTER_OFF)
        return NULL;
    center_facts f;
    const double *m = center_means(ds, &f);
    if (!m)
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
    default:
        return "default";
    }
}
