#include "fmt_round.h"

#include <math.h>
#include <string.h>

/* 2^e as a double, for the e a rounded result can have (normal doubles). */
static double pow2(int e)
{
    uint64_t b = (uint64_t)(e + 1023) << 52;
    double v;
    memcpy(&v, &b, sizeof v);
    return v;
}

/* On the double's bits: the significand m (53 bits) keeps its top bits down
 * to the format's quantum 2^(max(e, emin) - (p-1)); the dropped bits decide
 * the rounding. Independent of frexp/ldexp, which the unit test uses. */
float fmt_round(double x, int p, int emin, int emax)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    int neg = (int)(b >> 63);
    int be = (int)((b >> 52) & 0x7ff);
    if (be == 0x7ff && (b << 12))
        return neg ? -NAN : NAN; /* the canonical quiet NaN, sign kept */
    if (be == 0x7ff)
        return neg ? -INFINITY : INFINITY;
    /* Zero, and FP64 subnormals (< 2^-1022, far below half of any
     * format's smallest subnormal): a signed zero. */
    if (be == 0)
        return neg ? -0.0f : 0.0f;
    int e = be - 1023;
    if (e > emax)
        return neg ? -INFINITY : INFINITY;
    uint64_t m = (b & ((UINT64_C(1) << 52) - 1)) | (UINT64_C(1) << 52);
    int drop = 52 - (p - 1) + (e < emin ? emin - e : 0);
    /* drop >= 54: |x| < 2^(emin-p), under half the smallest subnormal. */
    if (drop >= 54)
        return neg ? -0.0f : 0.0f;
    uint64_t q = m >> drop;
    uint64_t rem = m & ((UINT64_C(1) << drop) - 1);
    uint64_t half = UINT64_C(1) << (drop - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++;
    /* q <= 2^p, exact in a double; the scale keeps it a normal double. */
    double v = (double)q * pow2(e - 52 + drop);
    if (v >= pow2(emax + 1))
        return neg ? -INFINITY : INFINITY;
    return (float)(neg ? -v : v);
}

float bf16_round(double x)
{
    return fmt_round(x, 8, -126, 127);
}

uint16_t bf16_bits(double x)
{
    float f = bf16_round(x);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return (uint16_t)(u >> 16);
}

float tf32_round(double x)
{
    return fmt_round(x, 11, -126, 127);
}

uint32_t tf32_bits(double x)
{
    float f = tf32_round(x);
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The to-nearest value, then saturation: RNE would give the next binade's
 * first value (480 or 61440 and up) or Inf past the largest finite value. */
static float fp8_sat(float v, float max)
{
    if (v > max)
        return max;
    if (v < -max)
        return -max;
    return v;
}

float fp8_e4m3_round(double x)
{
    return fp8_sat(fmt_round(x, 4, -6, 8), 448.0f);
}

float fp8_e5m2_round(double x)
{
    return fp8_sat(fmt_round(x, 3, -14, 15), 57344.0f);
}
