/* HDBSCAN* (src/cluster/hdbscan.h, hdbscan_tree.h) on the CPU:
 * - the spanning tree hdbscan_run builds on the cpu engine weighs what
 *   Kruskal's algorithm over every pair gives, mutual reachability
 *   computed here apart (direct (a-b)^2 in FP64, core distances by
 *   sorting each point's distances), on blobs of varying density,
 *   duplicates and uniform data, for several min_samples;
 * - hdbscan_tree_build refuses edges that are not a spanning tree (one
 *   edge dropped and another repeated; a cycle);
 * - a case worked by hand: two groups on a line and an outlier, their
 *   labels and numbering (the group holding point 0 is cluster 0, as
 *   scikit-learn's Prim from point 0 numbers it);
 * - the host engines' route (a k-d tree, each point's nearest, rounds from
 *   single points) gives the tree of the forest route, bit for bit, also
 *   with every parallel loop split over threads (par_for_tests);
 * - rounds an engine offers (engine.consume, PAIRS_MST_ROUND), here a
 *   brute force over every pair written apart, give the tree the host's
 *   rounds give, bit for bit, whether the engine takes every round or
 *   declines from its second on (the host's rounds then); the probe
 *   (hdbscan_mst_offered) says whether it takes them and runs no round;
 * - bad input gets one line.
 * Labels, probabilities and outlier scores against an independent
 * implementation: tests/cli/hdbscan_oracle.sh. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "hdbscan.h"
#include "hdbscan_mst.h"
#include "par.h"

extern const engine engine_cpu;

static uint64_t rng;
static double runit(void)
{
    return (double)(t_splitmix(&rng) >> 11) * 0x1p-53;
}
static double rgauss(void)
{
    const double u = runit(), v = runit();
    return sqrt(-2 * log(u > 0 ? u : 0x1p-53)) * cos(2 * M_PI * v);
}

static dataset make_ds(size_t n, size_t d)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.name = "t";
    ds.v = calloc(n * d, sizeof(double));
    return ds;
}
#define X(ds, i, k) (((double *)(ds).v)[(i) * (ds).d + (k)])

/* ---- the independent tree: Kruskal over every pair ---- */

typedef struct kedge {
    double w;
    uint32_t a, b;
} kedge;

static int cmp_kedge(const void *x, const void *y)
{
    const double a = ((const kedge *)x)->w, b = ((const kedge *)y)->w;
    return a < b ? -1 : a > b;
}
static int cmp_dbl(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}
static uint32_t kfind(uint32_t *p, uint32_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static double d2_direct(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        const double t = X(*ds, i, k) - X(*ds, j, k);
        s += t * t;
    }
    return s;
}

/* The minimum spanning tree's weight over mutual-reachability distances,
 * the edges' weights summed in ascending order (as hdbscan_tree_build
 * sums them: equal weights give the same sum in any order). */
static double kruskal_weight(const dataset *ds, size_t ms)
{
    const size_t n = ds->n;
    double *core = calloc(n, sizeof *core), *row = calloc(n, sizeof *row);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++)
            row[j] = d2_direct(ds, i, j); /* itself at 0: the 1st nearest */
        qsort(row, n, sizeof *row, cmp_dbl);
        core[i] = row[ms - 1];
    }
    kedge *e = malloc(n * (n - 1) / 2 * sizeof *e);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double w = d2_direct(ds, i, j);
            w = w > core[i] ? w : core[i];
            w = w > core[j] ? w : core[j];
            e[m++] = (kedge){sqrt(w), (uint32_t)i, (uint32_t)j};
        }
    qsort(e, m, sizeof *e, cmp_kedge);
    uint32_t *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)i;
    double sum = 0;
    size_t taken = 0;
    for (size_t k = 0; k < m && taken + 1 < n; k++) {
        const uint32_t a = kfind(p, e[k].a), b = kfind(p, e[k].b);
        if (a == b)
            continue;
        p[a] = b;
        sum += e[k].w;
        taken++;
    }
    free(core);
    free(row);
    free(e);
    free(p);
    return sum;
}

