/* GPU tests of HDBSCAN* (src/cluster/hdbscan.h) on the curve's forest.
 *
 * Test plan:
 *  1. exact's HDBSCAN* equals the cpu engine's bit for bit: labels,
 *     probabilities, GLOSH scores and the tree's weight (exact's squared
 *     distances are fp64's direct form, cpu's too, and ties are broken by
 *     (weight, smaller end, larger end) on both), by excess of mass and by
 *     leaves, min_samples 1, 5 and the default, on blobs of three
 *     densities in a uniform background (d = 2, 16 and 784, where the
 *     rounds' pass promotes on wgmma), rows repeated 25
 *     times (zero distances: lambda inf), an integer lattice (ties in
 *     every weight) and the shared sets' first rows (letter's integer
 *     features, htru2, the KITTI scan: exact over its FP64 grid there, and
 *     over its tensor-core pass too), each with its pairs consumed on the
 *     device (curve-route auto) and through the host sink (host); exact
 *     takes every Borůvka round beyond the forest on the device above
 *     its grid dimensions (its masked nearest-neighbour pass, screened by
 *     its error bound and decided in FP64), the host's k-d tree at or
 *     below them.
 *  2. exact's device rounds equal cpu's tree bit for bit however they are
 *     taken (TCJOIN_MST_ROUNDS): whole Borůvka rounds alone (0), partial
 *     rounds (the smallest components searching) down to three components
 *     and then the pair round (3), the pair round at 1024 components
 *     whatever the rows (1024; forced, its pass goes in bands of one
 *     group of row tiles), and by default; the pair round takes
 *     fewer rounds than whole rounds on some set, so it ran.
 *  3. fasted's HDBSCAN* is the same on both routes (one engine's
 *     distances), its labels in range.
 * Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "curve_plan.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "exact_path.h"
#include "exact_predict.h" /* EXACT_GRID_MAX_D */
#include "hdbscan.h"
#include "kernels.h"
#include "mem.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static uint64_t rng = 29;
static double runit(void)
{
    return (double)(t_splitmix(&rng) >> 11) * 0x1p-53;
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

/* 3000 rows: blobs of sd 0.05, 0.3 and 1 four apart, and a tenth uniform
 * over the box. */
static dataset densities(size_t d)
{
    const size_t n = 3000;
    const double sd[3] = {0.05, 0.3, 1.0};
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = i % 10 == 9 ? 14 * runit() - 2
                                       : 4.0 * (double)(i % 3) * (k == 0) + sd[i % 3] * rnorm();
    char name[32];
    snprintf(name, sizeof name, "densities d%zu", d);
    dataset ds = from(name, x, n, d);
    free(x);
    return ds;
}

static dataset repeated(void)
{
    const size_t n = 2000, d = 8;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = i % 25 ? x[(i - i % 25) * d + k] : 3 * runit();
    dataset ds = from("repeated", x, n, d);
    free(x);
    return ds;
}

static dataset lattice(void)
{
    const size_t side = 45, n = side * side, d = 2;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        /* holes make densities differ */
        const size_t a = i / side, b = i % side;
        x[i * d] = (double)a + ((a / 9) % 2 ? 3.0 : 0.0);
        x[i * d + 1] = (double)b;
    }
    dataset ds = from("lattice", x, n, d);
    free(x);
    return ds;
}

static int run(const char *name, const dataset *ds, size_t mcs, size_t ms, hdbscan_method m,
               const engine_opts *o, hdbscan_result *r)
{
    const engine *e = engine_find(name);
    if (!e)
        return err_set(TCJ_EINVAL, "no engine %s", name);
    hdbscan_spec s = {.ds = ds, .min_cluster_size = mcs, .min_samples = ms, .method = m, .opts = o};
    return hdbscan_run(e, &s, r);
}

