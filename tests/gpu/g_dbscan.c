/* GPU tests of dbscan (src/dbscan.h) against the CPU.
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
 * Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
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

/* dbscan of ds on engine name at eps (exact: the grid path forced). */
static int run_db(const char *name, const dataset *ds, double eps, size_t minpts, int32_t *lab,
                  uint8_t *core, dbscan_result *res)
{
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    dbscan_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.minpts = minpts;
    s.opts = &o;
    s.labels = lab;
    s.core = core;
    return dbscan_run(engine_find(name), &s, res);
}

/* engine a against engine b, label for label. */
static void check_same(const char *what, const char *a, const char *b, const dataset *ds,
                       double eps, size_t minpts)
{
    const size_t n = ds->n;
    int32_t *la = xmalloc(n * sizeof *la), *lb = xmalloc(n * sizeof *lb);
    uint8_t *ca = xmalloc(n), *cb = xmalloc(n);
    dbscan_result ra, rb;
    int rc = run_db(a, ds, eps, minpts, la, ca, &ra);
    CHECK_MSG(rc == 0, "%s %s: %s", what, a, err_msg());
    int rc2 = run_db(b, ds, eps, minpts, lb, cb, &rb);
    CHECK_MSG(rc2 == 0, "%s %s: %s", what, b, err_msg());
    if (rc == 0 && rc2 == 0) {
        size_t bad = 0, first = n;
        for (size_t i = 0; i < n; i++)
            if (la[i] != lb[i] || !ca[i] != !cb[i]) {
                bad++;
                if (first == n)
                    first = i;
            }
        CHECK_MSG(bad == 0,
                  "%s (n %zu, eps %g, minpts %zu): %s and %s differ on %zu points, first %zu "
                  "(%d/%d core %d/%d)",
                  what, n, eps, minpts, a, b, bad, first, first < n ? la[first] : 0,
                  first < n ? lb[first] : 0, first < n ? ca[first] : 0, first < n ? cb[first] : 0);
        printf("# %-10s %s vs %s: %zu clusters, %zu core, %zu noise; %.2f ms vs %.2f ms\n", what, a,
               b, ra.clusters, ra.core, ra.noise, ra.seconds * 1e3, rb.seconds * 1e3);
    }
    free(la);
    free(lb);
    free(ca);
    free(cb);
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
