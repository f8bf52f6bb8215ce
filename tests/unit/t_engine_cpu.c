/* The CPU engines against a brute-force FP64 join written here: direct
 * (a-b)^2 form, summed in dimension order, pair when d2 <= eps*eps. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;

static uint64_t rng_state;

static uint64_t rng_next(void)
{
    return t_splitmix(&rng_state);
}

static double rng_unit(void)
{
    return (double)(rng_next() >> 11) * 0x1p-53;
}

static dataset make_uniform(size_t n, size_t d, uint64_t seed)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = malloc(n * d * sizeof(double));
    rng_state = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = rng_unit();
    return ds;
}

static double brute_d2(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = ((double *)ds->v)[i * ds->d + k] - ((double *)ds->v)[j * ds->d + k];
        s += u * u;
    }
    return s;
}

static double brute_d2_origin(const dataset *ds, size_t i)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++)
        s += ((double *)ds->v)[i * ds->d + k] * ((double *)ds->v)[i * ds->d + k];
    return s;
}

static uint64_t brute_row(const dataset *ds, size_t i, double eps)
{
    uint64_t c = 0;
    for (size_t j = 0; j < ds->n; j++)
        c += brute_d2(ds, i, j) <= eps * eps;
    return c;
}

static uint64_t brute_count(const dataset *ds, size_t q0, size_t q1, double eps)
{
    uint64_t c = 0;
    for (size_t i = q0; i < q1; i++)
        c += brute_row(ds, i, eps);
    return c;
}

/* A sink that keeps every pair (the tests are small). */
typedef struct pair_rec {
    uint32_t i, j;
    double d2;
} pair_rec;

typedef struct collect {
    pair_rec *p;
    size_t len, cap;
    size_t batches, max_batch;
    volatile int *cancel_after_first; /* set the flag after one batch */
    int fail_with;                    /* return this code (with a message) */
} collect;

static int collect_put(void *ctx, const pair_batch *b)
{
    collect *c = ctx;
    if (c->fail_with)
        return err_set(c->fail_with, "test sink refused the batch");
    c->batches++;
    if (b->k > c->max_batch)
        c->max_batch = b->k;
    if (c->len + b->k > c->cap) {
        c->cap = (c->len + b->k) * 2;
        c->p = realloc(c->p, c->cap * sizeof *c->p);
    }
    for (size_t k = 0; k < b->k; k++)
        c->p[c->len++] = (pair_rec){b->i[k], b->j[k], b->d2[k]};
    if (c->cancel_after_first)
        __atomic_store_n((int *)c->cancel_after_first, 1, __ATOMIC_RELAXED);
    return 0;
}

static int by_ij(const void *x, const void *y)
{
    const pair_rec *a = x, *b = y;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

static join_spec spec_for(const dataset *ds, double eps, join_mode mode, const engine_opts *o)
{
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = 0;
    s.q1 = ds->n;
    s.mode = mode;
    s.opts = o;
    return s;
}

static int run_count(const engine *e, const dataset *ds, double eps, size_t q0, size_t q1,
                     int threads, uint64_t *pairs)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = threads;
    join_spec s = spec_for(ds, eps, JOIN_COUNT, &o);
    s.q0 = q0;
    s.q1 = q1;
    join_result r;
    int rc = engine_run(e, &s, &r);
    *pairs = r.pairs;
    return rc;
}

static const size_t sizes_n[] = {1, 7, 100, 203};
static const size_t sizes_d[] = {1, 3, 17, 128};
static const double eps_f[] = {0.15, 0.5, 0.9};

/* A radius that catches some but not all pairs of uniform data in d dims. */
static double eps_for(size_t d, double f)
{
    return f * sqrt((double)d / 6.0);
}

