/* DBSCAN against an independent FP64 DBSCAN written here.
 *
 * Test plan:
 *  1. oracle: scikit-learn's dbscan_inner as a breadth-first search over a
 *     neighbourhood in CSR form; for cpu the neighbourhood is brute force
 *     in the direct (a-b)^2 form in FP64 (d2 <= eps*eps, the join's test),
 *     for each CPU emulation engine that engine's own pair set (collected
 *     from a PAIRS run), so each engine is checked on its own eps-graph.
 *  2. dbscan_run equals the oracle label for label (and core flag for core
 *     flag) on generated data: blobs, uniform, duplicates, points exactly
 *     at eps (integer grids, eps an integer), one point, all noise, one
 *     cluster; and on the shared datasets (subsampled), for cpu with
 *     several threads and small pair batches (the union-find under
 *     concurrent sinks) and for each CPU emulation engine.
 *  3. the counts and sizes of the summary against the labels; the red
 *     flags on data built to raise each.
 *  4. dbscan_compare's adjusted Rand index against the pair-counting form
 *     (every pair of points counted), changed points on a relabelling.
 *  5. bad input: minpts 0 and above n, no dataset, negative eps.
 *  6. dbscan curve against dbscan_run at a dozen eps and more: clusters,
 *     core, noise and the largest cluster's core points equal, at eps
 *     exactly on a forest weight or a core distance (ties) and one double
 *     below, on blobs, an integer grid and a shared dataset, minPts 1 too.
 *  7. the curve's forest against Kruskal's over every pair, for every
 *     route of its first round (the K nearest of the core join, K = 12,
 *     the k-distance route); and the routes agree value for value (the
 *     default, K = 12, 64, 8 and 0 against the core distances from the
 *     k-distance: src/cluster/curve_plan.h). */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "dbscan.h"
#include "curve_pick.h"
#include "dbscan_curve.h"
#include "pair_par.h"
#include "par.h"
#include "dbscan_out.h"
#include "engine.h"
#include "err.h"
#include "kdist.h"
#include "ofile.h"
#include "pair_collect.h"
#include "widen.h"

static uint64_t rng;
static uint64_t rnext(void)
{
    return t_splitmix(&rng);
}
static double runit(void)
{
    return (double)(rnext() >> 11) * 0x1p-53;
}
static double rgauss(void)
{
    double u = runit(), v = runit();
    return sqrt(-2 * log(u > 0 ? u : 0x1p-53)) * cos(2 * M_PI * v);
}

static dataset make_ds(size_t n, size_t d)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.name = "t";
    ds.v = calloc(n * d > 0 ? n * d : 1, sizeof(double));
    return ds;
}
#define X(ds, i, k) (((double *)(ds).v)[(i) * (ds).d + (k)])

/* k gaussian blobs of spread sd around centres in [0, 10)^d, and a tenth
 * of the points uniform (noise). */
static dataset blobs(size_t n, size_t d, int k, double sd, uint64_t seed)
{
    rng = seed;
    dataset ds = make_ds(n, d);
    double *c = malloc((size_t)k * d * sizeof *c);
    for (size_t j = 0; j < (size_t)k * d; j++)
        c[j] = 10 * runit();
    for (size_t i = 0; i < n; i++) {
        int u = rnext() % 10 == 0;
        size_t b = rnext() % (size_t)k;
        for (size_t j = 0; j < d; j++)
            X(ds, i, j) = u ? 10 * runit() : c[b * d + j] + sd * rgauss();
    }
    free(c);
    return ds;
}

/* ---- the oracle ---- */

typedef struct csr {
    size_t n;
    size_t *start; /* n+1 */
    uint32_t *nb;
} csr;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Brute force, direct form, FP64 in dimension order (t_d2's arithmetic,
 * over rows widened once): j in N(i) when d2(i, j) <= eps*eps. */
static csr csr_brute(const dataset *ds, double eps)
{
    csr g = {ds->n, calloc(ds->n + 1, sizeof(size_t)), NULL};
    size_t cap = 1024, m = 0, d = ds->d;
    g.nb = malloc(cap * sizeof *g.nb);
    double *x = malloc(ds->n * d * sizeof *x);
    dataset_rows_f64(ds, 0, ds->n, x);
    const double eps2 = eps * eps;
    for (size_t i = 0; i < ds->n; i++) {
        g.start[i] = m;
        for (size_t j = 0; j < ds->n; j++) {
            double s = 0;
            for (size_t k = 0; k < d; k++) {
                double u = x[i * d + k] - x[j * d + k];
                s += u * u;
            }
            if (s <= eps2) {
                if (m == cap)
                    g.nb = realloc(g.nb, (cap *= 2) * sizeof *g.nb);
                g.nb[m++] = (uint32_t)j;
            }
        }
    }
    g.start[ds->n] = m;
    free(x);
    return g;
}

/* An engine's own pair set; 0 when it refused the data (rc returned). */
static int csr_engine(const engine *e, const dataset *ds, double eps, const engine_opts *o, csr *g)
{
    collect c = {0};
    join_spec s = {.ds = ds, .eps = eps, .q0 = 0, .q1 = ds->n, .mode = JOIN_PAIRS, .opts = o};
    s.sink = (pair_sink){collect_put, &c};
    join_result r;
    int rc = engine_run(e, &s, &r);
    if (rc) {
        free(c.p);
        return rc;
    }
    qsort(c.p, c.len, sizeof *c.p, by_ij);
    g->n = ds->n;
    g->start = calloc(ds->n + 1, sizeof(size_t));
    g->nb = malloc((c.len ? c.len : 1) * sizeof *g->nb);
    size_t k = 0;
    for (size_t i = 0; i < ds->n; i++) {
        g->start[i] = k;
        while (k < c.len && c.p[k].i == i) {
            g->nb[k] = c.p[k].j;
            k++;
        }
    }
    g->start[ds->n] = k;
    free(c.p);
    return 0;
}

