/* The CPU kernels' instruction sets (src/cpu_simd*.c): every path the CPU
 * has gives, in every output mode, the bits of the scalar path, and the
 * scalar path those of a direct computation written here (FP64: the
 * (a-b)^2 sum in dimension order; FP16 emulation: the steps of
 * src/cpu_emul.h). Paths the CPU lacks are reported as skipped. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "cpu_join.h"
#include "cpu_simd.h"
#include "dataset.h"
#include "engine.h"
#include "fp16.h"
#include "join_outcome.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;
extern const engine engine_cpu_bf16;
extern const engine engine_cpu_exact;

static uint64_t rng_state;

static double rng_unit(void)
{
    return t_unit(&rng_state);
}

static dataset make_uniform(size_t n, size_t d, uint64_t seed)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = malloc((n * d + 1) * sizeof(double));
    rng_state = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = rng_unit() * 2 - 0.5;
    return ds;
}

/* The definition of the cpu engine's d2. */
static double direct_d2(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = ((double *)ds->v)[i * ds->d + k] - ((double *)ds->v)[j * ds->d + k];
        s += u * u;
    }
    return s;
}

/* cpu-fp16, step by step as src/cpu_emul.h states it. */
static float emul_d2(const dataset *ds, size_t i, size_t j)
{
    if (i == j)
        return 0.0f;
    float si = 0, sj = 0, a = 0;
    for (size_t k = 0; k < ds->d; k++) {
        float hi = fp16_round(((double *)ds->v)[i * ds->d + k]),
              hj = fp16_round(((double *)ds->v)[j * ds->d + k]);
        si = fp32_add_rz(si, hi * hi);
        sj = fp32_add_rz(sj, hj * hj);
        float p = hi * hj;
        a = a + p;
    }
    float t = si + sj;
    float d2 = t - 2.0f * a;
    return d2 < 0.0f ? 0.0f : d2;
}

/* The outcome an engine must produce, computed pair by pair. */
static join_outcome direct_outcome(const dataset *ds, double eps, size_t q0, size_t q1, int fp16,
                                   const double *edges, size_t nb)
{
    join_outcome o;
    memset(&o, 0, sizeof o);
    o.perpoint = calloc(q1 - q0 + 1, sizeof *o.perpoint);
    o.nb = edges ? nb : 0;
    o.hist = calloc(nb + 1, sizeof *o.hist);
    const double lim = fp16 ? (double)(float)(eps * eps) : eps * eps;
    for (size_t i = q0; i < q1; i++)
        for (size_t j = 0; j < ds->n; j++) {
            double v = fp16 ? (double)emul_d2(ds, i, j) : direct_d2(ds, i, j);
            if (v <= lim) {
                o.count++;
                o.perpoint[i - q0]++;
                pair_batch b = {1, &(uint32_t){(uint32_t)i}, &(uint32_t){(uint32_t)j}, &v};
                jo_put(&o, &b);
            }
            if (!edges)
                continue;
            double top = fp16 ? (double)(float)edges[nb] : edges[nb];
            if (!(v <= top))
                continue;
            size_t b = 0;
            double e0 = fp16 ? (double)(float)edges[0] : edges[0];
            if (v <= e0) {
                o.below++;
                continue;
            }
            while (!(v <= (fp16 ? (double)(float)edges[b + 1] : edges[b + 1])))
                b++;
            o.hist[b]++;
        }
    qsort(o.pairs, o.npairs, sizeof *o.pairs, jo_by_ij);
    return o;
}

static int has_any_wide(void)
{
    return cpu_simd_has(CPU_SIMD_AVX2) || cpu_simd_has(CPU_SIMD_AVX512);
}

