/* GPU tests of the unsigned 8-bit engines ue5m3 and ue4m4
 * (kernels/fmt_ue8.cu: codes stored in 8 bits, widened to FP16 in the
 * kernels), against src/fmt8.c's rounding, their CPU twins cpu-ue5m3 /
 * cpu-ue4m4 and FP64 (cpu), on the shared datasets, in every output mode,
 * symmetric on and off, on the wgmma and the mma.sync kernels.
 *
 * Conversion: the device's code and squared norm of each FP32 value equal
 * ue5m3_bits / ue4m4_bits and the square of the decoded code, bit for bit
 * (in the device's units: ue4m4 holds its values times 2^-8),
 * over every code, every midpoint between neighbouring codes (the ties)
 * and the floats next to them, the overflow and underflow edges and a
 * sweep of random floats.
 *
 * The bands. A rounded coordinate x~ differs from x by at most
 * u |x| + a (to nearest: u = 2^-p for p significand bits, 2^-4 for ue5m3,
 * 2^-5 for ue4m4; a = half the smallest subnormal, 2^-18 and 2^-11; data
 * below ue4m4's 496, so nothing saturates), so for two points
 * |(x~ - y~) - (x - y)| <= delta = u (|x| + |y|) + 2 a sqrt(d) and, with
 * D = |x - y|, |D~^2 - D^2| <= 2 (D + delta) delta + delta^2. The FP32
 * part (rz norms over d terms, the tensor core's FP32 dot, s_i + s_j - 2a;
 * the widening is exact, so the tensor cores see the very values the
 * twin sees) is at most F = (d + 3) 2^-23 (|x~| + |y~|)^2, as in
 * g_fasted.c. So:
 *  - against the twin (same rounded inputs, FP32 in another order) a pair
 *    only one side finds has |D~^2 - eps^2| <= 2F, and a pair both find
 *    has d2 values within 2F;
 *  - against fp64 a pair only one side finds has |D^2 - eps^2| <=
 *    2 (eps + delta) delta + delta^2 + F.
 * Per-point counts differ from the twin's by no more than the pairs only
 * one side has; every engine's modes agree with each other.
 * Refusal: negative data give one line naming `set shift on`, the session
 * goes on; with shift on, each column moved by its minimum, the run says
 * so (metric shifted, the variant) and keeps the bands above on the
 * shifted data (distances unchanged, so fp64 on the original data).
 * Skipped without a CUDA device. */
#include <float.h>

#include "exact_sets.h"
#include "fmt8.h"
#include "kernels.h"
#include "shift.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

typedef struct ue_fmt {
    const char *engine, *twin;
    float (*round)(double);
    uint8_t (*bits)(double);
    float (*decode)(uint8_t);
    int ncodes; /* finite codes: 0 .. ncodes-1 */
    double u, a;
} ue_fmt;

static const ue_fmt ue_fmts[] = {
    {"ue5m3", "cpu-ue5m3", ue5m3_round, ue5m3_bits, ue5m3_decode, 0xf8, 0x1p-4, 0x1p-18},
    {"ue4m4", "cpu-ue4m4", ue4m4_round, ue4m4_bits, ue4m4_decode, 0x100, 0x1p-5, 0x1p-11},
};

/* ---- conversion ---- */

static uint64_t rs = 0x2545f4914f6cdd1dull;
static uint32_t rnd32(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return (uint32_t)(rs >> 16);
}

