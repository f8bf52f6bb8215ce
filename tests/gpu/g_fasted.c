/* The tensor-core engines (fasted = FP16, and every other format in
 * tc_fmts below) against the FP64 reference (cpu), their CPU emulations
 * (cpu-fp16, cpu-bf16, ...) and themselves (modes, variants, symmetry,
 * buffer refills, query ranges, self-pairs).
 *
 * The band of pairs that may differ from FP64. An engine rounds every
 * coordinate to its format, relative error u (FP16: 2^-11; BF16: 2^-8;
 * TF32: 2^-11; half an ulp of the significand, to nearest), so a point x becomes
 * x + dx with |dx| <= u|x| (and, for the difference of two points,
 * |d(x - y)| <= u(|x| + |y|), |.| the Euclidean norm). Then
 *   |d2(x~, y~) - d2(x, y)| <= 2 |x - y| u (|x| + |y|) + u^2 (|x| + |y|)^2.
 * The FP32 part (norms with round-toward-zero fma over d terms, the tensor
 * core's FP32 dot over d terms, s_i + s_j - 2a) adds at most
 *   (d + 3) 2^-23 (|x|^2 + |y|^2 + 2 |x||y|) = (d + 3) 2^-23 (|x| + |y|)^2
 * (one FP32 ulp of a partial sum, 2^-23 relative, per operation; all partial
 * sums are bounded by the final norms since every term is >= 0, the dot's
 * by |x||y|). A pair found by only one side must therefore have an exact
 * FP64 d2 within B = 2 eps u (|x|+|y|) + (u^2 + (d+3) 2^-23) (|x|+|y|)^2 of
 * eps^2, with norms from the FP64 data. Against cpu-fp16 (same FP16 inputs,
 * FP32 arithmetic in another order) only the FP32 term remains. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "center.h"
#include "check.h"
#include "scale_ref.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "fmt_round.h"
#include "fp16.h"
#include "kernels.h"

typedef struct pairs {
    uint64_t *key; /* i << 32 | j */
    size_t k, cap;
} pairs;

static int put_pairs(void *ctx, const pair_batch *b)
{
    pairs *p = ctx;
    if (p->k + b->k > p->cap) {
        p->cap = (p->k + b->k) * 2;
        p->key = xrealloc(p->key, p->cap * sizeof *p->key);
    }
    for (size_t t = 0; t < b->k; t++)
        p->key[p->k++] = (uint64_t)b->i[t] << 32 | b->j[t];
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int has_gpu(void)
{
    return kern_device_count() > 0;
}

/* Run engine name in pairs mode; returns 0 and sorted keys. */
static int join_pairs(const char *name, const dataset *ds, double eps, const engine_opts *o,
                      size_t q0, size_t q1, pairs *out)
{
    memset(out, 0, sizeof *out);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = q0;
    s.q1 = q1;
    s.mode = JOIN_PAIRS;
    s.opts = o;
    s.sink.put = put_pairs;
    s.sink.ctx = out;
    join_result r;
    int rc = engine_run(engine_find(name), &s, &r);
    if (rc)
        return rc;
    if (r.pairs != out->k)
        return err_set(TCJ_EINVAL, "%s: result says %llu pairs, sink got %zu", name,
                       (unsigned long long)r.pairs, out->k);
    if (out->k)
        qsort(out->key, out->k, sizeof *out->key, cmp_u64);
    return 0;
}

static double norm_of(const dataset *ds, size_t i)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++)
        s += dataset_value(ds, i * ds->d + k) * dataset_value(ds, i * ds->d + k);
    return sqrt(s);
}

static double d2_exact(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double t = dataset_value(ds, i * ds->d + k) - dataset_value(ds, j * ds->d + k);
        s += t * t;
    }
    return s;
}

/* Round x to nearest even with p significand bits, smallest normal
 * exponent emin (below it the quantum stays 2^(emin-p+1)) and largest
 * finite value max (beyond it +-Inf): the formats' rounding written
 * independently of the engines, with frexp and ldexp. */
static double round_sig(double x, int p, int emin, double max)
{
    if (x == 0 || !isfinite(x))
        return x;
    int e;
    frexp(x, &e); /* x = m 2^e, 0.5 <= |m| < 1: the leading bit is 2^(e-1) */
    if (e - 1 < emin)
        e = emin + 1;
    const double q = ldexp(1.0, e - p);    /* the quantum at this exponent */
    const double r = nearbyint(x / q) * q; /* default rounding: to nearest even */
    return fabs(r) > max ? copysign(INFINITY, x) : r;
}
static double round_fp16(double x)
{
    return round_sig(x, 11, -14, 65504);
}
static double round_bf16(double x)
{
    return round_sig(x, 8, -126, ldexp(255.0, 120));
}
static double round_tf32(double x)
{
    return round_sig(x, 11, -126, ldexp(2047.0, 117));
}
/* FP8 as cvt.rn.satfinite: the largest finite value instead of Inf (the
 * data are scaled below it first, so only the rounding matters). */
static double round_e4m3(double x)
{
    double r = round_sig(x, 4, -6, 448);
    return isinf(r) ? copysign(448, x) : r;
}
static double round_e5m2(double x)
{
    double r = round_sig(x, 3, -14, 57344);
    return isinf(r) ? copysign(57344, x) : r;
}

