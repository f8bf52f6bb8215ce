/* GPU tests of the FP64 engines: `fp64` equals `cpu` exactly (pair sets and
 * distances, bit for bit); `ted` (paper and redesigned) and `ted-index`
 * equal `fp64` except pairs whose exact distance lies within 1e-12
 * (relative) of eps; the four output modes agree; the index's edge cases;
 * tiny pair batches; query subranges. Skipped without a CUDA device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"

/* ---- pair collection ---- */
typedef struct pairs {
    size_t n, cap, max_batch;
    uint64_t *ij; /* i << 32 | j */
    double *d2;
} pairs;

static int pairs_put(void *ctx, const pair_batch *b)
{
    pairs *p = ctx;
    if (b->k > p->max_batch)
        p->max_batch = b->k;
    if (p->n + b->k > p->cap) {
        p->cap = (p->n + b->k) * 2;
        p->ij = xrealloc(p->ij, p->cap * sizeof *p->ij);
        p->d2 = xrealloc(p->d2, p->cap * sizeof *p->d2);
    }
    for (size_t k = 0; k < b->k; k++) {
        p->ij[p->n] = (uint64_t)b->i[k] << 32 | b->j[k];
        p->d2[p->n++] = b->d2[k];
    }
    return 0;
}

static void pairs_free(pairs *p)
{
    free(p->ij);
    free(p->d2);
    memset(p, 0, sizeof *p);
}

/* Sort by (i, j), carrying d2 along. */
static const uint64_t *sort_keys;
static int cmp_idx(const void *a, const void *b)
{
    uint64_t x = sort_keys[*(const size_t *)a], y = sort_keys[*(const size_t *)b];
    return x < y ? -1 : x > y;
}

static void pairs_sort(pairs *p)
{
    size_t *ix = xmalloc((p->n + 1) * sizeof *ix);
    for (size_t k = 0; k < p->n; k++)
        ix[k] = k;
    sort_keys = p->ij;
    qsort(ix, p->n, sizeof *ix, cmp_idx);
    uint64_t *ij = xmalloc((p->n + 1) * sizeof *ij);
    double *d2 = xmalloc((p->n + 1) * sizeof *d2);
    for (size_t k = 0; k < p->n; k++) {
        ij[k] = p->ij[ix[k]];
        d2[k] = p->d2[ix[k]];
    }
    free(ix);
    free(p->ij);
    free(p->d2);
    p->ij = ij;
    p->d2 = d2;
}

static engine_opts opts;

static int run_mode(const char *name, const dataset *ds, double eps, size_t q0, size_t q1,
                    join_mode mode, pairs *p, uint64_t *counts, join_result *res)
{
    const engine *e = engine_find(name);
    if (!e)
        return err_set(TCJ_EINVAL, "no engine %s", name);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = q0;
    s.q1 = q1;
    s.mode = mode;
    s.opts = &opts;
    s.counts = counts;
    s.sink.put = pairs_put;
    s.sink.ctx = p;
    return engine_run(e, &s, res);
}

/* All pairs of engine `name`, sorted. */
static int run_pairs(const char *name, const dataset *ds, double eps, size_t q0, size_t q1,
                     pairs *p)
{
    join_result res;
    memset(p, 0, sizeof *p);
    int rc = run_mode(name, ds, eps, q0, q1, JOIN_PAIRS, p, NULL, &res);
    if (rc)
        return rc;
    if (res.pairs != p->n)
        return err_set(TCJ_EINVAL, "%s: result says %llu pairs, sink got %zu", name,
                       (unsigned long long)res.pairs, p->n);
    pairs_sort(p);
    return 0;
}

/* The independent reference: direct (a-b)^2 in FP64, in order. */
static double exact_d2(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = dataset_value(ds, i * ds->d + k) - dataset_value(ds, j * ds->d + k);
        s += u * u;
    }
    return s;
}

