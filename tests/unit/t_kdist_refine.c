/* kdist_refine (src/cluster/kdist_refine.c: exact's k-distance off its grid) on
 * the CPU, through the cpu engine's joins: whatever the estimates (exact,
 * too small, too large, zero, not finite, random, none), the result
 * equals an independent brute force bit for bit (every d2 of a row in
 * FP64, direct (a-b)^2 form in dimension order, sorted, the K-th of the
 * other rows), over blocks of a few rows and one block, query slices,
 * ties, duplicates and an outlier; good estimates take at most two rounds
 * (radii) a block; and kdist_run refines the estimates of an entry that
 * returns ENGINE_ESTIMATE. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "kdist.h"
#include "kdist_refine.h"
#include "widen.h"

extern const engine engine_cpu;

/* The engine check() refines through: cpu, or cpu behind a join that
 * costs 3 ms whatever its rows (as an exact run's set-up does on the GPU),
 * so that ranges of unknown rows merge over known ones. */
static const engine *g_engine = &engine_cpu;
static int slow_run(const join_spec *js, join_result *r)
{
    const struct timespec ts = {0, 3000000};
    nanosleep(&ts, NULL);
    return engine_cpu.run(js, r);
}

static uint64_t rng;
static uint64_t rnext(void)
{
    return t_splitmix(&rng);
}

/* n points of d values; grid > 0: integers in [0, grid) (ties), every 7th
 * point a copy of the one before; outlier: the last point far away. */
static dataset make(size_t n, size_t d, int grid, int outlier, uint64_t seed)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.name = strdup("t");
    double *v = malloc(n * d * sizeof *v);
    ds.v = v;
    rng = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            double x =
                grid ? (double)(rnext() % (uint64_t)grid) : (double)(rnext() >> 11) * 0x1p-53;
            v[i * d + k] = (grid && i % 7 == 6) ? v[(i - 1) * d + k] : x;
        }
    if (outlier)
        for (size_t k = 0; k < d; k++)
            v[(n - 1) * d + k] = 1000.0 + (double)k;
    return ds;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double brute_kth(const dataset *ds, size_t q, int k, double *tmp)
{
    size_t m = 0;
    for (size_t j = 0; j < ds->n; j++)
        if (j != q)
            tmp[m++] = t_d2(ds, q, j);
    qsort(tmp, m, sizeof *tmp, cmp_dbl);
    return tmp[k - 1];
}

enum { EST_EXACT, EST_HALF, EST_DOUBLE, EST_ZERO, EST_NAN, EST_NONE, EST_RANDOM, EST_HUGE, EST_N };
static const char *const est_names[EST_N] = {"exact", "half", "double", "zero",
                                             "nan",   "none", "random", "huge"};

/* kdist_refine over rows [q0, q1) with estimates of kind; 0 when every
 * value equals brute_kth's bits; *joins gets its rounds (radii tried,
 * summed over the blocks). */
static int check(const dataset *ds, int k, size_t q0, size_t q1, int kind, double *joins)
{
    const size_t nq = q1 - q0;
    double *want = malloc(nq * sizeof *want), *est = malloc(nq * sizeof *est),
           *out = malloc(nq * sizeof *out), *tmp = malloc(ds->n * sizeof *tmp);
    for (size_t q = q0; q < q1; q++) {
        const double w = brute_kth(ds, q, k, tmp);
        want[q - q0] = w;
        double e = w;
        switch (kind) {
        case EST_HALF:
            e = w / 2;
            break;
        case EST_DOUBLE:
            e = 2 * w;
            break;
        case EST_ZERO:
            e = 0;
            break;
        case EST_NAN:
            e = (q & 1) ? NAN : -1.0;
            break;
        case EST_RANDOM:
            e = w * (double)(rnext() % 2001) / 1000.0;
            break;
        case EST_HUGE:
            e = (q % 5 == 0) ? 1e300 : w;
            break;
        default:
            break;
        }
        est[q - q0] = e;
    }
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    kdist_spec s = {
        .engine = g_engine, .ds = ds, .q0 = q0, .q1 = q1, .k = k, .opts = &o, .out = out};
    join_result res;
    memset(&res, 0, sizeof res);
    int bad = kdist_refine(&s, kind == EST_NONE ? NULL : est, &res) != 0;
    if (bad)
        printf("# %s: %s\n", est_names[kind], err_msg());
    for (size_t q = q0; q < q1 && !bad; q++) {
        bad = memcmp(&out[q - q0], &want[q - q0], sizeof *out) != 0;
        if (bad)
            printf("# %s row %zu: %.17g, want %.17g\n", est_names[kind], q, out[q - q0],
                   want[q - q0]);
    }
    *joins = join_result_metric_value(&res, "refine_rounds");
    free(want);
    free(est);
    free(out);
    free(tmp);
    return bad;
}

