/* GPU tests of DBSCAN's curve with its Boruvka joins on the device
 * (engine.consume: src/engine_gpu_consume.c, kernels/kern_curve.cu), each
 * route (src/cluster/curve_plan.h) against another.
 *
 * Test plan:
 *  1. The device rounds equal the host sink (R_SINK) value
 *     for value: the same rounds, forest weights, core distances,
 *     reachabilities and largest-cluster steps, for exact (its FP16 pass
 *     and FP64 refinement, the data also 1000 away from the origin) and
 *     fasted (FP32 d2), minPts 4 and 10, on blobs of 600, 200 and 100
 *     rows (the lists cannot decide every component after the first join:
 *     a second join over a reordered copy of the open components' rows),
 *     uniform rows, rows repeated 50 times (zero distances, core distance
 *     0) and a lattice whose distances are exactly 1, sqrt 2, ... (ties in
 *     every weight: the heap's order by (w, a, b) decides); exact over
 *     its FP64 grid too (the grid join's pairs consumed on the device).
 *     The device path ran (rounds_device) and the sink's did not.
 *  2. exact's curve equals dbscan on the cpu engine (FP64 direct form:
 *     exact's pairs are fp64's) at a dozen eps: clusters, core and noise
 *     points, the largest cluster.
 *  3. exact over the cluster cut (the layout's rows mapped on the device)
 *     equals the sink on four blobs far apart; at a max where each blob
 *     is one component the cut's groups close them: no join after the
 *     core distances'.
 *  4. Two devices equal one; skipped with fewer than 2.
 *  5. The core distances from the join at max on the device
 *     (kern_curve_core) equal each point's (minPts-1)-th least d2 over
 *     the distinct other rows of the same engine's PAIRS run at max,
 *     computed here from the pairs through a sink (+inf where fewer or
 *     above max^2), for exact and fasted, minPts 2, 5 and 10, on every
 *     set (duplicates: zero distances; the lattice: ties); and exact's
 *     whole curve equals the one from its k-distance
 *     (R_CORE_KDIST: cpu's values, an independent top-k);
 *     and the K nearest the device's heaps keep (the first round's
 *     lists, src/cluster/curve_knn.h) give the same rounds and curve as a host
 *     sink's over the same join (R_CORE_SINK); minPts 100
 *     and 200 (no lists, K = k: the consumer's sets of four and eight
 *     slots a lane) at a wider max, against the pairs too.
 *  6. The merging after each device join, on the device where its lists
 *     are (kern_curve_merge_run), equals the host's curve_merging_run over the
 *     same joins (R_MERGE_HOST): the same joins (rounds: each
 *     merging's open count and bounds decide the next), forest weights and
 *     curve, for exact and fasted, minPts 4 and 10, the first round from
 *     the K nearest, from a join of its own (K = 0) and K = 12, and over
 *     the cluster cut; every merging of a device run ran there (test 1
 *     checks the count too).
 *  7. The device's sorts (kern_sort_f64: the curve's three in one call)
 *     equal the host's (src/sort_f64.c) value for value, and the order
 *     is a permutation, ascending and stable among equal values: values
 *     with ties, negatives, -0.0 and +0.0, +inf, of 0, 1, 2, 1000 and
 *     70,000.
 *  8. The later rows found on the device (kern_curve_later_rows, the
 *     merging's kcl_rows) equal the host's curve_later_rows row for row,
 *     in order: random components, bounds, core distances and parts
 *     (tests/unit/later_case.h), 1 to 300,000 rows, 1, 8 and 64 parts, 5
 *     to 95% open; one component, two, forty in eight parts.
 * Test 1 runs the device's curve three ways against the sink: its first
 * round from the K nearest (the default), from a device join of its own
 * (no room for K nearest: the blobs then need a later, reordered join), and
 * with K = 12 (more left to the later joins).
 * G_CURVE_SMALL=1 (the sanitizers): the first two sets only, 1000
 * uniform rows. Skipped
 * without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "dbscan.h"
#include "dbscan_curve.h"
#include "devices.h"
#include "engine.h"
#include "err.h"
#include "exact_path.h"
#include "kdist.h"
#include "curve_later.h"
#include "kern_sort.h"
#include "kernels.h"
#include "later_case.h"
#include "sort_f64.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static uint64_t rng = 11;
static double runit(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

static double rnorm(void)
{
    double g = -6;
    for (int u = 0; u < 12; u++)
        g += runit();
    return g;
}

static dataset from(const char *name, const double *x, size_t n, size_t d)
{
    dataset ds = {0};
    ds.name = xstrdup(name);
    dataset_set_f64(&ds, x, n, d, DTYPE_F64);
    return ds;
}

/* Blobs of 1,200, 400 and 200 rows at d = 16, 3 apart, sd 0.3, and 90
 * rows spread over the box: large enough that at minpts 4 the lists of
 * CURVE_LIST edges run out and a later join follows the first (half as
 * many rows take one join with lists of 64). */
