/* The accuracy comparer on hand-computed cases, on cpu against itself, and
 * cpu-fp16 against cpu checked with an independent computation from the
 * full pair lists; the block-halving path with tiny bounds; cancel; one
 * side the same in C, in the session log and in JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "compare.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "json.h"
#include "json_mini.h"
#include "store.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;
extern const engine engine_cpu_bf16;

/* Engines that report a fixed pair list, to make hand-computed cases. */
typedef struct fake_pair {
    uint32_t i, j;
    double d2;
} fake_pair;

static const fake_pair *fake_list;
static size_t fake_len;

static int fake_run_list(const join_spec *s, join_result *res, const fake_pair *p, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (p[k].i < s->q0 || p[k].i >= s->q1)
            continue;
        res->pairs++;
        if (s->mode == JOIN_PAIRS) {
            pair_batch b = {.k = 1, .i = &p[k].i, .j = &p[k].j, .d2 = &p[k].d2};
            int rc = s->sink.put(s->sink.ctx, &b);
            if (rc)
                return rc;
        } else if (s->mode != JOIN_COUNT) {
            return err_set(TCJ_EUNSUP, "fake engine: count and pairs only");
        }
    }
    return 0;
}

/* Points 0, 1, 3 on a line; eps = 1.5. FP64 distances: d01 = 1, d02 = 3,
 * d12 = 2. A reports d01 as 1.5 and d10 as 0.5 and adds (1,2); B is the
 * truth plus (2,0). */
static const fake_pair list_a[] = {
    {0, 0, 0}, {0, 1, 2.25}, {1, 0, 0.25}, {1, 1, 0}, {1, 2, 4}, {2, 2, 0},
};
static const fake_pair list_b[] = {
    {2, 0, 9}, {0, 1, 1}, {1, 0, 1}, {0, 0, 0}, {1, 1, 0}, {2, 2, 0},
};

static int fake_a_run(const join_spec *s, join_result *r)
{
    return fake_run_list(s, r, list_a, sizeof list_a / sizeof *list_a);
}

static int fake_b_run(const join_spec *s, join_result *r)
{
    return fake_run_list(s, r, list_b, sizeof list_b / sizeof *list_b);
}

static const engine fake_a = {.name = "fake-a", .precision = "x", .run = fake_a_run};
static const engine fake_b = {.name = "fake-b", .precision = "y", .run = fake_b_run};

static cmp_spec spec_for(const engine *a, const engine *b, const dataset *ds, double eps,
                         const engine_opts *o)
{
    cmp_spec s;
    memset(&s, 0, sizeof s);
    s.a = a;
    s.b = b;
    s.ds = ds;
    s.eps = eps;
    s.opts = o;
    return s;
}

