/* The fasted engine: FP16 inputs, FP32 accumulation on tensor cores (the
 * FASTED paper), through kern_fasted_run. Maps a join_spec to the kernel's
 * arguments and the kernel's timings to join phases. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_prof.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"

/* Pair batches from the device arrive with FP32 d2; the sink wants double. */
typedef struct fasted_sink_ctx {
    const pair_sink *sink;
    double *d2;
    size_t cap;
    int rc;
} fasted_sink_ctx;

static int fasted_put(void *ctx, size_t k, const uint32_t *i, const uint32_t *j, const float *d2)
{
    fasted_sink_ctx *c = ctx;
    if (k > c->cap) {
        free(c->d2);
        c->d2 = xmalloc(k * sizeof *c->d2);
        c->cap = k;
    }
    for (size_t t = 0; t < k; t++)
        c->d2[t] = d2[t];
    pair_batch b = {k, i, j, c->d2};
    c->rc = c->sink->put(c->sink->ctx, &b);
    return c->rc;
}

/* One whole kern_fasted_run: what `profile fasted` replays per counter pass. */
typedef struct fasted_launch {
    const kern_fasted_args *a;
    kern_fasted_result *r;
} fasted_launch;

static int fasted_launch_once(void *ctx)
{
    fasted_launch *l = ctx;
    return kern_fasted_run(l->a, l->r);
}

static int fasted_available(void)
{
    if (!kern_built_with_cuda())
        return err_set(TCJ_ENODEV, "fasted: %s", kern_error());
    if (kern_device_count() == 0)
        return err_set(TCJ_ENODEV, "fasted: no CUDA device (%s)", kern_error());
    return 0;
}

static int fasted_run(const join_spec *s, join_result *res)
{
    const engine_opts *o = s->opts;
    engine_opts def;
    if (!o) {
        engine_opts_default(&def);
        o = &def;
    }
    kern_fasted_args a;
    memset(&a, 0, sizeof a);
    a.x = s->ds->x;
    a.n = s->ds->n;
    a.d = s->ds->d;
    a.hash = s->ds->hash;
    a.q0 = s->q0;
    a.q1 = s->q1;
    a.eps = s->eps;
    a.symmetric = o->symmetric;
    a.off = o->fasted_off;
    a.device = o->device;
    a.batch_pairs = o->batch_pairs ? o->batch_pairs : (size_t)1 << 22;
    a.cancel = s->cancel;
    a.progress = s->progress;
    a.progress_ctx = s->progress_ctx;
    fasted_sink_ctx sc = {&s->sink, NULL, 0, 0};
    switch (s->mode) {
    case JOIN_COUNT:
        a.mode = KFASTED_COUNT;
        break;
    case JOIN_PERPOINT:
        a.mode = KFASTED_PERPOINT;
        a.counts = s->counts;
        break;
    case JOIN_PAIRS:
        a.mode = KFASTED_PAIRS;
        a.pair_fn = fasted_put;
        a.pair_ctx = &sc;
        break;
    case JOIN_HIST:
        a.mode = KFASTED_HIST;
        a.hist_edges = s->hist_edges;
        a.hist_nbins = s->hist_nbins;
        a.hist = s->hist;
        a.hist_below = s->hist_below;
        break;
    }
    kern_fasted_result r;
    fasted_launch fl = {&a, &r};
    int rc = cupti_prof_launch(fasted_launch_once, &fl); /* profile ENGINE's hook */
    free(sc.d2);
    if (rc == KERN_ESINK && sc.rc)
        return sc.rc; /* the sink's own code and message */
    if (rc == KERN_ECANCEL)
        return err_set(TCJ_ECANCEL, "cancelled");
    if (rc == KERN_ENODEV)
        return err_set(TCJ_ENODEV, "fasted: %s", kern_error());
    if (rc == KERN_EINVAL)
        return err_set(TCJ_EINVAL, "%s", kern_error());
    if (rc)
        return err_set(TCJ_EGPU, "fasted: %s", kern_error());
    res->pairs = r.pairs;
    res->kernel_seconds = r.t_kernel;
    res->d_padded = r.d_padded;
    join_result_phase(res, "h2d", r.t_h2d);
    join_result_phase(res, "convert", r.t_convert);
    join_result_phase(res, "norms", r.t_norms);
    join_result_phase(res, "kernel", r.t_kernel);
    join_result_phase(res, s->mode == JOIN_PAIRS ? "sink" : "d2h", r.t_drain);
    snprintf(res->device, sizeof res->device, "%s", r.device_name);
    snprintf(res->variant, sizeof res->variant, "%.40s, symmetric %s", r.variant,
             r.symmetric ? "on" : "off");
    join_result_metric(res, "cache_hit", r.cache_hit, "");
    join_result_metric(res, "launches", (double)r.launches, "");
    join_result_metric(res, "buffer_refills", (double)r.refills, "");
    double nq = (double)(s->q1 - s->q0);
    /* Derived TFLOPS (padded d): the paper's count for the work done; a
     * symmetric run does about half the tiles. */
    double work = r.symmetric ? 0.5 : 1.0;
    join_result_metric(res, "tflops_padded",
                       work * engine_tflops(nq, (double)s->ds->n, (double)r.d_padded, r.t_kernel),
                       "TFLOPS");
    join_result_metric(res, "tflops_paper",
                       engine_tflops(nq, (double)s->ds->n, (double)r.d_padded, r.t_kernel),
                       "TFLOPS");
    return 0;
}

const engine engine_fasted = {
    .name = "fasted",
    .precision = "fp16-32",
    .summary = "FASTED: FP16 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else "
               "mma.sync)",
    .gpu = 1,
    .available = fasted_available,
    .run = fasted_run,
};