/* 0 if a equals b exactly (pairs and d2 bits); else a message. */
static int same_exact(const pairs *a, const pairs *b, char *msg, size_t len)
{
    if (a->n != b->n) {
        snprintf(msg, len, "%zu pairs vs %zu", a->n, b->n);
        return 1;
    }
    for (size_t k = 0; k < a->n; k++)
        if (a->ij[k] != b->ij[k] || memcmp(&a->d2[k], &b->d2[k], sizeof(double)) != 0) {
            snprintf(msg, len, "pair %zu: (%llu,%llu) d2 %.17g vs (%llu,%llu) d2 %.17g", k,
                     (unsigned long long)(a->ij[k] >> 32),
                     (unsigned long long)(a->ij[k] & 0xffffffffu), a->d2[k],
                     (unsigned long long)(b->ij[k] >> 32),
                     (unsigned long long)(b->ij[k] & 0xffffffffu), b->d2[k]);
            return 1;
        }
    return 0;
}

static int near_eps(const dataset *ds, uint64_t ij, double eps)
{
    double dist = sqrt(exact_d2(ds, ij >> 32, ij & 0xffffffffu));
    return fabs(dist - eps) <= 1e-12 * eps;
}

/* 0 if a (tensor cores) equals b (fp64) except pairs within 1e-12 of eps;
 * their d2 must agree to 1e-9 relative of the larger of d2 and eps^2. */
static int same_tc(const dataset *ds, double eps, const pairs *a, const pairs *b, char *msg,
                   size_t len, size_t *boundary)
{
    size_t x = 0, y = 0;
    *boundary = 0;
    while (x < a->n || y < b->n) {
        if (x < a->n && y < b->n && a->ij[x] == b->ij[y]) {
            double scale = fmax(b->d2[y], eps * eps);
            if (!(fabs(a->d2[x] - b->d2[y]) <= 1e-9 * scale)) {
                snprintf(msg, len, "pair (%llu,%llu): d2 %.17g vs fp64 %.17g",
                         (unsigned long long)(a->ij[x] >> 32),
                         (unsigned long long)(a->ij[x] & 0xffffffffu), a->d2[x], b->d2[y]);
                return 1;
            }
            x++, y++;
            continue;
        }
        int from_a = y >= b->n || (x < a->n && a->ij[x] < b->ij[y]);
        uint64_t ij = from_a ? a->ij[x++] : b->ij[y++];
        if (!near_eps(ds, ij, eps)) {
            snprintf(msg, len, "pair (%llu,%llu) only in %s, exact distance %.17g, eps %.17g",
                     (unsigned long long)(ij >> 32), (unsigned long long)(ij & 0xffffffffu),
                     from_a ? "tc" : "fp64", sqrt(exact_d2(ds, ij >> 32, ij & 0xffffffffu)), eps);
            return 1;
        }
        (*boundary)++;
    }
    return 0;
}

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
    engine_opts_default(&opts);
}

static void gen(dataset *ds, const char *kind, size_t n, size_t d, uint64_t seed)
{
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.seed = seed;
    if (!strcmp(kind, "gauss") && gen_opts_set(&g, "clusters", "8")) /* else the defaults */
        abort();
    memset(ds, 0, sizeof *ds);
    if (dataset_generate(&g, ds) != 0) {
        fprintf(stderr, "generate %s: %s\n", kind, err_msg());
        abort();
    }
}

/* eps for about `sel` neighbours per point: a quantile of sampled distances. */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double eps_for(const dataset *ds, double sel)
{
    size_t m = 4000;
    double *v = xmalloc(m * sizeof *v);
    for (size_t k = 0; k < m; k++) {
        size_t i = (k * 7919) % ds->n, j = (k * 104729 + 13) % ds->n;
        v[k] = sqrt(exact_d2(ds, i, j));
    }
    qsort(v, m, sizeof *v, cmp_dbl);
    double q = sel / (double)ds->n;
    size_t at = (size_t)(q * m);
    if (at >= m)
        at = m - 1;
    double e = v[at] > 0 ? v[at] : 1e-3;
    free(v);
    return e;
}

