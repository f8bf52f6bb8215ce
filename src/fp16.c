#include "fp16.h"

#include <math.h>

uint16_t fp16_from_double(double x)
{
    uint16_t sign = signbit(x) ? 0x8000 : 0;
    double a = fabs(x);
    if (isnan(x))
        return sign | 0x7e00;
    /* 65520 is halfway between 65504 and 2^16; the tie goes to the even
     * 2^16, which does not exist: Inf. */
    if (a >= 65520.0)
        return sign | 0x7c00;
    if (a == 0)
        return sign;
    /* Exponent of the leading bit, but no lower than the subnormal range's
     * -14, so one formula covers normals and subnormals: the value is
     * k * 2^(e-10) with k < 2^11, and the bits are ((e+14) << 10) + k
     * (k == 2^11 carries into the exponent, which is the right encoding). */
    int e;
    frexp(a, &e);
    e -= 1;
    if (e < -14)
        e = -14;
    double k = nearbyint(ldexp(a, 10 - e)); /* exact scaling; ties to even */
    return sign | (uint16_t)(((unsigned)(e + 14) << 10) + (unsigned)k);
}

uint16_t fp16_from_float(float x)
{
    return fp16_from_double((double)x);
}

float fp16_to_float(uint16_t h)
{
    int ex = (h >> 10) & 31;
    int man = h & 1023;
    float v;
    if (ex == 0)
        v = ldexpf((float)man, -24);
    else if (ex == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(1024 + man), ex - 25);
    return (h & 0x8000) ? -v : v;
}

float fp16_round(double x)
{
    return fp16_to_float(fp16_from_double(x));
}

float fp32_rz(double x)
{
    float f = (float)x;
    if (fabs((double)f) > fabs(x))
        f = nextafterf(f, 0.0f);
    return f;
}

float fp32_add_rz(float a, float b)
{
    /* TwoSum: s + t == a + b exactly. */
    double s = (double)a + (double)b;
    double bb = s - a;
    double t = ((double)a - (s - bb)) + ((double)b - bb);
    float f = fp32_rz(s);
    /* s lies on the float grid but the exact sum is a little closer to zero:
     * truncation takes the float below. Off the grid, t is too small to
     * cross a float. */
    if ((double)f == s && t != 0 && (t < 0) != (s < 0))
        f = nextafterf(f, 0.0f);
    return f;
}