static void csr_free(csr *g)
{
    free(g->start);
    free(g->nb);
}

/* Is j in N(i) exactly when i is in N(j)? (The definitions treat the
 * eps-graph as undirected; every engine's pair set must be.) */
static int csr_symmetric(const csr *g)
{
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = g->start[i]; k < g->start[i + 1]; k++) {
            uint32_t j = g->nb[k];
            size_t lo = g->start[j], cnt = g->start[j + 1] - lo;
            uint32_t key = (uint32_t)i;
            if (!bsearch(&key, g->nb + lo, cnt, sizeof key, cmp_u32))
                return 0;
        }
    return 1;
}

/* scikit-learn's dbscan_inner: for each unlabelled core point in index
 * order a new cluster, grown depth-first through core points' neighbours. */
static void oracle(const csr *g, size_t minpts, int32_t *lab, uint8_t *core)
{
    size_t n = g->n;
    for (size_t i = 0; i < n; i++) {
        core[i] = g->start[i + 1] - g->start[i] >= minpts;
        lab[i] = -1;
    }
    uint32_t *stack = malloc((g->start[n] + n + 1) * sizeof *stack);
    int32_t next = 0;
    for (size_t s = 0; s < n; s++) {
        if (lab[s] != -1 || !core[s])
            continue;
        size_t top = 0;
        stack[top++] = (uint32_t)s;
        while (top) {
            uint32_t i = stack[--top];
            if (lab[i] != -1)
                continue;
            lab[i] = next;
            if (!core[i])
                continue;
            for (size_t k = g->start[i]; k < g->start[i + 1]; k++)
                if (lab[g->nb[k]] == -1)
                    stack[top++] = g->nb[k];
        }
        next++;
    }
    free(stack);
}

static size_t runs_checked;

/* dbscan_run on e against the oracle on g. */
static void check_against(const engine *e, const dataset *ds, double eps, size_t minpts,
                          const engine_opts *o, const csr *g, const char *what)
{
    size_t n = ds->n;
    int32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    uint8_t *wcore = malloc(n), *gcore = malloc(n);
    oracle(g, minpts, want, wcore);
    dbscan_spec sp = {
        .ds = ds, .eps = eps, .minpts = minpts, .opts = o, .labels = got, .core = gcore};
    dbscan_result *r = malloc(sizeof *r);
    int rc = dbscan_run(e, &sp, r);
    CHECK_MSG(rc == 0, "%s %s: %s", what, e->name, err_msg());
    if (rc == 0) {
        size_t bad = 0, first = n;
        for (size_t i = 0; i < n; i++)
            if (got[i] != want[i] || gcore[i] != wcore[i]) {
                if (!bad++)
                    first = i;
            }
        CHECK_MSG(bad == 0,
                  "%s %s eps %.17g minpts %zu: %zu of %zu labels differ, first point %zu: %d "
                  "(core %d), oracle %d (core %d)",
                  what, e->name, eps, minpts, bad, n, first, first < n ? got[first] : 0,
                  first < n ? gcore[first] : 0, first < n ? want[first] : 0,
                  first < n ? wcore[first] : 0);
        /* The summary against the labels. */
        size_t nc = 0, nn = 0, ncore = 0;
        for (size_t i = 0; i < n; i++) {
            nn += want[i] < 0;
            ncore += wcore[i];
            if (want[i] >= 0 && (size_t)want[i] + 1 > nc)
                nc = (size_t)want[i] + 1;
        }
        CHECK(r->clusters == nc && r->noise == nn && r->core == ncore &&
              r->border == n - nn - ncore && r->n == n);
        runs_checked++;
    }
    free(r);
    free(want);
    free(got);
    free(wcore);
    free(gcore);
}

extern const engine engine_cpu;

/* cpu on the brute-force graph, two threads and small batches (and one
 * thread, large batches, unless quick). */
static int quick;
static void check_cpu(const dataset *ds, double eps, size_t minpts, const char *what)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.batch_pairs = 64;
    csr g = csr_brute(ds, eps);
    check_against(&engine_cpu, ds, eps, minpts, &o, &g, what);
    o.threads = 1;
    o.batch_pairs = 0;
    if (!quick)
        check_against(&engine_cpu, ds, eps, minpts, &o, &g, what);
    csr_free(&g);
}

/* Every CPU emulation engine (cpu-*, no GPU) on its own pair set; those
 * that refuse the data (an unsigned format on negative data without
 * shift...) are skipped, but cpu-fp16 must run. */
static void check_emulations(const dataset *ds, double eps, size_t minpts, const char *what)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.int8_scale = 1;
    o.shift = 1;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (e->gpu || e == &engine_cpu || engine_available(e, &o) != 0)
            continue;
        csr g;
        int rc = csr_engine(e, ds, eps, &o, &g);
        if (rc) {
            CHECK_MSG(strcmp(e->name, "cpu-fp16") != 0, "%s: cpu-fp16 refused: %s", what,
                      err_msg());
            continue;
        }
        CHECK_MSG(csr_symmetric(&g), "%s: %s's pair set is not symmetric", what, e->name);
        check_against(e, ds, eps, minpts, &o, &g, what);
        csr_free(&g);
    }
}

/* eps at a quantile of the distances from the first rows to all. */
static double eps_quantile(const dataset *ds, double q)
{
    size_t rows = ds->n < 64 ? ds->n : 64, m = 0;
    double *v = malloc(rows * ds->n * sizeof *v);
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < ds->n; j++)
            if (j != i)
                v[m++] = t_d2(ds, i, j);
    int (*cmp)(const void *, const void *) = NULL;
    (void)cmp;
    /* selection by sorting: m is small */
    for (size_t a = 1; a < m; a++) {
        double x = v[a];
        size_t b = a;
        while (b > 0 && v[b - 1] > x) {
            v[b] = v[b - 1];
            b--;
        }
        v[b] = x;
    }
    double e = sqrt(v[(size_t)(q * (double)(m - 1))]);
    free(v);
    return e;
}

