/* Red flags and their advice (src/cluster/dbscan_advice.h). The advice leads to a
 * usable eps: `kdist K use` puts eps at the knee of the K-distance curve,
 * which lies between its median and 90th percentile (src/cluster/kdist.h), so
 * it raises an eps that leaves more than half the points noise (such an
 * eps is below the median K-distance) and lowers one that makes 95% core;
 * `dbscan curve use` then takes, below the current eps, the widest range
 * with two or more clusters and less than half the points noise
 * (src/cluster/curve_pick.h). */
#include "dbscan_advice.h"

#include <stdio.h>

#include "dbscan.h"
#include "engine.h"

const char *const dbscan_flag_names[DBSCAN_NFLAGS] = {"no-core", "all-core", "one-cluster",
                                                      "mostly-noise"};

unsigned dbscan_flags(const dbscan_result *r)
{
    unsigned f = 0;
    if (r->n == 0)
        return 0;
    if (r->core == 0)
        f |= DBSCAN_FLAG_NO_CORE;
    if (r->core * 100 >= r->n * 95 && r->n > 1)
        f |= DBSCAN_FLAG_ALL_CORE;
    if (r->ntop && r->top[0] * 2 > r->n)
        f |= DBSCAN_FLAG_ONE_CLUSTER;
    if (r->core > 0 && r->noise * 2 > r->n)
        f |= DBSCAN_FLAG_MOSTLY_NOISE;
    return f;
}

size_t dbscan_minpts_rule(size_t d)
{
    size_t m = 2 * (d < 10 ? d : 10);
    return m < 10 ? 10 : m;
}

/* ", or raise minpts to 16 (2d)" when the rule lies that way (up > 0) or
 * the other (up == 0) from minpts; "" otherwise. */
static void minpts_hint(char *buf, size_t size, size_t minpts, size_t d, int up)
{
    size_t r = dbscan_minpts_rule(d);
    buf[0] = 0;
    if (up ? r <= minpts : r >= minpts)
        return;
    const char *why = d > 10 ? "2d capped at d = 10" : 2 * d < 10 ? "2d, at least 10" : "2d";
    snprintf(buf, size, ", or %s minpts to %zu (%s)", up ? "raise" : "lower", r, why);
}

/* What raises eps toward a usable one: the knee, then the curve below it.
 * kdist takes K = minpts-1 up to KDIST_MAX_K. */
static void eps_up(char *buf, size_t size, size_t minpts)
{
    if (minpts >= 2 && minpts - 1 <= KDIST_MAX_K)
        snprintf(buf, size,
                 "kdist %zu use (eps at the knee), then dbscan curve minpts=%zu use (below "
                 "it, the widest eps range with 2+ clusters and under half noise)",
                 minpts - 1, minpts);
    else if (minpts >= 2)
        snprintf(buf, size, "a larger eps (kdist and dbscan curve take minpts up to %d)",
                 KDIST_MAX_K + 1);
    else
        snprintf(buf, size, "a larger eps");
}

/* What lowers eps toward a usable one: the curve below the current eps. */
static void eps_down(char *buf, size_t size, size_t minpts)
{
    if (minpts <= KDIST_MAX_K + 1)
        snprintf(buf, size,
                 "dbscan curve minpts=%zu use (below the current eps, the widest range "
                 "with 2+ clusters and under half noise)",
                 minpts);
    else
        snprintf(buf, size, "a smaller eps (dbscan curve takes minpts up to %d)", KDIST_MAX_K + 1);
}

void dbscan_flag_text(int k, const dbscan_result *r, size_t minpts, size_t d, char *buf,
                      size_t size)
{
    double n = r->n ? (double)r->n : 1;
    int up = k == 0 || k == 3; /* eps too small: raise it */
    char step[200], hint[64];
    if (up)
        eps_up(step, sizeof step, minpts);
    else
        eps_down(step, sizeof step, minpts);
    minpts_hint(hint, sizeof hint, minpts, d, !up);
    switch (k) {
    case 0:
        snprintf(buf, size, "no core point: every point is noise; raise eps: %s%s", step, hint);
        break;
    case 1:
        snprintf(buf, size,
                 "%.1f%% of the points are core: eps is large for minpts = %zu; lower "
                 "it: %s%s",
                 100.0 * (double)r->core / n, minpts, step, hint);
        break;
    case 2:
        snprintf(buf, size,
                 "one cluster holds %.1f%% of the points: eps may bridge clusters; "
                 "lower it: %s%s",
                 100.0 * (double)(r->ntop ? r->top[0] : 0) / n, step, hint);
        break;
    default:
        snprintf(buf, size,
                 "%.1f%% of the points are noise: eps is small for minpts = %zu; raise "
                 "it: %s%s",
                 100.0 * (double)r->noise / n, minpts, step, hint);
        break;
    }
}
