/* GPU tests of dbscan (src/cluster/dbscan.h) against the CPU.
 *
 * Test plan:
 *  1. exact's clustering on the FP64 grid path (the union and border
 *     passes on the device, kernels/epi_cluster.cuh) equals dbscan on the
 *     cpu engine label for label and core flag for core flag: the grid's
 *     d2 are fp64's, which equal cpu's (g_fp64), so both see one eps-graph.
 *     Sets: blobs in 3-D, a 2-D integer lattice at eps = 1 (every
 *     neighbour exactly at eps), duplicates, UTM-like offsets, one point,
 *     all noise (minpts above every count), one cluster (eps wider than
 *     the data), the kitti scan; minpts 1, 4 and 10.
 *  2. the generic path on GPU engines (fp64, and fasted on its own
 *     eps-graph against the generic path run on fasted's pairs: the same
 *     engine twice must agree with itself through both streams).
 *  3. the device passes ran (the union pass's metric in the result) and
 *     the next run after a cancel goes on.
 *  4. the tensor-core rows' device passes (their PAIRS runs consumed on
 *     the device, kernels/kern_dbscan.cu, engine.consume =
 *     engine_gpu_consume, PAIRS_DBSCAN): fasted and fp8-e4m3 at d = 64,
 *     128 and 784 on blobs, uniform data, duplicates and a lattice whose
 *     neighbours are all exactly at eps equal dbscan_generic on the same
 *     row label for label (the same kernel's eps-graph through its PAIRS
 *     pass and the host), symmetric and not, minpts 4 and 10, the border
 *     from the union pass's lists and from its own pass
 *     (TCJOIN_DBSCAN_LISTS=0); the union from the core run's pairs kept
 *     on the device (these sets' graphs fit) and from a join of its own
 *     (TCJOIN_DBSCAN_KEEP=0); the device passes ran (their variants).
 *  5. exact off the grid (set exact-path pass: its PAIRS runs consumed on
 *     the device, kern_dbscan) equals cpu on the same sets, the lattice
 *     1000 away from the origin (FP16 alone would misjudge it); and over
 *     the cluster cut (set exact-path clusters: the layout's rows mapped
 *     back on the device) on four blobs far apart, the cut taken; the
 *     union from the kept pairs by default, from its own join with
 *     TCJOIN_DBSCAN_KEEP=0 and where the room (1000 pairs) overflows.
 *  6. two devices (set devices 0,1) equal one, fasted and exact; skipped
 *     with fewer than 2 devices.
 * Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "devices.h"
#include "dbscan.h"
#include "engine.h"
#include "err.h"
#include "exact_path.h"
#include "kernels.h"
#include "widen.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static uint64_t rng = 5;
static double runit(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

static dataset from(const char *name, const double *x, size_t n, size_t d)
{
    dataset ds = {0};
    ds.name = xstrdup(name);
    dataset_set_f64(&ds, x, n, d, DTYPE_F64);
    return ds;
}

static dataset blobs(size_t n, double ox)
{
    double *x = xmalloc(n * 3 * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        const int c = (int)(i % 7);
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = ox + c * 1.5 + (k == 0 ? c : 0) + 0.25 * (runit() - 0.5) * (1 + c % 3);
    }
    /* a tenth of the points spread out: noise and borders */
    for (size_t i = 0; i < n / 10; i++)
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = ox + 12 * runit();
    dataset ds = from("blobs", x, n, 3);
    free(x);
    return ds;
}

static dataset lattice(void)
{
    const size_t L = 30;
    double *x = xmalloc(L * L * 2 * sizeof *x);
    for (size_t i = 0; i < L * L; i++) {
        x[2 * i] = (double)(i % L) * ((i / L) % 5 == 0 ? 3 : 1);
        x[2 * i + 1] = (double)(i / L);
    }
    dataset ds = from("lattice", x, L * L, 2);
    free(x);
    return ds;
}

