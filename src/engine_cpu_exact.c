/* cpu-exact: the CPU twin of the GPU `exact` engine. Every pair's squared
 * distance is first computed with cpu-fp16's arithmetic (FP16 inputs
 * rounded to nearest, FP32 norms summed toward zero, FP32 products summed
 * in dimension order, d~2 = s_x + s_y - 2 x.y); the bound of
 * kernels/exact_bound.h decides the pairs it can (in below eps^2 - delta, out
 * above eps^2 + delta), and the band between is computed again in FP64 with
 * the cpu engine's arithmetic (direct (a-b)^2 in dimension order, no
 * contraction). So its pair set, per-point counts and histogram are the cpu
 * engine's, and PAIRS carries FP64 distances; the run records how many
 * pairs the band held. Values beyond FP16's range are scaled down by a
 * power of two first (metric scale_log2). CI tests the bound through it. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "center_exact.h"
#include "cpu_join.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"
#include "fp16.h"
#include "mem.h"

typedef struct xct_ctx {
    const dataset *ds;     /* the rows as loaded, widened to FP64 for the band */
    const uint32_t *order; /* with a grid: position -> row (h, s, nrm are in cell order) */
    const float *h;        /* FP16-rounded rows, widened */
    const float *s;        /* FP32 squared norms of h, summed toward zero (+ a group of 0) */
    const double *nrm;     /* FP64 norms of x */
    size_t d;
    exact_bound b;
    double eps;    /* the threshold the bound is taken at (HIST: the top edge's root), scaled */
    double lim2;   /* eps^2 (HIST: the top edge) */
    double sc2;    /* the scale squared: h, s and nrm are in scaled units */
    double lim2s;  /* lim2 * sc2 */
    double nmax;   /* the largest of nrm: delta(|q|, nmax) bounds every delta of row q */
    int all_exact; /* PAIRS and HIST: every pair up to the limit gets its FP64 d2 */
    const cpu_simd_ops *ops;
    atomic_ullong band, refined;
} xct_ctx;

/* The cpu engine's d2: direct (a-b)^2, dimension order, no contraction
 * (ISO C mode: gcc does not fuse the multiply and the add). */
static double xct_exact(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double u = a[k] - b[k];
        s += u * u;
    }
    return s;
}

static void xct_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const xct_ctx *ctx = vctx;
    cpu_join_transpose(scratch, ctx->h, sizeof *ctx->h, ctx->d, c0, c1);
}

/* The screen's limit for row q: the largest float F <= lim2s + delta(|q|,
 * nmax). delta grows with the norms and every rounding is monotone, so
 * d~2 > F (a float) implies d~2 > lim2s + delta of every pair of row q:
 * the pairs the screen drops are those the per-pair test drops. */
static float xct_screen_lim(const xct_ctx *ctx, size_t q)
{
    const double t = ctx->lim2s + exact_bound_delta(&ctx->b, ctx->nrm[q], ctx->nmax, ctx->eps);
    float f = (float)t;
    if ((double)f > t)
        f = nextafterf(f, -INFINITY);
    return f;
}

/* Rows [q, q+nr) against candidates [c0, c1): the SIMD screen drops every
 * lane whose d~2 is above the row's bound for the farthest candidate; the
 * lanes left get the per-pair decision of the bound (in below eps^2 -
 * delta, out above eps^2 + delta, the band between in FP64). With out,
 * each value (INFINITY for out) at out[r*ostride + c - c0]; with cnt,
 * cnt[r] += the pairs at or below lim. */