/* fp64 against cpu, exactly, on the rows [q0, q1). */
static int check_fp64_cpu(const dataset *ds, double eps, size_t q0, size_t q1, char *msg,
                          size_t len)
{
    pairs a, b;
    int rc = run_pairs("fp64", ds, eps, q0, q1, &a);
    if (rc) {
        snprintf(msg, len, "fp64: %s", err_msg());
        return 1;
    }
    rc = run_pairs("cpu", ds, eps, q0, q1, &b);
    if (rc) {
        pairs_free(&a);
        snprintf(msg, len, "cpu: %s", err_msg());
        return 1;
    }
    int bad = same_exact(&a, &b, msg, len);
    /* The reference itself against the test's own loop, on a sample. */
    for (size_t k = 0; !bad && k < b.n; k += 1 + b.n / 500) {
        double e = exact_d2(ds, b.ij[k] >> 32, b.ij[k] & 0xffffffffu);
        if (memcmp(&e, &b.d2[k], sizeof e) != 0 || !(e <= eps * eps)) {
            snprintf(msg, len, "cpu d2 %.17g, direct %.17g", b.d2[k], e);
            bad = 1;
        }
    }
    if (!bad && b.n < q1 - q0) {
        snprintf(msg, len, "%zu pairs for %zu rows: self pairs missing", b.n, q1 - q0);
        bad = 1;
    }
    pairs_free(&a);
    pairs_free(&b);
    return bad;
}

static int check_tc(const char *name, int paper, const dataset *ds, double eps, size_t q0,
                    size_t q1, char *msg, size_t len)
{
    pairs a, b;
    size_t boundary = 0;
    opts.ted_paper = paper;
    int rc = run_pairs(name, ds, eps, q0, q1, &a);
    opts.ted_paper = 0;
    if (rc) {
        snprintf(msg, len, "%s: %s", name, err_msg());
        return 1;
    }
    rc = run_pairs("fp64", ds, eps, q0, q1, &b);
    if (rc) {
        pairs_free(&a);
        snprintf(msg, len, "fp64: %s", err_msg());
        return 1;
    }
    int bad = same_tc(ds, eps, &a, &b, msg, len, &boundary);
    if (!bad && b.n == 0) {
        snprintf(msg, len, "no pairs: the test is vacuous");
        bad = 1;
    }
    pairs_free(&a);
    pairs_free(&b);
    return bad;
}

TEST(fp64_hand_computed)
{
    need_gpu();
    /* Three points on a line at 0, 3, 4 (in 2-D: (0,0), (3,0), (0,4)):
     * distances 3, 4, 5. eps 4 keeps 3 self pairs + (0,1),(1,0),(0,2),(2,0). */
    double x[] = {0, 0, 3, 0, 0, 4};
    dataset ds = {.name = "hand", .n = 3, .d = 2, .v = x};
    const char *names[] = {"fp64", "ted", "ted-index"};
    for (int e = 0; e < 3; e++)
        for (int paper = 0; paper < 2; paper++) {
            pairs p;
            opts.ted_paper = paper;
            int rc = run_pairs(names[e], &ds, 4.0, 0, 3, &p);
            opts.ted_paper = 0;
            CHECK_MSG(rc == 0, "%s: %s", names[e], err_msg());
            uint64_t want[] = {0, 1, 2, 1ull << 32, 1ull << 32 | 1, 2ull << 32, 2ull << 32 | 2};
            double wd[] = {0, 9, 16, 9, 0, 16, 0};
            CHECK_MSG(p.n == 7, "%s: %zu pairs", names[e], p.n);
            for (int k = 0; k < 7; k++) {
                CHECK_MSG(p.ij[k] == want[k], "%s: pair %d", names[e], k);
                CHECK_NEAR(p.d2[k], wd[k], 1e-12);
            }
            pairs_free(&p);
        }
}