TEST(compare_hand_computed)
{
    double x[] = {0, 1, 3};
    dataset ds = {.n = 3, .d = 1, .v = x};
    engine_opts o;
    engine_opts_default(&o);
    (void)fake_list;
    (void)fake_len;
    const size_t bounds[] = {0, 2, 1}; /* default; a row a block; a row over the bound */
    for (int k = 0; k < 3; k++) {
        cmp_spec s = spec_for(&fake_a, &fake_b, &ds, 1.5, &o);
        s.block_pairs = bounds[k];
        cmp_result r;
        CHECK_EQ_INT(cmp_run(&s, &r), 0);
        CHECK_EQ_INT(r.run_a.pairs, 6);
        CHECK_EQ_INT(r.run_b.pairs, 6);
        /* point 0: {0,1} vs {0,1}: 1; point 1: {0,1,2} vs {0,1}: 2/3;
         * point 2: {2} vs {0,2}: 1/2 */
        CHECK_NEAR(r.side.overlap, (1 + 2.0 / 3 + 0.5) / 3, 1e-15);
        CHECK_EQ_INT(r.side.both, 5);
        CHECK_EQ_INT(r.side.only_engine, 1);
        CHECK_EQ_INT(r.side.only_ref, 1);
        /* errors: 0, +0.5, -0.5, 0, 0 */
        CHECK(r.side.err_mean == 0);
        CHECK_NEAR(r.side.err_std, sqrt(0.1), 1e-15);
        CHECK(r.side.err_min == -0.5 && r.side.err_max == 0.5);
        CHECK_EQ_INT(r.side.nbins, CMP_ERR_BINS);
        uint64_t total = 0;
        for (size_t b = 0; b < r.side.nbins; b++) {
            total += r.side.bin_count[b];
            CHECK(r.side.bin_lo[b] < r.side.bin_hi[b]);
            CHECK_NEAR(r.side.bin_lo[b], -r.side.bin_hi[r.side.nbins - 1 - b], 1e-15);
        }
        CHECK_EQ_INT(total, 5);
        CHECK_EQ_INT(r.side.bin_count[CMP_ERR_BINS / 2], 3);
        CHECK_EQ_INT(r.side.bin_count[0], 1);
        CHECK_EQ_INT(r.side.bin_count[CMP_ERR_BINS - 1], 1);
        CHECK(r.side.bin_lo[0] <= -0.5 && r.side.bin_hi[CMP_ERR_BINS - 1] > 0.5);
        CHECK(r.side.bin_hi[CMP_ERR_BINS - 1] < 0.6); /* the range comes from the data */
        /* only A: (1,2) at FP64 distance 2: (2 - 1.5)/1.5 = 1/3; only B:
         * (2,0) at 3: 1 */
        CHECK_NEAR(r.side.only_engine_rel_max, 1.0 / 3, 1e-15);
        CHECK_NEAR(r.side.only_ref_rel_max, 1.0, 1e-15);
        CHECK_EQ_INT(r.side.only_engine_rel[CMP_REL_BINS - 1], 1);
        CHECK_EQ_INT(r.side.only_ref_rel[CMP_REL_BINS - 1], 1);
        if (bounds[k])
            CHECK_EQ_INT(r.blocks, 3);
        if (bounds[k] == 1)
            CHECK(r.redone > 0);

        /* The side names its engine; cmp_run leaves the run id to the caller. */
        CHECK(strcmp(r.side.engine, "fake-a") == 0 && r.side.judged && r.side.run_id == 0);
    }
}

/* A side with more pairs of its own than the bound holds is split for that
 * engine alone, down to single rows whose room grows. The pass is sized
 * on the reference, which finds nothing here (one block of all rows), so
 * all of A's pairs are its own: 2, 3 and 1 a row. */
static int fake_none_run(const join_spec *s, join_result *r)
{
    return fake_run_list(s, r, list_a, 0);
}

TEST(compare_side_outgrows_the_bound)
{
    double x[] = {0, 1, 3};
    dataset ds = {.n = 3, .d = 1, .v = x};
    engine_opts o;
    engine_opts_default(&o);
    const engine none = {.name = "fake-none", .precision = "z", .run = fake_none_run};
    for (size_t bound = 1; bound <= 6; bound++) {
        cmp_spec s = spec_for(&fake_a, &none, &ds, 1.5, &o);
        s.block_pairs = bound;
        cmp_pass *m = cmp_pass_new(&s, 0, 1);
        size_t r0, r1;
        int blocks = 0, rc;
        while ((rc = cmp_pass_block(m, &r0, &r1)) == 1) {
            blocks++;
            CHECK_EQ_INT(cmp_pass_side(m, 0, &fake_a), 0);
        }
        CHECK_EQ_INT(rc, 0);
        CHECK_EQ_INT(blocks, 1);
        cmp_result r;
        memset(&r, 0, sizeof r);
        cmp_pass_result(m, 0, &r);
        cmp_pass_free(m);
        CHECK_EQ_INT(r.side.only_engine, 6);
        CHECK_EQ_INT(r.side.only_ref, 0);
        CHECK_EQ_INT(r.side.both, 0);
        CHECK(r.side.overlap == 0);
        /* Under 6 the block is split for A (and a row's room grown under 3). */
        if (bound < 6)
            CHECK(r.redone > 0 && r.blocks > 1);
        else
            CHECK(r.redone == 0 && r.blocks == 1);
        uint64_t judged = 0;
        for (int b = 0; b < CMP_REL_BINS; b++)
            judged += r.side.only_engine_rel[b];
        CHECK_EQ_INT(judged, 6);
    }
}

