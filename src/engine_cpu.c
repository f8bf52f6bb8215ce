/* cpu: the exact FP64 join on the CPU, the ground truth anywhere.
 * d2 = sum over k, in order, of (a_k - b_k)^2 in FP64: the direct form,
 * never |a|^2 + |b|^2 - 2ab, whose cancellation loses the small distances.
 * Once a partial sum passes the limit (eps^2, or the top histogram edge) the
 * pair is out: the terms are non-negative and FP64 addition is monotone. */
#include <math.h>
#include <stdlib.h>

#include "cpu_join.h"
#include "cpu_kdist.h"
#include "engine.h"
#include "err.h"
#include "mem.h"

typedef struct cpu_ctx {
    /* the dataset's rows in its own element type t, or with a grid its
     * rows in cell order; widened to FP64 a block at a time */
    const void *x;
    const dtype *t;
    size_t d;
    const cpu_simd_ops *ops;
} cpu_ctx;

/* Rows widened on the stack up to this many values (else on the heap). */
#define CPU_STACK_VALUES 4096

/* Candidate rows [c0, c1) as FP64 groups transposed into scratch: FP64
 * data as they are, other types a group of CPU_GROUP rows widened at a
 * time (once per candidate block, against a block's worth of query rows). */
static void cpu_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const cpu_ctx *ctx = vctx;
    const size_t d = ctx->d;
    if (ctx->t->id == DTYPE_F64) {
        cpu_join_transpose(scratch, ctx->x, sizeof(double), d, c0, c1);
        return;
    }
    double stack[CPU_STACK_VALUES];
    double *rows =
        CPU_GROUP * d <= CPU_STACK_VALUES ? stack : xmalloc(CPU_GROUP * d * sizeof *rows);
    double *p = scratch;
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP) {
        const size_t m = c1 - g < CPU_GROUP ? c1 - g : CPU_GROUP;
        ctx->t->to_f64((const char *)ctx->x + g * d * ctx->t->bytes, m * d, rows);
        cpu_join_transpose(p, rows, sizeof(double), d, 0, m);
    }
    if (rows != stack)
        free(rows);
}

/* Query rows [q, q + nr) as FP64: a pointer into FP64 data, else widened
 * into buf (CPU_STACK_VALUES) or, when they do not fit, into *heap (the
 * caller frees it). */
static const double *cpu_qrows(const cpu_ctx *ctx, size_t q, size_t nr, double *buf, double **heap)
{
    const size_t d = ctx->d;
    *heap = NULL;
    if (ctx->t->id == DTYPE_F64)
        return (const double *)ctx->x + q * d;
    if (nr * d > CPU_STACK_VALUES)
        buf = *heap = xmalloc(nr * d * sizeof *buf);
    ctx->t->to_f64((const char *)ctx->x + q * d * ctx->t->bytes, nr * d, buf);
    return buf;
}

/* The kernels of src/cpu_simd_<isa>.c: one lane per candidate, s += (a_k -
 * b_k)^2 in k order, exactly the scalar sum; the limit is checked every 16
 * dimensions (a group stops once all its lanes are past it). */
static void cpu_rows(const void *vctx, const void *scratch, size_t q, size_t nr, size_t c0,
                     size_t c1, double lim, double *out, size_t ostride)
{
    const cpu_ctx *ctx = vctx;
    double buf[CPU_STACK_VALUES], *heap;
    const double *a = cpu_qrows(ctx, q, nr, buf, &heap);
    ctx->ops->f64(a, nr, ctx->d, scratch, c1 - c0, lim, out, ostride, NULL);
    free(heap);
}

static void cpu_count(const void *vctx, const void *scratch, size_t q, size_t nr, size_t c0,
                      size_t c1, double lim, uint64_t *cnt)
{
    const cpu_ctx *ctx = vctx;
    double buf[CPU_STACK_VALUES], *heap;
    const double *a = cpu_qrows(ctx, q, nr, buf, &heap);
    ctx->ops->f64(a, nr, ctx->d, scratch, c1 - c0, lim, NULL, 0, cnt);
    free(heap);
}

static void cpu_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                    double lim, double *out)
{
    cpu_rows(vctx, scratch, q, 1, c0, c1, lim, out, 0);
}

/* Wide rows (CPU_WIDE_VALUES values or more) where the threads' groups of
 * CPU_GROUP transposed FP64 candidates would outweigh the data as loaded
 * (few rows: n = 2 at d = 2^24 took 5 GB for 32 MB of u8): one row
 * against one row, both widened a chunk at a time on the stack, no
 * scratch. The same sum in the same order as the kernels, the same
 * short-circuit (a chunk at a time). */
#define CPU_WIDE_VALUES 65536
#define CPU_WIDE_CHUNK 1024

static int cpu_wide(const dataset *ds, const dtype *t, const engine_opts *o)
{
    return ds->d >= CPU_WIDE_VALUES &&
           (uint64_t)cpu_join_threads(o) * CPU_GROUP * sizeof(double) > (uint64_t)ds->n * t->bytes;
}

