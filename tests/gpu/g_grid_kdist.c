/* GPU tests of the ε search through the device's grid index.
 * Test plan:
 *  1. `kdist engine=exact` on the grid path (kernels/grid_kdist.cu) gives
 *     cpu's k-distances exactly (both: the K-th smallest FP64 direct-form
 *     (a-b)^2 sum, self excluded by index) on: uniform d = 2, 3, 8, 16;
 *     an integer lattice (ties, rows on cell borders); each point three
 *     times (K-distance 0); UTM-like coordinates (5e6 m, cm spread) and
 *     lat/lon degrees; tight clusters far apart (the first radius far too
 *     wide: narrowed on the device); two points; a query slice; the kitti
 *     scan; K = 1, 4, 17 and 256.
 *     The passes from first radii far too small and far too large.
 *  2. Off the grid path (exact-path pass) exact's kdist says it has none,
 *     one line; K out of range is refused as for every engine.
 *  2'. exact's auto: brute force in FP64 for small work (kernels/
 *     fp64_kdist.cu, cpu's values on uniform rows at d = 1 to 128, ties,
 *     duplicates, a lattice, an offset, Gaussian clusters, K = 1 to 256,
 *     one slice and several, a query slice), the grid to d = 4 above it,
 *     the pass beyond.
 *  3. The grid join's histogram in shared memory (fp64_grid.cu's
 *     fg_hist_epi) equals fp64's at 4096 bins (64 KB of shared memory: the
 *     opt-in above 48 KB) and at 8000 (too many: global bins as before).
 *  4. `sweep` (sweep_solve) and `curve` (sweep_curve) through exact on the
 *     grid find fp64's ε, pair counts and curve exactly.
 *  5. A case small enough for compute-sanitizer: the k-distance kernel,
 *     the shared-memory histogram and per-point counts, DBSCAN's device
 *     passes (labels, core flags and pairs equal cpu's).
 * The per-point counts (fg_pp_epi) are checked in g_exact_grid (every
 * mode against fp64). Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dbscan.h"
#include "exact_path.h"
#include "exact_sets.h"
#include "kdist.h"
#include "kernels.h"
#include "sweep.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static int kd_run(const char *eng, const dataset *ds, int k, size_t q0, size_t q1, int path,
                  double *out, join_result *res)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.exact_path = path;
    kdist_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.q0 = q0;
    s.q1 = q1;
    s.k = k;
    s.opts = &o;
    s.out = out;
    return kdist_run(engine_find(eng), &s, res);
}

/* exact against cpu over rows [q0, q1) at K, every value equal bit for
 * bit: on the grid (path EXACT_PATH_GRID), or under auto on small work,
 * brute force (EXACT_PATH_AUTO: the record's path 2). */
static void check_kd_as(const char *what, const dataset *ds, int k, size_t q0, size_t q1, int path)
{
    const size_t nq = q1 - q0;
    double *a = xmalloc(nq * sizeof *a), *b = xmalloc(nq * sizeof *b);
    join_result ra, rb;
    int rc = kd_run("cpu", ds, k, q0, q1, EXACT_PATH_AUTO, b, &rb);
    CHECK_MSG(rc == 0, "%s K=%d cpu: %s", what, k, err_msg());
    rc = rc ? rc : kd_run("exact", ds, k, q0, q1, path, a, &ra);
    CHECK_MSG(rc == 0, "%s K=%d exact: %s", what, k, err_msg());
    if (rc == 0) {
        size_t bad = 0, first = 0;
        for (size_t i = 0; i < nq; i++)
            if (memcmp(&a[i], &b[i], sizeof *a) != 0 && bad++ == 0)
                first = i;
        CHECK_MSG(bad == 0, "%s K=%d: %zu of %zu rows differ, first row %zu: exact %.17g cpu %.17g",
                  what, k, bad, nq, q0 + first, a[first], b[first]);
        if (path == EXACT_PATH_GRID)
            CHECK_MSG(strstr(ra.variant, "fp64 grid") != NULL, "%s: variant %s", what, ra.variant);
        else
            CHECK_MSG(jr_metric(&ra, "path") == 2, "%s: path %g (%s)", what, jr_metric(&ra, "path"),
                      ra.variant);
        printf("# %-12s n=%zu d=%zu K=%-3d rows [%zu,%zu): exact %.2f ms (%s), cpu %.2f ms\n", what,
               ds->n, ds->d, k, q0, q1, 1e3 * ra.seconds, ra.variant, 1e3 * rb.seconds);
    }
    free(a);
    free(b);
}

