#include "load_util.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "esc.h"
#include "mem.h"

static void (*ld_hook)(void *ctx);
static void *ld_hook_ctx;

int ld_read_values(FILE *f, const char *path, int type, int be, size_t cnt, double *dst,
                   uint64_t byte)
{
    unsigned char buf[1 << 16];
    size_t k = ld_type_size(type), per = sizeof buf / k;
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

static void stamp_of(const struct stat *st, ld_stamp *out)
{
    out->regular = S_ISREG(st->st_mode);
    out->size = (uint64_t)st->st_size;
    out->mtime = st->st_mtim;
    out->dev = st->st_dev;
    out->ino = st->st_ino;
}

FILE *ld_open(const char *path, uint64_t *size, ld_stamp *stamp)
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
    /* The file opened, not the name stat saw a moment before. */
    if (fstat(fileno(f), &st) != 0)
        st.st_mode = 0;
    *size = (uint64_t)st.st_size;
    if (stamp)
        stamp_of(&st, stamp);
    return f;
}

int ld_unchanged(FILE *f, const char *path, const ld_stamp *before, int rc)
{
    struct stat st;
    if (!before->regular || rc == TCJ_ECANCEL || (f ? fstat(fileno(f), &st) : stat(path, &st)))
        return rc;
    ld_stamp now;
    stamp_of(&st, &now);
    if (now.size == before->size && now.mtime.tv_sec == before->mtime.tv_sec &&
        now.mtime.tv_nsec == before->mtime.tv_nsec && now.dev == before->dev &&
        now.ino == before->ino)
        return rc;
    return err_set(TCJ_EIO,
                   "%s: changed while it was read (size %llu -> %llu bytes); load it again", path,
                   (unsigned long long)before->size, (unsigned long long)now.size);
}

void ld_row_hook_for_tests(void (*fn)(void *ctx), void *ctx)
{
    ld_hook = fn;
    ld_hook_ctx = ctx;
}

