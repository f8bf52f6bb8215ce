/* The element types of src/dtype.h. Widening is exact; storing rounds to
 * nearest and is exact for the values a type holds, so a loader that picks
 * a type holding every value of its file keeps the values untouched. */
/* Widening runs once per block of rows inside the CPU engines' loops:
 * vectorised loops keep it a small share of a join (gcc's -O2 cost model
 * leaves these loops scalar). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize")
#endif
#include "dtype.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fp16.h"

static void u8_to_f64(const void *src, size_t m, double *dst)
{
    const uint8_t *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = s[i];
}

static void u8_to_f32(const void *src, size_t m, float *dst)
{
    const uint8_t *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = s[i];
}

static void u8_from_f64(const double *src, size_t m, void *dst)
{
    uint8_t *o = dst;
    for (size_t i = 0; i < m; i++) {
        const double v = src[i] != src[i] ? 0 : nearbyint(src[i]);
        o[i] = v <= 0 ? 0 : v >= 255 ? 255 : (uint8_t)v;
    }
}

static int u8_holds(double v)
{
    return v >= 0 && v <= 255 && v == floor(v) && !(v == 0 && signbit(v));
}

static void f16_to_f64(const void *src, size_t m, double *dst)
{
    const uint16_t *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = fp16_to_float(s[i]);
}

static void f16_to_f32(const void *src, size_t m, float *dst)
{
    const uint16_t *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = fp16_to_float(s[i]);
}

static void f16_from_f64(const double *src, size_t m, void *dst)
{
    uint16_t *o = dst;
    for (size_t i = 0; i < m; i++)
        o[i] = fp16_from_double(src[i]);
}

static int f16_holds(double v)
{
    return v != v || (double)fp16_to_float(fp16_from_double(v)) == v;
}

static void f32_to_f64(const void *src, size_t m, double *dst)
{
    const float *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = s[i];
}

static void f32_to_f32(const void *src, size_t m, float *dst)
{
    memcpy(dst, src, m * sizeof(float));
}

static void f32_from_f64(const double *src, size_t m, void *dst)
{
    float *o = dst;
    for (size_t i = 0; i < m; i++)
        o[i] = (float)src[i];
}

static int f32_holds(double v)
{
    return v != v || (double)(float)v == v;
}

static void f64_to_f64(const void *src, size_t m, double *dst)
{
    memcpy(dst, src, m * sizeof(double));
}

static void f64_to_f32(const void *src, size_t m, float *dst)
{
    const double *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = (float)s[i];
}

static void f64_from_f64(const double *src, size_t m, void *dst)
{
    memcpy(dst, src, m * sizeof(double));
}

static int f64_holds(double v)
{
    (void)v;
    return 1;
}

const dtype dtype_table[DTYPE_COUNT] = {
    [DTYPE_U8] = {DTYPE_U8, "u8", 1, u8_to_f64, u8_to_f32, u8_from_f64, u8_holds},
    [DTYPE_F16] = {DTYPE_F16, "f16", 2, f16_to_f64, f16_to_f32, f16_from_f64, f16_holds},
    [DTYPE_F32] = {DTYPE_F32, "f32", 4, f32_to_f64, f32_to_f32, f32_from_f64, f32_holds},
    [DTYPE_F64] = {DTYPE_F64, "f64", 8, f64_to_f64, f64_to_f32, f64_from_f64, f64_holds},
};

const dtype *dtype_find(const char *name)
{
    for (int i = 0; name && i < DTYPE_COUNT; i++)
        if (!strcmp(dtype_table[i].name, name))
            return &dtype_table[i];
    return NULL;
}

const char *dtype_names(void)
{
    return "f64 f32 f16 u8";
}
