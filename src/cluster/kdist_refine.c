/* Exact k-distances from estimates (src/cluster/kdist_refine.h).
 *
 * Why not a doubling radius: in high dimensions the number of pairs within
 * r grows like r^d, so a join at twice the needed radius can hold most of
 * the n^2 pairs. The radius therefore starts at the estimates (a block's
 * 99th percentile, 1/128 above it) and grows by a margin that doubles each
 * round (1/128, 1/64, ... then fourfold steps), and only the rows still
 * unknown are joined again, in ranges of consecutive rows that are mostly
 * such rows. */
#include "kdist_refine.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "dataset_order.h"
#include "kdist_eps.h"
#include "kernels.h"
#include "mem.h"
#include "sort_f64.h"
#include "topk.h"

/* The first radius takes this quantile of a block's estimates (larger
 * blocks): the rows above it take a second, small join, rather than every
 * row of the block one at the largest estimate (an outlier's). */
#define KR_QUANTILE 0.99
#define KR_MARGIN0 (1.0 / 128)
#define KR_MAX_ROUNDS 64

typedef struct kr_rows {
    pthread_mutex_t mu;
    size_t b0;      /* the block's first row */
    int k;          /* values a row keeps */
    double *top;    /* a max-heap of k values a row */
    int *len;       /* values each heap holds */
    uint8_t *known; /* the row's k-distance is final */
    uint64_t pairs; /* streamed to the sink */
} kr_rows;

