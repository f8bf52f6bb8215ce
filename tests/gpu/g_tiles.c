/* GPU tests of a work list shared with other processes (kernels.h's
 * kern_tiles, what tcjoin-mpi's GPU ranks use: src/cli/mpi_run.c). Two
 * "ranks" are emulated in one process: each runs the whole join with a
 * taker that hands it every other range of the engine's own list (even
 * ranges to one, odd to the other), so between them they compute each
 * item once. The reference is the same engine run alone: COUNT, the
 * per-point counts and the histogram of the two shares added, and the
 * union of their pairs (with each d2's bits), equal it exactly, for every
 * GPU join engine, symmetric tiles on; a list whose length the other
 * side disagrees with fails the run with the taker's one line; a taker
 * with nothing left gives an empty share. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static dataset g_ds;
static double g_eps;

static void data(void)
{
    if (!((double *)g_ds.v))
        set_clustered(12000, 64, 7, &g_ds, &g_eps);
}

#define NB 32

/* One emulated rank's taker: ranges of c items, those of its parity. */
typedef struct fake_rank {
    int parity; /* 0 or 1; -1: nothing is left for it */
    int refuse; /* open reports another list */
    int opens;  /* lists opened */
    unsigned long long total, next, taken;
} fake_rank;

static int fake_open(void *ctx, unsigned long long total, const char *variant, int *list, char *why,
                     size_t why_len)
{
    fake_rank *f = ctx;
    *list = f->opens++;
    f->total = total;
    f->next = 0;
    if (f->refuse) {
        snprintf(why, why_len, "test: the other rank's list is %llu items, not %llu of '%s'",
                 total + 1, total, variant);
        return 1;
    }
    return 0;
}

static int fake_take(void *ctx, int list, unsigned long long least, unsigned long long most,
                     int ndev, unsigned long long *b, unsigned long long *e)
{
    fake_rank *f = ctx;
    (void)list;
    (void)ndev;
    if (f->parity < 0)
        return 0;
    /* The same range size on both sides (the same least and most). */
    unsigned long long c = f->total / 16 + 1;
    if (c < least)
        c = least;
    if (most && c > most)
        c = most;
    while (f->next < f->total) {
        const unsigned long long k = f->next / c, at = f->next;
        f->next = (k + 1) * c < f->total ? (k + 1) * c : f->total;
        if ((int)(k % 2) == f->parity) {
            *b = at;
            *e = f->next;
            f->taken += *e - *b;
            return 1;
        }
    }
    return 0;
}

typedef struct outcome {
    uint64_t count;
    uint64_t *counts;
    uint64_t hist[NB], below;
    join_outcome p;
} outcome;

/* Every mode of e, with the taker f (NULL: the whole run). 0 or the code. */
static int run_all(const engine *e, fake_rank *f, outcome *o)
{
    memset(o, 0, sizeof *o);
    o->counts = xcalloc(g_ds.n, sizeof *o->counts);
    engine_opts opts;
    engine_opts_default(&opts);
    opts.symmetric = 1;
    opts.batch_pairs = (size_t)1 << 15; /* the pairs drain in many refills */
    opts.int8_scale = 1; /* the int8 rows quantize these float data (no other row reads it) */
    opts.shift = 1;      /* the unsigned rows (ue5m3, ue4m4) shift these signed data */
    double edges[NB + 1];
    for (int b = 0; b <= NB; b++)
        edges[b] = g_eps * g_eps * b / NB;
    const kern_tiles kt = {fake_open, fake_take, f};
    for (int m = 0; m < 4; m++) {
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &g_ds;
        s.eps = g_eps;
        s.q0 = 0;
        s.q1 = g_ds.n;
        s.mode = (join_mode)m;
        s.opts = &opts;
        s.counts = o->counts;
        s.sink.put = jo_put;
        s.sink.ctx = &o->p;
        s.hist_edges = edges;
        s.hist_nbins = NB;
        s.hist = o->hist;
        s.hist_below = &o->below;
        s.tiles = f ? &kt : NULL;
        join_result r;
        int rc = engine_run(e, &s, &r);
        if (rc)
            return rc;
        if (m == JOIN_COUNT)
            o->count = r.pairs;
    }
    qsort(o->p.pairs, o->p.npairs, sizeof *o->p.pairs, jo_by_ij);
    return 0;
}

static void outcome_free(outcome *o)
{
    free(o->counts);
    jo_free(&o->p);
}

static int queued(const engine *e)
{
    return e->kjoin && engine_available(e, NULL) == 0;
}

