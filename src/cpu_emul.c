#include "cpu_emul.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "center.h"
#include "cpu_join.h"
#include "err.h"
#include "fmt_fit.h"
#include "fp16.h"
#include "mem.h"
#include "shift.h"

typedef struct emul_ctx {
    const float *h; /* coordinates rounded to the format, widened, n*d */
    const float *s; /* squared norms, FP32 rounded toward zero */
    size_t d;
    const cpu_simd_ops *ops;
} emul_ctx;

static float emul_dist2(const emul_ctx *ctx, size_t q, size_t c, float a)
{
    if (q == c)
        return 0.0f;
    float t = ctx->s[q] + ctx->s[c];
    float d2 = t - 2.0f * a;
    return d2 < 0.0f ? 0.0f : d2;
}

static void emul_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const emul_ctx *ctx = vctx;
    cpu_join_transpose(scratch, ctx->h, sizeof *ctx->h, ctx->d, c0, c1);
}

/* The dot products by the kernels of src/cpu_simd_<isa>.c (one lane per
 * candidate, each accumulated in k order: acc + p rounds once, the product
 * is exact, so every lane equals the scalar fmaf chain), a group at a time,
 * then dist2 per pair. No short-circuit: a partial dot product bounds
 * nothing. */
static void emul_rows(const void *vctx, const void *scratch, size_t q, size_t nr, size_t c0,
                      size_t c1, double lim, double *out, size_t ostride)
{
    (void)lim;
    const emul_ctx *ctx = vctx;
    const size_t d = ctx->d;
    const float *p = scratch;
    float dot[CPU_SIMD_MAX_ROWS][CPU_GROUP];
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        ctx->ops->f32(ctx->h + q * d, nr, d, p, 1, dot[0], CPU_GROUP);
        size_t m = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        for (size_t r = 0; r < nr; r++)
            for (size_t w = 0; w < m; w++)
                out[r * ostride + g - c0 + w] = emul_dist2(ctx, q + r, g + w, dot[r][w]);
    }
}

static void emul_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                     double lim, double *out)
{
    emul_rows(vctx, scratch, q, 1, c0, c1, lim, out, 0);
}

/* A converted dataset, shared by reference count. The cache keeps the last
 * EMUL_SLOTS conversions (least recently used goes first): a comparison of
 * two emulations alternates between two formats block by block. */
typedef struct emul_data {
    const cpu_emul_format *fmt;
    uint64_t hash;
    size_t n, d;
    const double *center; /* the column means subtracted first (NULL: none) */
    /* Formats scaled by a power of two (fmt_fit's .scaled): every value was
     * rounded as v 2^scale and widened back times 2^-scale (exact), which
     * is the GPU's scaled arithmetic unscaled: norms, products and d2 are
     * 4^-scale times the GPU's, bit for bit, as long as FP32 neither
     * overflows nor goes subnormal in one of them. */
    int scaled, scale;
    size_t underflow; /* values below the format's smallest subnormal after scaling */
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

static emul_data *emul_convert(const cpu_emul_format *f, const dataset *ds, const double *center)
{
    const size_t n = ds->n, d = ds->d;
    emul_data *c = xcalloc(1, sizeof *c);
    c->fmt = f;
    c->center = center;
    c->hash = ds->hash;
    c->n = n;
    c->d = d;
    c->refs = 1;
    c->h = xmalloc(n * d * sizeof *c->h);
    c->s = xmalloc(n * sizeof *c->s);
    if (f->scaled) {
        fmt_fit fit;
        fmt_fit_engine(ds, center, f, &fit);
        c->scaled = 1;
        c->scale = fit.scale;
        c->underflow = fit.underflow;
    }
    double *rb = xmalloc(d * sizeof *rb);
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        float *hi = c->h + i * d;
        float acc = 0;
        for (size_t k = 0; k < d; k++) {
            const double v = center ? x[k] - center[k] : x[k];
            hi[k] = c->scaled ? ldexpf(f->round(ldexp(v, c->scale)), -c->scale) : f->round(v);
            acc = fp32_add_rz(acc, hi[k] * hi[k]);
        }
        c->s[i] = acc;
    }
    free(rb);
    return c;
}