/* compare A B ref=R is two comparisons against R, each giving one side of
 * the same struct. Here R = fake-b and B = fake-b too, so B's side is
 * exact by hand: all 6 pairs, overlap 1, every error 0 (one bin [0, 0]).
 * Both sides are written as the same JSON object shape and read back
 * through the project's reader. */
TEST(sides_one_struct_one_json_shape)
{
    double x[] = {0, 1, 3};
    dataset ds = {.n = 3, .d = 1, .v = x};
    engine_opts o;
    engine_opts_default(&o);
    cmp_spec s = spec_for(&fake_a, &fake_b, &ds, 1.5, &o);
    static cmp_result ra, rb;
    CHECK_EQ_INT(cmp_run(&s, &ra), 0);
    s.a = &fake_b;
    CHECK_EQ_INT(cmp_run(&s, &rb), 0);
    CHECK(rb.side.overlap == 1 && rb.side.both == 6 && rb.side.only_engine == 0 &&
          rb.side.only_ref == 0);
    CHECK(rb.side.err_mean == 0 && rb.side.err_std == 0 && rb.side.err_min == 0 &&
          rb.side.err_max == 0);
    CHECK_EQ_INT(rb.side.nbins, 1);
    CHECK_EQ_INT(rb.side.bin_count[0], 6);

    static cmp_side ref;
    cmp_side_ref(&ref, "fake-b", 9);
    CHECK(!ref.judged && ref.run_id == 9 && strcmp(ref.engine, "fake-b") == 0);

    json_w w;
    json_w_init(&w, '{');
    const cmp_side *sides[3] = {&ra.side, &rb.side, &ref};
    const char *keys[3] = {"a", "b", "ref"};
    for (int k = 0; k < 3; k++) {
        json_w_obj(&w, keys[k]);
        json_w_str(&w, "engine", sides[k]->engine);
        cmp_side_accuracy_json(sides[k], &w);
        json_w_close(&w);
    }
    char *text = json_w_finish(&w);
    json *j = json_parse(text);
    CHECK_MSG(j != NULL, "%s", text);
    const json *a = json_get(json_get(j, "a"), "accuracy");
    const json *b = json_get(json_get(j, "b"), "accuracy");
    CHECK(a && b && a->type == JSON_OBJ && b->type == JSON_OBJ);
    CHECK(json_get(json_get(j, "ref"), "accuracy")->type == JSON_NULL);
    /* The same member names in the same order on both sides. */
    const json *x1 = a ? a->child : NULL, *x2 = b ? b->child : NULL;
    int same = 1, members = 0;
    for (; x1 && x2; x1 = x1->next, x2 = x2->next, members++)
        same &= strcmp(x1->key, x2->key) == 0 && x1->type == x2->type;
    CHECK(same && !x1 && !x2 && members == 13);
    /* A against the reference, as compare_hand_computed found it */
    CHECK_NEAR(json_num(a, "overlap"), (1 + 2.0 / 3 + 0.5) / 3, 0);
    CHECK(json_num(a, "both") == 5 && json_num(a, "only_engine") == 1 &&
          json_num(a, "only_ref") == 1);
    CHECK(json_num(a, "only_engine_rel_max") == 1.0 / 3 && json_num(a, "only_ref_rel_max") == 1);
    CHECK(json_num(a, "err_std") == ra.side.err_std);
    CHECK_EQ_INT(json_len(json_get(a, "histogram")), CMP_ERR_BINS);
    CHECK(json_num(b, "overlap") == 1 && json_num(b, "both") == 6);
    CHECK_EQ_INT(json_len(json_get(b, "histogram")), 1);
    CHECK(json_num(json_at(json_get(b, "histogram"), 0), "count") == 6);
    /* one-sided pairs of A: one bin each, the largest (d - eps)/eps bin */
    CHECK_EQ_INT(json_len(json_get(a, "only_engine_rel")), 1);
    CHECK(json_num(json_at(json_get(a, "only_engine_rel"), 0), "lo") == 1e-1);
    json_free(j);
    free(text);
}