TEST(generated_data_equals_the_oracle)
{
    /* blobs in 2 and 5 dimensions, at eps giving few and many neighbours */
    for (int d = 2; d <= 5; d += 3) {
        dataset ds = blobs(400, (size_t)d, 5, 0.3, 11 + (uint64_t)d);
        for (double q = 0.003; q < 0.05; q *= 4)
            for (size_t m = 1; m <= 12; m += 5) {
                double eps = eps_quantile(&ds, q);
                check_cpu(&ds, eps, m, "blobs");
                if (m == 6)
                    check_emulations(&ds, eps, m, "blobs");
            }
        free(ds.v);
    }
    /* uniform in the unit cube */
    {
        rng = 5;
        dataset ds = make_ds(400, 3);
        for (size_t i = 0; i < ds.n * ds.d; i++)
            ((double *)ds.v)[i] = runit();
        check_cpu(&ds, 0.08, 4, "uniform");
        check_cpu(&ds, 0.15, 10, "uniform");
        check_emulations(&ds, 0.1, 5, "uniform");
        free(ds.v);
    }
    /* duplicates: each point three times, eps 0 and small */
    {
        rng = 7;
        dataset ds = make_ds(300, 4);
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < ds.d; k++)
                X(ds, i, k) = i % 3 ? X(ds, i - i % 3, k) : runit();
        check_cpu(&ds, 1e-300, 3, "duplicates at eps 1e-300");
        check_cpu(&ds, 1e-300, 4, "duplicates at eps 1e-300, minpts 4");
        check_cpu(&ds, 0.2, 6, "duplicates");
        check_emulations(&ds, 0.2, 6, "duplicates");
        free(ds.v);
    }
    /* exactly at eps: an integer grid with holes; neighbours at squared
     * distance exactly 1, 2, 4 are in at eps 1, sqrt(2)'s double, 2 */
    {
        rng = 9;
        dataset ds = make_ds(400, 2);
        size_t m = 0;
        for (int x = 0; x < 40 && m < ds.n; x++)
            for (int y = 0; y < 40 && m < ds.n; y++)
                if (rnext() % 3) {
                    X(ds, m, 0) = x;
                    X(ds, m, 1) = y;
                    m++;
                }
        ds.n = m;
        const double eps[] = {1, sqrt(2.0), 2};
        for (int k = 0; k < 3; k++)
            for (size_t mp = 2; mp <= 6; mp += 2) {
                check_cpu(&ds, eps[k], mp, "grid at eps");
                if (mp == 4)
                    check_emulations(&ds, eps[k], mp, "grid at eps");
            }
        free(ds.v);
    }
    /* a chain on a line at spacing exactly eps: one cluster end to end at
     * minpts 3, the two ends border points */
    {
        dataset ds = make_ds(50, 1);
        for (size_t i = 0; i < ds.n; i++)
            X(ds, i, 0) = (double)i * 0.5;
        check_cpu(&ds, 0.5, 3, "chain");
        int32_t lab[50];
        uint8_t core[50];
        dbscan_spec sp = {.ds = &ds, .eps = 0.5, .minpts = 3, .labels = lab, .core = core};
        dbscan_result r;
        CHECK(dbscan_run(&engine_cpu, &sp, &r) == 0);
        CHECK(r.clusters == 1 && r.core == 48 && r.border == 2 && r.noise == 0);
        free(ds.v);
    }
    /* one point: minpts 1 makes it a cluster, 2 noise */
    {
        dataset ds = make_ds(1, 3);
        check_cpu(&ds, 0.5, 1, "one point");
        int32_t lab[1];
        dbscan_spec sp = {.ds = &ds, .eps = 0.5, .minpts = 1, .labels = lab};
        dbscan_result r;
        CHECK(dbscan_run(&engine_cpu, &sp, &r) == 0 && lab[0] == 0 && r.clusters == 1);
        free(ds.v);
    }
    /* all noise, and one cluster */
    {
        dataset ds = blobs(300, 3, 3, 0.5, 3);
        check_cpu(&ds, 1e-3, 2, "all noise");
        check_cpu(&ds, 100, 5, "one cluster");
        int32_t *lab = malloc(ds.n * sizeof *lab);
        dbscan_spec sp = {.ds = &ds, .eps = 1e-3, .minpts = 2, .labels = lab};
        dbscan_result r;
        CHECK(dbscan_run(&engine_cpu, &sp, &r) == 0 && r.noise == ds.n && r.clusters == 0);
        CHECK(dbscan_flags(&r) == DBSCAN_FLAG_NO_CORE);
        sp.eps = 100;
        CHECK(dbscan_run(&engine_cpu, &sp, &r) == 0 && r.clusters == 1 && r.core == ds.n);
        CHECK(dbscan_flags(&r) == (DBSCAN_FLAG_ALL_CORE | DBSCAN_FLAG_ONE_CLUSTER));
        CHECK(r.ntop == 1 && r.top[0] == ds.n);
        free(lab);
        free(ds.v);
    }
    CHECK(runs_checked > 100);
}

/* The shared datasets, subsampled to their first 500 rows (150 of
 * olivetti's 4096 dimensions: brute force here is n^2 d). */
/* The generic path keeps its core pass's pairs where they fit its room:
 * one join, the union and the border from the kept pairs; with a room of
 * 100 pairs it joins again in passes 2 and 3. Both equal the oracle, and
 * the result says which joins ran. */
