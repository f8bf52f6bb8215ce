/* The unsigned 8-bit floats of the precision lab (docs/FORMATS.md): no sign
 * bit, for non-negative data such as pixel intensities, SIFT descriptors or
 * squared-distance tables. Stored in 8 bits, widened to FP16 for the FP16
 * tensor cores (both fit FP16 exactly).
 *
 * ue5m3: FP16 without its sign bit and its low 7 mantissa bits: 5 exponent
 *   bits (bias 15, FP16's), 3 mantissa bits. Codes 0x00-0x07 are 0 and the
 *   subnormals k * 2^-17; 0xf8 is +Inf and 0xf9-0xff NaN, as in FP16; the
 *   largest finite value is 0xf7 = 61440. An FP16 value v >= 0 converts
 *   with one shift, bits(v) >> 7 (truncation toward zero); rounding to
 *   nearest, ties to even, is the default; past 61440 + half an ulp: +Inf.
 * ue4m4: 4 exponent bits (bias 7), 4 mantissa bits, every code finite: 0x00
 *   is 0, 0x01-0x0f the subnormals k * 2^-10, the largest value 0xff =
 *   496. Rounding to nearest, ties to even; past 496 it saturates to 496
 *   (no Inf: the format spends no code on one). Its range, 2^-10 to 496,
 *   holds pixel values in [0, 1] and in [0, 255] alike.
 * Negative inputs are not representable: the rounding functions return
 * NaN for them (the engines refuse such data before converting). */
#ifndef TCJ_FMT8_H
#define TCJ_FMT8_H

#include <stdint.h>

#define UE5M3_MAX 61440.0
#define UE4M4_MAX 496.0

/* x rounded to the format (to nearest, ties to even), widened to float. */
float ue5m3_round(double x);
float ue4m4_round(double x);
/* The code of the rounded value (x >= 0, not NaN). */
uint8_t ue5m3_bits(double x);
uint8_t ue4m4_bits(double x);
/* The value of a code (ue5m3: Inf and NaN codes as above). */
float ue5m3_decode(uint8_t c);
float ue4m4_decode(uint8_t c);
/* The truncating conversion of a non-negative FP16 encoding: h >> 7. */
uint8_t ue5m3_from_fp16_trunc(uint16_t h);

#endif
