/* DBSCAN's generic path over engine_run (src/cluster/dbscan.h): three passes,
 * O(n) memory, no neighbour lists. The sinks may be called from several
 * threads at once (the CPU driver serialises them behind a mutex today, a
 * GPU driver need not), so the union-find is lock-free: parents only ever
 * point at smaller indices and a root is linked by one compare-and-swap. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan.h"
#include "ranks.h"
#include "err.h"
#include "mem.h"
#include "par.h"

const char *const dbscan_pass_names[DBSCAN_NPASS] = {"core", "union", "border"};

/* ---- lock-free union-find (parent[x] <= x always) ---- */

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
    for (;;) {
        uint32_t px = __atomic_load_n(&p[x], __ATOMIC_RELAXED);
        if (px == x)
            return x;
        uint32_t gp = __atomic_load_n(&p[px], __ATOMIC_RELAXED);
        if (gp == px)
            return px;
        /* Path halving: gp is in x's set and smaller, so the invariant
         * holds whoever wins. */
        __atomic_compare_exchange_n(&p[x], &px, gp, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        x = gp;
    }
}

static void uf_union(uint32_t *p, uint32_t a, uint32_t b)
{
    for (;;) {
        a = uf_find(p, a);
        b = uf_find(p, b);
        if (a == b)
            return;
        uint32_t hi = a > b ? a : b, lo = a > b ? b : a;
        /* Link the larger root under the smaller; fails only when another
         * thread linked hi meanwhile: find again. */
        uint32_t expect = hi;
        if (__atomic_compare_exchange_n(&p[hi], &expect, lo, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return;
    }
}

/* ---- the passes ---- */

typedef struct db_ctx {
    const uint8_t *core;
    uint32_t *parent;
    int32_t *labels; /* pass 3: non-core rows hold INT32_MAX until a core neighbour is seen */
} db_ctx;

static int union_put(void *vctx, const pair_batch *b)
{
    db_ctx *c = vctx;
    for (size_t k = 0; k < b->k; k++) {
        uint32_t i = b->i[k], j = b->j[k];
        if (i != j && c->core[i] && c->core[j])
            uf_union(c->parent, i, j);
    }
    return 0;
}

static int border_put(void *vctx, const pair_batch *b)
{
    db_ctx *c = vctx;
    for (size_t k = 0; k < b->k; k++) {
        uint32_t i = b->i[k], j = b->j[k];
        if (c->core[i] || !c->core[j])
            continue;
        int32_t want = c->labels[j]; /* core rows hold their cluster number */
        int32_t cur = __atomic_load_n(&c->labels[i], __ATOMIC_RELAXED);
        while (want < cur && !__atomic_compare_exchange_n(&c->labels[i], &cur, want, 1,
                                                          __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            ;
    }
    return 0;
}

/* Progress of one pass mapped into the whole run's. */
typedef struct db_progress {
    const dbscan_spec *spec;
    double lo, span;
} db_progress;

static void pass_progress(void *ctx, double frac)
{
    db_progress *p = ctx;
    if (p->spec->progress)
        p->spec->progress(p->spec->progress_ctx, p->lo + p->span * frac);
}

static int run_pass(const dbscan_spec *spec, dbscan_result *res, int pass, join_spec *js)
{
    db_progress pg = {spec, pass / 3.0, 1 / 3.0};
    js->ds = spec->ds;
    js->eps = spec->eps;
    js->q0 = 0;
    js->q1 = spec->ds->n;
    js->opts = spec->opts;
    js->cancel = spec->cancel;
    js->progress = pass_progress;
    js->progress_ctx = &pg;
    res->pass_mode[pass] = js->mode;
    res->ran[pass] = 1;
    return engine_run(spec->engine, js, &res->pass[pass]);
}

/* A PAIRS pass whose pairs go to put (ctx); share: under several ranks
 * each rank's sink takes its share of the pairs only. */
static int pairs_pass(const dbscan_spec *spec, dbscan_result *res, int pass,
                      int (*put)(void *ctx, const pair_batch *b), void *ctx, int share)
{
    join_spec js;
    memset(&js, 0, sizeof js);
    js.mode = JOIN_PAIRS;
    js.sink = (pair_sink){put, ctx};
    js.sink_rank_share = share;
    return run_pass(spec, res, pass, &js);
}

/* Pass 1: per-point counts through spec->engine's run (PERPOINT),
 * spec->core[i] = count >= minpts (core must be set); the number of core
 * points in *ncore. */
static int dbscan_pass_core(const dbscan_spec *spec, dbscan_result *res, size_t *ncore)
{
    const size_t n = spec->ds->n;
    double t0 = engine_now();
    *ncore = 0;
    uint64_t *counts = mem_alloc("dbscan", "the per-point counts", n, sizeof *counts, 0);
    if (!counts)
        return TCJ_ENOMEM;
    /* the engine zeroes and fills them: their pages faulted in on every
     * core where fresh */
    void *const fill[] = {counts};
    const size_t bytes[] = {n * sizeof *counts};
    par_fault_in(fill, bytes, 1);
    join_spec js;
    memset(&js, 0, sizeof js);
    js.mode = JOIN_PERPOINT;
    js.counts = counts;
    int rc = run_pass(spec, res, DBSCAN_PASS_CORE, &js);
    *ncore = 0;
    if (!rc) {
        res->pairs = res->pass[DBSCAN_PASS_CORE].pairs;
        for (size_t i = 0; i < n; i++)
            *ncore += spec->core[i] = counts[i] >= spec->minpts;
    }
    free(counts);
    res->pass_seconds[DBSCAN_PASS_CORE] = engine_now() - t0;
    return rc;
}

/* The numbering over the cores (par_for): each range counts its roots,
 * the ranges' offsets follow in order, each range numbers its roots from
 * its offset, and then every other row takes its root's number. The same
 * numbers as one walk in row order (on one thread, with the summary, a
 * visible share of a 3.7e7-row DBSCAN). */
typedef struct num_job {
    const uint8_t *core;
    const uint32_t *root;
    size_t n;
    int32_t *lab;
    size_t off[PAR_MAX_THREADS];
} num_job;

/* Each range reads the arrays through restrict locals: through j the
 * compiler reloads every pointer after each store to lab (half as long
 * again at 60,000 rows). */
static void num_count(void *ctx, int t, size_t a, size_t b)
{
    num_job *j = ctx;
    const uint8_t *restrict core = j->core;
    const uint32_t *restrict root = j->root;
    size_t c = 0;
    for (size_t i = a; i < b; i++)
        c += core[i] && root[i] == i;
    j->off[t] = c;
}

static void num_roots(void *ctx, int t, size_t a, size_t b)
{
    num_job *j = ctx;
    const uint8_t *restrict core = j->core;
    const uint32_t *restrict root = j->root;
    int32_t *restrict lab = j->lab;
    int32_t next = (int32_t)j->off[t]; /* the clusters fit the labels' int32 */
    for (size_t i = a; i < b; i++)
        if (core[i] && root[i] == i)
            lab[i] = next++;
}

static void num_rest(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    num_job *j = ctx;
    const uint8_t *restrict core = j->core;
    const uint32_t *restrict root = j->root;
    int32_t *lab = j->lab; /* read at roots numbered by num_roots, written elsewhere */
    const size_t n = j->n;
    for (size_t i = a; i < b; i++)
        if (!(core[i] && root[i] == i))
            lab[i] = root[i] >= n ? -1 : lab[root[i]];
}

void dbscan_number(const uint8_t *core, const uint32_t *root, size_t n, int32_t *lab)
{
    /* rows weigh PAR_WEIGHT_RANDOM (num_rest's reads at random), the same
     * in num_count and num_roots: their ranges match (the offsets) */
    num_job j = {core, root, n, lab, {0}};
    int nt;
    par_for(n, PAR_WEIGHT_RANDOM, num_count, &j, &nt);
    par_offsets(j.off, nt);
    /* roots first: a border's root may come after it */
    par_for(n, PAR_WEIGHT_RANDOM, num_roots, &j, &nt);
    par_for(n, PAR_WEIGHT_RANDOM, num_rest, &j, &nt);
}

/* Passes 2 and 3 (the pairs streamed twice) after a core pass that found
 * ncore core points in spec->core. */
static int dbscan_generic_links(const dbscan_spec *spec, dbscan_result *res, size_t ncore);

/* The core rows' clusters from the union-find: roots in index order get
 * 0, 1, ...: each root is its component's smallest core index, and
 * parent[root] = root < i for the others, so the root's number is known
 * when i is reached. Non-core rows get INT32_MAX (the border pass lowers
 * it). */
static void number_forest(const uint8_t *core, uint32_t *parent, int32_t *lab, size_t n)
{
    int32_t next = 0;
    for (size_t i = 0; i < n; i++) {
        if (!core[i]) {
            lab[i] = INT32_MAX;
            continue;
        }
        uint32_t r = uf_find(parent, (uint32_t)i);
        lab[i] = r == i ? next++ : lab[r];
    }
}

/* ---- one join: the core pass's pairs kept ----
 * The core pass as a PAIRS run whose sink counts each row's neighbours
 * and keeps one order of each pair (i < j) in a room that grows up to
 * KEEP_MAX pairs (and a quarter of the memory available): where the
 * eps-graph fits, the union and the border labels come from the kept
 * pairs and no other join runs (as the GPU's passes keep theirs); where
 * it does not, the room is dropped and passes 2 and 3 join again. The
 * same labels either way: the pairs are the join's. */
#define KEEP_MAX ((size_t)1 << 25) /* 256 MB of pairs */

static size_t keep_test_max; /* 0: KEEP_MAX */

void dbscan_keep_max_for_tests(size_t pairs)
{
    keep_test_max = pairs;
}

typedef struct keep_ctx {
    pthread_mutex_t mu; /* batches may come from several threads */
    uint64_t *counts;
    uint32_t *pi, *pj;
    size_t n, cap, max; /* kept, room, the most the room may grow to */
    int over;           /* more pairs than max: the room is dropped */
} keep_ctx;

static int keep_grow(keep_ctx *c, size_t want)
{
    size_t cap = c->cap ? c->cap : c->max < ((size_t)1 << 16) ? c->max : (size_t)1 << 16;
    while (cap < want)
        cap *= 2;
    if (cap > c->max)
        cap = c->max;
    if (cap < want)
        return 0;
    uint32_t *pi = realloc(c->pi, cap * sizeof *pi),
             *pj = pi ? realloc(c->pj, cap * sizeof *pj) : NULL;
    if (pi)
        c->pi = pi;
    if (!pj)
        return 0;
    c->pj = pj;
    c->cap = cap;
    return 1;
}

static int keep_put(void *vctx, const pair_batch *b)
{
    keep_ctx *c = vctx;
    pthread_mutex_lock(&c->mu);
    for (size_t k = 0; k < b->k; k++) {
        const uint32_t i = b->i[k], j = b->j[k];
        c->counts[i]++;
        if (i >= j || c->over)
            continue;
        if (c->n == c->cap && !keep_grow(c, c->n + 1)) {
            c->over = 1;
            continue;
        }
        c->pi[c->n] = i;
        c->pj[c->n++] = j;
    }
    pthread_mutex_unlock(&c->mu);
    return 0;
}

static void keep_free(keep_ctx *c)
{
    free(c->pi);
    free(c->pj);
    c->pi = c->pj = NULL;
    c->n = c->cap = 0;
}

/* Passes 2 and 3 from the kept pairs: the union over core-core pairs,
 * the numbering, then each border row's smallest label among its core
 * neighbours (both orders of each kept pair). Under ranks each rank holds
 * its share of the pairs: the forests are merged and the border labels
 * reduced, as the joining passes do. */
static int keep_links(const dbscan_spec *spec, dbscan_result *res, const keep_ctx *kc,
                      uint32_t *parent)
{
    const size_t n = spec->ds->n;
    const uint8_t *core = spec->core;
    int32_t *lab = spec->labels;
    double t0 = engine_now();
    for (size_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i;
    for (size_t k = 0; k < kc->n; k++)
        if (core[kc->pi[k]] && core[kc->pj[k]])
            uf_union(parent, kc->pi[k], kc->pj[k]);
    int rc = ranks_forest_merge(parent, n);
    if (rc)
        return rc;
    number_forest(core, parent, lab, n);
    res->pass_seconds[DBSCAN_PASS_UNION] = engine_now() - t0;
    t0 = engine_now();
    for (size_t k = 0; k < kc->n; k++) {
        const uint32_t i = kc->pi[k], j = kc->pj[k];
        if (core[i] == core[j])
            continue;
        const uint32_t b = core[i] ? j : i, c = core[i] ? i : j;
        if (lab[c] < lab[b])
            lab[b] = lab[c];
    }
    if ((rc = ranks_min_i32(lab, n)))
        return rc;
    for (size_t i = 0; i < n; i++)
        if (lab[i] == INT32_MAX)
            lab[i] = -1;
    res->pass_seconds[DBSCAN_PASS_BORDER] = engine_now() - t0;
    return 0;
}

int dbscan_generic(const dbscan_spec *spec, dbscan_result *res)
{
    /* tcjoin-mpi: each rank's sink sees its share of the pairs; the
     * counts are added, the forests merged and the border labels reduced
     * over the ranks (src/ranks.h: nothing in one process), and whether
     * every rank's share fitted is agreed on, so all take the same path */
    const int ranks = ranks_count() > 1;
    const size_t n = spec->ds->n;
    uint64_t avail = mem_available() / 4 / (2 * sizeof(uint32_t));
    const size_t most = keep_test_max ? keep_test_max : KEEP_MAX;
    keep_ctx kc = {.max = avail < most ? (size_t)avail : most};
    /* a room too small to be worth a try; under ranks every rank takes
     * the one join whatever its room (a rank whose room overflows makes
     * all join again, agreed below), as the ranks' runs are collective */
    if (!ranks && kc.max < (keep_test_max ? 1 : (size_t)1 << 16)) {
        /* Pass 1: neighbours per point (self included) -> core flags. */
        size_t ncore = 0;
        int rc = dbscan_pass_core(spec, res, &ncore);
        return rc ? rc : dbscan_generic_links(spec, res, ncore);
    }
    double t0 = engine_now();
    kc.counts = mem_alloc("dbscan", "the per-point counts", n, sizeof *kc.counts, 1);
    if (!kc.counts)
        return TCJ_ENOMEM;
    pthread_mutex_init(&kc.mu, NULL);
    int rc = pairs_pass(spec, res, DBSCAN_PASS_CORE, keep_put, &kc, ranks);
    pthread_mutex_destroy(&kc.mu);
    if (!rc)
        rc = ranks_sum_u64(kc.counts, n);
    /* every rank's share kept, or all join again (a minimum over ranks) */
    int32_t kept = !kc.over;
    if (!rc)
        rc = ranks_min_i32(&kept, 1);
    size_t ncore = 0;
    if (!rc) {
        res->pairs = res->pass[DBSCAN_PASS_CORE].pairs;
        for (size_t i = 0; i < n; i++)
            ncore += spec->core[i] = kc.counts[i] >= spec->minpts;
    }
    res->pass_seconds[DBSCAN_PASS_CORE] = engine_now() - t0;
    free(kc.counts);
    if (!rc && kept) {
        uint32_t *parent = mem_alloc("dbscan", "the union-find", n, sizeof *parent, 0);
        if (parent) {
            rc = keep_links(spec, res, &kc, parent);
            free(parent);
            if (!rc && spec->progress)
                spec->progress(spec->progress_ctx, 1.0);
        } else {
            rc = TCJ_ENOMEM;
        }
    }
    keep_free(&kc);
    if (rc || kept)
        return rc;
    return dbscan_generic_links(spec, res, ncore);
}

static int dbscan_generic_links(const dbscan_spec *spec, dbscan_result *res, size_t ncore)
{
    /* tcjoin-mpi: each rank's sinks see its share of the pairs (its
     * tiles or rows); its forest is merged with the others' after pass 2
     * and its border labels reduced by a minimum after pass 3, so every
     * rank ends with the one-process labels (src/ranks.h). */
    const int ranks = ranks_count() > 1;
    const size_t n = spec->ds->n;
    uint8_t *core = spec->core;
    int32_t *lab = spec->labels;
    int rc = 0;
    double t0;

    /* Pass 2: core-core edges into the union-find. One core point is its
     * own cluster and needs no pairs. */
    t0 = engine_now();
    uint32_t *parent = mem_alloc("dbscan", "the union-find", n, sizeof *parent, 0);
    if (!parent)
        return TCJ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        parent[i] = (uint32_t)i;
    db_ctx ctx = {core, parent, lab};
    if (ncore > 1) {
        rc = pairs_pass(spec, res, DBSCAN_PASS_UNION, union_put, &ctx, ranks);
        /* Every rank reaches this with the same rc and ncore (the shared
         * run's outcome and the reduced counts): the merge is collective. */
        if (!rc)
            rc = ranks_forest_merge(parent, n);
    }
    if (!rc)
        number_forest(core, parent, lab, n);
    free(parent);
    res->pass_seconds[DBSCAN_PASS_UNION] = engine_now() - t0;
    if (rc)
        goto out;

    /* Pass 3: border labels, only when there are both core and non-core
     * points. */
    t0 = engine_now();
    if (ncore > 0 && ncore < n) {
        rc = pairs_pass(spec, res, DBSCAN_PASS_BORDER, border_put, &ctx, ranks);
        /* Core rows hold the same number on every rank; a non-core row
         * the smallest its rank's pairs gave (INT32_MAX: none). */
        if (!rc)
            rc = ranks_min_i32(lab, n);
    }
    for (size_t i = 0; i < n; i++)
        if (lab[i] == INT32_MAX)
            lab[i] = -1;
    res->pass_seconds[DBSCAN_PASS_BORDER] = engine_now() - t0;
out:
    return rc;
}

int dbscan_run(const engine *e, dbscan_spec *spec, dbscan_result *res)
{
    memset(res, 0, sizeof *res);
    if (!spec->ds || spec->ds->n == 0)
        return err_set(TCJ_EINVAL, "dbscan: no dataset loaded (use load or gen)");
    if (!(spec->eps > 0) || !isfinite(spec->eps))
        return err_set(TCJ_EINVAL, "dbscan: eps must be a positive number");
    if (spec->minpts < 1 || spec->minpts > spec->ds->n)
        return err_set(TCJ_EINVAL, "dbscan: minpts must be 1 to n = %zu, got %zu", spec->ds->n,
                       spec->minpts);
    if (spec->ds->n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "dbscan: at most %u points", UINT32_MAX);
    if (!spec->labels)
        return err_set(TCJ_EINVAL, "dbscan: no label array");
    spec->engine = e;
    /* The summary needs the core flags: borrow an array when the caller
     * gave none. */
    uint8_t *own = NULL;
    if (!spec->core &&
        !(spec->core = own = mem_alloc("dbscan", "the core flags", spec->ds->n, 1, 0)))
        return TCJ_ENOMEM;
    double t0 = engine_now();
    int rc = dbscan_device(e, spec, res);
    if (rc == ENGINE_DECLINED)
        rc = dbscan_generic(spec, res);
    res->seconds = engine_now() - t0;
    snprintf(res->precision, sizeof res->precision, "%s",
             res->pass[DBSCAN_PASS_CORE].precision[0] ? res->pass[DBSCAN_PASS_CORE].precision
                                                      : e->precision);
    if (!rc)
        dbscan_summarize(spec->labels, spec->core, spec->ds->n, res);
    if (own) {
        free(own);
        spec->core = NULL;
    }
    return rc;
}

/* ---- summaries ---- */

/* The summary's counts over the cores (par_for): each range's noise,
 * core rows and largest label, then the cluster sizes, each range into
 * its own array where they fit SUM_PRIVATE bytes together (a shared
 * counter would be one cache line for a cluster holding most rows). */
#define SUM_PRIVATE ((size_t)64 << 20)

typedef struct sum_job {
    const int32_t *labels;
    const uint8_t *core;
    size_t ncl;
    size_t noise[PAR_MAX_THREADS], ncore[PAR_MAX_THREADS];
    int32_t top[PAR_MAX_THREADS];
    size_t *sz; /* nt x ncl */
} sum_job;

static void sum_counts(void *ctx, int t, size_t a, size_t b)
{
    sum_job *j = ctx;
    size_t noise = 0, ncore = 0;
    int32_t top = -1;
    for (size_t i = a; i < b; i++) {
        const int32_t l = j->labels[i];
        noise += l < 0;
        top = l > top ? l : top;
        if (j->core)
            ncore += j->core[i] != 0;
    }
    j->noise[t] = noise;
    j->ncore[t] = ncore;
    j->top[t] = top;
}

static void sum_sizes(void *ctx, int t, size_t a, size_t b)
{
    sum_job *j = ctx;
    size_t *sz = j->sz + (size_t)t * j->ncl;
    for (size_t i = a; i < b; i++)
        if (j->labels[i] >= 0)
            sz[j->labels[i]]++;
}

void dbscan_summarize(const int32_t *labels, const uint8_t *core, size_t n, dbscan_result *res)
{
    res->n = n;
    sum_job j;
    memset(&j, 0, sizeof j);
    j.labels = labels;
    j.core = core;
    int nt;
    par_for(n, 1, sum_counts, &j, &nt);
    size_t noise = 0, ncore = 0;
    int32_t top = -1;
    for (int t = 0; t < nt; t++) {
        noise += j.noise[t];
        ncore += j.ncore[t];
        top = j.top[t] > top ? j.top[t] : top;
    }
    const size_t ncl = (size_t)(top + 1);
    res->clusters = ncl;
    res->noise = noise;
    if (core) {
        res->core = ncore;
        res->border = n - noise - ncore;
    }
    size_t *sz;
    j.ncl = ncl ? ncl : 1;
    const size_t ranges = (size_t)par_ranges(n, 1);
    if (ranges * j.ncl * sizeof *sz <= SUM_PRIVATE) {
        j.sz = xcalloc(ranges * j.ncl, sizeof *sz);
        par_for(n, 1, sum_sizes, &j, &nt);
        for (int t = 1; t < nt; t++)
            for (size_t c = 0; c < ncl; c++)
                j.sz[c] += j.sz[(size_t)t * j.ncl + c];
        sz = j.sz;
    } else {
        sz = j.sz = xcalloc(j.ncl, sizeof *sz);
        sum_sizes(&j, 0, 0, n);
    }
    memset(res->size_hist, 0, sizeof res->size_hist);
    for (size_t c = 0; c < ncl; c++) {
        int b = 0;
        while (b + 1 < DBSCAN_SIZE_BINS && sz[c] >> (b + 1))
            b++;
        res->size_hist[b]++;
    }
    /* The largest DBSCAN_TOP sizes, descending: one pass, each size
     * placed in the short sorted list it beats (no sort of every size). */
    res->ntop = 0;
    for (size_t c = 0; c < ncl; c++) {
        size_t k = res->ntop < DBSCAN_TOP ? res->ntop++ : DBSCAN_TOP;
        if (k == DBSCAN_TOP && sz[c] <= res->top[DBSCAN_TOP - 1])
            continue;
        if (k == DBSCAN_TOP)
            k--;
        while (k > 0 && res->top[k - 1] < sz[c]) {
            res->top[k] = res->top[k - 1];
            k--;
        }
        res->top[k] = sz[c];
    }
    free(sz);
}

/* ---- comparing two clusterings ---- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

typedef struct db_cell {
    uint32_t a, b;
    size_t count;
} db_cell;

static int cmp_cell_desc(const void *x, const void *y)
{
    const db_cell *p = x, *q = y;
    if (p->count != q->count)
        return p->count < q->count ? 1 : -1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return p->b < q->b ? -1 : p->b > q->b;
}

static double pairs2(double m)
{
    return m * (m - 1) / 2;
}

void dbscan_compare(const int32_t *a, const uint8_t *core_a, const int32_t *b,
                    const uint8_t *core_b, size_t n, dbscan_cmp *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (a[i] >= 0 && (size_t)a[i] + 1 > na)
            na = (size_t)a[i] + 1;
        if (b[i] >= 0 && (size_t)b[i] + 1 > nb)
            nb = (size_t)b[i] + 1;
        out->noise_gained += a[i] >= 0 && b[i] < 0;
        out->noise_lost += a[i] < 0 && b[i] >= 0;
        if (core_a && core_b) {
            out->core_gained += !core_a[i] && core_b[i];
            out->core_lost += core_a[i] && !core_b[i];
        }
    }
    out->have_core = core_a && core_b;
    /* The contingency table's cells with a point clustered on both sides;
     * a noise point is a singleton and adds nothing to any C(m, 2). */
    uint64_t *key = xmalloc((n ? n : 1) * sizeof *key);
    size_t m = 0;
    size_t *sa = xcalloc(na + 1, sizeof *sa), *sb = xcalloc(nb + 1, sizeof *sb);
    for (size_t i = 0; i < n; i++) {
        if (a[i] >= 0)
            sa[a[i]]++;
        if (b[i] >= 0)
            sb[b[i]]++;
        if (a[i] >= 0 && b[i] >= 0)
            key[m++] = (uint64_t)(uint32_t)a[i] << 32 | (uint32_t)b[i];
    }
    qsort(key, m, sizeof *key, cmp_u64);
    db_cell *cell = xmalloc((m ? m : 1) * sizeof *cell);
    size_t nc = 0;
    double idx = 0, rows = 0, cols = 0;
    for (size_t k = 0; k < m;) {
        size_t e = k;
        while (e < m && key[e] == key[k])
            e++;
        cell[nc++] = (db_cell){(uint32_t)(key[k] >> 32), (uint32_t)key[k], e - k};
        idx += pairs2((double)(e - k));
        k = e;
    }
    for (size_t c = 0; c < na; c++)
        rows += pairs2((double)sa[c]);
    for (size_t c = 0; c < nb; c++)
        cols += pairs2((double)sb[c]);
    double expect = n > 1 ? rows * cols / pairs2((double)n) : 0;
    double maxi = (rows + cols) / 2;
    /* Both all singletons, or otherwise degenerate: scikit-learn's
     * adjusted_rand_score says 1 for identical partitions there. */
    out->ari = maxi == expect ? 1.0 : (idx - expect) / (maxi - expect);

    /* Matching: cells by overlap, largest first, one to one. */
    qsort(cell, nc, sizeof *cell, cmp_cell_desc);
    int64_t *match = xmalloc((na + 1) * sizeof *match);
    uint8_t *taken = xcalloc(nb + 1, 1);
    for (size_t c = 0; c < na; c++)
        match[c] = -1;
    for (size_t k = 0; k < nc; k++)
        if (match[cell[k].a] < 0 && !taken[cell[k].b]) {
            match[cell[k].a] = cell[k].b;
            taken[cell[k].b] = 1;
        }
    for (size_t i = 0; i < n; i++) {
        if (a[i] < 0 || b[i] < 0)
            out->changed += (a[i] < 0) != (b[i] < 0);
        else
            out->changed += match[a[i]] != b[i];
    }
    free(match);
    free(taken);
    free(cell);
    free(key);
    free(sa);
    free(sb);
}
