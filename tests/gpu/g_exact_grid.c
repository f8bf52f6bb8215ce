/* GPU tests of exact's paths (`set exact-path`): the FP64 grid join
 * (kernels/fp64_grid.cu), the FP16 pass with its band refined in FP64,
 * and the pass over the tile cut (kernels/kern_tiles.c: the rows in a k-d
 * order, only the 256-row block pairs whose boxes are within eps) each
 * equal `fp64` exactly in every mode (count, per-point counts, the
 * pair set with bit-identical FP64 distances, histogram), symmetric tiles
 * on and off, with 1000-pair batches (many buffer refills) and, for the
 * grid, under a device-memory cap that shrinks its buffers. fp64 is the
 * independent reference (its own brute-force kernel, checked against cpu
 * in g_fp64): the grid must find every pair fp64 finds (no pair lost at a
 * cell border) and compute each d2 with the same operations in the same
 * order (no pair's distance differs in its last bit). Sets: the kitti scan
 * at eps 0.12 (where FP16's spacing near 50 m is a sizeable part of eps),
 * a generated LiDAR-like 3-D cloud with large coordinates, clustered d = 4
 * and d = 8 sets, and the adversarial sets of exact_sets.h (pairs exactly
 * at eps on a lattice, duplicates, a 1e4 offset, values near 65504,
 * integer ties). auto takes the grid on the kitti scan, the tile cut on a
 * 3-D set whose band is narrow and the pass on uniform d = 128; cancel stops the grid on one device
 * and through the device queue, and the next run goes on. Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exact_path.h"
#include "exact_predict.h"
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

/* The kitti scan as the task names it: every row, eps 0.12 m. */
#define KITTI_EPS 0.12

static join_outcome run_path(const char *name, const dataset *ds, double eps, int path, int sym,
                             int small, size_t gpu_mem)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.exact_path = path;
    opts.symmetric = sym;
    opts.gpu_mem = gpu_mem;
    return exact_run(name, ds, eps, &opts, small);
}

/* The grid's PAIRS run under the cap: its pair buffer shrank, it held no
 * more than the cap, and it drained fp64's number of pairs. */
static void check_capped_pairs(const char *what, const dataset *ds, double eps, size_t cap,
                               const join_outcome *ref)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.exact_path = EXACT_PATH_GRID;
    opts.gpu_mem = cap;
    join_outcome got;
    memset(&got, 0, sizeof got);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.mode = JOIN_PAIRS;
    s.opts = &opts;
    s.sink = (pair_sink){jo_put, &got};
    join_result r;
    int rc = engine_run(engine_find("exact"), &s, &r);
    CHECK_MSG(rc == 0, "%s capped at %zu: %s", what, cap, err_msg());
    CHECK_MSG(rc || (jr_metric(&r, "buffers_shrunk") == 1 &&
                     jr_metric(&r, "device_mem_peak") <= (double)cap && got.npairs == ref->count),
              "%s capped at %zu: shrunk %g, peak %g, %zu pairs (fp64 %llu)", what, cap,
              jr_metric(&r, "buffers_shrunk"), jr_metric(&r, "device_mem_peak"), got.npairs,
              (unsigned long long)ref->count);
    jo_free(&got);
}

/* exact through `path` against fp64 (ref): symmetric on and off, small
 * batches; the grid also under a memory cap. The run says which path ran. */