TEST(one_join_where_the_graph_fits)
{
    dataset ds = blobs(1500, 3, 5, 0.3, 77);
    const double eps = 0.4;
    const size_t minpts = 6;
    csr g = csr_brute(&ds, eps);
    size_t n = ds.n;
    int32_t *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    uint8_t *wcore = malloc(n), *gcore = malloc(n);
    oracle(&g, minpts, want, wcore);
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.batch_pairs = 64;
    for (int room = 0; room < 2; room++) {
        dbscan_keep_max_for_tests(room ? 100 : 0);
        dbscan_spec sp = {
            .ds = &ds, .eps = eps, .minpts = minpts, .opts = &o, .labels = got, .core = gcore};
        dbscan_result *r = malloc(sizeof *r);
        CHECK_MSG(dbscan_run(&engine_cpu, &sp, r) == 0, "%s", err_msg());
        CHECK(memcmp(got, want, n * sizeof *got) == 0 && memcmp(gcore, wcore, n) == 0);
        CHECK(r->ran[DBSCAN_PASS_CORE] && r->pass_mode[DBSCAN_PASS_CORE] == JOIN_PAIRS);
        CHECK_MSG(r->ran[DBSCAN_PASS_UNION] == room && r->ran[DBSCAN_PASS_BORDER] == room,
                  "room %d: union %d border %d", room, r->ran[DBSCAN_PASS_UNION],
                  r->ran[DBSCAN_PASS_BORDER]);
        CHECK(r->pairs == g.start[n]); /* the graph is larger than 100 pairs */
        free(r);
    }
    dbscan_keep_max_for_tests(0);
    free(want);
    free(got);
    free(wcore);
    free(gcore);
    csr_free(&g);
    free(ds.v);
}

TEST(shared_datasets_equal_the_oracle)
{
    static const struct {
        const char *file, *cols;
    } sets[] = {
        {"letter.csv", "1-16"},
        {"htru2.csv", "0-7"},
        {"kitti_000000_xyzr.f32", NULL},
        {"sift5k.fvecs", NULL},
        {"olivetti_400x4096_u8.npy", NULL},
    };
    for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
        load_opts lo;
        load_opts_init(&lo);
        load_opts_set(&lo, "limit", strstr(sets[k].file, "olivetti") ? "150" : "500");
        if (sets[k].cols)
            load_opts_set(&lo, "cols", sets[k].cols);
        if (strstr(sets[k].file, ".f32"))
            load_opts_set(&lo, "dim", "4");
        dataset ds;
        int rc = dataset_load(t_dataset(sets[k].file), &lo, &ds);
        quick = 1;
        CHECK_MSG(rc == 0, "%s: %s", sets[k].file, err_msg());
        if (rc)
            continue;
        size_t big = 2 * ds.d < 10 ? 10 : 2 * ds.d > ds.n ? ds.n / 8 : 2 * ds.d;
        for (double q = 0.005; q < 0.04; q *= 5) {
            double eps = eps_quantile(&ds, q);
            check_cpu(&ds, eps, 5, sets[k].file);
            check_cpu(&ds, eps, big, sets[k].file);
            if (ds.d <= 128 && q < 0.01)
                check_emulations(&ds, eps, 5, sets[k].file);
        }
        dataset_free(&ds);
    }
}

/* Pair counting: a = pairs together in both, b = together in A only,
 * c = in B only, d = apart in both; noise points are singletons. */
static double ari_pairs(const int32_t *x, const int32_t *y, size_t n)
{
    double a = 0, b = 0, c = 0, d = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int sx = x[i] >= 0 && x[i] == x[j], sy = y[i] >= 0 && y[i] == y[j];
            a += sx && sy;
            b += sx && !sy;
            c += !sx && sy;
            d += !sx && !sy;
        }
    double den = (a + b) * (b + d) + (a + c) * (c + d);
    return den == 0 ? 1.0 : 2 * (a * d - b * c) / den;
}

TEST(compare_ari_and_changed)
{
    dataset ds = blobs(400, 2, 4, 0.4, 21);
    int32_t *la = malloc(ds.n * sizeof *la), *lb = malloc(ds.n * sizeof *lb);
    uint8_t *ca = malloc(ds.n), *cb = malloc(ds.n);
    dbscan_result r;
    dbscan_spec sa = {.ds = &ds, .eps = 0.4, .minpts = 5, .labels = la, .core = ca};
    dbscan_spec sb = {.ds = &ds, .eps = 0.55, .minpts = 8, .labels = lb, .core = cb};
    CHECK(dbscan_run(&engine_cpu, &sa, &r) == 0);
    CHECK(dbscan_run(&engine_cpu, &sb, &r) == 0);
    dbscan_cmp c;
    dbscan_compare(la, ca, lb, cb, ds.n, &c);
    double want = ari_pairs(la, lb, ds.n);
    /* Both are sums of integers below 2^53 turned into one quotient by a
     * few roundings each: 1e-12 is far above them and far below any real
     * difference between formulas. */
    CHECK_MSG(fabs(c.ari - want) <= 1e-12, "ARI %.17g, pair counting %.17g", c.ari, want);
    CHECK(c.ari < 1);
    size_t ng = 0, nl = 0, cg = 0, cl = 0;
    for (size_t i = 0; i < ds.n; i++) {
        ng += la[i] >= 0 && lb[i] < 0;
        nl += la[i] < 0 && lb[i] >= 0;
        cg += !ca[i] && cb[i];
        cl += ca[i] && !cb[i];
    }
    CHECK(c.noise_gained == ng && c.noise_lost == nl && c.core_gained == cg && c.core_lost == cl);

    /* The same partition relabelled (clusters numbered backwards): ARI 1,
     * nothing changes after matching. */
    size_t ncl = 0;
    for (size_t i = 0; i < ds.n; i++)
        if (la[i] >= 0 && (size_t)la[i] + 1 > ncl)
            ncl = (size_t)la[i] + 1;
    for (size_t i = 0; i < ds.n; i++)
        lb[i] = la[i] < 0 ? -1 : (int32_t)(ncl - 1) - la[i];
    dbscan_compare(la, NULL, lb, NULL, ds.n, &c);
    CHECK(c.ari == 1.0 && c.changed == 0 && !c.have_core);
    /* Five points moved from their cluster to noise: five changed. */
    size_t moved = 0;
    for (size_t i = 0; i < ds.n && moved < 5; i++)
        if (lb[i] >= 0) {
            lb[i] = -1;
            moved++;
        }
    dbscan_compare(la, NULL, lb, NULL, ds.n, &c);
    CHECK(c.changed == 5 && c.noise_gained == 5);
    CHECK(fabs(c.ari - ari_pairs(la, lb, ds.n)) <= 1e-12);
    free(la);
    free(lb);
    free(ca);
    free(cb);
    free(ds.v);
}