TEST(cpu_count_matches_brute_force)
{
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++) {
            dataset ds = make_uniform(sizes_n[a], sizes_d[b], 11 + a * 4 + b);
            for (size_t e = 0; e < 3; e++) {
                double eps = eps_for(ds.d, eps_f[e]);
                uint64_t got = 0;
                CHECK_EQ_INT(run_count(&engine_cpu, &ds, eps, 0, ds.n, 0, &got), 0);
                uint64_t want = brute_count(&ds, 0, ds.n, eps);
                CHECK_MSG(got == want, "n=%zu d=%zu eps=%g: %llu pairs, brute force %llu", ds.n,
                          ds.d, eps, (unsigned long long)got, (unsigned long long)want);
                CHECK(got >= ds.n); /* self-pairs */
            }
            free(ds.v);
        }
}

TEST(cpu_perpoint_and_subranges)
{
    for (size_t b = 0; b < 4; b++) {
        dataset ds = make_uniform(150, sizes_d[b], 77 + b);
        double eps = eps_for(ds.d, 0.5);
        const size_t ranges[][2] = {{0, 150}, {3, 145}, {0, 1}, {149, 150}, {40, 40}};
        for (size_t r = 0; r < 5; r++) {
            size_t q0 = ranges[r][0], q1 = ranges[r][1];
            engine_opts o;
            engine_opts_default(&o);
            join_spec s = spec_for(&ds, eps, JOIN_PERPOINT, &o);
            s.q0 = q0;
            s.q1 = q1;
            uint64_t *counts = malloc((q1 - q0 + 1) * sizeof *counts);
            for (size_t i = 0; i <= q1 - q0; i++)
                counts[i] = 12345; /* the engine must zero them */
            s.counts = counts;
            join_result res;
            CHECK_EQ_INT(engine_run(&engine_cpu, &s, &res), 0);
            uint64_t sum = 0;
            for (size_t i = q0; i < q1; i++) {
                CHECK_MSG(counts[i - q0] == brute_row(&ds, i, eps), "d=%zu row %zu", ds.d, i);
                sum += counts[i - q0];
            }
            CHECK_EQ_INT(counts[q1 - q0], 12345); /* nothing written past q1 */
            CHECK_EQ_INT(res.pairs, sum);
            uint64_t cnt = 0;
            CHECK_EQ_INT(run_count(&engine_cpu, &ds, eps, q0, q1, 0, &cnt), 0);
            CHECK_EQ_INT(cnt, sum);
            CHECK_EQ_INT(sum, brute_count(&ds, q0, q1, eps));
            free(counts);
        }
        free(ds.v);
    }
}

/* PAIRS equals the brute-force pair set exactly, d2 bit for bit, for
 * several thread counts and tiny batches (many flushes). */
TEST(cpu_pairs_equal_brute_force)
{
    for (size_t b = 0; b < 4; b++) {
        dataset ds = make_uniform(120, sizes_d[b], 300 + b);
        double eps = eps_for(ds.d, 0.6);
        const int threads[] = {1, 3, 8};
        const size_t batch[] = {1 << 20, 7, 1};
        for (int t = 0; t < 3; t++) {
            engine_opts o;
            engine_opts_default(&o);
            o.threads = threads[t];
            o.batch_pairs = batch[t];
            join_spec s = spec_for(&ds, eps, JOIN_PAIRS, &o);
            s.q0 = 5;
            s.q1 = 117;
            collect c = {0};
            s.sink.put = collect_put;
            s.sink.ctx = &c;
            join_result res;
            CHECK_EQ_INT(engine_run(&engine_cpu, &s, &res), 0);
            CHECK_EQ_INT(res.pairs, c.len);
            CHECK(c.max_batch <= batch[t]);
            qsort(c.p, c.len, sizeof *c.p, by_ij);
            size_t k = 0;
            for (size_t i = 5; i < 117; i++)
                for (size_t j = 0; j < ds.n; j++) {
                    double d2 = brute_d2(&ds, i, j);
                    if (!(d2 <= eps * eps))
                        continue;
                    CHECK_MSG(k < c.len, "pair (%zu,%zu) missing", i, j);
                    CHECK_MSG(c.p[k].i == i && c.p[k].j == j, "d=%zu: got (%u,%u), want (%zu,%zu)",
                              ds.d, c.p[k].i, c.p[k].j, i, j);
                    CHECK(c.p[k].d2 == d2);
                    k++;
                }
            CHECK_EQ_INT(k, c.len);
            free(c.p);
        }
        free(ds.v);
    }
}

