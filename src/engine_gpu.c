/* Every GPU engine's run function: a join_spec becomes one kern_join_args,
 * the row's kernel entry (engine.kjoin: kern_fasted_run in the row's
 * format, kern_fp64_run, kern_ted_run, kern_ted_index_run) runs it through
 * kernels/' one launch loop, and its kern_join_result becomes a
 * join_result: phases, device, variant and the metrics every GPU run
 * records. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "center_exact.h"
#include "cupti_prof.h"
#include "devices.h"
#include "engine.h"
#include "err.h"
#include "fmt_fit.h"
#include "kernels.h"
#include "shift.h"

static int gpu_error(const char *name, int rc);

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

/* A row whose lab format is scaled (FP8): the power of two its run
 * applies to the (centred) data, into fit; 0 when the format is not. */
static int gpu_scale(const engine *e, const dataset *ds, const double *center, fmt_fit *fit)
{
    const fmt_fit_format *ff = e->format ? fmt_fit_find(e->lab) : NULL;
    if (!ff || !ff->scaled)
        return 0;
    fmt_fit_engine(ds, center, ff, fit);
    return 1;
}

/* An unsigned row (ue5m3, ue4m4): with `set shift on` the column minima
 * take the place of centring's means in *center (*shifted = 1); without,
 * negative data are refused with one line. 0 for every other row. */
static int gpu_unsigned(const engine *e, const dataset *ds, const engine_opts *o,
                        const double **center, int *shifted)
{
    *shifted = 0;
    if (!e->shifts)
        return 0;
    if (!o->shift)
        return shift_refuse_negative(ds, e->name, e->lab, "fasted or bf16");
    *center = shift_mins(ds);
    *shifted = 1;
    return 0;
}

static void gpu_scale_metrics(join_result *res, const fmt_fit *fit)
{
    join_result_metric(res, "scale_log2", fit->scale, "");
    join_result_metric(res, "underflow_values", (double)fit->underflow, "");
}

/* The dataset as the kernels read it: in its own type, widened to FP64 a
 * block of rows at a time by the type's row of src/dtype.c. */
static void gpu_data(const dataset *ds, kern_join_args *a)
{
    const dtype *t = dataset_dtype(ds);
    a->x = ds->v;
    a->x_bytes = t->bytes;
    a->x_to_f64 = t->id == DTYPE_F64 ? NULL : t->to_f64;
    a->x_type = (int)t->id;
}
_Static_assert(KERN_X_F64 == (int)DTYPE_F64 && KERN_X_F32 == (int)DTYPE_F32 &&
                   KERN_X_F16 == (int)DTYPE_F16 && KERN_X_U8 == (int)DTYPE_U8,
               "kernels.h's element types follow src/dtype.h's ids");