/* The engine's pairs: i is the query row (engine.h), j another row. */
static int kr_put(void *ctx, const pair_batch *b)
{
    kr_rows *r = ctx;
    pthread_mutex_lock(&r->mu);
    for (size_t t = 0; t < b->k; t++) {
        const size_t i = b->i[t] - r->b0;
        if (b->i[t] == b->j[t] || r->known[i])
            continue;
        double *h = r->top + i * (size_t)r->k;
        const double v = b->d2[t];
        if (r->len[i] < r->k)
            topk_push(h, r->len[i]++, v);
        else if (v < h[0])
            topk_replace_top(h, r->k, v);
    }
    r->pairs += b->k;
    pthread_mutex_unlock(&r->mu);
    return 0;
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int est_ok(const double *est, size_t i)
{
    return est && isfinite(est[i]) && est[i] >= 0;
}

/* The squared diameter of the data's bounding box, a little above: a join
 * at it holds every pair. */
static double kr_diameter2(const dataset *ds)
{
    const size_t d = ds->d;
    double *lo = xmalloc(3 * d * sizeof *lo), *hi = lo + d, *row = hi + d;
    for (size_t j = 0; j < d; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (size_t i = 0; i < ds->n; i++) {
        const double *x = dataset_row_f64(ds, i, row);
        for (size_t j = 0; j < d; j++) {
            lo[j] = x[j] < lo[j] ? x[j] : lo[j];
            hi[j] = x[j] > hi[j] ? x[j] : hi[j];
        }
    }
    double s = 0;
    for (size_t j = 0; j < d; j++)
        s += (hi[j] - lo[j]) * (hi[j] - lo[j]);
    free(lo);
    return s * (1 + 1e-9) + 1e-300;
}

typedef struct kr_run {
    const kdist_spec *s;
    const double *est;
    join_result *res;
    size_t rows_known; /* over all blocks, for progress */
    int joins, rounds;
    double diam2; /* 0: not yet computed */
    /* What a join costs this engine, from the joins so far: seconds a
     * query row (the largest join's) and seconds a join whatever its rows
     * (the least that a small join took beyond its rows; -1: none yet). */
    double row_s, join_s;
    /* The rows in ascending order of estimate (kr_by_estimate): the first
     * round joins ranges at their own estimates too, a range ends where
     * its squared radius would grow past `split` times its first row's
     * (2^(2/d): at most about twice its pairs) once it holds a 32nd of
     * its block (so a block takes some 32 joins, not one a row); in their
     * own order the first round takes the block's 99th percentile and a
     * range ends at a factor of 2 either way. */
    int sorted;
    double split;
    double step; /* the least margin after the first round: 2^(4/d) - 1 */
} kr_run;

/* Known rows a range of unknown ones may take in between: where a join
 * costs more than its rows (an exact run's set-up on the GPU outweighs the
 * work of thousands of query rows at 10^6 rows), two ranges are one join
 * over the known rows between them. Without the gaps one round at 10^6 x 128
 * makes some 4,500 joins of one or two rows each, enough to keep a
 * `dbscan curve` from ending in any useful time. */
static size_t kr_gap(const kr_run *k, size_t nb)
{
    const size_t least = 64;
    if (!(k->row_s > 0) || !(k->join_s > 0))
        return least;
    const double g = k->join_s / k->row_s;
    return g < (double)least ? least : g > (double)nb ? nb : (size_t)g;
}

static void kr_add_result(join_result *to, const join_result *jr, int first)
{
    if (first) {
        snprintf(to->device, sizeof to->device, "%s", jr->device);
        snprintf(to->variant, sizeof to->variant, "%.70s, refined", jr->variant);
        snprintf(to->precision, sizeof to->precision, "%s", jr->precision);
        to->d_padded = jr->d_padded;
    }
    to->kernel_seconds += jr->kernel_seconds;
    for (int p = 0; p < jr->nphase; p++)
        join_result_phase(to, jr->phase[p].name, jr->phase[p].seconds);
}

/* One PAIRS join of rows [q0, q1) at squared radius r2 into rows' heaps. */
static int kr_join(kr_run *k, kr_rows *rows, size_t q0, size_t q1, double r2)
{
    const kdist_spec *s = k->s;
    join_spec js;
    memset(&js, 0, sizeof js);
    js.ds = s->ds;
    js.eps = kdist_eps_for(r2);
    js.q0 = q0;
    js.q1 = q1;
    js.mode = JOIN_PAIRS;
    js.opts = s->opts;
    js.sink = (pair_sink){kr_put, rows};
    js.cancel = s->cancel;
    js.inner = 1;
    join_result jr;
    const double t0 = engine_now();
    int rc = engine_run(s->engine, &js, &jr);
    const double t = engine_now() - t0, nq = (double)(q1 - q0);
    if (rc == 0) {
        kr_add_result(k->res, &jr, k->joins == 0);
        if (nq >= 1024 && t / nq > k->row_s)
            k->row_s = t / nq;
        if (nq < 1024 && k->row_s > 0) {
            const double fixed = t - nq * k->row_s;
            if (fixed > 0 && (k->join_s < 0 || fixed < k->join_s))
                k->join_s = fixed;
        }
    }
    k->joins++;
    /* TCJOIN_TRACE=1: each join's rows, pairs and seconds on stderr
     * (benchmarks: where a refinement's time goes). */
    if (kern_trace_on()) {
        fprintf(stderr, "kdist refine join %d: rows %zu, pairs %llu, %.3f ms:", k->joins, q1 - q0,
                (unsigned long long)jr.pairs, t * 1e3);
        for (int p = 0; p < jr.nphase; p++)
            fprintf(stderr, " %s %.3f", jr.phase[p].name, jr.phase[p].seconds * 1e3);
        fprintf(stderr, "\n");
    }
    return rc;
}

/* Rows [b0, b1) of the spec: joins until every row is known. */
static int kr_block(kr_run *k, kr_rows *rows, size_t b0, size_t b1, double *scratch)
{
    const kdist_spec *s = k->s;
    const double *est = k->est;
    const size_t q0 = s->q0, nb = b1 - b0;
    const int kk = s->k;
    rows->b0 = b0;
    memset(rows->len, 0, nb * sizeof *rows->len);
    /* rows the engine's entry decided (s->known) are known already */
    size_t open = nb;
    if (s->known) {
        memcpy(rows->known, s->known + (b0 - q0), nb);
        for (size_t t = 0; t < nb; t++)
            open -= rows->known[t] != 0;
        if (open == 0)
            return 0;
    } else {
        memset(rows->known, 0, nb);
    }

    /* The first radius: the block's KR_QUANTILE estimate. */
    size_t m = 0;
    for (size_t i = b0; i < b1; i++)
        if (!rows->known[i - b0] && est_ok(est, i - q0))
            scratch[m++] = est[i - q0];
    double r2 = 0;
    if (m) {
        qsort(scratch, m, sizeof *scratch, cmp_dbl);
        size_t at = k->sorted ? 0 : m >= 100 ? (size_t)(KR_QUANTILE * (double)(m - 1)) : m - 1;
        r2 = scratch[at] * (1 + KR_MARGIN0);
    }
    double margin = KR_MARGIN0, r2_first = 0;
    size_t lo = b0, hi = b1; /* the unknown rows lie in [lo, hi) */
    for (int round = 0; lo < hi; round++, k->rounds++) {
        if (round >= KR_MAX_ROUNDS)
            return err_set(
                TCJ_EINVAL,
                "%s k-distance: rows %zu to %zu have fewer than %d other rows within the "
                "data's diameter (not finite?)",
                s->engine->name, lo, hi - 1, kk);
        if (!(r2 > 0)) {
            if (k->diam2 == 0)
                k->diam2 = kr_diameter2(s->ds);
            r2 = k->diam2 * 0x1p-20;
        }
        /* Ranges of consecutive unknown rows, a gap of known rows no longer
         * than the unknown rows gathered so far and what a join's own cost
         * buys (kr_gap), so that a range holds mostly rows still to be
         * found; each joined at the round's radius or its own rows'
         * largest estimate (grown as the round's), whichever is larger, and a row whose
         * estimate is more than twice the range's (or less than half)
         * starts a range of its own: the known rows of a range pay its
         * radius in pairs, which grow as its power d / 2. A range's
         * estimates grow as the round's radius does, so that every row's
         * radius grows from round to round: from the first round that
         * took the estimates (the first in sorted order, else the
         * second). */
        const int first = k->sorted ? 0 : 1;
        if (round == first)
            r2_first = r2;
        const double grow = round > first && r2_first > 0 ? r2 / r2_first : 1;
        size_t i = lo;
        int rc = 0;
        while (i < hi && rc == 0) {
            while (i < hi && rows->known[i - b0])
                i++;
            if (i >= hi)
                break;
            const size_t gap = kr_gap(k, b1 - b0);
            size_t start = i, last = i, want = 0;
            double top = 0; /* the range's largest estimate, a margin above */
            double low = 0; /* its first row's (sorted rows) */
            const size_t least = k->sorted ? (b1 - b0) / 32 : 0;
            for (; i < hi; i++) {
                if (rows->known[i - b0])
                    continue;
                if (i - last > want + gap)
                    break;
                const double e = (round > 0 || k->sorted) && est_ok(est, i - q0)
                                     ? est[i - q0] * (1 + KR_MARGIN0) * grow
                                     : 0;
                const double rr = top > r2 ? top : r2, er = e > r2 ? e : r2;
                if (!want)
                    low = er;
                if (k->sorted ? want >= least && er > k->split * low
                              : want && (er > 2 * rr || 2 * er < rr))
                    break;
                if (e > top)
                    top = e;
                last = i;
                want++;
            }
            i = last + 1;
            rc = kr_join(k, rows, start, last + 1, top > r2 ? top : r2);
        }
        if (rc)
            return rc;
        /* Rows with K others within their radius are final; the others
         * start over. */
        size_t nlo = hi, nhi = lo;
        for (size_t q = lo; q < hi; q++) {
            const size_t t = q - b0;
            if (rows->known[t])
                continue;
            if (rows->len[t] == kk) {
                rows->known[t] = 1;
                s->out[q - q0] = rows->top[t * (size_t)kk];
                k->rows_known++;
                continue;
            }
            rows->len[t] = 0;
            nlo = q < nlo ? q : nlo;
            nhi = q + 1;
        }
        lo = nlo;
        hi = nhi > nlo ? nhi : nlo;
        if (s->progress)
            s->progress(s->progress_ctx, (double)k->rows_known / (double)(s->q1 - q0));
        if (s->cancel && *s->cancel)
            return err_set(TCJ_ECANCEL, ERR_CANCELLED);
        /* The next round's radius: the last one a margin above (a range
         * takes its rows' largest estimate where that is larger); the
         * margin doubles (to fourfold steps) so a poor estimate costs a
         * few rounds, and is at least what grows a row's pairs about
         * fourfold (they grow as r^d: 2^(4/d) in r^2), so that in low
         * dimensions, where a low precision's estimates err by several
         * percent on near points, one more round suffices. */
        margin = fmin(3, fmax(2 * margin, k->step));
        r2 *= 1 + margin;
    }
    return 0;
}

static size_t kr_test_rows;

void kdist_refine_block_rows_for_tests(size_t rows)
{
    kr_test_rows = rows;
}

static int kr_rows_refine(const kdist_spec *s, const double *est, join_result *res, int sorted)
{
    const size_t nq = s->q1 - s->q0;
    const int kk = s->k;
    size_t block = kr_test_rows ? kr_test_rows : KDIST_REFINE_BLOCK_VALUES / (size_t)kk;
    if (block > nq)
        block = nq;
    if (block == 0)
        block = 1;
    kr_rows rows;
    memset(&rows, 0, sizeof rows);
    rows.k = kk;
    rows.top = mem_alloc(s->engine->name, "the k-distance's top-K lists", block * (size_t)kk,
                         sizeof *rows.top, 0);
    rows.len = mem_alloc(s->engine->name, "the k-distance's lists", block, sizeof *rows.len, 0);
    rows.known = mem_alloc(s->engine->name, "the k-distance's lists", block, 1, 0);
    double *scratch =
        mem_alloc(s->engine->name, "the k-distance's estimates", block, sizeof *scratch, 0);
    int rc = rows.top && rows.len && rows.known && scratch ? 0 : TCJ_ENOMEM;
    pthread_mutex_init(&rows.mu, NULL);
    size_t known0 = 0;
    for (size_t q = 0; s->known && q < nq; q++)
        known0 += s->known[q] != 0;
    kr_run k = {.s = s,
                .est = est,
                .res = res,
                .rows_known = known0,
                .join_s = -1,
                .sorted = sorted,
                .split = pow(2.0, 2.0 / (double)(s->ds->d ? s->ds->d : 1)),
                .step = pow(2.0, 4.0 / (double)(s->ds->d ? s->ds->d : 1)) - 1};
    for (size_t b0 = s->q0; b0 < s->q1 && rc == 0; b0 += block) {
        size_t b1 = b0 + block < s->q1 ? b0 + block : s->q1;
        rc = kr_block(&k, &rows, b0, b1, scratch);
    }
    pthread_mutex_destroy(&rows.mu);
    free(rows.top);
    free(rows.len);
    free(rows.known);
    free(scratch);
    join_result_metric(res, "refine_joins", k.joins, "");
    join_result_metric(res, "refine_rounds", k.rounds, "");
    join_result_metric(res, "refine_pairs", (double)rows.pairs, "");
    return rc;
}

/* Rows whose estimates the refinement sorts (below: the rows as given). */
#define KR_SORT_MIN 4096
static size_t kr_sort_min = KR_SORT_MIN;

void kdist_refine_sort_min_for_tests(size_t rows)
{
    kr_sort_min = rows ? rows : KR_SORT_MIN;
}

typedef struct kr_key {
    double e;
    size_t i;
} kr_key;

/* The query rows in ascending order of their estimates (rows without one
 * last), joined as a copy of the dataset in that order: the query rows
 * first, then every other row, each row once. Why: the pairs within r
 * grow as r^d, so where a range of rows in their own order is joined at
 * its largest estimate most of its rows get hundreds or thousands of
 * pairs (uniform 10^6 x 128, K = 9: 5.5e9 pairs, and nearly two thirds
 * of the refinement's time in its sink). Ranges of like estimates are
 * joined at about their own radius instead. A pair's d2 is the engine's
 * on the same two rows wherever they sit, so each k-distance is the one
 * the rows in their own order give. Costs a copy of the dataset (O(n d),
 * never the pairs) and the engine's conversion of it; returns 1 (not
 * taken) where that copy does not fit. */
static int kr_by_estimate(const kdist_spec *s, const double *est, size_t nq, join_result *res)
{
    const size_t nall = s->q1 - s->q0;
    kr_key *key = mem_alloc(s->engine->name, "the k-distance's row order", nq, sizeof *key, 0);
    size_t *first =
        key ? mem_alloc(s->engine->name, "the k-distance's row order", nq, sizeof *first, 0) : NULL;
    double *e2 =
        first ? mem_alloc(s->engine->name, "the k-distance's estimates", nq, 2 * sizeof *e2, 0)
              : NULL;
    uint32_t *ord =
        e2 ? mem_alloc(s->engine->name, "the k-distance's row order", nq, sizeof *ord, 0) : NULL;
    if (!ord) {
        free(e2);
        e2 = NULL;
    }
    dataset g;
    if (e2) {
        /* a radix sort, stable (equal estimates in row order): qsort took
         * a tenth of a second or more at 10^6 rows; the rows s->known
         * holds stay out (key[].i: the row's index in the spec) */
        size_t m = 0;
        for (size_t q = 0; q < nall; q++)
            if (!s->known || !s->known[q]) {
                e2[m] = est_ok(est, q) ? est[q] : INFINITY;
                first[m++] = q;
            }
        sort_f64_order(e2, nq, ord);
        for (size_t k = 0; k < nq; k++)
            key[k] = (kr_key){e2[ord[k]], first[ord[k]]};
        for (size_t k = 0; k < nq; k++)
            first[k] = s->q0 + key[k].i;
        free(ord);
    }
    if (!e2 || dataset_order_first(s->ds, first, nq, &g, NULL)) {
        free(key);
        free(first);
        free(e2);
        err_clear();
        return 1;
    }
    double *out = e2 + nq;
    for (size_t k = 0; k < nq; k++)
        e2[k] = key[k].e == INFINITY ? -1 : key[k].e;
    kdist_spec t = *s;
    t.ds = &g;
    t.q0 = 0;
    t.q1 = nq;
    t.out = out;
    t.known = NULL;
    int rc = kr_rows_refine(&t, e2, res, 1);
    if (rc == 0)
        for (size_t k = 0; k < nq; k++)
            s->out[key[k].i] = out[k];
    dataset_order_free(&g);
    free(e2);
    free(first);
    free(key);
    return rc;
}

int kdist_refine(const kdist_spec *s, const double *est, join_result *res)
{
    size_t open = s->q1 - s->q0;
    for (size_t q = 0; s->known && q < s->q1 - s->q0; q++)
        open -= s->known[q] != 0;
    if (open == 0)
        return 0;
    if (est && open >= kr_sort_min) {
        const int rc = kr_by_estimate(s, est, open, res);
        if (rc != 1)
            return rc;
    }
    return kr_rows_refine(s, est, res, 0);
}