static void check_kd_rows(const char *what, const dataset *ds, int k, size_t q0, size_t q1)
{
    check_kd_as(what, ds, k, q0, q1, EXACT_PATH_GRID);
}

static void check_kd(const char *what, const dataset *ds, const int *ks, int nk)
{
    for (int t = 0; t < nk; t++)
        if ((size_t)ks[t] <= ds->n - 1)
            check_kd_rows(what, ds, ks[t], 0, ds->n);
}

static dataset set_unif(const char *name, size_t n, size_t d, uint64_t seed)
{
    dataset ds = make(name, n, d);
    rng_state = seed;
    for (size_t i = 0; i < n * d; i++)
        ((double *)ds.v)[i] = rng_unit();
    finish(&ds);
    return ds;
}

static dataset set_geo(const char *name, size_t n, double ox, double oy, double span, double jit)
{
    dataset ds = make(name, n, 3);
    double *v = ds.v;
    rng_state = 77;
    for (size_t i = 0; i < n; i++) {
        v[3 * i] = ox + span * rng_unit() + jit * (rng_unit() - 0.5);
        v[3 * i + 1] = oy + span * rng_unit() + jit * (rng_unit() - 0.5);
        v[3 * i + 2] = 520.0 + jit * (rng_unit() - 0.5);
    }
    finish(&ds);
    return ds;
}

/* 20 tight clusters (1e-4 wide) spread over 1000: the bounding box's
 * density is a billion times too thin for them. */
static dataset set_tight(void)
{
    dataset ds = make("tight", 20000, 3);
    double *v = ds.v;
    rng_state = 91;
    double c[20][3];
    for (int j = 0; j < 20; j++)
        for (int k = 0; k < 3; k++)
            c[j][k] = 1000 * rng_unit();
    for (size_t i = 0; i < ds.n; i++)
        for (int k = 0; k < 3; k++)
            v[3 * i + k] = c[i % 20][k] + 1e-4 * rng_unit();
    finish(&ds);
    return ds;
}

TEST(grid_kdist_equals_cpu_on_low_dimensional_sets)
{
    need_gpu();
    const int ks[4] = {1, 4, 17, 256};
    dataset ds = set_unif("unif d=3", 30000, 3, 1);
    check_kd("unif d=3", &ds, ks, 4);
    check_kd_rows("slice", &ds, 4, 7001, 19999);
    dataset_free(&ds);
    const size_t dims[3] = {2, 8, 16};
    for (int t = 0; t < 3; t++) {
        char name[32];
        snprintf(name, sizeof name, "unif d=%zu", dims[t]);
        ds = set_unif(name, 8000, dims[t], 2 + (uint64_t)t);
        check_kd(name, &ds, ks, 3);
        dataset_free(&ds);
    }
    ds = set_lattice();
    check_kd("lattice", &ds, ks, 4);
    dataset_free(&ds);
    ds = set_dups();
    check_kd("dups", &ds, ks, 3);
    dataset_free(&ds);
    ds = set_geo("utm", 20000, 691000.0, 5334000.0, 30.0, 0.02);
    check_kd("utm", &ds, ks, 3);
    dataset_free(&ds);
    ds = set_geo("latlon", 20000, 11.5, 48.1, 0.01, 1e-5);
    check_kd("latlon", &ds, ks, 3);
    dataset_free(&ds);
    ds = set_tight();
    check_kd("tight", &ds, ks, 3);
    dataset_free(&ds);
    ds = set_unif("two", 2, 3, 4);
    check_kd("two", &ds, ks, 1);
    dataset_free(&ds);
}

