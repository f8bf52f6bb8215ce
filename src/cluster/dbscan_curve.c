/* DBSCAN for every eps at once (src/cluster/dbscan_curve.h), a short loop
 * over the steps of a plan (src/cluster/curve_plan.h), each in its own
 * file: the core distances (curve_core.c, with each point's K nearest and
 * the first round's lists where the plan keeps them), then Boruvka rounds
 * over the pairs of the join at max, each consumed where the engine
 * computes them (engine.consume, PAIRS_CURVE_ROUND: the same lists built
 * on the device) or through the host sink (curve_sink.c), each followed by
 * a merging (on the device where the lists are, else curve_merging.c),
 * and the end: the sorts and the replay (curve_end.c).
 *
 * Each join leaves every point its CURVE_LIST cheapest edges that leave
 * its component (kernels/cluster_types.h: CURVE_LIST slots a point,
 * O(n)), and after it every component whose cheapest outgoing edge those
 * lists prove is merged, as often as they prove one. A point's edges that
 * are not in its full list are heavier than the list's heaviest (the
 * total order), or were inside its component already; a component's
 * cheapest outgoing edge is proved when it is lighter than the heaviest
 * list edge of each member whose list has no edge leaving it. Adding any
 * component's cheapest outgoing edge keeps the forest the one minimum
 * forest (the cut property; the order is total), so the curve is the same
 * as with a join a round; the joins fall from one a halving of the
 * components (and one to find none left) to those the lists cannot
 * decide: at 10^5 x 16, S = 64, five joins became two on the 2-core build
 * machine. A later join queries only the rows of the components left open
 * (curve_later.c), and none runs where no two are.
 *
 * Under several ranks (src/ranks.h) each rank's sink sees its share of
 * the pairs; the reachabilities (by minimum) and the lists (merged), O(n),
 * are reduced after each join (nothing in one process), so every rank
 * takes the same steps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "curve_core.h"
#include "curve_end.h"
#include "curve_knn.h"
#include "curve_later.h"
#include "curve_merging.h"
#include "curve_plan.h"
#include "curve_sink.h"
#include "dataset_order.h"
#include "dbscan_curve.h"
#include "err.h"
#include "kdist.h"
#include "kernels.h"
#include "mem.h"
#include "par.h"
#include "ranks.h"

/* The bytes a point of the run's arrays: core, reach, kb, part, list,
 * parent, comp, best, forest, bound, later, sub, at and the merging's. */
#define CV_POINT_BYTES                                                                             \
    (3 * sizeof(double) + 3 * sizeof(uint32_t) + sizeof(curve_list) + 3 * sizeof(curve_edge) +     \
     sizeof(size_t) + 5 * sizeof(uint32_t) + 3 * sizeof(curve_edge) + 3)

/* The run's state, made by cv_alloc and freed by cv_free whatever the
 * outcome, so that each step is a function of it. */
typedef struct cv_run {
    const engine *e;
    const dbscan_curve_spec *spec;
    const curve_plan *p;
    dbscan_curve *c;
    size_t n;
    double *core, *reach, *kb; /* kb: each point's D_p (src/cluster/curve_knn.h) */
    uint32_t *part;            /* the core join's parts (curve_later.c): one unless it cut */
    curve_list *list;
    uint32_t *parent, *comp;
    curve_edge *best, *forest, *bound;
    size_t nf;     /* the forest's edges */
    size_t *later; /* a later join's rows (curve_later_rows) */
    uint32_t *sub; /* the same for a subset join (join_spec.sub) */
    uint32_t *at;  /* the reordered copy's rows (dataset_order_first) */
    int cut;       /* the core join's parts: more than one */
    curve_sink sink;
    curve_merging mg; /* the host's merging */
    curve_merge cm;   /* the merging where the lists are */
    curve_end end;
    double tr_mark, tr_rows, tr_join; /* the trace's times */
    /* the last join over every row: the seconds that grow with the rows it
     * queries (a device join's kernels; the core step's whole at first) */
    double t_full;
    double t_kernel; /* the last join's kernels (join_result.kernel_seconds) */
} cv_run;

