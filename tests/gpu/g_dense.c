/* GPU tests of the FP64 grid's sub-cells (kernels/grid_gpu.cuh,
 * kernels/fp64_grid.cu): at d <= 3 each cell is cut in two along every
 * dimension, every pair within one sub-cell is within eps, so COUNT and
 * PERPOINT credit a query's own sub-cell without distances, and DBSCAN
 * makes the rows of a sub-cell holding minpts rows or more (a dense cell)
 * core without any distance and unites each sub-cell's core rows before
 * its union pass. Checked:
 *   - every mode of exact's grid equals fp64 on halo-like sets (dense
 *     Gaussian halos of power-law sizes in a uniform background), at d = 2
 *     and 3, with duplicates (sub-cells of 75 copies) and lattices whose
 *     pairs lie exactly at eps;
 *   - the shortcuts are taken, counted exactly: pairs_skipped equals the
 *     sum over sub-cells of KERN_GRID_OWN_MIN rows or more of their size
 *     squared where such sub-cells hold a sixteenth of the rows (else
 *     none: COUNT reads no sub-cell), and the dense cells and
 *     their rows equal a host count of the sub-cells (the cell formula of
 *     grid_build_gpu: floor((v - min) / (eps (1 + 1e-6) / 2)) along each
 *     dimension, computed here apart from the device);
 *   - DBSCAN's labels and core flags equal cpu's and the grid's own with
 *     the shortcuts off (TCJOIN_GRID_DENSE=0), minpts 2 to 100, with
 *     sub-cells of exactly minpts and minpts - 1 rows; where the dense
 *     cells hold a sixteenth of the rows (else the pass is the plain one
 *     and reports none), at least one minpts of each halo set.
 * G_DENSE_SMALL=1: sets a tenth the size (scripts/gpu-check's sanitizers).
 * Skipped without a CUDA device. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "exact_path.h"
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static int small(void)
{
    const char *v = getenv("G_DENSE_SMALL");
    return v && *v == '1';
}

/* n, or a tenth of it under G_DENSE_SMALL (whose sparser halos may leave
 * COUNT's shortcut and the dense cells untaken: only the answers are
 * checked then) */
static size_t sz(size_t n)
{
    return small() ? n / 10 : n;
}

static void dense_set(int on)
{
    if (on)
        unsetenv("TCJOIN_GRID_DENSE");
    else
        setenv("TCJOIN_GRID_DENSE", "0", 1);
}

/* Halo-like: `halos` Gaussian halos whose weights follow a power law (a
 * point picks a halo by weight, sigma grows as weight^(1/d)), a fifth of
 * the points uniform in [0, 1)^d. */
static dataset halo_set(const char *name, size_t n, size_t d, size_t halos, double r0)
{
    dataset ds = make(name, n, d);
    double *x = (double *)ds.v;
    double *c = xmalloc(halos * d * sizeof *c), *w = xmalloc(halos * sizeof *w);
    double tot = 0;
    for (size_t h = 0; h < halos; h++) {
        for (size_t k = 0; k < d; k++)
            c[h * d + k] = rng_unit();
        w[h] = 1.0 / (1.0 - 0.999 * rng_unit()); /* in [1, 1000], density ~ w^-2 */
        tot += w[h];
    }
    for (size_t i = 0; i < n; i++) {
        if (rng_unit() < 0.2) {
            for (size_t k = 0; k < d; k++)
                x[i * d + k] = rng_unit();
            continue;
        }
        double u = rng_unit() * tot;
        size_t h = 0;
        while (h + 1 < halos && u >= w[h])
            u -= w[h++];
        const double s = r0 * pow(w[h], 1.0 / (double)d);
        for (size_t k = 0; k < d; k++) {
            const double u1 = 1.0 - rng_unit(), u2 = rng_unit();
            x[i * d + k] = c[h * d + k] + s * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
        }
    }
    free(c);
    free(w);
    finish(&ds);
    return ds;
}

/* Sub-cells of exactly m rows for m = mp - 1 and mp (far apart along the
 * first axis), a lattice of spacing eps (its neighbours exactly at eps),
 * and points of a uniform cloud. d = 2. */