static void xct_block(const xct_ctx *cctx, const void *scratch, size_t q, size_t nr, size_t c0,
                      size_t c1, double lim, double *out, size_t ostride, uint64_t *cnt)
{
    xct_ctx *ctx = (xct_ctx *)cctx;
    const size_t d = ctx->d;
    const float *p = scratch;
    unsigned long long band = 0, refined = 0;
    /* A candidate row widened to FP64 for the band (on the stack unless d
     * is large); the query rows once per call. */
    double sb[256], *xb = d <= 256 ? sb : xmalloc(d * sizeof *xb);
    const double *xq[CPU_SIMD_MAX_ROWS] = {NULL};
    double sq[CPU_SIMD_MAX_ROWS * 64], *xqbuf = d <= 64 ? sq : NULL;
    float flim[CPU_SIMD_MAX_ROWS];
    for (size_t r = 0; r < nr; r++)
        flim[r] = xct_screen_lim(ctx, q + r);
    float dot[CPU_SIMD_MAX_ROWS][CPU_GROUP];
    uint32_t live[CPU_SIMD_MAX_ROWS];
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        const size_t m = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        ctx->ops->f32_screen(ctx->h + q * d, nr, d, p, ctx->s + q, ctx->s + g, flim, dot[0],
                             CPU_GROUP, live);
        for (size_t r = 0; r < nr; r++) {
            const size_t qr = q + r;
            double *o = out ? out + r * ostride + (g - c0) : NULL;
            if (o)
                for (size_t w = 0; w < CPU_GROUP; w++)
                    o[w] = INFINITY;
            uint32_t mask = live[r] & (m == CPU_GROUP ? 0xffffu : (1u << m) - 1);
            if (qr >= g && qr < g + m)
                mask |= 1u << (qr - g); /* the diagonal is exactly 0 */
            while (mask) {
                const size_t w = (size_t)__builtin_ctz(mask);
                mask &= mask - 1;
                const size_t c = g + w;
                double v;
                if (c == qr) {
                    v = 0.0;
                } else {
                    const float t = ctx->s[qr] + ctx->s[c];
                    const float f = t - 2.0f * dot[r][w];
                    const double dt = f < 0.0f ? 0.0 : (double)f;
                    const double delta =
                        exact_bound_delta(&ctx->b, ctx->nrm[qr], ctx->nrm[c], ctx->eps);
                    if (dt > ctx->lim2s + delta)
                        continue; /* out */
                    const int in_band = dt >= ctx->lim2s - delta;
                    band += (unsigned long long)in_band;
                    if (in_band || ctx->all_exact) {
                        if (!xq[r]) {
                            if (!xqbuf)
                                xqbuf = xmalloc(CPU_SIMD_MAX_ROWS * d * sizeof *xqbuf);
                            const size_t row = ctx->order ? ctx->order[qr] : qr;
                            xq[r] = dataset_row_f64(ctx->ds, row, xqbuf + r * d);
                        }
                        const size_t col = ctx->order ? ctx->order[c] : c;
                        v = xct_exact(xq[r], dataset_row_f64(ctx->ds, col, xb), d);
                        refined++;
                    } else {
                        const double du = dt / ctx->sc2;     /* a power of two: exact */
                        v = du < ctx->lim2 ? du : ctx->lim2; /* in: at most the limit */
                    }
                }
                if (o)
                    o[w] = v;
                else
                    cnt[r] += v <= lim;
            }
        }
    }
    if (xqbuf != sq)
        free(xqbuf);
    if (xb != sb)
        free(xb);
    atomic_fetch_add(&ctx->band, band);
    atomic_fetch_add(&ctx->refined, refined);
}

static void xct_rows(const void *ctx, const void *scratch, size_t q, size_t nr, size_t c0,
                     size_t c1, double lim, double *out, size_t ostride)
{
    xct_block(ctx, scratch, q, nr, c0, c1, lim, out, ostride, NULL);
}

static void xct_row(const void *ctx, const void *scratch, size_t q, size_t c0, size_t c1,
                    double lim, double *out)
{
    xct_block(ctx, scratch, q, 1, c0, c1, lim, out, 0, NULL);
}

static void xct_count(const void *ctx, const void *scratch, size_t q, size_t nr, size_t c0,
                      size_t c1, double lim, uint64_t *cnt)
{
    xct_block(ctx, scratch, q, nr, c0, c1, lim, NULL, 0, cnt);
}

