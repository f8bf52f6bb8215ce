/* engine.consume of the GPU rows (the tensor-core formats, and exact's
 * off its grid path): the row's own PAIRS run over the same args and
 * transforms as its runs, its pairs consumed where they are computed
 * (kernels/kern_dbscan.cu, kern_curve_core.cu, kern_curve.cu) into what
 * the clustering layer's host route would build from the same pairs
 * (src/cluster/): the same eps-graph, lists and reachabilities, so the
 * same labels and curve (and HDBSCAN*'s rounds, exact's alone: the
 * masked nearest neighbour in the pass, kern_mst_round; and the library's
 * radius graph, kern_graph_run: the pairs in place), without the pairs (6.5e7 at 10^6 x 128, S
 * = 64) crossing to the host. Declined (the layer's host route) under several ranks, whose runs
 * share the tiles while each of these would run whole on every rank, and where the state or the
 * dataset does not fit a device. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_gpu_int.h"
#include "err.h"
#include "ranks.h"

/* A run's record from its kernel result: timings, metrics (the cluster
 * cut's groups among them), variant and precision. */
static void consume_record(const join_spec *s, const kern_join_args *a, const gpu_xform *x,
                           const kern_join_result *r, double seconds, join_result *jr)
{
    jr->pairs = r->pairs;
    engine_gpu_timing(r, s->ds, NULL, jr);
    engine_gpu_metrics(s->engine, a, r, x, 1, jr);
    snprintf(jr->variant, sizeof jr->variant, "%.90s", r->variant);
    snprintf(jr->precision, sizeof jr->precision, "%s", s->engine->precision);
    jr->seconds = seconds;
}

/* DBSCAN's passes (kern_dbscan): the core pass recorded as its PERPOINT
 * join (c->first), the union and border passes as the rest (res), which
 * runs only where some row is core. */
static int consume_dbscan(const join_spec *s, pair_consumer *c, join_result *res,
                          const kern_join_args *a, const gpu_xform *x, kern_join_fn fn, double t0)
{
    kern_join_result rcore, r;
    const int krc = kern_dbscan(fn, a, c->dbscan, &rcore, &r);
    kern_trace_mark("gpu dbscan: kern_dbscan");
    if (krc == KERN_ENOMEM) { /* no streamed form: the layer's passes through a sink */
        err_clear();
        return ENGINE_DECLINED;
    }
    const int rc = engine_gpu_error(s->engine->name, krc);
    if (rc)
        return rc;
    const double all = engine_now() - t0, core_s = c->dbscan->core_s;
    consume_record(s, a, x, &rcore, core_s, c->first);
    c->dbscan->pairs = rcore.pairs;
    if (c->dbscan->ncore > 0) {
        consume_record(s, a, x, &r, all - core_s, res);
        c->rest_ran = 1;
        c->rest_mode = JOIN_PAIRS;
    }
    return 0;
}

/* The curve's core join (kern_curve_core) or one of its rounds
 * (kern_curve_round); a merging given with the io runs where the lists
 * are (its done says whether it did). */
static int consume_curve(const join_spec *s, pair_consumer *c, join_result *res,
                         const kern_join_args *a, const gpu_xform *x, kern_join_fn fn)
{
    kern_join_result r;
    curve_merge *m = c->use == PAIRS_CURVE_CORE ? c->core->merge : c->round->merge;
    const int krc = c->use == PAIRS_CURVE_CORE ? kern_curve_core(fn, a, c->core, &r)
                                               : kern_curve_round(fn, a, c->round, &r);
    kern_trace_mark("gpu consume: curve run");
    if (krc && m)
        m->done = m->finished = 0;
    if (krc == KERN_ENOMEM) { /* the state or the dataset does not fit: the sink */
        err_clear();
        return ENGINE_DECLINED;
    }
    res->pairs = r.pairs;
    engine_gpu_timing(&r, s->ds, NULL, res);
    snprintf(res->variant, sizeof res->variant, "%.90s", r.variant);
    engine_gpu_metrics(s->engine, a, &r, x, 1, res);
    kern_trace_mark("gpu consume: record");
    return engine_gpu_error(s->engine->name, krc);
}

