/* The CPU emulations of the tensor-core formats (cpu-bf16, cpu-tf32, and
 * cpu-fp16 through the same module) in every output mode:
 *  1. against a scalar model written here from the arithmetic the engines
 *     state (src/cpu_emul.h): coordinates rounded straight from FP64 to the
 *     format, norms in FP32 rounded toward zero in coordinate order, the dot
 *     product in FP32 in k order with one rounding to nearest per step,
 *     dist2 = (s_i + s_j) - 2a clamped at 0, exact 0 on the diagonal,
 *     compared with (float)(eps^2): COUNT, PERPOINT, PAIRS (d2 bit for bit)
 *     and HIST must equal the model exactly, and each other;
 *  2. against an independent FP64 brute force, with the band below: a pair
 *     found by both has its FP32 d2 within the band of the FP64 one, a pair
 *     found by one side only lies within the band of eps^2.
 *
 * The band for points x, y with FP64 distance D, for a format of p
 * significand bits (u = 2^-p, half an ulp relative: bf16 p = 8, tf32
 * p = 11, fp16 p = 11) whose subnormal quantum is q (2^-133 for bf16,
 * 2^-136 for tf32 — FP32's exponent range — and 2^-24 for fp16):
 *  - inputs: |h_k - x_k| <= u |x_k| + q/2, so by the triangle inequality
 *    |D_h - D| <= r = u (|x| + |y|) + sqrt(d) q, and
 *    |D_h^2 - D^2| <= r (2 D + r);
 *  - FP32: the RZ norms lose less than one ulp (2^-23 relative) per step,
 *    d 2^-23 s in all; the RN dot product at most 1.01 d 2^-24 sum|h_x h_y|
 *    <= 1.01 d 2^-25 S (the products are exact: at most 11 + 11 bits); the
 *    two final operations 2^-24 each, relative to S and to the result: in
 *    all E <= (2d + 2) 2^-23 (S + D_h^2), with S = s_x + s_y <=
 *    ((1+u)|x| + sqrt(d) q/2)^2 + (the same for y);
 *  - the threshold (float)(eps^2): 2^-24 eps^2; FP64's own d2: d 2^-52 D^2.
 * The data stays far from overflow and from FP32's subnormal range, where
 * products would round before the add (documented in cpu_emul.h). */
#include <stdint.h>
#include <stdlib.h>

#include "center.h"
#include "check.h"
#include "scale_ref.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "fmt8.h"
#include "fmt_round.h"
#include "fp16.h"
#include "pair_collect.h"

typedef struct fmt_case {
    const char *engine;
    float (*round)(double);
    int p;    /* significand bits */
    double q; /* subnormal quantum */
    const char *precision;
    /* FP8: the data are first multiplied by 2^s, the largest s with
     * max |x| 2^s <= smax, and the rounded values divided by it again;
     * q is then in scaled units (case_scale below). 0: no scale. */
    double smax;
} fmt_case;

static const fmt_case cases[] = {
    {"cpu-bf16", bf16_round, 8, 0x1p-133, "bf16-32", 0},
    {"cpu-tf32", tf32_round, 11, 0x1p-136, "tf32-32", 0},
    {"cpu-fp16", fp16_round, 11, 0x1p-24, "fp16-32", 0},
    {"cpu-ue5m3", ue5m3_round, 4, 0x1p-17, "ue5m3-32", 0},
    {"cpu-ue4m4", ue4m4_round, 5, 0x1p-10, "ue4m4-32", 0},
    {"cpu-fp8-e4m3", fp8_e4m3_round, 4, 0x1p-9, "e4m3-32", 448},
    {"cpu-fp8-e5m2", fp8_e5m2_round, 3, 0x1p-16, "e5m2-32", 57344},
};

static int case_scale(const fmt_case *f, const dataset *ds)
{
    return scale_ref(ds, f->smax);
}
#define NCASES (sizeof cases / sizeof *cases)

static uint64_t rng_state;
static double rng_unit(void)
{
    return t_unit(&rng_state);
}

static dataset make_data(size_t n, size_t d, uint64_t seed, double scale, double offset)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = malloc(n * d * sizeof(double));
    rng_state = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = offset + scale * rng_unit();
    return ds;
}

/* ---- the scalar model ---- */

typedef struct model {
    size_t n, d;
    float *h, *s;
} model;

