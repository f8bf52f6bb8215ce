/* libtcjoin's pairs (include/tcjoin.h): every pair to the caller's
 * function, and the radius-neighbours graph as CSR in the caller's arrays.
 * Where the engine consumes pairs on a device (engine.consume), the graph
 * is one PAIRS run whose entries are sorted there (kernels/kern_graph.cu)
 * and kept between the two calls; elsewhere a PERPOINT run gives the
 * rows' lengths and a PAIRS run their entries, put in place on the host.
 * Either way host memory is the graph's and O(n). Each run is a `run` of
 * the workbench: stored in the log as one, under a command row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "err.h"
#include "kernels.h"
#include "mem.h"
#include "par.h"
#include "runner.h"
#include "store.h"

/* engine NULL: the join's default (pairs) or the ground truth (the graph). */
static int api_join_engine(tcj_ctx *c, const char *name, int truth, const engine **e)
{
    if (name && *name)
        return runner_engine_opt(&c->s.eopt, name, e);
    *e = truth ? runner_reference_engine(&c->s.eopt) : runner_default_engine(&c->s.eopt);
    if (!*e)
        return err_set(TCJ_EUNSUP, "no engine can run here");
    return engine_available(*e, &c->s.eopt);
}

/* What a library join runs (api_join): e's run of mode (sink for PAIRS,
 * counts for PERPOINT), or where graph is set e's consume of its PAIRS
 * run (mode JOIN_PAIRS) into the radius graph on the device
 * (PAIRS_GRAPH). */
typedef struct api_work {
    join_mode mode;
    pair_sink sink;
    uint64_t *counts;
    graph_dev_io *graph;
} api_work;

/* One join on x at eps into the log as the command `text` would have run
 * it. The graph's consume may decline (ENGINE_DECLINED: nothing ran, the
 * caller's host route follows): its command row is begun once it has
 * run, so a declined route leaves none (its `at` is then the run's end;
 * its seconds the whole call's). */
static int api_join(tcj_ctx *c, const engine *e, const char *text, const api_work *w)
{
    session *s = &c->s;
    if (!w->graph)
        cmd_log_begin(s, text);
    const double t0 = engine_now();
    s->cancel = 0;
    join_spec spec;
    runner_progress pg;
    join_result res;
    memset(&res, 0, sizeof res);
    int rc = runner_spec(s, e, &spec, &pg), ran = 0;
    if (!rc) {
        snprintf(pg.what, sizeof pg.what, "%s", text);
        spec.mode = w->mode;
        spec.sink = w->sink;
        spec.counts = w->counts;
        if (w->graph) {
            pair_consumer pc = {.use = PAIRS_GRAPH, .graph = w->graph};
            spec.engine = e;
            rc = e->consume(&spec, &pc, &res);
            if (rc == ENGINE_DECLINED)
                return rc;
        } else {
            rc = engine_run(e, &spec, &res);
        }
        ran = 1;
    }
    if (w->graph)
        cmd_log_begin(s, text);
    if (ran) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", rc ? err_msg() : "");
        const int64_t id = runner_store(s, e, &spec, &res, rc, rc ? msg : NULL);
        if (id)
            s->last_run_id = id;
        if (rc)
            err_set(rc, "%s", msg);
    }
    cmd_log_end(s, rc, engine_now() - t0);
    s->command_id = 0;
    return rc;
}

typedef struct api_pairs_ctx {
    tcj_pairs_fn fn;
    void *user;
} api_pairs_ctx;

static int api_pairs_put(void *ctx, const pair_batch *b)
{
    api_pairs_ctx *p = ctx;
    if (p->fn(p->user, b->k, b->i, b->j, b->d2))
        return err_set(TCJ_ECANCEL, "pairs: stopped by the caller's function");
    return 0;
}

