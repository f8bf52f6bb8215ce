/* The precision lab (src/lab.c) on generated data, each row checked against
 * an independent computation: the FP64 direct-form pair set by brute force
 * here, and each format's own pair set from its CPU emulation in PAIRS mode
 * collected whole (the lab's comparer never holds it whole); the reference
 * runs once; a refusal keeps the lab going; the choice of the fastest
 * format at or over min-overlap, and the closest when none is; the picking
 * of rows; the transforms' text; and through the command, the lab stored,
 * shown, exported and drawn as it was printed. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cmd.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "json_mini.h"
#include "lab.h"
#include "lab_out.h"
#include "out.h"
#include "session.h"
#include "session_capture.h"
#include "settings.h"
#include "store.h"
#include "view.h"

extern const engine engine_cpu;

/* ---- pair sets ---- */

typedef struct tpair {
    uint32_t i, j;
    double d2;
} tpair;

typedef struct pset {
    tpair *p;
    size_t n, cap;
    size_t *off; /* rows+1 offsets once sorted */
} pset;

static void pset_add(pset *s, uint32_t i, uint32_t j, double d2)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4096;
        s->p = realloc(s->p, s->cap * sizeof *s->p);
    }
    s->p[s->n++] = (tpair){i, j, d2};
}

static int by_ij(const void *a, const void *b)
{
    const tpair *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

static void pset_finish(pset *s, size_t rows)
{
    qsort(s->p, s->n, sizeof *s->p, by_ij);
    s->off = calloc(rows + 1, sizeof *s->off);
    for (size_t k = 0; k < s->n; k++)
        s->off[s->p[k].i + 1]++;
    for (size_t r = 0; r < rows; r++)
        s->off[r + 1] += s->off[r];
}

static void pset_free(pset *s)
{
    free(s->p);
    free(s->off);
    memset(s, 0, sizeof *s);
}

static int sink_put(void *ctx, const pair_batch *b)
{
    for (size_t k = 0; k < b->k; k++)
        pset_add(ctx, b->i[k], b->j[k], b->d2[k]);
    return 0;
}

/* An engine's whole pair set, as it reports it. */
static int engine_pairs(const engine *e, const dataset *ds, double eps, pset *out)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.int8_scale = 1; /* as the lab runs it: int8 quantizes the reals */
    join_spec js;
    memset(&js, 0, sizeof js);
    js.ds = ds;
    js.eps = eps;
    js.q0 = 0;
    js.q1 = ds->n;
    js.mode = JOIN_PAIRS;
    js.opts = &o;
    js.sink.put = sink_put;
    js.sink.ctx = out;
    join_result res;
    int rc = engine_run(e, &js, &res);
    pset_finish(out, ds->n);
    return rc;
}

/* The truth: every ordered pair with sum_k (a_k - b_k)^2 <= eps^2 in FP64. */
static void brute_pairs(const dataset *ds, double eps, pset *out)
{
    for (size_t i = 0; i < ds->n; i++)
        for (size_t j = 0; j < ds->n; j++) {
            double s = 0;
            for (size_t k = 0; k < ds->d; k++) {
                double u = ((double *)ds->v)[i * ds->d + k] - ((double *)ds->v)[j * ds->d + k];
                s += u * u;
            }
            if (s <= eps * eps)
                pset_add(out, (uint32_t)i, (uint32_t)j, s);
        }
    pset_finish(out, ds->n);
}

/* Eq. 3 and the rest, from the two whole sets. */
typedef struct judged {
    double overlap, err_mean, err_std, err_min, err_max;
    uint64_t both, only_a, only_b;
} judged;

static judged judge(const pset *a, const pset *b, size_t n)
{
    judged r = {0};
    double score = 0, sum = 0, sum2 = 0;
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        size_t x = a->off[i], xe = a->off[i + 1], y = b->off[i], ye = b->off[i + 1];
        size_t inter = 0, uni = 0;
        while (x < xe || y < ye) {
            uni++;
            if (y == ye || (x < xe && a->p[x].j < b->p[y].j)) {
                r.only_a++, x++;
            } else if (x == xe || b->p[y].j < a->p[x].j) {
                r.only_b++, y++;
            } else {
                double e = sqrt(a->p[x].d2) - sqrt(b->p[y].d2);
                sum += e, sum2 += e * e;
                if (first || e < r.err_min)
                    r.err_min = e;
                if (first || e > r.err_max)
                    r.err_max = e;
                first = 0;
                inter++, x++, y++;
            }
        }
        r.both += inter;
        score += uni ? (double)inter / (double)uni : 1.0;
    }
    r.overlap = score / (double)n;
    if (r.both) {
        r.err_mean = sum / (double)r.both;
        double var = sum2 / (double)r.both - r.err_mean * r.err_mean;
        r.err_std = sqrt(var > 0 ? var : 0);
    }
    return r;
}

