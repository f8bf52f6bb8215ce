/* k-distance against an independent computation: every distance of a row
 * computed here in FP64 (direct (a-b)^2 form, in dimension order, as the
 * cpu engine's contract says), sorted, the K-th of the other rows taken;
 * Kneedle against curves whose knee is known by construction; the curve,
 * the store, export and the command end to end into the dashboard's view. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "cmd.h"
#include "cpu_join.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "kdist.h"
#include "out.h"
#include "session.h"
#include "session_capture.h"
#include "settings.h"
#include "store.h"
#include "view.h"
#include "widen.h"

extern const engine engine_cpu;

static uint64_t rng;
static uint64_t rnext(void)
{
    return t_splitmix(&rng);
}

/* n points of d values; grid > 0: integers in [0, grid) (many ties), and
 * every 7th point a copy of the one before (duplicates at distance 0). */
static dataset make(size_t n, size_t d, int grid, uint64_t seed)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.name = "t";
    ds.v = malloc(n * d * sizeof(double));
    rng = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            double v =
                grid ? (double)(rnext() % (uint64_t)grid) : (double)(rnext() >> 11) * 0x1p-53;
            ((double *)ds.v)[i * d + k] =
                (grid && i % 7 == 6) ? ((double *)ds.v)[(i - 1) * d + k] : v;
        }
    return ds;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The K-th smallest d2 from row q to the other rows. */
static double brute_kth(const dataset *ds, size_t q, int k, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < ds->n; j++) {
        if (j == q)
            continue;
        tmp[m++] = t_d2(ds, q, j);
    }
    qsort(tmp, m, sizeof *tmp, cmp_dbl);
    return tmp[k - 1];
}

/* kdist of rows [q0, q1) with the index setting idx (CPU_INDEX_*) against
 * brute_kth; with the index forced on, the run must say it took the grid
 * (want_grid). Nonzero when anything differs. */
static int check_engine_idx(const dataset *ds, int k, int threads, size_t q0, size_t q1, int idx,
                            int want_grid)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = threads;
    o.cpu_index = idx;
    double *out = malloc((q1 - q0) * sizeof *out), *tmp = malloc(ds->n * sizeof *tmp);
    kdist_spec s = {.ds = ds, .q0 = q0, .q1 = q1, .k = k, .opts = &o, .out = out};
    join_result res;
    int bad = kdist_run(&engine_cpu, &s, &res) != 0;
    if (!bad && want_grid && !strstr(res.variant, "grid k=")) {
        printf("# no grid: %s\n", res.variant);
        bad = 1;
    }
    for (size_t q = q0; q < q1 && !bad; q++) {
        const double want = brute_kth(ds, q, k, tmp);
        bad = memcmp(&out[q - q0], &want, sizeof want) != 0; /* same arithmetic: equal bits */
        if (bad)
            printf("# row %zu: %.17g, want %.17g (%s)\n", q, out[q - q0], want, res.variant);
    }
    free(out);
    free(tmp);
    return bad;
}

static int check_engine(const dataset *ds, int k, int threads, size_t q0, size_t q1)
{
    return check_engine_idx(ds, k, threads, q0, q1, CPU_INDEX_OFF, 0);
}

TEST(cpu_matches_brute_force)
{
    /* d = 37 spans the 16-dimension short-circuit steps twice, plus a tail. */
    dataset a = make(300, 37, 0, 1), b = make(299, 3, 4, 2), c = make(260, 16, 0, 3);
    int ks[] = {1, 2, 7, 50, 256};
    for (int t = 0; t < 5; t++) {
        CHECK_MSG(!check_engine(&a, ks[t], 3, 0, a.n), "uniform d=37 K=%d", ks[t]);
        CHECK_MSG(!check_engine(&b, ks[t], 1, 0, b.n), "ties and duplicates K=%d", ks[t]);
        CHECK_MSG(!check_engine(&c, ks[t], 2, 0, c.n), "d=16 K=%d", ks[t]);
    }
    /* a query range, more threads than blocks */
    CHECK(!check_engine(&a, 5, 8, 17, 41));
    /* K = n-1: the farthest other point */
    dataset e = make(120, 5, 3, 5);
    CHECK(!check_engine(&e, 119, 2, 0, e.n));
    free(e.v);
    /* duplicates make k-distance 0 for K=1 on the copies */
    engine_opts o;
    engine_opts_default(&o);
    double out[299];
    kdist_spec s = {.ds = &b, .q0 = 0, .q1 = b.n, .k = 1, .opts = &o, .out = out};
    join_result res;
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), 0);
    CHECK(out[6] == 0 && out[5] == 0);
    CHECK_STR_CONTAINS(res.variant, "top-1 heaps");
    free(a.v);
    free(b.v);
    free(c.v);
}

