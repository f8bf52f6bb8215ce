/* Every GPU engine's run function: a join_spec becomes one kern_join_args,
 * the row's kernel entry (engine.kjoin: kern_fasted_run in the row's
 * format, kern_fp64_run, kern_ted_run, kern_ted_index_run) runs it through
 * kernels/' one launch loop, and its kern_join_result becomes a
 * join_result. The tensor-core rows' k-distance is the same three steps
 * around kern_fasted_kdist. The steps by role: src/engine_gpu_int.h. */
#include <stdio.h>
#include <string.h>

#include "cupti_prof.h"
#include "engine_gpu_int.h"
#include "err.h"

typedef struct gpu_sink {
    const pair_sink *sink;
    int rc; /* the sink's own error code */
} gpu_sink;

static int gpu_put(void *ctx, size_t k, const uint32_t *i, const uint32_t *j, const double *d2)
{
    gpu_sink *s = ctx;
    pair_batch b = {k, i, j, d2};
    int rc = s->sink->put(s->sink->ctx, &b);
    if (rc)
        s->rc = rc < 0 ? rc : TCJ_EIO;
    return rc;
}

/* One whole kernel run: what `profile ENGINE` replays per counter pass;
 * streamed in row chunks when the dataset does not fit the device. */
typedef struct gpu_launch {
    kern_join_fn fn;
    const kern_join_args *a;
    kern_join_result *r;
} gpu_launch;

static int gpu_launch_once(void *ctx)
{
    gpu_launch *l = ctx;
    return kern_stream_run(l->fn, l->a, l->r);
}

/* The join's output mode into a. */
static void gpu_mode(const join_spec *s, gpu_sink *sk, kern_join_args *a)
{
    a->eps = s->eps;
    switch (s->mode) {
    case JOIN_COUNT:
        a->mode = KJOIN_COUNT;
        break;
    case JOIN_PERPOINT:
        a->mode = KJOIN_PERPOINT;
        a->counts = s->counts;
        break;
    case JOIN_PAIRS:
        a->mode = KJOIN_PAIRS;
        a->pair_fn = gpu_put;
        a->pair_ctx = sk;
        break;
    case JOIN_HIST:
        a->mode = KJOIN_HIST;
        a->hist_edges = s->hist_edges;
        a->hist_nbins = s->hist_nbins;
        a->hist = s->hist;
        a->hist_below = s->hist_below;
        break;
    }
}

int engine_gpu_run(const join_spec *s, join_result *res)
{
    return engine_gpu_run_fmt(s, res, s->engine ? s->engine->format : NULL, 0);
}

int engine_gpu_run_fmt(const join_spec *s, join_result *res, const struct kern_format *fmt,
                       double scale)
{
    if (!s->engine || !s->engine->kjoin)
        return err_set(TCJ_EINVAL, "%s: not a GPU engine", s->engine ? s->engine->name : "?");
    const engine *e = s->engine;
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    gpu_sink sk = {&s->sink, 0};
    kern_join_args a;
    engine_gpu_args(s->ds, s->q0, s->q1, o, s->cancel, s->progress, s->progress_ctx, fmt, &a);
    gpu_mode(s, &sk, &a);
    a.tiles = s->tiles;
    /* The counters' range covers the calling thread's device only; the
     * devices of a list launch from threads of their own. */
    if (a.ndevices > 1 && cupti_prof_pending())
        return err_set(TCJ_EUNSUP,
                       "%s: profile measures one GPU and set devices lists %d; set devices "
                       "default, or one ordinal, to profile it",
                       e->name, a.ndevices);
    gpu_xform x;
    const double eps = join_spec_eps(s);
    int rc = engine_gpu_xform(e, s->ds, o, &eps, scale, &a, &x);
    if (rc)
        return rc;
    kern_trace_mark("gpu run: args");
    kern_join_result r;
    memset(&r, 0, sizeof r);
    gpu_launch gl = {e->kjoin, &a, &r};
    rc = cupti_prof_launch(gpu_launch_once, &gl); /* profile ENGINE's hook */
    res->pairs = r.pairs;
    engine_gpu_timing(&r, s->ds, s->mode == JOIN_PAIRS ? "sink" : NULL, res);
    if (e->format)
        snprintf(res->variant, sizeof res->variant, "%.40s, symmetric %s%s", r.variant,
                 r.symmetric ? "on" : "off", x.shifted ? ", shifted" : "");
    else
        snprintf(res->variant, sizeof res->variant, "%s", r.variant);
    engine_gpu_metrics(e, &a, &r, &x, 1, res);
    if (rc == KERN_OK && s->progress)
        s->progress(s->progress_ctx, 1.0);
    if (rc == KERN_ESINK)
        return sk.rc ? sk.rc : err_set(TCJ_EIO, "%s: the pair sink stopped the run", e->name);
    return engine_gpu_error(e->name, rc);
}