/* ---- a reference that counts its COUNT runs and records its pair runs ---- */

static int ref_counts;
/* The rows of each PAIRS run of the reference that completed (a run whose
 * block overflowed the comparer's buffer fails and is redone smaller). */
static size_t ref_pair_q0[4096], ref_pair_q1[4096];
static int ref_pair_runs;

static int counting_run(const join_spec *s, join_result *res)
{
    if (s->mode == JOIN_COUNT)
        ref_counts++;
    int rc = engine_cpu.run(s, res);
    if (s->mode == JOIN_PAIRS && rc == 0 && ref_pair_runs < 4096) {
        ref_pair_q0[ref_pair_runs] = s->q0;
        ref_pair_q1[ref_pair_runs++] = s->q1;
    }
    return rc;
}

static engine counting_ref(void)
{
    engine e = engine_cpu;
    e.name = "cpu";
    e.run = counting_run;
    return e;
}

/* ---- callbacks ---- */

typedef struct seen {
    int refs, runs, rows, order_ok, runs_ok, rows_ok;
} seen;

static int t_on_ref(void *ctx, lab_result *r, const join_result *res)
{
    seen *s = ctx;
    s->refs++;
    s->order_ok = s->rows == 0 && s->runs == 0 && res->pairs == r->ref_pairs;
    return 0;
}

/* Each run comes as it finishes, before its row is final: ok runs with
 * code 0, a refusal with its error. */
static int t_on_run(void *ctx, lab_result *r, lab_row *row, const engine *e, const join_result *run,
                    int run_rc)
{
    seen *s = ctx;
    s->runs++;
    s->runs_ok += run && (row->status == LAB_OK) == (run_rc == 0) && row->run_id == 0 &&
                  strcmp(e->name, row->engine) == 0;
    row->run_id = 100 + (int)(row - r->row) + 1;
    return 0;
}

/* ok rows come with their comparison, other rows without one. */
static int t_on_row(void *ctx, lab_result *r, lab_row *row, const engine *e, const cmp_result *cmp)
{
    seen *s = ctx;
    s->rows++;
    int ok = row->status == LAB_OK ? cmp && cmp->side.judged && row->run_id > 100 : !cmp;
    s->rows_ok += ok && strcmp(e->name, row->engine) == 0;
    return 0;
}

static void gen(dataset *ds, size_t n, size_t d, unsigned seed)
{
    gen_opts g;
    gen_opts_init(&g);
    char v[32];
    snprintf(v, sizeof v, "%zu", n);
    gen_opts_set(&g, "n", v);
    snprintf(v, sizeof v, "%zu", d);
    gen_opts_set(&g, "d", v);
    snprintf(v, sizeof v, "%u", seed);
    gen_opts_set(&g, "seed", v);
    gen_opts_set(&g, "dtype", "f64"); /* the tests change values in place */
    memset(ds, 0, sizeof *ds);
    dataset_generate(&g, ds);
}

