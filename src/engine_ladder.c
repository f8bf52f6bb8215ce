/* `ladder`: one rung of the teaching ladder (kernels/ladder/, docs/
 * TEACHING.md), the ε-join in COUNT mode as that rung's kernel computes it.
 * `ladder` runs every rung in turn; `set ladder-rung N` then `run ladder`
 * runs one on any dataset (to see whether a rung holds on your data and
 * your GPU). The rungs past KERN_LADDER_OWN are FASTED's own kernel: run
 * them as their engines (fasted, fp8-e4m3, int8). */
#include <stdio.h>
#include <stdlib.h>

#include "cupti_prof.h"
#include "engine.h"
#include "engine_gpu_int.h"
#include "err.h"
#include "kernels.h"
#include "mem.h"

/* The rung o asks for (0: the last own rung). */
static const kern_ladder_rung *ladder_rung_of(const engine_opts *o)
{
    const int id = o && o->ladder_rung ? o->ladder_rung : KERN_LADDER_OWN;
    return kern_ladder_find(id);
}

static int ladder_available(const engine_opts *o)
{
    kern_device dv;
    int rc = engine_gpu_device("ladder", o, &dv);
    if (rc)
        return rc;
    const kern_ladder_rung *r = ladder_rung_of(o);
    if (!r || r->engine)
        return err_set(TCJ_EINVAL, "ladder: rung %d is not a kernel of kernels/ladder/ (1..%d)%s%s",
                       o ? o->ladder_rung : 0, KERN_LADDER_OWN,
                       r && r->engine ? "; run it as engine " : "",
                       r && r->engine ? r->engine : "");
    char why[256];
    rc = kern_ladder_check(r, &dv, why, sizeof why);
    if (rc)
        return err_set(rc == KERN_EINVAL ? TCJ_EINVAL : TCJ_EUNSUP, "%s", why);
    return 0;
}

/* The profiler's hook (src/cupti_prof.h): one complete, repeatable run. */
typedef struct ladder_call {
    kern_ladder_args a;
    kern_ladder_result r;
} ladder_call;

static int ladder_launch_once(void *ctx)
{
    ladder_call *c = ctx;
    return kern_ladder_run(&c->a, &c->r);
}

static int ladder_run(const join_spec *s, join_result *res)
{
    const dataset *ds = s->ds;
    const engine_opts *o = s->opts;
    const kern_ladder_rung *r = ladder_rung_of(o);
    if (s->mode != JOIN_COUNT)
        return err_set(TCJ_EUNSUP,
                       "ladder: a rung counts pairs only (COUNT mode); fasted streams them");
    if (s->q0 != 0 || s->q1 != ds->n)
        return err_set(TCJ_EUNSUP, "ladder: a rung joins every row (no rows=)");
    float *x = mem_alloc("ladder", "an FP32 copy of the rows", ds->n * ds->d, sizeof(float), 0);
    if (!x)
        return TCJ_ENOMEM;
    /* widened a block of rows at a time: no FP64 copy of the whole set */
    enum { BLK = 4096 };
    double *w = mem_alloc("ladder", "a block of FP64 rows", (size_t)BLK * ds->d, sizeof(double), 0);
    if (!w) {
        free(x);
        return TCJ_ENOMEM;
    }
    for (size_t i0 = 0; i0 < ds->n; i0 += BLK) {
        const size_t m = ds->n - i0 < BLK ? ds->n - i0 : BLK;
        dataset_rows_f64(ds, i0, m, w);
        for (size_t k = 0; k < m * ds->d; k++)
            x[i0 * ds->d + k] = (float)w[k];
    }
    free(w);
    ladder_call c = {
        .a = {.rung = r->id,
              .device = o ? o->device : 0,
              .x = x,
              .n = ds->n,
              .d = ds->d,
              .eps = s->eps,
              /* the profiler replays each call: one timed launch is enough
               * there, and its time is not the rung's */
              .reps = cupti_prof_pending() ? 1 : 3,
              .cancel = s->cancel},
    };
    int rc = cupti_prof_launch(ladder_launch_once, &c);
    free(x);
    if (rc)
        return engine_gpu_error("ladder", rc);
    res->pairs = c.r.pairs;
    res->kernel_seconds = c.r.t_kernel;
    res->d_padded = c.r.d_padded;
    join_result_phase(res, "h2d", c.r.t_h2d);
    join_result_phase(res, "convert", c.r.t_convert);
    join_result_phase(res, "kernel", c.r.t_kernel);
    snprintf(res->variant, sizeof res->variant, "%s", c.r.variant);
    snprintf(res->precision, sizeof res->precision, "%s", r->unit[0] == 'c' ? "fp32" : "fp16-32");
    kern_device dv;
    if (kern_device_info(o ? o->device : 0, &dv) == 0)
        snprintf(res->device, sizeof res->device, "%.80s (sm_%d%d, %d SMs)", dv.name, dv.major,
                 dv.minor, dv.sms);
    join_result_metric(res, "ladder.rung", r->id, "");
    join_result_metric(res, "ladder.reps", c.r.reps, "");
    join_result_metric(res, "regs_per_thread", c.r.regs, "");
    join_result_metric(res, "blocks_per_sm", c.r.blocks_per_sm, "");
    join_result_metric(res, "blocks", (double)c.r.blocks, "");
    return 0;
}

const engine engine_ladder = {
    .name = "ladder",
    .precision = "fp16-32",
    .summary =
        "a rung of the teaching ladder (set ladder-rung N; ladder runs them all), COUNT only",
    .gpu = 1,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 11,
    .available = ladder_available,
    .run = ladder_run,
};
