#include "gpu64.h"

#include <stdio.h>
#include <string.h>

#include "cupti_prof.h"
#include "err.h"

int gpu64_available(int need_tc)
{
    if (kern_device_count() <= 0)
        return err_set(TCJ_ENODEV, "%s", kern_error());
    if (need_tc) {
        kern_device dv;
        if (kern_device_info(0, &dv) != 0)
            return err_set(TCJ_ENODEV, "no CUDA device: %s", kern_error());
        int cc = dv.major * 10 + dv.minor;
        if (!(cc == 80 || (dv.major >= 9 && dv.major <= 11)))
            return err_set(TCJ_ENODEV, "%s (sm_%d) has no FP64 tensor cores (need sm_80 or sm_90+)",
                           dv.name, cc);
    }
    return 0;
}

typedef struct gpu64_sink {
    const pair_sink *sink;
    int rc; /* the sink's own error code */
} gpu64_sink;

static int gpu64_put(void *ctx, size_t k, const uint32_t *i, const uint32_t *j, const double *d2)
{
    gpu64_sink *s = ctx;
    pair_batch b = {k, i, j, d2};
    int rc = s->sink->put(s->sink->ctx, &b);
    if (rc)
        s->rc = rc < 0 ? rc : TCJ_EIO;
    return rc;
}

/* One complete kernel job, repeatable in COUNT mode: what `profile` replays. */
typedef struct gpu64_launch {
    int (*fn)(kern_f64_job *);
    kern_f64_job *job;
} gpu64_launch;

static int gpu64_launch_once(void *ctx)
{
    gpu64_launch *l = ctx;
    return l->fn(l->job);
}

int gpu64_run(const join_spec *spec, join_result *res, int (*fn)(kern_f64_job *),
              const char *prep_phase)
{
    engine_opts defaults;
    const engine_opts *o = spec->opts;
    if (!o) {
        engine_opts_default(&defaults);
        o = &defaults;
    }
    gpu64_sink sk = {&spec->sink, 0};
    kern_f64_job job;
    memset(&job, 0, sizeof job);
    job.x = spec->ds->x;
    job.n = spec->ds->n;
    job.d = spec->ds->d;
    job.eps = spec->eps;
    job.q0 = spec->q0;
    job.q1 = spec->q1;
    job.cancel = spec->cancel;
    job.progress = spec->progress;
    job.progress_ctx = spec->progress_ctx;
    job.device = o->device;
    job.ted_paper = o->ted_paper;
    job.index_k = o->index_k;
    job.symmetric = o->symmetric;
    job.batch_pairs = o->batch_pairs ? o->batch_pairs : (size_t)1 << 22;
    switch (spec->mode) {
    case JOIN_COUNT:
        job.mode = KF64_COUNT;
        break;
    case JOIN_PERPOINT:
        job.mode = KF64_PERPOINT;
        job.counts = spec->counts;
        memset(spec->counts, 0, (spec->q1 - spec->q0) * sizeof *spec->counts);
        break;
    case JOIN_PAIRS:
        job.mode = KF64_PAIRS;
        job.pair_fn = gpu64_put;
        job.pair_ctx = &sk;
        break;
    case JOIN_HIST:
        job.mode = KF64_HIST;
        job.hist_edges = spec->hist_edges;
        job.hist_nbins = spec->hist_nbins;
        job.hist = spec->hist;
        job.hist_below = spec->hist_below;
        memset(spec->hist, 0, spec->hist_nbins * sizeof *spec->hist);
        *spec->hist_below = 0;
        break;
    }
    gpu64_launch gl = {fn, &job};
    int krc = cupti_prof_launch(gpu64_launch_once, &gl);
    snprintf(res->device, sizeof res->device, "%s", job.device_name);
    snprintf(res->variant, sizeof res->variant, "%s", job.variant);
    res->d_padded = job.d_padded ? job.d_padded : spec->ds->d;
    res->pairs = job.pairs;
    res->kernel_seconds = job.t_kernel;
    join_result_phase(res, "h2d", job.t_h2d);
    if (prep_phase)
        join_result_phase(res, prep_phase, job.t_prep);
    join_result_phase(res, "kernel", job.t_kernel);
    join_result_phase(res, "d2h", job.t_d2h);
    if (spec->mode == JOIN_PAIRS)
        join_result_phase(res, "sink", job.t_sink);
    if (spec->progress && krc == KERN_OK)
        spec->progress(spec->progress_ctx, 1.0);
    switch (krc) {
    case KERN_OK:
        return 0;
    case KERN_ESINK:
        return sk.rc ? sk.rc : err_set(TCJ_EIO, "the pair sink stopped the run");
    case KERN_ECANCEL:
        return err_set(TCJ_ECANCEL, "cancelled");
    case KERN_ENODEV:
        return err_set(TCJ_ENODEV, "%s", kern_error());
    case KERN_EINVAL:
        return err_set(TCJ_EINVAL, "%s", kern_error());
    default:
        return err_set(TCJ_EGPU, "%s", kern_error());
    }
}