TEST(rows_match_independent_pair_sets)
{
    dataset ds;
    gen(&ds, 600, 6, 5); /* uniform in [0, 1): every format can hold it */
    CHECK(ds.n == 600 && ds.d == 6);
    const double eps = 0.4;
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.int8_scale = 1; /* int8 quantizes the reals instead of refusing them */
    lab_pick rows[LAB_MAX_FORMATS];
    size_t nrows;
    CHECK_EQ_INT(lab_pick_rows(&o, NULL, 0, 1, rows, LAB_MAX_FORMATS, &nrows), 0);
    const char *names[LAB_MAX_FORMATS];
    CHECK_EQ_INT(nrows, lab_format_names(names, LAB_MAX_FORMATS));
    CHECK(nrows >= 5);

    engine ref = counting_ref();
    seen sn = {0};
    ref_counts = ref_pair_runs = 0;
    lab_spec ls = {.ds = &ds,
                   .eps = eps,
                   .opts = &o,
                   .ref = &ref,
                   .rows = rows,
                   .nrows = nrows,
                   .min_overlap = 0.999,
                   .block_pairs = 3000, /* several blocks of rows */
                   .on_ref = t_on_ref,
                   .on_run = t_on_run,
                   .on_row = t_on_row,
                   .ctx = &sn};
    lab_result *r = malloc(sizeof *r);
    CHECK_MSG(lab_run(&ls, r) == 0, "lab_run: %s", err_msg());
    /* The reference's timed run was made once for the whole lab. */
    CHECK_EQ_INT(ref_counts, 1);
    CHECK(sn.refs == 1 && sn.order_ok);
    CHECK_EQ_INT(sn.runs, (int)nrows);
    CHECK_EQ_INT(sn.runs_ok, (int)nrows);
    CHECK_EQ_INT(sn.rows, (int)nrows);
    CHECK_EQ_INT(sn.rows_ok, (int)nrows);
    CHECK_EQ_INT(r->nrow, (int)nrows);
    /* The reference's pairs were made once for all the formats: its
     * completed PAIRS runs cover every row exactly once, in order, in
     * several blocks (the bound is small). */
    CHECK(ref_pair_runs > 1);
    for (int k = 0; k < ref_pair_runs; k++)
        CHECK(ref_pair_q0[k] == (k ? ref_pair_q1[k - 1] : 0) && ref_pair_q1[k] > ref_pair_q0[k]);
    CHECK_EQ_INT(ref_pair_q1[ref_pair_runs - 1], ds.n);

    pset truth = {0};
    brute_pairs(&ds, eps, &truth);
    CHECK_EQ_INT(r->ref_pairs, truth.n);
    for (int k = 0; k < r->nrow; k++) {
        const lab_row *w = &r->row[k];
        const engine *e = rows[k].e;
        CHECK_MSG(w->status == LAB_OK, "%s: %s", w->format, w->reason);
        CHECK(!e->gpu && strcmp(w->format, e->lab) == 0 && strcmp(w->format, names[k]) == 0);
        CHECK(strcmp(w->engine, e->name) == 0 && w->bits == e->lab_bits);
        CHECK_EQ_INT(w->run_id, 101 + k);
        pset fp = {0};
        CHECK_EQ_INT(engine_pairs(e, &ds, eps, &fp), 0);
        judged j = judge(&fp, &truth, ds.n);
        CHECK_EQ_INT(w->pairs, fp.n);
        CHECK_EQ_INT(w->side.both, j.both);
        CHECK_MSG(w->side.only_engine == j.only_a && w->side.only_ref == j.only_b,
                  "%s: only %llu/%llu, independent %llu/%llu", w->format,
                  (unsigned long long)w->side.only_engine, (unsigned long long)w->side.only_ref,
                  (unsigned long long)j.only_a, (unsigned long long)j.only_b);
        CHECK_NEAR(w->side.overlap, j.overlap, 1e-12);
        /* The errors: the engine's d2 against FP64 (summation order aside). */
        CHECK_NEAR(w->side.err_mean, j.err_mean, 1e-12);
        CHECK_NEAR(w->side.err_std, j.err_std, 1e-9);
        CHECK_NEAR(w->side.err_min, j.err_min, 1e-12);
        CHECK_NEAR(w->side.err_max, j.err_max, 1e-12);
        CHECK_NEAR(w->err_mean_rel, j.err_mean / eps, 1e-12);
        CHECK_NEAR(w->err_max_rel, fmax(fabs(j.err_min), fabs(j.err_max)) / eps, 1e-12);
        CHECK(w->kernel_s > 0 && isfinite(w->tflops) && w->tflops > 0);
        pset_free(&fp);
    }
    /* The 8-bit formats lose pairs here, so the rows differ: the test
     * compares something. */
    CHECK(r->row[r->nrow - 1].side.overlap < 1);
    /* The baseline's speed against itself is 1; every ok row has one. */
    CHECK(r->baseline_row >= 0 && r->row[r->baseline_row].speedup == 1);
    pset_free(&truth);
    free(r);
    dataset_free(&ds);
}

TEST(refusal_keeps_the_lab_going)
{
    dataset ds;
    gen(&ds, 300, 4, 7);
    /* Negative values, which the unsigned formats hold no sign for. */
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] -= 0.5;
    ds.hash = dataset_hash(&ds); /* the emulations cache by content */
    engine_opts o;
    engine_opts_default(&o);
    const char *want[] = {"ue5m3", "fp16"};
    lab_pick picked[LAB_MAX_FORMATS], rows[2];
    size_t n;
    CHECK_EQ_INT(lab_pick_rows(&o, want, 2, 1, picked, LAB_MAX_FORMATS, &n), 0);
    CHECK_EQ_INT(n, 2);
    /* Table order (fp16 first); put the refusal first by hand. */
    CHECK(strcmp(picked[0].e->lab, "fp16") == 0 && strcmp(picked[1].e->lab, "ue5m3") == 0);
    rows[0] = picked[1];
    rows[1] = picked[0];
    seen sn = {0};
    lab_spec ls = {.ds = &ds,
                   .eps = 0.3,
                   .opts = &o,
                   .ref = &engine_cpu,
                   .rows = rows,
                   .nrows = 2,
                   .min_overlap = 0,
                   .on_ref = t_on_ref,
                   .on_run = t_on_run,
                   .on_row = t_on_row,
                   .ctx = &sn};
    lab_result *r = malloc(sizeof *r);
    CHECK_MSG(lab_run(&ls, r) == 0, "lab_run: %s", err_msg());
    CHECK_EQ_INT(r->nrow, 2);
    CHECK_EQ_INT(sn.runs_ok, 2);
    CHECK_EQ_INT(sn.rows_ok, 2);
    CHECK(r->row[0].status == LAB_REFUSED);
    CHECK_STR_CONTAINS(r->row[0].reason, "negative value");
    CHECK_STR_CONTAINS(r->row[0].reason, rows[0].e->name);
    CHECK(strchr(r->row[0].reason, '\n') == NULL);
    CHECK(isnan(r->row[0].tflops) && isnan(r->row[0].speedup));
    /* The lab went on: fp16 ran and was judged, and the refusal is not
     * left as the lab's error. */
    CHECK(r->row[1].status == LAB_OK && r->row[1].side.judged);
    CHECK_EQ_INT(r->chosen, 1);
    CHECK(err_msg()[0] == '\0');
    pset truth = {0}, fp = {0};
    brute_pairs(&ds, 0.3, &truth);
    CHECK_EQ_INT(engine_pairs(rows[1].e, &ds, 0.3, &fp), 0);
    judged j = judge(&fp, &truth, ds.n);
    CHECK_NEAR(r->row[1].side.overlap, j.overlap, 1e-12);
    CHECK(r->row[1].side.only_engine == j.only_a && r->row[1].side.only_ref == j.only_b);
    char s[512];
    lab_sentence(r, s, sizeof s);
    CHECK_STR_CONTAINS(s, "is fp16");
    pset_free(&truth);
    pset_free(&fp);
    free(r);
    dataset_free(&ds);
}