/* exact's auto: small work ((q1 - q0) n d at most KERN_KDIST_BRUTE_WORK)
 * takes brute force in FP64 (path 2) at every d; above it the grid up to
 * d = 4 (path 1), whatever the band the join's rule weighs (uniform
 * d = 4: the join's auto takes the pass there at small eps), and the pass
 * above (path 0). cpu's values on every path. */
static void check_auto(const char *name, const dataset *ds, int k, double want)
{
    double *a = xmalloc(ds->n * sizeof *a), *b = xmalloc(ds->n * sizeof *b);
    join_result ra, rb;
    int rc = kd_run("exact", ds, k, 0, ds->n, EXACT_PATH_AUTO, a, &ra);
    CHECK_MSG(rc == 0, "%s: %s", name, err_msg());
    rc = rc ? rc : kd_run("cpu", ds, k, 0, ds->n, EXACT_PATH_AUTO, b, &rb);
    CHECK_MSG(rc == 0, "%s cpu: %s", name, err_msg());
    if (rc == 0) {
        CHECK_MSG(jr_metric(&ra, "path") == want, "%s: path %g, want %g (%s)", name,
                  jr_metric(&ra, "path"), want, ra.variant);
        size_t bad = 0;
        for (size_t i = 0; i < ds->n; i++)
            bad += !(a[i] == b[i]);
        CHECK_MSG(bad == 0, "%s: %zu rows differ from cpu", name, bad);
        printf("# auto %-10s n=%zu d=%zu K=%d: path %g, %.2f ms (%s)\n", name, ds->n, ds->d, k,
               want, 1e3 * ra.seconds, ra.variant);
    }
    free(a);
    free(b);
}

TEST(auto_kdist_takes_brute_force_then_the_grid_up_to_d4)
{
    need_gpu();
    const size_t dims[3] = {3, 4, 5};
    for (int t = 0; t < 3; t++) {
        char name[32];
        snprintf(name, sizeof name, "unif d=%zu", dims[t]);
        dataset ds = set_unif(name, 6000, dims[t], 20 + (uint64_t)t);
        check_auto(name, &ds, 4, 2);
        dataset_free(&ds);
        /* 10^5 rows: 3 10^10 products and more */
        ds = set_unif(name, 100000, dims[t], 30 + (uint64_t)t);
        check_auto(name, &ds, 4, dims[t] <= 4 ? 1 : 0);
        dataset_free(&ds);
    }
}

/* Brute force (kernels/fp64_kdist.cu) against cpu: every value equal, on
 * uniform rows at d = 1, 2, 4, 5, 8, 9, 16, 17, 33 and 128 (each of the
 * kernel's dimension chunks, whole and partial), integer rows (ties),
 * each point three times and once more (K-distance 0), a lattice, rows
 * far from the origin; K = 1, 4 and 16 (registers), 17 and 256 (the
 * heap); one slice of candidates (n under 4096) and several; a query
 * slice. */
static void check_brute(const char *what, const dataset *ds, int k, size_t q0, size_t q1)
{
    check_kd_as(what, ds, k, q0, q1, EXACT_PATH_AUTO);
}

TEST(brute_kdist_equals_cpu)
{
    need_gpu();
    static const size_t dims[] = {1, 2, 4, 5, 8, 9, 16, 17, 33, 128};
    static const int ks[] = {1, 4, 16, 17, 256};
    for (size_t t = 0; t < sizeof dims / sizeof *dims; t++) {
        char name[32];
        snprintf(name, sizeof name, "unif d=%zu", dims[t]);
        dataset ds = set_unif(name, t % 2 ? 9000 : 3000, dims[t], 40 + (uint64_t)t);
        for (int kk = 0; kk < 5; kk++)
            check_brute(name, &ds, ks[kk], 0, ds.n);
        check_brute(name, &ds, 9, ds.n / 3, ds.n / 3 + 700);
        dataset_free(&ds);
    }
    dataset sets[5] = {set_ints(), set_dups(), set_lattice(), set_offset(), set_gauss()};
    for (int t = 0; t < 5; t++) {
        for (int kk = 0; kk < 5; kk++)
            if ((size_t)ks[kk] < sets[t].n)
                check_brute(sets[t].name, &sets[t], ks[kk], 0, sets[t].n);
        dataset_free(&sets[t]);
    }
}