static model model_build(const dataset *ds, const fmt_case *f)
{
    model m = {ds->n, ds->d, malloc(ds->n * ds->d * sizeof(float)), malloc(ds->n * sizeof(float))};
    const int sc = case_scale(f, ds);
    for (size_t i = 0; i < ds->n; i++) {
        float s = 0;
        for (size_t k = 0; k < ds->d; k++) {
            float h = ldexpf(f->round(ldexp(((double *)ds->v)[i * ds->d + k], sc)), -sc);
            m.h[i * ds->d + k] = h;
            s = fp32_add_rz(s, h * h);
        }
        m.s[i] = s;
    }
    return m;
}

static float model_d2(const model *m, size_t i, size_t j)
{
    if (i == j)
        return 0.0f;
    float a = 0;
    for (size_t k = 0; k < m->d; k++) {
        float prod = m->h[i * m->d + k] * m->h[j * m->d + k]; /* exact */
        a = a + prod;
    }
    float d2 = (m->s[i] + m->s[j]) - 2.0f * a;
    return d2 < 0 ? 0.0f : d2;
}

static void model_free(model *m)
{
    free(m->h);
    free(m->s);
}

/* ---- FP64 brute force and the band ---- */

static double brute_d2(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = ((double *)ds->v)[i * ds->d + k] - ((double *)ds->v)[j * ds->d + k];
        s += u * u;
    }
    return s;
}

static double norm(const dataset *ds, size_t i)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++)
        s += ((double *)ds->v)[i * ds->d + k] * ((double *)ds->v)[i * ds->d + k];
    return sqrt(s);
}

/* sc: case_scale(f, ds), found once per dataset by the caller (it scans
 * every value). */
static double band(const dataset *ds, const fmt_case *f, int sc, size_t i, size_t j, double eps)
{
    const double u = ldexp(1.0, -f->p), sub = sqrt((double)ds->d) * ldexp(f->q, -sc) / 2;
    double nx = norm(ds, i), ny = norm(ds, j);
    double D = sqrt(brute_d2(ds, i, j));
    double r = u * (nx + ny) + 2 * sub;
    double hx = (1 + u) * nx + sub, hy = (1 + u) * ny + sub;
    double S = hx * hx + hy * hy;
    double Dh = D + r;
    double E = (2.0 * ds->d + 2) * 0x1p-23 * (S + Dh * Dh);
    return r * (2 * D + r) + E + 0x1p-24 * eps * eps + ds->d * 0x1p-52 * D * D;
}

/* ---- running the engines ---- */

static join_spec spec_for(const dataset *ds, double eps, join_mode mode, const engine_opts *o,
                          size_t q0, size_t q1)
{
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = q0;
    s.q1 = q1;
    s.mode = mode;
    s.opts = o;
    return s;
}