/* What a later join over a reordered copy of the rows pays before its
 * kernels, a byte of the dataset: the copy, and on the GPU exact's scan
 * of it, its upload and conversion (measured on sift5k's and letter's
 * 2.56 MB, each many times their joins' kernels:
 * docs/history/BENCHMARKS-2026-11.md). */
#define CV_REORDER_S_PER_BYTE 2.5e-9

/* Whether a later join over m of the n rows takes a copy with them first
 * (curve_later_rows) rather than every row of the dataset as it is: where
 * they are at most half the rows and what the smaller join saves of the
 * last whole one (its time that grows with its rows, in proportion to the
 * rows left out) exceeds the copy's cost. A device join's launch, state
 * and merging do not shrink with its rows: on a LiDAR scan of 20,285 x 4
 * its kernels take about a fifth of it, and the copy's FP64 grid index
 * would also take the place of the whole dataset's, built again by the
 * next curve's core join, so only the kernels count there.
 * Either way the same edges are found (a whole join offers every pair,
 * the lists keep the same least edges), so the curve is the same; only
 * the time differs. Where the core join was cut (parts),
 * a whole join is cut too and costs about its COUNT over the cut: a join
 * of fewer rows is not (on gauss 10^6 x 128, one over 241,878 rows takes
 * some six times as long as the whole cut join, and copying them first
 * over twice as long). */
static int cv_reorder_pays(const cv_run *r, size_t m)
{
    if (r->cut || 2 * m > r->n)
        return 0;
    const double saving = r->t_full * (1.0 - (double)m / (double)r->n);
    return !(r->t_full > 0) || saving > CV_REORDER_S_PER_BYTE * (double)dataset_bytes(r->spec->ds);
}

/* Whether a later join over m query rows and the mb rows of the largest
 * open component runs over those rows alone (a subset join: its block
 * pairs the queries' triangle and the queries against the others) rather
 * than over every row: where they are at most half the rows, or where
 * its block pairs are at most a tenth of a whole symmetric join's. A
 * subset join costs more a block pair (its tile list, the rows gathered)
 * and a fixed share of host work (docs/BENCHMARKS.md, g_subset): on
 * sift5k, 2,748 open rows of 5,000 (a third of the pairs) take half as
 * long again as the whole join; letter's last join, 564 queries beside 11,541
 * rows, has a thirtieth. */
static int cv_subset_pays(size_t m, size_t mb, size_t n)
{
    const double q = (double)m, o = (double)mb, w = (double)n;
    return 2 * (m + mb) <= n || q * (q / 2 + o) <= w * w / 20;
}

/* Whether another join is needed after a merging that left open
 * components open: two or more. An edge that leaves an open component
 * ends in another open one (a closed component has no edge out, and one
 * with a known edge out would have been merged), so a lone open
 * component has none: curve_later_rows would find no rows (it leaves the
 * largest out) after passes over every row. */
static int cv_more(size_t open)
{
    return open > 1;
}

/* The merging after a join: where the join's lists were (cm.done: comp
 * and bound are its, parent flattened to comp, the forest grown) or on
 * the host; its open count. */
static size_t cv_merge(cv_run *r, const double *kb)
{
    if (r->cm.finished) { /* and the curve's end made there: no row is left */
        r->nf = r->cm.nf;
        r->c->merges_device++;
        r->c->end_device = 1;
        return 0;
    }
    if (r->cm.done) {
        memcpy(r->parent, r->cm.comp, r->n * sizeof *r->parent);
        r->nf = r->cm.nf;
        r->c->merges_device++;
        return r->cm.open;
    }
    return curve_merging_run(&r->mg, r->list, kb, r->parent, r->comp, r->best, r->bound, r->n,
                             r->forest, &r->nf);
}

/* One join at max: its pairs consumed where the engine computes them
 * (PAIRS_CURVE_ROUND) where the plan says so and the engine can, else
 * through the host sink. */
