/* Advice toward a usable eps (two or more clusters, under half the points
 * noise). Test plan:
 *   advice_*: the red flags' text for given counts, minPts and d: the 2·d
 *     rule capped (MNIST-shaped d = 784), no direction toward a minPts the
 *     rule puts at the current one, only commands that run (kdist's K at
 *     most KDIST_MAX_K, dbscan curve's minpts at most KDIST_MAX_K + 1),
 *     eps raised for the small-eps flags and lowered for the large-eps ones.
 *   pick_*: dbscan curve's pick on curves built by hand, whose counts at
 *     every eps are worked out in each case's comment from the definitions
 *     in src/cluster/dbscan_curve.h (clusters = core - forest edges, noise =
 *     reachabilities not reached).
 *   knee_*: the k-distance knee on curves whose shape is known by
 *     construction: a corner in the bulk, an outlier tail above it. */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "curve_pick.h"
#include "dbscan.h"
#include "dbscan_advice.h"
#include "engine.h"
#include "kdist.h"

/* A result of n points with the given core and noise counts and one
 * cluster of size big (0: none). */
static dbscan_result result(size_t n, size_t core, size_t noise, size_t big)
{
    dbscan_result r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.core = core;
    r.noise = noise;
    r.border = n - core - noise;
    r.clusters = big ? 1 : 0;
    r.ntop = big ? 1 : 0;
    r.top[0] = big;
    return r;
}

/* Every "kdist K" in s has 1 <= K <= KDIST_MAX_K and every "minpts=M"
 * 1 <= M <= KDIST_MAX_K + 1: commands that run. */
static int runnable(const char *s)
{
    for (const char *p = s; (p = strstr(p, "kdist ")); p++) {
        char *end;
        long k = strtol(p + 6, &end, 10);
        if (end != p + 6 && (k < 1 || k > KDIST_MAX_K))
            return 0;
    }
    for (const char *p = s; (p = strstr(p, "minpts=")); p++) {
        long m = strtol(p + 7, NULL, 10);
        if (m < 1 || m > KDIST_MAX_K + 1)
            return 0;
    }
    return 1;
}

static void flag_text(int k, const dbscan_result *r, size_t minpts, size_t d, char *t)
{
    memset(t, 'x', DBSCAN_FLAG_TEXT);
    dbscan_flag_text(k, r, minpts, d, t, DBSCAN_FLAG_TEXT);
}

TEST(advice_minpts_rule_capped)
{
    /* 2·d, at least 10, and d capped at 10 */
    CHECK_EQ_INT(dbscan_minpts_rule(2), 10);
    CHECK_EQ_INT(dbscan_minpts_rule(3), 10);
    CHECK_EQ_INT(dbscan_minpts_rule(8), 16);
    CHECK_EQ_INT(dbscan_minpts_rule(10), 20);
    CHECK_EQ_INT(dbscan_minpts_rule(16), 20);
    CHECK_EQ_INT(dbscan_minpts_rule(784), 20);
}

TEST(advice_no_contradiction)
{
    char t[DBSCAN_FLAG_TEXT];
    /* MNIST-shaped, minPts 10, most points noise: no 2·784, and no
     * "lower minpts" toward a larger number */
    dbscan_result r = result(60000, 9000, 40000, 0);
    CHECK(dbscan_flags(&r) & DBSCAN_FLAG_MOSTLY_NOISE);
    flag_text(3, &r, 10, 784, t);
    CHECK_MSG(!strstr(t, "1568") && !strstr(t, "lower minpts"), "%s", t);
    CHECK_MSG(strstr(t, "raise it") && strstr(t, "kdist 9 use"), "%s", t);
    /* LiDAR xyz at minPts 10, one cluster: the rule gives 10, no direction */
    r = result(20000, 19900, 50, 19900);
    flag_text(2, &r, 10, 3, t);
    CHECK_MSG(!strstr(t, "minpts to") && strstr(t, "lower it"), "%s", t);
    flag_text(1, &r, 10, 3, t);
    CHECK_MSG(!strstr(t, "minpts to") && strstr(t, "lower it"), "%s", t);
    /* d = 8 at minPts 16: the rule is 16, no direction either */
    flag_text(2, &r, 16, 8, t);
    CHECK_MSG(!strstr(t, "minpts to"), "%s", t);
    /* below the rule: raise it, to the capped value */
    flag_text(2, &r, 10, 784, t);
    CHECK_MSG(strstr(t, "raise minpts to 20"), "%s", t);
    /* above it with most points noise: lower it */
    r = result(20000, 100, 15000, 0);
    flag_text(3, &r, 40, 4, t);
    CHECK_MSG(strstr(t, "lower minpts to 10"), "%s", t);
}