static void check_weight(const dataset *ds, size_t mcs, size_t ms, const char *what)
{
    hdbscan_spec s = {.ds = ds, .min_cluster_size = mcs, .min_samples = ms};
    hdbscan_result r;
    const int rc = hdbscan_run(&engine_cpu, &s, &r);
    CHECK_MSG(rc == 0, "%s: %s", what, err_msg());
    if (rc)
        return;
    const double want = kruskal_weight(ds, ms);
    /* cpu's squared distances may sum the d terms in another order than
     * d2_direct: each within (d + 2) 2^-53 relative of the exact sum, so
     * each distance within half that, and the n - 1 ascending additions
     * add n 2^-53 of the total: (d + 2 + n) 2^-53 of the weight. */
    const double tol = ((double)ds->d + 2 + (double)ds->n) * 0x1p-53 * want;
    CHECK_MSG(fabs(r.tree.weight - want) <= tol, "%s: tree weight %.17g, Kruskal %.17g", what,
              r.tree.weight, want);
    size_t labelled = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const int32_t l = r.tree.labels[i];
        CHECK_MSG(l >= -1 && l < (int32_t)r.tree.nclusters, "%s: label %d of %zu clusters", what, l,
                  r.tree.nclusters);
        CHECK_MSG(r.tree.prob[i] >= 0 && r.tree.prob[i] <= 1 && (l >= 0 || r.tree.prob[i] == 0),
                  "%s: probability %g at label %d", what, r.tree.prob[i], l);
        CHECK_MSG(r.tree.score[i] >= 0 && r.tree.score[i] <= 1, "%s: outlier score %g", what,
                  r.tree.score[i]);
        labelled += l >= 0;
    }
    size_t sum = 0;
    for (size_t c = 0; c < r.tree.nclusters; c++) {
        CHECK_MSG(r.tree.sizes[c] >= 1, "%s: cluster %zu empty", what, c);
        sum += r.tree.sizes[c];
    }
    CHECK_MSG(sum == labelled && r.noise == ds->n - labelled, "%s: sizes %zu, labelled %zu", what,
              sum, labelled);
    hdbscan_result_free(&r);
}

TEST(tree_weight_is_kruskals)
{
    /* blobs of three densities and a uniform background */
    for (size_t d = 2; d <= 6; d += 4) {
        rng = 3 + d;
        dataset ds = make_ds(300, d);
        const double sd[3] = {0.05, 0.3, 1.0};
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < d; k++)
                X(ds, i, k) =
                    i % 10 == 9 ? 12 * runit() : 4.0 * (double)(i % 3) + sd[i % 3] * rgauss();
        for (size_t ms = 1; ms <= 9; ms += 4)
            check_weight(&ds, 5, ms, d == 2 ? "blobs, d 2" : "blobs, d 6");
        free(ds.v);
    }
    /* duplicates: each point four times (zero distances, lambda inf) */
    {
        rng = 17;
        dataset ds = make_ds(200, 3);
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < ds.d; k++)
                X(ds, i, k) = i % 4 ? X(ds, i - i % 4, k) : runit();
        check_weight(&ds, 4, 3, "duplicates, min_samples 3");
        check_weight(&ds, 4, 6, "duplicates, min_samples 6");
        free(ds.v);
    }
    /* uniform */
    {
        rng = 23;
        dataset ds = make_ds(250, 4);
        for (size_t i = 0; i < ds.n * ds.d; i++)
            ((double *)ds.v)[i] = runit();
        check_weight(&ds, 10, 10, "uniform");
        free(ds.v);
    }
}

/* The host engines' route (a k-d tree for the core distances and each
 * point's nearest, Borůvka from single points, src/cluster/hdbscan_mst.h)
 * against the route of the other engines (the engine's k-distance, the
 * curve's forest, rounds over a tree of their own without the nearest),
 * here cpu's own arithmetic with its exact flag cleared: the one minimum
 * spanning tree in the order (weight, ends) both ways, so the same
 * weight bit for bit and the same labels, probabilities and scores; and
 * the tree's weight against Kruskal's. Blobs of three widths and a
 * uniform tenth at d = 3 and 16, 3000 points, over many batches and
 * rounds; cpu-exact (FP64 decisions) takes the host route too. */