/* The grid passes (src/cpu_kdist.c) against brute_kth, the index forced
 * on: clouds of d = 2 to 16, integer data full of ties and duplicates, a
 * lattice whose neighbours all sit on cell borders, a UTM-like offset of
 * 5e6 with a spread of 5 cm, a tight cluster with far outliers (several
 * radii, then brute force for what is left), two points, query slices,
 * and rows 0:800 of the shared kitti scan under auto. */
TEST(kdist_grid_matches_brute_force)
{
    for (size_t d = 2; d <= 16; d += d < 4 ? 1 : 4) {
        dataset a = make(1500, d, 0, 40 + d);
        const int ks[] = {1, 4, 20};
        for (int t = 0; t < 3; t++)
            CHECK_MSG(!check_engine_idx(&a, ks[t], 2, 0, a.n, CPU_INDEX_ON, d <= 4),
                      "cloud d=%zu K=%d", d, ks[t]);
        CHECK_MSG(!check_engine_idx(&a, 4, 3, 100, 1200, CPU_INDEX_ON, d <= 4), "slice d=%zu", d);
        free(a.v);
    }
    dataset b = make(1400, 3, 6, 7); /* values 0..5: ties, every 7th a copy */
    for (int k = 1; k <= 30; k += 29)
        CHECK_MSG(!check_engine_idx(&b, k, 2, 0, b.n, CPU_INDEX_ON, 1), "ties K=%d", k);
    free(b.v);
    dataset c = {0};
    c.n = 1000;
    c.d = 3;
    c.v = malloc(c.n * c.d * sizeof(double));
    for (size_t i = 0; i < c.n; i++) { /* 10 x 10 x 10, step 1: borders */
        ((double *)c.v)[i * 3] = (double)(i % 10);
        ((double *)c.v)[i * 3 + 1] = (double)(i / 10 % 10);
        ((double *)c.v)[i * 3 + 2] = (double)(i / 100);
    }
    for (int k = 1; k <= 26; k += 5)
        CHECK_MSG(!check_engine_idx(&c, k, 2, 0, c.n, CPU_INDEX_ON, 1), "lattice K=%d", k);
    for (size_t i = 0; i < c.n * 3; i++) /* 5e6 m with a 5 cm spread */
        ((double *)c.v)[i] = 5e6 + 0.005 * ((double *)c.v)[i];
    CHECK_MSG(!check_engine_idx(&c, 4, 2, 0, c.n, CPU_INDEX_ON, 1), "offset 5e6");
    for (size_t i = 0; i < c.n * 3; i++) /* a cluster; every 50th point far out */
        ((double *)c.v)[i] =
            (i / 3) % 50 == 0 ? 1e4 * (double)(i % 7) : 1e-3 * (double)((i * 2654435761u) % 1000);
    CHECK_MSG(!check_engine_idx(&c, 5, 2, 0, c.n, CPU_INDEX_ON, 1), "outliers");
    c.n = 2;
    CHECK_MSG(!check_engine_idx(&c, 1, 2, 0, c.n, CPU_INDEX_ON, 0), "two points");
    free(c.v);
    dataset ds;
    load_opts lo;
    load_opts_init(&lo);
    lo.dim = 4;
    CHECK_MSG(dataset_load(t_dataset("kitti_000000_xyzr.f32"), &lo, &ds) == 0, "%s", err_msg());
    CHECK_MSG(!check_engine_idx(&ds, 4, 2, 0, 800, CPU_INDEX_AUTO, 1), "kitti rows 0:800");
    dataset_free(&ds);
}

TEST(kdist_run_checks)
{
    dataset a = make(10, 2, 0, 4);
    engine_opts o;
    engine_opts_default(&o);
    double out[10];
    join_result res;
    kdist_spec s = {.ds = &a, .q0 = 0, .q1 = 10, .k = 0, .opts = &o, .out = out};
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), TCJ_EINVAL);
    s.k = KDIST_MAX_K + 1;
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), TCJ_EINVAL);
    s.k = 10; /* only 9 other points */
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "K=10 needs at least 11 points");
    s.k = 9;
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), 0);
    engine none = {.name = "nokd", .precision = "fp64", .run = NULL};
    CHECK_EQ_INT(kdist_run(&none, &s, &res), TCJ_EUNSUP);
    CHECK_STR_CONTAINS(err_msg(), "nokd has no k-distance");
    volatile int cancel = 1;
    s.cancel = &cancel;
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), TCJ_ECANCEL);
    free(a.v);
}