TEST(ue8_device_conversion_matches_fmt8)
{
    need_gpu();
    for (size_t f = 0; f < 2; f++) {
        const ue_fmt *u = &ue_fmts[f];
        const kern_format *kf = engine_find(u->engine)->format;
        size_t n = 0, cap = 1 << 20;
        float *x = xmalloc(cap * sizeof *x);
        for (int c = 0; c < u->ncodes; c++) {
            const float v = u->decode((uint8_t)c);
            x[n++] = v;
            x[n++] = nextafterf(v, INFINITY);
            if (v > 0)
                x[n++] = nextafterf(v, 0);
            const float w = c + 1 < u->ncodes ? u->decode((uint8_t)(c + 1)) : 2 * v;
            const float m = (v + w) / 2; /* the tie: exact in FP32 */
            x[n++] = m;
            x[n++] = nextafterf(m, 0);
            x[n++] = nextafterf(m, INFINITY);
        }
        x[n++] = 63488.0f; /* ue5m3's tie past 61440: Inf */
        x[n++] = nextafterf(63488.0f, 0);
        x[n++] = 504.0f; /* ue4m4's tie past 496: saturates */
        x[n++] = nextafterf(504.0f, INFINITY);
        x[n++] = 1e30f;
        x[n++] = FLT_MAX;
        x[n++] = INFINITY;
        x[n++] = 0x1p-149f;
        while (n < cap) {
            /* Random floats with exponents -40..20. */
            const uint32_t e = 127 - 40 + rnd32() % 61;
            const uint32_t b = e << 23 | (rnd32() & 0x7fffff);
            memcpy(&x[n++], &b, 4);
        }
        uint8_t *codes = xmalloc(n);
        float *sq = xmalloc(n * sizeof *sq);
        /* The device takes the values times 2^value_log2 (ue4m4: 2^-8;
         * exact here, no input is that close to FP32's smallest normal but
         * 2^-149, which rounds to 0 either way) and forms norms in those
         * units. */
        const int vl = kf->value_log2;
        float *xs = xmalloc(n * sizeof *xs);
        for (size_t k = 0; k < n; k++)
            xs[k] = ldexpf(x[k], vl);
        CHECK_MSG(kern_format_probe(kf, 0, xs, n, codes, sq) == 0, "%s: %s", u->engine,
                  kern_error());
        free(xs);
        size_t bad = 0;
        for (size_t k = 0; k < n; k++) {
            const uint8_t want = u->bits((double)x[k]);
            const float v = u->decode(want);
            const float want_sq = ldexpf((float)((double)v * v), 2 * vl);
            if (codes[k] != want || !(sq[k] == want_sq)) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: %a -> code %#x sq %a, want %#x sq %a\n", u->engine,
                            (double)x[k], codes[k], (double)sq[k], want, (double)want_sq);
            }
        }
        CHECK_MSG(bad == 0, "%s: %zu of %zu conversions differ from src/fmt8.c", u->engine, bad, n);
        fprintf(stderr, "%s: %zu conversions equal src/fmt8.c's\n", u->engine, n);
        free(x);
        free(codes);
        free(sq);
    }
}

/* ---- joins ---- */

/* The data as the engines convert them: less the shift, rounded. */
static dataset rounded(const dataset *ds, const ue_fmt *u, const double *shift)
{
    dataset r = make("rounded", ds->n, ds->d);
    for (size_t k = 0; k < ds->n * ds->d; k++)
        ((double *)r.v)[k] =
            u->round(shift ? dataset_value(ds, k) - shift[k % ds->d] : dataset_value(ds, k));
    finish(&r);
    return r;
}

static double nrm(const dataset *ds, size_t i)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++)
        s += dataset_value(ds, i * ds->d + k) * dataset_value(ds, i * ds->d + k);
    return sqrt(s);
}

/* Pairs only one side of a (the engine) and b have: each must lie in its
 * band around eps^2 (twin: 2F on the rounded data; else the fp64 band).
 * Common pairs' d2 within 2F of the twin's. *only_out: the pairs only one
 * side has. */