TEST(host_route_gives_the_forest_routes_tree)
{
    extern const engine engine_cpu_exact;
    engine other = engine_cpu;
    other.exact = 0;
    /* split: every par_for of the rounds and the tree (components,
     * gathers, labels) over ranges on threads, as at 10^6 points */
    for (int split = 0; split < 2; split++)
        for (size_t d = 3; d <= 16; d += 13) {
            par_for_tests(split ? 1 : 0);
            rng = 90 + d;
            dataset ds = make_ds(3000, d);
            const double sd[3] = {0.03, 0.1, 0.3};
            for (size_t i = 0; i < ds.n; i++)
                for (size_t k = 0; k < d; k++)
                    X(ds, i, k) = i % 10 == 9
                                      ? 4 * runit() - 1
                                      : (double)((i % 7) & (1u << (k % 3))) + sd[i % 3] * rgauss();
            for (size_t ms = 5; ms <= 10; ms += 5) {
                hdbscan_spec s = {.ds = &ds, .min_cluster_size = 10, .min_samples = ms};
                hdbscan_result h, f, x;
                CHECK_MSG(hdbscan_run(&engine_cpu, &s, &h) == 0, "%s", err_msg());
                CHECK_MSG(hdbscan_run(&other, &s, &f) == 0, "%s", err_msg());
                CHECK_MSG(hdbscan_run(&engine_cpu_exact, &s, &x) == 0, "%s", err_msg());
                CHECK_MSG(h.nearest == ms && h.forest_edges == 0 && h.host_rounds >= 2,
                          "d %zu: host route: %zu nearest, %zu forest edges, %d rounds", d,
                          h.nearest, h.forest_edges, h.host_rounds);
                CHECK_MSG(f.nearest == 0 && f.forest_edges > 0, "d %zu: forest route: %zu, %zu", d,
                          f.nearest, f.forest_edges);
                CHECK_MSG(f.tree.weight == h.tree.weight && x.tree.weight == h.tree.weight,
                          "d %zu ms %zu split %d: weights %.17g, forest route's %.17g, cpu-exact's "
                          "%.17g",
                          d, ms, split, h.tree.weight, f.tree.weight, x.tree.weight);
                size_t diff = 0;
                for (size_t i = 0; i < ds.n; i++)
                    diff +=
                        f.tree.labels[i] != h.tree.labels[i] || f.tree.prob[i] != h.tree.prob[i] ||
                        f.tree.score[i] != h.tree.score[i] || x.tree.labels[i] != h.tree.labels[i];
                CHECK_MSG(diff == 0, "d %zu ms %zu split %d: %zu points differ", d, ms, split,
                          diff);
                CHECK_MSG(h.tree.nclusters >= 2, "d %zu ms %zu: %zu clusters", d, ms,
                          h.tree.nclusters);
                hdbscan_result_free(&h);
                hdbscan_result_free(&f);
                hdbscan_result_free(&x);
            }
            check_weight(&ds, 10, 10, d == 3 ? "3000 blobs, d 3" : "3000 blobs, d 16");
            free(ds.v);
        }
    par_for_tests(0);
}

TEST(edges_that_are_not_a_tree_are_refused)
{
    /* a path 0-1-2-3-4 is a tree; dropping 2-3 for a second 0-1 leaves
     * 3 and 4 unreached; a cycle 0-1-2-0 likewise leaves 3 and 4 out */
    const double w[4] = {1, 2, 3, 4};
    const uint64_t path[4] = {0ull << 32 | 1, 1ull << 32 | 2, 2ull << 32 | 3, 3ull << 32 | 4};
    const uint64_t dropped[4] = {0ull << 32 | 1, 1ull << 32 | 2, 0ull << 32 | 1, 3ull << 32 | 4};
    const uint64_t cycle[4] = {0ull << 32 | 1, 1ull << 32 | 2, 0ull << 32 | 2, 3ull << 32 | 4};
    const uint64_t outside[4] = {0ull << 32 | 1, 1ull << 32 | 2, 2ull << 32 | 3, 3ull << 32 | 5};
    const hdbscan_params p = {2, HDBSCAN_EOM, 0, 0};
    hdbscan_tree t;
    CHECK(hdbscan_tree_build(5, w, path, &p, &t) == 0);
    CHECK_MSG(fabs(t.weight - 10) == 0, "path weight %g", t.weight);
    hdbscan_tree_free(&t);
    CHECK(hdbscan_tree_build(5, w, dropped, &p, &t) == TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "not a spanning tree") != NULL, "%s", err_msg());
    CHECK(hdbscan_tree_build(5, w, cycle, &p, &t) == TCJ_EINVAL);
    CHECK(hdbscan_tree_build(5, w, outside, &p, &t) == TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "5") != NULL, "%s", err_msg());
    const hdbscan_params small = {1, HDBSCAN_EOM, 0, 0};
    CHECK(hdbscan_tree_build(5, w, path, &small, &t) == TCJ_EINVAL);
}