static dataset blobs3(double off)
{
    const size_t sizes[3] = {1200, 400, 200}, d = 16, n = 1890;
    double *x = xmalloc(n * d * sizeof *x);
    size_t i = 0;
    for (int b = 0; b < 3; b++)
        for (size_t m = 0; m < sizes[b]; m++, i++)
            for (size_t k = 0; k < d; k++)
                x[i * d + k] = off + (k == 0 ? 3.0 * b : 0) + 0.3 * rnorm();
    for (; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = off + (k == 0 ? 9 * runit() - 1 : 2 * runit() - 1);
    dataset ds = from("blobs3", x, n, d);
    free(x);
    return ds;
}

static dataset uniform(size_t n, size_t d)
{
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n * d; i++)
        x[i] = runit();
    dataset ds = from("uniform", x, n, d);
    free(x);
    return ds;
}

/* 40 distinct rows at d = 32, each 50 times. */
static dataset repeated(void)
{
    const size_t n = 2000, d = 32;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t r = 0; r < 40; r++)
        for (size_t k = 0; k < d; k++)
            x[r * d + k] = 2 * runit();
    for (size_t i = 40; i < n; i++)
        memcpy(x + i * d, x + (i % 40) * d, d * sizeof *x);
    dataset ds = from("repeated", x, n, d);
    free(x);
    return ds;
}

/* A 40 x 30 integer lattice in the first two of 16 coordinates, every
 * fifth column 3 apart. */
static dataset lattice(void)
{
    const size_t n = 1200, d = 16;
    double *x = xcalloc(n * d, sizeof *x);
    for (size_t i = 0; i < n; i++) {
        x[i * d] = (double)(i % 40) * ((i / 40) % 5 == 0 ? 3 : 1);
        x[i * d + 1] = (double)(i / 40);
    }
    dataset ds = from("lattice", x, n, d);
    free(x);
    return ds;
}

/* The q-quantile of the FP64 distance over 4000 random pairs. */
static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double quantile(const dataset *ds, double q)
{
    enum { M = 4000 };
    static double v[M];
    const size_t n = ds->n, d = ds->d;
    const double *x = ds->v; /* FP64 (from) */
    for (int t = 0; t < M; t++) {
        size_t i = (size_t)(runit() * n), j = (size_t)(runit() * n);
        double s = 0;
        for (size_t k = 0; k < d; k++) {
            double u = x[i * d + k] - x[j * d + k];
            s += u * u;
        }
        v[t] = sqrt(s);
    }
    qsort(v, M, sizeof *v, cmp_d);
    return v[(int)(q * (M - 1))];
}

/* The routes the tests compare, each a change to the plan a run chooses
 * (src/cluster/curve_plan.h): the default; every round's pairs through the
 * host sink and merged on the host (the core distances still from the
 * device, no K nearest); the merging on the host after device joins; the
 * core join's pairs through the host sink keeping the K nearest; the core
 * distances from the k-distance. */
enum { R_AUTO, R_SINK, R_MERGE_HOST, R_CORE_SINK, R_CORE_KDIST };

/* eng's curve by route with room for `room` nearest a row (SIZE_MAX: what
 * memory allows). */
static int curve_route(const char *eng, const dataset *ds, size_t minpts, double max,
                       const engine_opts *o, int route, size_t room, dbscan_curve *c)
{
    const engine *e = engine_find(eng);
    dbscan_curve_spec sp = {.ds = ds, .minpts = minpts, .max = max, .opts = o};
    curve_plan_in in;
    curve_plan p;
    dbscan_curve_plan_in(e, &sp, &in);
    if (room != SIZE_MAX)
        in.knn_room = room;
    int rc = curve_plan_choose(&in, &p);
    if (rc)
        return rc;
    switch (route) {
    case R_SINK:
        p.rounds_device = p.merge_device = 0;
        p.knn = 0;
        break;
    case R_MERGE_HOST:
        p.merge_device = 0;
        break;
    case R_CORE_SINK:
        p.core = CURVE_CORE_SINK;
        break;
    case R_CORE_KDIST:
        p.core = CURVE_CORE_KDIST;
        p.knn = 0;
        break;
    }
    return dbscan_curve_run_plan(e, &sp, &p, c);
}

static int curve(const char *eng, const dataset *ds, size_t minpts, double max,
                 const engine_opts *o, int sink, dbscan_curve *c)
{
    return curve_route(eng, ds, minpts, max, o, sink ? R_SINK : R_AUTO, SIZE_MAX, c);
}

static int same_d(const double *a, const double *b, size_t m)
{
    for (size_t k = 0; k < m; k++)
        if (!(a[k] == b[k]))
            return 0;
    return 1;
}