/* One round of HDBSCAN*'s tree (kern_mst_round): the pass in the row's
 * format and transforms, its estimates decided in FP64 there. */
static int consume_mst(const join_spec *s, pair_consumer *c, join_result *res,
                       const kern_join_args *a, const gpu_xform *x)
{
    kern_join_result r;
    const int krc = kern_mst_round(a, c->mst, &r);
    kern_trace_mark("gpu consume: mst round");
    if (krc == KERN_ENOMEM) { /* the state or the dataset does not fit: the host's round */
        err_clear();
        return ENGINE_DECLINED;
    }
    engine_gpu_timing(&r, s->ds, "fp64", res);
    snprintf(res->variant, sizeof res->variant, "%.90s", r.variant);
    engine_gpu_metrics(s->engine, a, &r, x, 1, res);
    return engine_gpu_error(s->engine->name, krc);
}

/* The radius graph (kern_graph_run): the run's PAIRS, recorded as one. */
static int consume_graph(const join_spec *s, pair_consumer *c, join_result *res,
                         const kern_join_args *a, const gpu_xform *x, kern_join_fn fn, double t0)
{
    kern_join_result r;
    const int krc = kern_graph_run(fn, a, c->graph, &r);
    kern_trace_mark("gpu consume: graph");
    if (krc == KERN_ENOMEM) { /* the entries do not fit, or several devices: the host's route */
        err_clear();
        return ENGINE_DECLINED;
    }
    const int rc = engine_gpu_error(s->engine->name, krc);
    if (!rc)
        consume_record(s, a, x, &r, engine_now() - t0, res);
    return rc;
}

int engine_gpu_consume_fn(const join_spec *s, pair_consumer *c, join_result *res, double scale,
                          engine_kjoin_fn fn)
{
    if (ranks_count() > 1)
        return ENGINE_DECLINED;
    /* HDBSCAN*'s round is exact's alone: its FP64 stage decides what the
     * pass estimates (the host's round otherwise, FP64 too) */
    if (c->use == PAIRS_MST_ROUND && !s->engine->exact)
        return ENGINE_DECLINED;
    /* a subset join: exact's pass alone (kern_exact_run), a curve round */
    if (s->sub &&
        (!s->engine->exact || c->use != PAIRS_CURVE_ROUND || s->q0 != 0 || s->q1 != s->ds->n))
        return ENGINE_DECLINED;
    const dataset *ds = s->ds;
    /* the core join and DBSCAN run over every row of the dataset */
    if (c->use != PAIRS_CURVE_ROUND && (s->q0 != 0 || s->q1 != ds->n))
        return ENGINE_DECLINED;
    if (ds->n > UINT32_MAX - 1)
        return ENGINE_DECLINED;
    const double t0 = engine_now();
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    kern_join_args a;
    gpu_xform x;
    const int dbscan = c->use == PAIRS_DBSCAN;
    /* the graph's pairs come with their d2 and its progress is the run's */
    int rc =
        engine_gpu_pairs_args(s->engine, ds, s->q0, s->q1, s->eps, o, scale, s->cancel,
                              dbscan ? NULL : s->progress, dbscan ? NULL : s->progress_ctx, &a, &x);
    if (rc)
        return rc;
    a.sub = s->sub;
    a.nsub = s->nsub;
    a.sub_q = s->sub_q;
    kern_trace_mark("gpu consume: args");
    if (c->use == PAIRS_MST_ROUND)
        return consume_mst(s, c, res, &a, &x);
    if (c->use == PAIRS_GRAPH)
        return consume_graph(s, c, res, &a, &x, fn, t0);
    return dbscan ? consume_dbscan(s, c, res, &a, &x, fn, t0)
                  : consume_curve(s, c, res, &a, &x, fn);
}

int engine_gpu_consume(const join_spec *s, pair_consumer *c, join_result *res)
{
    return engine_gpu_consume_fn(s, c, res, 0, s->engine->kjoin);
}
