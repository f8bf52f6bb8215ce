/* Host FP16 (IEEE binary16) conversion and FP32 round-toward-zero helpers,
 * used by the cpu-fp16 engine to emulate FASTED's arithmetic bit for bit
 * where it can. Pure functions, no state. */
#ifndef TCJ_FP16_H
#define TCJ_FP16_H

#include <stdint.h>

/* Round to the nearest binary16, ties to even, straight from the double (no
 * double rounding through float). |x| >= 65520 becomes Inf; values below
 * 2^-14 become subnormals, below 2^-25 (and 2^-25 itself) become 0; NaN stays
 * a quiet NaN; the sign of zero is kept. */
uint16_t fp16_from_double(double x);
uint16_t fp16_from_float(float x);
/* Exact: every binary16 value is a float. */
float fp16_to_float(uint16_t h);
/* x rounded to binary16 and widened back to float. */
float fp16_round(double x);

/* x rounded toward zero to float: finite x never becomes Inf (beyond the
 * range gives +-FLT_MAX); Inf and NaN stay as they are. */
float fp32_rz(double x);
/* a + b rounded toward zero to float, exactly as an FP32 adder in RZ mode
 * (__fadd_rz): the exact sum is kept as a double pair (TwoSum) first. */
float fp32_add_rz(float a, float b);

#endif