/* A tensor-core format under test: its engine, its CPU emulation, its unit
 * roundoff u and its rounding of one input value; for the FP8 formats,
 * which scale the data by the power of two that brings the largest |v|
 * to at most smax, also their smallest subnormal (in scaled units) and
 * the width of their accumulator (acc_bits, below; 0: IEEE FP32). */
typedef struct tc_fmt {
    const char *engine, *emul;
    double u;
    double (*round)(double);
    double smax, sub;
    int acc_bits;
} tc_fmt;
/* FP8 MMAs do not accumulate in IEEE FP32: NVIDIA documents no width, and
 * the DeepSeek-V3 report (section 3.3.2) measured about 14 bits retained
 * on Hopper; the emulation's FP32 sums differ from the tensor core's well
 * beyond FP32 rounding (measured here on an H200: d >= 37 breaks the FP32
 * band, d <= 16 agrees exactly). The band takes 13 bits: per 32-value k
 * step the accumulator and 32 exact products, each aligned to the largest
 * and cut to 13 bits, lose at most 33 2^-12 M, M <= sum|x_k y_k| <=
 * |x||y| <= (|x| + |y|)^2 / 4; over ceil(d/32) steps, and times 2 for
 * d2 = s - 2a, and times 2 again when both sides are tensor cores.
 *
 * The wgmma kernel promotes (unless `set fp8-acc fast`): the tensor core
 * sums one chunk of C = FP8_CHUNK values from 0 (C/32 steps), and FP32
 * adds the chunks. Within chunk c every aligned term and partial sum is at
 * most M_c = sum over the chunk of |x_k y_k|, so a step loses at most
 * 33 2^-12 M_c, and over all chunks sum_c M_c <= |x||y|: the tensor
 * core's part is at most min(ceil(d/32), C/32) 33 2^-12 |x||y| whatever
 * d is. The d/C FP32 adds of the chunks are FP32 operations on partial
 * sums bounded by |x||y|, inside the (d + 3) 2^-23 term already. */
#define FP8_ACC_BITS 13
#define FP8_CHUNK (128 * KERN_FP8_PROMOTE_SLICES)
static const tc_fmt tc_fmts[] = {
    {"fasted", "cpu-fp16", 1.0 / 2048, round_fp16, 0, 0, 0},
    {"bf16", "cpu-bf16", 1.0 / 256, round_bf16, 0, 0, 0},
    {"tf32", "cpu-tf32", 1.0 / 2048, round_tf32, 0, 0, 0},
    {"fp8-e4m3", "cpu-fp8-e4m3", 1.0 / 16, round_e4m3, 448, 0x1p-9, FP8_ACC_BITS},
    {"fp8-e5m2", "cpu-fp8-e5m2", 1.0 / 8, round_e5m2, 57344, 0x1p-16, FP8_ACC_BITS},
};

/* 1 while the FP8 runs here ask for the tensor core's accumulation alone
 * (engine_opts.fp8_acc_fast); the band follows. */
static int g_fp8_fast;

/* The FP8 engines promote on the wgmma kernel (Hopper) unless asked not to;
 * the mma.sync path (sm_89) never does. */
static int fp8_promoted(void)
{
    return !g_fp8_fast && kern_device_has_wgmma(0) == 1;
}

/* The accumulator term above, for the sum of the two norms nx. */
static double acc_term(const tc_fmt *f, size_t d, double nx)
{
    if (!f->acc_bits)
        return 0;
    double steps = (double)((d + 31) / 32);
    if (fp8_promoted() && steps > FP8_CHUNK / 32)
        steps = FP8_CHUNK / 32;
    return 2 * 2 * steps * 33 * ldexp(1.0, 1 - f->acc_bits) * nx * nx / 4;
}

static int fmt_scale(const tc_fmt *f, const dataset *ds)
{
    return scale_ref(ds, f->smax);
}
#define NFMT (sizeof tc_fmts / sizeof tc_fmts[0])
static const tc_fmt *FP16 = &tc_fmts[0];

/* The band of the header comment for format f; exact = 0 drops the
 * input-rounding term (a comparison on the rounded data). A scaled format
 * (scale s) adds to each coordinate's rounding error an absolute half
 * subnormal a = sub 2^-s / 2, so |d(x - y)| <= u (|x| + |y|) + 2 a sqrt(d)
 * =: delta, and the input term is 2 eps delta + delta^2. */
static double band(const dataset *ds, size_t i, size_t j, double eps, const tc_fmt *f, int exact,
                   int scale)
{
    const double u = f->u, e23 = 1.0 / 8388608;
    double nx = norm_of(ds, i) + norm_of(ds, j);
    double b = ((double)ds->d + 3) * e23 * nx * nx + acc_term(f, ds->d, nx);
    if (exact) {
        const double delta = u * nx + (f->smax ? ldexp(f->sub, -scale) * sqrt((double)ds->d) : 0);
        b += 2 * eps * delta + delta * delta;
    }
    return b;
}

/* Compare A (an engine of format f) with B (a reference): every pair only
 * one side has lies in the band; returns the overlap score (eq. 3) over the
 * query rows. *bad counts pairs outside the band. exact: B is FP64 on the
 * data; else B has the same rounded inputs (an emulation or another kernel
 * of the format). */