TEST(advice_names_commands_that_run)
{
    char t[DBSCAN_FLAG_TEXT];
    size_t ms[] = {1, 2, 10, 256, 257, 258, 17898};
    dbscan_result rs[] = {result(17898, 0, 17898, 0), result(17898, 17898, 0, 17898),
                          result(17898, 17000, 100, 17800), result(17898, 10, 17000, 20)};
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++)
        for (int k = 0; k < DBSCAN_NFLAGS; k++) {
            flag_text(k, &rs[k], ms[i], 8, t);
            CHECK_MSG(memchr(t, 0, DBSCAN_FLAG_TEXT - 1), "flag %d minpts %zu: truncated", k,
                      ms[i]);
            CHECK_MSG(runnable(t), "flag %d minpts %zu: %s", k, ms[i], t);
            /* eps too small: raised; too large or bridging: lowered */
            int up = k == 0 || k == 3;
            CHECK_MSG(strstr(t, up ? "raise" : "lower") && !strstr(t, up ? "lower it" : "raise it"),
                      "flag %d minpts %zu: %s", k, ms[i], t);
        }
}

/* A curve from eps values (squared here, as the curve keeps them). */
typedef struct {
    dbscan_curve c;
    double core2[16], reach2[16], edge2[16];
} hand_curve;

static void hand(hand_curve *h, size_t n, double max, const double *core, const double *reach,
                 const double *edge, size_t nedge)
{
    memset(h, 0, sizeof *h);
    h->c.n = n;
    h->c.minpts = 4;
    h->c.max = max;
    h->c.max2 = max * max;
    for (size_t i = 0; i < n; i++) {
        h->core2[i] = core[i] * core[i];
        h->reach2[i] = reach[i] * reach[i];
    }
    for (size_t i = 0; i < nedge; i++)
        h->edge2[i] = edge[i] * edge[i];
    h->c.core2 = h->core2;
    h->c.reach2 = h->reach2;
    h->c.edge2 = h->edge2;
    h->c.nedge = nedge;
}

/* Ten points: four core from eps 1 joined by two edges at 1 (2 clusters),
 * the other six core from 5; edges at 5.5 (four) and 6 (one).
 *   [1, 5):   core 4, edges 2: 2 clusters
 *   [5, 5.5): core 10, edges 2: 8 clusters
 *   [5.5, 6): edges 6: 4 clusters
 *   [6, max]: edges 7: 3 clusters
 * Reachabilities as given: noise falls under half (< 5) where the sixth
 * is reached. */
static const double CORE[10] = {1, 1, 1, 1, 5, 5, 5, 5, 5, 5};
static const double EDGE[7] = {1, 1, 5.5, 5.5, 5.5, 5.5, 6};

TEST(pick_skips_the_noisy_plateau)
{
    /* Reached at 1 (four) and 5 (six): noise 6 of 10 over [1, 5). The
     * widest plateau with 2+ clusters is [1, 5) (width 4), all of it at
     * 60% noise; from 5 on noise is 0 and the widest is [6, 8]. */
    double reach[10] = {1, 1, 1, 1, 5, 5, 5, 5, 5, 5};
    hand_curve h;
    hand(&h, 10, 8, CORE, reach, EDGE, 7);
    curve_pick p;
    CHECK(dbscan_curve_pick(&h.c, &p) == 0);
    CHECK_EQ_INT(p.why, CURVE_PICK_CLUSTERS);
    CHECK(p.lo == 6 && p.hi == 8 && p.eps == 7);
    CHECK_EQ_INT(p.clusters, 3);
    CHECK_EQ_INT(p.noise, 0);
    CHECK(p.half == 5);
    /* the list: [1, 5) first (widest), its noise 6 at both ends */
    dbscan_plateau pl[8];
    size_t np;
    CHECK(dbscan_curve_plateaus(&h.c, pl, 8, &np) == 0);
    CHECK_EQ_INT(np, 4);
    CHECK(pl[0].lo == 1 && pl[0].hi == 5 && pl[0].clusters == 2);
    CHECK_EQ_INT(pl[0].noise_lo, 6);
    CHECK_EQ_INT(pl[0].noise_hi, 6);
    char t[320];
    dbscan_curve_pick_text(&h.c, &p, t, sizeof t);
    CHECK_MSG(strstr(t, "[6, 8)") && strstr(t, "under half the points noise") &&
                  strstr(t, "3 clusters, noise 0.0%"),
              "%s", t);
}

