/* Plateaus of a DBSCAN curve and the eps `dbscan curve use` picks
 * (src/cluster/curve_pick.h). Weighing noise matters: at small eps a few exact
 * duplicates make clusters of their own while nearly every point is noise,
 * and the widest plateau with two or more clusters lies there on
 * letter.csv at minPts 10 ([0, 1): 5 clusters, 99.6% noise), so the
 * ranges weighed start where noise falls under half the points. */
#include "curve_pick.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kdist.h"
#include "mem.h"
#include "sort_f64.h"

static size_t noise_at(const dbscan_curve *c, double eps)
{
    size_t z;
    dbscan_curve_at(c, eps, NULL, NULL, &z, NULL);
    return z;
}

static int cmp_plateau(const void *x, const void *y)
{
    const dbscan_plateau *a = x, *b = y;
    double wa = a->hi - a->lo, wb = b->hi - b->lo;
    if (wa != wb)
        return wa < wb ? 1 : -1;
    return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The eps at which the count can change: where a core distance or a
 * forest weight is first reached (the smallest eps with eps*eps >= t),
 * sorted; *nt gets the count. Caller frees; NULL with the line set. */
static double *thresholds(const dbscan_curve *c, size_t *nt)
{
    double *t = mem_alloc("dbscan curve", "its plateaus", c->n + c->nedge + 1, sizeof *t, 0);
    if (!t)
        return NULL;
    size_t m = 0;
    for (size_t k = 0; k < c->n && c->core2[k] <= c->max2; k++)
        t[m++] = kdist_eps_for(c->core2[k]);
    for (size_t k = 0; k < c->nedge; k++)
        t[m++] = kdist_eps_for(c->edge2[k]);
    sort_f64(t, m);
    *nt = m;
    return t;
}

/* Every plateau, in eps order, with its noise; *m gets the count. Caller
 * frees; NULL with the line set. */
static dbscan_plateau *all_plateaus(const dbscan_curve *c, size_t *m)
{
    size_t nt;
    double *t = thresholds(c, &nt);
    if (!t)
        return NULL;
    dbscan_plateau *p = mem_alloc("dbscan curve", "its plateaus", nt + 1, sizeof *p, 0);
    if (!p) {
        free(t);
        return NULL;
    }
    size_t np = 0;
    for (size_t k = 0; k < nt; k++) {
        if (k + 1 < nt && t[k + 1] == t[k])
            continue;
        double lo = t[k], hi = k + 1 < nt ? t[k + 1] : c->max;
        if (lo > c->max)
            break;
        size_t cl;
        dbscan_curve_at(c, lo, &cl, NULL, NULL, NULL);
        if (np && p[np - 1].clusters == cl && p[np - 1].hi == lo) {
            p[np - 1].hi = hi;
            continue;
        }
        p[np++] = (dbscan_plateau){.lo = lo, .hi = hi, .clusters = cl};
    }
    free(t);
    for (size_t k = 0; k < np; k++) {
        p[k].noise_lo = noise_at(c, p[k].lo);
        /* the largest eps of [lo, hi): hi itself only for the last (max) */
        int last = k + 1 == np && p[k].hi >= c->max;
        p[k].noise_hi = noise_at(c, last || !(p[k].hi > p[k].lo) ? p[k].hi : nextafter(p[k].hi, 0));
    }
    *m = np;
    return p;
}

int dbscan_curve_plateaus(const dbscan_curve *c, dbscan_plateau *out, size_t cap, size_t *count)
{
    size_t np, m = 0;
    *count = 0;
    dbscan_plateau *p = all_plateaus(c, &np);
    if (!p)
        return TCJ_ENOMEM;
    for (size_t k = 0; k < np; k++)
        if (p[k].clusters >= 1)
            p[m++] = p[k];
    qsort(p, m, sizeof *p, cmp_plateau);
    size_t r = m < cap ? m : cap;
    memcpy(out, p, r * sizeof *p);
    free(p);
    *count = r;
    return 0;
}

/* The smallest eps at which fewer than half the points are noise: noise
 * at eps is #{r_i > eps^2}, so more than n/2 reachabilities must be
 * reached; -1 when none up to max is. */
static double under_half(const dbscan_curve *c)
{
    if (c->n == 0)
        return -1;
    double v = c->reach2[c->n / 2];
    return v <= c->max2 ? kdist_eps_for(v) : -1;
}

/* The widest part from half on of a plateau with at least need clusters
 * (exactly one when need is 1); 0 when there is none. */
static int widest(const dbscan_curve *c, const dbscan_plateau *p, size_t np, size_t need,
                  double half, curve_pick *out)
{
    int found = 0;
    double best = -1;
    for (size_t k = 0; k < np; k++) {
        if (need == 1 ? p[k].clusters != 1 : p[k].clusters < need)
            continue;
        double lo = p[k].lo > half ? p[k].lo : half, hi = p[k].hi;
        int last = k + 1 == np && hi >= c->max;
        if (lo > hi || (lo == hi && !last) || hi - lo <= best)
            continue;
        best = hi - lo;
        out->lo = lo;
        out->hi = hi;
        out->plateau = p[k];
        found = 1;
    }
    if (found) {
        double e = out->lo + (out->hi - out->lo) / 2;
        /* the midpoint of two neighbouring doubles may round up to hi,
         * where the count changes */
        out->eps = e < out->hi || out->hi >= c->max ? e : out->lo;
    }
    return found;
}

int dbscan_curve_pick(const dbscan_curve *c, curve_pick *out)
{
    memset(out, 0, sizeof *out);
    size_t np;
    dbscan_plateau *p = all_plateaus(c, &np);
    if (!p)
        return TCJ_ENOMEM;
    out->half = under_half(c);
    int any = 0;
    for (size_t k = 0; k < np && !any; k++)
        any = p[k].clusters >= 1;
    if (!any)
        out->why = CURVE_PICK_EMPTY;
    else if (out->half < 0)
        out->why = CURVE_PICK_NOISY;
    else if (widest(c, p, np, 2, out->half, out))
        out->why = CURVE_PICK_CLUSTERS;
    else if (widest(c, p, np, 1, out->half, out))
        out->why = CURVE_PICK_ONE;
    else
        out->why = CURVE_PICK_NOISY;
    free(p);
    if (out->why == CURVE_PICK_CLUSTERS || out->why == CURVE_PICK_ONE)
        dbscan_curve_at(c, out->eps, &out->clusters, NULL, &out->noise, NULL);
    return 0;
}

void dbscan_curve_pick_text(const dbscan_curve *c, const curve_pick *p, char *buf, size_t size)
{
    double n = c->n ? (double)c->n : 1;
    size_t k = c->minpts > 1 ? c->minpts - 1 : 1;
    switch (p->why) {
    case CURVE_PICK_CLUSTERS:
        snprintf(buf, size,
                 "the middle of [%.6g, %.6g), the widest eps range with 2 or more clusters and "
                 "under half the points noise: %zu clusters, noise %.1f%%",
                 p->lo, p->hi, p->clusters, 100.0 * (double)p->noise / n);
        break;
    case CURVE_PICK_ONE:
        snprintf(buf, size,
                 "the middle of [%.6g, %.6g), the widest eps range with under half the points "
                 "noise: 1 cluster, noise %.1f%%; no eps up to %g gives 2 or more clusters "
                 "with under half noise at minpts %zu",
                 p->lo, p->hi, 100.0 * (double)p->noise / n, c->max, c->minpts);
        break;
    case CURVE_PICK_NOISY:
        snprintf(buf, size,
                 "at every eps up to %g at least half the points are noise: raise max (kdist %zu "
                 "use gives an eps with under half noise)",
                 c->max, k);
        break;
    default:
        snprintf(buf, size, "no eps up to %g gives a cluster: raise max or lower minpts", c->max);
        break;
    }
}
