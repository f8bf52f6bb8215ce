#include "load_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"

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

int ld_read_values(FILE *f, const char *path, int type, int be, size_t cnt, double *dst,
                   uint64_t byte)
{
    unsigned char buf[1 << 16];
    size_t k = ld_types[type].size, per = sizeof buf / k;
    while (cnt) {
        size_t m = cnt < per ? cnt : per;
        size_t got = fread(buf, k, m, f);
        if (got != m) {
            if (ferror(f))
                return err_set(TCJ_EIO, "%s: byte %llu: read error: %s", path,
                               (unsigned long long)(byte + got * k), strerror(errno));
            return err_set(TCJ_EINVAL, "%s: byte %llu: file ends early, %llu more bytes expected",
                           path, (unsigned long long)(byte + got * k),
                           (unsigned long long)((cnt - got) * k));
        }
        ld_convert(type, be, buf, m, dst);
        dst += m;
        cnt -= m;
        byte += m * k;
    }
    return 0;
}

FILE *ld_open(const char *path, uint64_t *size)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        err_set(TCJ_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        err_set(TCJ_EINVAL, "%s: is a directory, not a data file", path);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        err_set(TCJ_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    return f;
}

int ld_seek(FILE *f, const char *path, uint64_t byte)
{
    if (fseeko(f, (off_t)byte, SEEK_SET) != 0)
        return err_set(TCJ_EIO, "%s: cannot seek to byte %llu: %s", path, (unsigned long long)byte,
                       strerror(errno));
    return 0;
}

size_t ld_take(const load_opts *opt, size_t total)
{
    if (opt->offset >= total)
        return 0;
    size_t left = total - opt->offset;
    return opt->limit && opt->limit < left ? opt->limit : left;
}

void ld_sink_init(ld_sink *s, const char *path, size_t d, size_t cap, int drop)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->d = d;
    s->drop = drop;
    s->cap = cap ? cap : 1024;
    s->x = xmalloc(s->cap * d * sizeof(double));
}

double *ld_row(ld_sink *s)
{
    if (s->n == s->cap) {
        s->cap += s->cap / 2 + 16;
        s->x = xrealloc(s->x, s->cap * s->d * sizeof(double));
    }
    s->row_bad = 0;
    return s->x + s->n * s->d;
}

void ld_note_bad(ld_sink *s, const char *fmt, ...)
{
    if (!s->bad_values) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(s->first, sizeof s->first, fmt, ap);
        va_end(ap);
    }
    s->bad_values++;
    s->row_bad = 1;
}

void ld_commit(ld_sink *s)
{
    if (s->row_bad) {
        s->bad_rows++;
        s->row_bad = 0;
        if (s->drop)
            return;
    }
    s->n++;
}

void ld_commit_point(ld_sink *s, const double *row, size_t point, uint64_t base, uint64_t stride)
{
    for (size_t j = 0; j < s->d; j++) {
        if (isfinite(row[j]))
            continue;
        if (base == UINT64_MAX)
            ld_note_bad(s, "point %zu value %zu", point, j);
        else
            ld_note_bad(s, "byte %llu (point %zu value %zu)",
                        (unsigned long long)(base + j * stride), point, j);
    }
    double *dst = s->x + s->n * s->d;
    if (s->row_bad && s->drop) {
        s->bad_rows++;
        s->row_bad = 0;
        return;
    }
    if (row != dst)
        memmove(dst, row, s->d * sizeof(double));
    ld_commit(s);
}

int ld_finish(ld_sink *s, dataset *out)
{
    if (s->bad_values && !s->drop) {
        int rc = err_set(TCJ_EINVAL,
                         "%s: %zu value%s NaN or Inf, first at %s; load ... drop-nonfinite=1 to "
                         "drop those rows",
                         s->path, s->bad_values, s->bad_values == 1 ? " is" : "s are", s->first);
        ld_sink_free(s);
        return rc;
    }
    out->n = s->n;
    out->d = s->d;
    out->x = s->n ? xrealloc(s->x, s->n * s->d * sizeof(double)) : (free(s->x), NULL);
    s->x = NULL;
    return 0;
}

void ld_sink_free(ld_sink *s)
{
    free(s->x);
    s->x = NULL;
}