TEST(any_estimates_give_the_exact_k_distances)
{
    dataset a = make(240, 37, 0, 0, 1), b = make(233, 3, 4, 0, 2), c = make(200, 8, 0, 1, 3);
    const int ks[] = {1, 4, 17};
    double joins;
    /* many blocks, then one; then both with the rows sorted by estimate
     * (through a copy of the dataset in that order) */
    for (size_t blk = 0; blk < 4; blk++) {
        kdist_refine_block_rows_for_tests(blk % 2 ? 0 : 31);
        kdist_refine_sort_min_for_tests(blk >= 2 ? 1 : 0);
        for (int t = 0; t < 3; t++)
            for (int kind = 0; kind < EST_N; kind++) {
                CHECK_MSG(!check(&a, ks[t], 0, a.n, kind, &joins), "uniform d=37 K=%d %s", ks[t],
                          est_names[kind]);
                CHECK_MSG(!check(&b, ks[t], 0, b.n, kind, &joins), "ties, duplicates K=%d %s",
                          ks[t], est_names[kind]);
                CHECK_MSG(!check(&c, ks[t], 0, c.n, kind, &joins), "an outlier K=%d %s", ks[t],
                          est_names[kind]);
            }
    }
    kdist_refine_block_rows_for_tests(0);
    kdist_refine_sort_min_for_tests(0);
    dataset_free(&a);
    dataset_free(&b);
    dataset_free(&c);
}

TEST(query_slices_and_the_largest_k)
{
    dataset a = make(150, 5, 3, 0, 4);
    double joins;
    kdist_refine_block_rows_for_tests(16);
    for (int sorted = 0; sorted < 2; sorted++) {
        /* a slice in estimate order: the rows before and after it follow */
        kdist_refine_sort_min_for_tests(sorted ? 1 : 0);
        CHECK(!check(&a, 3, 17, 41, EST_RANDOM, &joins));
        CHECK(!check(&a, 3, 149, 150, EST_ZERO, &joins));
        CHECK(!check(&a, (int)a.n - 1, 0, a.n, EST_HALF, &joins)); /* every other row */
        CHECK(!check(&a, (int)a.n - 1, 5, 9, EST_NONE, &joins));
        CHECK(!check(&a, 4, 60, 150, EST_HUGE, &joins));
    }
    kdist_refine_sort_min_for_tests(0);
    kdist_refine_block_rows_for_tests(0);
    dataset_free(&a);
}

/* A join that costs more than its rows: the later rounds join ranges of
 * the unknown rows across known ones, each at its own rows' largest
 * estimate; still every value exact, whatever the estimates. */
TEST(costly_joins_merge_ranges_and_stay_exact)
{
    dataset a = make(3000, 8, 0, 1, 6), b = make(1200, 3, 4, 0, 7);
    static engine slow;
    slow = engine_cpu;
    slow.run = slow_run;
    g_engine = &slow;
    double joins;
    const int kinds[] = {EST_EXACT, EST_HALF, EST_RANDOM, EST_HUGE, EST_NONE};
    for (int t = 0; t < 10; t++) {
        kdist_refine_sort_min_for_tests(t >= 5 ? 1 : 0);
        CHECK_MSG(!check(&a, 9, 0, a.n, kinds[t % 5], &joins), "uniform d=8 %s%s",
                  est_names[kinds[t % 5]], t >= 5 ? " sorted" : "");
        CHECK_MSG(!check(&b, 4, 0, b.n, kinds[t % 5], &joins), "ties d=3 %s%s",
                  est_names[kinds[t % 5]], t >= 5 ? " sorted" : "");
    }
    kdist_refine_sort_min_for_tests(0);
    g_engine = &engine_cpu;
    dataset_free(&a);
    dataset_free(&b);
}