TEST(cpu_threads_identical)
{
    dataset ds = make_uniform(517, 17, 5);
    double eps = eps_for(17, 0.5);
    uint64_t *c1 = malloc(ds.n * sizeof *c1), *c8 = malloc(ds.n * sizeof *c8);
    const engine *eng[2] = {&engine_cpu, &engine_cpu_fp16};
    for (int e = 0; e < 2; e++) {
        engine_opts o;
        engine_opts_default(&o);
        join_spec s = spec_for(&ds, eps, JOIN_PERPOINT, &o);
        join_result r;
        o.threads = 1;
        s.counts = c1;
        CHECK_EQ_INT(engine_run(eng[e], &s, &r), 0);
        o.threads = 8;
        s.counts = c8;
        CHECK_EQ_INT(engine_run(eng[e], &s, &r), 0);
        CHECK(memcmp(c1, c8, ds.n * sizeof *c1) == 0);
        uint64_t sum = 0, cnt = 0;
        for (size_t i = 0; i < ds.n; i++)
            sum += c1[i];
        CHECK_EQ_INT(run_count(eng[e], &ds, eps, 0, ds.n, 1, &cnt), 0);
        CHECK_EQ_INT(sum, cnt);
        CHECK_STR_CONTAINS(r.device, "threads");
        CHECK(r.nphase >= 1);
    }
    free(c1);
    free(c8);
    free(ds.v);
}

/* HIST: below + bins up to b add up to the count at each edge's radius. */
static void check_hist(const engine *e, const dataset *ds, const double *eps, size_t nb)
{
    double *edges = malloc((nb + 1) * sizeof *edges);
    for (size_t b = 0; b <= nb; b++)
        edges[b] = eps[b] * eps[b];
    uint64_t *hist = malloc(nb * sizeof *hist), below = 99;
    engine_opts o;
    engine_opts_default(&o);
    join_spec s = spec_for(ds, 0, JOIN_HIST, &o);
    s.q0 = 2;
    s.q1 = ds->n;
    s.hist_edges = edges;
    s.hist_nbins = nb;
    s.hist = hist;
    s.hist_below = &below;
    join_result r;
    CHECK_EQ_INT(engine_run(e, &s, &r), 0);
    uint64_t cum = below;
    for (size_t b = 0; b <= nb; b++) {
        if (b > 0)
            cum += hist[b - 1];
        uint64_t want = 0;
        CHECK_EQ_INT(run_count(e, ds, eps[b], 2, ds->n, 0, &want), 0);
        CHECK_MSG(cum == want, "%s d=%zu edge %zu: histogram gives %llu, count %llu", e->name,
                  ds->d, b, (unsigned long long)cum, (unsigned long long)want);
        if (e == &engine_cpu)
            CHECK_EQ_INT(want, brute_count(ds, 2, ds->n, eps[b]));
    }
    CHECK_EQ_INT(r.pairs, cum);
    free(edges);
    free(hist);
}

TEST(hist_bins_add_up_to_count)
{
    for (size_t b = 0; b < 4; b++) {
        dataset ds = make_uniform(140, sizes_d[b], 900 + b);
        double base = eps_for(ds.d, 1.0);
        double eps[12];
        for (int k = 0; k < 12; k++)
            eps[k] = base * (0.05 + 0.08 * k);
        check_hist(&engine_cpu, &ds, eps, 11);
        check_hist(&engine_cpu_fp16, &ds, eps, 11);
        /* one bin, and equal edges */
        double one[2] = {base * 0.3, base * 0.6};
        check_hist(&engine_cpu, &ds, one, 1);
        double same[4] = {base * 0.3, base * 0.3, base * 0.3, base * 0.7};
        check_hist(&engine_cpu, &ds, same, 3);
        free(ds.v);
    }
}