/* Two formats that both pass: the two are timed LAB_REPEATS times each
 * before one is named. Overlapping ranges of kernel times are within
 * noise and name the earlier row (so the verdict does not follow the
 * noise of a loaded machine); apart, the faster. Checked against the
 * ranges lab_result reports, and each first timing lies in its range. */
TEST(two_passing_formats_are_timed_again)
{
    dataset ds;
    gen(&ds, 400, 4, 3);
    engine_opts o;
    engine_opts_default(&o);
    const char *want[] = {"fp16", "bf16"};
    lab_pick rows[LAB_MAX_FORMATS];
    size_t n;
    CHECK_EQ_INT(lab_pick_rows(&o, want, 2, 1, rows, LAB_MAX_FORMATS, &n), 0);
    CHECK_EQ_INT(n, 2);
    seen sn = {0};
    lab_spec ls = {.ds = &ds,
                   .eps = 0.3,
                   .opts = &o,
                   .ref = &engine_cpu,
                   .rows = rows,
                   .nrows = 2,
                   .min_overlap = 0,
                   .on_ref = t_on_ref,
                   .on_run = t_on_run,
                   .on_row = t_on_row,
                   .ctx = &sn};
    lab_result *r = malloc(sizeof *r);
    CHECK_MSG(lab_run(&ls, r) == 0, "lab_run: %s", err_msg());
    CHECK_EQ_INT(sn.runs_ok, 2); /* the repeats are timings, not stored runs */
    CHECK_EQ_INT(r->repeats, LAB_REPEATS);
    CHECK(r->chosen >= 0 && r->runner_up >= 0 && r->chosen != r->runner_up);
    for (int j = 0; j < 2; j++) {
        const lab_row *w = &r->row[j ? r->runner_up : r->chosen];
        CHECK(r->rep_lo[j] > 0 && r->rep_lo[j] <= r->rep_hi[j]);
        CHECK(w->kernel_s >= r->rep_lo[j] && w->kernel_s <= r->rep_hi[j]);
    }
    int overlap = r->rep_lo[0] <= r->rep_hi[1] && r->rep_lo[1] <= r->rep_hi[0];
    CHECK_EQ_INT(r->within_noise, overlap);
    if (overlap)
        CHECK_EQ_INT(r->chosen, 0); /* the earlier row */
    else
        CHECK(r->rep_hi[0] < r->rep_lo[1]); /* the chosen is faster in every run */
    free(r);
    dataset_free(&ds);
}

/* A lab_result made by hand: rows with a status, an overlap and a time. */
static void fake_row(lab_result *r, const char *fmt, lab_status st, double overlap, double kernel)
{
    lab_row *w = &r->row[r->nrow++];
    lab_row_init(w);
    snprintf(w->format, sizeof w->format, "%s", fmt);
    snprintf(w->engine, sizeof w->engine, "cpu-%s", fmt);
    w->status = st;
    w->side.judged = st == LAB_OK;
    w->side.overlap = overlap;
    w->kernel_s = kernel;
    w->d_padded = 8;
    if (st != LAB_OK)
        snprintf(w->reason, sizeof w->reason, "cpu-%s: no", fmt);
}