static dataset make_uniform(size_t n, size_t d, uint64_t seed)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = malloc(n * d * sizeof(double));
    uint64_t st = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = t_unit(&st);
    return ds;
}

TEST(compare_cpu_with_itself)
{
    dataset ds = make_uniform(300, 17, 3);
    engine_opts o;
    engine_opts_default(&o);
    cmp_spec s = spec_for(&engine_cpu, &engine_cpu, &ds, 1.0, &o);
    cmp_result r;
    CHECK_EQ_INT(cmp_run(&s, &r), 0);
    CHECK(r.side.overlap == 1.0);
    CHECK_EQ_INT(r.side.only_engine, 0);
    CHECK_EQ_INT(r.side.only_ref, 0);
    CHECK_EQ_INT(r.side.both, r.run_a.pairs);
    CHECK_EQ_INT(r.run_a.pairs, r.run_b.pairs);
    CHECK(r.run_a.pairs > ds.n);
    CHECK(r.side.err_mean == 0 && r.side.err_std == 0 && r.side.err_min == 0 &&
          r.side.err_max == 0);
    CHECK_EQ_INT(r.side.nbins, 1);
    CHECK_EQ_INT(r.side.bin_count[0], r.side.both);
    CHECK(r.side.bin_lo[0] == 0 && r.side.bin_hi[0] == 0);
    CHECK(r.side.only_engine_rel_max == 0 && r.side.only_ref_rel_max == 0);
    free(ds.v);
}

/* Every pair of an engine, for the independent computation. */
typedef struct all_pairs {
    fake_pair *p;
    size_t len, cap;
} all_pairs;

static int all_put(void *ctx, const pair_batch *b)
{
    all_pairs *a = ctx;
    if (a->len + b->k > a->cap) {
        a->cap = (a->len + b->k) * 2;
        a->p = realloc(a->p, a->cap * sizeof *a->p);
    }
    for (size_t k = 0; k < b->k; k++)
        a->p[a->len++] = (fake_pair){b->i[k], b->j[k], b->d2[k]};
    return 0;
}