static int cv_join(cv_run *r, const join_spec *js, const curve_round_io *io, int *on_device)
{
    join_result jr;
    memset(&jr, 0, sizeof jr);
    *on_device = 0;
    r->t_kernel = 0;
    if (r->p->rounds_device && r->e->consume) {
        pair_consumer pc = {.use = PAIRS_CURVE_ROUND, .round = io};
        const int rc = r->e->consume(js, &pc, &jr);
        if (rc != ENGINE_DECLINED) {
            *on_device = rc == 0;
            r->t_kernel = jr.kernel_seconds;
            return rc;
        }
    }
    if (io->merge)
        io->merge->done = io->merge->finished = io->merge->later_done = 0;
    if (js->sub) /* the sink takes every row: the caller's other join */
        return ENGINE_DECLINED;
    curve_sink_clear(io->list, io->n); /* the sink's lists start empty */
    return engine_run(r->e, js, &jr);
}

/* The arrays (what n sizes here checked as one first, src/mem.h; the K
 * nearest come on top, sized to what is left). parent, best, later, at
 * and the merging's wait for cv_alloc_rounds, after the K nearest are
 * gone: 95 bytes a point less of address space at the peak. */
static int cv_alloc(cv_run *r)
{
    const size_t n = r->n;
    if (mem_check("dbscan curve", "its per-point arrays", n, CV_POINT_BYTES, 0))
        return TCJ_ENOMEM;
    /* core distances: the (minPts-1)-th nearest other point; 0 for minPts
     * = 1 (every point is core at any eps) */
    r->core = xcalloc(n, sizeof *r->core);
    r->reach = xmalloc(n * sizeof *r->reach);
    r->kb = xmalloc(n * sizeof *r->kb);
    r->part = xcalloc(n ? n : 1, sizeof *r->part);
    /* 1,032 bytes a point: its pages faulted in on every core (par_zero),
     * not one at a time by the first writer; where the merging runs on
     * the device the lists stay there and these are never touched */
    r->list = xmalloc(n * sizeof *r->list);
    if (!r->p->merge_device || !r->e->consume)
        par_zero(r->list, n * sizeof *r->list);
    r->comp = xmalloc(n * sizeof *r->comp);
    r->forest = xmalloc((n ? n : 1) * sizeof *r->forest);
    r->bound = xmalloc(n * sizeof *r->bound);
    r->sub = xmalloc((n ? n : 1) * sizeof *r->sub); /* the merging's later rows from the first */
    for (size_t i = 0; i < n; i++)
        r->comp[i] = (uint32_t)i;
    /* What a device's copies fill, its pages faulted in on every core
     * first where they are fresh (src/par.h: a copy into fresh pages pays
     * a fault a page on one thread, as the core join's 24 MB of results
     * and the merging's bounds and edges would at 10^6 points). */
    if (r->e->gpu) {
        void *const fill[] = {r->core, r->reach, r->kb, r->part, r->bound, r->forest};
        const size_t bytes[] = {n * sizeof *r->core, n * sizeof *r->reach, n * sizeof *r->kb,
                                n * sizeof *r->part, n * sizeof *r->bound, n * sizeof *r->forest};
        par_fault_in(fill, bytes, 6);
    }
    r->end = (curve_end){r->c, r->core, r->reach, r->spec->keep_ends};
    r->cm = (curve_merge){.comp = r->comp,
                          .bound = r->bound,
                          .forest = r->forest,
                          .reach_host = r->reach,
                          .later = r->sub,
                          .take = curve_end_take,
                          .take_ctx = &r->end};
    curve_sink_init(&r->sink, n, r->core, r->c->max2, r->comp, r->reach, r->list);
    return 0;
}

static void cv_alloc_rounds(cv_run *r)
{
    const size_t n = r->n;
    r->parent = xmalloc(n * sizeof *r->parent);
    r->best = xmalloc(n * sizeof *r->best);
    r->later = xmalloc(n * sizeof *r->later);
    r->at = xmalloc(n * sizeof *r->at);
    curve_merging_alloc(&r->mg, n);
    for (size_t i = 0; i < n; i++) {
        r->parent[i] = (uint32_t)i;
        if (!r->c->knn) /* else the first round's, from the K nearest */
            r->reach[i] = r->core[i];
    }
    for (size_t i = 0; i < n && !r->cut; i++)
        r->cut = r->part[i] != 0;
    r->cm.part = r->cut ? r->part : NULL; /* the later rows' test of a round's end */
}

