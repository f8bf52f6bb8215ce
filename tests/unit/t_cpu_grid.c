/* The CPU engines' grid index (src/cpu_grid.c): with the index forced on,
 * every CPU engine gives what it gives without it, in every output mode
 * (pair sets and their d2 bit for bit), on generated clouds and on data
 * made to break a grid: points exactly eps apart on cell boundaries,
 * duplicates, negative and huge coordinates, NaN and infinities, spreads
 * too wide for cells of side eps, radii too small to index. The brute
 * force path itself is checked against a direct computation in
 * t_cpu_simd.c and t_engine_cpu.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "cpu_grid.h"
#include "cpu_join.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "join_outcome.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;
extern const engine engine_cpu_bf16;
extern const engine engine_cpu_exact;

static uint64_t rng_state;

static double rng_unit(void)
{
    return t_unit(&rng_state);
}

static dataset make_empty(size_t n, size_t d)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = calloc(n * d + 1, sizeof(double));
    return ds;
}

/* Uniform in the unit cube, eps for about S neighbours (ignoring edges). */
static dataset make_cloud(size_t n, size_t d, uint64_t seed, double S, double *eps)
{
    dataset ds = make_empty(n, d);
    rng_state = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = rng_unit();
    /* volume of the unit d-ball: pi^(d/2) / Gamma(d/2 + 1) */
    double vol = pow(M_PI, d / 2.0) / tgamma(d / 2.0 + 1);
    *eps = pow(S / ((double)n * vol), 1.0 / (double)d);
    return ds;
}

static const engine *const engines[] = {&engine_cpu, &engine_cpu_fp16, &engine_cpu_bf16,
                                        &engine_cpu_exact};

/* Index on against index off over the engines es[0..ne), every mode, all
 * rows and (slices) a slice of rows. cpu-exact is held to the cpu engine
 * without the index (brute force FP64: pair sets, per-point counts,
 * histograms and d2 bit for bit); data it refuses (values that are not
 * finite) must be refused with the index too. want_grid: the forced runs
 * of cpu and cpu-exact must say they used the index. */
static void on_equals_off_with(const engine *const *es, size_t ne, int slices, const dataset *ds,
                               double eps, int want_grid, const char *what)
{
    const size_t nb = 6;
    double edges[7];
    for (size_t b = 0; b <= nb; b++)
        edges[b] = eps * eps * (0.1 + 0.15 * (double)b);
    char why[256];
    for (size_t e = 0; e < ne; e++) {
        const int exact = es[e] == &engine_cpu_exact;
        for (int slice = 0; slice < slices; slice++) {
            size_t q0 = slice ? ds->n / 3 : 0, q1 = slice ? ds->n - ds->n / 5 : ds->n;
            engine_opts o;
            engine_opts_default(&o);
            o.cpu_index = CPU_INDEX_OFF;
            join_outcome off = jo_run(es[e], ds, eps, q0, q1, &o, edges, nb);
            if (exact && off.rc == TCJ_EINVAL) {
                o.cpu_index = CPU_INDEX_ON;
                join_outcome on = jo_run(es[e], ds, eps, q0, q1, &o, edges, nb);
                CHECK_MSG(on.rc == TCJ_EINVAL, "%s: cpu-exact refuses only without the index",
                          what);
                jo_free(&on);
                jo_free(&off);
                continue;
            }
            if (exact) {
                jo_free(&off);
                off = jo_run(&engine_cpu, ds, eps, q0, q1, &o, edges, nb);
            }
            o.cpu_index = CPU_INDEX_ON;
            join_outcome on = jo_run(es[e], ds, eps, q0, q1, &o, edges, nb);
            int same = jo_same(&on, &off, q1 - q0, why, sizeof why);
            int grid = strstr(on.variant, "grid k=") != NULL;
            int offgrid = strstr(off.variant, "grid") != NULL;
            jo_free(&on);
            jo_free(&off);
            CHECK_MSG(same, "%s, %s, rows %zu..%zu: index on vs %s off: %s", what, es[e]->name, q0,
                      q1, exact ? "cpu" : "itself", why);
            CHECK_MSG(!offgrid, "%s: index off still used the grid", what);
            if (want_grid && (es[e] == &engine_cpu || exact))
                CHECK_MSG(grid, "%s, %s: the forced run did not use the grid", what, es[e]->name);
        }
    }
}

static void on_equals_off(const dataset *ds, double eps, int want_grid, const char *what)
{
    on_equals_off_with(engines, sizeof engines / sizeof *engines, 2, ds, eps, want_grid, what);
}