static void cpu_row_wide(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                         double lim, double *out)
{
    (void)scratch;
    const cpu_ctx *ctx = vctx;
    const size_t d = ctx->d, eb = ctx->t->bytes;
    const char *x = ctx->x;
    double a[CPU_WIDE_CHUNK], b[CPU_WIDE_CHUNK];
    for (size_t c = c0; c < c1; c++) {
        double sum = 0;
        for (size_t k0 = 0; k0 < d && sum <= lim; k0 += CPU_WIDE_CHUNK) {
            const size_t m = d - k0 < CPU_WIDE_CHUNK ? d - k0 : CPU_WIDE_CHUNK;
            ctx->t->to_f64(x + (q * d + k0) * eb, m, a);
            ctx->t->to_f64(x + (c * d + k0) * eb, m, b);
            for (size_t k = 0; k < m; k++) {
                const double u = a[k] - b[k];
                sum += u * u;
            }
        }
        out[c - c0] = sum;
    }
}

static int cpu_run(const join_spec *s, join_result *res)
{
    const size_t d = s->ds->d;
    const cpu_simd_ops *ops = cpu_simd_get(s->opts ? s->opts->cpu_simd : CPU_SIMD_AUTO);
    const dtype *t = dataset_dtype(s->ds);
    cpu_ctx ctx = {.x = s->ds->v, .t = t, .d = d, .ops = ops};
    /* A pair joins when its d2 <= lim; a coordinate difference above
     * sqrt(lim) makes its own term, and so the sum, exceed lim (squares
     * and monotone sums in FP64; the grid refuses radii where a square
     * could underflow). The relative 1e-12 covers the rounding of sqrt. */
    const double lim = s->mode == JOIN_HIST ? s->hist_edges[s->hist_nbins] : s->eps * s->eps;
    cpu_grid g;
    char *xg = NULL;
    const int use = cpu_join_index(s, sqrt(lim) * (1 + 1e-12), &g, res);
    if (use < 0)
        return use;
    if (use) {
        /* The rows in cell order, in their own type. */
        xg = mem_alloc(s->ds->name ? s->ds->name : "dataset", "the rows in cell order", s->ds->n,
                       d * t->bytes, 0);
        if (!xg) {
            cpu_grid_free(&g);
            return TCJ_ENOMEM;
        }
        cpu_grid_gather(&g, s->ds->v, d * t->bytes, xg);
        ctx.x = xg;
    }
    cpu_kernel k = {
        .prepare = cpu_prepare,
        .scratch_row_bytes = d * sizeof(double),
        .row = cpu_row,
        .rows = cpu_rows,
        .rows_max = ops->f64_rows,
        .count = cpu_count,
        .grid = xg ? &g : NULL,
        .ctx = &ctx,
        .row_bytes = d * sizeof(double),
        .eps2 = s->eps * s->eps,
        .edges = s->hist_edges,
        .name = "fp64 (a-b)^2, short-circuit every 16 dims",
        .path = ops->name,
    };
    if (cpu_wide(s->ds, t, s->opts)) {
        k = (cpu_kernel){.row = cpu_row_wide,
                         .grid = k.grid,
                         .ctx = &ctx,
                         .eps2 = k.eps2,
                         .edges = k.edges,
                         .name =
                             "fp64 (a-b)^2, wide rows one by one, short-circuit every 1024 dims",
                         .path = "scalar"};
    }
    int rc = cpu_join_run(s, &k, res);
    if (xg)
        cpu_grid_free(&g);
    free(xg);
    return rc;
}

/* The k-distance's grid passes: the rows in g's cell order, in their own
 * type (one copy, reused by every pass), or the data as loaded. */
typedef struct cpu_kd_ctx {
    cpu_ctx c; /* first: the kernels take it as their ctx */
    const dataset *ds;
    char *xg;
} cpu_kd_ctx;

static void cpu_regrid(const void *vctx, const cpu_grid *g)
{
    cpu_kd_ctx *k = (cpu_kd_ctx *)vctx;
    if (!g) {
        k->c.x = k->ds->v;
        return;
    }
    const size_t row = k->ds->d * k->c.t->bytes;
    if (!k->xg)
        k->xg = xmalloc(k->ds->n * row);
    cpu_grid_gather(g, k->ds->v, row, k->xg);
    k->c.x = k->xg;
}

/* The k-distance with the same kernel: the heap's k-th best is the limit,
 * so the short-circuit drops a candidate once it cannot enter the top k;
 * low-dimensional data through the grid, data of a few dozen dimensions
 * through a k-d tree (src/cpu_kdist.c). */
static int cpu_kdist(const kdist_spec *s, join_result *res)
{
    const cpu_simd_ops *ops = cpu_simd_get(s->opts ? s->opts->cpu_simd : CPU_SIMD_AUTO);
    cpu_kd_ctx kd = {
        .c = {.x = s->ds->v, .t = dataset_dtype(s->ds), .d = s->ds->d, .ops = ops},
        .ds = s->ds,
    };
    cpu_kernel k = {
        .regrid = cpu_regrid,
        .prepare = cpu_prepare,
        .scratch_row_bytes = s->ds->d * sizeof(double),
        .row = cpu_row,
        .rows = cpu_rows,
        .rows_max = ops->f64_rows,
        .f64_direct = ops,
        .ctx = &kd,
        .row_bytes = s->ds->d * sizeof(double),
        .name = "fp64 direct (a-b)^2",
        .path = ops->name,
    };
    int rc = cpu_kdist_run(s, &k, res);
    free(kd.xg);
    return rc;
}

const engine engine_cpu = {
    .name = "cpu",
    .precision = "fp64",
    .summary = "exact FP64 on the CPU, direct (a-b)^2 form, multithreaded (ground truth)",
    .gpu = 0,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .rank = {[ENGINE_ROLE_DEFAULT] = 1, [ENGINE_ROLE_TRUTH] = 1},
    .available = NULL,
    .run = cpu_run,
    .kdist = cpu_kdist,
};