static void gpu_args(const join_spec *s, const engine_opts *o, gpu_sink *sk,
                     const struct kern_format *fmt, kern_join_args *a)
{
    memset(a, 0, sizeof *a);
    gpu_data(s->ds, a);
    a->n = s->ds->n;
    a->d = s->ds->d;
    a->hash = s->ds->hash;
    a->q0 = s->q0;
    a->q1 = s->q1;
    a->eps = s->eps;
    a->symmetric = o->symmetric;
    a->device = o->device;
    a->ndevices = devices_resolve(o, a->devices);
    if (a->ndevices > 0)
        a->device = a->devices[0];
    a->batch_pairs = o->batch_pairs ? o->batch_pairs : (size_t)1 << 22;
    a->mem_cap = o->gpu_mem;
    a->cancel = s->cancel;
    a->progress = s->progress;
    a->progress_ctx = s->progress_ctx;
    a->format = fmt;
    a->center = !s->engine->centers ? NULL
                : s->engine->exact  ? center_pick_exact(s->ds, o->center, join_spec_eps(s))
                                    : center_pick(s->ds, o->center, s->engine->center_auto);
    a->off = o->fasted_off;
    a->acc_fast = o->fp8_acc_fast;
    a->ted_paper = o->ted_paper;
    a->index_k = o->index_k;
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

/* A run over a device list (`set devices`): how many, and each one's
 * share as counters named after its ordinal (the run record's columns
 * stay as they are). */
static void gpu_shares(const kern_join_result *r, join_result *res)
{
    if (r->ndevices <= 0)
        return;
    join_result_metric(res, "devices", r->ndevices, "");
    for (int t = 0; t < r->ndevices && t < KERN_MAX_DEVICES; t++) {
        const kern_device_share *d = &r->share[t];
        char name[64];
        snprintf(name, sizeof name, "dev%d_items", d->device);
        join_result_metric(res, name, (double)d->items, "items");
        snprintf(name, sizeof name, "dev%d_kernel_s", d->device);
        join_result_metric(res, name, d->t_kernel, "s");
        snprintf(name, sizeof name, "dev%d_pairs", d->device);
        join_result_metric(res, name, (double)d->pairs, "pairs");
    }
}

/* The dataset did not fit the device: how a run (a join or a
 * k-distance) was streamed. */
static void gpu_stream_metrics(const kern_join_result *r, join_result *res)
{
    if (!r->chunks)
        return;
    join_result_metric(res, "stream_chunks", r->chunks, "");
    join_result_metric(res, "stream_chunk_rows", (double)r->chunk_rows, "rows");
    join_result_metric(res, "stream_runs", (double)r->chunk_runs, "");
    if (r->slabs) {
        /* Cut in slabs of the rows sorted along one dimension (an engine
         * whose grid index covers every row). */
        join_result_metric(res, "stream_slab_dim", r->slab_dim, "");
        join_result_metric(res, "stream_halo_rows", (double)r->halo_rows, "rows");
    }
}

/* Cut by clusters (exact's cluster path, kern_cluster_run): the groups
 * joined and the share of the pairs the run joined. */
static void gpu_cluster_metrics(const kern_join_result *r, join_result *res)
{
    if (!r->clusters)
        return;
    join_result_metric(res, "clusters", r->clusters, "");
    join_result_metric(res, "cluster_work", r->cluster_work, "");
}

static void gpu_result(const join_spec *s, const kern_join_result *r, int shifted, join_result *res)
{
    const int tc = s->engine->format != NULL;
    res->pairs = r->pairs;
    res->kernel_seconds = r->t_kernel;
    res->d_padded = r->d_padded ? r->d_padded : s->ds->d;
    join_result_phase(res, "h2d", r->t_h2d);
    if (r->convert_name)
        join_result_phase(res, r->convert_name, r->t_convert);
    if (r->prep_name)
        join_result_phase(res, r->prep_name, r->t_prep);
    join_result_phase(res, "kernel", r->t_kernel);
    join_result_phase(res, "d2h", r->t_d2h);
    if (s->mode == JOIN_PAIRS)
        join_result_phase(res, "sink", r->t_sink);
    snprintf(res->device, sizeof res->device, "%s", r->device_name);
    if (tc)
        snprintf(res->variant, sizeof res->variant, "%.40s, symmetric %s%s", r->variant,
                 r->symmetric ? "on" : "off", shifted ? ", shifted" : "");
    else
        snprintf(res->variant, sizeof res->variant, "%s", r->variant);
    /* What the engine converted or built was already on the device (the
     * tensor-core formats' dataset, the grid engines' index; 0 for the
     * engines that keep nothing). */
    join_result_metric(res, "cache_hit", r->cache_hit, "");
    if (s->engine->centers)
        join_result_metric(res, "centred", r->centred, "");
    if (s->engine->shifts)
        join_result_metric(res, "shifted", shifted, "");
    join_result_metric(res, "launches", (double)r->launches, "");
    join_result_metric(res, "buffer_refills", (double)r->refills, "");
    join_result_metric(res, "device_mem_peak", (double)r->mem_peak, "B");
    join_result_metric(res, "buffers_shrunk", r->shrunk, "");
    if (s->mode == JOIN_PAIRS)
        join_result_metric(res, "pair_buffer", (double)r->pair_cap, "pairs");
    if (tc && s->engine->exact) {
        const kern_exact_counts *e = &r->ex;
        join_result_metric(res, "refined_pairs", (double)e->refined, "pairs");
        join_result_metric(res, "refined_fraction",
                           r->pairs ? (double)e->refined / (double)r->pairs : 0, "");
        join_result_metric(res, "band_pairs", (double)e->band, "pairs");
        join_result_metric(res, "listed_pairs", (double)e->listed, "pairs");
        join_result_metric(res, "band_fraction", r->pairs ? (double)e->band / (double)r->pairs : 0,
                           "");
        join_result_metric(res, "sequential_pairs", (double)e->sequential, "pairs");
        join_result_metric(res, "refine_kernel", e->t_refine, "s");
    }
    gpu_shares(r, res);
    gpu_stream_metrics(r, res);
    gpu_cluster_metrics(r, res);
    if (!tc)
        return;
    double nq = (double)(s->q1 - s->q0);
    /* Derived TFLOPS (padded d): the paper's count for the work done; a
     * symmetric run does about half the tiles, a cluster cut its share. */
    double work = (r->symmetric ? 0.5 : 1.0) * (r->clusters ? r->cluster_work : 1.0);
    join_result_metric(res, "tflops_padded",
                       work * engine_tflops(nq, (double)s->ds->n, (double)r->d_padded, r->t_kernel),
                       "TFLOPS");
    join_result_metric(res, "tflops_paper",
                       engine_tflops(nq, (double)s->ds->n, (double)r->d_padded, r->t_kernel),
                       "TFLOPS");
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
    const char *name = s->engine->name;
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    gpu_sink sk = {&s->sink, 0};
    kern_join_args a;
    gpu_args(s, o, &sk, fmt, &a);
    /* The counters' range covers the calling thread's device only; the
     * devices of a list launch from threads of their own. */
    if (a.ndevices > 1 && cupti_prof_pending())
        return err_set(TCJ_EUNSUP,
                       "%s: profile measures one GPU and set devices lists %d; set devices "
                       "default, or one ordinal, to profile it",
                       name, a.ndevices);
    int shifted, rc0 = gpu_unsigned(s->engine, s->ds, o, &a.center, &shifted);
    if (rc0)
        return rc0;
    fmt_fit fit;
    const int scaled = gpu_scale(s->engine, s->ds, a.center, &fit);
    if (scaled)
        a.scale = ldexp(1.0, fit.scale);
    else if (scale)
        a.scale = scale;
    kern_join_result r;
    memset(&r, 0, sizeof r);
    gpu_launch gl = {s->engine->kjoin, &a, &r};
    int rc = cupti_prof_launch(gpu_launch_once, &gl); /* profile ENGINE's hook */
    gpu_result(s, &r, shifted, res);
    if (scaled)
        gpu_scale_metrics(res, &fit);
    if (rc == KERN_OK && s->progress)
        s->progress(s->progress_ctx, 1.0);
    if (rc == KERN_ESINK)
        return sk.rc ? sk.rc : err_set(TCJ_EIO, "%s: the pair sink stopped the run", name);
    return gpu_error(name, rc);
}

/* The k-distance of a tensor-core row: kern_fasted_kdist in the row's
 * format with the session's GPU options; res as a join's, without pairs. */
int engine_gpu_kdist(const kdist_spec *s, join_result *res)
{
    const engine *e = s->engine;
    if (!e || !e->format)
        return err_set(TCJ_EINVAL, "%s: no tensor-core format", e ? e->name : "?");
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    kern_join_args a;
    memset(&a, 0, sizeof a);
    gpu_data(s->ds, &a);
    a.n = s->ds->n;
    a.d = s->ds->d;
    a.hash = s->ds->hash;
    a.q0 = s->q0;
    a.q1 = s->q1;
    a.symmetric = o->symmetric;
    /* Over a `set devices` list the query rows are shared out in blocks. */
    a.device = o->device;
    a.ndevices = devices_resolve(o, a.devices);
    if (a.ndevices > 0)
        a.device = a.devices[0];
    a.batch_pairs = o->batch_pairs ? o->batch_pairs : (size_t)1 << 22;
    a.mem_cap = o->gpu_mem;
    a.acc_fast = o->fp8_acc_fast;
    a.cancel = s->cancel;
    a.progress = s->progress;
    a.progress_ctx = s->progress_ctx;
    a.format = e->format;
    a.center = e->centers ? center_pick(s->ds, o->center, e->exact || e->center_auto) : NULL;
    a.off = o->fasted_off;
    int shifted, rc0 = gpu_unsigned(e, s->ds, o, &a.center, &shifted);
    if (rc0)
        return rc0;
    fmt_fit fit;
    const int scaled = gpu_scale(e, s->ds, a.center, &fit);
    if (scaled)
        a.scale = ldexp(1.0, fit.scale);
    kern_join_result r;
    memset(&r, 0, sizeof r);
    int rc = kern_fasted_kdist(&a, s->k, s->out, &r);
    res->kernel_seconds = r.t_kernel;
    res->d_padded = r.d_padded ? r.d_padded : s->ds->d;
    join_result_phase(res, "h2d", r.t_h2d);
    if (r.convert_name)
        join_result_phase(res, r.convert_name, r.t_convert);
    if (r.prep_name)
        join_result_phase(res, r.prep_name, r.t_prep);
    join_result_phase(res, "kernel", r.t_kernel);
    join_result_phase(res, "d2h", r.t_d2h);
    join_result_phase(res, "select", r.t_sink);
    snprintf(res->device, sizeof res->device, "%s", r.device_name);
    /* The variant is what the kdist record keeps: it says when the
     * dataset did not fit the device and the query rows were streamed. */
    char cut[40] = "";
    if (r.chunks)
        snprintf(cut, sizeof cut, ", streamed %ux%zu", r.chunks, r.chunk_rows);
    snprintf(res->variant, sizeof res->variant, "%.40s, 3-pass top-K, symmetric %s%s%s", r.variant,
             o->symmetric && s->q0 == 0 && s->q1 == s->ds->n ? "on" : "off",
             shifted ? ", shifted" : "", cut);
    join_result_metric(res, "cache_hit", r.cache_hit, "");
    if (e->centers)
        join_result_metric(res, "centred", r.centred, "");
    if (e->shifts)
        join_result_metric(res, "shifted", shifted, "");
    join_result_metric(res, "launches", (double)r.launches, "");
    join_result_metric(res, "device_mem_peak", (double)r.mem_peak, "B");
    gpu_shares(&r, res);
    gpu_stream_metrics(&r, res);
    if (scaled)
        gpu_scale_metrics(res, &fit);
    return gpu_error(e->name, rc);
}

/* A kernel entry's return code as a TCJ_E* code with its message. */
static int gpu_error(const char *name, int rc)
{
    switch (rc) {
    case KERN_OK:
        return 0;
    case KERN_ESINK:
        return err_set(TCJ_EIO, "%s: the pair sink stopped the run", name);
    case KERN_ECANCEL:
        return err_set(TCJ_ECANCEL, "cancelled");
    case KERN_ENODEV:
        return err_set(TCJ_ENODEV, "%s: %s", name, kern_error());
    case KERN_EINVAL:
        return err_set(TCJ_EINVAL, "%s: %s", name, kern_error());
    case KERN_ENOMEM:
        return err_set(TCJ_ENOMEM, "%s: %s", name, kern_error());
    default:
        return err_set(TCJ_EGPU, "%s: %s", name, kern_error());
    }
}