static void check_path(const char *what, const dataset *ds, double eps, const join_outcome *ref,
                       int path)
{
    const int grid = path == EXACT_PATH_GRID;
    /* 6 MB over the dataset and the index (at most 64 bytes a row): the
     * default 4M-pair buffer (64 MB) cannot fit and must shrink. */
    const size_t cap = ds->n * ds->d * sizeof(double) + ds->n * 64 + ((size_t)6 << 20);
    for (int v = 0; v < (grid ? 4 : 3); v++) {
        const int sym = v != 1, small = v == 2;
        join_outcome a = run_path("exact", ds, eps, path, sym, small, v == 3 ? cap : 0);
        CHECK_MSG(a.rc == 0, "%s %s: %s", what, exact_path_name(path), err_msg());
        if (a.rc)
            return;
        char why[200];
        CHECK_MSG(jo_same(&a, ref, ds->n, why, sizeof why),
                  "%s: exact (%s, sym %d, small %d, cap %d) and fp64 differ: %s", what,
                  exact_path_name(path), sym, small, v == 3, why);
        /* The tile cut runs on a symmetric run of KERN_TILE_MIN_ROWS rows
         * at least (forced: whatever share of the block pairs it keeps). */
        const int tiled = path == EXACT_PATH_TILES && sym && ds->n >= KERN_TILE_MIN_ROWS;
        const int want = grid ? 1 : tiled ? 3 : 0;
        CHECK_MSG(jo_metric(&a, "path") == want, "%s %s: path %g, want %d", what,
                  exact_path_name(path), jo_metric(&a, "path"), want);
        CHECK_MSG((strstr(a.variant, "tiles") != NULL) == tiled, "%s %s: variant %s", what,
                  exact_path_name(path), a.variant);
        CHECK_MSG((strstr(a.variant, "fp64 grid") != NULL) == grid, "%s %s: variant %s", what,
                  exact_path_name(path), a.variant);
        if (v == 3)
            check_capped_pairs(what, ds, eps, cap, ref);
        if (v == 0)
            printf("# %-14s n=%zu d=%zu eps=%.6g %s: %llu pairs, kernel %.3f ms, %s, tile_work "
                   "%g\n",
                   what, ds->n, ds->d, eps, exact_path_name(path), (unsigned long long)a.count,
                   1e3 * a.first.kernel_seconds, a.variant, jo_metric(&a, "tile_work"));
        jo_free(&a);
    }
}

/* The three paths against one fp64 reference: the grid, the pass whole
 * and the pass over the tile cut (the rows in k-d order, only the block
 * pairs whose boxes are within eps joined). */
static void check_both(const char *what, dataset *ds, double eps)
{
    engine_opts opts;
    engine_opts_default(&opts);
    join_outcome ref = exact_run("fp64", ds, eps, &opts, 0);
    CHECK_MSG(ref.rc == 0, "%s fp64: %s", what, err_msg());
    if (ref.rc == 0) {
        check_path(what, ds, eps, &ref, EXACT_PATH_GRID);
        check_path(what, ds, eps, &ref, EXACT_PATH_PASS);
        check_path(what, ds, eps, &ref, EXACT_PATH_TILES);
    }
    jo_free(&ref);
}

static int load_kitti(dataset *ds)
{
    return load_shared("kitti_000000_xyzr.f32", 0, ds);
}

TEST(grid_and_pass_equal_fp64_on_the_kitti_scan)
{
    need_gpu();
    dataset ds;
    CHECK_MSG(load_kitti(&ds) == 0, "%s", err_msg());
    check_both("kitti", &ds, KITTI_EPS);
    dataset_free(&ds);
}

/* A LiDAR-like scene: a ground plane 80 m deep and 40 m wide and two
 * walls, each point jittered by a few cm; coordinates up to 80 m. */
static dataset set_cloud(size_t n)
{
    dataset ds = make("cloud", n, 3);
    double *v = ds.v;
    rng_state = 31;
    for (size_t i = 0; i < n; i++) {
        double x, y, z;
        const double u = rng_unit(), a = rng_unit(), b = rng_unit();
        if (u < 0.6) { /* ground */
            x = 80 * a;
            y = -20 + 40 * b;
            z = -1.7;
        } else if (u < 0.8) { /* a wall along x at y = 6 */
            x = 5 + 70 * a;
            y = 6;
            z = -1.7 + 3 * b;
        } else { /* a wall across at x = 60 */
            x = 60;
            y = -15 + 30 * a;
            z = -1.7 + 4 * b;
        }
        v[3 * i] = x + 0.03 * (rng_unit() - 0.5);
        v[3 * i + 1] = y + 0.03 * (rng_unit() - 0.5);
        v[3 * i + 2] = z + 0.03 * (rng_unit() - 0.5);
    }
    finish(&ds);
    return ds;
}