int tcj_pairs(tcj_ctx *c, tcj_data *x, double eps, const char *ename, tcj_pairs_fn fn, void *user)
{
    if (!x || !fn)
        return api_fail(c, TCJ_EINVAL, "pairs: %s", !x ? "no data (tcj_data_wrap)" : "no function");
    if (!(eps > 0) || !isfinite(eps))
        return api_fail(c, TCJ_EINVAL, "pairs: eps must be a positive number, got %g", eps);
    api_begin(c, x, eps);
    const engine *e;
    int rc = api_join_engine(c, ename, 0, &e);
    if (!rc) {
        char text[128];
        snprintf(text, sizeof text, "run %s mode=pairs (libtcjoin pairs)", e->name);
        api_pairs_ctx p = {fn, user};
        const api_work w = {.mode = JOIN_PAIRS, .sink = {api_pairs_put, &p}};
        rc = api_join(c, e, text, &w);
    }
    return api_end(c, rc);
}

static int api_graph_check(tcj_ctx *c, tcj_data *x, double eps, const void *out)
{
    if (!x || !out)
        return api_fail(c, TCJ_EINVAL, "graph: %s",
                        !x ? "no data (tcj_data_wrap)" : "no output array");
    if (!(eps > 0) || !isfinite(eps))
        return api_fail(c, TCJ_EINVAL, "graph: eps must be a positive number, got %g", eps);
    return 0;
}

/* The graph built where the engine's pairs are (engine.consume,
 * PAIRS_GRAPH: one join, the entries sorted on the device, kept in c for
 * tcj_graph_fill); ENGINE_DECLINED where the engine has no such route
 * here (a CPU engine, several devices or ranks, a device that cannot hold
 * the entries). */
static int api_graph_device(tcj_ctx *c, tcj_data *x, double eps, const engine *e, int include_self,
                            int64_t *indptr)
{
    if (!e->consume)
        return ENGINE_DECLINED;
    char text[128];
    snprintf(text, sizeof text, "run %s mode=pairs (libtcjoin graph)", e->name);
    graph_dev_io io = {.include_self = include_self, .indptr = indptr};
    const api_work w = {.mode = JOIN_PAIRS, .graph = &io};
    const int rc = api_join(c, e, text, &w);
    kern_trace_mark("graph: the join and its entries on the device");
    if (rc == ENGINE_DECLINED)
        err_clear();
    if (!rc)
        c->graph = (api_graph_kept){io.kept, x, eps, e, include_self};
    return rc;
}

int tcj_graph_rows(tcj_ctx *c, tcj_data *x, double eps, const char *ename, int include_self,
                   int64_t *indptr)
{
    int rc = api_graph_check(c, x, eps, indptr);
    if (rc)
        return rc;
    api_begin(c, x, eps);
    const engine *e;
    if ((rc = api_join_engine(c, ename, 1, &e)) ||
        (rc = api_graph_device(c, x, eps, e, include_self, indptr)) != ENGINE_DECLINED)
        return api_end(c, rc);
    /* the host's route: the rows' lengths from a PERPOINT join */
    const size_t n = x->ds.n;
    uint64_t *counts = mem_alloc("graph", "the rows' lengths", n, sizeof *counts, 0);
    rc = counts ? 0 : TCJ_ENOMEM;
    if (!rc) {
        char text[128];
        snprintf(text, sizeof text, "run %s mode=perpoint (libtcjoin graph rows)", e->name);
        par_zero(counts, n * sizeof *counts);
        const api_work w = {.mode = JOIN_PERPOINT, .counts = counts};
        rc = api_join(c, e, text, &w);
        kern_trace_mark("graph: rows' lengths");
    }
    if (!rc) {
        indptr[0] = 0;
        for (size_t i = 0; i < n; i++) {
            /* every engine finds a point's own pair (distance 0 <= eps) */
            const uint64_t k = counts[i] - (include_self ? 0 : (counts[i] > 0));
            indptr[i + 1] = indptr[i] + (int64_t)k;
        }
    }
    free(counts);
    return api_end(c, rc);
}

