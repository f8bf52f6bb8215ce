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
 * block of rows), kept as u8 or, signed, as f16 (which holds every integer
 * in [-128, 127] exactly). */
static pthread_mutex_t q_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    const void *x;
    size_t n, d;
    double scale;
    dtype_id type;
    void *q;
} q_last;

static const void *quantized(const dataset *ds, const int8_plan *pl, dtype_id *type)
{
    pthread_mutex_lock(&q_mu);
    if (!(ds->hash && q_last.q && q_last.hash == ds->hash && q_last.x == ds->v &&
          q_last.n == ds->n && q_last.d == ds->d && q_last.scale == pl->scale)) {
        free(q_last.q);
        const dtype *t = dtype_get(pl->u8 ? DTYPE_U8 : DTYPE_F16);
        const size_t nv = ds->n * ds->d;
        q_last.q = xmalloc((nv ? nv : 1) * t->bytes);
        double buf[1024];
        for (size_t k0 = 0; k0 < nv; k0 += 1024) {
            const size_t nb = nv - k0 < 1024 ? nv - k0 : 1024;
            dataset_values_f64(ds, k0, nb, buf);
            for (size_t j = 0; j < nb; j++)
                buf[j] = int8_value(pl, buf[j]);
            t->from_f64(buf, nb, (char *)q_last.q + k0 * t->bytes);
        }
        q_last.type = t->id;
        q_last.hash = ds->hash;
        q_last.x = ds->v;
        q_last.n = ds->n;
        q_last.d = ds->d;
        q_last.scale = pl->scale;
    }
    const void *q = q_last.q;
    *type = q_last.type;
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

/* cpu-int8's run (its row: tc_formats, src/format_table.c). */
int engine_cpu_int8_run(const join_spec *s, join_result *res)
{
    int8_plan pl;
    int rc = int8_plan_for(s->ds, s->opts ? s->opts->int8_scale : 0, s->engine->name, &pl);
    if (rc)
        return rc;
    const double c2 = pl.inexact ? pl.scale * pl.scale : 1.0;
    dataset q = *s->ds;
    if (pl.inexact)
        q.v = (void *)quantized(s->ds, &pl, &q.type);
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