TEST(choose_fastest_at_or_over_min_overlap)
{
    lab_result *r = calloc(1, sizeof *r);
    r->n = 1000, r->d = 8, r->eps = 1;
    snprintf(r->baseline, sizeof r->baseline, "a");
    fake_row(r, "a", LAB_OK, 0.99995, 2.0);
    fake_row(r, "b", LAB_OK, 0.9999, 1.0); /* exactly min-overlap: it counts */
    fake_row(r, "c", LAB_OK, 0.999, 0.5);  /* fastest, but short of it */
    fake_row(r, "d", LAB_REFUSED, NAN, 0.1);
    fake_row(r, "e", LAB_OK, 0.99999, 1.0); /* as fast as b, later: b wins */
    r->min_overlap = 0.9999;
    lab_derive(r);
    lab_choose(r);
    CHECK_EQ_INT(r->chosen, 1);
    CHECK_EQ_INT(r->baseline_row, 0);
    CHECK_NEAR(r->row[1].speedup, 2.0, 0);
    CHECK_NEAR(r->row[2].speedup, 4.0, 0);
    CHECK(isnan(r->row[3].speedup));
    /* TFLOPS: the FASTED paper's count, 2 n n d_padded / kernel time. */
    CHECK_NEAR(r->row[1].tflops, 2.0 * 1000 * 1000 * 8 / 1.0 / 1e12, 1e-18);
    char s[512];
    lab_sentence(r, s, sizeof s);
    CHECK_STR_CONTAINS(s, "overlap >= 0.9999 is b (cpu-b)");
    CHECK_STR_CONTAINS(s, "2.00x a's speed");
    /* Higher than any: none qualifies, the closest is named (ties: the
     * earlier row). */
    r->min_overlap = 0.999999;
    lab_choose(r);
    CHECK_EQ_INT(r->chosen, -1);
    CHECK_EQ_INT(r->closest, 4);
    lab_sentence(r, s, sizeof s);
    CHECK_STR_CONTAINS(s, "No format reaches overlap >= 0.999999; the closest is e (cpu-e)");
    /* The baseline refused: no speeds. */
    r->row[0].status = LAB_REFUSED;
    lab_derive(r);
    CHECK(r->baseline_row == -1 && isnan(r->row[1].speedup));
    /* Nothing ran. */
    for (int k = 0; k < r->nrow; k++)
        r->row[k].status = LAB_FAILED;
    lab_choose(r);
    CHECK(r->chosen == -1 && r->closest == -1);
    lab_sentence(r, s, sizeof s);
    CHECK_STR_CONTAINS(s, "No format ran");
    free(r);
}

TEST(pick_rows_by_the_table)
{
    engine_opts o;
    engine_opts_default(&o);
    const char *names[LAB_MAX_FORMATS];
    size_t nf = lab_format_names(names, LAB_MAX_FORMATS);
    /* Each .lab of the table once, in the order it first appears. */
    size_t k = 0;
    for (const engine *const *e = engine_table; *e; e++) {
        if (!(*e)->lab)
            continue;
        int seen_before = 0;
        for (const engine *const *f = engine_table; f != e; f++)
            seen_before |= (*f)->lab && strcmp((*f)->lab, (*e)->lab) == 0;
        if (!seen_before)
            CHECK(k < nf && strcmp(names[k++], (*e)->lab) == 0);
    }
    CHECK_EQ_INT(k, nf);

    lab_pick p[LAB_MAX_FORMATS];
    size_t n;
    for (int cpu_only = 0; cpu_only < 2; cpu_only++) {
        CHECK_EQ_INT(lab_pick_rows(&o, NULL, 0, cpu_only, p, LAB_MAX_FORMATS, &n), 0);
        CHECK_EQ_INT(n, nf);
        for (size_t i = 0; i < n; i++) {
            CHECK(strcmp(p[i].e->lab, names[i]) == 0);
            if (p[i].avail_rc)
                continue;
            if (cpu_only || !p[i].e->gpu)
                CHECK(!p[i].e->gpu);
            if (p[i].e->gpu)
                CHECK(engine_available(p[i].e, &o) == 0);
            /* A CPU row without cpu: no GPU row of the format could run. */
            if (!cpu_only && !p[i].e->gpu)
                for (const engine *const *e = engine_table; *e; e++)
                    if ((*e)->gpu && (*e)->lab && strcmp((*e)->lab, names[i]) == 0)
                        CHECK(engine_available(*e, &o) != 0);
        }
    }
    err_clear();
    /* A restriction keeps the table's order and each format once. */
    const char *want[] = {names[nf - 1], names[0], names[nf - 1]};
    CHECK_EQ_INT(lab_pick_rows(&o, want, 3, 1, p, LAB_MAX_FORMATS, &n), 0);
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(p[0].e->lab, names[0]) == 0 && strcmp(p[1].e->lab, names[nf - 1]) == 0);
    /* An unknown name: one line naming it and every format. */
    const char *bad[] = {names[0], "fp17"};
    CHECK_EQ_INT(lab_pick_rows(&o, bad, 2, 0, p, LAB_MAX_FORMATS, &n), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "unknown format 'fp17'");
    for (size_t i = 0; i < nf; i++)
        CHECK_STR_CONTAINS(err_msg(), names[i]);
    CHECK(strchr(err_msg(), '\n') == NULL);

    /* The reference of a CPU lab is an exact CPU engine; the baseline is
     * the format of the default engine of highest rank among the rows. */
    const engine *ref = lab_reference(&o, 1);
    CHECK(ref && !ref->gpu && ref->exact);
    const char *base = lab_baseline_format();
    CHECK(base != NULL);
    for (const engine *const *e = engine_table; *e; e++)
        if ((*e)->lab && strcmp((*e)->lab, base) != 0)
            for (const engine *const *b = engine_table; *b; b++)
                if ((*b)->lab && strcmp((*b)->lab, base) == 0)
                    CHECK((*e)->rank[ENGINE_ROLE_DEFAULT] <= (*b)->rank[ENGINE_ROLE_DEFAULT] ||
                          (*e)->rank[ENGINE_ROLE_DEFAULT] == 0);
}

