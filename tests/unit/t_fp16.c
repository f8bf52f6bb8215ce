/* FP16 conversion and FP32 round-toward-zero against hand-computed values. */
#include <float.h>
#include <stdint.h>

#include "check.h"
#include "fp16.h"

TEST(fp16_exact_values)
{
    CHECK_EQ_INT(fp16_from_double(0.0), 0x0000);
    CHECK_EQ_INT(fp16_from_double(-0.0), 0x8000);
    CHECK_EQ_INT(fp16_from_double(1.0), 0x3c00);
    CHECK_EQ_INT(fp16_from_double(-2.0), 0xc000);
    CHECK_EQ_INT(fp16_from_double(0.5), 0x3800);
    CHECK_EQ_INT(fp16_from_double(65504.0), 0x7bff);        /* largest finite */
    CHECK_EQ_INT(fp16_from_double(0x1p-14), 0x0400);        /* smallest normal */
    CHECK_EQ_INT(fp16_from_double(0x1p-24), 0x0001);        /* smallest subnormal */
    CHECK_EQ_INT(fp16_from_double(1023 * 0x1p-24), 0x03ff); /* largest subnormal */
}

TEST(fp16_rounding)
{
    /* 1/3 = 0x1.555...p-2: 10 fraction bits 0101010101, next bits 0101...
     * below half an ulp: rounds down to 0x3555 = 0.333251953125. */
    CHECK_EQ_INT(fp16_from_double(1.0 / 3.0), 0x3555);
    CHECK(fp16_to_float(0x3555) == 0.333251953125f);
    /* 2/3 has the same significand, one binade up: 0x3955. */
    CHECK_EQ_INT(fp16_from_double(2.0 / 3.0), 0x3955);
    /* Ties to even: 1 + 2^-11 is halfway between 1 and 1 + 2^-10. */
    CHECK_EQ_INT(fp16_from_double(1.0 + 0x1p-11), 0x3c00);
    CHECK_EQ_INT(fp16_from_double(1.0 + 3 * 0x1p-11), 0x3c02);
    /* Just above the tie rounds up; through float it would be a tie (the
     * 2^-40 is lost) and round down: no double rounding allowed. */
    CHECK_EQ_INT(fp16_from_double(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
    /* 65519.99 rounds down to 65504; 65520 is the tie that overflows. */
    CHECK_EQ_INT(fp16_from_double(65519.99), 0x7bff);
    CHECK_EQ_INT(fp16_from_double(65520.0), 0x7c00);
    CHECK_EQ_INT(fp16_from_double(-65520.0), 0xfc00);
    CHECK_EQ_INT(fp16_from_double(1e10), 0x7c00);
    /* Subnormals: 2^-25 is the tie between 0 and 2^-24: to even, 0. */
    CHECK_EQ_INT(fp16_from_double(0x1p-25), 0x0000);
    CHECK_EQ_INT(fp16_from_double(-0x1p-25), 0x8000);
    CHECK_EQ_INT(fp16_from_double(0x1p-25 + 0x1p-40), 0x0001);
    CHECK_EQ_INT(fp16_from_double(3 * 0x1p-25), 0x0002); /* 1.5 ulp: tie to 2 */
    CHECK_EQ_INT(fp16_from_double(5 * 0x1p-25), 0x0002); /* 2.5 ulp: tie to 2 */
    CHECK_EQ_INT(fp16_from_double(1e-30), 0x0000);
    /* Carry from the largest subnormal into the smallest normal. */
    CHECK_EQ_INT(fp16_from_double(1023.5 * 0x1p-24), 0x0400);
    /* Carry across a binade: 2 - 2^-12 rounds up to 2. */
    CHECK_EQ_INT(fp16_from_double(2.0 - 0x1p-12), 0x4000);
    CHECK_EQ_INT(fp16_from_float(0.1f), 0x2e66); /* 0.0999755859375 */
}

TEST(fp16_special_and_back)
{
    CHECK_EQ_INT(fp16_from_double(INFINITY), 0x7c00);
    CHECK_EQ_INT(fp16_from_double(-INFINITY), 0xfc00);
    CHECK_EQ_INT(fp16_from_double(NAN) & 0x7c00, 0x7c00);
    CHECK(fp16_from_double(NAN) & 0x03ff);
    CHECK(isnan(fp16_to_float(0x7e00)));
    CHECK(isinf(fp16_to_float(0x7c00)) && fp16_to_float(0x7c00) > 0);
    CHECK(fp16_to_float(0x7bff) == 65504.0f);
    CHECK(fp16_to_float(0x0001) == 0x1p-24f);
    CHECK(fp16_to_float(0x8001) == -0x1p-24f);
    CHECK(fp16_to_float(0x3c01) == 1.0f + 0x1p-10f);
    /* Every finite half survives the round trip. */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        CHECK_EQ_INT(fp16_from_float(fp16_to_float((uint16_t)h)), h);
    }
    CHECK(fp16_round(1.0 / 3.0) == 0.333251953125f);
}

TEST(fp32_round_toward_zero)
{
    /* 1/3 in float: nearest is 0x3eaaaaab (above), toward zero 0x3eaaaaaa. */
    union {
        float f;
        uint32_t u;
    } v;
    v.f = fp32_rz(1.0 / 3.0);
    CHECK_EQ_INT(v.u, 0x3eaaaaaa);
    v.f = fp32_rz(-1.0 / 3.0);
    CHECK_EQ_INT(v.u, 0xbeaaaaaa);
    v.f = (float)(1.0 / 3.0);
    CHECK_EQ_INT(v.u, 0x3eaaaaab);
    CHECK(fp32_rz(1.0) == 1.0f);
    CHECK(fp32_rz(1.0 + 0x1p-24) == 1.0f);
    CHECK(fp32_rz(2.0 - 0x1p-30) == 2.0f - 0x1p-23f);
    CHECK(fp32_rz(1e39) == FLT_MAX);
    CHECK(fp32_rz(-1e39) == -FLT_MAX);
    CHECK(isinf(fp32_rz(INFINITY))); /* Inf is not an overflow */
}

TEST(fp32_add_toward_zero)
{
    CHECK(fp32_add_rz(1.0f, 1.0f) == 2.0f);
    /* Exact sum 1 + 2^-30: truncated to 1. */
    CHECK(fp32_add_rz(1.0f, 0x1p-30f) == 1.0f);
    /* 1 - 2^-30: the double sum is exact but lies below 1. */
    CHECK(fp32_add_rz(1.0f, -0x1p-30f) == 1.0f - 0x1p-24f);
    /* 2^60 - 2^-60 rounds to 2^60 in FP64 (double rounding trap); the
     * exact sum is below 2^60, so toward zero gives the float below. */
    CHECK(fp32_add_rz(0x1p60f, -0x1p-60f) == nextafterf(0x1p60f, 0));
    CHECK(fp32_add_rz(-0x1p60f, 0x1p-60f) == -nextafterf(0x1p60f, 0));
    CHECK(fp32_add_rz(0x1p60f, 0x1p-60f) == 0x1p60f);
    /* 1 + 3*2^-24 (1.5 ulp): nearest would be 1 + 2^-22, toward zero 1 + 2^-23. */
    CHECK(fp32_add_rz(1.0f, 3 * 0x1p-24f) == 1.0f + 0x1p-23f);
    CHECK(fp32_add_rz(FLT_MAX, FLT_MAX) == FLT_MAX);
    CHECK(fp32_add_rz(1.5f, -1.5f) == 0.0f);
}