static double compare(const dataset *ds, double eps, const pairs *A, const pairs *B,
                      const tc_fmt *f, int exact, size_t q0, size_t q1, size_t *bad, size_t *diff)
{
    /* Against the same rounded inputs the exact distances are those of the
     * rounded data: compare on it, with the FP32 band only. */
    dataset r16;
    const int scale = fmt_scale(f, ds);
    if (!exact) {
        r16 = *ds;
        r16.type = DTYPE_F64; /* the rounded values, as doubles */
        r16.v = xmalloc(ds->n * ds->d * sizeof(double));
        for (size_t t = 0; t < ds->n * ds->d; t++)
            ((double *)r16.v)[t] = ldexp(f->round(ldexp(dataset_value(ds, t), scale)), -scale);
        ds = &r16;
    }
    size_t nq = q1 - q0;
    size_t *inter = xcalloc(nq, sizeof *inter), *uni = xcalloc(nq, sizeof *uni);
    size_t a = 0, b = 0;
    *bad = *diff = 0;
    while (a < A->k || b < B->k) {
        uint64_t ka = a < A->k ? A->key[a] : UINT64_MAX, kb = b < B->k ? B->key[b] : UINT64_MAX;
        uint64_t k = ka < kb ? ka : kb;
        size_t i = (size_t)(k >> 32), j = (size_t)(k & 0xffffffffu);
        if (i >= q0 && i < q1) {
            uni[i - q0]++;
            if (ka == kb)
                inter[i - q0]++;
        }
        if (ka != kb) {
            (*diff)++;
            double e = fabs(d2_exact(ds, i, j) - eps * eps);
            if (e > band(ds, i, j, eps, f, exact, scale)) {
                if (*bad < 5)
                    fprintf(stderr, "pair (%zu,%zu) only in %s: d2 %.9g eps2 %.9g band %.3g\n", i,
                            j, ka < kb ? f->engine : "reference", d2_exact(ds, i, j), eps * eps,
                            band(ds, i, j, eps, f, exact, scale));
                (*bad)++;
            }
        }
        if (ka <= kb)
            a++;
        if (kb <= ka)
            b++;
    }
    double ov = 0;
    for (size_t q = 0; q < nq; q++)
        ov += uni[q] ? (double)inter[q] / (double)uni[q] : 1.0;
    free(inter);
    free(uni);
    if (!exact)
        free(r16.v);
    return nq ? ov / (double)nq : 1.0;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* eps giving about `target` neighbours per point, from sampled distances. */
static double eps_for(const dataset *ds, double target)
{
    size_t m = 20000;
    double *d = xmalloc(m * sizeof *d);
    uint64_t s = 88172645463325252ull;
    for (size_t t = 0; t < m; t++) {
        size_t i = rng_next(&s) % ds->n, j = rng_next(&s) % ds->n;
        d[t] = d2_exact(ds, i, j);
    }
    qsort(d, m, sizeof *d, cmp_u64); /* non-negative doubles sort as integers */
    size_t k = (size_t)(target / (double)ds->n * (double)m);
    if (k >= m - 1)
        k = m - 2;
    /* halfway to the next distinct sampled d2, so integer data has no pairs
     * sitting exactly on eps (where FP64 and FP32 eps^2 disagree) */
    size_t k2 = k + 1;
    while (k2 < m - 1 && d[k2] == d[k])
        k2++;
    double e = sqrt(0.5 * (d[k] + d[k2]));
    free(d);
    return e > 0 ? e : 1e-3;
}

static int gen(const char *kind, size_t n, size_t d, dataset *ds)
{
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.kind = kind;
    g.n = n;
    g.d = d;
    g.seed = 7 + d; /* each kind's parameters at their defaults */
    return dataset_generate(&g, ds);
}

/* The first n rows of a loaded file as its own dataset. */
static int load_head(const char *file, const char *cols, size_t dim, size_t n, dataset *ds)
{
    load_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.header = -1;
    lo.cols = cols;
    lo.dim = dim;
    lo.limit = n;
    int rc = dataset_load(t_dataset(file), &lo, ds);
    return rc;
}

static void check_fmt_against_refs(const tc_fmt *f, const dataset *ds, double eps, const char *what,
                                   double min_overlap)
{
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    o.fp8_acc_fast = g_fp8_fast;
    pairs F, C, H;
    int rc = join_pairs(f->engine, ds, eps, &o, 0, ds->n, &F);
    CHECK_MSG(rc == 0, "%s: %s: %s", what, f->engine, err_msg());
    rc = join_pairs("cpu", ds, eps, &o, 0, ds->n, &C);
    CHECK_MSG(rc == 0, "%s: cpu: %s", what, err_msg());
    CHECK_MSG(engine_find(f->emul) != NULL, "no emulation engine %s", f->emul);
    rc = join_pairs(f->emul, ds, eps, &o, 0, ds->n, &H);
    CHECK_MSG(rc == 0, "%s: %s: %s", what, f->emul, err_msg());
    size_t bad, diff, bad16, diff16;
    double ov = compare(ds, eps, &F, &C, f, 1, 0, ds->n, &bad, &diff);
    double ov16 = compare(ds, eps, &F, &H, f, 0, 0, ds->n, &bad16, &diff16);
    fprintf(stderr,
            "%s %s eps=%g: %zu, cpu %zu, %s %zu pairs; vs cpu overlap %.6f, %zu differ "
            "(%zu outside band); vs %s overlap %.6f, %zu differ (%zu outside)\n",
            f->engine, what, eps, F.k, C.k, f->emul, H.k, ov, diff, bad, f->emul, ov16, diff16,
            bad16);
    CHECK_MSG(F.k >= ds->n, "%s: %zu pairs < n", what, F.k);
    CHECK_MSG(bad == 0, "%s %s: %zu of %zu differing pairs outside the input-rounding band",
              f->engine, what, bad, diff);
    CHECK_MSG(bad16 == 0, "%s %s: %zu of %zu pairs differ from %s beyond FP32 rounding", f->engine,
              what, bad16, diff16, f->emul);
    CHECK_MSG(ov >= min_overlap, "%s: overlap %.6f vs cpu", what, ov);
    free(F.key);
    free(C.key);
    free(H.key);
}

static void check_against_refs(const dataset *ds, double eps, const char *what, double min_overlap)
{
    check_fmt_against_refs(FP16, ds, eps, what, min_overlap);
}

/* Generated data at ~10 and ~60 neighbours: FP16 input rounding puts
 * 0.1-0.3% of the reference pairs inside the band (measured on the H200,
 * printed per case: overlap 0.993-0.9998), and each such pair moves its
 * point's Jaccard by 1/10..1/60, so the overlap >= 0.999 is out of
 * reach of FP16 inputs here; it is asserted on exact-in-FP16 real data
 * below. What is exact is asserted for every case: no differing pair
 * outside the derived band, against cpu and against cpu-fp16. */
TEST(fasted_vs_cpu_generated)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    const char *kinds[] = {"uniform", "expo", "gauss"};
    const size_t dims[] = {3, 64, 100, 128, 256};
    for (int k = 0; k < 3; k++)
        for (int t = 0; t < 5; t++) {
            dataset ds;
            memset(&ds, 0, sizeof ds);
            CHECK_MSG(gen(kinds[k], 1500, dims[t], &ds) == 0, "gen: %s", err_msg());
            char what[64];
            snprintf(what, sizeof what, "%s d=%zu", kinds[k], dims[t]);
            check_against_refs(&ds, eps_for(&ds, 10), what, 0);
            check_against_refs(&ds, eps_for(&ds, 60), what, 0);
            dataset_free(&ds);
        }
}