static dataset edge_set(size_t mp, double eps)
{
    const size_t L = 20, cloud = 2000, n = 2 * mp - 1 + L * L + cloud;
    dataset ds = make("edges", n, 2);
    double *x = (double *)ds.v;
    size_t i = 0;
    /* the smallest value of each column is 0 (these copies), so the
     * sub-cells' edges lie at multiples of fine: the mp points sit in the
     * first quarter of one sub-cell, 800 sub-cells along */
    const double fine = eps * (1.0 + 1e-6) / 2.0;
    for (size_t j = 0; j < mp - 1; j++, i++) { /* mp - 1 copies of one point */
        x[2 * i] = 0.0;
        x[2 * i + 1] = 0.0;
    }
    for (size_t j = 0; j < mp; j++, i++) {
        x[2 * i] = (800.25 + 0.25 * (double)j / (double)mp) * fine;
        x[2 * i + 1] = 0.25 * fine;
    }
    for (size_t j = 0; j < L * L; j++, i++) {
        x[2 * i] = 300.0 + eps * (double)(j % L);
        x[2 * i + 1] = eps * (double)(j / L);
    }
    for (; i < n; i++) {
        x[2 * i] = 300.0 + eps * L * rng_unit();
        x[2 * i + 1] = eps * L * rng_unit();
    }
    finish(&ds);
    return ds;
}

/* 40 points at d = 3, each 75 times (duplicates fill sub-cells). */
static dataset dups3(void)
{
    const size_t n = 3000;
    dataset ds = make("dups3", n, 3);
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            ((double *)ds.v)[3 * i + k] = (double)((i * 7919) % 40) * 0.5 + k;
    finish(&ds);
    return ds;
}

/* The sub-cells as the device build forms them, counted on the host:
 * *sq the sum of their sizes squared over those of KERN_GRID_OWN_MIN rows
 * or more (the pairs COUNT credits without distances), *dc and *dr the
 * sub-cells of at least mp rows and their rows. */
static int cmp_key(const void *a, const void *b)
{
    const int64_t *p = a, *q = b;
    for (int k = 0; k < 3; k++)
        if (p[k] != q[k])
            return p[k] < q[k] ? -1 : 1;
    return 0;
}

static void host_subcells(const dataset *ds, double eps, size_t mp, double *sq, double *dc,
                          double *dr, double *own)
{
    const size_t n = ds->n, d = ds->d;
    const double *x = (const double *)ds->v, side = eps * (1.0 + 1e-6), fine = side / 2.0;
    double lo[3], hi[3];
    for (size_t k = 0; k < d; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            lo[k] = fmin(lo[k], x[i * d + k]);
            hi[k] = fmax(hi[k], x[i * d + k]);
        }
    }
    int64_t *key = xcalloc(n * 3, sizeof *key);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            const int64_t cnt = (int64_t)floor((hi[k] - lo[k]) / side) + 1;
            int64_t u = (int64_t)floor((x[i * d + k] - lo[k]) / fine);
            u = u < 0 ? 0 : u > 2 * cnt - 1 ? 2 * cnt - 1 : u;
            key[i * 3 + k] = u;
        }
    qsort(key, n, 3 * sizeof *key, cmp_key);
    *sq = *dc = *dr = *own = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && cmp_key(key + 3 * i, key + 3 * j) == 0)
            j++;
        const double m = (double)(j - i);
        if (j - i >= KERN_GRID_OWN_MIN) {
            *sq += m * m;
            *own += m;
        }
        if (j - i >= mp) {
            *dc += 1;
            *dr += m;
        }
        i = j;
    }
    free(key);
}

static engine_opts grid_opts(void)
{
    engine_opts o;
    engine_opts_default(&o);
    o.exact_path = EXACT_PATH_GRID;
    return o;
}

/* Every mode of exact's grid against fp64, the shortcuts on; COUNT's
 * skipped pairs are the sub-cells' squares exactly and its examined
 * fewer than with the shortcuts off. */
