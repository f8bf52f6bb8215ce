#include "cpu_emul.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_join.h"
#include "err.h"
#include "fp16.h"

typedef struct emul_ctx {
    const float *h; /* coordinates rounded to the format, widened, n*d */
    const float *s; /* squared norms, FP32 rounded toward zero */
    size_t d;
} emul_ctx;

static float emul_dist2(const emul_ctx *ctx, size_t q, size_t c, float a)
{
    if (q == c)
        return 0.0f;
    float t = ctx->s[q] + ctx->s[c];
    float d2 = t - 2.0f * a;
    return d2 < 0.0f ? 0.0f : d2;
}

typedef float v4f __attribute__((vector_size(16)));

static void emul_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const emul_ctx *ctx = vctx;
    cpu_join_transpose(scratch, ctx->h, sizeof *ctx->h, ctx->d, c0, c1);
}

/* One lane per candidate, each accumulated in k order (acc + p rounds once;
 * the product is exact), so every lane equals the scalar fmaf chain. Named
 * accumulators stay in registers. No short-circuit: a partial dot product
 * bounds nothing. */
static void emul_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                     double lim, double *out)
{
    _Static_assert(CPU_GROUP == 16, "emul_row unrolls 4 v4f lanes");
    (void)lim;
    const emul_ctx *ctx = vctx;
    const size_t d = ctx->d;
    const float *a = ctx->h + q * d;
    const float *p = scratch;
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        v4f acc0 = {0, 0, 0, 0}, acc1 = acc0, acc2 = acc0, acc3 = acc0;
        for (size_t k = 0; k < d; k++) {
            const v4f av = {a[k], a[k], a[k], a[k]};
            const v4f *b = (const v4f *)(p + k * CPU_GROUP);
            acc0 += av * b[0];
            acc1 += av * b[1];
            acc2 += av * b[2];
            acc3 += av * b[3];
        }
        float dot[CPU_GROUP];
        for (int w = 0; w < 4; w++) {
            dot[w] = acc0[w];
            dot[4 + w] = acc1[w];
            dot[8 + w] = acc2[w];
            dot[12 + w] = acc3[w];
        }
        size_t m = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        for (size_t w = 0; w < m; w++)
            out[g - c0 + w] = emul_dist2(ctx, q, g + w, dot[w]);
    }
}

/* A converted dataset, shared by reference count. The cache keeps the last
 * EMUL_SLOTS conversions (least recently used goes first): a comparison of
 * two emulations alternates between two formats block by block. */
typedef struct emul_data {
    const cpu_emul_format *fmt;
    uint64_t hash;
    size_t n, d;
    float *h, *s;
    int refs;
    uint64_t used; /* cache clock at the last hit */
} emul_data;

#define EMUL_SLOTS 2

static pthread_mutex_t emul_mu = PTHREAD_MUTEX_INITIALIZER;
static emul_data *emul_cache[EMUL_SLOTS];
static uint64_t emul_clock;

static void emul_data_release(emul_data *c)
{
    pthread_mutex_lock(&emul_mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&emul_mu);
    if (last) {
        free(c->h);
        free(c->s);
        free(c);
    }
}

static emul_data *emul_convert(const cpu_emul_format *f, const dataset *ds)
{
    const size_t n = ds->n, d = ds->d;
    emul_data *c = xcalloc(1, sizeof *c);
    c->fmt = f;
    c->hash = ds->hash;
    c->n = n;
    c->d = d;
    c->refs = 1;
    c->h = xmalloc(n * d * sizeof *c->h);
    c->s = xmalloc(n * sizeof *c->s);
    for (size_t i = 0; i < n; i++) {
        const double *x = ds->x + i * d;
        float *hi = c->h + i * d;
        float acc = 0;
        for (size_t k = 0; k < d; k++) {
            hi[k] = f->round(x[k]);
            acc = fp32_add_rz(acc, hi[k] * hi[k]);
        }
        c->s[i] = acc;
    }
    return c;
}

static emul_data *emul_data_get(const cpu_emul_format *f, const dataset *ds, int *reused)
{
    pthread_mutex_lock(&emul_mu);
    for (int k = 0; k < EMUL_SLOTS; k++) {
        emul_data *c = emul_cache[k];
        if (c && ds->hash && c->fmt == f && c->hash == ds->hash && c->n == ds->n && c->d == ds->d) {
            c->refs++;
            c->used = ++emul_clock;
            pthread_mutex_unlock(&emul_mu);
            *reused = 1;
            return c;
        }
    }
    pthread_mutex_unlock(&emul_mu);
    *reused = 0;

    emul_data *c = emul_convert(f, ds);
    if (ds->hash) {
        pthread_mutex_lock(&emul_mu);
        int slot = 0;
        for (int k = 0; k < EMUL_SLOTS; k++) {
            if (!emul_cache[k]) {
                slot = k;
                break;
            }
            if (emul_cache[k]->used < emul_cache[slot]->used)
                slot = k;
        }
        emul_data *old = emul_cache[slot];
        emul_cache[slot] = c;
        c->refs++;
        c->used = ++emul_clock;
        pthread_mutex_unlock(&emul_mu);
        if (old)
            emul_data_release(old);
    }
    return c;
}

int cpu_emul_run(const cpu_emul_format *f, const join_spec *s, join_result *res)
{
    const size_t d = s->ds->d;
    double t0 = engine_now();
    int reused;
    emul_data *data = emul_data_get(f, s->ds, &reused);
    double *edges = NULL;
    if (s->mode == JOIN_HIST) {
        edges = xmalloc((s->hist_nbins + 1) * sizeof *edges);
        for (size_t b = 0; b <= s->hist_nbins; b++)
            edges[b] = (float)s->hist_edges[b];
    }
    join_result_phase(res, "convert", engine_now() - t0);

    char name[96];
    snprintf(name, sizeof name, "%s inputs%s, fp32 accumulate, norms rz", f->name,
             reused ? " (cached)" : "");
    emul_ctx ctx = {.h = data->h, .s = data->s, .d = d};
    cpu_kernel k = {
        .prepare = emul_prepare,
        .scratch_row_bytes = d * sizeof(float),
        .row = emul_row,
        .ctx = &ctx,
        .row_bytes = d * sizeof(float),
        .eps2 = (float)(s->eps * s->eps),
        .edges = edges,
        .name = name,
    };
    int rc = cpu_join_run(s, &k, res);
    free(edges);
    emul_data_release(data);
    return rc;
}