static int by_ij(const void *x, const void *y)
{
    const fake_pair *a = x, *b = y;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

static void collect_all(const engine *e, const dataset *ds, double eps, all_pairs *out)
{
    engine_opts o;
    engine_opts_default(&o);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.mode = JOIN_PAIRS;
    s.opts = &o;
    s.sink.put = all_put;
    s.sink.ctx = out;
    join_result r;
    if (engine_run(e, &s, &r) == 0)
        qsort(out->p, out->len, sizeof *out->p, by_ij);
}

/* cpu-fp16 against cpu on data where FP16 flips pairs (values near 30),
 * checked against the same metrics computed here from the whole pair
 * lists, with block bounds that force halvings. 360 sparse points, then a
 * cluster of 40 where every row has many neighbours. */
TEST(compare_fp16_against_independent)
{
    dataset ds = make_uniform(400, 8, 21);
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] =
            k < 360 * ds.d ? 30 + 10 * ((double *)ds.v)[k] : 30 + 0.4 * ((double *)ds.v)[k];
    double eps = 0.5;
    all_pairs pa = {0}, pb = {0};
    collect_all(&engine_cpu_fp16, &ds, eps, &pa);
    collect_all(&engine_cpu, &ds, eps, &pb);
    double score = 0, sum = 0, sum2 = 0, mn = INFINITY, mx = -INFINITY, relmax_a = 0, relmax_b = 0;
    uint64_t both = 0, oa = 0, ob = 0;
    size_t x = 0, y = 0;
    for (uint32_t i = 0; i < ds.n; i++) {
        size_t na = 0, nb = 0, in = 0;
        while (x < pa.len || y < pb.len) {
            int ea = x < pa.len && pa.p[x].i == i, eb = y < pb.len && pb.p[y].i == i;
            if (!ea && !eb)
                break;
            if (ea && eb && pa.p[x].j == pb.p[y].j) {
                double e = sqrt(pa.p[x].d2) - sqrt(pb.p[y].d2);
                sum += e;
                sum2 += e * e;
                mn = fmin(mn, e);
                mx = fmax(mx, e);
                in++, na++, nb++, x++, y++;
            } else if (ea && (!eb || pa.p[x].j < pb.p[y].j)) {
                const double *p = ((double *)ds.v) + i * ds.d,
                             *q = ((double *)ds.v) + pa.p[x].j * ds.d;
                double d2 = 0;
                for (size_t k = 0; k < ds.d; k++)
                    d2 += (p[k] - q[k]) * (p[k] - q[k]);
                relmax_a = fmax(relmax_a, fabs((sqrt(d2) - eps) / eps));
                na++, oa++, x++;
            } else {
                relmax_b = fmax(relmax_b, fabs((sqrt(pb.p[y].d2) - eps) / eps));
                nb++, ob++, y++;
            }
        }
        both += in;
        score += (double)in / (double)(na + nb - in);
    }
    CHECK(oa + ob > 0); /* the case is not trivial */

    engine_opts o;
    engine_opts_default(&o);
    const size_t bounds[] = {0, 64, 5};
    for (int k = 0; k < 3; k++) {
        cmp_spec s = spec_for(&engine_cpu_fp16, &engine_cpu, &ds, eps, &o);
        s.block_pairs = bounds[k];
        cmp_result r;
        CHECK_EQ_INT(cmp_run(&s, &r), 0);
        CHECK_EQ_INT(r.side.both, both);
        CHECK_EQ_INT(r.side.only_engine, oa);
        CHECK_EQ_INT(r.side.only_ref, ob);
        CHECK_EQ_INT(r.run_a.pairs, pa.len);
        CHECK_EQ_INT(r.run_b.pairs, pb.len);
        CHECK_NEAR(r.side.overlap, score / ds.n, 1e-12);
        double mean = sum / both;
        CHECK_NEAR(r.side.err_mean, mean, 1e-12);
        CHECK_NEAR(r.side.err_std, sqrt(fmax(0, sum2 / both - mean * mean)), 1e-9);
        CHECK(r.side.err_min == mn && r.side.err_max == mx);
        CHECK_NEAR(r.side.only_engine_rel_max, relmax_a, 1e-12);
        CHECK_NEAR(r.side.only_ref_rel_max, relmax_b, 1e-12);
        uint64_t hsum = 0, ra = 0, rb = 0;
        for (size_t b = 0; b < r.side.nbins; b++)
            hsum += r.side.bin_count[b];
        CHECK_EQ_INT(r.side.nbins, CMP_ERR_BINS);
        CHECK_EQ_INT(hsum, both);
        CHECK(r.side.bin_lo[0] <= mn && r.side.bin_hi[r.side.nbins - 1] > mx);
        for (int b = 0; b < CMP_REL_BINS; b++) {
            ra += r.side.only_engine_rel[b];
            rb += r.side.only_ref_rel[b];
        }
        CHECK_EQ_INT(ra, oa);
        CHECK_EQ_INT(rb, ob);
        /* bound 64: blocks sized on the sparse rows overflow in the
         * cluster and are halved; bound 5: single rows outgrow it */
        if (bounds[k])
            CHECK(r.redone > 0 && r.blocks > 1);
    }
    free(pa.p);
    free(pb.p);
    free(ds.v);
}

/* Bins hold what falls in them: recount the fp16 errors by the bin edges
 * the comparer reports. */