/* The two results equal bit for bit. */
static void same(const hdbscan_result *a, const hdbscan_result *b, const char *what)
{
    const hdbscan_tree *x = &a->tree, *y = &b->tree;
    CHECK_MSG(x->n == y->n && x->nclusters == y->nclusters && x->weight == y->weight,
              "%s: %zu clusters, weight %.17g; against %zu, %.17g", what, x->nclusters, x->weight,
              y->nclusters, y->weight);
    size_t lab = 0, pr = 0, sc = 0, first = SIZE_MAX;
    for (size_t i = 0; i < x->n && i < y->n; i++) {
        const int dl = x->labels[i] != y->labels[i];
        lab += dl;
        pr += memcmp(&x->prob[i], &y->prob[i], sizeof(double)) != 0;
        sc += memcmp(&x->score[i], &y->score[i], sizeof(double)) != 0;
        if ((dl || pr || sc) && first == SIZE_MAX)
            first = i;
    }
    CHECK_MSG(lab == 0 && pr == 0 && sc == 0,
              "%s: %zu labels, %zu probabilities, %zu scores differ (first at %zu: label %d "
              "against %d)",
              what, lab, pr, sc, first, first < x->n ? x->labels[first] : 0,
              first < y->n ? y->labels[first] : 0);
}

static void exact_vs_cpu(const dataset *ds, const engine_opts *base, const char *what)
{
    const struct {
        size_t mcs, ms;
        hdbscan_method m;
    } cases[] = {
        {10, 5, HDBSCAN_EOM}, {5, 0, HDBSCAN_EOM}, {15, 1, HDBSCAN_EOM}, {10, 5, HDBSCAN_LEAF}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        hdbscan_result want;
        if (run("cpu", ds, cases[c].mcs, cases[c].ms, cases[c].m, NULL, &want)) {
            CHECK_MSG(0, "%s: cpu: %s", what, err_msg());
            continue;
        }
        for (int route = 0; route < 2; route++) {
            engine_opts o;
            if (base)
                o = *base;
            else
                engine_opts_default(&o);
            o.curve_route = route ? CURVE_ROUTE_HOST : CURVE_ROUTE_AUTO;
            hdbscan_result got;
            char w[160];
            snprintf(w, sizeof w, "%s, min_cluster_size %zu, min_samples %zu, %s, route %s", what,
                     cases[c].mcs, cases[c].ms, cases[c].m == HDBSCAN_LEAF ? "leaf" : "eom",
                     route ? "host" : "auto");
            if (run("exact", ds, cases[c].mcs, cases[c].ms, cases[c].m, &o, &got)) {
                CHECK_MSG(0, "%s: exact: %s", w, err_msg());
                continue;
            }
            same(&got, &want, w);
            /* above exact's grid dimensions exact takes every round
             * beyond its forest on the device (kern_mst_round; its forest
             * reaches farther than cpu's, so the rounds' counts differ);
             * at or below them the host's k-d tree does */
            const int dev = ds->d > EXACT_GRID_MAX_D;
            const int some = got.forest_edges + 1 < ds->n;
            CHECK_MSG(dev ? got.host_rounds == 0 && (got.device_rounds > 0) == some
                          : got.device_rounds == 0 && (got.host_rounds > 0) == some,
                      "%s: exact %d device and %d host rounds after %zu forest edges", w,
                      got.device_rounds, got.host_rounds, got.forest_edges);
            hdbscan_result_free(&got);
        }
        hdbscan_result_free(&want);
    }
}

TEST(exact_equals_cpu_on_generated_sets)
{
    need_gpu();
    dataset sets[5] = {densities(2), densities(16), densities(784), repeated(), lattice()};
    for (int k = 0; k < 5; k++) {
        exact_vs_cpu(&sets[k], NULL, sets[k].name);
        dataset_free(&sets[k]);
    }
}

static int load(const char *file, size_t limit, const char *cols, int header, size_t dim,
                dataset *ds)
{
    load_opts lo;
    load_opts_init(&lo);
    lo.limit = limit;
    lo.cols = cols;
    lo.header = header;
    lo.dim = dim;
    memset(ds, 0, sizeof *ds);
    const int rc = dataset_load(t_dataset(file), &lo, ds);
    if (rc)
        t_fail(__FILE__, __LINE__, "%s: %s", file, err_msg());
    return rc;
}

