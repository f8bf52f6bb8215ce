/* Local centring for the CPU emulations (`set center local`): the join over
 * the grid index (src/cpu_grid.h), with every pair computed in coordinates
 * relative to an origin of the query row's cell, as a tensor-core join that
 * centred each tile on its own origin would compute them. Translation does
 * not change a distance, but a format's rounding error grows with |x|: a
 * LiDAR scan 80 m wide in FP16 (spacing 1/32 m near 50 m) becomes, cell by
 * cell, values of a few eps, rounded 2^-11 of that.
 *
 * The origin of a cell is its lower corner along the indexed dimensions and
 * the column mean along the others. Query rows and candidate rows are
 * shifted by it in FP64 (one rounding of 2^-53 |x - o|, far inside the
 * format's), then emulated exactly as src/cpu_emul.h says (rounded to the
 * format, FP32 norms rounded toward zero, FP32 dot products, d2 clamped at
 * 0, 0 on the diagonal). Each worker converts the candidates of a block
 * for its cell (prepare_cell) and its query rows in place; nothing is
 * cached across runs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "center.h"
#include "cpu_emul.h"
#include "cpu_join.h"
#include "err.h"
#include "fp16.h"
#include "mem.h"

typedef struct local_ctx {
    const cpu_emul_format *f;
    const cpu_grid *g;
    const double *x; /* FP64 rows in cell order, n x d */
    const double *mean;
    size_t d;
    const cpu_simd_ops *ops;
} local_ctx;

/* The worker's scratch: this fixed part first, then the candidates. */
typedef struct local_head {
    size_t cell;
    double origin[]; /* d values, then the query rows: CPU_SIMD_MAX_ROWS x d floats */
} local_head;

static size_t local_head_bytes(size_t d)
{
    size_t b = sizeof(local_head) + d * sizeof(double) +
               (size_t)CPU_SIMD_MAX_ROWS * (d + 1) * sizeof(float);
    return (b + 63) / 64 * 64;
}

static float *local_queries(local_head *h, size_t d)
{
    return (float *)(h->origin + d);
}

/* Row r (cell order) relative to o: rounded to the format into h, its FP32
 * norm (rounded toward zero, in order) returned. */
static float local_convert(const local_ctx *c, const double *o, size_t r, float *h, size_t stride)
{
    const double *x = c->x + r * c->d;
    float acc = 0;
    for (size_t k = 0; k < c->d; k++) {
        const float v = c->f->round(x[k] - o[k]);
        h[k * stride] = v;
        acc = fp32_add_rz(acc, v * v);
    }
    return acc;
}

static void local_origin(const local_ctx *c, size_t cell, double *o)
{
    const cpu_grid *g = c->g;
    for (size_t k = 0; k < c->d; k++)
        o[k] = c->mean ? c->mean[k] : 0.0;
    const long long key = g->key[cell];
    for (int j = 0; j < g->k; j++) {
        const long long idx = key / g->stride[j] % g->cnt[j];
        o[g->dim[j]] = g->lo[j] + (double)idx * g->side[j];
    }
}

/* Candidates [c0, c1) for the cell: groups of CPU_GROUP rows transposed to
 * [k][lane] (lanes past c1 zero), then their norms. */
static void local_prepare_cell(const void *vc, void *scratch, size_t cell, size_t c0, size_t c1)
{
    const local_ctx *c = vc;
    const size_t d = c->d;
    local_head *h = scratch;
    if (h->cell != cell + 1) { /* 0: none yet */
        local_origin(c, cell, h->origin);
        h->cell = cell + 1;
    }
    float *p = (float *)((char *)scratch + local_head_bytes(d));
    const size_t m = (c1 - c0 + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    float *s = p + m * d;
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP)
        for (size_t w = 0; w < CPU_GROUP; w++) {
            if (g + w < c1) {
                s[g + w - c0] = local_convert(c, h->origin, g + w, p + w, CPU_GROUP);
            } else {
                for (size_t k = 0; k < d; k++)
                    p[k * CPU_GROUP + w] = 0.0f;
                s[g + w - c0] = 0.0f;
            }
        }
}

static void local_rows(const void *vc, const void *scratch, size_t q, size_t nr, size_t c0,
                       size_t c1, double lim, double *out, size_t ostride)
{
    (void)lim;
    const local_ctx *c = vc;
    const size_t d = c->d;
    local_head *h = (local_head *)scratch; /* the query rows' part is the worker's own */
    float *hq = local_queries(h, d), *sq = hq + (size_t)CPU_SIMD_MAX_ROWS * d;
    for (size_t r = 0; r < nr; r++)
        sq[r] = local_convert(c, h->origin, q + r, hq + r * d, 1);
    const float *p = (const float *)((const char *)scratch + local_head_bytes(d));
    const size_t m = (c1 - c0 + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    const float *sc = p + m * d;
    float dot[CPU_SIMD_MAX_ROWS][CPU_GROUP];
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        c->ops->f32(hq, nr, d, p, 1, dot[0], CPU_GROUP);
        const size_t mw = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        for (size_t r = 0; r < nr; r++)
            for (size_t w = 0; w < mw; w++) {
                float d2 = 0.0f;
                if (q + r != g + w) {
                    const float t = sq[r] + sc[g + w - c0];
                    d2 = t - 2.0f * dot[r][w];
                    d2 = d2 < 0.0f ? 0.0f : d2;
                }
                out[r * ostride + g - c0 + w] = d2;
            }
    }
}