/* The k-distance of a tensor-core row: kern_fasted_kdist in the row's
 * format with the session's GPU options; res as a join's, without pairs.
 * exact (s->known set): the rows its passes can decide in FP64 are
 * flagged there, the others keep the estimate. */
int engine_gpu_kdist(const kdist_spec *s, join_result *res)
{
    const engine *e = s->engine;
    if (!e || !e->format)
        return err_set(TCJ_EINVAL, "%s: no tensor-core format", e ? e->name : "?");
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    kern_join_args a;
    engine_gpu_args(s->ds, s->q0, s->q1, o, s->cancel, s->progress, s->progress_ctx, e->format, &a);
    gpu_xform x;
    int rc = engine_gpu_xform(e, s->ds, o, NULL, 0, &a, &x);
    if (rc)
        return rc;
    a.kd_exact = e->exact ? s->known : NULL;
    kern_join_result r;
    memset(&r, 0, sizeof r);
    rc = kern_fasted_kdist(&a, s->k, s->out, &r);
    engine_gpu_timing(&r, s->ds, "select", res);
    /* The variant is what the kdist record keeps: it says when the
     * dataset did not fit the device and the query rows were streamed. */
    char cut[40] = "";
    if (r.chunks)
        snprintf(cut, sizeof cut, ", streamed %ux%zu", r.chunks, r.chunk_rows);
    snprintf(res->variant, sizeof res->variant, "%.40s, 3-pass top-K, symmetric %s%s%s", r.variant,
             o->symmetric && s->q0 == 0 && s->q1 == s->ds->n ? "on" : "off",
             x.shifted ? ", shifted" : "", cut);
    engine_gpu_metrics(e, &a, &r, &x, 0, res);
    return engine_gpu_error(e->name, rc);
}

/* The FP64 k-distances on the device: every pair by brute force, or the
 * grid's passes from radius r0. */
static int gpu_fp64_kdist(const kdist_spec *s, int brute, double r0, join_result *res)
{
    const engine *e = s->engine;
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    kern_join_args a;
    engine_gpu_args(s->ds, s->q0, s->q1, o, s->cancel, s->progress, s->progress_ctx, NULL, &a);
    kern_join_result r;
    memset(&r, 0, sizeof r);
    int rc = brute ? kern_fp64_kdist_brute(&a, s->k, s->out, &r)
                   : kern_fp64_grid_kdist(&a, s->k, r0, s->out, &r);
    engine_gpu_timing(&r, s->ds, NULL, res);
    snprintf(res->variant, sizeof res->variant, "%s", r.variant);
    return engine_gpu_error(e->name, rc);
}

int engine_gpu_grid_kdist(const kdist_spec *s, double r0, join_result *res)
{
    return gpu_fp64_kdist(s, 0, r0, res);
}

int engine_gpu_brute_kdist(const kdist_spec *s, join_result *res)
{
    return gpu_fp64_kdist(s, 1, 0, res);
}

/* DBSCAN's three passes on the device (kernels.h's kern_fp64_grid_dbscan). */
int engine_gpu_grid_dbscan(const engine *e, const dataset *ds, double eps, size_t minpts,
                           const engine_opts *opts, const volatile int *cancel, uint8_t *core,
                           int32_t *labels, uint64_t *pairs, double *core_s, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(opts, &def);
    kern_join_args a;
    engine_gpu_args(ds, 0, ds->n, o, cancel, NULL, NULL, NULL, &a);
    a.eps = eps;
    kern_join_result r;
    memset(&r, 0, sizeof r);
    unsigned long long np = 0;
    int rc = kern_fp64_grid_dbscan(&a, minpts, core, labels, &np, core_s, &r);
    *pairs = np;
    res->pairs = r.pairs;
    engine_gpu_timing(&r, ds, NULL, res);
    /* rows of the dense cells were made core without a distance, so *pairs
     * counts the other rows' neighbours only */
    join_result_metric(res, "dense_cells", (double)r.dense_cells, "");
    join_result_metric(res, "dense_rows", (double)r.dense_rows, "rows");
    snprintf(res->variant, sizeof res->variant, "%s", r.variant);
    return engine_gpu_error(e->name, rc);
}