TEST(fasted_vs_cpu_datasets)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    /* letter: column 0 is the label; htru2: column 8 is the class */
    const char *files[] = {"sift5k.fvecs", "letter.csv", "kitti_000000_xyzr.f32",
                           "olivetti_400x4096_u8.npy", "htru2.csv"};
    const char *cols[] = {NULL, "-0", NULL, NULL, "-8"};
    const size_t dims[] = {0, 0, 4, 0, 0}; /* kitti: raw f32, 4 per point */
    /* The overlap >= 0.999 is asserted where FASTED's arithmetic
     * is exact up to the last FP32 step: values exact in FP16 and squared
     * norms below 2^24 (sift5k, letter). kitti and htru2 lose to FP16 input
     * rounding (coordinates up to ~80 and ~200), olivetti to FP32 norms near
     * 2^28; measured overlaps are printed, the band is asserted for all. */
    const double min_ov[] = {0.999, 0.999, 0, 0, 0};
    for (int f = 0; f < 5; f++) {
        dataset ds;
        memset(&ds, 0, sizeof ds);
        int rc = load_head(files[f], cols[f], dims[f], 3000, &ds);
        CHECK_MSG(rc == 0, "%s: %s", files[f], err_msg());
        check_against_refs(&ds, eps_for(&ds, 5), files[f], min_ov[f]);
        check_against_refs(&ds, eps_for(&ds, 40), files[f], min_ov[f]);
        dataset_free(&ds);
    }
}

static int count_run_e(const char *name, const dataset *ds, join_mode mode, double eps,
                       const engine_opts *o, uint64_t *pairs_out, uint64_t *counts,
                       const double *edges, size_t nb, uint64_t *hist, uint64_t *below)
{
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.opts = o;
    s.mode = mode;
    s.counts = counts;
    s.hist_edges = edges;
    s.hist_nbins = nb;
    s.hist = hist;
    s.hist_below = below;
    join_result r;
    int rc = engine_run(engine_find(name), &s, &r);
    *pairs_out = r.pairs;
    return rc;
}

static int count_run(const dataset *ds, join_mode mode, double eps, const engine_opts *o,
                     uint64_t *pairs_out, uint64_t *counts, const double *edges, size_t nb,
                     uint64_t *hist, uint64_t *below)
{
    return count_run_e("fasted", ds, mode, eps, o, pairs_out, counts, edges, nb, hist, below);
}

/* COUNT, the sum of PERPOINT, PAIRS and HIST (cumulated to each edge)
 * agree, symmetric on and off, for every format. */