TEST(pick_starts_where_noise_falls_under_half)
{
    /* Reached at 1 (four), 3 (two), 5 (four): from 3 on noise is 4 < 5.
     * [1, 5) counts from 3: [3, 5), width 2, more than [6, 7.5]'s 1.5. */
    double reach[10] = {1, 1, 1, 1, 3, 3, 5, 5, 5, 5};
    hand_curve h;
    hand(&h, 10, 7.5, CORE, reach, EDGE, 7);
    curve_pick p;
    CHECK(dbscan_curve_pick(&h.c, &p) == 0);
    CHECK_EQ_INT(p.why, CURVE_PICK_CLUSTERS);
    CHECK(p.lo == 3 && p.hi == 5 && p.eps == 4);
    CHECK(p.plateau.lo == 1 && p.plateau.hi == 5);
    CHECK_EQ_INT(p.clusters, 2);
    CHECK_EQ_INT(p.noise, 4);
    dbscan_plateau pl[8];
    size_t np;
    CHECK(dbscan_curve_plateaus(&h.c, pl, 8, &np) == 0);
    CHECK(pl[0].lo == 1 && pl[0].hi == 5);
    CHECK_EQ_INT(pl[0].noise_lo, 6);
    CHECK_EQ_INT(pl[0].noise_hi, 4);
}

TEST(pick_one_cluster_noisy_and_empty)
{
    /* Four core at 1, two edges: 2 clusters on [1, 5); six more core at 5
     * joined to them by edges at 5 (seven): 1 cluster on [5, 8]. Noise 6
     * until 5, then 0: no eps has 2+ clusters with noise under half. */
    double reach[10] = {1, 1, 1, 1, 5, 5, 5, 5, 5, 5};
    double edge[9] = {1, 1, 5, 5, 5, 5, 5, 5, 5};
    hand_curve h;
    hand(&h, 10, 8, CORE, reach, edge, 9);
    curve_pick p;
    CHECK(dbscan_curve_pick(&h.c, &p) == 0);
    CHECK_EQ_INT(p.why, CURVE_PICK_ONE);
    CHECK(p.lo == 5 && p.hi == 8 && p.eps == 6.5);
    CHECK_EQ_INT(p.clusters, 1);
    /* max 4: noise 6 of 10 at every eps up to it: nothing to use */
    hand(&h, 10, 4, CORE, reach, edge, 2);
    CHECK(dbscan_curve_pick(&h.c, &p) == 0);
    CHECK_EQ_INT(p.why, CURVE_PICK_NOISY);
    CHECK(p.eps == 0);
    char t[320];
    dbscan_curve_pick_text(&h.c, &p, t, sizeof t);
    CHECK_MSG(strstr(t, "raise max") && runnable(t), "%s", t);
    /* max 0.5: no core point at all */
    hand(&h, 10, 0.5, CORE, reach, edge, 0);
    CHECK(dbscan_curve_pick(&h.c, &p) == 0);
    CHECK_EQ_INT(p.why, CURVE_PICK_EMPTY);
    CHECK(p.eps == 0);
}

/* A k-distance curve of n points: gentle to rank c (slope 1/n), steeper
 * to rank t (slope 10/n), then a tail of outliers far above. */
static void corner_curve(double *d2, size_t n, size_t c, size_t t)
{
    for (size_t r = 0; r < n; r++) {
        double v = r < c   ? 1 + (double)r / (double)n
                   : r < t ? 1 + (double)c / (double)n + 10.0 * (double)(r - c) / (double)n
                           : 100 + (double)r;
        d2[r] = v * v;
    }
}

TEST(knee_in_the_bulk_not_the_tail)
{
    /* n = 1000 (every rank a point): the corner at rank 700 is the knee;
     * Kneedle over all ranks took the step to the tail at rank 970 */
    double d2[1000];
    kdist_curve *c = malloc(sizeof *c);
    corner_curve(d2, 1000, 700, 970);
    kdist_curve_build(d2, 1000, 9, c);
    CHECK(c->have_knee);
    CHECK_MSG(c->rank[c->knee_point] == 700, "knee at rank %zu", c->rank[c->knee_point]);
    CHECK(strcmp(c->knee_method, "kneedle") == 0);
    /* a corner above the 90th percentile is out of reach: the knee stays
     * between the median and p90 (at least half the points core, at least
     * a tenth not) */
    corner_curve(d2, 1000, 950, 990);
    kdist_curve_build(d2, 1000, 9, c);
    if (c->have_knee) {
        size_t r = c->rank[c->knee_point];
        CHECK_MSG(2 * r >= 999 && 10 * r <= 9 * 999, "knee at rank %zu", r);
    }
    free(c);
}