/* Two curves of ds, every value: forest weights, core distances,
 * reachabilities, largest-cluster steps. */
static void same_curve(const char *what, const char *eng, size_t minpts, const dataset *ds,
                       const dbscan_curve *a, const dbscan_curve *b)
{
    CHECK_MSG(a->nedge == b->nedge && a->nbig == b->nbig,
              "%s %s minpts %zu: edges %zu / %zu, steps %zu / %zu", what, eng, minpts, a->nedge,
              b->nedge, a->nbig, b->nbig);
    if (a->nedge == b->nedge)
        CHECK_MSG(same_d(a->edge2, b->edge2, a->nedge), "%s %s minpts %zu: forest weights differ",
                  what, eng, minpts);
    CHECK_MSG(same_d(a->core2, b->core2, ds->n) && same_d(a->reach2, b->reach2, ds->n),
              "%s %s minpts %zu: core distances or reachabilities differ", what, eng, minpts);
    if (a->nbig == b->nbig) {
        int ok = same_d(a->big_at, b->big_at, a->nbig);
        for (size_t k = 0; k < a->nbig; k++)
            ok &= a->big[k] == b->big[k];
        CHECK_MSG(ok, "%s %s minpts %zu: largest-cluster steps differ", what, eng, minpts);
    }
}

/* The device's curve against the sink's (and against ob's when given:
 * another device list), every value; the device's run with room for
 * `room` nearest a row (SIZE_MAX: the default). The device's run takes
 * each point's K nearest from its core join for the first round's lists
 * (knn > 0: no join of its own); the sink's (R_SINK) joins for every
 * round. */
static int g_ends; /* device_vs_sink_room's curves whose end was made on the device after a join */
static void device_vs_sink_room(const char *what, const char *eng, const dataset *ds, size_t minpts,
                                double max, const engine_opts *o, const engine_opts *ob,
                                size_t room)
{
    dbscan_curve a, b;
    CHECK_MSG(curve_route(eng, ds, minpts, max, o, R_AUTO, room, &a) == 0, "%s %s: %s", what, eng,
              err_msg());
    CHECK_MSG(curve(eng, ds, minpts, max, ob ? ob : o, ob == NULL, &b) == 0, "%s %s: %s", what, eng,
              err_msg());
    CHECK_MSG(a.rounds_device == a.rounds, "%s %s: %d of %d rounds on the device", what, eng,
              a.rounds_device, a.rounds);
    const int knn = room != 0;
    CHECK_MSG(knn == (a.knn > 0) && (knn || a.rounds >= 1), "%s %s: knn %zu, %d rounds", what, eng,
              a.knn, a.rounds);
    /* the curve's end on the device after its last merging there, after
     * the core join's round or a later join's (kern_curve_tail.cuh); the
     * later ones' with the earlier rounds' edges copied up */
    CHECK_MSG(a.end_device, "%s %s: the end not there after %d joins", what, eng, a.rounds);
    g_ends += a.end_device && a.rounds > 0;
    /* every merging after a device join ran where its lists were */
    CHECK_MSG(a.merges_device == a.rounds_device + (a.knn > 0), "%s %s: %d of %d mergings there",
              what, eng, a.merges_device, a.rounds_device + (a.knn > 0));
    if (!ob)
        CHECK_MSG(b.rounds_device == 0 && b.knn == 0 && b.merges_device == 0,
                  "%s %s: the sink's run took the device", what, eng);
    else
        CHECK_MSG(a.rounds == b.rounds, "%s %s: rounds %d / %d", what, eng, a.rounds, b.rounds);
    same_curve(what, eng, minpts, ds, &a, &b);
    dbscan_curve_free(&a);
    dbscan_curve_free(&b);
}

static void device_vs_sink(const char *what, const char *eng, const dataset *ds, size_t minpts,
                           double max, const engine_opts *o, const engine_opts *ob)
{
    device_vs_sink_room(what, eng, ds, minpts, max, o, ob, SIZE_MAX);
}

static dataset set_k(int k, double off)
{
    switch (k) {
    case 0:
        return blobs3(off);
    case 1:
        return uniform(getenv("G_CURVE_SMALL") ? 1000 : 3000, 64);
    case 2:
        return repeated();
    default:
        return lattice();
    }
}

static double max_k(int k, const dataset *ds)
{
    return k == 3 ? 1.5 : quantile(ds, k == 2 ? 0.3 : 0.02);
}

/* fn for each test set (set_k; the first two under G_CURVE_SMALL) with
 * its max (max_k) and exact over its pass (o). */
typedef void (*set_fn)(int k, const dataset *ds, double max, const engine_opts *o, void *ctx);
static void for_each_set(set_fn fn, void *ctx)
{
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_PASS;
    const int sets = getenv("G_CURVE_SMALL") ? 2 : 4;
    for (int k = 0; k < sets; k++) {
        dataset ds = set_k(k, 0);
        fn(k, &ds, max_k(k, &ds), &o, ctx);
        dataset_free(&ds);
    }
}