TEST(exact_equals_cpu_on_the_shared_sets)
{
    need_gpu();
    dataset ds;
    if (load("letter.csv", 4000, "1-16", -1, 0, &ds) == 0) {
        exact_vs_cpu(&ds, NULL, "letter 4000");
        dataset_free(&ds);
    }
    if (load("htru2.csv", 4000, "0-7", 1, 0, &ds) == 0) {
        exact_vs_cpu(&ds, NULL, "htru2 4000");
        dataset_free(&ds);
    }
    if (load("kitti_000000_xyzr.f32", 6000, NULL, -1, 4, &ds) == 0) {
        exact_vs_cpu(&ds, NULL, "kitti 6000, exact's FP64 grid");
        engine_opts o;
        engine_opts_default(&o);
        o.exact_path = EXACT_PATH_PASS;
        exact_vs_cpu(&ds, &o, "kitti 6000, exact's tensor-core pass");
        dataset_free(&ds);
    }
}

/* exact's tree with TCJOIN_MST_ROUNDS at v (NULL: unset) against cpu's;
 * its device rounds into *rounds (-1 where it failed). */
static void rounds_case(const dataset *ds, const hdbscan_result *want, const char *v, int *rounds)
{
    if (v)
        setenv("TCJOIN_MST_ROUNDS", v, 1);
    else
        unsetenv("TCJOIN_MST_ROUNDS");
    hdbscan_result got;
    char w[160];
    snprintf(w, sizeof w, "%s, TCJOIN_MST_ROUNDS=%s", ds->name, v ? v : "(unset)");
    *rounds = -1;
    if (run("exact", ds, 10, 5, HDBSCAN_EOM, NULL, &got)) {
        CHECK_MSG(0, "%s: exact: %s", w, err_msg());
    } else {
        same(&got, want, w);
        *rounds = got.device_rounds;
        hdbscan_result_free(&got);
    }
    unsetenv("TCJOIN_MST_ROUNDS");
}

TEST(exact_rounds_agree_however_taken)
{
    need_gpu();
    dataset sets[4] = {densities(16), densities(784), repeated(), lattice()};
    int fewer = 0;
    for (int k = 0; k < 4; k++) {
        hdbscan_result want;
        if (sets[k].d <= EXACT_GRID_MAX_D) { /* the host's rounds there */
            dataset_free(&sets[k]);
            continue;
        }
        if (run("cpu", &sets[k], 10, 5, HDBSCAN_EOM, NULL, &want)) {
            CHECK_MSG(0, "%s: cpu: %s", sets[k].name, err_msg());
            dataset_free(&sets[k]);
            continue;
        }
        /* the default's round count is a cost choice (few rows: the
         * partial rounds, cheaper there than the pair round's host
         * steps), so only the forced pair round's is compared */
        int whole, partial, paired, def;
        rounds_case(&sets[k], &want, "0", &whole);
        rounds_case(&sets[k], &want, "3", &partial);
        rounds_case(&sets[k], &want, "1024", &paired);
        rounds_case(&sets[k], &want, NULL, &def);
        CHECK_MSG(paired <= whole, "%s: %d rounds with the pair round, %d whole", sets[k].name,
                  paired, whole);
        fewer += paired >= 0 && paired < whole;
        hdbscan_result_free(&want);
        dataset_free(&sets[k]);
    }
    CHECK_MSG(fewer > 0, "the pair round took fewer rounds than whole rounds on no set");
}

TEST(fasted_routes_agree)
{
    need_gpu();
    dataset ds = densities(16);
    hdbscan_result r[2];
    int ok = 1;
    for (int route = 0; route < 2; route++) {
        engine_opts o;
        engine_opts_default(&o);
        o.curve_route = route ? CURVE_ROUTE_HOST : CURVE_ROUTE_AUTO;
        if (run("fasted", &ds, 10, 5, HDBSCAN_EOM, &o, &r[route])) {
            CHECK_MSG(0, "fasted: %s", err_msg());
            ok = 0;
        }
    }
    if (ok) {
        same(&r[0], &r[1], "fasted, device against host sink");
        for (size_t i = 0; i < ds.n; i++)
            CHECK_MSG(r[0].tree.labels[i] >= -1 &&
                          r[0].tree.labels[i] < (int32_t)r[0].tree.nclusters,
                      "label %d", r[0].tree.labels[i]);
        hdbscan_result_free(&r[0]);
        hdbscan_result_free(&r[1]);
    }
    dataset_free(&ds);
}