TEST(grid_equals_brute_force_on_clouds)
{
    static const size_t dims[] = {1, 2, 3, 4, 8};
    for (size_t i = 0; i < sizeof dims / sizeof *dims; i++) {
        double eps;
        dataset ds = make_cloud(1200, dims[i], 40 + i, 10, &eps);
        char what[64];
        snprintf(what, sizeof what, "cloud d=%zu", dims[i]);
        on_equals_off(&ds, eps, 1, what);
        free(ds.v);
    }
}

/* Integer lattices at eps = 1: every neighbour exactly eps away along one
 * axis, every point on a cell boundary; then shifted negative, pushed to
 * 2^50 (integers still exact), and copied (duplicates). */
TEST(grid_equals_brute_force_on_boundaries_and_duplicates)
{
    const size_t side = 7, d = 3, n = side * side * side;
    static const double shift[] = {0, -1000.0, 0x1p50, -0x1p50};
    for (size_t s = 0; s < sizeof shift / sizeof *shift; s++) {
        dataset ds = make_empty(2 * n, d);
        for (size_t i = 0; i < n; i++) {
            ((double *)ds.v)[i * d + 0] = shift[s] + (double)(i % side);
            ((double *)ds.v)[i * d + 1] = shift[s] - (double)(i / side % side);
            ((double *)ds.v)[i * d + 2] = (double)(i / side / side);
        }
        memcpy(((double *)ds.v) + n * d, ((double *)ds.v),
               n * d * sizeof(double)); /* each point twice */
        char what[64];
        snprintf(what, sizeof what, "lattice shifted %g", shift[s]);
        on_equals_off(&ds, 1.0, 1, what);
        /* sqrt(2) and sqrt(3) exactly at the diagonals' distance (rounded) */
        on_equals_off(&ds, sqrt(2.0), 1, what);
        on_equals_off(&ds, sqrt(3.0), 1, what);
        free(ds.v);
    }
    /* a lattice of step 0.1 (not representable: rounding at each boundary) */
    dataset ds = make_empty(n, d);
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            ((double *)ds.v)[i * d + k] = 0.1 * (double)(i /
                                                         (k == 0   ? 1
                                                          : k == 1 ? side
                                                                   : side * side) %
                                                         side);
    on_equals_off(&ds, 0.1, 1, "lattice step 0.1");
    on_equals_off(&ds, 0.1 * sqrt(2.0), 1, "lattice step 0.1, diagonal");
    free(ds.v);
}

/* Huge coordinates, spreads wider than 2^24 cells, NaN and infinities,
 * all points equal, and radii the index must refuse. */
TEST(grid_equals_brute_force_on_hostile_values)
{
    const size_t n = 900, d = 3;
    dataset ds = make_empty(n, d);
    rng_state = 9;
    /* clusters around 1e300 and -1e300: the range overflows to Inf */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            ((double *)ds.v)[i * d + k] = (i % 2 ? 1e300 : -1e300) + 1e285 * rng_unit();
    on_equals_off(&ds, 3e284, 0, "clusters at +-1e300");
    /* a spread of 1e9 with eps 1e-3: 1e12 cells would be needed */
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            ((double *)ds.v)[i * d + k] = i < n / 2 ? 1e9 * rng_unit() : 5e8 + 1e-2 * rng_unit();
    on_equals_off(&ds, 1e-3, 1, "spread 1e9, eps 1e-3");
    /* NaN and infinities scattered through a cloud */
    static const double bad[] = {NAN, INFINITY, -INFINITY, -NAN};
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            ((double *)ds.v)[i * d + k] = i % 7 == k ? bad[i % 4] : rng_unit();
    on_equals_off(&ds, 0.08, 1, "NaN and Inf");
    /* every point the same */
    for (size_t i = 0; i < n * d; i++)
        ((double *)ds.v)[i] = -3.25;
    on_equals_off(&ds, 0.5, 0, "all equal");
    /* a radius whose square underflows, and one too large to matter */
    for (size_t i = 0; i < n * d; i++)
        ((double *)ds.v)[i] = 1e-200 * (double)(i % 37);
    on_equals_off(&ds, 1e-200, 0, "eps 1e-200");
    on_equals_off(&ds, 1e300, 0, "eps 1e300");
    free(ds.v);
}

/* The index itself: the ranges of a point's cell hold every point within
 * the radius along each indexed dimension, ascending and apart. */