/* The point farthest below the chord of the normalised curve. */
static size_t farthest_below(const double *x, const double *y, size_t n)
{
    size_t best = 0;
    double bd = -1;
    for (size_t i = 0; i < n; i++) {
        double dv = (x[i] - x[0]) / (x[n - 1] - x[0]) - (y[i] - y[0]) / (y[n - 1] - y[0]);
        if (dv > bd)
            bd = dv, best = i;
    }
    return best;
}

TEST(kneedle_known_knees)
{
    double x[200], y[200];
    /* a corner at x = 80: slope 1 then 20 */
    for (int i = 0; i < 100; i++)
        x[i] = i, y[i] = i <= 80 ? i : 80 + 20.0 * (i - 80);
    CHECK_EQ_INT(kdist_kneedle(x, y, 100, 1.0), 80);
    /* smooth and convex: one maximum of the difference curve, where
     * Kneedle's threshold is crossed first */
    for (int i = 0; i < 200; i++)
        x[i] = i, y[i] = exp(i / 25.0);
    CHECK_EQ_INT(kdist_kneedle(x, y, 200, 1.0), (long)farthest_below(x, y, 200));
    /* a straight line and a flat one have no knee; nor have two points */
    for (int i = 0; i < 50; i++)
        x[i] = i, y[i] = 3 * i + 1;
    CHECK_EQ_INT(kdist_kneedle(x, y, 50, 1.0), -1);
    for (int i = 0; i < 50; i++)
        y[i] = 2;
    CHECK_EQ_INT(kdist_kneedle(x, y, 50, 1.0), -1);
    CHECK_EQ_INT(kdist_kneedle(x, y, 2, 1.0), -1);
    /* two corners (x = 40 and x = 90): scanning from the large-x end as
     * kneed does for convex increasing curves, the one at 90 comes first */
    for (int i = 0; i < 100; i++) {
        x[i] = i;
        y[i] = i <= 40 ? 0.1 * i : i <= 90 ? 4 + (i - 40) : 54 + 40.0 * (i - 90);
    }
    CHECK_EQ_INT(kdist_kneedle(x, y, 100, 1.0), 90);
}

TEST(eps_for_reaches_the_knee)
{
    rng = 9;
    for (int t = 0; t < 100000; t++) {
        double d2 = (double)(rnext() >> 11) * 0x1p-53 * exp((double)(t % 60) - 30);
        double e = kdist_eps_for(d2);
        CHECK_MSG(e * e >= d2, "eps^2 < d2 at %.17g", d2);
        double p = nextafter(e, 0);
        CHECK_MSG(!(p * p >= d2), "a smaller eps would do at %.17g", d2);
    }
    CHECK(kdist_eps_for(0) == 0);
    CHECK(kdist_eps_for(4) == 2);
}

TEST(curve_points)
{
    /* n <= 1024: every value; n > 1024: 1024 ranks, both ends */
    double v[3000];
    for (int i = 0; i < 3000; i++)
        v[i] = (double)((i * 7919) % 3000); /* a permutation of 0..2999 */
    kdist_curve *c = malloc(sizeof *c);
    kdist_curve_build(v, 500, 3, c);
    CHECK_EQ_INT(c->npts, 500);
    for (size_t j = 0; j < 500; j++)
        CHECK(c->rank[j] == j && c->dist[j] == sqrt(v[j]) && (j == 0 || v[j] >= v[j - 1]));
    for (int i = 0; i < 3000; i++)
        v[i] = (double)((i * 7919) % 3000);
    kdist_curve_build(v, 3000, 3, c);
    CHECK_EQ_INT(c->npts, KDIST_MAX_POINTS);
    CHECK_EQ_INT(c->rank[0], 0);
    CHECK_EQ_INT(c->rank[KDIST_MAX_POINTS - 1], 2999);
    for (size_t j = 1; j < c->npts; j++)
        CHECK(c->rank[j] > c->rank[j - 1] && c->dist[j] == sqrt((double)c->rank[j]));
    /* sqrt of 0..2999 is concave, above its chord: no knee at all */
    CHECK(!c->have_knee);
    CHECK(strcmp(c->knee_method, "none") == 0);
    /* convex but with its difference curve's maximum too shallow for
     * Kneedle's threshold (within 1/(n-1) of both ends): the fallback */
    double w[5] = {0, 1, 4, 9, 4.02 * 4.02}; /* distances 0, 1, 2, 3, 4.02 */
    kdist_curve_build(w, 5, 1, c);
    CHECK(c->have_knee);
    CHECK(strcmp(c->knee_method, "farthest below the chord") == 0);
    CHECK_EQ_INT(c->knee_point, 3);
    free(c);
}

