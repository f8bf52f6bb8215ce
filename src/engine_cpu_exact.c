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

typedef struct xct_ctx {
    const dataset *ds; /* the rows as loaded, widened to FP64 for the band */
    const float *h;    /* FP16-rounded rows, widened */
    const float *s;    /* FP32 squared norms of h, summed toward zero */
    const double *nrm; /* FP64 norms of x */
    size_t d;
    exact_bound b;
    double eps;    /* the threshold the bound is taken at (HIST: the top edge's root), scaled */
    double lim2;   /* eps^2 (HIST: the top edge) */
    double sc2;    /* the scale squared: h, s and nrm are in scaled units */
    double lim2s;  /* lim2 * sc2 */
    int all_exact; /* PAIRS and HIST: every pair up to the limit gets its FP64 d2 */
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

static void xct_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                    double lim, double *out)
{
    (void)lim;
    xct_ctx *ctx = (xct_ctx *)vctx;
    const size_t d = ctx->d;
    const float *a = ctx->h + q * d;
    const float *p = scratch;
    unsigned long long band = 0, refined = 0;
    /* Rows q and c widened to FP64 for the band (on the stack unless d is
     * large); row q once per call. */
    double sa[256], sb[256];
    double *ba = d <= 256 ? sa : xmalloc(d * sizeof *ba),
           *bb = d <= 256 ? sb : xmalloc(d * sizeof *bb);
    const double *xq = NULL;
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        float acc[CPU_GROUP] = {0};
        for (size_t k = 0; k < d; k++)
            for (int w = 0; w < CPU_GROUP; w++)
                acc[w] += a[k] * p[k * CPU_GROUP + w]; /* the product is exact in FP32 */
        const size_t m = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        for (size_t w = 0; w < m; w++) {
            const size_t c = g + w;
            if (c == q) {
                out[c - c0] = 0.0;
                continue;
            }
            float t = ctx->s[q] + ctx->s[c];
            float f = t - 2.0f * acc[w];
            const double dt = f < 0.0f ? 0.0 : (double)f;
            const double delta = exact_bound_delta(&ctx->b, ctx->nrm[q], ctx->nrm[c], ctx->eps);
            if (dt > ctx->lim2s + delta) {
                out[c - c0] = INFINITY; /* out: any value above the limit */
                continue;
            }
            const int in_band = dt >= ctx->lim2s - delta;
            band += (unsigned long long)in_band;
            if (in_band || ctx->all_exact) {
                if (!xq)
                    xq = dataset_row_f64(ctx->ds, q, ba);
                out[c - c0] = xct_exact(xq, dataset_row_f64(ctx->ds, c, bb), d);
                refined++;
            } else {
                const double du = dt / ctx->sc2;               /* a power of two: exact */
                out[c - c0] = du < ctx->lim2 ? du : ctx->lim2; /* in: at most the limit */
            }
        }
    }
    if (ba != sa) {
        free(ba);
        free(bb);
    }
    atomic_fetch_add(&ctx->band, band);
    atomic_fetch_add(&ctx->refined, refined);
}

static int xct_run(const join_spec *s, join_result *res)
{
    const dataset *ds = s->ds;
    const size_t n = ds->n, d = ds->d;
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
    float *h = xmalloc(n * d * sizeof *h);
    float *sq = xmalloc(n * sizeof *sq);
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
    }
    free(rb);
    ctx.ds = ds;
    ctx.h = h;
    ctx.s = sq;
    ctx.nrm = nrm;
    ctx.d = d;
    exact_bound_init(&ctx.b, d);
    ctx.lim2 = s->mode == JOIN_HIST ? s->hist_edges[s->hist_nbins] : s->eps * s->eps;
    ctx.sc2 = sc * sc;
    ctx.lim2s = ctx.lim2 * ctx.sc2;
    ctx.eps = sqrt(ctx.lim2) * sc;
    ctx.all_exact = s->mode == JOIN_PAIRS || s->mode == JOIN_HIST;
    join_result_phase(res, "convert", engine_now() - t0);
    cpu_kernel k = {
        .prepare = xct_prepare,
        .scratch_row_bytes = d * sizeof(float),
        .row = xct_row,
        .ctx = &ctx,
        .row_bytes = d * sizeof(float),
        .eps2 = s->eps * s->eps,
        .edges = s->hist_edges,
        .name = "fp16 inputs, fp32 accumulate, the bound's band in fp64",
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