static void check_modes(const char *what, const dataset *ds, double eps)
{
    engine_opts go = grid_opts(), fo;
    engine_opts_default(&fo);
    join_outcome ref = exact_run("fp64", ds, eps, &fo, 0);
    CHECK_MSG(ref.rc == 0, "%s fp64: %s", what, err_msg());
    dense_set(1);
    join_outcome a = exact_run("exact", ds, eps, &go, 0);
    CHECK_MSG(a.rc == 0, "%s exact: %s", what, err_msg());
    dense_set(0);
    join_outcome b = exact_run("exact", ds, eps, &go, 0);
    dense_set(1);
    CHECK_MSG(b.rc == 0, "%s exact (no sub-cells): %s", what, err_msg());
    if (ref.rc || a.rc || b.rc)
        goto out;
    char why[200];
    CHECK_MSG(jo_same(&a, &ref, ds->n, why, sizeof why), "%s: grid and fp64 differ: %s", what, why);
    CHECK_MSG(jo_same(&b, &ref, ds->n, why, sizeof why),
              "%s: grid without sub-cells and fp64 differ: %s", what, why);
    double sq, dc, dr, own;
    host_subcells(ds, eps, 1, &sq, &dc, &dr, &own);
    /* COUNT takes them where a sixteenth of the rows lie in such sub-cells */
    if (own * 16 < (double)ds->n)
        sq = 0;
    const double sk = jo_metric(&a, "pairs_skipped"), ex = jo_metric(&a, "pairs_examined"),
                 ex0 = jo_metric(&b, "pairs_examined");
    CHECK_MSG(fmax(sk, 0) == sq, "%s: %g pairs skipped, the sub-cells' squares sum to %g", what, sk,
              sq);
    CHECK_MSG(jo_metric(&b, "pairs_skipped") < 0, "%s: pairs skipped with the shortcuts off", what);
    CHECK_MSG(sq > 0 || !strncmp(what, "plain", 5) || small(),
              "%s: the shortcut is not taken (%g rows in sub-cells of %d rows or more)", what, own,
              KERN_GRID_OWN_MIN);
    CHECK_MSG(fmax(ex, 0) + fmax(sk, 0) == ex0,
              "%s: examined %g + skipped %g, %g without sub-cells", what, ex, sk, ex0);
    printf("# %-8s n=%zu d=%zu eps=%g: %llu pairs, %g skipped (%.1f%%), kernel %.2f ms, "
           "%.2f ms without\n",
           what, ds->n, ds->d, eps, (unsigned long long)ref.count, fmax(sk, 0),
           100 * fmax(sk, 0) / (double)ref.count, a.first.kernel_seconds * 1e3,
           b.first.kernel_seconds * 1e3);
out:
    jo_free(&ref);
    jo_free(&a);
    jo_free(&b);
}

TEST(grid_modes_equal_fp64_with_sub_cells)
{
    need_gpu();
    rng_state = 11;
    dataset ds = halo_set("halo3", sz(30000), 3, 200, 0.002);
    check_modes("halo3", &ds, 0.01);
    check_modes("halo3", &ds, 0.03);
    dataset_free(&ds);
    ds = halo_set("halo2", sz(30000), 2, 100, 0.002);
    check_modes("halo2", &ds, 0.005);
    dataset_free(&ds);
    ds = edge_set(10, 0.25); /* too few such rows: COUNT takes no shortcut */
    check_modes("plain edges", &ds, 0.25);
    dataset_free(&ds);
    ds = dups3();
    check_modes("dups3", &ds, 0.6);
    dataset_free(&ds);
    ds = set_lattice();
    check_modes("plain lattice", &ds, 1.0);
    dataset_free(&ds);
}

static int dbscan_o(const char *name, const dataset *ds, double eps, size_t mp,
                    const engine_opts *o, int32_t *lab, uint8_t *core, dbscan_result *res)
{
    dbscan_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.minpts = mp;
    s.opts = o;
    s.labels = lab;
    s.core = core;
    return dbscan_run(engine_find(name), &s, res);
}

static int dense_taken; /* cases whose dense cells were taken */

/* exact's grid DBSCAN with the shortcuts on and off against cpu, label
 * for label and core for core; the dense cells and rows it reports equal
 * the host's count. */