static void pairs_vs(const char *what, const ue_fmt *u, const join_outcome *a,
                     const join_outcome *b, const dataset *ds, const dataset *sd, const dataset *rd,
                     double eps, int twin, size_t *only_out)
{
    const double e23 = 0x1p-23, d = (double)ds->d;
    size_t p = 0, q = 0, only = 0, bad = 0, dbad = 0;
    while (p < a->npairs || q < b->npairs) {
        const jo_pair *x = p < a->npairs ? &a->pairs[p] : NULL;
        const jo_pair *y = q < b->npairs ? &b->pairs[q] : NULL;
        const int c = !x ? 1 : !y ? -1 : jo_by_ij(x, y);
        const jo_pair *o = c <= 0 ? x : y;
        const double nr = nrm(rd, o->i) + nrm(rd, o->j);
        const double F = (d + 3) * e23 * nr * nr;
        if (c == 0) {
            if (twin && fabs(x->d2 - y->d2) > 2 * F)
                dbad++;
            p++;
            q++;
            continue;
        }
        only++;
        double B, D2;
        if (twin) {
            B = 2 * F;
            D2 = exact_d2(rd, o->i, o->j);
        } else {
            const double delta = u->u * (nrm(sd, o->i) + nrm(sd, o->j)) + 2 * u->a * sqrt(d);
            B = 2 * (eps + delta) * delta + delta * delta + F;
            D2 = exact_d2(ds, o->i, o->j);
        }
        if (fabs(D2 - eps * eps) > B * (1 + 1e-9)) {
            if (bad++ < 5)
                fprintf(stderr, "%s: (%u,%u) only in %s: D2 %.9g eps2 %.9g band %.3g\n", what, o->i,
                        o->j, c < 0 ? "the engine" : "the reference", D2, eps * eps, B);
        }
        if (c < 0)
            p++;
        else
            q++;
    }
    *only_out = only;
    CHECK_MSG(bad == 0, "%s: %zu of %zu pairs only one side has lie outside the band", what, bad,
              only);
    CHECK_MSG(dbad == 0, "%s: %zu common pairs' d2 differ beyond 2F", what, dbad);
}

/* An engine's modes agree with each other. */
static void self_consistent(const char *what, const join_outcome *o, size_t nq)
{
    uint64_t s = 0;
    for (size_t q = 0; q < nq; q++)
        s += o->perpoint[q];
    CHECK_MSG(s == o->count && o->npairs == o->count,
              "%s: count %llu, per-point sum %llu, %zu "
              "pairs",
              what, (unsigned long long)o->count, (unsigned long long)s, o->npairs);
    uint64_t h = o->below;
    for (size_t b = 0; b < o->nb; b++)
        h += o->hist[b];
    CHECK_MSG(h == o->count, "%s: histogram holds %llu pairs, count %llu", what,
              (unsigned long long)h, (unsigned long long)o->count);
}

/* ue engine u on ds against its twin and fp64, every path; shift on/off
 * as opts says. */
static void ue_check(const ue_fmt *u, const char *name, const dataset *ds, double eps,
                     const engine_opts *base)
{
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = eps * eps * b / 16;
    const double *shift = base->shift ? shift_mins(ds) : NULL;
    dataset rd = rounded(ds, u, shift);
    /* The values before rounding (shifted), for the rounding's bound. */
    dataset sd = make("shifted", ds->n, ds->d);
    for (size_t k = 0; k < ds->n * ds->d; k++)
        ((double *)sd.v)[k] =
            shift ? dataset_value(ds, k) - shift[k % ds->d] : dataset_value(ds, k);
    join_outcome t = jo_run_as(engine_find(u->twin), ds, eps, 0, ds->n, base, edges, 16);
    CHECK_MSG(t.rc == 0, "%s: %s: %s", name, u->twin, err_msg());
    engine_opts fo;
    engine_opts_default(&fo);
    join_outcome r = jo_run_as(engine_find("cpu"), ds, eps, 0, ds->n, &fo, NULL, 0);
    CHECK_MSG(r.rc == 0, "%s: cpu: %s", name, err_msg());
    for (int sym = 0; sym < 2; sym++)
        for (int mma = 0; mma < 2; mma++) {
            engine_opts o = *base;
            o.symmetric = sym;
            o.fasted_off = mma ? FASTED_OFF_WGMMA : 0;
            char what[160];
            snprintf(what, sizeof what, "%s %s sym %d %s%s", u->engine, name, sym,
                     mma ? "mma.sync" : "wgmma", shift ? " shifted" : "");
            join_outcome a = jo_run(engine_find(u->engine), ds, eps, 0, ds->n, &o, edges, 16);
            CHECK_MSG(a.rc == 0, "%s: %s", what, err_msg());
            if (a.rc || t.rc || r.rc) {
                jo_free(&a);
                continue;
            }
            CHECK_MSG(strstr(a.variant, mma ? "mma.sync" : "wgmma") != NULL, "%s: variant %s", what,
                      a.variant);
            CHECK_MSG(jo_metric(&a, "shifted") == (shift ? 1 : 0), "%s: metric shifted %g", what,
                      jo_metric(&a, "shifted"));
            CHECK_MSG(!shift || strstr(a.variant, "shifted"), "%s: variant %s", what, a.variant);
            self_consistent(what, &a, ds->n);
            size_t only_t = 0, only_r = 0;
            pairs_vs(what, u, &a, &t, ds, &sd, &rd, eps, 1, &only_t);
            uint64_t ppd = 0;
            for (size_t q = 0; q < ds->n; q++)
                ppd += a.perpoint[q] > t.perpoint[q] ? a.perpoint[q] - t.perpoint[q]
                                                     : t.perpoint[q] - a.perpoint[q];
            CHECK_MSG(ppd <= only_t, "%s: per-point counts differ by %llu, %zu pairs", what,
                      (unsigned long long)ppd, only_t);
            pairs_vs(what, u, &a, &r, ds, &sd, &rd, eps, 0, &only_r);
            fprintf(stderr, "%s (%s): %llu pairs; %zu only one side vs %s, %zu vs fp64 (%llu)\n",
                    what, a.variant, (unsigned long long)a.count, only_t, u->twin, only_r,
                    (unsigned long long)r.count);
            jo_free(&a);
        }
    jo_free(&t);
    jo_free(&r);
    dataset_free(&rd);
    dataset_free(&sd);
}