TEST(grid_kdist_equals_cpu_on_the_kitti_scan)
{
    need_gpu();
    dataset ds;
    CHECK_MSG(load_shared("kitti_000000_xyzr.f32", 0, &ds) == 0, "%s", err_msg());
    const int ks[3] = {1, 4, 32};
    check_kd("kitti", &ds, ks, 3);
    dataset_free(&ds);
}

/* The passes themselves, from first radii far off the mark (through
 * engine_gpu_grid_kdist): 1e-4 of the extent (eight doubling passes
 * before the K-th distances of ~0.02 are final), 10 (every row in one
 * cell: a single pass, all candidates) and the set's own; cpu's values
 * every time, and the variant counts the passes. */
TEST(grid_kdist_passes_from_any_radius)
{
    need_gpu();
    dataset ds = set_unif("unif d=3", 30000, 3, 21);
    const size_t n = ds.n;
    double *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b);
    join_result r;
    CHECK(kd_run("cpu", &ds, 4, 0, n, EXACT_PATH_AUTO, b, &r) == 0);
    const double radii[3] = {1e-4, 10.0, 0.01};
    for (int t = 0; t < 3; t++) {
        engine_opts o;
        engine_opts_default(&o);
        kdist_spec s;
        memset(&s, 0, sizeof s);
        s.engine = engine_find("exact");
        s.ds = &ds;
        s.q0 = 0;
        s.q1 = n;
        s.k = 4;
        s.opts = &o;
        s.out = a;
        memset(&r, 0, sizeof r);
        int rc = engine_gpu_grid_kdist(&s, radii[t], &r);
        CHECK_MSG(rc == 0, "r0 %g: %s", radii[t], err_msg());
        size_t bad = 0;
        for (size_t i = 0; rc == 0 && i < n; i++)
            bad += !(a[i] == b[i]);
        CHECK_MSG(bad == 0, "r0 %g: %zu rows differ from cpu", radii[t], bad);
        printf("# r0 %g: %s\n", radii[t], r.variant);
    }
    free(a);
    free(b);
    dataset_free(&ds);
}

/* Off the grid (exact-path pass) exact's k-distance is its FP16 pass's
 * estimates made exact by its joins (src/cluster/kdist_refine.c): cpu's values
 * too, at d = 3 and at d = 64 (where the grid is never taken). Bad K is
 * refused. */
static void check_kd_pass(const char *what, const dataset *ds, int k)
{
    double *a = xmalloc(ds->n * sizeof *a), *b = xmalloc(ds->n * sizeof *b);
    join_result ra, rb;
    int rc = kd_run("cpu", ds, k, 0, ds->n, EXACT_PATH_AUTO, b, &rb);
    CHECK_MSG(rc == 0, "%s cpu: %s", what, err_msg());
    rc = kd_run("exact", ds, k, 0, ds->n, EXACT_PATH_PASS, a, &ra);
    CHECK_MSG(rc == 0, "%s exact: %s", what, err_msg());
    size_t bad = 0, first = 0;
    for (size_t q = 0; q < ds->n; q++)
        if (memcmp(&a[q], &b[q], sizeof *a) != 0 && bad++ == 0)
            first = q;
    CHECK_MSG(bad == 0, "%s K=%d: %zu rows differ, first %zu: %.17g against cpu's %.17g", what, k,
              bad, first, a[first], b[first]);
    printf("# %s K=%d: %s, %g rounds, %g joins\n", what, k, ra.variant,
           join_result_metric_value(&ra, "refine_rounds"),
           join_result_metric_value(&ra, "refine_joins"));
    free(a);
    free(b);
}