TEST(fp64_equals_cpu_generated)
{
    need_gpu();
    struct {
        const char *kind;
        size_t n, d;
        double sel;
    } cases[] = {
        {"uniform", 700, 5, 20},  {"expo", 600, 16, 30}, {"gauss", 500, 37, 15},
        {"uniform", 300, 70, 10}, {"expo", 257, 1, 8},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dataset ds;
        char msg[512];
        gen(&ds, cases[c].kind, cases[c].n, cases[c].d, 11 + c);
        double eps = eps_for(&ds, cases[c].sel);
        int bad = check_fp64_cpu(&ds, eps, 0, ds.n, msg, sizeof msg);
        dataset_free(&ds);
        CHECK_MSG(!bad, "%s n=%zu d=%zu: %s", cases[c].kind, cases[c].n, cases[c].d, msg);
    }
}

TEST(fp64_equals_cpu_datasets)
{
    need_gpu();
    dataset ds;
    char msg[512];
    load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.header = -1;
    lo.cols = "1-";
    CHECK_MSG(dataset_load(t_dataset("letter.csv"), &lo, &ds) == 0, "%s", err_msg());
    int bad = check_fp64_cpu(&ds, 3.0, 0, ds.n, msg, sizeof msg);
    dataset_free(&ds);
    CHECK_MSG(!bad, "letter: %s", msg);
    CHECK_MSG(dataset_load(t_dataset("sift5k.fvecs"), NULL, &ds) == 0, "%s", err_msg());
    bad = check_fp64_cpu(&ds, 250.0, 0, ds.n, msg, sizeof msg);
    dataset_free(&ds);
    CHECK_MSG(!bad, "sift5k: %s", msg);
}

TEST(ted_matches_fp64)
{
    need_gpu();
    struct {
        const char *kind;
        size_t n, d;
        double sel;
    } cases[] = {
        {"uniform", 700, 5, 20}, {"expo", 600, 16, 30},    {"gauss", 500, 37, 15},
        {"expo", 333, 128, 10},  {"uniform", 150, 3, 149},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        dataset ds;
        char msg[512];
        gen(&ds, cases[c].kind, cases[c].n, cases[c].d, 101 + c);
        double eps = eps_for(&ds, cases[c].sel);
        for (int v = 0; v < 3; v++) {
            const char *name = v == 2 ? "ted-index" : "ted";
            int bad = check_tc(name, v == 1, &ds, eps, 0, ds.n, msg, sizeof msg);
            if (bad) {
                dataset_free(&ds);
                CHECK_MSG(0, "%s%s %s n=%zu d=%zu: %s", name, v == 1 ? " paper" : "", cases[c].kind,
                          cases[c].n, cases[c].d, msg);
            }
        }
        dataset_free(&ds);
    }
}

TEST(ted_matches_fp64_datasets)
{
    need_gpu();
    dataset ds;
    char msg[512];
    CHECK_MSG(dataset_load(t_dataset("sift5k.fvecs"), NULL, &ds) == 0, "%s", err_msg());
    for (int v = 0; v < 3; v++) {
        const char *name = v == 2 ? "ted-index" : "ted";
        int bad = check_tc(name, v == 1, &ds, 250.0, 0, ds.n, msg, sizeof msg);
        if (bad) {
            dataset_free(&ds);
            CHECK_MSG(0, "sift5k %s%s: %s", name, v == 1 ? " paper" : "", msg);
        }
    }
    dataset_free(&ds);
}

TEST(ted_symmetric_off)
{
    need_gpu();
    dataset ds;
    char msg[512];
    gen(&ds, "expo", 900, 40, 7);
    double eps = eps_for(&ds, 12);
    opts.symmetric = 0;
    int bad = check_tc("ted", 0, &ds, eps, 0, ds.n, msg, sizeof msg);
    opts.symmetric = 1;
    dataset_free(&ds);
    CHECK_MSG(!bad, "%s", msg);
}

/* Histogram edges of modes_consistent, as fractions of eps^2. */
static const double hist_frac[5] = {0.1, 0.3, 0.5, 0.8, 1.0};

/* An eps for which no pair's exact d2 lies within 1e-9 (relative) of any
 * histogram edge: there every engine must agree exactly across modes
 * (symmetric tiles compute d(i,j) where the pair mode computes d(j,i),
 * which may differ in the last bit). */