TEST(ue8_against_twin_and_fp64)
{
    need_gpu();
    static const struct {
        const char *file;
        size_t limit;
    } files[] = {{"sift5k.fvecs", 0}, {"olivetti_400x4096_u8.npy", 0}, {"letter.csv", 4000}};
    for (size_t k = 0; k < 3; k++) {
        dataset ds;
        CHECK_MSG(load_shared(files[k].file, files[k].limit, &ds) == 0, "%s: %s", files[k].file,
                  err_msg());
        engine_opts o;
        engine_opts_default(&o);
        for (size_t f = 0; f < 2; f++)
            ue_check(&ue_fmts[f], files[k].file, &ds, eps_for(&ds, 20), &o);
        dataset_free(&ds);
    }
}

TEST(ue8_refuses_negative_then_shifts)
{
    need_gpu();
    dataset neg, ok;
    CHECK_MSG(load_shared("kitti_000000_xyzr.f32", 3000, &neg) == 0, "%s", err_msg());
    CHECK_MSG(load_shared("sift5k.fvecs", 1000, &ok) == 0, "%s", err_msg());
    engine_opts o;
    engine_opts_default(&o);
    for (size_t f = 0; f < 2; f++) {
        const ue_fmt *u = &ue_fmts[f];
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &neg;
        s.eps = 1;
        s.q1 = neg.n;
        s.opts = &o;
        join_result r;
        CHECK(engine_run(engine_find(u->engine), &s, &r) == TCJ_EINVAL);
        CHECK_STR_CONTAINS(err_msg(), "negative value");
        CHECK_STR_CONTAINS(err_msg(), "set shift on");
        CHECK(strchr(err_msg(), '\n') == NULL);
        /* The session goes on. */
        s.ds = &ok;
        s.q1 = ok.n;
        s.eps = eps_for(&ok, 10);
        CHECK_MSG(engine_run(engine_find(u->engine), &s, &r) == 0, "%s", err_msg());
        engine_opts sh = o;
        sh.shift = 1;
        ue_check(u, "kitti", &neg, eps_for(&neg, 20), &sh);
    }
    dataset_free(&neg);
    dataset_free(&ok);
}

/* A small case for compute-sanitizer (memcheck, racecheck): both formats,
 * both kernels, every mode, small pair batches (many drains). */
TEST(ue8_sanitizer_case)
{
    need_gpu();
    gen_opts g = {.kind = "uniform", .n = 700, .d = 200, .seed = 5};
    dataset ds = {0};
    CHECK(dataset_generate(&g, &ds) == 0);
    engine_opts o;
    engine_opts_default(&o);
    for (size_t f = 0; f < 2; f++)
        ue_check(&ue_fmts[f], "uniform 700x200", &ds, eps_for(&ds, 30), &o);
    dataset_free(&ds);
}