TEST(fasted_modes_agree)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    for (size_t f = 0; f < NFMT; f++) {
        const char *name = tc_fmts[f].engine;
        dataset ds;
        memset(&ds, 0, sizeof ds);
        CHECK(gen("gauss", 3000, 96, &ds) == 0);
        engine_opts o;
        engine_opts_default(&o);
        o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
        enum { NB = 4 };
        double edges[NB + 1];
        for (int k = 0; k <= NB; k++) {
            double e = eps_for(&ds, 2.0 + 6.0 * k * k);
            edges[k] = e * e;
        }
        uint64_t *counts = xcalloc(ds.n, sizeof *counts);
        for (int sym = 0; sym < 2; sym++) {
            o.symmetric = sym;
            uint64_t hist[NB], below, tot;
            CHECK_MSG(
                count_run_e(name, &ds, JOIN_HIST, 0, &o, &tot, NULL, edges, NB, hist, &below) == 0,
                "%s", err_msg());
            uint64_t cum = below;
            for (int k = 0; k <= NB; k++) {
                if (k > 0)
                    cum += hist[k - 1];
                double eps = sqrt(edges[k]);
                uint64_t c, pp;
                CHECK_MSG(
                    count_run_e(name, &ds, JOIN_COUNT, eps, &o, &c, NULL, NULL, 0, NULL, NULL) == 0,
                    "%s", err_msg());
                CHECK_MSG(count_run_e(name, &ds, JOIN_PERPOINT, eps, &o, &pp, counts, NULL, 0, NULL,
                                      NULL) == 0,
                          "%s", err_msg());
                uint64_t sum = 0;
                for (size_t i = 0; i < ds.n; i++)
                    sum += counts[i];
                pairs P;
                CHECK_MSG(join_pairs(name, &ds, eps, &o, 0, ds.n, &P) == 0, "%s", err_msg());
                fprintf(stderr, "%s sym=%d edge %d: count %llu perpoint %llu pairs %zu hist %llu\n",
                        name, sym, k, (unsigned long long)c, (unsigned long long)sum, P.k,
                        (unsigned long long)cum);
                CHECK_EQ_INT(c, sum);
                CHECK_EQ_INT(c, pp);
                CHECK_EQ_INT(c, P.k);
                CHECK_EQ_INT(c, cum);
                /* Per point: each row's count equals its pairs. */
                size_t q = 0;
                for (size_t i = 0; i < ds.n; i++) {
                    uint64_t m = 0;
                    while (q < P.k && (P.key[q] >> 32) == i) {
                        m++;
                        q++;
                    }
                    CHECK_EQ_INT(m, counts[i]);
                }
                free(P.key);
            }
            CHECK_EQ_INT(tot, cum);
        }
        free(counts);
        dataset_free(&ds);
    }
}

static int same_pairs(const pairs *a, const pairs *b)
{
    return a->k == b->k && (a->k == 0 || !memcmp(a->key, b->key, a->k * sizeof *a->key));
}

/* Each compiled mma.sync variant (and ordering off) returns the same pair
 * set as the mma.sync kernel with every switch on (`wgmma off`). */
TEST(fasted_variants_same_pairs)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("expo", 2500, 200, &ds) == 0);
    double eps = eps_for(&ds, 30);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    for (int sym = 0; sym < 2; sym++) {
        o.symmetric = sym;
        o.fasted_off = FASTED_OFF_WGMMA;
        pairs ref;
        CHECK_MSG(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &ref) == 0, "%s", err_msg());
        /* each switch alone (but wgmma), then the paper's pair */
        for (unsigned b = 0; b < 9; b++) {
            o.fasted_off = b < 8 ? 1u << b : FASTED_OFF_ASYNC_COPY | FASTED_OFF_PIPELINE;
            pairs v;
            CHECK_MSG(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &v) == 0, "off %u: %s", b,
                      err_msg());
            CHECK_MSG(same_pairs(&ref, &v), "variant %s (sym %d): %zu pairs vs %zu",
                      kern_fasted_variant_name(o.fasted_off), sym, v.k, ref.k);
            free(v.key);
        }
        free(ref.key);
    }
    o.fasted_off = 3;
    pairs v;
    CHECK(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &v) == TCJ_EINVAL);
    dataset_free(&ds);
}

/* The default kernel (wgmma + TMA on a Hopper, else the same mma.sync
 * kernel) against mma.sync all-on: the FP16 inputs are the same and only
 * the FP32 accumulation order differs, so every pair one side alone has
 * lies in the FP32 band of the header comment. Sizes that are not
 * multiples of the 128x256 tile, d not a multiple of 64, d above one k
 * slice; both symmetries; COUNT and PERPOINT agree with the pairs. */
TEST(fasted_default_vs_mma_sync)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    for (size_t f = 0; f < NFMT; f++) {
        const tc_fmt *fm = &tc_fmts[f];
        const struct {
            const char *kind;
            size_t n, d;
            double sel;
        } cs[] = {{"uniform", 3001, 37, 25},
                  {"expo", 1000, 200, 30},
                  {"gauss", 5000, 4096, 10},
                  {"expo", 300, 64, 40},
                  {"gauss", 2777, 130, 15}};
        for (size_t c = 0; c < sizeof cs / sizeof cs[0]; c++) {
            dataset ds;
            memset(&ds, 0, sizeof ds);
            CHECK(gen(cs[c].kind, cs[c].n, cs[c].d, &ds) == 0);
            double eps = eps_for(&ds, cs[c].sel);
            engine_opts o;
            engine_opts_default(&o);
            o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
            uint64_t *counts = xcalloc(ds.n, sizeof *counts);
            for (int sym = 0; sym < 2; sym++) {
                o.symmetric = sym;
                o.fasted_off = 0;
                join_spec s;
                memset(&s, 0, sizeof s);
                s.ds = &ds;
                s.eps = eps;
                s.q1 = ds.n;
                s.opts = &o;
                s.mode = JOIN_COUNT;
                join_result r;
                CHECK_MSG(engine_run(engine_find(fm->engine), &s, &r) == 0, "%s", err_msg());
                pairs A, B;
                CHECK_MSG(join_pairs(fm->engine, &ds, eps, &o, 0, ds.n, &A) == 0, "%s", err_msg());
                uint64_t pp;
                CHECK(count_run_e(fm->engine, &ds, JOIN_PERPOINT, eps, &o, &pp, counts, NULL, 0,
                                  NULL, NULL) == 0);
                o.fasted_off = FASTED_OFF_WGMMA;
                CHECK_MSG(join_pairs(fm->engine, &ds, eps, &o, 0, ds.n, &B) == 0, "%s", err_msg());
                size_t bad, diff;
                compare(&ds, eps, &A, &B, fm, 0, 0, ds.n, &bad, &diff);
                fprintf(stderr, "%s %s n=%zu d=%zu sym=%d [%s]: %zu vs %zu pairs, %zu differ\n",
                        fm->engine, cs[c].kind, ds.n, ds.d, sym, r.variant, A.k, B.k, diff);
                CHECK_EQ_INT(bad, 0);
                CHECK_EQ_INT(r.pairs, A.k);
                CHECK_EQ_INT(pp, A.k);
                size_t q = 0;
                for (size_t i = 0; i < ds.n; i++) {
                    uint64_t m = 0;
                    while (q < A.k && (A.key[q] >> 32) == i) {
                        m++;
                        q++;
                    }
                    CHECK_EQ_INT(m, counts[i]);
                }
                free(A.key);
                free(B.key);
            }
            free(counts);
            dataset_free(&ds);
        }
    }
}

