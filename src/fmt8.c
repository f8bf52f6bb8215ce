/* The unsigned 8-bit floats: see fmt8.h and docs/FORMATS.md. Rounding goes
 * through fmt_round (one rounding straight from the double); codes are
 * formed from the rounded value's exponent and significand. */
#include "fmt8.h"

#include <math.h>

#include "fmt_round.h"
#include "fp16.h"

float ue5m3_round(double x)
{
    if (!(x >= 0))
        return NAN;
    /* 4 significand bits (3 stored), FP16's exponents -14..15. */
    return fmt_round(x, 4, -14, 15);
}

float ue4m4_round(double x)
{
    if (!(x >= 0))
        return NAN;
    /* 5 significand bits (4 stored), exponents -6..8; saturating. */
    float v = fmt_round(x, 5, -6, 8);
    return isinf(v) ? (float)UE4M4_MAX : v;
}

uint8_t ue5m3_from_fp16_trunc(uint16_t h)
{
    return (uint8_t)((h & 0x7fffu) >> 7);
}

uint8_t ue5m3_bits(double x)
{
    /* The rounded value is an FP16 value with the low 7 bits zero. */
    return ue5m3_from_fp16_trunc(fp16_from_double((double)ue5m3_round(x)));
}

/* Exponent field e (1..15) and mantissa m (0..15) of a value v of the
 * format, or the subnormal k (e = 0). */
uint8_t ue4m4_bits(double x)
{
    double v = ue4m4_round(x);
    if (v < 0x1p-6) /* 0 and the subnormals k * 2^-10 */
        return (uint8_t)(v * 0x1p10);
    int e;
    double f = frexp(v, &e); /* v = f 2^e, f in [0.5, 1) */
    int exp = e - 1;         /* v = (1 + m/16) 2^exp */
    int m = (int)((2 * f - 1) * 16);
    return (uint8_t)((exp + 7) << 4 | m);
}

float ue5m3_decode(uint8_t c)
{
    return fp16_to_float((uint16_t)c << 7);
}

float ue4m4_decode(uint8_t c)
{
    int e = c >> 4, m = c & 15;
    if (e == 0)
        return (float)ldexp(m, -10);
    return (float)ldexp(16 + m, e - 7 - 4);
}