TEST(grid_ranges_hold_every_neighbour)
{
    for (size_t d = 1; d <= 6; d++) {
        double eps;
        dataset ds = make_cloud(1200, d, 70 + d, 12, &eps);
        cpu_grid g;
        CHECK_EQ_INT(cpu_grid_build(&ds, eps, CPU_GRID_MAXK, &g), 0);
        CHECK(g.k >= 1 && g.k <= (int)d);
        uint32_t *pos = malloc(ds.n * sizeof *pos), *cell = malloc(ds.n * sizeof *cell);
        for (size_t c = 0; c < g.ncell; c++)
            for (size_t p = g.start[c]; p < g.start[c + 1]; p++) {
                pos[g.order[p]] = (uint32_t)p;
                cell[g.order[p]] = (uint32_t)c;
            }
        size_t(*rng)[2] = malloc(g.max_ranges * sizeof *rng);
        for (size_t i = 0; i < ds.n; i++) {
            size_t nr = cpu_grid_ranges(&g, cell[i], rng);
            CHECK(nr >= 1 && nr <= g.max_ranges);
            for (size_t r = 0; r < nr; r++) {
                CHECK(rng[r][0] < rng[r][1]);
                CHECK(r == 0 || rng[r - 1][1] < rng[r][0]);
            }
            for (size_t j = 0; j < ds.n; j++) {
                int near = 1;
                for (size_t k = 0; k < d; k++)
                    near &= fabs(((double *)ds.v)[i * d + k] - ((double *)ds.v)[j * d + k]) <= eps;
                if (!near)
                    continue;
                int in = 0;
                for (size_t r = 0; r < nr; r++)
                    in |= pos[j] >= rng[r][0] && pos[j] < rng[r][1];
                CHECK_MSG(in, "d=%zu: row %zu near row %zu but not among its candidates", d, j, i);
            }
        }
        free(rng);
        free(pos);
        free(cell);
        cpu_grid_free(&g);
        free(ds.v);
    }
}

/* Auto: a 3-D cloud gets the index, 64-D uniform data (where every cell
 * is every other's neighbour) does not. */
TEST(grid_auto_uses_the_index_when_it_prunes)
{
    engine_opts o;
    engine_opts_default(&o);
    double eps;
    dataset ds = make_cloud(20000, 3, 5, 10, &eps);
    join_outcome a = jo_run(&engine_cpu, &ds, eps, 0, ds.n, &o, NULL, 0);
    int grid = strstr(a.variant, "grid k=") != NULL;
    jo_free(&a);
    free(ds.v);
    CHECK_MSG(grid, "3-D cloud: %s", a.variant);
    ds = make_cloud(5000, 64, 6, 10, &eps);
    a = jo_run(&engine_cpu, &ds, eps, 0, ds.n, &o, NULL, 0);
    grid = strstr(a.variant, "grid") != NULL;
    jo_free(&a);
    free(ds.v);
    CHECK_MSG(!grid, "64-D uniform: %s", a.variant);
    /* the setting turns it off (set cpu-index off) */
    o.cpu_index = CPU_INDEX_OFF;
    ds = make_cloud(20000, 3, 5, 10, &eps);
    a = jo_run(&engine_cpu, &ds, eps, 0, ds.n, &o, NULL, 0);
    grid = strstr(a.variant, "grid") != NULL;
    jo_free(&a);
    free(ds.v);
    CHECK(!grid);
}

/* Issue 44's cases for the CPU path, every CPU engine (cpu-exact against
 * cpu without the index): d = 2 to 16 (k <= 8 of them indexed), eps
 * larger than the data's extent (no dimension spans a cell: no index),
 * eps so small every point is alone, one point, a UTM-like offset of
 * 5e6 with a spread of a few cm, and duplicates of every point. */