TEST(simd_names_and_choice)
{
    CHECK_EQ_INT(cpu_simd_parse("auto"), CPU_SIMD_AUTO);
    CHECK_EQ_INT(cpu_simd_parse("scalar"), CPU_SIMD_SCALAR);
    CHECK_EQ_INT(cpu_simd_parse("avx2"), CPU_SIMD_AVX2);
    CHECK_EQ_INT(cpu_simd_parse("avx512"), CPU_SIMD_AVX512);
    CHECK_EQ_INT(cpu_simd_parse("sse"), -1);
    CHECK_EQ_INT(cpu_simd_parse(NULL), -1);
    CHECK(cpu_simd_has(CPU_SIMD_SCALAR));
    CHECK(cpu_simd_get(CPU_SIMD_SCALAR) == &cpu_simd_scalar);
    for (int i = CPU_SIMD_SCALAR; i < CPU_SIMD_NISA; i++) {
        const cpu_simd_ops *o = cpu_simd_get((cpu_simd_isa)i);
        CHECK(o->f64 && o->f32);
        CHECK(o->f64_rows >= 1 && o->f64_rows <= CPU_SIMD_MAX_ROWS);
        CHECK(o->f32_rows >= 1 && o->f32_rows <= CPU_SIMD_MAX_ROWS);
        /* what is asked for when the CPU has it, else something narrower */
        CHECK(cpu_simd_has((cpu_simd_isa)i) ? (int)o->isa == i : (int)o->isa < i);
    }
    /* auto: the widest the CPU has */
    const cpu_simd_ops *best = cpu_simd_get(CPU_SIMD_AUTO);
    CHECK(cpu_simd_has(best->isa));
    for (int i = best->isa + 1; i < CPU_SIMD_NISA; i++)
        CHECK(!cpu_simd_has((cpu_simd_isa)i));
    CHECK(cpu_simd_get(CPU_SIMD_NISA) == best);
}

/* The kernels themselves: for every row count a call takes, every lane is
 * the scalar sum, bit for bit; with a limit, sums at or below it are still
 * exact and the others stay above it. */