/* Everything but the results the curve keeps (core, reach, forest: the
 * caller's). */
static void cv_free(cv_run *r)
{
    curve_sink_free(&r->sink);
    curve_merging_free(&r->mg);
    free(r->later);
    free(r->sub);
    free(r->at);
    free(r->list);
    free(r->kb);
    free(r->part);
    free(r->bound);
    free(r->parent);
    free(r->comp);
    free(r->best);
}

/* One round: a join at max over the rows that can still hold an edge
 * (after the first join: the open components' rows but the largest, in a
 * copy with them first where they are at most half the rows), the ranks'
 * lists reduced, then the merging. *more: another round is needed. */
static int cv_round(cv_run *r, int *more)
{
    const dbscan_curve_spec *spec = r->spec;
    dbscan_curve *c = r->c;
    const size_t n = r->n;
    *more = 0;
    /* Rounds halve the components that still have an outgoing edge:
     * progress by round up to log2 n. */
    const double lg = log2((double)n + 1) + 1;
    curve_progress pg = {spec, 0.2 + 0.8 * c->rounds / lg, 0.8 / lg};
    if (pg.lo > 0.95)
        pg.lo = 0.95, pg.span = 0;
    join_spec js = {.ds = spec->ds,
                    .engine = r->e,
                    .eps = spec->max,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = spec->opts,
                    .sink = curve_sink_pairs(&r->sink, NULL),
                    .sink_rank_share = r->p->ranks,
                    .inner = 1,
                    .cancel = spec->cancel,
                    .progress = curve_progress_fn,
                    .progress_ctx = &pg};
    dataset g;
    int reordered = 0, rc = 0, on_device = 0;
    size_t m = n, mb = 0;
    int in_sub = 0; /* the rows in r->sub (the merging's), not r->later */
    curve_round_io io = {.n = n,
                         .core2 = r->core,
                         .comp = r->comp,
                         .max2 = c->max2,
                         .reach2 = r->sink.reach2,
                         .list = r->list,
                         .merge = r->p->merge_device ? &r->cm : NULL};
    r->cm.nf = r->nf; /* done: set by the round */
    if (c->rounds > 0 || c->knn) {
        if (r->cm.later_done) { /* found where the merging was (into r->sub) */
            m = r->cm.nlater;
            mb = r->cm.nbig;
            in_sub = 1;
        } else
            m = curve_later_rows(r->comp, r->bound, r->core, r->part, n, r->later, &mb);
        kern_trace_mark("curve: later rows");
        if (kern_trace_on())
            fprintf(stderr, "dbscan curve trace: join %d over %zu of %zu rows (%zu more)\n",
                    c->rounds + 1, m, n, mb);
        if (m == 0)
            return 0;
    }
    const double tj = engine_now();
    r->tr_rows += tj - r->tr_mark;
    const int subset = cv_subset_pays(m, mb, n) && !r->cut && r->p->rounds_device && r->e->consume;
    if (subset) {
        /* the open components' rows alone, read where the engine holds
         * the dataset (an engine that cannot declines: the join below).
         * Not where the core join was cut: a whole join is cut too and
         * costs about its COUNT over the cut, where a subset's is not
         * (cv_reorder_pays). */
        for (size_t i = 0; i < m + mb && !in_sub; i++)
            r->sub[i] = (uint32_t)r->later[i];
        join_spec sj = js;
        sj.sub = r->sub;
        sj.nsub = m + mb;
        sj.sub_q = m;
        rc = cv_join(r, &sj, &io, &on_device);
        kern_trace_mark("curve: subset join");
    }
    if (!subset || rc == ENGINE_DECLINED) {
        const int pays = m < n && cv_reorder_pays(r, m);
        for (size_t i = 0; i < m && pays && in_sub; i++) /* the copy's first rows */
            r->later[i] = r->sub[i];
        if (pays && dataset_order_first(spec->ds, r->later, m, &g, r->at) == 0) {
            reordered = 1;
            js.ds = &g;
            js.q1 = m;
            js.sink = curve_sink_pairs(&r->sink, r->at);
            io.at = r->at;
        }
        err_clear();
        rc = cv_join(r, &js, &io, &on_device);
        if (!reordered) /* a join over every row */
            r->t_full = on_device && r->t_kernel > 0 ? r->t_kernel : engine_now() - tj;
    }
    r->tr_join += engine_now() - tj;
    kern_trace_mark("curve: join");
    if (reordered)
        dataset_order_free(&g);
    if (rc)
        return rc;
    if ((r->sink.reach2 && (rc = ranks_min_f64(r->reach, n))) ||
        (rc = ranks_merge_lists(r->list, n)))
        return rc;
    c->rounds++;
    c->rounds_device += on_device;
    r->sink.reach2 = NULL;
    /* the join's own round and as many more as the lists prove */
    *more = cv_more(cv_merge(r, NULL));
    kern_trace_mark("curve: merged");
    r->tr_mark = engine_now();
    return 0;
}