/* Exact estimates: the first radius of a block (its 99th percentile)
 * settles its rows up to there, a second (the largest estimate left) the
 * rest. */
TEST(good_estimates_take_at_most_two_rounds_a_block)
{
    dataset a = make(400, 16, 0, 1, 5);
    double joins = 0;
    kdist_refine_block_rows_for_tests(100);
    CHECK(!check(&a, 8, 0, a.n, EST_EXACT, &joins));
    CHECK_MSG(joins >= 4 && joins <= 8, "%g rounds for 4 blocks", joins);
    kdist_refine_block_rows_for_tests(0);
    CHECK(!check(&a, 8, 0, a.n, EST_EXACT, &joins));
    CHECK_MSG(joins >= 1 && joins <= 2, "%g rounds for one block", joins);
    /* sorted by estimate, each range at its own rows' estimates: exact
     * ones settle every row in the first round */
    kdist_refine_sort_min_for_tests(1);
    kdist_refine_block_rows_for_tests(100);
    CHECK(!check(&a, 8, 0, a.n, EST_EXACT, &joins));
    CHECK_MSG(joins == 4, "%g rounds for 4 blocks sorted", joins);
    kdist_refine_block_rows_for_tests(0);
    CHECK(!check(&a, 8, 0, a.n, EST_EXACT, &joins));
    CHECK_MSG(joins == 1, "%g rounds for one block sorted", joins);
    kdist_refine_sort_min_for_tests(0);
    dataset_free(&a);
}

/* A row whose kdist entry gives estimates (cpu's k-distances, each scaled
 * by a factor from 1/2 to 2) and returns ENGINE_ESTIMATE, as exact does
 * off its grid: kdist_run refines them with the row's joins (cpu's) to
 * cpu's own k-distances, bit for bit; the record keeps the estimate's
 * phase first and its metric after the refinement's. */
static int est_calls;
static int est_kdist(const kdist_spec *s, join_result *r)
{
    est_calls++;
    join_result cr;
    memset(&cr, 0, sizeof cr);
    int rc = engine_cpu.kdist(s, &cr);
    if (rc)
        return rc;
    for (size_t q = s->q0; q < s->q1; q++)
        s->out[q - s->q0] *= 0.5 + 1.5 * (double)((q * 7919) % 101) / 100.0;
    join_result_phase(r, "estimate", cr.seconds);
    r->kernel_seconds += 0.25;
    join_result_metric(r, "estimate_s", cr.seconds, "s");
    return ENGINE_ESTIMATE;
}

static void check_estimate_row(const engine *row, const dataset *ds, int k, size_t q0, size_t q1)
{
    const size_t nq = q1 - q0;
    double *want = malloc(nq * sizeof *want), *out = malloc(nq * sizeof *out);
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    kdist_spec s = {.ds = ds, .q0 = q0, .q1 = q1, .k = k, .opts = &o, .out = want};
    join_result res;
    CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), 0);
    s.out = out;
    est_calls = 0;
    const int rc = kdist_run(row, &s, &res);
    CHECK_MSG(rc == 0, "K=%d rows [%zu, %zu): rc %d %s", k, q0, q1, rc, err_msg());
    CHECK_EQ_INT(est_calls, 1);
    size_t bad = 0;
    for (size_t i = 0; i < nq; i++)
        bad += memcmp(&out[i], &want[i], sizeof *out) != 0;
    CHECK_MSG(bad == 0, "K=%d rows [%zu, %zu): %zu rows differ from cpu's", k, q0, q1, bad);
    CHECK(res.nphase >= 2 && strcmp(res.phase[0].name, "estimate") == 0);
    CHECK(join_result_metric_value(&res, "refine_joins") >= 1);
    CHECK(res.nmetric >= 4 && strcmp(res.metric[res.nmetric - 1].name, "estimate_s") == 0);
    CHECK(res.kernel_seconds >= 0.25);
    CHECK(res.seconds > 0 && strstr(res.variant, "refined") != NULL);
    free(want);
    free(out);
}