/* Self-pairs are always in: identical points at a tiny radius. */
TEST(self_pairs_always_included)
{
    dataset ds = make_uniform(64, 128, 42);
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] =
            1000.0 + ((double *)ds.v)[k]; /* large norms: FP32 cancellation territory */
    memcpy(((double *)ds.v) + 10 * ds.d, ((double *)ds.v) + 3 * ds.d,
           ds.d * sizeof(double)); /* a duplicate */
    uint64_t got = 0;
    CHECK_EQ_INT(run_count(&engine_cpu, &ds, 1e-9, 0, ds.n, 0, &got), 0);
    CHECK_EQ_INT(got, ds.n + 2);
    CHECK_EQ_INT(run_count(&engine_cpu_fp16, &ds, 1e-9, 0, ds.n, 0, &got), 0);
    CHECK(got >= ds.n + 2); /* FP16 may merge near points, never lose one */
    free(ds.v);
}

/* Small integers are exact in FP16, their squares and sums exact in FP32:
 * cpu-fp16 must then agree with cpu exactly, distances included. */
TEST(fp16_equals_cpu_on_small_integers)
{
    for (size_t b = 0; b < 4; b++) {
        dataset ds = make_uniform(90, sizes_d[b], 500 + b);
        for (size_t k = 0; k < ds.n * ds.d; k++)
            ((double *)ds.v)[k] = floor(((double *)ds.v)[k] * 16); /* 0..15 */
        double base = 8 * sqrt((double)ds.d / 6.0);
        for (int e = 1; e <= 3; e++) {
            /* sqrt(m + 0.5): no integer d2 sits on the boundary */
            double eps = sqrt(floor(base * base * e / 3) + 0.5);
            uint64_t c64 = 0, c16 = 0;
            CHECK_EQ_INT(run_count(&engine_cpu, &ds, eps, 0, ds.n, 0, &c64), 0);
            CHECK_EQ_INT(run_count(&engine_cpu_fp16, &ds, eps, 0, ds.n, 0, &c16), 0);
            CHECK_EQ_INT(c16, c64);
            CHECK_EQ_INT(c64, brute_count(&ds, 0, ds.n, eps));

            collect p64 = {0}, p16 = {0};
            engine_opts o;
            engine_opts_default(&o);
            join_spec s = spec_for(&ds, eps, JOIN_PAIRS, &o);
            s.sink.put = collect_put;
            join_result r;
            s.sink.ctx = &p64;
            CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), 0);
            s.sink.ctx = &p16;
            CHECK_EQ_INT(engine_run(&engine_cpu_fp16, &s, &r), 0);
            CHECK_EQ_INT(p64.len, p16.len);
            qsort(p64.p, p64.len, sizeof *p64.p, by_ij);
            qsort(p16.p, p16.len, sizeof *p16.p, by_ij);
            for (size_t k = 0; k < p64.len; k++)
                CHECK(p64.p[k].i == p16.p[k].i && p64.p[k].j == p16.p[k].j &&
                      p64.p[k].d2 == p16.p[k].d2);
            free(p64.p);
            free(p16.p);
        }
        free(ds.v);
    }
}

/* The band around eps where FP16 inputs and FP32 arithmetic may flip a
 * pair, derived for points x, y with FP64 distance D:
 *  - inputs: |h_k - x_k| <= u |x_k| + 2^-25 with u = 2^-11 (half an ulp of
 *    an 11-bit significand; 2^-25 covers the subnormal range), so by the
 *    triangle inequality |D_h - D| <= r = u(|x| + |y|) + 2 sqrt(d) 2^-25,
 *    and |D_h^2 - D^2| <= r (2D + r);
 *  - FP32: the RZ norms lose less than one ulp (2^-23 relative) per step:
 *    d 2^-23 s; the RN dot product at most 1.01 d 2^-24 sum|h_x h_y| <=
 *    1.01 d 2^-25 S; the two final operations 2^-24 each, relative to S and
 *    to the result: in all E <= (2d + 2) 2^-23 (S + D_h^2) with
 *    S = s_x + s_y of the halves, S <= ((1+u)|x| + sqrt(d) 2^-25)^2 + (same y);
 *  - the threshold (float)(eps^2): 2^-24 eps^2; FP64's own d2: d 2^-52 D^2.
 * A pair the two engines disagree on has |D^2 - eps^2| within the sum. */