static void rounds_of_set(int k, const dataset *ds, double max, const engine_opts *o, void *ctx)
{
    /* exact over its FP64 grid (`set exact-path grid`): the grid join's
     * pairs consumed on the device, against the same joins' host sink */
    engine_opts grid = *o;
    grid.exact_path = EXACT_PATH_GRID;
    char gname[96];
    snprintf(gname, sizeof gname, "%s, exact's grid", ds->name);
    for (size_t m = 4; m <= 10; m += 6) {
        device_vs_sink(gname, "exact", ds, m, max, &grid, NULL);
        device_vs_sink(ds->name, "exact", ds, m, max, o, NULL);
        device_vs_sink(ds->name, "fasted", ds, m, max, o, NULL);
        /* the first round a device join of its own (no K nearest), and a
         * K of 12: more rounds left to the later joins */
        device_vs_sink_room(ds->name, "exact", ds, m, max, o, NULL, 0);
        if (!getenv("G_CURVE_SMALL"))
            device_vs_sink_room(ds->name, "fasted", ds, m, max, o, NULL, 12);
    }
    if (k == 0) {
        dbscan_curve c;
        CHECK(curve_route("exact", ds, 4, max, o, R_AUTO, 0, &c) == 0);
        *(int *)ctx = c.rounds >= 2;
        dbscan_curve_free(&c);
        /* `set curve-route host`: nothing on the device, the same curve */
        engine_opts h = *o;
        h.curve_route = CURVE_ROUTE_HOST;
        dbscan_curve_spec sp = {.ds = ds, .minpts = 4, .max = max, .opts = &h};
        dbscan_curve a, d;
        CHECK_MSG(dbscan_curve_run(engine_find("exact"), &sp, &d) == 0, "%s", err_msg());
        CHECK_MSG(curve("exact", ds, 4, max, o, 0, &a) == 0, "%s", err_msg());
        CHECK_MSG(d.rounds_device == 0 && d.merges_device == 0 && !d.core_device && d.knn > 0 &&
                      a.core_device,
                  "route host: rounds there %d, mergings there %d, core there %d, knn %zu",
                  d.rounds_device, d.merges_device, d.core_device, d.knn);
        same_curve("route host", "exact", 4, ds, &a, &d);
        dbscan_curve_free(&a);
        dbscan_curve_free(&d);
    }
}

TEST(device_rounds_equal_the_sink)
{
    need_gpu();
    int two_rounds = 0;
    for_each_set(rounds_of_set, &two_rounds);
    CHECK_MSG(two_rounds, "the blobs' curve took one join: the later, reordered join untested");
    CHECK_MSG(g_ends > 0, "no curve's end after a join was made on the device: untested");
    if (!getenv("G_CURVE_SMALL")) {
        engine_opts o;
        engine_opts_default(&o);
        o.exact_path = EXACT_PATH_PASS;
        dataset ds = blobs3(1000);
        device_vs_sink("blobs3 at 1000", "exact", &ds, 4, max_k(0, &ds), &o, NULL);
        dataset_free(&ds);
    }
}

/* exact's curve at eps against dbscan on the cpu engine. */
static void curve_vs_cpu(const dbscan_curve *c, const dataset *ds, double eps, size_t minpts,
                         const char *what)
{
    const size_t n = ds->n;
    int32_t *lab = xmalloc(n * sizeof *lab);
    uint8_t *core = xmalloc(n);
    dbscan_spec sp = {.ds = ds, .eps = eps, .minpts = minpts, .labels = lab, .core = core};
    dbscan_result *r = xmalloc(sizeof *r);
    CHECK_MSG(dbscan_run(engine_find("cpu"), &sp, r) == 0, "%s", err_msg());
    size_t cl, co, no, lg;
    dbscan_curve_at(c, eps, &cl, &co, &no, &lg);
    size_t *sz = xcalloc(r->clusters + 1, sizeof *sz), big = 0;
    for (size_t i = 0; i < n; i++)
        if (core[i] && ++sz[lab[i]] > big)
            big = sz[lab[i]];
    CHECK_MSG(cl == r->clusters && co == r->core && no == r->noise && lg == big,
              "%s minpts %zu eps %.17g: curve clusters %zu core %zu noise %zu largest %zu, "
              "cpu %zu %zu %zu %zu",
              what, minpts, eps, cl, co, no, lg, r->clusters, r->core, r->noise, big);
    free(sz);
    free(r);
    free(lab);
    free(core);
}