static double clean_eps(const dataset *ds, double eps)
{
    for (int tries = 0; tries < 20; tries++, eps *= 1.0137) {
        int clean = 1;
        for (size_t i = 0; i < ds->n && clean; i++)
            for (size_t j = 0; j < ds->n && clean; j++) {
                double d2 = exact_d2(ds, i, j);
                for (int b = 0; b < 5; b++) {
                    double e = hist_frac[b] * eps * eps;
                    if (fabs(d2 - e) <= 1e-9 * e)
                        clean = 0;
                }
            }
        if (clean)
            return eps;
    }
    return eps;
}

/* COUNT, PERPOINT, PAIRS and HIST agree within each engine. */
TEST(modes_consistent)
{
    need_gpu();
    dataset ds;
    gen(&ds, "gauss", 640, 9, 5);
    double eps = clean_eps(&ds, eps_for(&ds, 25));
    const char *names[] = {"fp64", "ted", "ted", "ted-index"};
    for (int e = 0; e < 4; e++) {
        opts.ted_paper = e == 2;
        size_t q0 = 10, q1 = 600, nq = q1 - q0;
        join_result r;
        pairs p;
        memset(&p, 0, sizeof p);
        CHECK_MSG(run_mode(names[e], &ds, eps, q0, q1, JOIN_COUNT, &p, NULL, &r) == 0, "%s",
                  err_msg());
        uint64_t count = r.pairs;
        uint64_t *cnt = xcalloc(nq, sizeof *cnt);
        CHECK_MSG(run_mode(names[e], &ds, eps, q0, q1, JOIN_PERPOINT, &p, cnt, &r) == 0, "%s",
                  err_msg());
        uint64_t sum = 0;
        for (size_t i = 0; i < nq; i++)
            sum += cnt[i];
        CHECK_MSG(r.pairs == count && sum == count, "%s: count %llu, per-point %llu / %llu",
                  names[e], (unsigned long long)count, (unsigned long long)sum,
                  (unsigned long long)r.pairs);
        CHECK_MSG(run_pairs(names[e], &ds, eps, q0, q1, &p) == 0, "%s", err_msg());
        CHECK_MSG(p.n == count, "%s: %zu pairs, count %llu", names[e], p.n,
                  (unsigned long long)count);
        uint64_t *cnt2 = xcalloc(nq, sizeof *cnt2);
        for (size_t k = 0; k < p.n; k++)
            cnt2[(p.ij[k] >> 32) - q0]++;
        CHECK_MSG(memcmp(cnt, cnt2, nq * sizeof *cnt) == 0,
                  "%s: per-point counts differ from pairs", names[e]);
        /* Histogram with the top edge at eps^2: its total is the count, and
         * each pair's d2 falls in the bin the histogram says. */
        double edges[5];
        for (int b = 0; b < 5; b++)
            edges[b] = hist_frac[b] * eps * eps;
        uint64_t hist[4], below = 0, want[5] = {0};
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.q0 = q0;
        s.q1 = q1;
        s.mode = JOIN_HIST;
        s.opts = &opts;
        s.hist_edges = edges;
        s.hist_nbins = 4;
        s.hist = hist;
        s.hist_below = &below;
        CHECK_MSG(engine_run(engine_find(names[e]), &s, &r) == 0, "%s", err_msg());
        for (size_t k = 0; k < p.n; k++) {
            int b = 0;
            while (b < 4 && !(p.d2[k] <= edges[b]))
                b++;
            want[b]++;
        }
        uint64_t tot = below;
        for (int b = 0; b < 4; b++)
            tot += hist[b];
        CHECK_MSG(tot == count && r.pairs == count, "%s: hist total %llu, count %llu", names[e],
                  (unsigned long long)tot, (unsigned long long)count);
        CHECK_MSG(want[0] == below && want[1] == hist[0] && want[2] == hist[1] &&
                      want[3] == hist[2] && want[4] == hist[3],
                  "%s: histogram bins differ from the pairs' d2", names[e]);
        free(cnt);
        free(cnt2);
        pairs_free(&p);
    }
    opts.ted_paper = 0;
    dataset_free(&ds);
}