TEST(grid_and_pass_equal_fp64_on_a_3d_cloud)
{
    need_gpu();
    dataset ds = set_cloud(30000);
    check_both("cloud", &ds, 0.15);
    dataset_free(&ds);
}

TEST(grid_and_pass_equal_fp64_at_d4_and_d8)
{
    need_gpu();
    const size_t dims[2] = {4, 8};
    for (int k = 0; k < 2; k++) {
        gen_opts g = {.kind = "gauss",
                      .n = 12000,
                      .d = dims[k],
                      .seed = 40 + (uint64_t)k,
                      .opt = {{"clusters", "8"}},
                      .nopt = 1};
        dataset ds = {0};
        CHECK(dataset_generate(&g, &ds) == 0);
        char what[32];
        snprintf(what, sizeof what, "gauss d=%zu", dims[k]);
        check_both(what, &ds, eps_for(&ds, 30));
        dataset_free(&ds);
    }
}

TEST(grid_and_pass_equal_fp64_adversarial)
{
    need_gpu();
    exact_each_adversarial(check_both);
}

/* The sets of the low-dimensional issue, each through the index built on
 * the device (kernels/grid_gpu.cuh) against fp64's brute force: UTM-like
 * coordinates (5e6 m, cm spread) and lat/lon degrees, where FP32 cell keys
 * would collapse; eps wider than the data (one cell: every pair); eps so
 * small every point is alone; one point; d = 2 and d = 16 (6 of 16
 * dimensions indexed); rows kept as f16 and u8, which the device widens
 * itself; a query slice (q0 > 0), whose groups hold only its rows. */