static void cpu_of_set(int k, const dataset *ds, double max, const engine_opts *o, void *ctx)
{
    (void)k;
    (void)ctx;
    dbscan_curve c;
    CHECK_MSG(curve("exact", ds, 5, max, o, 0, &c) == 0, "%s: %s", ds->name, err_msg());
    CHECK(c.rounds_device == c.rounds);
    for (int t = 1; t <= 12; t++)
        curve_vs_cpu(&c, ds, max * t / 12, 5, ds->name);
    /* on forest weights, where the count steps (weight 0: repeated rows,
     * no eps) */
    for (size_t e = 0; e < c.nedge; e += c.nedge / 4 + 1)
        if (c.edge2[e] > 0)
            curve_vs_cpu(&c, ds, kdist_eps_for(c.edge2[e]), 5, ds->name);
    dbscan_curve_free(&c);
}

TEST(exact_device_curve_equals_cpu_dbscan)
{
    need_gpu();
    for_each_set(cpu_of_set, NULL);
}

/* Four blobs of 3000 rows at d = 64, each 50 from the origin along its
 * own axis: a cut groups each alone. */
static dataset far_blobs(double *eps)
{
    const size_t n = 12000, d = 64;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = (k == i % 4 ? 50.0 * (double)(i % 4 + 1) : 0.0) + 0.3 * rnorm();
    *eps = 0.75 * 0.3 * sqrt(2.0 * (double)d);
    dataset ds = from("far-blobs", x, n, d);
    free(x);
    return ds;
}

/* far_blobs with exact over its cluster cut (o). */
static dataset cut_set(engine_opts *o, double *eps)
{
    engine_opts_default(o);
    o->exact_path = EXACT_PATH_CLUSTERS;
    return far_blobs(eps);
}

TEST(exact_cut_device_curve_equals_the_sink)
{
    need_gpu();
    if (getenv("G_CURVE_SMALL"))
        t_skip("skipped: the cut needs 2 x 2048 rows");
    engine_opts o;
    double eps;
    dataset ds = cut_set(&o, &eps);
    device_vs_sink("cut", "exact", &ds, 10, eps, &o, NULL);
    /* At a max about the blobs' typical distance (d2 0.09 x 2d, sd 2.0
     * at d = 64; 1.1 x it holds most pairs of a blob) each blob is one
     * component, and the cut's groups (one a blob) close all four: no
     * join after the core distances' (src/cluster/curve_later.c, curve_later_rows),
     * where the lists alone leave every blob but the largest open. */
    const double wide = sqrt(1.1 * 0.09 * 2.0 * 64);
    dbscan_curve c;
    CHECK_MSG(curve("exact", &ds, 10, wide, &o, 0, &c) == 0, "%s", err_msg());
    size_t cl, co, no, lg;
    dbscan_curve_at(&c, wide, &cl, &co, &no, &lg);
    CHECK_MSG(c.knn > 0 && c.rounds == 0 && cl == 4, "knn %zu, %d joins, %zu clusters", c.knn,
              c.rounds, cl);
    /* the parts' test on the device (kern_curve_tail.cuh) found no later
     * join and made the curve's end there; same_curve below checks it */
    CHECK_MSG(c.end_device, "the curve's end was not made on the device");
    dbscan_curve_free(&c);
    device_vs_sink("cut, wide", "exact", &ds, 10, wide, &o, NULL);
    dataset_free(&ds);
}

TEST(curve_two_devices_equal_one)
{
    need_gpu();
    if (kern_device_count() < 2)
        t_skip("skipped: needs 2 CUDA devices");
    engine_opts one, two;
    engine_opts_default(&one);
    engine_opts_default(&two);
    one.exact_path = two.exact_path = EXACT_PATH_PASS;
    CHECK(devices_parse("0", &one) == 0);
    CHECK(devices_parse("0,1", &two) == 0);
    for (int k = 0; k < 4; k++) {
        dataset ds = set_k(k, 0);
        const double max = max_k(k, &ds);
        device_vs_sink(ds.name, "exact", &ds, 6, max, &two, &one);
        device_vs_sink(ds.name, "fasted", &ds, 6, max, &two, &one);
        dataset_free(&ds);
    }
}

/* The device's merging (kern_curve_merge_run) against the host's
 * (R_MERGE_HOST) over the same device joins, with room for `room` nearest
 * a row (SIZE_MAX: the default K): the same joins (each merging's open
 * count and bounds decide whether and over which rows another runs) and
 * the same curve, value for value. */