static dataset dups(void)
{
    const size_t n = 3000;
    double *x = xmalloc(n * 3 * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            x[3 * i + k] = (double)((i * 7919) % 40) * 0.5 + k;
    dataset ds = from("dups", x, n, 3);
    free(x);
    return ds;
}

static void same2(const char *what, const dataset *ds, double eps, size_t minpts, const char *a,
                  const engine_opts *oa, int ga, const char *b, const engine_opts *ob, int gb,
                  int dev_a);

/* engine a against engine b, label for label (exact: the grid path
 * forced). */
static void check_same(const char *what, const char *a, const char *b, const dataset *ds,
                       double eps, size_t minpts)
{
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    same2(what, ds, eps, minpts, a, &o, 0, b, &o, 0, 0);
}

TEST(exact_grid_dbscan_equals_cpu)
{
    need_gpu();
    const size_t mp[3] = {1, 4, 10};
    dataset ds = blobs(20000, 0);
    for (int k = 0; k < 3; k++)
        check_same("blobs", "exact", "cpu", &ds, 0.12, mp[k]);
    dataset_free(&ds);
    ds = blobs(20000, 5e6); /* UTM-like: the same shapes 5e6 m away */
    check_same("utm", "exact", "cpu", &ds, 0.12, 10);
    dataset_free(&ds);
    ds = lattice();
    check_same("lattice", "exact", "cpu", &ds, 1.0, 4);
    check_same("lattice", "exact", "cpu", &ds, 1.0, 5);
    dataset_free(&ds);
    ds = dups();
    check_same("dups", "exact", "cpu", &ds, 0.6, 10);
    check_same("all noise", "exact", "cpu", &ds, 0.1, ds.n);
    check_same("one clu", "exact", "cpu", &ds, 1e3, 3);
    dataset_free(&ds);
    double one[3] = {1, 2, 3};
    ds = from("one", one, 1, 3);
    check_same("one point", "exact", "cpu", &ds, 0.5, 1);
    dataset_free(&ds);
}

TEST(exact_grid_dbscan_on_the_kitti_scan)
{
    need_gpu();
    load_opts lo;
    load_opts_init(&lo);
    lo.dim = 4; /* x, y, z, reflectance */
    dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = dataset_load(t_dataset("kitti_000000_xyzr.f32"), &lo, &ds);
    CHECK_MSG(rc == 0, "%s", err_msg());
    if (rc)
        return;
    check_same("kitti", "exact", "cpu", &ds, 0.3, 10);
    dataset_free(&ds);
}

/* The generic path on GPU engines: fp64 against cpu (one eps-graph). */
TEST(generic_dbscan_on_gpu_engines)
{
    need_gpu();
    dataset ds = blobs(8000, 0);
    check_same("blobs", "fp64", "cpu", &ds, 0.12, 8);
    dataset_free(&ds);
}

/* ---- the tensor-core rows and exact off the grid (cases 4-6) ---- */

/* 8 Gaussian blobs (sigma 0.1 a coordinate) in [0, 4]^d, a tenth of the
 * rows uniform there; eps sigma sqrt(2d): about the median distance
 * within a blob, far below the distance between blobs. */
static dataset hd_blobs(size_t n, size_t d, double *eps)
{
    double *c = xmalloc(8 * d * sizeof *c), *x = xmalloc(n * d * sizeof *x);
    for (size_t k = 0; k < 8 * d; k++)
        c[k] = 4 * runit();
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            /* Irwin-Hall: 12 uniforms less 6 has variance 1 */
            double g = -6;
            for (int u = 0; u < 12; u++)
                g += runit();
            x[i * d + k] = i % 10 == 0 ? 4 * runit() : c[(i % 8) * d + k] + 0.1 * g;
        }
    *eps = 0.1 * sqrt(2.0 * (double)d);
    dataset ds = from("hd-blobs", x, n, d);
    free(c);
    free(x);
    return ds;
}

/* Uniform in [0, 1]^d, eps from 20000 sampled pairs at about 20
 * neighbours a point (the sample's quantile 20 / n). */
static dataset hd_uniform(size_t n, size_t d, double *eps)
{
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t k = 0; k < n * d; k++)
        x[k] = runit();
    enum { S = 20000 };
    double *dd = xmalloc(S * sizeof *dd);
    for (size_t t = 0; t < S; t++) {
        const size_t i = (size_t)(runit() * (double)n) % n, j = (size_t)(runit() * (double)n) % n;
        double a = 0;
        for (size_t k = 0; k < d; k++)
            a += (x[i * d + k] - x[j * d + k]) * (x[i * d + k] - x[j * d + k]);
        dd[t] = a;
    }
    size_t q = (size_t)(20.0 * S / (double)n);
    /* partial selection sort up to q: S is small */
    for (size_t a = 0; a <= q; a++)
        for (size_t b = a + 1; b < S; b++)
            if (dd[b] < dd[a]) {
                const double t = dd[a];
                dd[a] = dd[b];
                dd[b] = t;
            }
    *eps = sqrt(dd[q]);
    free(dd);
    dataset ds = from("hd-uniform", x, n, d);
    free(x);
    return ds;
}