TEST(compare_error_histogram_edges)
{
    dataset ds = make_uniform(200, 4, 33);
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = ((double *)ds.v)[k] * 100;
    engine_opts o;
    engine_opts_default(&o);
    cmp_spec s = spec_for(&engine_cpu_fp16, &engine_cpu, &ds, 30, &o);
    cmp_result r;
    CHECK_EQ_INT(cmp_run(&s, &r), 0);
    all_pairs pa = {0}, pb = {0};
    collect_all(&engine_cpu_fp16, &ds, 30, &pa);
    collect_all(&engine_cpu, &ds, 30, &pb);
    uint64_t want[CMP_ERR_BINS] = {0};
    size_t y = 0;
    for (size_t x = 0; x < pa.len; x++) {
        while (y < pb.len && by_ij(&pb.p[y], &pa.p[x]) < 0)
            y++;
        if (y == pb.len || by_ij(&pb.p[y], &pa.p[x]) != 0)
            continue;
        double e = sqrt(pa.p[x].d2) - sqrt(pb.p[y].d2);
        int hit = -1;
        for (size_t b = 0; b < r.side.nbins; b++)
            if (e >= r.side.bin_lo[b] * (1 + 1e-12) - 1e-300 && e < r.side.bin_hi[b])
                hit = (int)b;
        CHECK_MSG(hit >= 0, "error %g outside every bin", e);
        want[hit]++;
    }
    for (size_t b = 0; b < r.side.nbins; b++)
        CHECK_MSG(want[b] == r.side.bin_count[b], "bin %zu [%g, %g): %llu, recount %llu", b,
                  r.side.bin_lo[b], r.side.bin_hi[b], (unsigned long long)r.side.bin_count[b],
                  (unsigned long long)want[b]);
    free(pa.p);
    free(pb.p);
    free(ds.v);
}

TEST(compare_cancel)
{
    dataset ds = make_uniform(100, 3, 5);
    engine_opts o;
    engine_opts_default(&o);
    volatile int flag = 1;
    cmp_spec s = spec_for(&engine_cpu, &engine_cpu_fp16, &ds, 0.3, &o);
    s.cancel = &flag;
    cmp_result r;
    CHECK_EQ_INT(cmp_run(&s, &r), TCJ_ECANCEL);
    free(ds.v);
}

/* One side, three forms: the cmp_side cmp_run fills, its comparison_sides
 * row, and the JSON object show/export read back from the log. Every
 * number must survive C -> SQL -> JSON bit for bit, and both sides must
 * come back in the same shape (B here is the reference: accuracy null). */
TEST(side_through_the_log)
{
    dataset ds = make_uniform(300, 5, 11);
    engine_opts o;
    engine_opts_default(&o);
    cmp_spec s = spec_for(&engine_cpu_fp16, &engine_cpu, &ds, 0.3, &o);
    static cmp_result r;
    CHECK_EQ_INT(cmp_run(&s, &r), 0);
    CHECK(r.side.both > 0 && r.side.nbins == CMP_ERR_BINS);

    char path[512];
    snprintf(path, sizeof path, "%s/side.db", t_tmpdir());
    store *st = NULL;
    CHECK_EQ_INT(store_open(path, &st), 0);
    store_run_rec ra = {
        .engine = "cpu-fp16", .eps = 0.3, .q1 = ds.n, .n = ds.n, .d = ds.d, .res = &r.run_a};
    store_run_rec rb = {
        .engine = "cpu", .eps = 0.3, .q1 = ds.n, .n = ds.n, .d = ds.d, .res = &r.run_b};
    int64_t ida = store_run(st, &ra), idb = store_run(st, &rb);
    CHECK(ida > 0 && idb > 0);
    r.side.run_id = ida;
    static cmp_side ref;
    cmp_side_ref(&ref, "cpu", idb);
    store_cmp_rec c = {.eps = 0.3, .side = {&r.side, &ref}};
    CHECK(store_comparison(st, &c) > 0);

    json_w w;
    json_w_init(&w, '{');
    CHECK_EQ_INT(store_run_json(st, ida, &w), 0);
    char *text = json_w_finish(&w);
    store_close(st);
    json *j = json_parse(text);
    CHECK_MSG(j != NULL, "%s", text);
    const json *cmp = json_at(json_get(j, "comparisons"), 0);
    const json *a = json_get(cmp, "a"), *b = json_get(cmp, "b");
    const json *acc = json_get(a, "accuracy");
    const cmp_side *sd = &r.side;
    CHECK(strcmp(json_str(a, "engine", ""), "cpu-fp16") == 0 && json_num(a, "run_id") == ida);
    CHECK(strcmp(json_str(b, "engine", ""), "cpu") == 0 && json_num(b, "run_id") == idb);
    CHECK(json_get(b, "accuracy") && json_get(b, "accuracy")->type == JSON_NULL);
    CHECK(strcmp(json_str(json_get(cmp, "ref"), "engine", ""), "cpu") == 0);
    CHECK(strcmp(json_str(cmp, "role", ""), "a") == 0);
    /* The same keys in the same order on a and b. */
    const json *ka = a->child, *kb = b->child;
    for (; ka && kb; ka = ka->next, kb = kb->next)
        CHECK(strcmp(ka->key, kb->key) == 0);
    CHECK(!ka && !kb);
    CHECK(json_num(acc, "overlap") == sd->overlap);
    CHECK(json_num(acc, "err_mean") == sd->err_mean && json_num(acc, "err_std") == sd->err_std);
    CHECK(json_num(acc, "err_min") == sd->err_min && json_num(acc, "err_max") == sd->err_max);
    CHECK(json_num(acc, "both") == (double)sd->both);
    CHECK(json_num(acc, "only_engine") == (double)sd->only_engine);
    CHECK(json_num(acc, "only_ref") == (double)sd->only_ref);
    CHECK(json_num(acc, "only_engine_rel_max") == sd->only_engine_rel_max);
    CHECK(json_num(acc, "only_ref_rel_max") == sd->only_ref_rel_max);
    const json *h = json_get(acc, "histogram");
    CHECK_EQ_INT(json_len(h), sd->nbins);
    for (size_t k = 0; k < sd->nbins; k++) {
        const json *bin = json_at(h, k);
        CHECK_MSG(json_num(bin, "lo") == sd->bin_lo[k] && json_num(bin, "hi") == sd->bin_hi[k] &&
                      json_num(bin, "count") == (double)sd->bin_count[k],
                  "bin %zu", k);
    }
    json_free(j);
    free(text);
    free(ds.v);
}