static void merge_vs_host(const char *what, const char *eng, const dataset *ds, size_t minpts,
                          double max, const engine_opts *o, size_t room)
{
    dbscan_curve a, b;
    CHECK_MSG(curve_route(eng, ds, minpts, max, o, R_AUTO, room, &a) == 0, "%s %s: %s", what, eng,
              err_msg());
    CHECK_MSG(curve_route(eng, ds, minpts, max, o, R_MERGE_HOST, room, &b) == 0, "%s %s: %s", what,
              eng, err_msg());
    CHECK_MSG(a.merges_device == a.rounds + (a.knn > 0) && a.merges_device > 0 &&
                  b.merges_device == 0 && a.end_device && !b.end_device,
              "%s %s room %zu: mergings there %d / %d, host %d", what, eng, room, a.merges_device,
              a.rounds + (a.knn > 0), b.merges_device);
    CHECK_MSG(a.rounds == b.rounds && a.rounds_device == b.rounds_device && a.knn == b.knn,
              "%s %s room %zu: joins %d / %d", what, eng, room, a.rounds, b.rounds);
    same_curve(what, eng, minpts, ds, &a, &b);
    dbscan_curve_free(&a);
    dbscan_curve_free(&b);
}

static void merge_of_set(int k, const dataset *ds, double max, const engine_opts *o, void *ctx)
{
    (void)k;
    (void)ctx;
    for (size_t m = 4; m <= 10; m += 6) {
        merge_vs_host(ds->name, "exact", ds, m, max, o, SIZE_MAX);
        merge_vs_host(ds->name, "fasted", ds, m, max, o, SIZE_MAX);
        merge_vs_host(ds->name, "exact", ds, m, max, o, 0);
        merge_vs_host(ds->name, "fasted", ds, m, max, o, 12);
    }
}

TEST(device_merging_equals_the_host)
{
    need_gpu();
    for_each_set(merge_of_set, NULL);
    if (getenv("G_CURVE_SMALL"))
        return;
    engine_opts o;
    double eps;
    dataset ds = cut_set(&o, &eps);
    merge_vs_host("cut", "exact", &ds, 10, eps, &o, SIZE_MAX);
    merge_vs_host("cut", "exact", &ds, 10, eps, &o, 0);
    dataset_free(&ds);
}

/* The device's later rows (kern_curve_later_rows, as the merging there
 * finds them) against the host's curve_later_rows (itself checked against
 * the rule in tests/unit/t_curve_later.c), row for row. */
static void later_on_device(uint64_t *rng, size_t n, uint32_t ncomp, uint32_t nparts, uint32_t pct)
{
    later_case_in c = later_case_make(rng, n, ncomp, nparts, pct);
    size_t *want = malloc(n * sizeof *want), nb_want = 0, m_got = 0, nb_got = 0;
    uint32_t *got = malloc(n * sizeof *got);
    const size_t m_want = curve_later_rows(c.comp, c.bound, c.core, c.part, n, want, &nb_want);
    const int rc = kern_curve_later_rows(n, c.core, c.comp, c.bound, nparts > 1 ? c.part : NULL,
                                         got, &m_got, &nb_got);
    CHECK_MSG(rc == 0, "later rows, n %zu: %s", n, err_msg());
    CHECK_MSG(m_got == m_want && nb_got == nb_want,
              "later rows, n %zu, %u parts, %u%% open: %zu (%zu of the largest), host %zu (%zu)", n,
              nparts, pct, m_got, nb_got, m_want, nb_want);
    size_t bad = 0;
    for (size_t k = 0; rc == 0 && m_got == m_want && k < m_want + nb_want; k++)
        bad += got[k] != want[k];
    CHECK_MSG(bad == 0, "later rows, n %zu, %u parts, %u%% open: %zu rows differ", n, nparts, pct,
              bad);
    free(want);
    free(got);
    later_case_free(&c);
}

TEST(later_rows_on_the_device_equal_the_hosts)
{
    need_gpu();
    uint64_t rng = 11;
    static const size_t ns[] = {1, 2, 37, 5000, 65537, 300000};
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++)
        for (uint32_t parts = 1; parts <= 64; parts *= 8)
            for (uint32_t pct = 5; pct <= 95; pct += 45)
                later_on_device(&rng, ns[k],
                                ns[k] < 50 ? (uint32_t)(ns[k] / 2 + 1) : (uint32_t)(ns[k] / 40),
                                parts, pct);
    /* two of the greatest size: the first to reach it (component 1, at
     * row 4; component 0 reaches it at row 5) is the largest, left last */
    {
        later_case_in c = later_case_make(&rng, 8, 8, 1, 100);
        static const uint32_t comp[8] = {0, 1, 0, 1, 1, 0, 6, 6};
        for (size_t i = 0; i < 8; i++) {
            c.comp[i] = comp[i];
            c.core[i] = 0.5;
            c.bound[i].w = 1.0;
        }
        uint32_t got[8];
        size_t m = 0, mb = 0;
        CHECK_MSG(kern_curve_later_rows(8, c.core, c.comp, c.bound, NULL, got, &m, &mb) == 0, "%s",
                  err_msg());
        CHECK_MSG(m == 5 && mb == 3 && got[0] == 0 && got[1] == 2 && got[2] == 5 && got[5] == 1 &&
                      got[6] == 3 && got[7] == 4,
                  "ties: %zu rows, %zu of the largest", m, mb);
        later_case_free(&c);
    }
    later_on_device(&rng, 1000, 1, 1, 100); /* one component: nothing to query */
    later_on_device(&rng, 4000, 2, 1, 100);
    later_on_device(&rng, 4000, 40, 8, 100);
}