/* 40 distinct points in [0, 1]^d, each repeated (groups of ~n/40 equal
 * rows: core at minpts up to that), a tenth of the rows points of their
 * own (noise); eps 0.1, far below the points' distances. */
static dataset hd_dups(size_t n, size_t d, double *eps)
{
    double *p = xmalloc(40 * d * sizeof *p), *x = xmalloc(n * d * sizeof *x);
    for (size_t k = 0; k < 40 * d; k++)
        p[k] = runit();
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = i % 10 == 3 ? runit() : p[((i * 7919) % 40) * d + k];
    *eps = 0.1;
    dataset ds = from("hd-dups", x, n, d);
    free(p);
    free(x);
    return ds;
}

/* A 30 x 30 integer lattice in the first two coordinates (every fifth row
 * stretched 3x: borders and noise), the others 0, all moved by off: every
 * neighbour exactly at eps = 1. */
static dataset hd_lattice(size_t d, double off, double *eps)
{
    const size_t L = 30, n = L * L;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = off + (k == 0   ? (double)(i % L) * ((i / L) % 5 == 0 ? 3 : 1)
                                  : k == 1 ? (double)(i / L)
                                           : 0.0);
    *eps = 1.0;
    dataset ds = from("hd-lattice", x, n, d);
    free(x);
    return ds;
}

/* dbscan through the row's hook (generic 0) or dbscan_generic on the same
 * row (generic 1), with options o. */
static int run_o(const char *name, const dataset *ds, double eps, size_t minpts,
                 const engine_opts *o, int generic, int32_t *lab, uint8_t *core, dbscan_result *res)
{
    const engine *e = engine_find(name);
    dbscan_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.minpts = minpts;
    s.opts = o;
    s.labels = lab;
    s.core = core;
    if (!generic)
        return dbscan_run(e, &s, res);
    memset(res, 0, sizeof *res);
    s.engine = e;
    const double t0 = engine_now();
    int rc = dbscan_generic(&s, res);
    res->seconds = engine_now() - t0;
    if (rc == 0)
        dbscan_summarize(lab, core, ds->n, res);
    return rc;
}

/* The labels of (a, oa, generic ga) and (b, ob, generic gb) equal; the
 * first ran its device passes when dev_a. */
static void same2(const char *what, const dataset *ds, double eps, size_t minpts, const char *a,
                  const engine_opts *oa, int ga, const char *b, const engine_opts *ob, int gb,
                  int dev_a)
{
    const size_t n = ds->n;
    int32_t *la = xmalloc(n * sizeof *la), *lb = xmalloc(n * sizeof *lb);
    uint8_t *ca = xmalloc(n), *cb = xmalloc(n);
    dbscan_result ra, rb;
    int rc = run_o(a, ds, eps, minpts, oa, ga, la, ca, &ra);
    CHECK_MSG(rc == 0, "%s %s: %s", what, a, err_msg());
    int rc2 = run_o(b, ds, eps, minpts, ob, gb, lb, cb, &rb);
    CHECK_MSG(rc2 == 0, "%s %s: %s", what, b, err_msg());
    if (rc == 0 && dev_a && ra.core > 0)
        CHECK_MSG(ra.ran[DBSCAN_PASS_UNION] && !ra.ran[DBSCAN_PASS_BORDER] &&
                      strstr(ra.pass[DBSCAN_PASS_CORE].variant, "dbscan core") &&
                      strstr(ra.pass[DBSCAN_PASS_UNION].variant, "dbscan union-find"),
                  "%s %s: the device passes did not run (variants '%s', '%s')", what, a,
                  ra.pass[DBSCAN_PASS_CORE].variant, ra.pass[DBSCAN_PASS_UNION].variant);
    if (rc == 0 && rc2 == 0) {
        size_t bad = 0, first = n;
        for (size_t i = 0; i < n; i++)
            if (la[i] != lb[i] || !ca[i] != !cb[i]) {
                bad++;
                if (first == n)
                    first = i;
            }
        CHECK_MSG(bad == 0,
                  "%s (n %zu, d %zu, eps %g, minpts %zu): %s and %s differ on %zu points, first "
                  "%zu (%d/%d core %d/%d)",
                  what, n, ds->d, eps, minpts, a, b, bad, first, first < n ? la[first] : 0,
                  first < n ? lb[first] : 0, first < n ? ca[first] : 0, first < n ? cb[first] : 0);
        printf("# %-10s d %3zu %s%s vs %s%s: %zu clusters, %zu core, %zu border, %zu noise; "
               "%.1f ms vs %.1f ms\n",
               what, ds->d, a, ga ? " (generic)" : "", b, gb ? " (generic)" : "", ra.clusters,
               ra.core, ra.border, ra.noise, ra.seconds * 1e3, rb.seconds * 1e3);
    }
    free(la);
    free(lb);
    free(ca);
    free(cb);
}