/* Every mode against the model over rows [q0, q1), with threads. */
static void modes_against_model(const fmt_case *f, const dataset *ds, double eps, size_t q0,
                                size_t q1, int threads)
{
    const engine *e = engine_find(f->engine);
    CHECK_MSG(e, "no engine %s", f->engine);
    model m = model_build(ds, f);
    const float lim = (float)(eps * eps);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    o.threads = threads;
    o.batch_pairs = 37; /* many small batches */
    size_t nq = q1 - q0;

    /* the model's answers */
    uint64_t want = 0, *want_pp = calloc(nq, sizeof *want_pp);
    for (size_t i = q0; i < q1; i++)
        for (size_t j = 0; j < ds->n; j++)
            if (model_d2(&m, i, j) <= lim) {
                want++;
                want_pp[i - q0]++;
            }

    join_result r;
    join_spec s = spec_for(ds, eps, JOIN_COUNT, &o, q0, q1);
    CHECK_MSG(engine_run(e, &s, &r) == 0, "%s: %s", e->name, err_msg());
    CHECK_MSG(r.pairs == want, "%s COUNT d=%zu: %llu, model %llu", e->name, ds->d,
              (unsigned long long)r.pairs, (unsigned long long)want);
    CHECK_STR_CONTAINS(r.precision, f->precision);

    uint64_t *pp = malloc(nq * sizeof *pp);
    s = spec_for(ds, eps, JOIN_PERPOINT, &o, q0, q1);
    s.counts = pp;
    CHECK(engine_run(e, &s, &r) == 0);
    CHECK(r.pairs == want);
    uint64_t sum = 0;
    for (size_t i = 0; i < nq; i++) {
        CHECK_MSG(pp[i] == want_pp[i], "%s PERPOINT row %zu: %llu, model %llu", e->name, q0 + i,
                  (unsigned long long)pp[i], (unsigned long long)want_pp[i]);
        sum += pp[i];
    }
    CHECK(sum == want);

    collect c = {0};
    s = spec_for(ds, eps, JOIN_PAIRS, &o, q0, q1);
    s.sink.put = collect_put;
    s.sink.ctx = &c;
    CHECK(engine_run(e, &s, &r) == 0);
    CHECK(r.pairs == want && c.len == want);
    qsort(c.p, c.len, sizeof *c.p, by_ij);
    for (size_t k = 0; k < c.len; k++) {
        const pair_rec *pr = &c.p[k];
        CHECK(pr->i >= q0 && pr->i < q1 && pr->j < ds->n);
        CHECK(k == 0 || by_ij(&c.p[k - 1], pr) < 0); /* each pair once */
        float md = model_d2(&m, pr->i, pr->j);
        CHECK_MSG(pr->d2 == (double)md, "%s pair (%u,%u): d2 %a, model %a", e->name, pr->i, pr->j,
                  pr->d2, (double)md);
    }

    /* HIST over eps/4 .. eps in 6 bins: the model binned with float edges */
    enum { NB = 6 };
    double edges[NB + 1];
    for (int b = 0; b <= NB; b++) {
        double t = eps * (0.25 + 0.75 * b / NB);
        edges[b] = t * t;
    }
    uint64_t hist[NB], below = 0, whist[NB] = {0}, wbelow = 0;
    s = spec_for(ds, 0, JOIN_HIST, &o, q0, q1);
    s.hist_edges = edges;
    s.hist_nbins = NB;
    s.hist = hist;
    s.hist_below = &below;
    CHECK(engine_run(e, &s, &r) == 0);
    for (size_t i = q0; i < q1; i++)
        for (size_t j = 0; j < ds->n; j++) {
            float v = model_d2(&m, i, j);
            if (v <= (float)edges[0]) {
                wbelow++;
                continue;
            }
            for (int b = 0; b < NB; b++)
                if (v <= (float)edges[b + 1]) {
                    whist[b]++;
                    break;
                }
        }
    CHECK_MSG(below == wbelow, "%s HIST below %llu, model %llu", e->name, (unsigned long long)below,
              (unsigned long long)wbelow);
    uint64_t cum = below;
    for (int b = 0; b < NB; b++) {
        CHECK_MSG(hist[b] == whist[b], "%s HIST bin %d: %llu, model %llu", e->name, b,
                  (unsigned long long)hist[b], (unsigned long long)whist[b]);
        cum += hist[b];
    }
    /* consistency: the top edge is eps^2 itself, so the histogram's total is
     * the COUNT at eps */
    CHECK_MSG(cum == want && r.pairs == want, "%s HIST total %llu, COUNT %llu", e->name,
              (unsigned long long)cum, (unsigned long long)want);

    free(c.p);
    free(pp);
    free(want_pp);
    model_free(&m);
}

TEST(emul_every_mode_equals_the_model)
{
    const size_t dims[] = {1, 3, 17, 70};
    for (size_t f = 0; f < NCASES; f++)
        for (size_t b = 0; b < 4; b++) {
            /* unit cube, and shifted to [30, 31) where the formats' steps
             * are coarse and many distances round */
            for (int v = 0; v < 2; v++) {
                dataset ds = make_data(90 + 13 * b, dims[b], 50 + b + 10 * v, 1.0, v ? 30 : 0);
                double eps = 0.45 * sqrt((double)dims[b]) * (v ? 1.2 : 1.0);
                modes_against_model(&cases[f], &ds, eps, 0, ds.n, 0);
                modes_against_model(&cases[f], &ds, eps, 5, ds.n - 3, 3);
                free(ds.v);
            }
        }
}