/* row: the cpu row with another kdist entry (name and entry as given). */
static const engine *cpu_row_with(engine *row, const char *name,
                                  int (*kdist)(const kdist_spec *, join_result *))
{
    *row = engine_cpu;
    row->name = name;
    row->kdist = kdist;
    return row;
}

TEST(kdist_run_refines_an_entry_s_estimates)
{
    static engine e;
    const engine *row = cpu_row_with(&e, "cpu-estimates", est_kdist);
    dataset a = make(300, 6, 0, 1, 8), b = make(200, 3, 4, 0, 9);
    check_estimate_row(row, &a, 5, 0, a.n);
    check_estimate_row(row, &a, 1, 40, 97);
    check_estimate_row(row, &b, 12, 0, b.n);
    dataset_free(&a);
    dataset_free(&b);
}

/* An entry that decides some rows itself (exact's on the device: flagged
 * in spec->known) and estimates the rest: the refinement leaves the
 * flagged rows as the entry wrote them (here a value no k-distance has,
 * so a row joined again would show) and gives the others cpu's values,
 * sorted by estimate or not, in blocks or one; with every row flagged it
 * runs no join. */
static size_t known_every; /* flag rows q % known_every == 0; 1: all */
static int known_kdist(const kdist_spec *s, join_result *r)
{
    int rc = est_kdist(s, r);
    if (rc != ENGINE_ESTIMATE)
        return rc;
    for (size_t q = s->q0; q < s->q1; q++)
        if (q % known_every == 0) {
            s->known[q - s->q0] = 1;
            s->out[q - s->q0] = -1.0 - (double)q;
        }
    return ENGINE_ESTIMATE;
}

TEST(refinement_leaves_the_rows_the_entry_decided)
{
    static engine e;
    const engine *row = cpu_row_with(&e, "cpu-some-known", known_kdist);
    dataset a = make(300, 6, 0, 1, 10), b = make(200, 3, 4, 0, 11);
    const dataset *sets[2] = {&a, &b};
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    for (int v = 0; v < 4; v++) {
        kdist_refine_block_rows_for_tests(v & 1 ? 31 : 0);
        kdist_refine_sort_min_for_tests(v & 2 ? 1 : 0);
        for (int t = 0; t < 2; t++)
            for (size_t every = 1; every <= 3; every++) {
                const dataset *ds = sets[t];
                const size_t q0 = t ? 17 : 0, q1 = ds->n, nq = q1 - q0;
                const int k = t ? 9 : 4;
                double *want = malloc(nq * sizeof *want), *out = malloc(nq * sizeof *out);
                kdist_spec s = {.ds = ds, .q0 = q0, .q1 = q1, .k = k, .opts = &o, .out = want};
                join_result res;
                CHECK_EQ_INT(kdist_run(&engine_cpu, &s, &res), 0);
                s.out = out;
                known_every = every;
                CHECK_EQ_INT(kdist_run(row, &s, &res), 0);
                size_t bad = 0, kept = 0;
                for (size_t q = q0; q < q1; q++) {
                    if (q % every == 0)
                        kept += out[q - q0] == -1.0 - (double)q;
                    else
                        bad += memcmp(&out[q - q0], &want[q - q0], sizeof *out) != 0;
                }
                const size_t flagged = (q1 - 1) / every - (q0 + every - 1) / every + 1;
                CHECK_MSG(kept == flagged && bad == 0,
                          "set %d, every %zu, variant %d: %zu of %zu flagged rows kept, %zu rows "
                          "differ from cpu's",
                          t, every, v, kept, flagged, bad);
                if (every == 1)
                    CHECK(!(join_result_metric_value(&res, "refine_joins") >= 1));
                else
                    CHECK(join_result_metric_value(&res, "refine_joins") >= 1);
                free(want);
                free(out);
            }
    }
    kdist_refine_block_rows_for_tests(0);
    kdist_refine_sort_min_for_tests(0);
    dataset_free(&a);
    dataset_free(&b);
}