TEST(transforms_as_shown)
{
    lab_row w;
    char b[128];
    lab_row_init(&w);
    lab_transforms(&w, b, sizeof b);
    CHECK(strcmp(b, "-") == 0);
    lab_row_set_metric(&w, "centred", 0);
    lab_row_set_metric(&w, "threads", 4); /* not a transform */
    lab_transforms(&w, b, sizeof b);
    CHECK(strcmp(b, "-") == 0);
    lab_row_set_metric(&w, "centred", 1);
    lab_row_set_metric(&w, "scale_log2", -3);
    lab_transforms(&w, b, sizeof b);
    CHECK(strcmp(b, "centred, 2^-3") == 0);
    join_result res;
    memset(&res, 0, sizeof res);
    join_result_metric(&res, "shifted", 1, "");
    join_result_metric(&res, "underflow_values", 12, "");
    join_result_metric(&res, "inexact", 40, "");
    join_result_metric(&res, "scale_log2", 0, ""); /* a scale of 1 is no scale */
    lab_row_metrics(&w, &res);
    lab_transforms(&w, b, sizeof b);
    CHECK(strcmp(b, "centred, shifted, underflow 12, inexact 40") == 0);
}

/* The line's output, the caller's to free. */
static char *capture(session *s, const char *line, int json)
{
    return strdup(exec_capture_as(s, line, json));
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Remove a line starting with what, from text; 1 when there was one. */
static int drop_line(char *text, const char *what)
{
    char *tl = strstr(text, what);
    if (!tl)
        return 0;
    char *end = strchr(tl, '\n');
    end = end ? end + 1 : tl + strlen(tl);
    memmove(tl, end, strlen(end) + 1);
    return 1;
}

/* Remove the live lab's lines that are not stored, so show lab has none:
 * where its time went (1 when there was one), and the reused reference,
 * the reused formats and the repeated timings, where there are. */
static int drop_time_line(char *text)
{
    drop_line(text, "reference: run ");
    drop_line(text, "formats: ");
    drop_line(text, "{\"type\":\"reference_reused\"");
    drop_line(text, "  timing: ");
    char *tl = strstr(text, "  (time ");
    if (!tl)
        return 0;
    char *end = strchr(tl, '\n');
    end = end ? end + 1 : tl + strlen(tl);
    memmove(tl, end, strlen(end) + 1);
    return 1;
}

TEST(command_stores_shows_exports_and_draws)
{
    char path[1100], js[1100], csv[1100], cmd_line[2400];
    snprintf(path, sizeof path, "%s/lab.db", t_tmpdir());
    snprintf(js, sizeof js, "%s/lab.json", t_tmpdir());
    snprintf(csv, sizeof csv, "%s/lab.csv", t_tmpdir());
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    free(capture(&s, "gen uniform n=400 d=4 seed=2; eps 0.2; set int8-scale on", 0));
    char *text = capture(&s, "precisions cpu min-overlap=0.999", 0);
    CHECK_MSG(!s.failed, "precisions failed: %s", text);
    CHECK_STR_CONTAINS(text, "lab 1: ");
    char *shown = capture(&s, "show lab 1", 0);
    /* The live lab ends with where its time went, which is not stored. */
    CHECK(drop_time_line(text));
    /* The stored lab reads as the live one, but for the times: compare
     * the lines up to the kernel column. */
    CHECK(strlen(text) == strlen(shown));
    for (char *a = text, *b = shown; *a; a++, b++)
        if (*a != *b) {
            /* a digit of a time, TFLOPS or speed: the same width either way */
            CHECK_MSG((*a >= '0' && *a <= '9') || *a == '.',
                      "show lab differs from precisions at '%.40s'", a);
        }
    char *live = capture(&s, "precisions cpu min-overlap=0.999", 1);
    char *again = capture(&s, "show lab 2", 1);
    CHECK(drop_time_line(live));
    CHECK_MSG(strcmp(live, again) == 0, "live:\n%s\nshown:\n%s", live, again);

    /* The log: one lab, its rows, runs and comparisons. */
    lab_result *r = malloc(sizeof *r);
    CHECK_EQ_INT(store_lab_get(s.db, 2, r), 0);
    int ok = 0;
    for (int k = 0; k < r->nrow; k++)
        ok += r->row[k].status == LAB_OK;
    CHECK(r->nrow >= 5 && ok == r->nrow);
    CHECK(strcmp(r->ref_engine, "cpu") == 0 && r->ref_run_id > 0);
    lab_result *none = malloc(sizeof *none);
    CHECK_EQ_INT(store_lab_get(s.db, 9, none), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no lab 9");
    free(none);

    /* Exports: JSON one object with a formats array, CSV a line per row. */
    snprintf(cmd_line, sizeof cmd_line, "export lab 2 json %s; export lab 2 csv %s", js, csv);
    free(capture(&s, cmd_line, 0));
    CHECK(!s.failed);
    char *t = slurp(js);
    CHECK(t != NULL);
    json *j = json_parse(t);
    CHECK(j != NULL);
    CHECK_EQ_INT(json_len(json_get(j, "formats")), r->nrow);
    CHECK_NEAR(json_num(j, "lab_id"), 2, 0);
    CHECK_NEAR(json_num(json_at(json_get(j, "formats"), 0), "run_id"), r->row[0].run_id, 0);
    json_free(j);
    t = slurp(csv);
    CHECK(t != NULL);
    int lines = 0;
    for (char *p = t; *p; p++)
        lines += *p == '\n';
    CHECK_EQ_INT(lines, r->nrow + 1);
    CHECK(strncmp(t, "lab_id,dataset,", 15) == 0);

    /* The panel's view: one point per format, the choice of the lab. */
    ui_view *v = malloc(sizeof *v);
    ui_view_init(v);
    for (char *line = live; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = 0;
        ui_view_record(v, line);
        line = nl ? nl + 1 : NULL;
    }
    CHECK(v->lab_done && v->nlab == r->nrow && v->lab_id == 2);
    CHECK(strcmp(v->lab[0].format, r->row[0].format) == 0);
    CHECK_NEAR(v->lab[0].overlap, r->row[0].side.overlap, 0);
    CHECK(strcmp(v->lab_chosen, r->chosen >= 0 ? r->row[r->chosen].format : "") == 0);
    ui_view_free(v);
    free(v);
    free(r);
    free(text);
    free(shown);
    free(live);
    free(again);
    store_close(s.db);
    dataset_free(&s.ds);
}

static int real_cb(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    (void)names;
    if (ncol == 1 && values[0])
        *(double *)ctx = strtod(values[0], NULL);
    return 0;
}

/* A format's run that `run` (or compare) just made stands for its timed
 * run in the lab, as the reference's does: the lab's rows point at the
 * stored runs (no new run is made for them), show their transforms (read
 * back from the run's counters) and their kernel times, and a formats:
 * line names them. fresh times every format again, and the fresh rows
 * agree with the reused ones on pairs, overlap and transforms (computed
 * anew); a format that never ran is timed either way. */
TEST(formats_reuse_their_stored_runs)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/reuse-lab.db", t_tmpdir());
    remove(path);
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    CHECK_EQ_INT(store_open(path, &s.db), 0);
    free(capture(&s, "gen uniform n=400 d=4 seed=2; eps 0.2; run cpu-fp16; run cpu-fp8-e4m3", 0));
    CHECK(!s.failed);
    double k2 = NAN; /* run 2's kernel time, as stored */
    const int64_t two = 2;
    CHECK_EQ_INT(
        store_query(s.db, "SELECT kernel_seconds FROM runs WHERE id = ?1", &two, 1, real_cb, &k2),
        0);
    CHECK(k2 > 0);
    char *text = capture(&s, "precisions cpu fp16 fp8-e4m3 bf16", 0);
    CHECK_MSG(!s.failed, "precisions failed: %s", text);
    CHECK_STR_CONTAINS(text, "formats: fp16 run 1, fp8-e4m3 run 2 reused");
    free(text);
    text = capture(&s, "precisions cpu fp16 fp8-e4m3 bf16 fresh", 0);
    CHECK_MSG(!s.failed, "precisions fresh failed: %s", text);
    CHECK(!strstr(text, "reused"));
    free(text);
    lab_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    CHECK_EQ_INT(store_lab_get(s.db, 1, a), 0);
    CHECK_EQ_INT(store_lab_get(s.db, 2, b), 0);
    CHECK(a->nrow == 3 && b->nrow == 3);
    CHECK_EQ_INT(a->row[0].run_id, 1);
    CHECK_EQ_INT(a->row[2].run_id, 2); /* table order: fp16, bf16, fp8-e4m3 */
    CHECK(strcmp(a->row[2].format, "fp8-e4m3") == 0);
    CHECK_NEAR(a->row[2].kernel_s, k2, 0);
    /* bf16 never ran: timed here, a run of the lab's own */
    CHECK(a->row[1].run_id > 2 && a->row[1].run_id != a->ref_run_id);
    for (int k = 0; k < 3; k++) {
        const lab_row *x = &a->row[k], *y = &b->row[k];
        CHECK(y->run_id > 2 && y->run_id != x->run_id);
        CHECK_EQ_INT(x->pairs, y->pairs);
        CHECK_NEAR(x->side.overlap, y->side.overlap, 0);
        char tx[96], ty[96];
        lab_transforms(x, tx, sizeof tx);
        lab_transforms(y, ty, sizeof ty);
        CHECK_MSG(strcmp(tx, ty) == 0, "%s: reused '%s', fresh '%s'", x->format, tx, ty);
    }
    /* the FP8 row scales (uniform [0, 1) data, centred): the reused row
     * shows it, so the counters came back */
    CHECK(isfinite(a->row[2].scale_log2) && a->row[2].scale_log2 != 0);
    free(a);
    free(b);
    store_close(s.db);
    dataset_free(&s.ds);
}

/* The info record's fit of one format, read back. */
static const json *info_format(const json *j, const char *name)
{
    return json_get(json_get(j, "formats"), name);
}

/* The power of two that brings a largest |v| just under max, by hand. */
static int scale_for(double absmax, double max)
{
    int k = 0;
    while (ldexp(absmax, k + 1) <= max)
        k++;
    while (ldexp(absmax, k) > max)
        k--;
    return k;
}

/* `info` fits each format as its engine converts the values: an FP8 row
 * centres (set center's default is auto for it, and this data's norms
 * shrink when centred), so its scale is the centred values' one; `set
 * center off` gives the raw values' one; the unsigned formats refuse the
 * negative values unless `set shift on` moves each column by its minimum.
 * The expected numbers come from the data here. */
TEST(info_fits_as_the_engines_convert)
{
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    /* Columns far from 0 but the first, which holds negative values:
     * centring shrinks the norms, and the unsigned formats see a sign. */
    gen(&s.ds, 500, 16, 3);
    for (size_t i = 0; i < s.ds.n; i++)
        for (size_t k = 0; k < s.ds.d; k++)
            ((double *)s.ds.v)[i * s.ds.d + k] += k ? 4.0 : -0.5;
    s.ds.hash = dataset_hash(&s.ds);
    s.have_ds = 1;
    const size_t n = s.ds.n, d = s.ds.d;
    long double mean[16] = {0};
    double rawmax = 0, cmax = 0;
    uint64_t neg = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            mean[k] += ((double *)s.ds.v)[i * d + k];
    for (size_t k = 0; k < d; k++)
        mean[k] /= n;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            double v = ((double *)s.ds.v)[i * d + k];
            rawmax = fmax(rawmax, fabs(v));
            cmax = fmax(cmax, fabs(v - (double)mean[k]));
            neg += v < 0;
        }
    /* Auto centres when that shrinks the largest norm 2x or more: here by
     * far more (4x in the squared norm would do for either reading). */
    double rawn = 0, cn = 0;
    for (size_t i = 0; i < n; i++) {
        double a = 0, b = 0;
        for (size_t k = 0; k < d; k++) {
            double v = ((double *)s.ds.v)[i * d + k], w = v - (double)mean[k];
            a += v * v;
            b += w * w;
        }
        rawn = fmax(rawn, a);
        cn = fmax(cn, b);
    }
    CHECK(neg > 0 && cmax < rawmax && rawn > 4 * cn);
    const char *cases[] = {"info", "set center off; info",
                           "set center default; set shift on; info"};
    for (int c = 0; c < 3; c++) {
        char *t = capture(&s, cases[c], 1);
        char *rec = strstr(t, "{\"type\":\"info\"");
        CHECK(rec != NULL);
        if (!rec) {
            free(t);
            continue;
        }
        char *nl = strchr(rec, '\n');
        if (nl)
            *nl = 0;
        json *j = json_parse(rec);
        CHECK(j != NULL);
        const json *e4 = info_format(j, "fp8-e4m3"), *u5 = info_format(j, "ue5m3");
        const int centred = c != 1;
        CHECK_NEAR(json_num(e4, "centred"), centred, 0);
        CHECK_NEAR(json_num(e4, "scale"), scale_for(centred ? cmax : rawmax, 448.0), 0);
        CHECK_NEAR(json_num(u5, "shifted"), c == 2, 0);
        CHECK_NEAR(json_num(u5, "negative"), c == 2 ? 0 : (double)neg, 0);
        json_free(j);
        free(t);
    }
    free(capture(&s, "set shift off; set center default", 0));
    dataset_free(&s.ds);
}