/* The largest histogram (4096 bins, the most shared memory either kernel
 * takes): the bins sum to the COUNT at the top edge, and each cumulated
 * edge to the COUNT at that edge. */
TEST(fasted_hist_max_bins)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("gauss", 2100, 200, &ds) == 0);
    enum { NB = 4096 };
    double top = eps_for(&ds, 40), *edges = xmalloc((NB + 1) * sizeof *edges);
    /* edges e*e with the e COUNT is given, so both round the same */
    for (int k = 0; k <= NB; k++)
        edges[k] = (top * k / NB) * (top * k / NB);
    uint64_t *hist = xcalloc(NB, sizeof *hist), below, tot;
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    for (int sym = 0; sym < 2; sym++) {
        o.symmetric = sym;
        CHECK_MSG(count_run(&ds, JOIN_HIST, 0, &o, &tot, NULL, edges, NB, hist, &below) == 0, "%s",
                  err_msg());
        const int probe[] = {1, 1000, 2500, NB}; /* eps must be > 0 */
        for (int t = 0; t < 4; t++) {
            uint64_t cum = below, c;
            for (int k = 0; k < probe[t]; k++)
                cum += hist[k];
            CHECK(count_run(&ds, JOIN_COUNT, top * probe[t] / NB, &o, &c, NULL, NULL, 0, NULL,
                            NULL) == 0);
            CHECK_EQ_INT(c, cum);
            if (probe[t] == NB)
                CHECK_EQ_INT(tot, cum);
        }
        fprintf(stderr, "hist %d bins sym=%d: %llu pairs\n", NB, sym, (unsigned long long)tot);
    }
    free(edges);
    free(hist);
    dataset_free(&ds);
}

/* Symmetric on and off agree up to FP32 rounding near eps. */
TEST(fasted_symmetric_on_off)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("uniform", 3001, 37, &ds) == 0);
    double eps = eps_for(&ds, 25);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    pairs A, B;
    CHECK(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &A) == 0);
    o.symmetric = 0;
    CHECK(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &B) == 0);
    size_t bad, diff;
    compare(&ds, eps, &A, &B, FP16, 0, 0, ds.n, &bad, &diff);
    fprintf(stderr, "symmetric on %zu off %zu, %zu differ\n", A.k, B.k, diff);
    CHECK_EQ_INT(bad, 0);
    free(A.key);
    free(B.key);
    dataset_free(&ds);
}

/* A pair buffer far smaller than the result: many refills, nothing lost
 * or repeated. */
TEST(fasted_pair_buffer_refills)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("gauss", 4000, 64, &ds) == 0);
    double eps = eps_for(&ds, 150);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    for (size_t f = 0; f < NFMT; f++)
        for (int sym = 0; sym < 2; sym++) {
            o.symmetric = sym;
            o.batch_pairs = (size_t)1 << 24;
            pairs A, B;
            /* The coarser formats find fewer pairs at the same eps: widen
             * it until the result is well beyond the device buffer. */
            double e = eps;
            CHECK(join_pairs(tc_fmts[f].engine, &ds, e, &o, 0, ds.n, &A) == 0);
            for (int t = 0; t < 8 && A.k <= 10 * 32768; t++) {
                free(A.key);
                e *= 1.15;
                CHECK(join_pairs(tc_fmts[f].engine, &ds, e, &o, 0, ds.n, &A) == 0);
            }
            o.batch_pairs = 1000;
            CHECK_MSG(join_pairs(tc_fmts[f].engine, &ds, e, &o, 0, ds.n, &B) == 0, "%s", err_msg());
            fprintf(stderr, "%s refills sym=%d: %zu pairs, small buffer %zu\n", tc_fmts[f].engine,
                    sym, A.k, B.k);
            CHECK(A.k > 10 * 32768); /* the device buffer holds 32768 pairs */
            CHECK(same_pairs(&A, &B));
            free(A.key);
            free(B.key);
        }
    dataset_free(&ds);
}