TEST(index_edge_cases)
{
    need_gpu();
    char msg[512];
    dataset ds;
    /* eps larger than the data's extent: one cell, every pair. */
    gen(&ds, "uniform", 300, 4, 3);
    int bad = check_tc("ted-index", 0, &ds, 5.0, 0, ds.n, msg, sizeof msg);
    pairs p;
    if (!bad) {
        CHECK_MSG(run_pairs("ted-index", &ds, 5.0, 0, ds.n, &p) == 0, "%s", err_msg());
        CHECK_EQ_INT(p.n, 300 * 300);
        pairs_free(&p);
    }
    dataset_free(&ds);
    CHECK_MSG(!bad, "eps > extent: %s", msg);

    /* All points identical: extent 0 in every dimension. */
    double *x = xmalloc(200 * 6 * sizeof *x);
    for (size_t i = 0; i < 200 * 6; i++)
        x[i] = 0.25 * (double)(i % 6);
    dataset same = {.name = "same", .n = 200, .d = 6, .v = x};
    const char *names[] = {"fp64", "ted", "ted-index"};
    for (int e = 0; e < 3; e++) {
        CHECK_MSG(run_pairs(names[e], &same, 1e-3, 0, 200, &p) == 0, "%s", err_msg());
        CHECK_MSG(p.n == 200 * 200, "%s: %zu pairs of identical points", names[e], p.n);
        pairs_free(&p);
    }
    free(x);

    /* index_k above d, index_k 1, and a wide spread (many cells). */
    gen(&ds, "expo", 800, 3, 9);
    double eps = eps_for(&ds, 10);
    int ks[] = {6, 1, 2, 8};
    for (int k = 0; k < 4 && !bad; k++) {
        opts.index_k = ks[k];
        bad = check_tc("ted-index", 0, &ds, eps, 0, ds.n, msg, sizeof msg);
        if (bad)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), " (index_k %d)", ks[k]);
    }
    opts.index_k = 6;
    dataset_free(&ds);
    CHECK_MSG(!bad, "%s", msg);

    /* Clustered data in 12-D: cells along 6 dims, 8-way groups. */
    gen(&ds, "gauss", 1000, 12, 21);
    eps = eps_for(&ds, 40);
    bad = check_tc("ted-index", 0, &ds, eps, 0, ds.n, msg, sizeof msg);
    dataset_free(&ds);
    CHECK_MSG(!bad, "gauss 12-D: %s", msg);
}

/* batch_pairs = 3: every pair arrives, no batch is larger than 3. */
TEST(tiny_batches_lose_nothing)
{
    need_gpu();
    dataset ds;
    gen(&ds, "uniform", 400, 3, 17);
    double eps = eps_for(&ds, 60);
    const char *names[] = {"fp64", "ted", "ted", "ted-index"};
    pairs ref;
    CHECK_MSG(run_pairs("cpu", &ds, eps, 0, ds.n, &ref) == 0, "%s", err_msg());
    CHECK(ref.n > 4096); /* more than the device buffer holds: splits happen */
    for (int e = 0; e < 4; e++) {
        pairs p;
        char msg[512];
        size_t boundary;
        opts.batch_pairs = 3;
        opts.ted_paper = e == 2;
        int rc = run_pairs(names[e], &ds, eps, 0, ds.n, &p);
        opts.batch_pairs = (size_t)1 << 22;
        opts.ted_paper = 0;
        CHECK_MSG(rc == 0, "%s: %s", names[e], err_msg());
        CHECK_MSG(p.max_batch <= 3, "%s: a batch of %zu pairs", names[e], p.max_batch);
        int bad = e == 0 ? same_exact(&p, &ref, msg, sizeof msg)
                         : same_tc(&ds, eps, &p, &ref, msg, sizeof msg, &boundary);
        pairs_free(&p);
        CHECK_MSG(!bad, "%s: %s", names[e], msg);
    }
    pairs_free(&ref);
    dataset_free(&ds);
}

