/* BF16 and TF32 rounding (src/fmt_round.c, bit manipulation on the double)
 * bit for bit against an independent formulation: frexp/ldexp scaling to
 * the format's quantum and rint (ties to even in the default rounding
 * mode), over edge values (ties, the largest finite value, overflow,
 * subnormals, NaN, +-0) and many random ones; and, for float inputs, against
 * the usual integer trick on FP32 bits (add half an ulp minus one plus the
 * lowest kept bit, truncate). */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fmt_round.h"

/* Reference: x = f * 2^e with f in [0.5, 1); quantum 2^(max(e-1, emin) -
 * (p-1)); round x / quantum with rint; Inf from 2^(emax+1) up. */
static double ref_round(double x, int p, int emin, int emax)
{
    if (isnan(x) || isinf(x) || x == 0)
        return x;
    int e;
    frexp(x, &e);
    int lead = e - 1 < emin ? emin : e - 1;
    int qexp = lead - (p - 1);
    double r = ldexp(rint(ldexp(x, -qexp)), qexp);
    if (fabs(r) >= ldexp(1.0, emax + 1))
        return copysign(INFINITY, x);
    return r;
}

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static uint64_t f64_bits(double f)
{
    uint64_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Same value and the same sign of zero; any NaN matches any NaN. */
static int same(float got, double want)
{
    if (isnan(want))
        return isnan(got);
    return f64_bits((double)got) == f64_bits(want);
}

/* Float inputs by the FP32 bit trick (keep = stored bits kept). */
static float trick_round(float f, int dropbits)
{
    uint32_t u = f32_bits(f);
    if (isnan(f))
        return f;
    uint32_t lsb = (u >> dropbits) & 1;
    u += (UINT32_C(1) << (dropbits - 1)) - 1 + lsb;
    u &= ~((UINT32_C(1) << dropbits) - 1);
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Doubles worth testing around a format of p bits: ties and their
 * neighbours at many binades, both signs, the overflow threshold, the
 * subnormal range and the specials. */
static size_t edge_values(int p, double *v)
{
    size_t k = 0;
    const double ulp1 = ldexp(1.0, -(p - 1)); /* ulp of 1 */
    const int exps[] = {-149, -140, -136, -135, -134, -133, -130, -127, -126, -125,
                        -1,   0,    1,    7,    8,    11,   24,   100,  126,  127};
    for (size_t t = 0; t < sizeof exps / sizeof *exps; t++) {
        double b = ldexp(1.0, exps[t]);
        double u = ldexp(ulp1, exps[t]);
        const double c[] = {b,
                            b + u / 2,
                            b + u / 2 + u / 1024,
                            b + u / 2 - u / 1024,
                            b + u + u / 2,
                            b + 3 * u,
                            2 * b - u / 2,
                            2 * b - u / 4,
                            2 * b - u,
                            b + ldexp(u / 2, -30),
                            b * 1.1};
        for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
            v[k++] = c[i];
            v[k++] = -c[i];
        }
    }
    /* Largest finite (2 - 2^-(p-1)) * 2^127, the tie above it (overflows),
     * just below that tie (stays finite). */
    double maxf = ldexp(2.0 - ulp1, 127), halfu = ldexp(ulp1, 126);
    const double s[] = {maxf,
                        maxf + halfu,
                        maxf + halfu - ldexp(halfu, -20),
                        maxf + halfu * 1.5,
                        0x1p128,
                        DBL_MAX,
                        FLT_MAX,
                        0.0,
                        -0.0,
                        INFINITY,
                        -INFINITY,
                        NAN,
                        -NAN,
                        DBL_MIN,
                        DBL_TRUE_MIN,
                        FLT_MIN,
                        FLT_TRUE_MIN,
                        3 * FLT_TRUE_MIN,
                        1.0 / 3.0,
                        0.1,
                        1e-40,
                        1e-45};
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        v[k++] = s[i];
        v[k++] = -s[i];
    }
    return k;
}

