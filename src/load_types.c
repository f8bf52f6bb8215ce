/* The element types of binary files (src/load_types.h). */
#include "load_types.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} ld_types[] = {
    [LD_U8] = {"u8", 1},   [LD_I8] = {"i8", 1},   [LD_U16] = {"u16", 2}, [LD_I16] = {"i16", 2},
    [LD_U32] = {"u32", 4}, [LD_I32] = {"i32", 4}, [LD_U64] = {"u64", 8}, [LD_I64] = {"i64", 8},
    [LD_F16] = {"f16", 2}, [LD_F32] = {"f32", 4}, [LD_F64] = {"f64", 8},
};

size_t ld_type_size(int type)
{
    return ld_types[type].size;
}

const char *ld_type_name(int type)
{
    return ld_types[type].name;
}

int ld_type_parse(const char *s, int *be)
{
    *be = 0;
    for (int t = 0; t <= LD_F64; t++) {
        size_t k = strlen(ld_types[t].name);
        if (strncmp(s, ld_types[t].name, k) != 0)
            continue;
        if (!s[k])
            return t;
        if (!strcmp(s + k, "le"))
            return t;
        if (!strcmp(s + k, "be")) {
            *be = 1;
            return t;
        }
    }
    /* common spellings */
    if (!strcmp(s, "float32") || !strcmp(s, "float"))
        return LD_F32;
    if (!strcmp(s, "float64") || !strcmp(s, "double"))
        return LD_F64;
    if (!strcmp(s, "float16") || !strcmp(s, "half"))
        return LD_F16;
    if (!strcmp(s, "uint8"))
        return LD_U8;
    return -1;
}

/* IEEE binary16 to double, exact (every half is a double). */
static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f;
    int m = h & 0x3ff;
    double v;
    if (e == 0)
        v = ldexp(m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static uint64_t load_uint(const unsigned char *p, size_t k, int be)
{
    uint64_t v = 0;
    for (size_t i = 0; i < k; i++)
        v |= (uint64_t)p[be ? k - 1 - i : i] << (8 * i);
    return v;
}

void ld_convert(int type, int be, const unsigned char *src, size_t cnt, double *dst)
{
    size_t k = ld_types[type].size;
    if (type == LD_U8) {
        for (size_t i = 0; i < cnt; i++)
            dst[i] = src[i];
        return;
    }
    for (size_t i = 0; i < cnt; i++, src += k) {
        uint64_t u = load_uint(src, k, be);
        switch (type) {
        case LD_I8:
            dst[i] = (int8_t)u;
            break;
        case LD_U16:
            dst[i] = (uint16_t)u;
            break;
        case LD_I16:
            dst[i] = (int16_t)u;
            break;
        case LD_U32:
            dst[i] = (uint32_t)u;
            break;
        case LD_I32:
            dst[i] = (int32_t)u;
            break;
        case LD_U64:
            dst[i] = (double)u;
            break;
        case LD_I64:
            dst[i] = (double)(int64_t)u;
            break;
        case LD_F16:
            dst[i] = half_to_double((uint16_t)u);
            break;
        case LD_F32: {
            uint32_t w = (uint32_t)u;
            float f;
            memcpy(&f, &w, 4);
            dst[i] = f;
            break;
        }
        default: {
            double f;
            memcpy(&f, &u, 8);
            dst[i] = f;
            break;
        }
        }
    }
}