TEST(query_subranges)
{
    need_gpu();
    dataset ds;
    char msg[512];
    gen(&ds, "expo", 700, 11, 23);
    double eps = eps_for(&ds, 20);
    size_t r[][2] = {{37, 211}, {0, 1}, {699, 700}, {300, 700}, {5, 5}};
    for (int k = 0; k < 5; k++) {
        int bad = check_fp64_cpu(&ds, eps, r[k][0], r[k][1], msg, sizeof msg);
        CHECK_MSG(!bad, "fp64 [%zu,%zu): %s", r[k][0], r[k][1], msg);
        if (r[k][0] == r[k][1])
            continue;
        for (int v = 0; v < 3; v++) {
            const char *name = v == 2 ? "ted-index" : "ted";
            bad = check_tc(name, v == 1, &ds, eps, r[k][0], r[k][1], msg, sizeof msg);
            CHECK_MSG(!bad, "%s%s [%zu,%zu): %s", name, v == 1 ? " paper" : "", r[k][0], r[k][1],
                      msg);
        }
    }
    dataset_free(&ds);
}

TEST(results_describe_the_run)
{
    need_gpu();
    dataset ds;
    gen(&ds, "uniform", 300, 50, 1);
    join_result r;
    pairs p;
    memset(&p, 0, sizeof p);
    opts.ted_paper = 0;
    CHECK_MSG(run_mode("ted", &ds, 1.0, 0, 300, JOIN_COUNT, &p, NULL, &r) == 0, "%s", err_msg());
    CHECK_STR_CONTAINS(r.variant, "redesigned");
    CHECK_EQ_INT(r.d_padded, 64);
    CHECK(r.kernel_seconds > 0);
    CHECK(r.device[0] != 0);
    CHECK_STR_CONTAINS(r.precision, "fp64-tc");
    opts.ted_paper = 1;
    CHECK_MSG(run_mode("ted", &ds, 1.0, 0, 300, JOIN_COUNT, &p, NULL, &r) == 0, "%s", err_msg());
    opts.ted_paper = 0;
    CHECK_STR_CONTAINS(r.variant, "paper");
    CHECK_EQ_INT(r.d_padded, 52);
    CHECK_MSG(run_mode("fp64", &ds, 1.0, 0, 300, JOIN_COUNT, &p, NULL, &r) == 0, "%s", err_msg());
    CHECK_EQ_INT(r.d_padded, 50);
    CHECK_STR_CONTAINS(r.precision, "fp64");
    dataset_free(&ds);
}

/* A small case through every kernel and mode, the target of
 * compute-sanitizer (memcheck, racecheck) in scripts/gpu-check. */
TEST(sanitizer_case)
{
    need_gpu();
    dataset ds;
    char msg[512];
    gen(&ds, "gauss", 210, 20, 77);
    double eps = eps_for(&ds, 30);
    const char *names[] = {"fp64", "ted", "ted", "ted-index"};
    pairs ref;
    CHECK_MSG(run_pairs("fp64", &ds, eps, 0, ds.n, &ref) == 0, "%s", err_msg());
    for (int e = 0; e < 4; e++) {
        pairs p;
        size_t boundary;
        join_result r;
        uint64_t *cnt = xcalloc(ds.n, sizeof *cnt);
        opts.ted_paper = e == 2;
        opts.batch_pairs = 3;
        CHECK_MSG(run_mode(names[e], &ds, eps, 0, ds.n, JOIN_PERPOINT, NULL, cnt, &r) == 0, "%s",
                  err_msg());
        free(cnt);
        int rc = run_pairs(names[e], &ds, eps, 0, ds.n, &p);
        opts.batch_pairs = (size_t)1 << 22;
        opts.ted_paper = 0;
        CHECK_MSG(rc == 0, "%s: %s", names[e], err_msg());
        int bad = same_tc(&ds, eps, &p, &ref, msg, sizeof msg, &boundary);
        pairs_free(&p);
        CHECK_MSG(!bad, "%s: %s", names[e], msg);
    }
    pairs_free(&ref);
    dataset_free(&ds);
}