static double fp16_band(const dataset *ds, size_t i, size_t j, double eps)
{
    const double u = 0x1p-11, sub = sqrt((double)ds->d) * 0x1p-25;
    double nx = sqrt(brute_d2_origin(ds, i)), ny = sqrt(brute_d2_origin(ds, j));
    double D = sqrt(brute_d2(ds, i, j));
    double r = u * (nx + ny) + 2 * sub;
    double hx = (1 + u) * nx + sub, hy = (1 + u) * ny + sub;
    double S = hx * hx + hy * hy;
    double Dh = D + r;
    double E = (2.0 * ds->d + 2) * 0x1p-23 * (S + Dh * Dh);
    return r * (2 * D + r) + E + 0x1p-24 * eps * eps + ds->d * 0x1p-52 * D * D;
}

static void fp16_against_cpu(dataset *ds, double eps, size_t *ndiff)
{
    collect p64 = {0}, p16 = {0};
    engine_opts o;
    engine_opts_default(&o);
    join_spec s = spec_for(ds, eps, JOIN_PAIRS, &o);
    s.sink.put = collect_put;
    join_result r;
    s.sink.ctx = &p64;
    CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), 0);
    s.sink.ctx = &p16;
    CHECK_EQ_INT(engine_run(&engine_cpu_fp16, &s, &r), 0);
    CHECK_STR_CONTAINS(r.precision, "fp16-32");
    qsort(p64.p, p64.len, sizeof *p64.p, by_ij);
    qsort(p16.p, p16.len, sizeof *p16.p, by_ij);
    size_t a = 0, b = 0;
    while (a < p64.len || b < p16.len) {
        int c = a == p64.len ? 1 : b == p16.len ? -1 : by_ij(&p64.p[a], &p16.p[b]);
        const pair_rec *pr = c <= 0 ? &p64.p[a] : &p16.p[b];
        double D2 = brute_d2(ds, pr->i, pr->j);
        double band = fp16_band(ds, pr->i, pr->j, eps);
        if (c == 0) {
            /* found by both: the FP32 distance is within the band of FP64 */
            CHECK_MSG(fabs(p16.p[b].d2 - D2) <= band, "pair (%u,%u): fp16 d2 %.9g, fp64 %.9g",
                      pr->i, pr->j, p16.p[b].d2, D2);
            a++;
            b++;
            continue;
        }
        ++*ndiff;
        CHECK_MSG(fabs(D2 - eps * eps) <= band,
                  "d=%zu pair (%u,%u) only %s: |D^2 - eps^2| = %.3g beyond the band %.3g", ds->d,
                  pr->i, pr->j, c < 0 ? "cpu" : "cpu-fp16", fabs(D2 - eps * eps), band);
        if (c < 0)
            a++;
        else
            b++;
    }
    free(p64.p);
    free(p16.p);
}

TEST(fp16_differs_from_cpu_only_near_eps)
{
    /* uniform [0,1); the same scaled by 1e-3; and shifted to [30, 31), where
     * FP16's step is 2^-6 and many pairs near eps flip */
    size_t ndiff = 0, npairs = 0;
    const double offset[] = {0, 0, 30};
    for (size_t v = 0; v < 3; v++)
        for (size_t b = 1; b < 4; b++) {
            if (v == 2)
                ndiff = npairs = 0;
            dataset ds = make_uniform(250, sizes_d[b], 1000 + b + 10 * v);
            for (size_t k = 0; k < ds.n * ds.d; k++)
                ((double *)ds.v)[k] =
                    offset[v] + (v == 1 ? ((double *)ds.v)[k] * 1e-3 : ((double *)ds.v)[k]);
            double scale = v == 1 ? 1e-3 : 1;
            for (size_t e = 0; e < 3; e++) {
                double eps = scale * eps_for(ds.d, eps_f[e]);
                fp16_against_cpu(&ds, eps, &ndiff);
                npairs += brute_count(&ds, 0, ds.n, eps);
            }
            free(ds.v);
            if (v == 1 && b == 3) {
                /* At unit scale the band is narrow: disagreements are rare. */
                CHECK_MSG(ndiff * 1000 < npairs, "%zu of %zu pairs differ", ndiff, npairs);
            }
        }
    /* At the offset the band is wide: some pairs must disagree there (the
     * check above is not vacuous). */
    CHECK_MSG(ndiff > 0, "no pair differs at offset 30 (%zu pairs)", npairs);
}

