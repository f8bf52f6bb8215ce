/* NumPy .npy, format versions 1.0, 2.0 and 3.0: magic "\x93NUMPY", version,
 * header length (uint16 in v1, uint32 in v2/v3), then a Python dict literal
 * {'descr': '<f4', 'fortran_order': False, 'shape': (n, d), } padded to a
 * multiple of 64 bytes, then the raw array. Shapes: (n, d) as n x d, (n,) as
 * n x 1, (n, a, b, ...) as n x (a*b*...). Fortran order is read column by
 * column straight into the row-major array. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "load_util.h"
#include "mem.h"

int npy_probe(const unsigned char *head, size_t len)
{
    return len >= 6 && !memcmp(head, "\x93NUMPY", 6);
}

/* The quoted or bare value after 'key': in the dict, NULL if absent. */
static const char *dict_value(const char *hdr, const char *key)
{
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(hdr, pat);
    if (!p) {
        snprintf(pat, sizeof pat, "\"%s\"", key);
        p = strstr(hdr, pat);
    }
    if (!p)
        return NULL;
    p += strlen(pat);
    while (isspace((unsigned char)*p))
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/* descr such as '<f4' into a type; 0 or an error. */
static int npy_descr(const char *path, const char *v, int *type, int *be)
{
    if (!v)
        return err_set(TCJ_EINVAL, "%s: npy header has no 'descr'", path);
    if (*v == '[')
        return err_set(TCJ_EINVAL,
                       "%s: structured npy dtype %s is not supported; save a plain "
                       "2-D numeric array",
                       path, ld_esc(v, 40));
    char q = *v;
    if (q != '\'' && q != '"')
        return err_set(TCJ_EINVAL, "%s: npy header: cannot read 'descr' %s", path, ld_esc(v, 20));
    char s[16];
    size_t k = 0;
    for (v++; *v && *v != q && k < sizeof s - 1; v++)
        s[k++] = *v;
    s[k] = 0;
    char bo = s[0];
    const char *t = s;
    *be = 0;
    if (bo == '<' || bo == '>' || bo == '|' || bo == '=') {
        *be = bo == '>';
        t++;
    }
    static const struct {
        const char *code;
        int type;
    } map[] = {{"f2", LD_F16}, {"f4", LD_F32}, {"f8", LD_F64}, {"u1", LD_U8},  {"i1", LD_I8},
               {"u2", LD_U16}, {"i2", LD_I16}, {"u4", LD_U32}, {"i4", LD_I32}, {"u8", LD_U64},
               {"i8", LD_I64}, {"b1", LD_U8},  {"e", LD_F16},  {"f", LD_F32},  {"d", LD_F64},
               {"B", LD_U8},   {"b", LD_I8},   {"?", LD_U8}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(t, map[i].code)) {
            *type = map[i].type;
            return 0;
        }
    if (t[0] == 'O')
        return err_set(TCJ_EINVAL,
                       "%s: npy dtype '%s' holds Python objects, not numbers; save "
                       "the array with a numeric dtype (e.g. float32)",
                       path, ld_esc(s, 16));
    return err_set(TCJ_EINVAL,
                   "%s: npy dtype '%s' is not supported (use f2 f4 f8 u1 i1 u2 i2 "
                   "u4 i4 u8 i8, either byte order)",
                   path, ld_esc(s, 16));
}

int load_npy(const char *path, const load_opts *opt, dataset *out)
{
    uint64_t size;
    ld_stamp stamp;
    FILE *f = ld_open(path, &size, &stamp);
    if (!f)
        return TCJ_EIO;
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    int rc = 0;
    char *hdr = NULL;
    if (got == 0) {
        rc = err_set(TCJ_EINVAL, "%s: empty file, no points", path);
        goto done;
    }
    if (got < 10 || !npy_probe(pre, got)) {
        rc = err_set(TCJ_EINVAL, "%s: byte 0: not a .npy file (no \\x93NUMPY magic)", path);
        goto done;
    }
    int major = pre[6];
    uint64_t hlen, hstart;
    if (major == 1) {
        hlen = pre[8] | (uint64_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (got < 12) {
            rc = err_set(TCJ_EINVAL, "%s: byte %zu: file ends inside the npy preamble", path, got);
            goto done;
        }
        hlen = pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 | (uint64_t)pre[11] << 24;
        hstart = 12;
    } else {
        rc = err_set(TCJ_EINVAL, "%s: byte 6: npy format version %d.%d is not supported (1 to 3)",
                     path, major, pre[7]);
        goto done;
    }
    if (hstart + hlen > size) {
        rc = err_set(TCJ_EINVAL,
                     "%s: byte %llu: npy header of %llu bytes runs past the end of "
                     "the file (%llu bytes)",
                     path, (unsigned long long)hstart, (unsigned long long)hlen,
                     (unsigned long long)size);
        goto done;
    }
    /* numpy itself refuses headers over 10000 bytes unless told otherwise */
    if (hlen > (1u << 20)) {
        rc = err_set(TCJ_EINVAL, "%s: byte 8: npy header length %llu is over 1 MiB", path,
                     (unsigned long long)hlen);
        goto done;
    }
    hdr = xmalloc(hlen + 1);
    if ((rc = ld_seek(f, path, hstart)) != 0)
        goto done;
    if (fread(hdr, 1, hlen, f) != hlen) {
        rc = err_set(TCJ_EIO, "%s: byte %llu: cannot read the npy header", path,
                     (unsigned long long)hstart);
        goto done;
    }
    hdr[hlen] = 0;
    if (strlen(hdr) != hlen) {
        rc = err_set(TCJ_EINVAL, "%s: byte %llu: npy header holds a NUL byte", path,
                     (unsigned long long)(hstart + strlen(hdr)));
        goto done;
    }
    int type = 0, be = 0;
    if ((rc = npy_descr(path, dict_value(hdr, "descr"), &type, &be)) != 0)
        goto done;
    const char *fo = dict_value(hdr, "fortran_order");
    int fortran = fo && !strncmp(fo, "True", 4);
    const char *sh = dict_value(hdr, "shape");
    if (!sh || *sh != '(') {
        rc = err_set(TCJ_EINVAL, "%s: npy header has no 'shape' tuple", path);
        goto done;
    }
    uint64_t dims[16], shape_at = hstart + (uint64_t)(sh - hdr);
    int nd = 0;
    const char *p = sh + 1;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == ')')
            break;
        char *e;
        errno = 0;
        unsigned long long v = isdigit((unsigned char)*p) ? strtoull(p, &e, 10) : 0;
        if (!isdigit((unsigned char)*p) || errno == ERANGE || nd == 16) {
            rc = err_set(TCJ_EINVAL, "%s: byte %llu: npy header: cannot read the shape %s", path,
                         (unsigned long long)shape_at, ld_esc(sh, 40));
            goto done;
        }
        dims[nd++] = v;
        p = e;
        while (*p == 'L')
            p++;
    }
    if (nd == 0) {
        rc = err_set(TCJ_EINVAL, "%s: npy array is a scalar (shape ()), not a set of points", path);
        goto done;
    }
    uint64_t n = dims[0], d = 1;
    for (int i = 1; i < nd && !rc; i++)
        rc = ld_mul(path, "shape", shape_at, d, dims[i], &d);
    if (rc)
        goto done;
    size_t es = ld_type_size(type);
    uint64_t data = hstart + hlen, want, have = size - data;
    /* zero and wrap-around here; the size must then match the file exactly */
    if ((rc = ld_check_dims(path, "shape", shape_at, n, d, es, data, UINT64_MAX, &want)) != 0)
        goto done;
    if (want != have) {
        char shape[128];
        int k = snprintf(shape, sizeof shape, "%llu", (unsigned long long)dims[0]);
        for (int i = 1; i < nd && k < (int)sizeof shape - 24; i++)
            k += snprintf(shape + k, sizeof shape - k, "x%llu", (unsigned long long)dims[i]);
        rc = err_set(TCJ_EINVAL,
                     "%s: header says %s %s%s = %llu bytes of data, file has %llu (from byte %llu)",
                     path, shape, ld_type_name(type), be ? "be" : "", (unsigned long long)want,
                     (unsigned long long)have, (unsigned long long)data);
        goto done;
    }
    size_t take;
    if ((rc = ld_check_take(path, opt, n, d, ld_keep_type(type), &take)) != 0)
        goto done;
    ld_sink s;
    if ((rc = ld_sink_init(&s, path, (size_t)d, take, opt, ld_keep_type(type))) != 0)
        goto done;
    if (!fortran) {
        rc = ld_seek(f, path, data + opt->offset * d * es);
        for (size_t k = 0; k < take && !rc; k++) {
            size_t r = opt->offset + k;
            uint64_t at = data + r * d * es;
            double *row;
            if ((rc = ld_row(&s, &row)) != 0)
                break;
            rc = ld_read_values(f, path, type, be, d, row, at);
            if (!rc)
                ld_commit_point(&s, row, r, at, es);
        }
    } else {
        /* Column j holds point i at data + (j*n + i)*es: read the wanted run
         * of each column and scatter it into the rows. */
        double *col = mem_alloc(path, "a column of FP64 values", take, sizeof(double), 0);
        if (!col)
            rc = TCJ_ENOMEM;
        for (size_t j = 0; j < d && !rc; j++) {
            uint64_t at = data + (j * n + opt->offset) * es;
            rc = ld_cancel_check(opt->cancel, path);
            if (!rc)
                rc = ld_seek(f, path, at);
            if (!rc)
                rc = ld_read_values(f, path, type, be, take, col, at);
            for (size_t i = 0; i < take && !rc; i++)
                s.t->from_f64(&col[i], 1, s.x + (i * d + j) * s.t->bytes);
        }
        free(col);
        /* Row i, widened into the row buffer, is stored at row n <= i. */
        for (size_t i = 0; i < take && !rc; i++) {
            s.t->to_f64(s.x + i * d * s.t->bytes, d, s.row);
            ld_commit_point(&s, s.row, opt->offset + i, data + (opt->offset + i) * es, n * es);
        }
    }
    rc = ld_unchanged(f, path, &stamp, rc);
    if (rc)
        ld_sink_free(&s);
    else
        rc = ld_finish(&s, out);
done:
    free(hdr);
    fclose(f);
    return rc;
}