static void check_dbscan(const char *what, const dataset *ds, double eps, size_t mp)
{
    const size_t n = ds->n;
    int32_t *l[3];
    uint8_t *c[3];
    dbscan_result r[3];
    engine_opts go = grid_opts(), co;
    engine_opts_default(&co);
    int rc[3];
    for (int k = 0; k < 3; k++) {
        l[k] = xmalloc(n * sizeof *l[k]);
        c[k] = xmalloc(n);
        dense_set(k != 1);
        rc[k] = k < 2 ? dbscan_o("exact", ds, eps, mp, &go, l[k], c[k], &r[k])
                      : dbscan_o("cpu", ds, eps, mp, &co, l[k], c[k], &r[k]);
        CHECK_MSG(rc[k] == 0, "%s minpts %zu run %d: %s", what, mp, k, err_msg());
    }
    dense_set(1);
    if (rc[0] || rc[1] || rc[2])
        goto out;
    for (int k = 0; k < 2; k++) {
        size_t bad = 0, first = n;
        for (size_t i = 0; i < n; i++)
            if (l[k][i] != l[2][i] || !c[k][i] != !c[2][i]) {
                if (!bad++)
                    first = i;
            }
        CHECK_MSG(bad == 0, "%s minpts %zu (%s): %zu labels differ from cpu's, first row %zu", what,
                  mp, k ? "no sub-cells" : "sub-cells", bad, first);
    }
    double sq, dc, dr, own;
    host_subcells(ds, eps, mp, &sq, &dc, &dr, &own);
    /* taken where the dense cells hold a sixteenth of the rows, else none */
    if (dr * 16 < (double)n)
        dc = dr = 0;
    const join_result *p = &r[0].pass[DBSCAN_PASS_CORE];
    CHECK_MSG(jr_metric(p, "dense_cells") == dc && jr_metric(p, "dense_rows") == dr,
              "%s minpts %zu: %g dense cells of %g rows, the host counts %g of %g", what, mp,
              jr_metric(p, "dense_cells"), jr_metric(p, "dense_rows"), dc, dr);
    CHECK_MSG(jr_metric(&r[1].pass[DBSCAN_PASS_CORE], "dense_cells") == 0,
              "%s minpts %zu: dense cells with the shortcuts off", what, mp);
    dense_taken += dr > 0;
    printf("# %-8s minpts %3zu: %zu clusters, %zu core (%g in %g dense cells), %.2f ms, %.2f ms "
           "without\n",
           what, mp, r[0].clusters, r[0].core, dr, dc, r[0].seconds * 1e3, r[1].seconds * 1e3);
out:
    for (int k = 0; k < 3; k++) {
        free(l[k]);
        free(c[k]);
    }
}

TEST(grid_dbscan_with_dense_cells_equals_cpu)
{
    need_gpu();
    rng_state = 12;
    const size_t mps[5] = {2, 5, 10, 50, 100};
    dataset ds = halo_set("halo3", sz(40000), 3, 300, 0.002);
    dense_taken = 0;
    for (int k = 0; k < 5; k++)
        check_dbscan("halo3", &ds, 0.01, mps[k]);
    CHECK_MSG(dense_taken > 0 || small(), "halo3: no minpts took the dense cells");
    dataset_free(&ds);
    ds = halo_set("halo2", sz(40000), 2, 200, 0.002);
    dense_taken = 0;
    for (int k = 0; k < 5; k++)
        check_dbscan("halo2", &ds, 0.004, mps[k]);
    CHECK_MSG(dense_taken > 0 || small(), "halo2: no minpts took the dense cells");
    dataset_free(&ds);
    for (int k = 0; k < 3; k++) { /* sub-cells of exactly minpts and minpts - 1 rows */
        ds = edge_set(mps[k], 0.25);
        check_dbscan("edges", &ds, 0.25, mps[k]);
        dataset_free(&ds);
    }
    ds = dups3();
    dense_taken = 0;
    check_dbscan("dups3", &ds, 0.6, 10);
    CHECK_MSG(dense_taken == 1, "dups3: the dense cells were not taken");
    check_dbscan("dups3", &ds, 0.6, 76); /* 75 copies: all noise */
    dataset_free(&ds);
}