/* compare A B ref=R judges both sides in one pair pass: each side equals
 * what its own comparison against R gives, statistic for statistic, with a
 * small bound (several blocks) and the default. */
TEST(compare_two_sides_in_one_pass)
{
    dataset ds = make_uniform(700, 9, 11);
    engine_opts o;
    engine_opts_default(&o);
    const size_t bounds[] = {0, 900};
    for (int b = 0; b < 2; b++) {
        cmp_spec s = spec_for(&engine_cpu_fp16, &engine_cpu, &ds, 0.45, &o);
        s.block_pairs = bounds[b];
        static cmp_result one_a, one_b, ra, rb;
        CHECK_EQ_INT(cmp_run(&s, &one_a), 0);
        s.a = &engine_cpu_bf16;
        CHECK_EQ_INT(cmp_run(&s, &one_b), 0);
        s.a = &engine_cpu_fp16;
        CHECK_EQ_INT(cmp_run2(&s, &engine_cpu_bf16, NULL, &ra, &rb), 0);
        const cmp_result *want[2] = {&one_a, &one_b}, *got[2] = {&ra, &rb};
        for (int k = 0; k < 2; k++) {
            const cmp_side *w = &want[k]->side, *g = &got[k]->side;
            CHECK(strcmp(g->engine, w->engine) == 0 && g->judged);
            CHECK(g->both == w->both && g->only_engine == w->only_engine &&
                  g->only_ref == w->only_ref);
            CHECK(g->overlap == w->overlap && g->err_mean == w->err_mean &&
                  g->err_std == w->err_std && g->err_min == w->err_min && g->err_max == w->err_max);
            CHECK(g->only_engine_rel_max == w->only_engine_rel_max &&
                  g->only_ref_rel_max == w->only_ref_rel_max);
            CHECK_EQ_INT(g->nbins, w->nbins);
            for (size_t i = 0; i < g->nbins; i++)
                CHECK(g->bin_count[i] == w->bin_count[i] && g->bin_lo[i] == w->bin_lo[i]);
            CHECK_EQ_INT(got[k]->run_a.pairs, want[k]->run_a.pairs);
            CHECK_EQ_INT(got[k]->run_b.pairs, one_a.run_b.pairs);
        }
        /* The two formats differ here, so the check compares something. */
        CHECK(ra.side.both != rb.side.both || ra.side.err_std != rb.side.err_std);
        if (bounds[b])
            CHECK(ra.blocks > 1);
    }
    free(ds.v);
}