static dataset set_geo(const char *name, size_t n, double ox, double oy, double oz, double span,
                       double jit)
{
    dataset ds = make(name, n, 3);
    double *v = ds.v;
    rng_state = 77;
    for (size_t i = 0; i < n; i++) {
        v[3 * i] = ox + span * rng_unit() + jit * (rng_unit() - 0.5);
        v[3 * i + 1] = oy + span * rng_unit() + jit * (rng_unit() - 0.5);
        v[3 * i + 2] = oz + jit * (rng_unit() - 0.5);
    }
    finish(&ds);
    return ds;
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

static void check_grid_only(const char *what, dataset *ds, double eps)
{
    engine_opts opts;
    engine_opts_default(&opts);
    join_outcome ref = exact_run("fp64", ds, eps, &opts, 0);
    CHECK_MSG(ref.rc == 0, "%s fp64: %s", what, err_msg());
    if (ref.rc == 0)
        check_path(what, ds, eps, &ref, EXACT_PATH_GRID);
    jo_free(&ref);
}

TEST(device_index_on_low_dimensional_sets)
{
    need_gpu();
    dataset ds = set_geo("utm", 20000, 691000.0, 5334000.0, 520.0, 30.0, 0.02);
    check_grid_only("utm", &ds, 0.05);
    dataset_free(&ds);
    ds = set_geo("latlon", 20000, 11.5, 48.1, 0.0, 0.01, 1e-5);
    check_grid_only("latlon", &ds, 1e-4);
    dataset_free(&ds);
    ds = set_unif("wide eps", 1500, 3, 5);
    check_grid_only("wide eps", &ds, 5.0);
    dataset_free(&ds);
    ds = set_unif("tiny eps", 5000, 3, 6);
    check_grid_only("tiny eps", &ds, 1e-9);
    dataset_free(&ds);
    ds = set_unif("one point", 1, 3, 7);
    check_grid_only("one point", &ds, 0.5);
    dataset_free(&ds);
    ds = set_unif("d=2", 20000, 2, 8);
    check_grid_only("d=2", &ds, eps_for(&ds, 20));
    dataset_free(&ds);
    ds = set_unif("d=16", 6000, 16, 9);
    check_grid_only("d=16", &ds, eps_for(&ds, 10));
    dataset_free(&ds);
    /* f16 and u8 rows: the values survive the conversion exactly, so fp64
     * (widening on the host) and the grid (on the device) see the same. */
    const dtype_id types[2] = {DTYPE_F16, DTYPE_U8};
    for (int t = 0; t < 2; t++) {
        dataset g = set_lattice();
        dataset h = {0};
        h.name = xstrdup(t ? "lattice u8" : "lattice f16");
        dataset_set_f64(&h, g.v, g.n, g.d, types[t]);
        finish(&h);
        check_grid_only(h.name, &h, 1.0);
        dataset_free(&h);
        dataset_free(&g);
    }
}

/* A query slice: rows [q0, q1) against every row, grid against fp64. */
TEST(device_index_query_slice)
{
    need_gpu();
    dataset ds = set_cloud(20000);
    for (int v = 0; v < 2; v++) {
        engine_opts o;
        engine_opts_default(&o);
        if (v)
            o.exact_path = EXACT_PATH_GRID;
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.eps = 0.15;
        s.q0 = 5000;
        s.q1 = 12345;
        s.mode = JOIN_COUNT;
        s.opts = &o;
        static uint64_t want;
        join_result r;
        int rc = engine_run(engine_find(v ? "exact" : "fp64"), &s, &r);
        CHECK_MSG(rc == 0, "slice %d: %s", v, err_msg());
        if (v == 0)
            want = r.pairs;
        else
            CHECK_MSG(r.pairs == want && jr_metric(&r, "path") == 1,
                      "slice: grid %llu pairs (path %g), fp64 %llu", (unsigned long long)r.pairs,
                      jr_metric(&r, "path"), (unsigned long long)want);
    }
    dataset_free(&ds);
}

/* auto: the grid on the kitti scan (d = 4, band predicted far above the
 * threshold), the pass on expo d = 3 (band predicted under it) and on
 * uniform d = 128 (d above EXACT_GRID_MAX_D: no prediction made). */
TEST(auto_picks_the_grid_on_kitti_the_tiles_at_d3_and_the_pass_at_d128)
{
    need_gpu();
    dataset ds;
    CHECK_MSG(load_kitti(&ds) == 0, "%s", err_msg());
    join_outcome a = run_path("exact", &ds, KITTI_EPS, EXACT_PATH_AUTO, 1, 0, 0);
    CHECK_MSG(a.rc == 0, "kitti auto: %s", err_msg());
    const double band = jo_metric(&a, "band_predicted");
    printf("# kitti auto: path %g, band predicted %.4f, %s\n", jo_metric(&a, "path"), band,
           a.variant);
    CHECK(jo_metric(&a, "path") == 1 && band > EXACT_GRID_BAND);
    CHECK(strstr(a.variant, "fp64 grid") != NULL);
    jo_free(&a);
    dataset_free(&ds);

    /* d = 3 with a narrow band (t_exact's path_auto_on_data): the pass,
     * over the tile cut (eps 0.02 against data spread over some 10 a
     * dimension: few block pairs within eps) */
    gen_opts e = {.kind = "expo", .n = 20000, .d = 3, .seed = 1};
    CHECK(dataset_generate(&e, &ds) == 0);
    a = run_path("exact", &ds, 0.02, EXACT_PATH_AUTO, 1, 0, 0);
    CHECK_MSG(a.rc == 0, "expo auto: %s", err_msg());
    printf("# expo d=3 auto: path %g, band predicted %.4f, tile_work %g\n", jo_metric(&a, "path"),
           jo_metric(&a, "band_predicted"), jo_metric(&a, "tile_work"));
    CHECK(jo_metric(&a, "path") == 3 && jo_metric(&a, "band_predicted") >= 0 &&
          jo_metric(&a, "band_predicted") <= EXACT_GRID_BAND &&
          jo_metric(&a, "tile_work") <= KERN_TILE_KEEP);
    jo_free(&a);
    dataset_free(&ds);

    gen_opts g = {.kind = "uniform", .n = 3000, .d = 128, .seed = 9};
    CHECK(dataset_generate(&g, &ds) == 0);
    a = run_path("exact", &ds, eps_for(&ds, 20), EXACT_PATH_AUTO, 1, 0, 0);
    CHECK_MSG(a.rc == 0, "uniform auto: %s", err_msg());
    CHECK(jo_metric(&a, "path") == 0 && jo_metric(&a, "band_predicted") == -1);
    CHECK(strstr(a.variant, "fp64 grid") == NULL);
    jo_free(&a);
    dataset_free(&ds);
}

typedef struct prog {
    double last;
    int calls, backwards;
} prog;

static void on_progress(void *ctx, double f)
{
    prog *p = ctx;
    p->backwards += f < p->last || f < 0 || f > 1;
    p->last = f;
    p->calls++;
}

/* A cancel set before the run stops the grid path with TCJ_ECANCEL (on one
 * device, and through the device queue: a list of one takes it); the next
 * run goes on, reports progress up to 1, and counts what fp64 counts. */
TEST(grid_cancel_progress_and_queue)
{
    need_gpu();
    dataset ds;
    CHECK_MSG(load_kitti(&ds) == 0, "%s", err_msg());
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = KITTI_EPS;
    s.q1 = ds.n;
    s.mode = JOIN_COUNT;
    join_result r;
    engine_opts o;
    engine_opts_default(&o);
    s.opts = &o;
    CHECK(engine_run(engine_find("fp64"), &s, &r) == 0);
    const uint64_t want = r.pairs;
    for (int queue = 0; queue < 2; queue++) {
        engine_opts_default(&o);
        o.exact_path = EXACT_PATH_GRID;
        if (queue)
            o.devices = 1; /* ordinal 0 as a list */
        volatile int cancel = 1;
        prog pg = {0, 0, 0};
        s.cancel = &cancel;
        s.progress = on_progress;
        s.progress_ctx = &pg;
        int rc = engine_run(engine_find("exact"), &s, &r);
        CHECK_MSG(rc == TCJ_ECANCEL, "queue %d: rc %d (%s)", queue, rc, err_msg());
        cancel = 0;
        pg = (prog){0, 0, 0};
        rc = engine_run(engine_find("exact"), &s, &r);
        CHECK_MSG(rc == 0, "queue %d after a cancel: %s", queue, err_msg());
        CHECK_MSG(r.pairs == want, "queue %d: %llu pairs, fp64 %llu", queue,
                  (unsigned long long)r.pairs, (unsigned long long)want);
        CHECK_MSG(jr_metric(&r, "path") == 1 && (jr_metric(&r, "devices") == 1) == queue,
                  "queue %d: path %g devices %g", queue, jr_metric(&r, "path"),
                  jr_metric(&r, "devices"));
        CHECK_MSG(pg.calls > 0 && pg.backwards == 0 && pg.last == 1.0,
                  "queue %d progress: %d calls, %d backwards, last %g", queue, pg.calls,
                  pg.backwards, pg.last);
    }
    dataset_free(&ds);
}

/* Data that are not finite have no grid cell: the forced grid refuses them
 * with one line; the next run goes on. */
TEST(grid_refuses_not_finite)
{
    need_gpu();
    dataset ds = set_inf();
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    join_outcome a = exact_run("exact", &ds, 1.0, &o, 0);
    CHECK_EQ_INT(a.rc, TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "not finite") && strstr(err_msg(), "fp64") &&
                  !strchr(err_msg(), '\n'),
              "%s", err_msg());
    jo_free(&a);
    dataset_free(&ds);
    ds = set_ints();
    a = exact_run("exact", &ds, 2.0, &o, 0);
    CHECK_MSG(a.rc == 0 && jo_metric(&a, "path") == 1, "%s", err_msg());
    jo_free(&a);
    dataset_free(&ds);
}