TEST(two_shares_of_the_list_add_up_to_the_run_every_engine_and_mode)
{
    need_gpu();
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!queued(e))
            continue;
        outcome whole, a, b;
        fake_rank fa = {.parity = 0}, fb = {.parity = 1};
        CHECK_MSG(run_all(e, NULL, &whole) == 0, "%s alone: %s", e->name, err_msg());
        CHECK_MSG(run_all(e, &fa, &a) == 0, "%s share 0: %s", e->name, err_msg());
        CHECK_MSG(run_all(e, &fb, &b) == 0, "%s share 1: %s", e->name, err_msg());
        CHECK_MSG(fa.opens >= 4 && fb.opens == fa.opens, "%s: lists opened %d and %d", e->name,
                  fa.opens, fb.opens);
        CHECK_MSG(fa.taken > 0 && fb.taken > 0, "%s: shares of %llu and %llu items", e->name,
                  fa.taken, fb.taken);
        CHECK_MSG(a.count + b.count == whole.count && whole.count > 0,
                  "%s: count %llu + %llu vs %llu", e->name, (unsigned long long)a.count,
                  (unsigned long long)b.count, (unsigned long long)whole.count);
        size_t bad = 0;
        for (size_t i = 0; i < g_ds.n; i++)
            bad += a.counts[i] + b.counts[i] != whole.counts[i];
        CHECK_MSG(bad == 0, "%s: %zu per-point counts differ", e->name, bad);
        int hbad = a.below + b.below != whole.below;
        for (int k = 0; k < NB; k++)
            hbad |= a.hist[k] + b.hist[k] != whole.hist[k];
        CHECK_MSG(!hbad, "%s: the histograms do not add up", e->name);
        /* The union of the shares' pairs: merged, sorted, each pair once. */
        join_outcome u;
        memset(&u, 0, sizeof u);
        u.npairs = a.p.npairs + b.p.npairs;
        u.pairs = xmalloc((u.npairs ? u.npairs : 1) * sizeof *u.pairs);
        memcpy(u.pairs, a.p.pairs, a.p.npairs * sizeof *u.pairs);
        memcpy(u.pairs + a.p.npairs, b.p.pairs, b.p.npairs * sizeof *u.pairs);
        qsort(u.pairs, u.npairs, sizeof *u.pairs, jo_by_ij);
        CHECK_MSG(u.npairs == whole.p.npairs, "%s: %zu pairs in the shares vs %zu", e->name,
                  u.npairs, whole.p.npairs);
        size_t pbad = 0;
        for (size_t k = 0; k < u.npairs && u.npairs == whole.p.npairs; k++)
            pbad += u.pairs[k].i != whole.p.pairs[k].i || u.pairs[k].j != whole.p.pairs[k].j ||
                    memcmp(&u.pairs[k].d2, &whole.p.pairs[k].d2, sizeof(double)) != 0;
        CHECK_MSG(pbad == 0, "%s: %zu pairs differ in index or d2 bits", e->name, pbad);
        printf("# %s: %llu + %llu items, %zu pairs\n", e->name, fa.taken, fb.taken, u.npairs);
        jo_free(&u);
        outcome_free(&whole);
        outcome_free(&a);
        outcome_free(&b);
        ran++;
    }
    CHECK_MSG(ran > 0, "no GPU engine could run");
}

TEST(a_list_the_other_side_disagrees_with_fails_with_its_line)
{
    need_gpu();
    data();
    const char *names[] = {"fasted", "exact", "fp64"};
    for (int k = 0; k < 3; k++) {
        const engine *e = engine_find(names[k]);
        if (!e || !queued(e))
            continue;
        fake_rank f = {.parity = 0, .refuse = 1};
        outcome o;
        int rc = run_all(e, &f, &o);
        CHECK_MSG(rc != 0, "%s: a refused list ran", e->name);
        CHECK_MSG(strstr(err_msg(), "the other rank's list") != NULL && !strchr(err_msg(), '\n'),
                  "%s: '%s'", e->name, err_msg());
        outcome_free(&o);
        err_clear();
    }
}

TEST(nothing_left_to_take_is_an_empty_share)
{
    need_gpu();
    data();
    const engine *e = engine_find("fasted");
    fake_rank f = {.parity = -1};
    outcome o;
    CHECK_MSG(run_all(e, &f, &o) == 0, "fasted: %s", err_msg());
    CHECK_EQ_INT(o.count, 0);
    CHECK_EQ_INT(o.p.npairs, 0);
    uint64_t sum = o.below;
    for (size_t i = 0; i < g_ds.n; i++)
        sum += o.counts[i];
    for (int k = 0; k < NB; k++)
        sum += o.hist[k];
    CHECK_EQ_INT(sum, 0);
    outcome_free(&o);
}
