/* cpu-int8: the int8 engine's arithmetic on the CPU. Its distances are
 * exact integers (of the quantized values under `set int8-scale on`), so
 * the cpu engine's FP64 arithmetic on those values computes them exactly
 * (every partial sum is an integer below 2^53), and the decisions are
 * int8's: a pair is kept when its integer d2 <= floor(eps^2 scale^2),
 * which cpu decides at eps' = sqrt(floor(eps^2 scale^2) + 1/2) (half an
 * integer from every d2, far above FP64's rounding). HIST edges are the
 * GPU's: each edge rounded to FP32, times scale^2, rounded to FP32. Pairs
 * carry d2 / scale^2. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "err.h"
#include "int8_plan.h"

extern const engine engine_cpu;

/* The quantized copy of the last dataset (compare runs an engine once per
 * block of rows). */
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    const double *x;
    size_t n, d;
    double scale;
    double *q;
} q_last;

static const double *quantized(const dataset *ds, const int8_plan *pl)
{
    pthread_mutex_lock(&q_mu);
    if (!(ds->hash && q_last.q && q_last.hash == ds->hash && q_last.x == ds->x &&
          q_last.n == ds->n && q_last.d == ds->d && q_last.scale == pl->scale)) {
        free(q_last.q);
        q_last.q = xmalloc(ds->n * ds->d * sizeof *q_last.q);
        for (size_t k = 0; k < ds->n * ds->d; k++)
            q_last.q[k] = int8_value(pl, ds->x[k]);
        q_last.hash = ds->hash;
        q_last.x = ds->x;
        q_last.n = ds->n;
        q_last.d = ds->d;
        q_last.scale = pl->scale;
    }
    const double *q = q_last.q;
    pthread_mutex_unlock(&q_mu);
    return q;
}

typedef struct unscale_sink {
    const pair_sink *to;
    double inv;
    double *buf;
    size_t cap;
} unscale_sink;

static int unscale_put(void *ctx, const pair_batch *b)
{
    unscale_sink *u = ctx;
    if (u->cap < b->k) {
        free(u->buf);
        u->cap = b->k;
        u->buf = xmalloc(u->cap * sizeof *u->buf);
    }
    for (size_t t = 0; t < b->k; t++)
        u->buf[t] = b->d2[t] * u->inv;
    pair_batch o = {b->k, b->i, b->j, u->buf};
    return u->to->put(u->to->ctx, &o);
}

static int cpu_int8_run(const join_spec *s, join_result *res)
{
    int8_plan pl;
    int rc = int8_plan_for(s->ds, s->opts ? s->opts->int8_scale : 0, s->engine->name, &pl);
    if (rc)
        return rc;
    const double c2 = pl.inexact ? pl.scale * pl.scale : 1.0;
    dataset q = *s->ds;
    if (pl.inexact)
        q.x = (double *)quantized(s->ds, &pl);
    join_spec t = *s;
    t.ds = &q;
    t.engine = &engine_cpu;
    t.eps = sqrt(floor(s->eps * s->eps * c2) + 0.5);
    double *edges = NULL;
    if (s->mode == JOIN_HIST) {
        edges = xmalloc((s->hist_nbins + 1) * sizeof *edges);
        for (size_t b = 0; b <= s->hist_nbins; b++)
            edges[b] = (double)(float)((double)(float)s->hist_edges[b] * c2);
        t.hist_edges = edges;
    }
    unscale_sink us = {&s->sink, 1.0 / c2, NULL, 0};
    if (s->mode == JOIN_PAIRS) {
        t.sink.put = unscale_put;
        t.sink.ctx = &us;
    }
    rc = engine_cpu.run(&t, res);
    free(edges);
    free(us.buf);
    int8_plan_record(&pl, res);
    return rc;
}

const engine engine_cpu_int8 = {
    .name = "cpu-int8",
    .precision = "int8-32",
    .summary = "CPU twin of the int8 engine: 8-bit integer data (or quantized by set int8-scale), "
               "exact integer distances",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 8,
    .available = NULL,
    .run = cpu_int8_run,
    .lab = "int8",
    .lab_bits = 8,
};