TEST(simd_kernels_equal_the_scalar_sum)
{
    static const size_t dims[] = {1, 2, 3, 15, 16, 17, 33, 129};
    for (int isa = CPU_SIMD_SCALAR; isa < CPU_SIMD_NISA; isa++) {
        if (!cpu_simd_has((cpu_simd_isa)isa))
            continue;
        const cpu_simd_ops *ops = cpu_simd_get((cpu_simd_isa)isa);
        size_t live_seen = 0, dead_seen = 0; /* the screen met both sides */
        for (size_t di = 0; di < sizeof dims / sizeof *dims; di++) {
            const size_t d = dims[di], nc = 3 * CPU_GROUP - 5, ng = 3;
            dataset ds = make_uniform(nc + CPU_SIMD_MAX_ROWS, d, 77 + di);
            double *p = aligned_alloc(64, (ng * CPU_GROUP * d * sizeof *p + 63) / 64 * 64);
            float *pf = aligned_alloc(64, (ng * CPU_GROUP * d * sizeof *pf + 63) / 64 * 64);
            float *h = malloc(ds.n * d * sizeof *h);
            for (size_t k = 0; k < ds.n * d; k++)
                h[k] = fp16_round(((double *)ds.v)[k]);
            cpu_join_transpose(p, ((double *)ds.v), sizeof(double), d, 0, nc);
            cpu_join_transpose(pf, h, sizeof *h, d, 0, nc);
            const size_t qa = nc; /* query rows after the candidates */
            double out[CPU_SIMD_MAX_ROWS * 3 * CPU_GROUP];
            float dot[CPU_SIMD_MAX_ROWS * 3 * CPU_GROUP];
            const double lim = 0.1 * (double)d;
            for (size_t nr = 1; nr <= ops->f64_rows; nr++)
                for (int with_lim = 0; with_lim < 2; with_lim++) {
                    ops->f64(((double *)ds.v) + qa * d, nr, d, p, nc, with_lim ? lim : INFINITY,
                             out, ng * CPU_GROUP, NULL);
                    /* counting: the values at or below the limit, padding
                     * lanes (past nc) left out */
                    uint64_t cnt[CPU_SIMD_MAX_ROWS] = {0};
                    ops->f64(((double *)ds.v) + qa * d, nr, d, p, nc, lim, NULL, 0, cnt);
                    for (size_t r = 0; r < nr; r++) {
                        uint64_t want = 0;
                        for (size_t c = 0; c < nc; c++)
                            want += direct_d2(&ds, qa + r, c) <= lim;
                        CHECK_MSG(cnt[r] == want, "%s d=%zu nr=%zu: count %llu, want %llu",
                                  ops->name, d, nr, (unsigned long long)cnt[r],
                                  (unsigned long long)want);
                    }
                    for (size_t r = 0; r < nr; r++)
                        for (size_t c = 0; c < nc; c++) {
                            double want = direct_d2(&ds, qa + r, c);
                            double got = out[r * ng * CPU_GROUP + c];
                            if (with_lim && want > lim)
                                CHECK_MSG(got > lim, "%s d=%zu: %g not above %g", ops->name, d, got,
                                          lim);
                            else
                                CHECK_MSG(memcmp(&got, &want, sizeof got) == 0,
                                          "%s d=%zu nr=%zu row %zu cand %zu: %.17g vs %.17g",
                                          ops->name, d, nr, r, c, got, want);
                        }
                }
            for (size_t nr = 1; nr <= ops->f32_rows; nr++) {
                ops->f32(h + qa * d, nr, d, pf, ng, dot, ng * CPU_GROUP);
                for (size_t r = 0; r < nr; r++)
                    for (size_t c = 0; c < nc; c++) {
                        float want = 0;
                        for (size_t k = 0; k < d; k++) {
                            float pr = h[(qa + r) * d + k] * h[c * d + k];
                            want = want + pr;
                        }
                        float got = dot[r * ng * CPU_GROUP + c];
                        CHECK_MSG(memcmp(&got, &want, sizeof got) == 0,
                                  "%s f32 d=%zu nr=%zu: %.9g vs %.9g", ops->name, d, nr, got, want);
                    }
            }
            /* cpu-exact's screen, group by group: the dot products of f32,
             * and a live bit exactly where (s_a + s_b) - 2 dot > lim is
             * false, lim a median value so both sides occur. */
            float sq[3 * CPU_GROUP + CPU_SIMD_MAX_ROWS] = {0};
            for (size_t i = 0; i < nc; i++)
                for (size_t k = 0; k < d; k++)
                    sq[i] += h[i * d + k] * h[i * d + k];
            float sa[CPU_SIMD_MAX_ROWS], flim[CPU_SIMD_MAX_ROWS];
            for (size_t r = 0; r < CPU_SIMD_MAX_ROWS; r++) {
                sa[r] = 0;
                for (size_t k = 0; k < d; k++)
                    sa[r] += h[(qa + r) * d + k] * h[(qa + r) * d + k];
                flim[r] = (float)(0.15 * (double)d);
            }
            for (size_t nr = 1; nr <= ops->f32_rows; nr++)
                for (size_t g = 0; g < ng; g++) {
                    uint32_t live[CPU_SIMD_MAX_ROWS];
                    ops->f32_screen(h + qa * d, nr, d, pf + g * CPU_GROUP * d, sa,
                                    sq + g * CPU_GROUP, flim, dot, CPU_GROUP, live);
                    for (size_t r = 0; r < nr; r++)
                        for (size_t w = 0; w < CPU_GROUP; w++) {
                            const size_t c = g * CPU_GROUP + w;
                            float want = 0;
                            for (size_t k = 0; k < d; k++)
                                want = want + (c < nc ? h[(qa + r) * d + k] * h[c * d + k] : 0.0f);
                            const float got = dot[r * CPU_GROUP + w];
                            CHECK_MSG(memcmp(&got, &want, sizeof got) == 0,
                                      "%s screen d=%zu nr=%zu: %.9g vs %.9g", ops->name, d, nr, got,
                                      want);
                            const float f = (sa[r] + sq[c]) - 2.0f * want;
                            const int lv = (live[r] >> w) & 1;
                            CHECK_MSG(lv == !(f > flim[r]), "%s screen d=%zu lane %zu: %d for %.9g",
                                      ops->name, d, w, lv, f);
                            live_seen += lv;
                            dead_seen += !lv;
                        }
                }
            free(p);
            free(pf);
            free(h);
            free(ds.v);
        }
        CHECK_MSG(live_seen > 0 && dead_seen > 0, "%s screen: %zu live, %zu not", ops->name,
                  live_seen, dead_seen);
    }
    if (!has_any_wide())
        t_skip("only the scalar path on this CPU");
}

/* Every path of each CPU engine against the scalar path, and the scalar
 * path against the direct computation, in every mode, for n not a
 * multiple of a group or of the rows per call, d = 1, 3, 17, 129. */