/* Every self-pair at a tiny eps, where s_i + s_j - 2a cancels badly. */
TEST(fasted_self_pairs_tiny_eps)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("uniform", 2000, 4096, &ds) == 0);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    for (int sym = 0; sym < 2; sym++) {
        o.symmetric = sym;
        pairs P;
        CHECK(join_pairs("fasted", &ds, 0.001, &o, 0, ds.n, &P) == 0);
        CHECK(P.k >= ds.n);
        size_t self = 0;
        for (size_t t = 0; t < P.k; t++)
            self += (P.key[t] >> 32) == (P.key[t] & 0xffffffffu);
        CHECK_EQ_INT(self, ds.n);
        free(P.key);
    }
    dataset_free(&ds);
}

/* Query rows [q0, q1): the rows of the full join, nothing else. */
TEST(fasted_query_ranges)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("expo", 2600, 128, &ds) == 0);
    double eps = eps_for(&ds, 20);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF; /* the arithmetic as modelled here: uncentred */
    o.symmetric = 0;
    pairs full;
    CHECK(join_pairs("fasted", &ds, eps, &o, 0, ds.n, &full) == 0);
    const size_t r[][2] = {{0, 1}, {5, 133}, {128, 256}, {1000, 2600}, {2599, 2600}, {77, 77}};
    for (int t = 0; t < 6; t++) {
        pairs P;
        CHECK_MSG(join_pairs("fasted", &ds, eps, &o, r[t][0], r[t][1], &P) == 0, "%s", err_msg());
        size_t a = 0;
        while (a < full.k && (full.key[a] >> 32) < r[t][0])
            a++;
        size_t b = a;
        while (b < full.k && (full.key[b] >> 32) < r[t][1])
            b++;
        CHECK_MSG(P.k == b - a && (P.k == 0 || !memcmp(P.key, full.key + a, P.k * 8)),
                  "rows %zu..%zu: %zu pairs, full join has %zu", r[t][0], r[t][1], P.k, b - a);
        free(P.key);
    }
    /* and against the FP64 reference on a range */
    pairs P, C;
    CHECK(join_pairs("fasted", &ds, eps, &o, 300, 1700, &P) == 0);
    CHECK(join_pairs("cpu", &ds, eps, &o, 300, 1700, &C) == 0);
    size_t bad, diff;
    double ov = compare(&ds, eps, &P, &C, FP16, 1, 300, 1700, &bad, &diff);
    CHECK(ov >= 0.999);
    CHECK_EQ_INT(bad, 0);
    free(P.key);
    free(C.key);
    free(full.key);
    dataset_free(&ds);
}

/* Every format other than FP16 against cpu (band with its own input
 * rounding) and against its emulation (FP32 band on the rounded data), on
 * generated data and the shared datasets. Overlaps are printed; the band
 * is asserted for every case. */
TEST(formats_vs_cpu)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    const char *kinds[] = {"uniform", "expo", "gauss"};
    const size_t dims[] = {3, 64, 200};
    const char *files[] = {"sift5k.fvecs", "letter.csv", "kitti_000000_xyzr.f32",
                           "olivetti_400x4096_u8.npy", "htru2.csv"};
    const char *cols[] = {NULL, "-0", NULL, NULL, "-8"};
    const size_t fdims[] = {0, 0, 4, 0, 0};
    for (size_t f = 1; f < NFMT; f++) {
        for (int k = 0; k < 3; k++)
            for (int t = 0; t < 3; t++) {
                dataset ds;
                memset(&ds, 0, sizeof ds);
                CHECK_MSG(gen(kinds[k], 1500, dims[t], &ds) == 0, "gen: %s", err_msg());
                char what[64];
                snprintf(what, sizeof what, "%s d=%zu", kinds[k], dims[t]);
                check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 10), what, 0);
                check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 60), what, 0);
                dataset_free(&ds);
            }
        for (int k = 0; k < 5; k++) {
            dataset ds;
            memset(&ds, 0, sizeof ds);
            CHECK_MSG(load_head(files[k], cols[k], fdims[k], 3000, &ds) == 0, "%s: %s", files[k],
                      err_msg());
            check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 5), files[k], 0);
            check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 40), files[k], 0);
            dataset_free(&ds);
        }
    }
}

/* `set fp8-acc fast`: the wgmma kernels without promotion, against the
 * same references under the band of the tensor core's accumulation over
 * all of k (d = 200 and olivetti's 4096 are where it differs from the
 * promoted one). */
TEST(fp8_fast_acc)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    g_fp8_fast = 1;
    for (size_t f = 0; f < NFMT; f++) {
        if (!tc_fmts[f].acc_bits)
            continue;
        dataset ds;
        memset(&ds, 0, sizeof ds);
        CHECK_MSG(gen("uniform", 1500, 200, &ds) == 0, "gen: %s", err_msg());
        check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 10), "fast uniform d=200", 0);
        dataset_free(&ds);
        memset(&ds, 0, sizeof ds);
        CHECK_MSG(load_head("olivetti_400x4096_u8.npy", NULL, 0, 3000, &ds) == 0, "%s", err_msg());
        check_fmt_against_refs(&tc_fmts[f], &ds, eps_for(&ds, 40), "fast olivetti", 0);
        dataset_free(&ds);
    }
    g_fp8_fast = 0;
}

/* The rounding functions the band uses, against values whose rounding is
 * known by construction (CPU only, so this runs in CI too). */