/* Every pair of a PAIRS run, as (a << 32 | b, a < b) keys and d2. */
typedef struct pair_log {
    uint64_t *key;
    double *d2;
    size_t m, cap;
} pair_log;

static int log_put(void *ctx, const pair_batch *b)
{
    pair_log *l = ctx;
    for (size_t k = 0; k < b->k; k++) {
        const uint32_t i = b->i[k], j = b->j[k];
        if (i == j)
            continue;
        if (l->m == l->cap) {
            l->cap = l->cap ? 2 * l->cap : 4096;
            l->key = xrealloc(l->key, l->cap * sizeof *l->key);
            l->d2 = xrealloc(l->d2, l->cap * sizeof *l->d2);
        }
        l->key[l->m] = i < j ? (uint64_t)i << 32 | j : (uint64_t)j << 32 | i;
        l->d2[l->m++] = b->d2[k];
    }
    return 0;
}

typedef struct keyed {
    uint64_t key;
    double d2;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    return a->key < b->key ? -1 : a->key > b->key;
}

/* Each point's k-th least d2 over its distinct other rows in eng's PAIRS
 * run at max (+inf where fewer or above max^2), ascending: what the
 * curve's core2 must hold. The same pair's two orders must agree. */
static void core_from_pairs(const char *eng, const dataset *ds, size_t k, double max,
                            const engine_opts *o, double *core)
{
    const size_t n = ds->n;
    pair_log l = {0};
    join_spec js = {.ds = ds,
                    .eps = max,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = o,
                    .sink = {log_put, &l}};
    join_result jr;
    CHECK_MSG(engine_run(engine_find(eng), &js, &jr) == 0, "%s: %s", eng, err_msg());
    keyed *p = xmalloc((l.m ? l.m : 1) * sizeof *p);
    for (size_t t = 0; t < l.m; t++)
        p[t] = (keyed){l.key[t], l.d2[t]};
    qsort(p, l.m, sizeof *p, cmp_keyed);
    size_t u = 0;
    for (size_t t = 0; t < l.m; t++) {
        if (u && p[u - 1].key == p[t].key) {
            CHECK_MSG(p[u - 1].d2 == p[t].d2, "%s: pair %llu's orders differ", eng,
                      (unsigned long long)p[t].key);
            continue;
        }
        p[u++] = p[t];
    }
    size_t *start = xcalloc(n + 1, sizeof *start), *fill = xcalloc(n, sizeof *fill);
    for (size_t t = 0; t < u; t++) {
        start[(p[t].key >> 32) + 1]++;
        start[(uint32_t)p[t].key + 1]++;
    }
    for (size_t i = 0; i < n; i++)
        start[i + 1] += start[i];
    double *v = xmalloc((2 * u + 1) * sizeof *v);
    for (size_t t = 0; t < u; t++) {
        const size_t a = p[t].key >> 32, b = (uint32_t)p[t].key;
        v[start[a] + fill[a]++] = p[t].d2;
        v[start[b] + fill[b]++] = p[t].d2;
    }
    for (size_t i = 0; i < n; i++) {
        qsort(v + start[i], fill[i], sizeof *v, cmp_d);
        core[i] = fill[i] >= k ? v[start[i] + k - 1] : INFINITY;
        if (!(core[i] <= max * max))
            core[i] = INFINITY;
    }
    qsort(core, n, sizeof *core, cmp_d);
    free(v);
    free(start);
    free(fill);
    free(p);
    free(l.key);
    free(l.d2);
}