/* Seconds of phase `name` of r (-1 when it has none). */
static double jr_phase(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nphase; k++)
        if (strcmp(r->phase[k].name, name) == 0)
            return r->phase[k].seconds;
    return -1;
}

static int count_run(const engine *e, const dataset *ds, double eps, join_result *r)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.exact_path = EXACT_PATH_GRID;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.mode = JOIN_COUNT;
    s.opts = &opts;
    return engine_run(e, &s, r);
}

/* The grid engines keep their index and rows on the device: a second run
 * at the same rows and eps builds nothing (no index time, cache_hit 1)
 * and counts what the first counted; another eps builds again, and its
 * count is fp64's. exact's grid keeps two (the curve's joins over the
 * dataset and over a reordered copy take turns): the first eps's index
 * outlives a run at another, and a third eps replaces the one used
 * least recently. */
TEST(grid_index_kept_between_runs)
{
    need_gpu();
    dataset ds = set_cloud(30000);
    const char *names[2] = {"exact", "ted-index"};
    for (int t = 0; t < 2; t++) {
        const engine *e = engine_find(names[t]);
        if (engine_available(e, NULL) != 0)
            continue;
        join_result a, b, c, f;
        CHECK_MSG(count_run(e, &ds, 0.15, &a) == 0, "%s: %s", names[t], err_msg());
        CHECK_MSG(count_run(e, &ds, 0.15, &b) == 0, "%s: %s", names[t], err_msg());
        CHECK_MSG(jr_metric(&a, "cache_hit") == 0 && jr_metric(&b, "cache_hit") == 1,
                  "%s: cache_hit %g then %g", names[t], jr_metric(&a, "cache_hit"),
                  jr_metric(&b, "cache_hit"));
        CHECK_MSG(jr_phase(&a, "index") > 0 && jr_phase(&b, "index") == 0,
                  "%s: index %g s then %g s", names[t], jr_phase(&a, "index"),
                  jr_phase(&b, "index"));
        CHECK_EQ_INT(b.pairs, a.pairs);
        CHECK_MSG(count_run(e, &ds, 0.2, &c) == 0, "%s: %s", names[t], err_msg());
        CHECK_MSG(count_run(engine_find("fp64"), &ds, 0.2, &f) == 0, "fp64: %s", err_msg());
        CHECK_MSG(jr_metric(&c, "cache_hit") == 0, "%s: another eps hit the cache", names[t]);
        CHECK_EQ_INT(c.pairs, f.pairs);
        if (t == 0) {
            const double eps[4] = {0.15, 0.25, 0.15, 0.2};
            const int hit[4] = {1, 0, 1, 0};
            for (int k = 0; k < 4; k++) {
                join_result g;
                CHECK_MSG(count_run(e, &ds, eps[k], &g) == 0, "%s: %s", names[t], err_msg());
                CHECK_MSG(jr_metric(&g, "cache_hit") == hit[k],
                          "%s: run %d at eps %g: cache_hit %g, wanted %d", names[t], k, eps[k],
                          jr_metric(&g, "cache_hit"), hit[k]);
                if (eps[k] == 0.15)
                    CHECK_EQ_INT(g.pairs, a.pairs);
                if (eps[k] == 0.2)
                    CHECK_EQ_INT(g.pairs, f.pairs);
            }
        }
        printf("# %s: index %.2f ms, run %.2f ms, cached run %.2f ms\n", names[t],
               jr_phase(&a, "index") * 1e3, a.seconds * 1e3, b.seconds * 1e3);
    }
    dataset_free(&ds);
}