static int xct_run(const join_spec *s, join_result *res)
{
    const dataset *ds = s->ds;
    const size_t n = ds->n, d = ds->d;
    /* The FP16 rows, their FP32 and FP64 norms and their cell-order copy
     * (src/mem.h). */
    if (mem_check(ds->name ? ds->name : "dataset", "the FP16 rows and their norms", (uint64_t)n,
                  2 * (d * sizeof(float) + sizeof(float) + sizeof(double)), 0))
        return TCJ_ENOMEM;
    double t0 = engine_now();
    /* The FP16 pass converts the centred values when centring is on; the
     * bound takes their norms, the band is refined from the data as
     * loaded. */
    const double *m =
        center_pick_exact(ds, s->opts ? s->opts->center : CENTER_DEFAULT, join_spec_eps(s));
    double vmax = 0;
    int finite = 1;
    double *rb = xmalloc(d * sizeof *rb);
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        for (size_t k = 0; k < d; k++) {
            const double v = m ? x[k] - m[k] : x[k];
            finite &= isfinite(v) != 0;
            vmax = fmax(vmax, fabs(v));
        }
    }
    if (!finite)
        free(rb);
    if (!finite)
        return err_set(TCJ_EINVAL,
                       "cpu-exact: %s holds a value that is not finite%s, which FP16 cannot "
                       "bound; use cpu (or fp64 on a GPU)",
                       ds->name, m ? " (after centring)" : "");
    /* Beyond FP16's 65504 the values are scaled down by a power of two
     * (exact), so the largest fits: every relative term of the bound is as
     * before, the bound is taken in the scaled units and the band refined
     * from the data as loaded. */
    int sk = 0;
    while (ldexp(vmax, sk) > EXACT_FP16_MAX)
        sk--;
    const double sc = ldexp(1.0, sk);
    xct_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    /* The norms get a group of zeros past the last row: the screen reads
     * whole groups. */
    float *h = xmalloc(n * d * sizeof *h);
    float *sq = xcalloc(n + CPU_GROUP, sizeof *sq);
    double *nrm = xmalloc(n * sizeof *nrm);
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        float acc = 0;
        double e = 0;
        for (size_t k = 0; k < d; k++) {
            const double v = (m ? x[k] - m[k] : x[k]) * sc;
            h[i * d + k] = fp16_round(v);
            acc = fp32_add_rz(acc, h[i * d + k] * h[i * d + k]);
            e += v * v;
        }
        sq[i] = acc;
        nrm[i] = sqrt(e);
        ctx.nmax = fmax(ctx.nmax, nrm[i]);
    }
    free(rb);
    ctx.ds = ds;
    ctx.d = d;
    exact_bound_init(&ctx.b, d);
    ctx.lim2 = s->mode == JOIN_HIST ? s->hist_edges[s->hist_nbins] : s->eps * s->eps;
    ctx.sc2 = sc * sc;
    ctx.lim2s = ctx.lim2 * ctx.sc2;
    ctx.eps = sqrt(ctx.lim2) * sc;
    ctx.all_exact = s->mode == JOIN_PAIRS || s->mode == JOIN_HIST;
    ctx.ops = cpu_simd_get(s->opts ? s->opts->cpu_simd : CPU_SIMD_AUTO);
    join_result_phase(res, "convert", engine_now() - t0);
    /* The grid of the cpu engine, at its radius: every pair cpu-exact
     * reports has cpu's FP64 d2 <= lim2 (the bound decides the others, the
     * band is cpu's own arithmetic), and a coordinate difference above
     * sqrt(lim2) makes that d2 exceed lim2 (src/engine_cpu.c). So the
     * neighbour cells hold every pair; the band counts only the pairs the
     * grid examined. */
    cpu_grid g;
    int grid = cpu_join_index(s, sqrt(ctx.lim2) * (1 + 1e-12), &g, res);
    if (grid < 0) {
        free(h);
        free(sq);
        free(nrm);
        return grid;
    }
    float *hg = NULL, *sg = NULL;
    double *ng = NULL;
    if (grid) {
        hg = xmalloc(n * d * sizeof *hg);
        sg = xcalloc(n + CPU_GROUP, sizeof *sg);
        ng = xmalloc(n * sizeof *ng);
        cpu_grid_gather(&g, h, d * sizeof *h, hg);
        cpu_grid_gather(&g, sq, sizeof *sq, sg);
        cpu_grid_gather(&g, nrm, sizeof *nrm, ng);
        ctx.order = g.order;
    }
    ctx.h = grid ? hg : h;
    ctx.s = grid ? sg : sq;
    ctx.nrm = grid ? ng : nrm;
    cpu_kernel k = {
        .prepare = xct_prepare,
        .scratch_row_bytes = d * sizeof(float),
        .row = xct_row,
        .rows = xct_rows,
        .rows_max = ctx.ops->f32_rows,
        .count = xct_count,
        .grid = grid ? &g : NULL,
        .ctx = &ctx,
        .row_bytes = d * sizeof(float),
        .eps2 = s->eps * s->eps,
        .edges = s->hist_edges,
        .name = "fp16 inputs, fp32 accumulate, the bound's band in fp64",
        .path = ctx.ops->name,
    };
    int rc = cpu_join_run(s, &k, res);
    join_result_metric(res, "centred", m != NULL, "");
    join_result_metric(res, "scale_log2", sk, "");
    if (rc == 0) {
        const double band = (double)atomic_load(&ctx.band);
        join_result_metric(res, "band_pairs", band, "pairs");
        join_result_metric(res, "band_fraction", res->pairs ? band / (double)res->pairs : 0, "");
        join_result_metric(res, "refined_pairs", (double)atomic_load(&ctx.refined), "pairs");
    }
    if (grid)
        cpu_grid_free(&g);
    free(hg);
    free(sg);
    free(ng);
    free(h);
    free(sq);
    free(nrm);
    return rc;
}

const engine engine_cpu_exact = {
    .name = "cpu-exact",
    .precision = "fp16-32+fp64",
    .summary = "cpu-fp16's arithmetic decides each pair its error bound allows; the band "
               "between is recomputed in FP64 (equals cpu)",
    .gpu = 0,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .available = NULL,
    .run = xct_run,
    .centers = 1,
};