static void check_format(float (*fn)(double), int p)
{
    double v[600];
    size_t n = edge_values(p, v);
    for (size_t i = 0; i < n; i++) {
        double want = ref_round(v[i], p, -126, 127);
        CHECK_MSG(same(fn(v[i]), want), "p=%d x=%a: got %a want %a", p, v[i], (double)fn(v[i]),
                  want);
    }
    /* Random doubles: any bit pattern (most far out of range: Inf or 0),
     * then exponents in and around FP32's range with random significands. */
    for (int t = 0; t < 200000; t++) {
        uint64_t r = next_u64();
        double x;
        if (t % 4 == 0) {
            memcpy(&x, &r, sizeof x);
        } else {
            int e = (int)(next_u64() % 300) - 160;
            x = ldexp(1.0 + (double)(r >> 12) * 0x1p-52, e);
            if (r & 1)
                x = -x;
            if (t % 4 == 3) /* land exactly on a tie of the format */
                x = ref_round(x, p + 1, -127, 127) == x ? x : ref_round(x, p + 1, -127, 127);
        }
        double want = ref_round(x, p, -126, 127);
        CHECK_MSG(same(fn(x), want), "p=%d x=%a: got %a want %a", p, x, (double)fn(x), want);
    }
    /* Every float input by the bit trick too (a sample of all 2^32). */
    for (uint64_t u = 0; u < (UINT64_C(1) << 32); u += 4099) {
        uint32_t w = (uint32_t)u;
        float f;
        memcpy(&f, &w, sizeof f);
        float want = trick_round(f, 24 - p);
        CHECK_MSG(same(fn((double)f), (double)want), "p=%d x=%a: got %a want %a", p, (double)f,
                  (double)fn((double)f), (double)want);
    }
}

TEST(bf16_against_frexp_and_bit_trick)
{
    check_format(bf16_round, 8);
}

TEST(tf32_against_frexp_and_bit_trick)
{
    check_format(tf32_round, 11);
}

/* Hand-checked values: the ones a reader can verify on paper. */
TEST(bf16_tf32_known_values)
{
    CHECK_EQ_INT(bf16_bits(1.0), 0x3f80);
    CHECK_EQ_INT(bf16_bits(-2.0), 0xc000);
    CHECK_EQ_INT(bf16_bits(-0.0), 0x8000);
    CHECK_EQ_INT(bf16_bits(0x1.fep127), 0x7f7f);             /* largest finite */
    CHECK_EQ_INT(bf16_bits(0x1.ffp127), 0x7f80);             /* its tie: Inf */
    CHECK_EQ_INT(bf16_bits(0x1.feffffp127), 0x7f7f);         /* just below the tie */
    CHECK_EQ_INT(bf16_bits(0x1p-133), 0x0001);               /* smallest subnormal */
    CHECK_EQ_INT(bf16_bits(0x1p-134), 0x0000);               /* its half: tie to 0 */
    CHECK_EQ_INT(bf16_bits(0x1p-134 + 0x1p-160), 0x0001);    /* above the half */
    CHECK_EQ_INT(bf16_bits(3 * 0x1p-134), 0x0002);           /* 1.5 quanta: to even */
    CHECK_EQ_INT(bf16_bits(1.0 + 0x1p-8), 0x3f80);           /* tie: to even */
    CHECK_EQ_INT(bf16_bits(1.0 + 3 * 0x1p-8), 0x3f82);       /* tie: to even, up */
    CHECK_EQ_INT(bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3f81); /* no double rounding */
    CHECK((uint16_t)(f32_bits((float)(1.0 + 0x1p-8 + 0x1p-40)) >> 16) == 0x3f80);
    CHECK_EQ_INT(bf16_bits(NAN) & 0x7fc0, 0x7fc0);
    CHECK_EQ_INT(tf32_bits(1.0 + 0x1p-11), 0x3f800000); /* tie: to even */
    CHECK_EQ_INT(tf32_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3f802000);
    CHECK_EQ_INT(tf32_bits(0x1.ffcp127), 0x7f7fe000); /* largest finite */
    CHECK_EQ_INT(tf32_bits(0x1.ffep127), 0x7f800000); /* its tie: Inf */
    CHECK_EQ_INT(tf32_bits(0x1p-136), 0x00002000);    /* smallest subnormal */
    CHECK_EQ_INT(tf32_bits(0x1p-137), 0x00000000);    /* its half: to 0 */
    CHECK_EQ_INT(tf32_bits(-0x1p-137), 0x80000000);
    CHECK_EQ_INT(tf32_bits(2049.0), 0x45000000); /* 2048: tie to even */
    CHECK_EQ_INT(tf32_bits(2047.0), 0x44ffe000); /* exact integer */
    CHECK(bf16_round(257.0) == 256.0f && bf16_round(255.0) == 255.0f);
    CHECK(tf32_round(-INFINITY) == -INFINITY && isnan(tf32_round(NAN)));
}