TEST(grid_equals_brute_force_issue44_cases)
{
    for (size_t d = 2; d <= 16; d += d < 4 ? 1 : 4) {
        double eps;
        dataset ds = make_cloud(1000, d, 90 + d, 10, &eps);
        char what[64];
        snprintf(what, sizeof what, "cloud d=%zu", d);
        /* beyond d = 8, eps for S = 10 among 1000 points spans the cube:
         * no dimension has two cells, and brute force runs */
        on_equals_off(&ds, eps, d <= 8, what);
        free(ds.v);
    }
    double eps;
    dataset ds = make_cloud(800, 3, 7, 10, &eps);
    on_equals_off(&ds, 3.0, 0, "eps beyond the extent");
    on_equals_off(&ds, 1e-9, 1, "eps 1e-9, every point alone");
    for (size_t i = 0; i < ds.n * ds.d; i++) /* UTM-like: 5e6 m, cm spread */
        ((double *)ds.v)[i] = (i % 3 == 2 ? 120.0 : 5e6) + 0.05 * ((double *)ds.v)[i];
    on_equals_off(&ds, 0.05 * eps, 1, "offset 5e6, spread 5 cm");
    free(ds.v);
    ds = make_cloud(1, 3, 8, 10, &eps);
    on_equals_off(&ds, 0.1, 0, "one point");
    free(ds.v);
    ds = make_cloud(600, 2, 9, 10, &eps);
    dataset dup = make_empty(1200, 2);
    memcpy(dup.v, ds.v, 1200 * sizeof(double));
    memcpy((double *)dup.v + 1200, ds.v, 1200 * sizeof(double));
    on_equals_off(&dup, eps, 1, "every point twice");
    free(ds.v);
    free(dup.v);
}

/* The shared kitti scan (all 20,285 points, d = 4): cpu and cpu-exact
 * through the index against cpu brute force, every mode. */
TEST(grid_equals_brute_force_on_kitti)
{
    dataset ds;
    load_opts lo;
    load_opts_init(&lo);
    lo.dim = 4; /* x, y, z, reflectance */
    CHECK_MSG(dataset_load(t_dataset("kitti_000000_xyzr.f32"), &lo, &ds) == 0, "%s", err_msg());
    static const engine *const two[] = {&engine_cpu, &engine_cpu_exact};
    on_equals_off_with(two, 2, 1, &ds, 0.2, 1, "kitti");
    dataset_free(&ds);
}

/* A grid run reports the pairs it examined (counter pairs_examined, what
 * derived rates count instead of nq*n): every query row times the rows of
 * the cells within one cell of its own along each indexed dimension,
 * counted here pair by pair from the index's cells; a brute-force run
 * reports none, and engine_pairs_examined falls back to nq*n. */
TEST(grid_reports_the_pairs_it_examined)
{
    double eps;
    dataset ds = make_cloud(1500, 3, 11, 10, &eps);
    engine_opts o;
    engine_opts_default(&o);
    o.cpu_index = CPU_INDEX_ON;
    const size_t q0 = 100, q1 = 1400;
    join_outcome on = jo_run(&engine_cpu, &ds, eps, q0, q1, &o, NULL, 0);
    CHECK_MSG(on.rc == 0, "%s", err_msg());
    cpu_grid g;
    CHECK_EQ_INT(cpu_grid_build(&ds, sqrt(eps * eps) * (1 + 1e-12), CPU_GRID_MAXK, &g), 0);
    CHECK(g.k >= 1);
    const double *x = ds.v;
    long long *cell = malloc(ds.n * CPU_GRID_MAXK * sizeof *cell);
    for (size_t i = 0; i < ds.n; i++)
        for (int j = 0; j < g.k; j++) {
            double c = floor((x[i * ds.d + g.dim[j]] - g.lo[j]) / g.side[j]);
            cell[i * CPU_GRID_MAXK + j] = c >= (double)g.cnt[j] ? g.cnt[j] - 1 : (long long)c;
        }
    double want = 0;
    for (size_t i = q0; i < q1; i++)
        for (size_t m = 0; m < ds.n; m++) {
            int near = 1;
            for (int j = 0; j < g.k; j++)
                near &= llabs(cell[i * CPU_GRID_MAXK + j] - cell[m * CPU_GRID_MAXK + j]) <= 1;
            want += near;
        }
    int pruned = 0;
    const double got = engine_pairs_examined(&on.first, (double)(q1 - q0), (double)ds.n, &pruned);
    CHECK_MSG(pruned && got == want, "examined %.0f, want %.0f (pruned %d)", got, want, pruned);
    CHECK(got >= (double)on.count && got < 0.5 * (double)(q1 - q0) * (double)ds.n);
    o.cpu_index = CPU_INDEX_OFF;
    join_outcome off = jo_run(&engine_cpu, &ds, eps, q0, q1, &o, NULL, 0);
    CHECK(engine_pairs_examined(&off.first, (double)(q1 - q0), (double)ds.n, &pruned) ==
              (double)(q1 - q0) * (double)ds.n &&
          !pruned);
    free(cell);
    cpu_grid_free(&g);
    jo_free(&on);
    jo_free(&off);
    free(ds.v);
}