static void local_row(const void *vc, const void *scratch, size_t q, size_t c0, size_t c1,
                      double lim, double *out)
{
    local_rows(vc, scratch, q, 1, c0, c1, lim, out, 0);
}

/* The grid's radius for locally centred arithmetic: emul's bound
 * (cpu_emul_radius_of) with what a shift can leave. The origin
 * lies within the data's range along every dimension (a cell corner, or
 * the mean), so |x_k - o_k| <= max x_k - min x_k =: m_k; the rounded
 * inputs then differ by at most u m_k + q along k, and their squared
 * norms are at most S = sum (m_k (1 + u) + q)^2. 0: no safe radius. */
static double local_radius(const cpu_emul_format *f, const join_spec *s, double lim)
{
    const size_t n = s->ds->n, d = s->ds->d;
    if (!s->engine || !(lim >= 0) || !isfinite(lim))
        return 0;
    double *lo = xmalloc(d * sizeof *lo), *hi = xmalloc(d * sizeof *hi),
           *rb = xmalloc(d * sizeof *rb);
    for (size_t k = 0; k < d; k++)
        lo[k] = INFINITY, hi[k] = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(s->ds, i, rb);
        for (size_t k = 0; k < d; k++) {
            lo[k] = x[k] < lo[k] ? x[k] : lo[k];
            hi[k] = x[k] > hi[k] ? x[k] : hi[k];
        }
    }
    const double u = ldexp(1.0, -s->engine->in_bits);
    const double q = cpu_emul_abs_err(f) > 0x1p-24 ? cpu_emul_abs_err(f) : 0x1p-24;
    double smax = 0, xmax = 0;
    for (size_t k = 0; k < d; k++) {
        const double mk = hi[k] - lo[k]; /* NaN with a NaN value: no index */
        xmax = !(mk <= xmax) ? mk : xmax;
        smax += (mk * (1 + u) + q) * (mk * (1 + u) + q);
    }
    free(lo);
    free(hi);
    free(rb);
    return cpu_emul_radius_of(f, s->engine->in_bits, d, lim, smax, xmax, q);
}

int cpu_emul_local_index(const cpu_emul_format *f, const join_spec *s, cpu_grid *g)
{
    memset(g, 0, sizeof *g);
    if (s->opts && s->opts->cpu_index == CPU_INDEX_OFF)
        return err_set(TCJ_EINVAL, "center local: needs the grid index (set cpu-index auto or on)");
    const double lim =
        s->mode == JOIN_HIST ? (float)s->hist_edges[s->hist_nbins] : (float)(s->eps * s->eps);
    const double r = local_radius(f, s, lim);
    if (r > 0 && cpu_grid_build(s->ds, r, CPU_GRID_MAXK, g))
        return TCJ_ENOMEM;
    if (g->k == 0) {
        cpu_grid_free(g);
        return err_set(TCJ_EINVAL,
                       "center local: no grid index for these data at eps %g (values not finite, "
                       "or beyond %s's range)",
                       s->eps, f->name);
    }
    return 0;
}

int cpu_emul_run_local(const cpu_emul_format *f, const join_spec *s, join_result *res)
{
    const dataset *ds = s->ds;
    const size_t n = ds->n, d = ds->d;
    /* The rows in FP64 in cell order (src/mem.h). */
    if (mem_check(ds->name ? ds->name : "dataset", "the rows in cell order", (uint64_t)n * d,
                  sizeof(double), 0))
        return TCJ_ENOMEM;
    double t0 = engine_now();
    cpu_grid g;
    int rc = cpu_emul_local_index(f, s, &g);
    if (rc)
        return rc;
    join_result_phase(res, "index", engine_now() - t0);
    t0 = engine_now();
    double *x =
        mem_alloc(ds->name ? ds->name : "dataset", "the rows in cell order", n * d, sizeof *x, 0);
    if (!x) {
        cpu_grid_free(&g);
        return TCJ_ENOMEM;
    }
    double *rb = xmalloc(d * sizeof *rb);
    for (size_t p = 0; p < n; p++)
        memcpy(x + p * d, dataset_row_f64(ds, g.order[p], rb), d * sizeof *x);
    free(rb);
    center_facts facts;
    const double *mean = center_means(ds, &facts);
    double *edges = cpu_emul_edges(s);
    join_result_phase(res, "convert", engine_now() - t0);
    const cpu_simd_ops *ops = cpu_simd_get(s->opts ? s->opts->cpu_simd : CPU_SIMD_AUTO);
    local_ctx c = {.f = f, .g = &g, .x = x, .mean = mean, .d = d, .ops = ops};
    char name[96];
    snprintf(name, sizeof name, "%s inputs centred per cell (%d dims), fp32 accumulate, norms rz",
             f->name, g.k);
    cpu_kernel k = {
        .grid = &g,
        .prepare_cell = local_prepare_cell,
        .scratch_row_bytes = (d + 1) * sizeof(float),
        .scratch_head_bytes = local_head_bytes(d),
        .row = local_row,
        .rows = local_rows,
        .rows_max = ops->f32_rows,
        .path = ops->name,
        .ctx = &c,
        .row_bytes = d * sizeof(float),
        .eps2 = (float)(s->eps * s->eps),
        .edges = edges,
        .name = name,
    };
    rc = cpu_join_run(s, &k, res);
    join_result_metric(res, "centred", 2, "");
    cpu_grid_free(&g);
    free(x);
    free(edges);
    return rc;
}