TEST(exact_kdist_off_the_grid_equals_cpu)
{
    need_gpu();
    dataset ds = set_unif("unif", 3000, 3, 5);
    check_kd_pass("unif d=3 pass", &ds, 4);
    dataset_free(&ds);
    ds = set_unif("unif64", 4000, 64, 9);
    check_kd_pass("unif d=64", &ds, 1);
    check_kd_pass("unif d=64", &ds, 17);
    dataset_free(&ds);
    ds = set_lattice();
    check_kd_pass("lattice", &ds, 6);
    dataset_free(&ds);
    double out[500];
    join_result r;
    ds = set_unif("unif", 500, 3, 5);
    int rc = kd_run("exact", &ds, 500, 0, ds.n, EXACT_PATH_GRID, out, &r);
    CHECK_EQ_INT(rc, TCJ_EINVAL);
    dataset_free(&ds);
    /* one point: no other row to be a neighbour */
    ds = set_unif("one", 1, 3, 6);
    rc = kd_run("exact", &ds, 1, 0, 1, EXACT_PATH_GRID, out, &r);
    CHECK_EQ_INT(rc, TCJ_EINVAL);
    dataset_free(&ds);
}

/* HIST over nb bins up to eps^2 (at most 4096, as every GPU engine and
 * sweep take them): the grid's and fp64's equal. */
static void check_hist(const char *what, const dataset *ds, double eps, size_t nb)
{
    double *edges = xmalloc((nb + 1) * sizeof *edges);
    for (size_t b = 0; b <= nb; b++)
        edges[b] = eps * eps * (double)b / (double)nb;
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    join_outcome a = jo_run_as(engine_find("exact"), ds, eps, 0, ds->n, &o, edges, nb);
    join_outcome f = jo_run_as(engine_find("fp64"), ds, eps, 0, ds->n, &o, edges, nb);
    CHECK_MSG(a.rc == 0 && f.rc == 0, "%s: %s", what, err_msg());
    char why[200];
    if (a.rc == 0 && f.rc == 0)
        CHECK_MSG(jo_same(&a, &f, ds->n, why, sizeof why), "%s %zu bins: %s", what, nb, why);
    jo_free(&a);
    jo_free(&f);
    free(edges);
}

TEST(grid_histogram_in_shared_memory_equals_fp64)
{
    need_gpu();
    dataset ds = set_unif("unif d=3", 20000, 3, 7);
    const double eps = eps_for(&ds, 60);
    check_hist("unif", &ds, eps, 4096);
    check_hist("unif", &ds, eps, 1000);
    dataset_free(&ds);
    ds = set_lattice();
    check_hist("lattice", &ds, 3.0, 4096);
    dataset_free(&ds);
}

/* sweep and curve through exact on the grid against fp64: the same
 * arithmetic, so the same steps, ε and counts. */
TEST(sweep_and_curve_through_the_grid_equal_fp64)
{
    need_gpu();
    dataset ds = set_unif("unif d=3", 50000, 3, 8);
    sweep_sample smp;
    CHECK(sweep_sample_build(&ds, 0, &smp) == 0);
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    sweep_result r[2];
    const char *names[2] = {"exact", "fp64"};
    for (int t = 0; t < 2; t++) {
        sweep_opts so;
        sweep_opts_default(&so);
        so.eng = engine_find(names[t]);
        so.eopt = &o;
        int rc = sweep_solve(&ds, &smp, 64, &so, &r[t]);
        CHECK_MSG(rc == 0, "sweep %s: %s", names[t], err_msg());
        printf("# sweep 64 %s: eps %.9g, %llu pairs, %d passes, %.3f s\n", names[t], r[t].eps,
               (unsigned long long)r[t].pairs, r[t].passes, r[t].seconds);
    }
    CHECK_MSG(r[0].eps == r[1].eps && r[0].pairs == r[1].pairs && r[0].passes == r[1].passes,
              "sweep: exact eps %.17g %llu pairs, fp64 eps %.17g %llu pairs", r[0].eps,
              (unsigned long long)r[0].pairs, r[1].eps, (unsigned long long)r[1].pairs);
    double lo, hi;
    sweep_curve_range(&smp, &lo, &hi);
    const size_t nb = 200;
    double eps[2][201], sel[2][201];
    uint64_t pairs[2][201];
    for (int t = 0; t < 2; t++) {
        double secs;
        int rc = sweep_curve(&ds, engine_find(names[t]), &o, lo, hi, nb, eps[t], sel[t], pairs[t],
                             &secs, NULL);
        CHECK_MSG(rc == 0, "curve %s: %s", names[t], err_msg());
    }
    CHECK(memcmp(pairs[0], pairs[1], sizeof pairs[0]) == 0);
    sweep_sample_free(&smp);
    dataset_free(&ds);
}