/* The sets of cases 4 and 5 at dimension d (k: 0 blobs, 1 uniform, 2
 * duplicates, 3 the lattice moved by off); n rows where the set has a
 * size. */
static dataset hd_set(int k, size_t n, size_t d, double off, double *eps)
{
    switch (k) {
    case 0:
        return hd_blobs(n, d, eps);
    case 1:
        return hd_uniform(n, d, eps);
    case 2:
        return hd_dups(n, d, eps);
    default:
        return hd_lattice(d, off, eps);
    }
}

static const size_t hd_dims[3] = {64, 128, 784};

/* Small sizes when G_DBSCAN_SMALL is set (the sanitizer runs: d = 64,
 * the blobs and the lattice, 700 rows). */
static size_t hd_n(size_t d)
{
    if (getenv("G_DBSCAN_SMALL"))
        return 700;
    return d > 200 ? 2500 : 6000;
}

TEST(tensor_core_dbscan_equals_generic)
{
    need_gpu();
    const char *rows[2] = {"fasted", "fp8-e4m3"};
    for (int r = 0; r < 2; r++) {
        engine_opts o;
        engine_opts_default(&o);
        if (engine_available(engine_find(rows[r]), &o) != 0) {
            printf("# %s: %s\n", rows[r], err_msg());
            continue;
        }
        for (int di = 0; di < 3; di++)
            for (int k = 0; k < 4; k++) {
                if (getenv("G_DBSCAN_SMALL") && (di > 0 || r > 0 || k == 1 || k == 2))
                    continue;
                double eps;
                dataset ds = hd_set(k, hd_n(hd_dims[di]), hd_dims[di], 0, &eps);
                /* symmetric, not, symmetric with the border pass
                 * instead of the lists, and with the union's own join */
                for (int v = 0; v < 4; v++) {
                    o.symmetric = v != 1;
                    if (v == 2)
                        setenv("TCJOIN_DBSCAN_LISTS", "0", 1);
                    if (v == 3)
                        setenv("TCJOIN_DBSCAN_KEEP", "0", 1);
                    char what[64];
                    snprintf(what, sizeof what, "%s%s", ds.name,
                             v == 1   ? " nosym"
                             : v == 2 ? " bpass"
                             : v == 3 ? " ujoin"
                                      : "");
                    same2(what, &ds, eps, 4, rows[r], &o, 0, rows[r], &o, 1, 1);
                    if (v != 1)
                        same2(what, &ds, eps, 10, rows[r], &o, 0, rows[r], &o, 1, 1);
                    unsetenv("TCJOIN_DBSCAN_LISTS");
                    unsetenv("TCJOIN_DBSCAN_KEEP");
                }
                dataset_free(&ds);
            }
    }
}

TEST(exact_pass_dbscan_equals_cpu)
{
    need_gpu();
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_PASS;
    for (int di = 0; di < 3; di++)
        for (int k = 0; k < 4; k++) {
            if (getenv("G_DBSCAN_SMALL") && (di > 0 || k == 1 || k == 2))
                continue;
            double eps;
            dataset ds = hd_set(k, hd_n(hd_dims[di]), hd_dims[di], 1000, &eps);
            same2(ds.name, &ds, eps, 4, "exact", &o, 0, "cpu", &o, 0, 1);
            same2(ds.name, &ds, eps, 10, "exact", &o, 0, "cpu", &o, 0, 1);
            setenv("TCJOIN_DBSCAN_LISTS", "0", 1); /* the border pass instead */
            same2("bpass", &ds, eps, 10, "exact", &o, 0, "cpu", &o, 0, 1);
            unsetenv("TCJOIN_DBSCAN_LISTS");
            setenv("TCJOIN_DBSCAN_KEEP", "0", 1); /* the union's own join */
            same2("ujoin", &ds, eps, 10, "exact", &o, 0, "cpu", &o, 0, 1);
            unsetenv("TCJOIN_DBSCAN_KEEP");
            dataset_free(&ds);
        }
}