/* Two groups of five on a line (0 .. 0.4 and 10 .. 10.4, steps of 0.1)
 * and an outlier at 100, min_cluster_size 3, min_samples 2 (a core
 * distance is the nearest other point's, 0.1 in the groups). The tree:
 * the groups' own edges at 0.1, the groups joined at 9.6, the outlier at
 * 89.6. Condensed: the outlier falls out of the root at 1/89.6; the
 * groups split off at 1/9.6, each a cluster of five whose points leave
 * at 1/0.1; excess of mass keeps both (each child's stability, 5 (10 -
 * 1/9.6), beats what the root's own points give). Prim from point 0
 * meets the group holding it on the left: cluster 0. */
TEST(two_groups_and_an_outlier_by_hand)
{
    dataset ds = make_ds(11, 1);
    for (size_t i = 0; i < 5; i++) {
        X(ds, i, 0) = 10 + 0.1 * (double)i; /* point 0 in the group at 10 */
        X(ds, 5 + i, 0) = 0.1 * (double)i;
    }
    X(ds, 10, 0) = 100;
    for (int method = 0; method < 2; method++) {
        hdbscan_spec s = {.ds = &ds,
                          .min_cluster_size = 3,
                          .min_samples = 2,
                          .method = method ? HDBSCAN_LEAF : HDBSCAN_EOM};
        hdbscan_result r;
        CHECK_MSG(hdbscan_run(&engine_cpu, &s, &r) == 0, "%s", err_msg());
        CHECK_MSG(r.tree.nclusters == 2 && r.noise == 1, "%s: %zu clusters, %zu noise",
                  method ? "leaf" : "eom", r.tree.nclusters, r.noise);
        for (size_t i = 0; i < 11; i++) {
            const int32_t want = i < 5 ? 0 : i < 10 ? 1 : -1;
            CHECK_MSG(r.tree.labels[i] == want, "point %zu: label %d, want %d", i, r.tree.labels[i],
                      want);
        }
        /* each group's points leave at lambda about 10, their cluster's
         * largest (the steps of 0.1 differ in their last bits: a few
         * 2^-52 apart): probability 1 within 1e-12; the outlier leaves
         * the root at 1/89.6, and the largest lambda under the root is a
         * group point's, 10: score 1 - (1/89.6)/10 */
        CHECK_MSG(fabs(r.tree.prob[3] - 1.0) < 1e-12 && r.tree.prob[10] == 0.0,
                  "probabilities %.17g %g", r.tree.prob[3], r.tree.prob[10]);
        const double want = 1.0 - 1.0 / 896.0;
        CHECK_MSG(fabs(r.tree.score[10] - want) < 1e-12, "outlier score %.17g, want %.17g",
                  r.tree.score[10], want);
        hdbscan_result_free(&r);
    }
    free(ds.v);
}

/* ---- an engine that offers HDBSCAN*'s rounds: every pair, by brute force ---- */

static int g_fake_rounds; /* rounds the fake takes before it declines (-1: all) */
static int g_fake_taken;

static int fake_consume(const join_spec *js, pair_consumer *c, join_result *res)
{
    (void)res;
    if (c->use != PAIRS_MST_ROUND || (g_fake_rounds >= 0 && g_fake_taken >= g_fake_rounds))
        return ENGINE_DECLINED;
    mst_round_io *io = c->mst;
    if (!io->best)
        return 0; /* the probe (hdbscan_mst_offered): no round */
    g_fake_taken++;
    const dataset *ds = js->ds;
    const size_t n = io->n;
    for (size_t i = 0; i < n; i++)
        io->best[i] = (curve_edge){INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            const uint32_t ci = io->comp[i], cj = io->comp[j];
            if (ci == cj)
                continue;
            double w = d2_direct(ds, i, j);
            w = w > io->core2[i] ? w : io->core2[i];
            w = w > io->core2[j] ? w : io->core2[j];
            const curve_edge e = {w, (uint32_t)i, (uint32_t)j};
            if (curve_edge_before(&e, &io->best[ci]))
                io->best[ci] = e;
            if (curve_edge_before(&e, &io->best[cj]))
                io->best[cj] = e;
        }
    io->rows_fp64 = n;
    return 0;
}