static void core_of_set(int k, const dataset *ds, double max, const engine_opts *o, void *ctx)
{
    (void)k;
    (void)ctx;
    const char *engs[] = {"exact", "fasted"};
    for (size_t m = 2; m <= 10; m += m == 2 ? 3 : 5)
        for (int t = 0; t < 2; t++) {
            dbscan_curve c;
            CHECK_MSG(curve(engs[t], ds, m, max, o, 0, &c) == 0, "%s: %s", ds->name, err_msg());
            CHECK_MSG(c.core_device, "%s %s: the core distances took the k-distance", ds->name,
                      engs[t]);
            double *want = xmalloc(ds->n * sizeof *want);
            core_from_pairs(engs[t], ds, m - 1, max, o, want);
            CHECK_MSG(same_d(c.core2, want, ds->n), "%s %s minpts %zu: core distances differ",
                      ds->name, engs[t], m);
            free(want);
            /* the K nearest from the device's heaps against the host
             * sink's over the same join: the same lists, rounds and curve */
            dbscan_curve h;
            CHECK_MSG(curve_route(engs[t], ds, m, max, o, R_CORE_SINK, SIZE_MAX, &h) == 0, "%s",
                      err_msg());
            CHECK_MSG(!h.core_device && h.knn == c.knn && c.knn > 0 && h.rounds == c.rounds,
                      "%s %s minpts %zu: host knn %zu rounds %d, device knn %zu rounds %d",
                      ds->name, engs[t], m, h.knn, h.rounds, c.knn, c.rounds);
            same_curve("host K nearest", engs[t], m, ds, &c, &h);
            dbscan_curve_free(&h);
            if (t == 0) { /* exact: the whole curve as from its k-distance */
                dbscan_curve b;
                CHECK_MSG(curve_route("exact", ds, m, max, o, R_CORE_KDIST, SIZE_MAX, &b) == 0,
                          "%s", err_msg());
                CHECK(!b.core_device);
                CHECK_MSG(same_d(c.core2, b.core2, ds->n) && same_d(c.reach2, b.reach2, ds->n) &&
                              c.nedge == b.nedge && same_d(c.edge2, b.edge2, c.nedge),
                          "%s minpts %zu: the curve differs from its k-distance's", ds->name, m);
                dbscan_curve_free(&b);
            }
            dbscan_curve_free(&c);
        }
    /* minPts past the lists' 64 nearest (no lists: K = k): the consumer's
     * sets of four and eight slots a lane (kern_curve_core.cu,
     * kcc_by_slots), at a max wide enough that most sets fill */
    const double wide = quantile(ds, 0.15);
    for (size_t m = 100; m <= 200 && m < ds->n; m += 100)
        for (int t = 0; t < 2; t++) {
            dbscan_curve c;
            CHECK_MSG(curve(engs[t], ds, m, wide, o, 0, &c) == 0, "%s: %s", ds->name, err_msg());
            CHECK_MSG(c.core_device && c.knn == 0, "%s %s minpts %zu: device %d, knn %zu", ds->name,
                      engs[t], m, c.core_device, c.knn);
            double *want = xmalloc(ds->n * sizeof *want);
            core_from_pairs(engs[t], ds, m - 1, wide, o, want);
            CHECK_MSG(same_d(c.core2, want, ds->n), "%s %s minpts %zu: core distances differ",
                      ds->name, engs[t], m);
            free(want);
            dbscan_curve_free(&c);
        }
}

TEST(core_distances_from_the_join)
{
    need_gpu();
    for_each_set(core_of_set, NULL);
}

/* n values with ties (a few hundred distinct), negatives, both zeros and
 * +inf. The host's sorts (src/sort_f64.h) are the reference for the
 * values; the order is checked for what it must be. */
static void sort_values(double *v, size_t n, uint64_t seed)
{
    rng = seed;
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = (uint64_t)(runit() * 1000);
        v[i] = r == 0 ? INFINITY : r == 1 ? -0.0 : r == 2 ? 0.0 : ((double)(r % 300) - 40) * 0.125;
    }
}

TEST(device_sorts_equal_the_host)
{
    need_gpu();
    const size_t sizes[] = {0, 1, 2, 1000, 70000};
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
        const size_t n = sizes[z];
        double *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
        double *w = malloc((n + 1) * sizeof *w), *x = malloc((n + 1) * sizeof *x);
        double *y = malloc((n + 1) * sizeof *y);
        uint32_t *od = malloc((n + 1) * sizeof *od);
        sort_values(a, n, 5 + z);
        memcpy(b, a, n * sizeof *a);
        sort_values(w, n, 50 + z);
        sort_values(x, n, 500 + z);
        memcpy(y, x, n * sizeof *x);
        /* the curve's three jobs: an order, two sorts in place */
        const kern_sort_job jobs[3] = {{w, n, od}, {a, n, NULL}, {x, n, NULL}};
        CHECK_MSG(kern_sort_f64(0, jobs, 3) == 0, "n %zu: %s", n, err_msg());
        sort_f64(b, n);
        sort_f64(y, n);
        /* values as the host's (== : -0.0 and +0.0 alike, kern_sort.h);
         * the order a permutation, ascending, and stable among equal bits */
        size_t bad = 0;
        uint8_t *seen = calloc(n + 1, 1);
        for (size_t i = 0; i < n; i++) {
            bad += !(a[i] == b[i]) || !(x[i] == y[i]) || od[i] >= n || seen[od[i]]++;
            if (i + 1 < n && od[i] < n && od[i + 1] < n) {
                const double u = w[od[i]], v = w[od[i + 1]];
                bad += !(u <= v) || (memcmp(&u, &v, 8) == 0 && od[i] > od[i + 1]);
            }
        }
        free(seen);
        CHECK_MSG(bad == 0, "n %zu: %zu places out of order or unlike the host's", n, bad);
        free(a);
        free(b);
        free(w);
        free(x);
        free(y);
        free(od);
    }
}