typedef struct api_fill {
    const int64_t *indptr;
    int64_t *at; /* each row's next entry */
    int32_t *indices;
    double *dist;
    int include_self;
    int over; /* a row got more entries than its length */
} api_fill;

/* A batch's entries put in place, pairs [a, b): each entry's place taken
 * with an atomic add on its row's cursor, as batches may come from several
 * threads and a large one is split over the cores. */
typedef struct api_fill_job {
    api_fill *f;
    const pair_batch *b;
} api_fill_job;

static void api_fill_range(void *ctx, int t, size_t a, size_t b)
{
    const api_fill_job *job = ctx;
    api_fill *f = job->f;
    const pair_batch *pb = job->b;
    for (size_t k = a; k < b; k++) {
        const uint32_t i = pb->i[k], j = pb->j[k];
        if (i == j && !f->include_self)
            continue;
        const int64_t p = __atomic_fetch_add(&f->at[i], 1, __ATOMIC_RELAXED);
        if (p >= f->indptr[i + 1]) {
            __atomic_store_n(&f->over, 1, __ATOMIC_RELAXED);
            continue;
        }
        f->indices[p] = (int32_t)j;
        if (f->dist)
            f->dist[p] = pb->d2[k] > 0 ? sqrt(pb->d2[k]) : 0;
    }
}

/* The scattered writes into the caller's arrays are what a pair costs
 * here, and one thread makes them many times slower than the join that
 * finds the pairs (docs/PYTHON.md, "Costs"): a batch is cut over the
 * cores. */
static int api_fill_put(void *ctx, const pair_batch *b)
{
    api_fill_job job = {ctx, b};
    int nt;
    par_for(b->k, 8, api_fill_range, &job, &nt);
    return 0;
}

/* A row's entries in column order, in place, the distances (ds, may be
 * NULL) moved with their columns: quicksort on the median of three down
 * to runs of 16, then insertion; no calls through a pointer, which made
 * qsort the graph's largest host step. */
static void api_swap(int32_t *ix, double *ds, int64_t a, int64_t b)
{
    const int32_t t = ix[a];
    ix[a] = ix[b];
    ix[b] = t;
    if (ds) {
        const double u = ds[a];
        ds[a] = ds[b];
        ds[b] = u;
    }
}

static void api_sort_row(int32_t *ix, double *ds, int64_t lo, int64_t hi)
{
    while (hi - lo > 16) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (ix[mid] < ix[lo])
            api_swap(ix, ds, mid, lo);
        if (ix[hi - 1] < ix[lo])
            api_swap(ix, ds, hi - 1, lo);
        if (ix[hi - 1] < ix[mid])
            api_swap(ix, ds, hi - 1, mid);
        const int32_t pivot = ix[mid];
        int64_t a = lo, b = hi - 1;
        for (;;) {
            while (ix[a] < pivot)
                a++;
            while (ix[b] > pivot)
                b--;
            if (a >= b)
                break;
            api_swap(ix, ds, a++, b--);
        }
        /* the smaller side first, the larger by the loop: depth O(log m) */
        if (b + 1 - lo < hi - (b + 1)) {
            api_sort_row(ix, ds, lo, b + 1);
            lo = b + 1;
        } else {
            api_sort_row(ix, ds, b + 1, hi);
            hi = b + 1;
        }
    }
    for (int64_t k = lo + 1; k < hi; k++) {
        const int32_t key = ix[k];
        if (ix[k - 1] <= key)
            continue;
        const double dk = ds ? ds[k] : 0;
        int64_t q = k;
        for (; q > lo && ix[q - 1] > key; q--) {
            ix[q] = ix[q - 1];
            if (ds)
                ds[q] = ds[q - 1];
        }
        ix[q] = key;
        if (ds)
            ds[q] = dk;
    }
}

/* Each row's entries in column order (the engines give them in their
 * tiles' order). */
