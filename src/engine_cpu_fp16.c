/* cpu-fp16: FASTED's arithmetic emulated on the CPU, so accuracy versus
 * precision can be studied without a GPU.
 *
 * What is emulated, step by step:
 *  1. every coordinate is rounded to FP16, to nearest, ties to even, straight
 *     from the FP64 value (|x| >= 65520 becomes Inf, tiny values subnormal
 *     or 0), as __float2half_rn does on the GPU;
 *  2. squared norms s_i = sum_k h_ik^2 in FP32, each step rounded toward
 *     zero (__fmaf_rz(h, h, s)); h^2 is exact in FP32 (11-bit significands);
 *  3. the dot product a_ij = sum_k h_ik h_jk accumulated in FP32 in k order,
 *     one rounding to nearest per step: the product of two halves is exact
 *     in FP32, so acc + p rounds once, as fmaf(h, h, acc) would;
 *  4. dist2 = (s_i + s_j) - 2 a_ij in FP32, rounded to nearest (2a is exact,
 *     so this equals fmaf(-2, a, s_i + s_j)); negative results are clamped
 *     to 0 and the diagonal i == j is exactly 0, as tcjoin's fasted does;
 *  5. the comparison dist2 <= (float)(eps * eps); histogram edges are
 *     rounded to float the same way.
 * Where a real tensor core may differ: mma.sync m16n8k16 sums the 16
 * products of one k-slice (and adds them to the accumulator) in an order and
 * with internal precision and rounding that NVIDIA does not specify, so the
 * GPU's a_ij can differ from step 3 in the last bits of FP32; step 2 on the
 * GPU may also use another summation order. Both move dist2 by a few FP32
 * ulps of s_i + s_j, which matters only for pairs within that of eps. */
#include <pthread.h>
#include <stdlib.h>

#include "cpu_join.h"
#include "engine.h"
#include "err.h"
#include "fp16.h"

typedef struct f16_ctx {
    const float *h; /* FP16 values widened to float, n*d */
    const float *s; /* squared norms, FP32 rounded toward zero */
    size_t d;
} f16_ctx;

static float f16_dist2(const f16_ctx *ctx, size_t q, size_t c, float a)
{
    if (q == c)
        return 0.0f;
    float t = ctx->s[q] + ctx->s[c];
    float d2 = t - 2.0f * a;
    return d2 < 0.0f ? 0.0f : d2;
}

typedef float v4f __attribute__((vector_size(16)));

static void f16_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const f16_ctx *ctx = vctx;
    cpu_join_transpose(scratch, ctx->h, sizeof *ctx->h, ctx->d, c0, c1);
}

/* One lane per candidate, each accumulated in k order (acc + p rounds once;
 * the product is exact), so every lane equals the scalar fmaf chain. Named
 * accumulators stay in registers. No short-circuit: a partial dot product
 * bounds nothing. */
static void f16_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                    double lim, double *out)
{
    _Static_assert(CPU_GROUP == 16, "f16_row unrolls 4 v4f lanes");
    (void)lim;
    const f16_ctx *ctx = vctx;
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
            out[g - c0 + w] = f16_dist2(ctx, q, g + w, dot[w]);
    }
}

/* The converted dataset (halves and norms). The comparer runs the engine
 * once per block of rows, so the last conversion is kept, keyed by the
 * content hash, n and d (a dataset without a hash is converted every run),
 * and shared by reference count. */
typedef struct f16_data {
    uint64_t hash;
    size_t n, d;
    float *h, *s;
    int refs;
} f16_data;

static pthread_mutex_t f16_mu = PTHREAD_MUTEX_INITIALIZER;
static f16_data *f16_cached;

static void f16_data_release(f16_data *c)
{
    pthread_mutex_lock(&f16_mu);
    int last = --c->refs == 0;
    pthread_mutex_unlock(&f16_mu);
    if (last) {
        free(c->h);
        free(c->s);
        free(c);
    }
}

static f16_data *f16_data_get(const dataset *ds, int *reused)
{
    pthread_mutex_lock(&f16_mu);
    f16_data *c = f16_cached;
    if (c && ds->hash && c->hash == ds->hash && c->n == ds->n && c->d == ds->d) {
        c->refs++;
        pthread_mutex_unlock(&f16_mu);
        *reused = 1;
        return c;
    }
    pthread_mutex_unlock(&f16_mu);
    *reused = 0;

    const size_t n = ds->n, d = ds->d;
    c = xcalloc(1, sizeof *c);
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
            hi[k] = fp16_round(x[k]);
            acc = fp32_add_rz(acc, hi[k] * hi[k]);
        }
        c->s[i] = acc;
    }
    if (ds->hash) {
        pthread_mutex_lock(&f16_mu);
        f16_data *old = f16_cached;
        f16_cached = c;
        c->refs++;
        pthread_mutex_unlock(&f16_mu);
        if (old)
            f16_data_release(old);
    }
    return c;
}

static int f16_run(const join_spec *s, join_result *res)
{
    const size_t d = s->ds->d;
    double t0 = engine_now();
    int reused;
    f16_data *data = f16_data_get(s->ds, &reused);
    double *edges = NULL;
    if (s->mode == JOIN_HIST) {
        edges = xmalloc((s->hist_nbins + 1) * sizeof *edges);
        for (size_t b = 0; b <= s->hist_nbins; b++)
            edges[b] = (float)s->hist_edges[b];
    }
    join_result_phase(res, "convert", engine_now() - t0);

    f16_ctx ctx = {.h = data->h, .s = data->s, .d = d};
    cpu_kernel k = {
        .prepare = f16_prepare,
        .scratch_row_bytes = d * sizeof(float),
        .row = f16_row,
        .ctx = &ctx,
        .row_bytes = d * sizeof(float),
        .eps2 = (float)(s->eps * s->eps),
        .edges = edges,
        .name = reused ? "fp16 inputs (cached), fp32 accumulate, norms rz"
                       : "fp16 inputs, fp32 accumulate, norms rz",
    };
    int rc = cpu_join_run(s, &k, res);
    free(edges);
    f16_data_release(data);
    return rc;
}

const engine engine_cpu_fp16 = {
    .name = "cpu-fp16",
    .precision = "fp16-32",
    .summary = "CPU emulation of FASTED's FP16-in, FP32-accumulate arithmetic",
    .gpu = 0,
    .available = NULL,
    .run = f16_run,
};