/* Against FP64: only pairs within the derived band of eps may differ. */
static void against_fp64(const fmt_case *f, const dataset *ds, double eps, size_t *ndiff,
                         size_t *nboth)
{
    const engine *e = engine_find(f->engine);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    collect c = {0};
    join_spec s = spec_for(ds, eps, JOIN_PAIRS, &o, 0, ds->n);
    s.sink.put = collect_put;
    s.sink.ctx = &c;
    join_result r;
    CHECK(engine_run(e, &s, &r) == 0);
    qsort(c.p, c.len, sizeof *c.p, by_ij);
    const int sc = case_scale(f, ds);
    size_t k = 0;
    for (uint32_t i = 0; i < ds->n; i++)
        for (uint32_t j = 0; j < ds->n; j++) {
            double D2 = brute_d2(ds, i, j);
            int in64 = D2 <= eps * eps;
            int inF = k < c.len && c.p[k].i == i && c.p[k].j == j;
            double bd = band(ds, f, sc, i, j, eps);
            if (inF && in64) {
                CHECK_MSG(fabs(c.p[k].d2 - D2) <= bd, "%s (%u,%u): d2 %.9g, FP64 %.9g, band %.3g",
                          f->engine, i, j, c.p[k].d2, D2, bd);
                ++*nboth;
            } else if (inF != in64) {
                ++*ndiff;
                CHECK_MSG(fabs(D2 - eps * eps) <= bd,
                          "%s d=%zu (%u,%u) only %s: |D^2 - eps^2| = %.3g beyond the band %.3g",
                          f->engine, ds->d, i, j, inF ? "the emulation" : "FP64",
                          fabs(D2 - eps * eps), bd);
            }
            k += inF;
        }
    CHECK(k == c.len);
    free(c.p);
}

TEST(emul_differs_from_fp64_only_near_eps)
{
    for (size_t f = 0; f < 2; f++) {
        size_t ndiff_unit = 0, nboth_unit = 0, ndiff_off = 0, nboth_off = 0;
        for (size_t d = 2; d <= 32; d *= 4)
            for (int v = 0; v < 3; v++) {
                /* unit cube; scaled by 1e-3; shifted to [30, 31) */
                double scale = v == 1 ? 1e-3 : 1, offset = v == 2 ? 30 : 0;
                dataset ds = make_data(160, d, 300 + d + 7 * v, scale, offset);
                for (int t = 0; t < 3; t++) {
                    double eps = scale * (0.2 + 0.3 * t) * sqrt((double)d) * 0.6;
                    if (v == 2)
                        against_fp64(&cases[f], &ds, eps, &ndiff_off, &nboth_off);
                    else
                        against_fp64(&cases[f], &ds, eps, &ndiff_unit, &nboth_unit);
                }
                free(ds.v);
            }
        /* At unit scale the band is narrow: disagreements are rare; at the
         * offset it is wide and some pairs must flip (the band is used). */
        CHECK_MSG(ndiff_unit * 100 < nboth_unit, "%s: %zu of %zu pairs differ", cases[f].engine,
                  ndiff_unit, nboth_unit);
        CHECK_MSG(ndiff_off > 0, "%s: no pair differs at offset 30 (%zu pairs)", cases[f].engine,
                  nboth_off);
    }
}

/* The FP8 emulations, whose scale moves with the data (1e-3 and 1e3 give
 * other powers of two than the unit cube): every pair found by both
 * within the band of its FP64 d2, every pair found by one side only
 * within the band of eps^2 (the band's q scaled as the data are). */
TEST(emul_fp8_within_band_of_fp64)
{
    for (size_t f = 0; f < NCASES; f++) {
        if (!cases[f].smax)
            continue;
        size_t ndiff = 0, nboth = 0;
        for (size_t d = 2; d <= 32; d *= 4)
            for (int v = 0; v < 3; v++) {
                double scale = v == 1 ? 1e-3 : (v == 2 ? 1e3 : 1);
                dataset ds = make_data(120, d, 900 + d + 7 * v, scale, 0);
                for (int t = 0; t < 3; t++)
                    against_fp64(&cases[f], &ds, scale * (0.2 + 0.3 * t) * sqrt((double)d) * 0.6,
                                 &ndiff, &nboth);
                free(ds.v);
            }
        CHECK(nboth > 0);
        fprintf(stderr, "%s: %zu pairs in both, %zu differ\n", cases[f].engine, nboth, ndiff);
    }
}

/* d2 of the pair (0, 1) of a 2-point dataset from one engine. */
static double pair01(const char *name, const double *x, size_t d)
{
    dataset ds = {0};
    ds.n = 2;
    ds.d = d;
    ds.v = (double *)x;
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    collect c = {0};
    join_spec s = spec_for(&ds, 1e30, JOIN_PAIRS, &o, 0, 1);
    s.sink.put = collect_put;
    s.sink.ctx = &c;
    join_result r;
    double v = -1;
    if (engine_run(engine_find(name), &s, &r) == 0)
        for (size_t k = 0; k < c.len; k++)
            if (c.p[k].j == 1)
                v = c.p[k].d2;
    free(c.p);
    return v;
}