/* A test's hook, once, as the first row of a load is kept. */
static void run_hook(void)
{
    void (*fn)(void *) = ld_hook;
    ld_hook = NULL;
    if (fn)
        fn(ld_hook_ctx);
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

const char *ld_esc(const char *s, size_t max)
{
    static _Thread_local char buf[4][4 * 200 + 1];
    static _Thread_local int k;
    char *b = buf[k = (k + 1) % 4], *w = b;
    if (max > 200)
        max = 200;
    for (size_t i = 0; s && s[i] && i < max;) {
        const unsigned char *c = (const unsigned char *)s + i;
        /* a whole UTF-8 character as it is; a control or a byte outside
         * one (a raw 0x9b, CSI) as \xNN */
        int k = *c >= 0x80 ? esc_utf8(c) : (*c < 0x20 || *c == 0x7f) ? 0 : 1;
        if (k && i + (size_t)k <= max) {
            memcpy(w, c, (size_t)k);
            w += k;
            i += (size_t)k;
        } else {
            w += sprintf(w, "\\x%02x", *c);
            i++;
        }
    }
    *w = 0;
    return b;
}

/* "byte N: " for a message, "" for UINT64_MAX (a place libhdf5 does not say). */
static const char *at_byte(uint64_t byte)
{
    static _Thread_local char buf[40];
    buf[0] = 0;
    if (byte != UINT64_MAX)
        snprintf(buf, sizeof buf, "byte %llu: ", (unsigned long long)byte);
    return buf;
}

int ld_mul(const char *path, const char *field, uint64_t byte, uint64_t a, uint64_t b,
           uint64_t *out)
{
    if (__builtin_mul_overflow(a, b, out))
        return err_set(TCJ_EINVAL, "%s: %s%s: %llu x %llu does not fit in 64 bits", path,
                       at_byte(byte), field, (unsigned long long)a, (unsigned long long)b);
    return 0;
}

int ld_check_dims(const char *path, const char *field, uint64_t byte, uint64_t n, uint64_t d,
                  size_t es, uint64_t data, uint64_t have, uint64_t *bytes)
{
    if (d == 0)
        return err_set(TCJ_EINVAL, "%s: %s%s gives d = 0: the points have no coordinates", path,
                       at_byte(byte), field);
    if (n == 0)
        return err_set(TCJ_EINVAL, "%s: %s%s gives n = 0: no points", path, at_byte(byte), field);
    uint64_t nd, want;
    int rc = ld_mul(path, field, byte, n, d, &nd);
    if (!rc)
        rc = ld_mul(path, field, byte, nd, es, &want);
    if (rc)
        return rc;
    if (want > have) {
        char a[32], b[32], from[48] = "stored";
        if (data != UINT64_MAX)
            snprintf(from, sizeof from, "left from byte %llu", (unsigned long long)data);
        return err_set(TCJ_EINVAL,
                       "%s: %s%s gives %llu x %llu values of %zu bytes = %s, but %s are %s", path,
                       at_byte(byte), field, (unsigned long long)n, (unsigned long long)d, es,
                       mem_bytes_str(want, a), mem_bytes_str(have, b), from);
    }
    if (bytes)
        *bytes = want;
    return 0;
}

int ld_check_take(const char *path, const load_opts *opt, uint64_t total, uint64_t d, dtype_id keep,
                  size_t *take)
{
    if (total > SIZE_MAX)
        total = SIZE_MAX;
    *take = ld_take(opt, (size_t)total);
    if (*take == 0)
        return opt->offset
                   ? err_set(TCJ_EINVAL, "%s: no points left after offset=%zu (the file has %llu)",
                             path, opt->offset, (unsigned long long)total)
                   : err_set(TCJ_EINVAL, "%s: no points (empty data)", path);
    return ld_mem_check(path, *take, d, keep, 0);
}

void ld_mem_cap_for_tests(uint64_t bytes)
{
    mem_cap_for_tests(bytes);
}

uint64_t ld_mem_available(void)
{
    return mem_available();
}

int ld_mem_check(const char *what, uint64_t n, uint64_t d, dtype_id t, uint64_t extra)
{
    /* The dataset keeps the values in t (u8 one byte, f16 two, ...): a file
     * that fits as loaded is not refused for what FP64 would take. */
    const dtype *dt = dtype_get(t);
    uint64_t nd, bytes;
    uint64_t avail = ld_mem_available();
    char a[32], b[32];
    if (__builtin_mul_overflow(n, d, &nd) || __builtin_mul_overflow(nd, dt->bytes, &bytes) ||
        __builtin_add_overflow(bytes, extra, &bytes) || bytes > SIZE_MAX / 2)
        return err_set(TCJ_ENOMEM, "%s: %llu x %llu %s values need more than 2^63 bytes of memory",
                       what, (unsigned long long)n, (unsigned long long)d, dt->name);
    if (bytes > avail)
        return err_set(TCJ_ENOMEM, "%s: needs %s of memory for %llu x %llu %s values; %s available",
                       what, mem_bytes_str(bytes, a), (unsigned long long)n, (unsigned long long)d,
                       dt->name, mem_bytes_str(avail, b));
    return 0;
}

int ld_cancel_check(const volatile int *cancel, const char *path)
{
    if (cancel && *cancel)
        return err_cancelled("load %s", path);
    return 0;
}

dtype_id ld_keep_type(int type)
{
    switch (type) {
    case LD_U8:
        return DTYPE_U8;
    case LD_I8:
    case LD_F16:
        return DTYPE_F16;
    case LD_U16:
    case LD_I16:
    case LD_F32:
        return DTYPE_F32;
    default:
        return DTYPE_F64;
    }
}

static int sink_init(ld_sink *s, const char *path, size_t d, size_t cap, const load_opts *opt,
                     dtype_id t, int fp64_row)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    s->d = d;
    s->t = dtype_get(t);
    s->drop = opt->drop_nonfinite;
    s->cancel = opt->cancel;
    s->cap = cap ? cap : 1;
    /* The row buffer is FP64: at d = 2^28 it is 2.1 GB for a 268 MB row of
     * u8, so it is checked like the array. */
    char what[80];
    snprintf(what, sizeof what, "a row buffer of %zu FP64 values", d);
    if (fp64_row && !(s->row = mem_alloc(path, what, d, sizeof *s->row, 0)))
        return TCJ_ENOMEM;
    snprintf(what, sizeof what, "%zu x %zu %s values", s->cap, d, s->t->name);
    if (!(s->x = mem_alloc(path, what, s->cap * d, s->t->bytes, 0))) {
        ld_sink_free(s);
        return TCJ_ENOMEM;
    }
    return 0;
}