/* Four blobs of 3000 rows at d = 64, each 50 from the origin along its
 * own axis (a cut groups each alone: 2048 rows at least a group), spread
 * 0.3 a coordinate; eps 0.75 of the mean distance within a blob (about a
 * tenth of a percent of a blob's pairs: core, border and noise rows). */
static dataset far_blobs(double *eps)
{
    const size_t n = 12000, d = 64;
    const double sd = 0.3;
    double *x = xmalloc(n * d * sizeof *x);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            double g = -6;
            for (int u = 0; u < 12; u++)
                g += runit();
            x[i * d + k] = (k == i % 4 ? 50.0 * (double)(i % 4 + 1) : 0.0) + sd * g;
        }
    *eps = 0.75 * sd * sqrt(2.0 * (double)d);
    dataset ds = from("far-blobs", x, n, d);
    free(x);
    return ds;
}

TEST(exact_cut_dbscan_equals_cpu)
{
    need_gpu();
    if (getenv("G_DBSCAN_SMALL"))
        t_skip("skipped: the cut needs 2 x 2048 rows");
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_CLUSTERS;
    double eps;
    dataset ds = far_blobs(&eps);
    same2("cut", &ds, eps, 4, "exact", &o, 0, "cpu", &o, 0, 1);
    same2("cut", &ds, eps, 10, "exact", &o, 0, "cpu", &o, 0, 1);
    /* the passes were cut: each ran over the layout */
    const size_t n = ds.n;
    int32_t *lab = xmalloc(n * sizeof *lab);
    uint8_t *core = xmalloc(n);
    dbscan_result r;
    CHECK(run_o("exact", &ds, eps, 10, &o, 0, lab, core, &r) == 0);
    const double cut = join_result_metric_value(&r.pass[DBSCAN_PASS_CORE], "clusters");
    CHECK_MSG(cut >= 2, "the core pass ran whole (clusters metric %g)", cut);
    CHECK_MSG(strstr(r.pass[DBSCAN_PASS_UNION].variant, "pairs kept") != NULL,
              "the union did not take the kept pairs (variant '%s')",
              r.pass[DBSCAN_PASS_UNION].variant);
    /* the union's own join: none kept, and a room that overflows */
    const char *keep[2] = {"0", "1000"};
    for (int k = 0; k < 2; k++) {
        setenv("TCJOIN_DBSCAN_KEEP", keep[k], 1);
        same2(k ? "cut keep 1000" : "cut keep 0", &ds, eps, 10, "exact", &o, 0, "cpu", &o, 0, 1);
        CHECK(run_o("exact", &ds, eps, 10, &o, 0, lab, core, &r) == 0);
        CHECK_MSG(strstr(r.pass[DBSCAN_PASS_UNION].variant, "pairs kept") == NULL,
                  "keep %s: the union took kept pairs (variant '%s')", keep[k],
                  r.pass[DBSCAN_PASS_UNION].variant);
        unsetenv("TCJOIN_DBSCAN_KEEP");
    }
    free(lab);
    free(core);
    dataset_free(&ds);
}

TEST(dbscan_two_devices_equal_one)
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
        double eps;
        dataset ds = hd_set(k, 8000, 128, 0, &eps);
        same2(ds.name, &ds, eps, 6, "fasted", &two, 0, "fasted", &one, 0, 1);
        same2(ds.name, &ds, eps, 6, "exact", &two, 0, "exact", &one, 0, 1);
        setenv("TCJOIN_DBSCAN_LISTS", "0", 1);
        same2("bpass", &ds, eps, 6, "fasted", &two, 0, "fasted", &one, 0, 1);
        unsetenv("TCJOIN_DBSCAN_LISTS");
        setenv("TCJOIN_DBSCAN_KEEP", "0", 1);
        same2("ujoin", &ds, eps, 6, "exact", &two, 0, "exact", &one, 0, 1);
        unsetenv("TCJOIN_DBSCAN_KEEP");
        dataset_free(&ds);
    }
}