TEST(bad_input_one_line_each)
{
    dataset ds = blobs(20, 2, 2, 0.3, 1);
    int32_t lab[20];
    dbscan_result r;
    dbscan_spec sp = {.ds = &ds, .eps = 0.5, .minpts = 0, .labels = lab};
    CHECK(dbscan_run(&engine_cpu, &sp, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "minpts must be 1 to n = 20");
    sp.minpts = 21;
    CHECK(dbscan_run(&engine_cpu, &sp, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "got 21");
    sp.minpts = 3;
    sp.eps = -1;
    CHECK(dbscan_run(&engine_cpu, &sp, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "eps");
    sp.eps = 0.5;
    sp.ds = NULL;
    CHECK(dbscan_run(&engine_cpu, &sp, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no dataset");
    free(ds.v);
}

/* The curve at eps against dbscan_run at eps. */
static void curve_vs_dbscan(const dbscan_curve *c, const dataset *ds, double eps, size_t minpts,
                            const char *what)
{
    size_t n = ds->n;
    int32_t *lab = malloc(n * sizeof *lab);
    uint8_t *core = malloc(n);
    dbscan_spec sp = {.ds = ds, .eps = eps, .minpts = minpts, .labels = lab, .core = core};
    dbscan_result *r = malloc(sizeof *r);
    CHECK_MSG(dbscan_run(&engine_cpu, &sp, r) == 0, "%s", err_msg());
    size_t cl, co, no, lg;
    dbscan_curve_at(c, eps, &cl, &co, &no, &lg);
    /* the largest cluster's core points, from the labels */
    size_t *sz = calloc(r->clusters + 1, sizeof *sz), big = 0;
    for (size_t i = 0; i < n; i++)
        if (core[i] && ++sz[lab[i]] > big)
            big = sz[lab[i]];
    CHECK_MSG(cl == r->clusters && co == r->core && no == r->noise && lg == big,
              "%s minpts %zu eps %.17g: curve clusters %zu core %zu noise %zu largest %zu, "
              "dbscan %zu %zu %zu %zu",
              what, minpts, eps, cl, co, no, lg, r->clusters, r->core, r->noise, big);
    free(sz);
    free(r);
    free(lab);
    free(core);
}

/* The cpu engine's curve of ds, two threads, batches of batch pairs (many
 * sink calls): dbscan_curve_run's code. */
/* The route the curve tests take (src/cluster/curve_plan.h): the K
 * nearest memory allows the core join (SIZE_MAX: what this machine has),
 * and the core distances from the k-distance instead of the join at max. */
static size_t t_room = SIZE_MAX;
static int t_kdist;

static int curve_cpu(const dataset *ds, size_t minpts, double max, size_t batch, dbscan_curve *c)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.batch_pairs = batch;
    dbscan_curve_spec sp = {.ds = ds, .minpts = minpts, .max = max, .opts = &o};
    curve_plan_in in;
    curve_plan p;
    dbscan_curve_plan_in(&engine_cpu, &sp, &in);
    if (t_room != SIZE_MAX)
        in.knn_room = t_room;
    if (curve_plan_choose(&in, &p))
        return TCJ_EUNSUP;
    if (t_kdist && p.core != CURVE_CORE_NONE) {
        p.core = CURVE_CORE_KDIST;
        p.knn = 0;
    }
    return dbscan_curve_run_plan(&engine_cpu, &sp, &p, c);
}

static void check_curve(const dataset *ds, size_t minpts, double max, const char *what)
{
    dbscan_curve c;
    CHECK_MSG(curve_cpu(ds, minpts, max, 256, &c) == 0, "%s: %s", what, err_msg());
    CHECK((c.rounds >= 1 || c.knn > 0) && c.nedge < ds->n);
    /* twelve eps spread over (0, max] */
    for (int k = 1; k <= 12; k++)
        curve_vs_dbscan(&c, ds, max * k / 12, minpts, what);
    /* on thresholds: forest weights and core distances, exactly and one
     * double below (where eps*eps falls under the weight) */
    for (size_t k = 0; k < c.nedge; k += c.nedge / 5 + 1) {
        double e = kdist_eps_for(c.edge2[k]);
        curve_vs_dbscan(&c, ds, e, minpts, what);
        if (nextafter(e, 0) > 0)
            curve_vs_dbscan(&c, ds, nextafter(e, 0), minpts, what);
    }
    for (size_t k = 0; k < ds->n && c.core2[k] <= c.max2; k += ds->n / 4 + 1)
        if (c.core2[k] > 0)
            curve_vs_dbscan(&c, ds, kdist_eps_for(c.core2[k]), minpts, what);
    /* the picked eps lies in its plateau, whose count it has */
    curve_pick p;
    CHECK(dbscan_curve_pick(&c, &p) == 0);
    double e = p.eps;
    if (e > 0) {
        size_t cl;
        dbscan_curve_at(&c, e, &cl, NULL, NULL, NULL);
        CHECK(e >= p.plateau.lo && e <= p.plateau.hi && cl == p.plateau.clusters &&
              p.plateau.clusters >= 1);
    }
    dbscan_curve_free(&c);
}

/* n points on the integers of [0, side)^2, drawn from seed. */
static dataset int_grid(size_t n, unsigned side, uint64_t seed)
{
    rng = seed;
    dataset g = make_ds(n, 2);
    for (size_t i = 0; i < g.n; i++) {
        X(g, i, 0) = (double)(rnext() % side);
        X(g, i, 1) = (double)(rnext() % side);
    }
    return g;
}

TEST(curve_equals_dbscan_at_every_eps)
{
    dataset b = blobs(500, 3, 5, 0.4, 31);
    check_curve(&b, 5, eps_quantile(&b, 0.05), "blobs");
    check_curve(&b, 1, eps_quantile(&b, 0.01), "blobs minpts 1");
    check_curve(&b, 12, eps_quantile(&b, 0.2), "blobs minpts 12");
    free(b.v);
    /* integer grid: core distances and weights exactly at integer eps */
    dataset g = int_grid(300, 25, 13);
    check_curve(&g, 4, 3, "grid");
    for (double e = 1; e <= 3; e++) {
        dbscan_curve c;
        dbscan_curve_spec sp = {.ds = &g, .minpts = 4, .max = 3};
        CHECK(dbscan_curve_run(&engine_cpu, &sp, &c) == 0);
        curve_vs_dbscan(&c, &g, e, 4, "grid at an integer");
        dbscan_curve_free(&c);
    }
    free(g.v);
    load_opts lo;
    load_opts_init(&lo);
    load_opts_set(&lo, "limit", "800");
    load_opts_set(&lo, "dim", "4");
    dataset k;
    if (dataset_load(t_dataset("kitti_000000_xyzr.f32"), &lo, &k) == 0) {
        check_curve(&k, 8, 0.5, "kitti");
        dataset_free(&k);
    } else {
        CHECK_MSG(0, "kitti: %s", err_msg());
    }
    /* bad input */
    dbscan_curve c;
    dbscan_curve_spec sp = {.ds = NULL, .minpts = 4, .max = 1};
    CHECK(dbscan_curve_run(&engine_cpu, &sp, &c) == TCJ_EINVAL);
}

/* The minimum spanning forest of the mutual-reachability weights
 * max(c_i, c_j, d2_ij) <= max2 by Kruskal over every pair (an independent
 * computation: brute-force core distances and distances, direct form in
 * FP64, one sort): its weights ascending into w (n - 1 slots), the count
 * returned. */
static int cmp_wedge(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static uint32_t kr_root(uint32_t *p, uint32_t x)
{
    while (p[x] != x)
        x = p[x] = p[p[x]];
    return x;
}

static size_t mst_brute(const dataset *ds, size_t minpts, double max2, double *w)
{
    const size_t n = ds->n, d = ds->d;
    double *x = malloc(n * d * sizeof *x), *d2 = malloc(n * n * sizeof *d2);
    double *core = malloc(n * sizeof *core), *row = malloc(n * sizeof *row);
    dataset_rows_f64(ds, 0, n, x);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double sum = 0;
            for (size_t k = 0; k < d; k++) {
                const double u = x[i * d + k] - x[j * d + k];
                sum += u * u;
            }
            d2[i * n + j] = sum;
        }
    for (size_t i = 0; i < n; i++) { /* the (minpts-1)-th nearest other point */
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                row[m++] = d2[i * n + j];
        qsort(row, m, sizeof *row, cmp_wedge);
        core[i] = minpts > 1 ? row[minpts - 2] : 0;
    }
    /* (weight, i, j) triples, i < j, within max2 */
    double(*e)[3] = malloc(n * (n - 1) / 2 * sizeof *e);
    size_t ne = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double v = d2[i * n + j];
            v = v > core[i] ? v : core[i];
            v = v > core[j] ? v : core[j];
            if (v <= max2) {
                e[ne][0] = v;
                e[ne][1] = (double)i;
                e[ne][2] = (double)j;
                ne++;
            }
        }
    qsort(e, ne, sizeof *e, cmp_wedge);
    uint32_t *p = malloc(n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint32_t)i;
    size_t nf = 0;
    for (size_t k = 0; k < ne; k++) {
        const uint32_t a = kr_root(p, (uint32_t)e[k][1]), b = kr_root(p, (uint32_t)e[k][2]);
        if (a != b) {
            p[a > b ? a : b] = a < b ? a : b;
            w[nf++] = e[k][0];
        }
    }
    free(p);
    free(e);
    free(x);
    free(d2);
    free(core);
    free(row);
    return nf;
}

/* The curve's forest (Boruvka rounds, a point's cheapest edges kept
 * between joins) against Kruskal's: the same number of edges, and the
 * same weights in ascending order. Every minimum spanning forest has the
 * same sorted weights, whatever breaks ties; and the k-th smallest forest
 * weight moves by no more than the largest change of any weight (it is a
 * minimax over paths), so the engine's d2, summed in another order than
 * the oracle's, may differ from it by d rounding errors of the sum at
 * most: |w - w'| <= 2 d u w, u = 2^-53. */
static void check_forest(const dataset *ds, size_t minpts, double max, const char *what)
{
    dbscan_curve c;
    CHECK_MSG(curve_cpu(ds, minpts, max, 512, &c) == 0, "%s: %s", what, err_msg());
    double *w = malloc(ds->n * sizeof *w);
    const size_t nf = mst_brute(ds, minpts, max * max, w);
    CHECK_MSG(c.nedge == nf, "%s: %zu forest edges, Kruskal %zu", what, c.nedge, nf);
    size_t bad = 0;
    const double tol = 2.0 * (double)ds->d * 0x1p-53;
    for (size_t k = 0; k < nf && k < c.nedge; k++)
        bad += fabs(c.edge2[k] - w[k]) > tol * w[k];
    CHECK_MSG(bad == 0, "%s: %zu of %zu forest weights differ from Kruskal's", what, bad, nf);
    printf("# %-16s n %zu minpts %zu: %zu forest edges in %d joins\n", what, ds->n, minpts, nf,
           c.rounds);
    free(w);
    dbscan_curve_free(&c);
}

/* The same forests with every sink batch's work split over three ranges
 * of points (src/pair_par.h, as on a machine of many cores). */
static void forests(void)
{
    dataset b = blobs(600, 3, 6, 0.4, 41);
    check_forest(&b, 5, eps_quantile(&b, 0.05), "blobs");
    check_forest(&b, 12, eps_quantile(&b, 0.3), "blobs minpts 12");
    free(b.v);
    /* uniform: the lists decide most rounds, a later join the rest */
    rng = 7;
    dataset u = make_ds(1500, 4);
    for (size_t i = 0; i < u.n * u.d; i++)
        ((double *)u.v)[i] = runit();
    check_forest(&u, 10, eps_quantile(&u, 0.02), "uniform");
    check_forest(&u, 3, eps_quantile(&u, 0.5), "uniform wide");
    free(u.v);
    /* an integer grid: many equal weights (ties broken by index) */
    dataset g = int_grid(400, 20, 17);
    check_forest(&g, 4, 3, "grid");
    check_forest(&g, 9, 2, "grid minpts 9");
    free(g.v);
}

TEST(curve_forest_equals_kruskal)
{
    forests();
    pair_par_for_tests(1, 3);
    forests();
    pair_par_for_tests(0, 0);
    /* the merging's scans, links (compare-and-swap) and sorts split over
     * ranges on threads, as at 10^6 points (src/par.h) */
    par_for_tests(1);
    forests();
    par_for_tests(0);
    /* the first round from each point's 12 nearest (more left to the
     * later joins), and a join of its own (the k-distance route) */
    t_room = 12;
    forests();
    t_room = SIZE_MAX;
    t_kdist = 1;
    forests();
    t_kdist = 0;
}

static int same_vals(const double *a, const double *b, size_t m)
{
    for (size_t k = 0; k < m; k++)
        if (!(a[k] == b[k]))
            return 0;
    return 1;
}

/* ds's curve with room for `room` nearest a row (SIZE_MAX: what memory
 * allows) against the k-distance route's, every value: cpu's k-distances
 * are the FP64 direct form its join compares, so the core distances, and
 * with them every weight, are the same doubles whichever route gives
 * them. want_knn: the route kept each point's K nearest (the first
 * round's lists). */
static void route_vs_kdist(const dataset *ds, size_t minpts, double max, size_t room, int want_knn,
                           const char *what)
{
    dbscan_curve a, b;
    t_room = room;
    CHECK_MSG(curve_cpu(ds, minpts, max, 300, &a) == 0, "%s: %s", what, err_msg());
    t_room = SIZE_MAX;
    t_kdist = 1;
    CHECK_MSG(curve_cpu(ds, minpts, max, 300, &b) == 0, "%s: %s", what, err_msg());
    t_kdist = 0;
    CHECK_MSG((a.knn > 0) == want_knn && b.knn == 0, "%s minpts %zu room %zu: knn %zu / %zu", what,
              minpts, room, a.knn, b.knn);
    CHECK_MSG(a.nedge == b.nedge && a.nbig == b.nbig &&
                  same_vals(a.edge2, b.edge2, a.nedge < b.nedge ? a.nedge : b.nedge) &&
                  same_vals(a.core2, b.core2, ds->n) && same_vals(a.reach2, b.reach2, ds->n) &&
                  same_vals(a.big_at, b.big_at, a.nbig < b.nbig ? a.nbig : b.nbig),
              "%s minpts %zu room %zu: the curve differs from the k-distance route's (edges %zu / "
              "%zu)",
              what, minpts, room, a.nedge, b.nedge);
    if (a.nbig == b.nbig) {
        int ok = 1;
        for (size_t k = 0; k < a.nbig; k++)
            ok &= a.big[k] == b.big[k];
        CHECK_MSG(ok, "%s minpts %zu: largest-cluster steps differ", what, minpts);
    }
    /* fewer joins: the first round needs none of its own */
    if (want_knn)
        CHECK_MSG(a.rounds <= b.rounds, "%s minpts %zu: %d joins against %d", what, minpts,
                  a.rounds, b.rounds);
    dbscan_curve_free(&a);
    dbscan_curve_free(&b);
}

/* The curve's routes agree value for value: the default (core distances
 * and each point's K nearest from the join at max through the host sink,
 * src/cluster/curve_knn.c), K = 12 and 64 and a K of 0 (none: the k-distance
 * route), against the core distances from the k-distance; on blobs, uniform rows, an
 * integer grid (ties at every distance: at D_p too) and repeated rows
 * (zero distances), minPts 2, 5, 12. */
TEST(curve_routes_agree)
{
    dataset sets[4];
    double maxs[4];
    sets[0] = blobs(500, 3, 5, 0.4, 31);
    maxs[0] = eps_quantile(&sets[0], 0.05);
    rng = 9;
    sets[1] = make_ds(1200, 6);
    for (size_t i = 0; i < sets[1].n * sets[1].d; i++)
        ((double *)sets[1].v)[i] = runit();
    maxs[1] = eps_quantile(&sets[1], 0.05);
    sets[2] = int_grid(400, 20, 17);
    maxs[2] = 3;
    sets[3] = make_ds(300, 2);
    for (size_t i = 0; i < sets[3].n; i++) { /* 30 points, each 10 times */
        X(sets[3], i, 0) = (double)(i % 30 % 6);
        X(sets[3], i, 1) = (double)(i % 30 / 6);
    }
    maxs[3] = 1.5;
    const char *names[4] = {"blobs", "uniform", "grid", "repeated"};
    for (int t = 0; t < 4; t++)
        for (size_t m = 2; m <= 12; m += m == 2 ? 3 : 7) {
            route_vs_kdist(&sets[t], m, maxs[t], SIZE_MAX, 1, names[t]);
            route_vs_kdist(&sets[t], m, maxs[t], 12, 1, names[t]);
            route_vs_kdist(&sets[t], m, maxs[t], 64, 1, names[t]);
            route_vs_kdist(&sets[t], m, maxs[t], 0, 0, names[t]);
        }
    /* K below the core rank: no lists (minPts 12, K 8) */
    route_vs_kdist(&sets[0], 12, maxs[0], 8, 0, "blobs K 8");
    for (int t = 0; t < 4; t++)
        free(sets[t].v);
}

/* Labels files: .npy (read back by parsing its header), .csv and raw. */
TEST(label_files_read_back)
{
    int32_t lab[5] = {0, -1, 2, 1, -1};
    const char *names[3] = {"l.npy", "l.csv", "l.bin"};
    for (int k = 0; k < 3; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", t_tmpdir(), names[k]);
        ofile *of;
        CHECK(ofile_open(path, 1, NULL, &of) == 0);
        CHECK(dbscan_write_labels(of, path, lab, 5) == 0);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        unsigned char buf[512];
        size_t len = fread(buf, 1, sizeof buf, f);
        fclose(f);
        int32_t got[5];
        if (k == 0) {
            /* magic, version 1.0, header length; data at a multiple of 64 */
            CHECK(len > 10 && memcmp(buf, "\x93NUMPY\x01\x00", 8) == 0);
            size_t hl = buf[8] | (size_t)buf[9] << 8;
            CHECK((10 + hl) % 64 == 0 && buf[10 + hl - 1] == '\n');
            CHECK(memmem(buf + 10, hl, "'descr': '<i4'", 14) != NULL);
            CHECK(memmem(buf + 10, hl, "'shape': (5,)", 13) != NULL);
            CHECK(len == 10 + hl + sizeof lab);
            memcpy(got, buf + 10 + hl, sizeof got);
            CHECK(memcmp(got, lab, sizeof lab) == 0);
        } else if (k == 1) {
            buf[len < sizeof buf ? len : sizeof buf - 1] = 0;
            CHECK(strcmp((char *)buf, "label\n0\n-1\n2\n1\n-1\n") == 0);
        } else {
            CHECK(len == sizeof lab && memcmp(buf, lab, sizeof lab) == 0);
        }
    }
}

static int cmp_size_down(const void *a, const void *b)
{
    const size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Numbering and summary over the cores (par_for splits the numbering
 * from 2^14 rows, NUM_WEIGHT, the summary from 2^20)
 * against one walk in row order: 3·10^6 rows in components whose root is
 * their smallest core row (one holding most rows, many small ones, some
 * of one row), borders pointing at a root or at nothing (noise). The
 * labels equal the walk's row for row; the counts, the size histogram
 * and the top sizes equal those of the labels counted directly and the
 * sizes sorted. */
TEST(number_and_summary_over_the_cores_equal_one_walk)
{
    const size_t n = 3000000;
    uint8_t *core = malloc(n);
    uint32_t *root = malloc(n * sizeof *root);
    int32_t *lab = malloc(n * sizeof *lab), *want = malloc(n * sizeof *want);
    uint64_t z = 17;
    uint32_t big = UINT32_MAX, last_small = UINT32_MAX;
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = t_splitmix(&z) % 100;
        core[i] = r < 80;
        if (r < 60) { /* the big component */
            if (big == UINT32_MAX)
                big = (uint32_t)i;
            root[i] = big;
        } else if (r < 80) { /* small ones: a new root, or the last one's */
            if (last_small == UINT32_MAX || r < 64)
                last_small = (uint32_t)i;
            root[i] = last_small;
        } else if (r < 95) { /* a border: some root at or before it */
            root[i] = r < 88 || last_small == UINT32_MAX ? big : last_small;
        } else {
            root[i] = UINT32_MAX; /* noise */
        }
    }
    int32_t next = 0; /* the walk */
    for (size_t i = 0; i < n; i++)
        if (core[i] && root[i] == i)
            want[i] = next++;
    for (size_t i = 0; i < n; i++)
        if (!(core[i] && root[i] == i))
            want[i] = root[i] >= n ? -1 : want[root[i]];
    dbscan_number(core, root, n, lab);
    CHECK(!memcmp(lab, want, n * sizeof *lab));
    CHECK(next > 1000);
    dbscan_result r;
    memset(&r, 0, sizeof r);
    dbscan_summarize(lab, core, n, &r);
    size_t *sz = calloc((size_t)next, sizeof *sz), noise = 0, nc = 0;
    for (size_t i = 0; i < n; i++) {
        noise += want[i] < 0;
        nc += core[i];
        if (want[i] >= 0)
            sz[want[i]]++;
    }
    CHECK_EQ_INT(r.clusters, (size_t)next);
    CHECK_EQ_INT(r.noise, noise);
    CHECK_EQ_INT(r.core, nc);
    CHECK_EQ_INT(r.border, n - noise - nc);
    size_t hist[DBSCAN_SIZE_BINS] = {0};
    for (int32_t c = 0; c < next; c++) {
        int b = 0;
        while (b + 1 < DBSCAN_SIZE_BINS && sz[c] >> (b + 1))
            b++;
        hist[b]++;
    }
    CHECK(!memcmp(hist, r.size_hist, sizeof hist));
    qsort(sz, (size_t)next, sizeof *sz, cmp_size_down);
    CHECK_EQ_INT(r.ntop, DBSCAN_TOP);
    CHECK(!memcmp(r.top, sz, DBSCAN_TOP * sizeof *sz));
    CHECK(sz[0] > n / 2 && sz[DBSCAN_TOP - 1] < sz[0]);
    free(sz);
    free(core);
    free(root);
    free(lab);
    free(want);
}