TEST(cancel_returns_ecancel)
{
    dataset ds = make_uniform(300, 17, 8);
    const engine *eng[2] = {&engine_cpu, &engine_cpu_fp16};
    for (int e = 0; e < 2; e++) {
        volatile int flag = 1;
        engine_opts o;
        engine_opts_default(&o);
        join_spec s = spec_for(&ds, 0.5, JOIN_COUNT, &o);
        s.cancel = &flag;
        join_result r;
        CHECK_EQ_INT(engine_run(eng[e], &s, &r), TCJ_ECANCEL);
        CHECK_STR_CONTAINS(err_msg(), "cancel");

        /* cancelled from inside the run (the sink sets the flag) */
        flag = 0;
        o.batch_pairs = 16;
        o.threads = 2;
        collect c = {0};
        c.cancel_after_first = (volatile int *)&flag;
        s.mode = JOIN_PAIRS;
        s.eps = 2.0; /* every pair */
        s.sink.put = collect_put;
        s.sink.ctx = &c;
        CHECK_EQ_INT(engine_run(eng[e], &s, &r), TCJ_ECANCEL);
        CHECK(c.len < ds.n * ds.n);
        free(c.p);
    }
    free(ds.v);
}

TEST(sink_error_stops_the_run)
{
    dataset ds = make_uniform(100, 3, 9);
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 4;
    join_spec s = spec_for(&ds, 0.5, JOIN_PAIRS, &o);
    collect c = {0};
    c.fail_with = TCJ_EIO;
    s.sink.put = collect_put;
    s.sink.ctx = &c;
    join_result r;
    err_clear();
    CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "test sink refused");
    free(ds.v);
}

static int progress_calls;
static double progress_last;
static void on_progress(void *ctx, double f)
{
    (void)ctx;
    progress_calls++;
    CHECK(f >= progress_last && f <= 1.0);
    progress_last = f;
}

TEST(progress_ends_at_one)
{
    dataset ds = make_uniform(200, 17, 10);
    engine_opts o;
    engine_opts_default(&o);
    join_spec s = spec_for(&ds, 0.5, JOIN_COUNT, &o);
    s.progress = on_progress;
    join_result r;
    progress_calls = 0;
    progress_last = 0;
    CHECK_EQ_INT(engine_run(&engine_cpu, &s, &r), 0);
    CHECK(progress_calls >= 1);
    CHECK(progress_last == 1.0);
    CHECK(r.kernel_seconds >= 0 && r.seconds >= r.kernel_seconds);
    CHECK_STR_CONTAINS(r.precision, "fp64");
    free(ds.v);
}

/* d2 of the pairs (0,1) of a 2-point dataset, from each engine. */
static void pair01(const engine *e, const double *x, size_t d, double *d2)
{
    dataset ds = {.n = 2, .d = d, .v = (double *)x};
    engine_opts o;
    engine_opts_default(&o);
    join_spec s = spec_for(&ds, 1e3, JOIN_PAIRS, &o);
    collect c = {0};
    s.sink.put = collect_put;
    s.sink.ctx = &c;
    join_result r;
    *d2 = -1;
    if (engine_run(e, &s, &r) != 0)
        return;
    for (size_t k = 0; k < c.len; k++)
        if (c.p[k].i == 0 && c.p[k].j == 1)
            *d2 = c.p[k].d2;
    free(c.p);
}