TEST(device_rounds_give_the_host_rounds_tree)
{
    /* groups within groups: point i at sum over its bits b_l of b_l 3^l
     * (and a little noise across), so each round's components pair up
     * and the rounds go on some log2 n times; min_samples 2 */
    rng = 41;
    dataset ds = make_ds(512, 2);
    for (size_t i = 0; i < ds.n; i++) {
        double x = 0, p3 = 1;
        for (size_t b = i; b; b >>= 1, p3 *= 3)
            x += (double)(b & 1) * p3;
        X(ds, i, 0) = x;
        X(ds, i, 1) = 0.01 * runit();
    }
    engine fake = engine_cpu;
    fake.consume = fake_consume;
    for (int take = -1; take <= 1; take++) {
        hdbscan_spec s = {.ds = &ds, .min_cluster_size = 5, .min_samples = 2};
        hdbscan_result h, f;
        CHECK_MSG(hdbscan_run(&engine_cpu, &s, &h) == 0, "%s", err_msg());
        g_fake_rounds = take;
        g_fake_taken = 0;
        /* the probe asks without a round, and says what the engine does */
        CHECK(hdbscan_mst_offered(&fake, NULL, &ds) == (take != 0) && g_fake_taken == 0);
        CHECK(hdbscan_mst_offered(&engine_cpu, NULL, &ds) == 0);
        CHECK_MSG(hdbscan_run(&fake, &s, &f) == 0, "%s", err_msg());
        CHECK_MSG(h.device_rounds == 0 && h.host_rounds > 1, "host: %d device, %d host rounds",
                  h.device_rounds, h.host_rounds);
        if (take < 0)
            CHECK_MSG(f.device_rounds > 1 && f.host_rounds == 0, "all: %d device, %d host rounds",
                      f.device_rounds, f.host_rounds);
        else
            CHECK_MSG(f.device_rounds == take && f.host_rounds >= 1,
                      "%d taken: %d device, %d host rounds", take, f.device_rounds, f.host_rounds);
        /* the same edges: the same ascending sum, bit for bit, and labels */
        CHECK_MSG(f.tree.weight == h.tree.weight, "%d taken: weight %.17g, host's %.17g", take,
                  f.tree.weight, h.tree.weight);
        size_t diff = 0;
        for (size_t i = 0; i < ds.n; i++)
            diff += f.tree.labels[i] != h.tree.labels[i] || f.tree.prob[i] != h.tree.prob[i] ||
                    f.tree.score[i] != h.tree.score[i];
        CHECK_MSG(diff == 0, "%d taken: %zu points differ", take, diff);
        hdbscan_result_free(&h);
        hdbscan_result_free(&f);
    }
    free(ds.v);
}

TEST(bad_input_gets_one_line)
{
    dataset ds = make_ds(4, 2);
    hdbscan_spec s = {.ds = &ds, .min_cluster_size = 1};
    hdbscan_result r;
    CHECK(hdbscan_run(&engine_cpu, &s, &r) == TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "min_cluster_size") != NULL, "%s", err_msg());
    s.min_cluster_size = 2;
    s.min_samples = 5;
    CHECK(hdbscan_run(&engine_cpu, &s, &r) == TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "min_samples must be 1 to 4") != NULL, "%s", err_msg());
    X(ds, 1, 1) = NAN;
    s.min_samples = 2;
    CHECK(hdbscan_run(&engine_cpu, &s, &r) == TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "not finite") != NULL, "%s", err_msg());
    free(ds.v);
    /* the values checked in blocks on the cores: a value that is not
     * finite in any block, the first, a middle one or the last, is found */
    par_for_tests(1);
    const size_t bn = 220000, bd = 5; /* 17 chunks of the values' scan */
    for (int where = 0; where < 3; where++) {
        dataset big = make_ds(bn, bd);
        const size_t i = where == 0 ? 0 : where == 1 ? bn / 2 + 7 : bn - 1;
        X(big, i, bd - 1) = where == 1 ? INFINITY : NAN;
        s = (hdbscan_spec){.ds = &big, .min_cluster_size = 5};
        CHECK(hdbscan_run(&engine_cpu, &s, &r) == TCJ_EINVAL);
        CHECK_MSG(strstr(err_msg(), "not finite") != NULL, "row %zu: %s", i, err_msg());
        free(big.v);
    }
    par_for_tests(0);
    /* one point: noise, no tree */
    dataset one = make_ds(1, 3);
    s = (hdbscan_spec){.ds = &one, .min_cluster_size = 2, .min_samples = 1};
    CHECK(hdbscan_run(&engine_cpu, &s, &r) == 0);
    CHECK(r.tree.labels[0] == -1 && r.noise == 1 && r.tree.nclusters == 0);
    hdbscan_result_free(&r);
    free(one.v);
}
