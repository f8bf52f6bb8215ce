/* Rounding from FP64 to the tensor-core input formats that share FP32's
 * exponent range (BF16, TF32), for the CPU emulations and any host code that
 * converts data the way the GPU engines do. Pure functions, no state.
 *
 * Each rounds straight from the double (no double rounding through float),
 * to nearest, ties to even, in the format's significand width and FP32's
 * exponent range:
 *  - past the largest finite value, values that round up to 2^128 become
 *    +-Inf (as RNE does: the tie at max + half an ulp overflows too);
 *  - below 2^-126 the format keeps FP32's gradual underflow at its own
 *    width: BF16 is FP32's top 16 bits, so its subnormals are multiples of
 *    2^-133; TF32 is FP32 with the low 13 bits zero, multiples of 2^-136.
 *    Values at or below half the smallest subnormal become +-0 (the tie
 *    goes to the even 0). No flush to zero: an FP32 subnormal input stays
 *    a subnormal of the format (or 0 when it is that small);
 *  - NaN stays a (quiet) NaN, Inf stays Inf, the sign of zero is kept.
 * Results are returned widened to float, which holds every value exactly. */
#ifndef TCJ_FMT_ROUND_H
#define TCJ_FMT_ROUND_H

#include <stdint.h>

/* bfloat16: 8 significand bits (7 stored). */
float bf16_round(double x);
/* The bfloat16 encoding of bf16_round(x) (FP32's top 16 bits). */
uint16_t bf16_bits(double x);
/* TF32: 11 significand bits (10 stored). */
float tf32_round(double x);
/* The FP32 encoding of tf32_round(x) (the low 13 bits are zero). */
uint32_t tf32_bits(double x);

/* FP8 as the tensor cores take it (OCP 8-bit floats), rounded as
 * cvt.rn.satfinite does: to nearest even, gradual underflow, and past the
 * largest finite value saturated to it (Inf too), so no result is Inf:
 * E4M3: 4 significand bits, exponents -6..8, largest 448 (its top code is
 * NaN, not 480); E5M2: 3 bits, exponents -14..15, largest 57344. */
float fp8_e4m3_round(double x);
float fp8_e5m2_round(double x);

/* The rule above for any width: p significand bits (implicit bit
 * included, 2..24), normal exponents emin..emax (within FP32's -126..127). */
float fmt_round(double x, int p, int emin, int emax);

#endif