/* FASTED's arithmetic on hand-computed cases. */
TEST(fp16_arithmetic_by_hand)
{
    double d2;
    /* Input rounding: 1 + 2^-11 + 2^-20 becomes 1 + 2^-10 in FP16; the
     * distance to 0 is then its square, 1 + 2^-9 + 2^-20 (exact in FP32). */
    const double a[] = {1 + 0x1p-11 + 0x1p-20, 0};
    pair01(&engine_cpu_fp16, a, 1, &d2);
    CHECK(d2 == 1 + 0x1p-9 + 0x1p-20);
    pair01(&engine_cpu, a, 1, &d2);
    CHECK(d2 == (1 + 0x1p-11 + 0x1p-20) * (1 + 0x1p-11 + 0x1p-20));
    /* Norms round toward zero: |(1, 11*2^-14)|^2 = 1 + 121*2^-28 =
     * 1 + 3.78 ulp(1); toward zero 1 + 3*2^-23 (nearest would be 4). */
    const double b[] = {1, 11 * 0x1p-14, 0, 0};
    pair01(&engine_cpu_fp16, b, 2, &d2);
    CHECK(d2 == 1 + 3 * 0x1p-23);
    /* dist2 = (s_x + s_y) - 2a: s_x + s_y = 2 + 3*2^-23 is a tie in FP32
     * (1.5 ulp of 2), to even 2 + 2^-21; minus 2a = 2 leaves 2^-21, where
     * FP64 says 121*2^-28. */
    const double c[] = {1, 11 * 0x1p-14, 1, 0};
    pair01(&engine_cpu_fp16, c, 2, &d2);
    CHECK(d2 == 0x1p-21);
    pair01(&engine_cpu, c, 2, &d2);
    CHECK(d2 == 121 * 0x1p-28);
    /* Negative dist2 is clamped: two copies of (1, 11*2^-14) have
     * s = 1 + 3*2^-23 (toward zero) but a = 1 + 4*2^-23 (nearest), so
     * (s + s) - 2a = -2^-22, reported as 0. */
    const double e[] = {1, 11 * 0x1p-14, 1, 11 * 0x1p-14};
    pair01(&engine_cpu_fp16, e, 2, &d2);
    CHECK(d2 == 0 && !signbit(d2));
    /* The threshold is (float)(eps*eps): the pair of c at d2 = 2^-21 joins
     * at an eps whose FP64 square is just below 2^-21. */
    double eps = nextafter(sqrt(0x1p-21), 0);
    CHECK(eps * eps < 0x1p-21 && (float)(eps * eps) == 0x1p-21f);
    dataset ds = {.n = 2, .d = 2, .v = (double *)c};
    uint64_t cnt = 0;
    CHECK_EQ_INT(run_count(&engine_cpu_fp16, &ds, eps, 0, 2, 1, &cnt), 0);
    CHECK_EQ_INT(cnt, 4);
    CHECK_EQ_INT(run_count(&engine_cpu_fp16, &ds, sqrt(0x1p-21) * (1 - 0x1p-20), 0, 2, 1, &cnt), 0);
    CHECK_EQ_INT(cnt, 2);
}

/* The converted dataset is reused only for the same content hash. */
TEST(fp16_conversion_cache)
{
    dataset ds = make_uniform(120, 5, 4);
    ds.hash = 0x1234;
    uint64_t c1 = 0, c2 = 0, c3 = 0;
    engine_opts o;
    engine_opts_default(&o);
    join_spec s = spec_for(&ds, 0.4, JOIN_COUNT, &o);
    join_result r;
    CHECK_EQ_INT(engine_run(&engine_cpu_fp16, &s, &r), 0);
    c1 = r.pairs;
    CHECK_EQ_INT(engine_run(&engine_cpu_fp16, &s, &r), 0);
    c2 = r.pairs;
    CHECK_STR_CONTAINS(r.variant, "cached");
    CHECK_EQ_INT(c1, c2);
    /* new content, new hash: converted again, and the count follows */
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] *= 0.5;
    ds.hash = 0x5678;
    CHECK_EQ_INT(engine_run(&engine_cpu_fp16, &s, &r), 0);
    c3 = r.pairs;
    CHECK(strstr(r.variant, "cached") == NULL);
    CHECK(c3 > c1);
    /* the same as a conversion from scratch (no hash: never cached) */
    ds.hash = 0;
    uint64_t want = 0;
    CHECK_EQ_INT(run_count(&engine_cpu_fp16, &ds, 0.4, 0, ds.n, 0, &want), 0);
    CHECK_EQ_INT(c3, want);
    free(ds.v);
}