/* The end where it was not made on the device: the sorts, one after
 * another, each on the device or on every core (faster than three
 * threads, one a sort: src/sort_f64.c), then the replay. */
static void cv_finish(cv_run *r, double *ts, double *tp)
{
    dbscan_curve *c = r->c;
    uint64_t *ab = NULL;
    *ts = engine_now();
    if (!c->end_device) {
        engine_opts od;
        const int dev = r->e->gpu && kern_device_count() > 0
                            ? engine_opts_or_default(r->spec->opts, &od)->device
                            : -1;
        curve_end_sorts(dev, r->forest, r->nf, r->core, r->reach, r->n, &c->edge2, &ab);
        c->nedge = r->nf;
        *ts = engine_now();
        curve_end_replay(c, ab);
        if (r->spec->keep_ends) {
            c->edge_ab = ab;
            ab = NULL;
        }
    }
    free(ab);
    curve_end_first(c, r->core);
    kern_trace_mark("curve: replay");
    *tp = engine_now();
}

static int cv_check(const engine *e, const dbscan_curve_spec *spec)
{
    const dataset *ds = spec->ds;
    if (!ds || ds->n == 0)
        return err_set(TCJ_EINVAL, "dbscan curve: no dataset loaded (use load or gen)");
    if (!(spec->max > 0) || !isfinite(spec->max))
        return err_set(TCJ_EINVAL, "dbscan curve: max must be a positive number");
    if (spec->minpts < 1 || spec->minpts > ds->n || spec->minpts > KDIST_MAX_K + 1)
        return err_set(TCJ_EINVAL, "dbscan curve: minpts must be 1 to %zu, got %zu",
                       ds->n < KDIST_MAX_K + 1 ? ds->n : (size_t)KDIST_MAX_K + 1, spec->minpts);
    if (ds->n > UINT32_MAX - 1)
        return err_set(TCJ_EINVAL, "dbscan curve: at most %u points", UINT32_MAX - 1);
    if (spec->minpts > 1 && !e->kdist)
        return err_set(TCJ_EUNSUP,
                       "dbscan curve: engine %s has no k-distance computation (use cpu)", e->name);
    return 0;
}

void dbscan_curve_plan_in(const engine *e, const dbscan_curve_spec *spec, curve_plan_in *in)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(spec->opts, &def);
    memset(in, 0, sizeof *in);
    in->n = spec->ds ? spec->ds->n : 0;
    in->minpts = spec->minpts;
    in->consume = e->consume != NULL;
    in->nranks = ranks_count();
    in->route = o->curve_route;
    in->knn_room = curve_knn_room(in->n);
}

int dbscan_curve_run(const engine *e, const dbscan_curve_spec *spec, dbscan_curve *c)
{
    memset(c, 0, sizeof *c);
    int rc = cv_check(e, spec);
    if (rc)
        return rc;
    curve_plan_in in;
    curve_plan p;
    dbscan_curve_plan_in(e, spec, &in);
    if ((rc = curve_plan_choose(&in, &p)))
        return rc;
    return dbscan_curve_run_plan(e, spec, &p, c);
}