static void engines_against_direct(const dataset *ds, double eps, size_t q0, size_t q1)
{
    const size_t nb = 7;
    double edges[8];
    for (size_t b = 0; b <= nb; b++)
        edges[b] = eps * eps * (0.2 + 0.2 * (double)b);
    /* cpu-exact (its screen's paths) against the FP64 direct form; it
     * refuses values that are not finite */
    const engine *const engines[] = {&engine_cpu, &engine_cpu_fp16, &engine_cpu_bf16,
                                     &engine_cpu_exact};
    char why[256];
    for (size_t e = 0; e < 4; e++) {
        engine_opts o;
        engine_opts_default(&o);
        o.cpu_index = CPU_INDEX_OFF;
        o.cpu_simd = CPU_SIMD_SCALAR;
        join_outcome ref = jo_run(engines[e], ds, eps, q0, q1, &o, edges, nb);
        if (e == 3 && ref.rc == TCJ_EINVAL) {
            jo_free(&ref);
            continue;
        }
        if (e != 2) {
            join_outcome want = direct_outcome(ds, eps, q0, q1, e == 1, edges, nb);
            int same = jo_same(&ref, &want, q1 - q0, why, sizeof why);
            jo_free(&want);
            if (!same)
                jo_free(&ref);
            CHECK_MSG(same, "%s scalar vs direct, n=%zu d=%zu rows %zu..%zu: %s", engines[e]->name,
                      ds->n, ds->d, q0, q1, why);
        }
        for (int isa = CPU_SIMD_AVX2; isa < CPU_SIMD_NISA; isa++) {
            if (!cpu_simd_has((cpu_simd_isa)isa))
                continue;
            o.cpu_simd = isa;
            for (int threads = 1; threads <= 3; threads += 2) {
                o.threads = threads;
                join_outcome got = jo_run(engines[e], ds, eps, q0, q1, &o, edges, nb);
                int same = jo_same(&got, &ref, q1 - q0, why, sizeof why);
                int named = strstr(got.variant, cpu_simd_name((cpu_simd_isa)isa)) != NULL;
                jo_free(&got);
                if (!same || !named)
                    jo_free(&ref);
                CHECK_MSG(same, "%s %s vs scalar, n=%zu d=%zu: %s", engines[e]->name,
                          cpu_simd_name((cpu_simd_isa)isa), ds->n, ds->d, why);
                CHECK_MSG(named, "variant does not name the path");
            }
        }
        jo_free(&ref);
    }
}

TEST(simd_paths_equal_scalar_and_direct_in_every_mode)
{
    static const size_t ns[] = {1, 7, 33, 203};
    static const size_t ds_[] = {1, 3, 17, 129};
    for (size_t a = 0; a < 4; a++)
        for (size_t b = 0; b < 4; b++) {
            dataset ds = make_uniform(ns[a], ds_[b], 1000 + 10 * a + b);
            /* about a tenth of the pairs */
            double eps = 0.55 * sqrt((double)ds.d);
            engines_against_direct(&ds, eps, 0, ds.n);
            if (ds.n > 4)
                engines_against_direct(&ds, eps, 2, ds.n - 1);
            free(ds.v);
        }
    if (!has_any_wide())
        t_skip("only the scalar path on this CPU");
}

/* Values that stress lanes: NaN, infinities, signed zeros, subnormals,
 * squares that overflow; duplicates (d2 exactly 0). */
TEST(simd_paths_equal_scalar_on_special_values)
{
    static const double special[] = {NAN,   INFINITY, -INFINITY, 0.0, -0.0, 0x1p-1070, -0x1p-1060,
                                     1e300, -1e300,   1e154,     0.5, 0.5,  1.0};
    const size_t ns = sizeof special / sizeof *special;
    for (size_t d = 1; d <= 5; d += 2) {
        dataset ds = make_uniform(61, d, 5 + d);
        for (size_t i = 0; i < ds.n; i++)
            if (i % 3 == 0)
                ((double *)ds.v)[i * d + (i / 3) % d] = special[(i / 3) % ns];
        for (size_t k = 0; k < d; k++)
            ((double *)ds.v)[60 * d + k] = ((double *)ds.v)[59 * d + k]; /* a duplicate */
        engines_against_direct(&ds, 0.7 * sqrt((double)d), 0, ds.n);
        free(ds.v);
    }
    if (!has_any_wide())
        t_skip("only the scalar path on this CPU");
}