static void api_sort_rows(void *ctx, int t, size_t a, size_t b)
{
    const api_fill *f = ctx;
    for (size_t i = a; i < b; i++) {
        const int64_t lo = f->indptr[i];
        api_sort_row(f->indices + lo, f->dist ? f->dist + lo : NULL, 0, f->indptr[i + 1] - lo);
    }
}

/* The entries of the graph tcj_graph_rows kept on the device, where the
 * call names the same data, eps, engine and include_self (*done 1). */
static int api_graph_copy(tcj_ctx *c, const api_graph_kept *k, tcj_data *x, double eps,
                          const engine *e, int include_self, const int64_t *indptr,
                          int32_t *indices, double *dist, int *done)
{
    *done = 0;
    if (!k->g || k->x != x || k->eps != eps || k->e != e || k->include_self != include_self)
        return 0;
    *done = 1;
    const int64_t nnz = (int64_t)kern_graph_entries(k->g);
    if (nnz != indptr[x->ds.n])
        return api_fail(c, TCJ_EINVAL,
                        "graph: the rows' lengths say %lld entries where the graph has %lld "
                        "(indptr is tcj_graph_rows' own, unchanged)",
                        (long long)indptr[x->ds.n], (long long)nnz);
    /* the caller's arrays are often fresh (NumPy's empty): their pages
     * faulted in on the cores first, not one at a time by the copy */
    void *const pages[2] = {indices, dist};
    const size_t bytes[2] = {(size_t)nnz * sizeof *indices, (size_t)nnz * sizeof *dist};
    par_fault_in(pages, bytes, dist ? 2 : 1);
    if (kern_graph_copy(k->g, indices, dist))
        return api_fail(c, TCJ_EGPU, "graph: %s", kern_error());
    kern_trace_mark("graph: entries copied out");
    return 0;
}

int tcj_graph_fill(tcj_ctx *c, tcj_data *x, double eps, const char *ename, int include_self,
                   const int64_t *indptr, int32_t *indices, double *dist)
{
    int rc = api_graph_check(c, x, eps, indptr);
    if (rc || (rc = api_graph_check(c, x, eps, indices)))
        return rc;
    api_graph_kept kept;
    api_begin_kept(c, x, eps, &kept);
    const size_t n = x->ds.n;
    const engine *e;
    int done = 0;
    if (!(rc = api_join_engine(c, ename, 1, &e)))
        rc = api_graph_copy(c, &kept, x, eps, e, include_self, indptr, indices, dist, &done);
    kern_graph_free(kept.g);
    if (rc || done)
        return api_end(c, rc);
    /* the host's route: a PAIRS join's entries put in place */
    api_fill f = {.indptr = indptr, .indices = indices, .dist = dist, .include_self = include_self};
    if (!(f.at = mem_alloc("graph", "the rows' cursors", n, sizeof *f.at, 0)))
        rc = TCJ_ENOMEM;
    if (!rc) {
        memcpy(f.at, indptr, n * sizeof *f.at);
        char text[128];
        snprintf(text, sizeof text, "run %s mode=pairs (libtcjoin graph)", e->name);
        const api_work w = {.mode = JOIN_PAIRS, .sink = {api_fill_put, &f}};
        rc = api_join(c, e, text, &w);
        kern_trace_mark("graph: pairs in place");
    }
    for (size_t i = 0; !rc && i < n; i++)
        if (f.over || f.at[i] != indptr[i + 1])
            rc = api_fail(c, TCJ_EINVAL,
                          "graph: row %zu has %lld entries where its length says %lld (the "
                          "lengths are another call's: the same data, eps, engine and "
                          "include_self for both)",
                          i, (long long)(f.at[i] - indptr[i]),
                          (long long)(indptr[i + 1] - indptr[i]));
    if (!rc) {
        int nt;
        par_for(n, 16, api_sort_rows, &f, &nt);
        kern_trace_mark("graph: rows sorted");
    }
    free(f.at);
    return api_end(c, rc);
}