int ld_sink_init(ld_sink *s, const char *path, size_t d, size_t cap, const load_opts *opt,
                 dtype_id t)
{
    return sink_init(s, path, d, cap, opt, t, 1);
}

int ld_sink_init_stored(ld_sink *s, const char *path, size_t d, size_t cap, const load_opts *opt,
                        dtype_id t)
{
    return sink_init(s, path, d, cap, opt, t, 0);
}

int ld_row(ld_sink *s, double **row)
{
    int rc = ld_cancel_check(s->cancel, s->path);
    if (rc)
        return rc;
    if (s->n == s->cap) {
        size_t cap = s->cap + s->cap / 2 + 16;
        if ((rc = ld_mem_check(s->path, cap, s->d, s->t->id, s->cap * s->d * s->t->bytes)))
            return rc;
        /* realloc's own failure (ulimit -v) is the same line */
        char *x = realloc(s->x, cap * s->d * s->t->bytes);
        if (!x) {
            char b[32];
            return err_set(TCJ_ENOMEM, "%s: cannot get %s of memory for %zu x %zu %s values",
                           s->path, mem_bytes_str((uint64_t)cap * s->d * s->t->bytes, b), cap, s->d,
                           s->t->name);
        }
        s->cap = cap;
        s->x = x;
    }
    s->row_bad = 0;
    *row = s->row;
    return 0;
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
    if (ld_hook)
        run_hook();
    if (s->row_bad) {
        s->bad_rows++;
        s->row_bad = 0;
        if (s->drop)
            return;
    }
    s->t->from_f64(s->row, s->d, s->x + s->n * s->d * s->t->bytes);
    s->n++;
}

void ld_commit_point(ld_sink *s, const double *row, size_t point, uint64_t base, uint64_t stride)
{
    if (ld_hook)
        run_hook();
    for (size_t j = 0; j < s->d; j++) {
        if (isfinite(row[j]))
            continue;
        if (base == UINT64_MAX)
            ld_note_bad(s, "point %zu value %zu", point, j);
        else
            ld_note_bad(s, "byte %llu (point %zu value %zu)",
                        (unsigned long long)(base + j * stride), point, j);
    }
    if (s->row_bad && s->drop) {
        s->bad_rows++;
        s->row_bad = 0;
        return;
    }
    if (row != s->row)
        memcpy(s->row, row, s->d * sizeof(double));
    ld_commit(s);
}

void ld_commit_stored(ld_sink *s, size_t slot, size_t point)
{
    if (ld_hook)
        run_hook();
    const size_t rb = s->d * s->t->bytes;
    char *src = s->x + slot * rb;
    /* a type without NaN (u8) has no value to look for */
    if (s->t->holds(NAN)) {
        double v[256];
        for (size_t j = 0; j < s->d; j += 256) {
            const size_t m = s->d - j < 256 ? s->d - j : 256;
            s->t->to_f64(src + j * s->t->bytes, m, v);
            for (size_t i = 0; i < m; i++)
                if (!isfinite(v[i]))
                    ld_note_bad(s, "point %zu value %zu", point, j + i);
        }
    }
    if (s->row_bad) {
        s->bad_rows++;
        s->row_bad = 0;
        if (s->drop)
            return;
    }
    if (slot != s->n)
        memmove(s->x + s->n * rb, src, rb);
    s->n++;
}

int ld_finish(ld_sink *s, dataset *out)
{
    if (s->bad_values && !s->drop) {
        int rc = err_set(TCJ_EINVAL,
                         "%s: %zu value%s NaN or Inf, first at %s; load ... drop-nonfinite=yes to "
                         "drop those rows",
                         s->path, s->bad_values, s->bad_values == 1 ? " is" : "s are", s->first);
        ld_sink_free(s);
        return rc;
    }
    out->n = s->n;
    out->d = s->d;
    out->type = s->t ? s->t->id : DTYPE_F64;
    /* The array as sized unless rows were dropped or it grew past them. */
    if (!s->n) {
        free(s->x);
        out->v = NULL;
    } else {
        out->v = s->n == s->cap ? s->x : xrealloc(s->x, s->n * s->d * s->t->bytes);
    }
    s->x = NULL;
    free(s->row);
    s->row = NULL;
    return 0;
}

void ld_sink_free(ld_sink *s)
{
    free(s->x);
    free(s->row);
    s->x = NULL;
    s->row = NULL;
}