static emul_data *emul_data_get(const cpu_emul_format *f, const dataset *ds, const double *center,
                                int *reused)
{
    pthread_mutex_lock(&emul_mu);
    for (int k = 0; k < EMUL_SLOTS; k++) {
        emul_data *c = emul_cache[k];
        if (c && ds->hash && c->fmt == f && c->hash == ds->hash && c->n == ds->n && c->d == ds->d &&
            c->center == center) {
            c->refs++;
            c->used = ++emul_clock;
            pthread_mutex_unlock(&emul_mu);
            *reused = 1;
            return c;
        }
    }
    pthread_mutex_unlock(&emul_mu);
    *reused = 0;

    emul_data *c = emul_convert(f, ds, center);
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

/* The radius of the grid index for an emulation (cpu_grid.h): every pair
 * this arithmetic can join differs by at most it along each coordinate;
 * 0 when no safe radius exists. lim is the FP32 limit compared with.
 * - d2 against the exact |h_i - h_j|^2 = D^2 of the rounded inputs: the
 *   band of docs/CPU_ENGINES.md, E <= (2d+2) 2^-23 (S + D^2) with S the
 *   two squared norms, taken twice over: c = (2d+4) 2^-22; a joined pair
 *   has D^2 - c (2 Smax + D^2) <= lim, so D^2 <= (lim + 2c Smax) / (1 - c);
 * - the inputs: |h - x| <= 2^-in_bits |x| + 2^-24 (to nearest, subnormals
 *   included), so a coordinate differs by at most D + 2 (u Xmax + 2^-24).
 * A point whose converted row is not finite joins nothing but itself (its
 * norm is Inf or NaN, so its d2 is Inf or NaN). Norms near FP32's range
 * could saturate (the rz norm stops at FLT_MAX) and join far points: no
 * index then. */
static double emul_radius(const cpu_emul_format *f, const join_spec *s, const emul_data *data,
                          double lim)
{
    const size_t n = data->n, d = data->d;
    if (!s->engine || !(lim >= 0) || !isfinite(lim))
        return 0;
    double smax = 0, xmax = 0;
    double *rb = xmalloc(d * sizeof *rb);
    for (size_t i = 0; i < n; i++) {
        double sq = 0;
        for (size_t k = 0; k < d; k++)
            sq += (double)data->h[i * d + k] * data->h[i * d + k];
        if (!isfinite(sq))
            continue;
        smax = sq > smax ? sq : smax;
        const double *x = dataset_row_f64(s->ds, i, rb);
        for (size_t k = 0; k < d; k++) {
            const double v = x[k];
            double a = fabs(data->center ? v - data->center[k] : v);
            xmax = a > xmax ? a : xmax;
        }
    }
    free(rb);
    double q = cpu_emul_abs_err(f) > 0x1p-24 ? cpu_emul_abs_err(f) : 0x1p-24;
    if (data->scaled)
        q = ldexp(cpu_emul_abs_err(f), -data->scale);
    return cpu_emul_radius_of(f, s->engine->in_bits, d, lim, smax, xmax, q);
}

double cpu_emul_radius_of(const cpu_emul_format *f, int in_bits, size_t d, double lim, double smax,
                          double xmax, double q)
{
    if (!(smax <= 0x1p120) || !isfinite(xmax) || (f->saturates_at && xmax > f->saturates_at))
        return 0;
    const double c = (2.0 * (double)d + 4.0) * 0x1p-22;
    if (c >= 0.5)
        return 0;
    const double u = ldexp(1.0, -in_bits);
    const double dmax = sqrt((lim + 2 * c * smax * (1 + 1e-9)) / (1 - c));
    return (dmax + 2 * (u * xmax + q)) * (1 + 1e-9);
}

double *cpu_emul_edges(const join_spec *s)
{
    if (s->mode != JOIN_HIST)
        return NULL;
    double *edges = xmalloc((s->hist_nbins + 1) * sizeof *edges);
    for (size_t b = 0; b <= s->hist_nbins; b++)
        edges[b] = (float)s->hist_edges[b];
    return edges;
}

int cpu_emul_run(const cpu_emul_format *f, const join_spec *s, join_result *res)
{
    const size_t d = s->ds->d;
    if (s->opts && s->opts->center == CENTER_LOCAL && s->engine && s->engine->centers == 2)
        return cpu_emul_run_local(f, s, res);
    const int shifted = f->is_unsigned && s->opts && s->opts->shift;
    if (f->is_unsigned && !shifted) {
        char who[32];
        snprintf(who, sizeof who, "cpu-%s", f->name);
        int rc0 = shift_refuse_negative(s->ds, who, f->name, "cpu-fp16 or cpu-bf16");
        if (rc0)
            return rc0;
    }
    /* What the run holds that the data size: the converted rows and
     * their norms, and the same again in cell order (src/mem.h). */
    if (mem_check(s->ds->name ? s->ds->name : "dataset", "the converted rows (twice)",
                  (uint64_t)s->ds->n * (d + 1), 2 * sizeof(float), 0))
        return TCJ_ENOMEM;
    double t0 = engine_now();
    int reused;
    const double *center = s->engine && s->engine->centers
                               ? center_pick(s->ds, s->opts ? s->opts->center : CENTER_DEFAULT,
                                             s->engine->exact || s->engine->center_auto)
                               : NULL;
    if (shifted)
        center = shift_mins(s->ds);
    emul_data *data = emul_data_get(f, s->ds, center, &reused);
    double *edges = cpu_emul_edges(s);
    join_result_phase(res, "convert", engine_now() - t0);

    char name[96];
    char scaled[32] = "";
    if (data->scaled)
        snprintf(scaled, sizeof scaled, " scaled 2^%d", data->scale);
    snprintf(name, sizeof name, "%s inputs%s%s%s, fp32 accumulate, norms rz", f->name,
             shifted  ? " shifted"
             : center ? " centred"
                      : "",
             scaled, reused ? " (cached)" : "");
    const cpu_simd_ops *ops = cpu_simd_get(s->opts ? s->opts->cpu_simd : CPU_SIMD_AUTO);
    emul_ctx ctx = {.h = data->h, .s = data->s, .d = d, .ops = ops};
    const double lim = edges ? edges[s->hist_nbins] : (float)(s->eps * s->eps);
    double r = emul_radius(f, s, data, lim);
    cpu_grid g;
    float *hg = NULL, *sg = NULL;
    const int use = r > 0 ? cpu_join_index(s, r, &g, res) : 0;
    if (use < 0) {
        free(edges);
        emul_data_release(data);
        return use;
    }
    if (use) {
        /* The converted rows in cell order: a row's values depend on that
         * row alone, so they are the same bits. */
        hg = xmalloc(s->ds->n * d * sizeof *hg);
        sg = xmalloc(s->ds->n * sizeof *sg);
        cpu_grid_gather(&g, data->h, d * sizeof *hg, hg);
        cpu_grid_gather(&g, data->s, sizeof *sg, sg);
        ctx.h = hg;
        ctx.s = sg;
    }
    cpu_kernel k = {
        .grid = hg ? &g : NULL,
        .prepare = emul_prepare,
        .scratch_row_bytes = d * sizeof(float),
        .row = emul_row,
        .rows = emul_rows,
        .rows_max = ops->f32_rows,
        .path = ops->name,
        .ctx = &ctx,
        .row_bytes = d * sizeof(float),
        .eps2 = (float)(s->eps * s->eps),
        .edges = edges,
        .name = name,
    };
    int rc = cpu_join_run(s, &k, res);
    if (s->engine && s->engine->centers)
        join_result_metric(res, "centred", center != NULL, "");
    if (f->is_unsigned)
        join_result_metric(res, "shifted", shifted, "");
    if (data->scaled) {
        join_result_metric(res, "scale_log2", data->scale, "");
        join_result_metric(res, "underflow_values", (double)data->underflow, "");
    }
    if (hg)
        cpu_grid_free(&g);
    free(hg);
    free(sg);
    free(edges);
    emul_data_release(data);
    return rc;
}