/* The grid's pairs_examined are the distances it computed (a pruned
 * run's record, kern_join_result.examined) and its pairs_skipped those
 * it credited without one (its sub-cells), their sum each case's count derived
 * from the cells (side eps (1 + 1e-6) from the smallest value): rows 3
 * apart on a line at eps 1 lie in cells 2 or 3 apart (cell 3i - 1 for
 * row i >= 1, 0 for row 0), so a row's only candidate is itself: n; 700
 * copies of one row share one cell: 700^2; and on a uniform cube of 2*10^4
 * rows every pair within eps was a candidate, and the 27 cells around a
 * row hold 27 eps^3 n rows on average (the cube's faces leave cells with
 * fewer neighbours; a Python count of the same cells on such a cube gave
 * 0.997 of it; the Poisson spread of 2.9*10^5 candidates is 0.2%):
 * within [0.9, 1.05] of 27 eps^3 n^2. */
TEST(grid_counts_the_distances_it_computes)
{
    need_gpu();
    const size_t n = 5000;
    dataset line = make("line", n, 1);
    for (size_t i = 0; i < n; i++)
        ((double *)line.v)[i] = 3.0 * (double)i;
    finish(&line);
    dataset same = make("same", 700, 2);
    for (size_t i = 0; i < 2 * 700; i++)
        ((double *)same.v)[i] = 0.25;
    finish(&same);
    dataset cube = set_unif("cube", 20000, 3, 5);
    const struct {
        dataset *ds;
        double eps, want;
    } c[3] = {{&line, 1.0, (double)n}, {&same, 0.1, 700.0 * 700.0}, {&cube, 0.03, -1}};
    for (int k = 0; k < 3; k++) {
        join_result r;
        CHECK_MSG(count_run(engine_find("exact"), c[k].ds, c[k].eps, &r) == 0, "%s: %s",
                  c[k].ds->name, err_msg());
        /* at d <= 3 a query's own sub-cell is counted without distances
         * (pairs_skipped; tests/gpu/g_dense.c): the candidates are both */
        const double sk = fmax(jr_metric(&r, "pairs_skipped"), 0);
        const double ex = fmax(jr_metric(&r, "pairs_examined"), 0) + sk, nn = (double)c[k].ds->n;
        if (c[k].want >= 0)
            CHECK_MSG(ex == c[k].want && sk == (k == 1 ? c[k].want : 0),
                      "%s: %g pairs examined or skipped (%g skipped), want %g (skipped: all of "
                      "the 700 copies' pairs, none of the line's rows, each alone in its "
                      "sub-cell)",
                      c[k].ds->name, ex, sk, c[k].want);
        else {
            const double e27 = 27 * pow(c[k].eps, 3) * nn * nn;
            CHECK_MSG(ex >= (double)r.pairs && ex >= 0.9 * e27 && ex <= 1.05 * e27,
                      "%s: %g pairs examined, %llu pairs, 27 eps^3 n^2 = %g", c[k].ds->name, ex,
                      (unsigned long long)r.pairs, e27);
        }
        CHECK_MSG(jr_metric(&r, "tflops_paper") < 0, "%s: the tensor cores' TFLOPS claimed",
                  c[k].ds->name);
    }
    dataset_free(&line);
    dataset_free(&same);
    dataset_free(&cube);
}