int dbscan_curve_run_plan(const engine *e, const dbscan_curve_spec *spec, const curve_plan *p,
                          dbscan_curve *c)
{
    memset(c, 0, sizeof *c);
    int rc = cv_check(e, spec);
    if (rc)
        return rc;
    kern_trace_mark("curve: start");
    const double t0 = engine_now();
    cv_run r = {.e = e, .spec = spec, .p = p, .c = c, .n = spec->ds->n};
    c->n = r.n;
    c->minpts = spec->minpts;
    c->max = spec->max;
    c->max2 = spec->max * spec->max;
    snprintf(c->precision, sizeof c->precision, "%s", e->precision);
    if ((rc = cv_alloc(&r)))
        return rc;
    kern_trace_mark("curve: arrays");
    if (p->core != CURVE_CORE_NONE)
        rc = curve_core_run(e, spec, p, r.core, r.list, r.reach, r.kb, r.part,
                            p->merge_device ? &r.cm : NULL, c);
    c->kdist_seconds = r.t_full = engine_now() - t0;
    const double t1 = r.tr_mark = engine_now();
    if (rc == 0 && r.cm.finished) { /* the curve ended on the device with its first round */
        r.nf = r.cm.nf;
        c->merges_device++;
        c->end_device = 1;
    } else if (rc == 0) {
        cv_alloc_rounds(&r);
        int more = 1;
        if (c->knn) { /* the first round from the K nearest: no join */
            r.sink.reach2 = NULL;
            more = cv_more(cv_merge(&r, r.kb));
            r.tr_mark = engine_now();
            kern_trace_mark("curve: first merge taken");
        }
        while (more && rc == 0)
            rc = cv_round(&r, &more);
    }
    const curve_merging mg = r.mg; /* the trace's counts */
    cv_free(&r);
    if (rc) {
        free(r.core);
        free(r.forest);
        free(r.reach);
        dbscan_curve_free(c); /* what the curve's end took */
        return rc;
    }
    kern_trace_mark("curve: rounds' state freed");
    const double tt = engine_now();
    double ts, tp;
    cv_finish(&r, &ts, &tp);
    free(r.forest);
    c->core2 = r.core;
    c->reach2 = r.reach;
    c->forest_seconds = engine_now() - t1;
    if (kern_trace_on()) /* where the forest's time went (benchmarks) */
        fprintf(stderr,
                "dbscan curve trace (ms): route %s; first lists from the %zu nearest, set-up and "
                "later rows %.1f, joins %.1f, merges %.1f (%zu passes, %zu points scanned; "
                "lists sorted %.1f, scans %.1f, reductions %.1f, links %.1f), sorts %.1f, "
                "replay %.1f; on the device %d merges (%zu passes, %.1f ms)%s\n",
                p->why, c->knn, r.tr_rows * 1e3, r.tr_join * 1e3, mg.seconds * 1e3, mg.passes,
                mg.scanned, mg.s_init * 1e3, mg.s_scan * 1e3, mg.s_reduce * 1e3, mg.s_best * 1e3,
                (ts - tt) * 1e3, (tp - ts) * 1e3, c->merges_device, r.cm.passes, r.cm.seconds * 1e3,
                c->end_device ? ", the end there" : "");
    c->seconds = engine_now() - t0;
    return 0;
}

void dbscan_curve_free(dbscan_curve *c)
{
    free(c->core2);
    free(c->reach2);
    free(c->edge2);
    free(c->edge_ab);
    free(c->big_at);
    free(c->big);
    memset(c, 0, sizeof *c);
}

/* Values of v[0..m), ascending, that are <= x. */
static size_t count_le(const double *v, size_t m, double x)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void dbscan_curve_at(const dbscan_curve *c, double eps, size_t *clusters, size_t *core,
                     size_t *noise, size_t *largest)
{
    double e2 = eps * eps;
    if (e2 > c->max2)
        e2 = c->max2;
    size_t nc = count_le(c->core2, c->n, e2);
    if (core)
        *core = nc;
    if (clusters)
        *clusters = nc - count_le(c->edge2, c->nedge, e2);
    if (noise)
        *noise = c->n - count_le(c->reach2, c->n, e2);
    if (largest) {
        size_t k = count_le(c->big_at, c->nbig, e2);
        *largest = k ? c->big[k - 1] : 0;
    }
}