/* The formats' rounding on hand-computed cases: straight from FP64 (no
 * double rounding through FP32), ties to even. */
TEST(emul_arithmetic_by_hand)
{
    /* 1 + 2^-8 + 2^-40: just above BF16's tie between 1 and 1 + 2^-7, so
     * it rounds up; through float the 2^-40 is lost, a tie, rounded to 1. */
    double x[2] = {0, 1 + 0x1p-8 + 0x1p-40};
    double h = 1 + 0x1p-7;
    CHECK(pair01("cpu-bf16", x, 1) == h * h); /* exact in FP32: 15 bits */
    /* The tie itself goes to even: 1. */
    x[1] = 1 + 0x1p-8;
    CHECK(pair01("cpu-bf16", x, 1) == 1.0);
    x[1] = 1 + 3 * 0x1p-8; /* tie between 1 + 2^-7 and 1 + 2^-6: to even */
    h = 1 + 0x1p-6;
    CHECK(pair01("cpu-bf16", x, 1) == h * h);
    /* TF32: 11 bits; 2049 is the tie between 2048 and 2050 */
    x[1] = 2049;
    CHECK(pair01("cpu-tf32", x, 1) == 2048.0 * 2048.0);
    x[1] = 1 + 0x1p-11 + 0x1p-40;
    h = 1 + 0x1p-10;
    CHECK(pair01("cpu-tf32", x, 1) == (double)(float)(h * h));
    /* BF16 overflow: past (2 - 2^-8) 2^127 a coordinate is Inf, the norm
     * Inf and d2 not a number: never a pair. The largest finite BF16 value
     * stays finite (its square overflows FP32, so d2 is Inf: not a pair
     * either, but for another reason). */
    x[1] = 0x1.ffp127;
    CHECK(pair01("cpu-bf16", x, 1) == -1);
    /* Norm expansion in FP32: two points far from the origin and close
     * together; d2 = (s0 + s1) - 2a loses the small distance as FASTED
     * does. x0 = 256, x1 = 257: bf16(257) = 256 (8 bits: the tie goes to
     * even), so d2 = 0; tf32 keeps 257 and gets 1 exactly. */
    double y[2] = {256, 257};
    CHECK(pair01("cpu-bf16", y, 1) == 0.0);
    CHECK(pair01("cpu-tf32", y, 1) == 1.0);
}

/* The cache holds conversions per format: alternating two formats on one
 * dataset (as compare does, block by block) reuses both, and a format never
 * sees another's conversion. */
TEST(emul_cache_per_format)
{
    dataset ds = make_data(150, 6, 77, 1.0, 30);
    ds.hash = 0xfeed;
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    double eps = 0.9;
    uint64_t first[2] = {0, 0};
    for (int round = 0; round < 3; round++)
        for (int f = 0; f < 2; f++) {
            join_spec s = spec_for(&ds, eps, JOIN_COUNT, &o, 0, ds.n);
            join_result r;
            CHECK(engine_run(engine_find(cases[f].engine), &s, &r) == 0);
            if (round == 0) {
                first[f] = r.pairs;
                CHECK(strstr(r.variant, "cached") == NULL);
            } else {
                CHECK_MSG(strstr(r.variant, "cached") != NULL, "%s: %s", cases[f].engine,
                          r.variant);
                CHECK_EQ_INT(r.pairs, first[f]);
            }
            CHECK_STR_CONTAINS(r.variant, cases[f].engine + 4); /* "bf16", "tf32" */
        }
    /* the counts are each format's own (the model's) */
    for (int f = 0; f < 2; f++) {
        model m = model_build(&ds, &cases[f]);
        uint64_t want = 0;
        for (size_t i = 0; i < ds.n; i++)
            for (size_t j = 0; j < ds.n; j++)
                want += model_d2(&m, i, j) <= (float)(eps * eps);
        CHECK_EQ_INT(first[f], want);
        model_free(&m);
    }
    CHECK(first[0] != first[1]); /* at offset 30 BF16 and TF32 disagree */
    free(ds.v);
}