/* Small enough for compute-sanitizer (scripts/gpu-h44.sh): the new
 * kernels once each way: the k-distance at K = 4 (KM 4) and 17 (KM 64),
 * d = 3 unrolled and d = 5 looped; the grid join's shared-memory
 * histogram (4096 bins: the opt-in) and per-warp per-point counts
 * (every mode against fp64); DBSCAN's device passes against cpu's; the
 * brute-force k-distance, one slice and two, K in registers and a heap. */
TEST(grid_sanitizer_case)
{
    need_gpu();
    dataset ds = set_unif("san d=3", 3000, 3, 11);
    check_kd_rows("san d=3", &ds, 4, 0, ds.n);
    check_kd_rows("san d=3", &ds, 17, 100, 2000);
    check_hist("san d=3", &ds, eps_for(&ds, 30), 4096);
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    const double eps = eps_for(&ds, 30);
    join_outcome a = exact_run("exact", &ds, eps, &o, 1), f = exact_run("fp64", &ds, eps, &o, 0);
    char why[200];
    CHECK_MSG(a.rc == 0 && f.rc == 0 && jo_same(&a, &f, ds.n, why, sizeof why), "san: %s",
              a.rc || f.rc ? err_msg() : why);
    jo_free(&a);
    jo_free(&f);
    /* DBSCAN's three device passes (shared-memory core slots, the
     * union-find in cell order): labels, core flags and pairs as cpu's. */
    int32_t *la = xmalloc(ds.n * sizeof *la), *lb = xmalloc(ds.n * sizeof *lb);
    uint8_t *ca = xmalloc(ds.n), *cb = xmalloc(ds.n);
    dbscan_result ra, rb;
    dbscan_spec sa = {.ds = &ds, .eps = eps, .minpts = 10, .opts = &o, .labels = la, .core = ca};
    dbscan_spec sb = sa;
    sb.labels = lb;
    sb.core = cb;
    int rc = dbscan_run(engine_find("exact"), &sa, &ra);
    CHECK_MSG(rc == 0, "san dbscan exact: %s", err_msg());
    rc = rc ? rc : dbscan_run(engine_find("cpu"), &sb, &rb);
    CHECK_MSG(rc == 0, "san dbscan: %s", err_msg());
    if (rc == 0) {
        CHECK(memcmp(la, lb, ds.n * sizeof *la) == 0 && memcmp(ca, cb, ds.n) == 0);
        CHECK_MSG(ra.pairs == rb.pairs && ra.clusters == rb.clusters,
                  "san dbscan: pairs %llu / %llu, clusters %zu / %zu", (unsigned long long)ra.pairs,
                  (unsigned long long)rb.pairs, ra.clusters, rb.clusters);
    }
    free(la);
    free(lb);
    free(ca);
    free(cb);
    dataset_free(&ds);
    ds = set_unif("san d=5", 2000, 5, 12);
    check_kd_rows("san d=5", &ds, 4, 0, ds.n);
    dataset_free(&ds);
    /* brute force: one slice and several, registers and the heap */
    ds = set_unif("san brute", 4500, 9, 13);
    check_brute("san brute", &ds, 4, 0, ds.n);
    check_brute("san brute", &ds, 20, 100, 1300);
    dataset_free(&ds);
}