/* compute-sanitizer's case for the tile cut (scripts/gpu-check): a small
 * clustered d = 8 set whose block list leaves most pairs out, the pass
 * over the listed tiles (kernels/fasted.cu's table from the list) equal to
 * fp64 in every mode, symmetric, with 1000-pair batches. */
TEST(tiles_sanitizer_case)
{
    need_gpu();
    gen_opts g = {
        .kind = "gauss", .n = 4096, .d = 8, .seed = 44, .opt = {{"clusters", "8"}}, .nopt = 1};
    dataset ds = {0};
    CHECK(dataset_generate(&g, &ds) == 0);
    const double eps = eps_for(&ds, 30);
    engine_opts opts;
    engine_opts_default(&opts);
    join_outcome ref = exact_run("fp64", &ds, eps, &opts, 0);
    join_outcome a = run_path("exact", &ds, eps, EXACT_PATH_TILES, 1, 1, 0);
    char why[200];
    CHECK_MSG(ref.rc == 0 && a.rc == 0 && jo_same(&a, &ref, ds.n, why, sizeof why), "san: %s",
              a.rc || ref.rc ? err_msg() : why);
    CHECK_MSG(jo_metric(&a, "path") == 3 && jo_metric(&a, "tile_work") < 1, "path %g work %g",
              jo_metric(&a, "path"), jo_metric(&a, "tile_work"));
    jo_free(&a);
    jo_free(&ref);
    dataset_free(&ds);
}