TEST(formats_rounding_reference)
{
    CHECK(round_fp16(1.0 + 1.0 / 2048) == 1.0);              /* tie to even */
    CHECK(round_fp16(1.0 + 3.0 / 2048) == 1.0 + 2.0 / 1024); /* tie to even, up */
    CHECK(round_fp16(65519.0) == 65504.0);
    CHECK(isinf(round_fp16(65520.0)));
    CHECK(round_fp16(ldexp(1.0, -25)) == 0.0); /* half the smallest subnormal */
    CHECK(round_fp16(ldexp(3.0, -26)) == ldexp(1.0, -24));
    CHECK(round_bf16(1.0 + 1.0 / 256) == 1.0);
    CHECK(round_bf16(1.0 + 3.0 / 256) == 1.0 + 2.0 / 128);
    CHECK(round_bf16(257.0) == 256.0);
    CHECK(round_bf16(259.0) == 260.0);
    CHECK(isinf(round_bf16(ldexp(511.0, 119)))); /* past the largest, ties up */
    CHECK(round_tf32(1.0 + 1.0 / 2048) == 1.0);
    CHECK(round_tf32(1.0 + 3.0 / 2048) == 1.0 + 2.0 / 1024);
    CHECK(round_tf32(100000.0) == 99968.0); /* quantum 2^6: 1562.5 ties to even */
    CHECK(isinf(round_tf32(ldexp(4095.0, 116))));
    CHECK(round_e4m3(1.0 + 1.0 / 16) == 1.0); /* tie to even */
    CHECK(round_e4m3(1.0 + 3.0 / 16) == 1.25);
    CHECK(round_e4m3(464.0) == 448.0); /* tie to even 448 */
    CHECK(round_e4m3(470.0) == 448.0); /* saturates */
    CHECK(round_e4m3(ldexp(1.0, -10)) == 0.0);
    CHECK(round_e4m3(ldexp(3.0, -11)) == ldexp(1.0, -9));
    CHECK(round_e5m2(1.0 + 1.0 / 8) == 1.0);
    CHECK(round_e5m2(1.0 + 3.0 / 8) == 1.5);
    CHECK(round_e5m2(61440.0) == 57344.0); /* tie to even, saturated */
    CHECK(round_e5m2(ldexp(1.0, -17)) == 0.0);
    for (int k = 0; k < 1000; k++) {
        double x = ldexp(1.0 + k / 1000.0, k % 40 - 20);
        CHECK(round_fp16(x) == fp16_round(x));
        CHECK(round_e4m3(x) == fp8_e4m3_round(x));
        CHECK(round_e5m2(x) == fp8_e5m2_round(x));
    }
}

/* A dense n x n table of the d2 a PAIRS run reported (-1: no pair). */
static int put_dense(void *ctx, const pair_batch *b)
{
    double *m = ((double **)ctx)[0];
    const size_t n = (size_t)(uintptr_t)((double **)ctx)[1];
    for (size_t t = 0; t < b->k; t++)
        m[(size_t)b->i[t] * n + b->j[t]] = b->d2[t];
    return 0;
}

static int dense_pairs(const char *name, const dataset *ds, double eps, double *m)
{
    for (size_t t = 0; t < ds->n * ds->n; t++)
        m[t] = -1;
    void *ctx[2] = {m, (void *)(uintptr_t)ds->n};
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.mode = JOIN_PAIRS;
    s.sink.put = put_dense;
    s.sink.ctx = ctx;
    join_result r;
    return engine_run(engine_find(name), &s, &r);
}

/* The scaled formats report distances unscaled: on data whose largest
 * value is far from the format's (so the scale is 2^8 or more), each
 * pair's d2 from the GPU and from the emulation (which works unscaled)
 * differ by at most the FP32 and accumulator terms of the band on the
 * rounded data, whose norms are at most (1 + u) times the data's. A
 * missing or doubled unscale would be off by a factor 4^scale. */
TEST(fp8_distances_unscaled)
{
    if (!has_gpu())
        t_skip("skipped: no CUDA device");
    dataset ds;
    memset(&ds, 0, sizeof ds);
    CHECK(gen("uniform", 900, 48, &ds) == 0);
    const double eps = eps_for(&ds, 40);
    double *g = xmalloc(ds.n * ds.n * sizeof *g), *c = xmalloc(ds.n * ds.n * sizeof *c);
    for (size_t f = 0; f < NFMT; f++) {
        const tc_fmt *fm = &tc_fmts[f];
        if (!fm->smax)
            continue;
        CHECK(fmt_scale(fm, &ds) >= 8);
        CHECK_MSG(dense_pairs(fm->engine, &ds, eps, g) == 0, "%s", err_msg());
        CHECK_MSG(dense_pairs(fm->emul, &ds, eps, c) == 0, "%s", err_msg());
        size_t both = 0, bad = 0;
        double worst = 0;
        for (size_t i = 0; i < ds.n; i++)
            for (size_t j = 0; j < ds.n; j++) {
                const double a = g[i * ds.n + j], b = c[i * ds.n + j];
                if (a < 0 || b < 0)
                    continue;
                both++;
                const double nx = (norm_of(&ds, i) + norm_of(&ds, j)) * (1 + fm->u);
                const double bd = ((double)ds.d + 3) * 0x1p-23 * nx * nx + acc_term(fm, ds.d, nx);
                worst = fmax(worst, fabs(a - b) / bd);
                bad += fabs(a - b) > bd;
            }
        fprintf(stderr, "%s: %zu pairs in both, %zu d2 beyond the band, largest |diff|/band %.3g\n",
                fm->engine, both, bad, worst);
        CHECK(both >= ds.n);
        CHECK_EQ_INT(bad, 0);
    }
    free(g);
    free(c);
    dataset_free(&ds);
}
