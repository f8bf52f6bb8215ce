/* cpu: the exact FP64 join on the CPU, the ground truth anywhere.
 * d2 = sum over k, in order, of (a_k - b_k)^2 in FP64: the direct form,
 * never |a|^2 + |b|^2 - 2ab, whose cancellation loses the small distances.
 * Once a partial sum passes the limit (eps^2, or the top histogram edge) the
 * pair is out: the terms are non-negative and FP64 addition is monotone. */
#include "cpu_join.h"
#include "cpu_kdist.h"
#include "engine.h"

typedef struct cpu_ctx {
    const double *x;
    size_t d;
} cpu_ctx;

/* Check the limit every CPU_STEP dimensions. */
#define CPU_STEP 16

typedef double v2d __attribute__((vector_size(16)));

static void cpu_prepare(const void *vctx, void *scratch, size_t c0, size_t c1)
{
    const cpu_ctx *ctx = vctx;
    cpu_join_transpose(scratch, ctx->x, sizeof *ctx->x, ctx->d, c0, c1);
}

/* One lane per candidate: s += (a_k - b_k)^2 in k order, exactly the scalar
 * sum (no contraction into FMA: the build is ISO C11, -ffp-contract=off);
 * CPU_GROUP independent chains, named so they stay in registers, hide the
 * adder's latency. A group stops early once every lane is past the limit. */
#define CPU_LANES(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
static void cpu_row(const void *vctx, const void *scratch, size_t q, size_t c0, size_t c1,
                    double lim, double *out)
{
    _Static_assert(CPU_GROUP == 16, "cpu_row unrolls 8 v2d lanes");
    const cpu_ctx *ctx = vctx;
    const size_t d = ctx->d;
    const double *a = ctx->x + q * d;
    const double *p = scratch;
    const v2d lv = {lim, lim};
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP, out += CPU_GROUP) {
#define CPU_LANE_ZERO(v) v2d s##v = {0, 0};
        CPU_LANES(CPU_LANE_ZERO)
        size_t k = 0;
        while (k < d) {
            size_t kend = k + CPU_STEP < d ? k + CPU_STEP : d;
            for (; k < kend; k++) {
                const v2d av = {a[k], a[k]};
                const v2d *b = (const v2d *)(p + k * CPU_GROUP);
#define CPU_STEP1(v)                                                                               \
    {                                                                                              \
        v2d u = av - b[v];                                                                         \
        s##v += u * u;                                                                             \
    }
                CPU_LANES(CPU_STEP1)
            }
            if (k < d) {
                /* lanes are -1 where s > lim (NaN compares false) */
                typedef long long v2l __attribute__((vector_size(16)));
                v2l all = (s0 > lv) & (s1 > lv) & (s2 > lv) & (s3 > lv) & (s4 > lv) & (s5 > lv) &
                          (s6 > lv) & (s7 > lv);
                if (all[0] && all[1])
                    break;
            }
        }
#define CPU_OUT(v)                                                                                 \
    out[2 * v] = s##v[0];                                                                          \
    out[2 * v + 1] = s##v[1];
        CPU_LANES(CPU_OUT)
    }
}

static int cpu_run(const join_spec *s, join_result *res)
{
    cpu_ctx ctx = {.x = s->ds->x, .d = s->ds->d};
    cpu_kernel k = {
        .prepare = cpu_prepare,
        .scratch_row_bytes = s->ds->d * sizeof(double),
        .row = cpu_row,
        .ctx = &ctx,
        .row_bytes = s->ds->d * sizeof(double),
        .eps2 = s->eps * s->eps,
        .edges = s->hist_edges,
        .name = "fp64 direct (a-b)^2, short-circuit every 16 dims",
    };
    return cpu_join_run(s, &k, res);
}

/* The k-distance with the same kernel: the heap's k-th best is the limit,
 * so the short-circuit drops a candidate once it cannot enter the top k. */
static int cpu_kdist(const kdist_spec *s, join_result *res)
{
    cpu_ctx ctx = {.x = s->ds->x, .d = s->ds->d};
    cpu_kernel k = {
        .prepare = cpu_prepare,
        .scratch_row_bytes = s->ds->d * sizeof(double),
        .row = cpu_row,
        .ctx = &ctx,
        .row_bytes = s->ds->d * sizeof(double),
        .name = "fp64 direct (a-b)^2",
    };
    return cpu_kdist_run(s, &k, res);
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