static char *capture(session *s, const char *line, int json)
{
    return exec_capture_as(s, line, json);
}

TEST(command_store_export_view)
{
    char path[1100], csv[1100], js[1100];
    snprintf(path, sizeof path, "%s/kd.db", t_tmpdir());
    snprintf(csv, sizeof csv, "%s/kd.csv", t_tmpdir());
    snprintf(js, sizeof js, "%s/kd.json", t_tmpdir());
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    capture(&s, "gen gauss n=1500 d=4 seed=3", 0);
    CHECK(s.have_ds);
    /* engine=cpu: the test compares with an exact FP64 brute force (on a
     * GPU machine the default engine would be fasted) */
    char *text = capture(&s, "kdist 4 engine=cpu", 0);
    CHECK_STR_CONTAINS(text, "minPts = 5");
    CHECK_STR_CONTAINS(text, "Satopaa");
    CHECK(!s.have_eps);
    char *rec = capture(&s, "kdist 4 use engine=cpu", 1);
    CHECK_MSG(!s.failed, "kdist failed: %s", rec);
    CHECK(s.have_eps);

    /* the record and the stored curve agree with an independent k-distance */
    kdist_curve *c = malloc(sizeof *c);
    char eng[32];
    CHECK_EQ_INT(store_kdist_get(s.db, 0, c, eng, sizeof eng), 0);
    CHECK(strcmp(eng, "cpu") == 0 && c->k == 4 && c->n == 1500 && c->npts == 1024);
    CHECK(c->have_knee);
    double *tmp = malloc(1500 * sizeof *tmp), *all = malloc(1500 * sizeof *all);
    for (size_t q = 0; q < 1500; q++)
        all[q] = brute_kth(&s.ds, q, 4, tmp);
    qsort(all, 1500, sizeof *all, cmp_dbl);
    for (size_t j = 0; j < c->npts; j++)
        CHECK(c->dist[j] == sqrt(all[c->rank[j]]));
    CHECK(s.eps == kdist_eps_for(all[c->rank[c->knee_point]]));
    free(tmp);
    free(all);

    ui_view *v = malloc(sizeof *v);
    ui_view_init(v);
    for (char *line = rec; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        ui_view_record(v, line);
        line = nl ? nl + 1 : NULL;
    }
    CHECK(v->nkdist == UI_MAX_CURVE && v->kdist_k == 4);
    CHECK(strcmp(v->kdist_dataset, s.ds.name) == 0 && strcmp(v->kdist_engine, "cpu") == 0);
    CHECK(v->kdist_eps == s.eps && v->kdist_knee_dist == c->dist[c->knee_point]);
    CHECK(v->kdist_rank[0] == 0 && v->kdist_rank[UI_MAX_CURVE - 1] == 1499);
    ui_view_free(v);
    free(v);

    char line[2400];
    snprintf(line, sizeof line, "export kdist 2 csv %s; export kdist 2 json %s", csv, js);
    capture(&s, line, 0);
    CHECK(!s.failed);
    FILE *f = fopen(csv, "r");
    CHECK(f != NULL);
    int lines = 0, ch;
    while ((ch = fgetc(f)) != EOF)
        lines += ch == '\n';
    fclose(f);
    CHECK_EQ_INT(lines, 1 + 1024);
    f = fopen(js, "r");
    CHECK(f != NULL);
    char head[200] = "";
    CHECK(fgets(head, sizeof head, f) != NULL);
    fclose(f);
    CHECK_STR_CONTAINS(head, "{\"kdist_id\":2,");
    free(c);

    /* one clear line for bad input */
    CHECK_STR_CONTAINS(capture(&s, "kdist 0", 0), "K: expected an integer from 1 to 256, got '0'");
    CHECK_STR_CONTAINS(capture(&s, "kdist 4 engine=fasted", 0), "fasted");
    CHECK_STR_CONTAINS(capture(&s, "export kdist 9 csv x.csv", 0), "no k-distance curve 9");
    store_close(s.db);
    dataset_free(&s.ds);
}
