/* Loading dispatch, the content hash, `info` facts and option parsing for
 * datasets. The formats themselves live in src/load_*.c. */
#include "dataset.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "err.h"
#include "mem.h"
#include "par.h"
#include "load_types.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* 1 if name ends with one of the space-separated endings, any case. */
static int ends_with_any(const char *name, const char *endings)
{
    size_t nl = strlen(name);
    const char *p = endings;
    while (p && *p) {
        while (*p == ' ')
            p++;
        size_t k = strcspn(p, " ");
        if (k && k <= nl && !strncasecmp(name + nl - k, p, k))
            return 1;
        p += k;
    }
    return 0;
}

static const char *format_names(void)
{
    static char buf[160];
    size_t k = 0;
    for (int i = 0; loader_table[i] && k < sizeof buf - 16; i++)
        k += snprintf(buf + k, sizeof buf - k, "%s%s", i ? " " : "", loader_table[i]->name);
    return buf;
}

static int choose_loader(const char *path, const load_opts *opt, const loader **out)
{
    if (opt->format && *opt->format) {
        *out = loader_find(opt->format);
        if (!*out)
            return err_set(TCJ_EINVAL, "unknown format '%s' (one of: %s)", opt->format,
                           format_names());
        return 0;
    }
    const char *name = base_name(path);
    for (int i = 0; loader_table[i]; i++)
        if (ends_with_any(name, loader_table[i]->extensions)) {
            *out = loader_table[i];
            return 0;
        }
    /* raw options say what a file is when its name does not (KITTI's .bin) */
    if (opt->dtype || opt->dim) {
        *out = loader_find("raw");
        return 0;
    }
    unsigned char head[512];
    size_t len = 0;
    FILE *f = fopen(path, "rb");
    if (f) {
        len = fread(head, 1, sizeof head, f);
        fclose(f);
    }
    if (len == 0)
        return err_set(TCJ_EINVAL, "%s: empty file, no points", path);
    for (int i = 0; loader_table[i]; i++)
        if (loader_table[i]->probe && loader_table[i]->probe(head, len)) {
            *out = loader_table[i];
            return 0;
        }
    return err_set(TCJ_EINVAL,
                   "%s: cannot tell the format from the name or the first bytes; "
                   "give format=NAME (one of: %s)",
                   path, format_names());
}

int dataset_load(const char *path, const load_opts *opt, dataset *out)
{
    load_opts none;
    load_opts_init(&none);
    if (!opt)
        opt = &none;
    memset(out, 0, sizeof *out);
    if (!path || !*path)
        return err_set(TCJ_EINVAL, "load: no file name given");
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(TCJ_EIO, "%s: %s", path, strerror(errno));
    if (S_ISDIR(st.st_mode))
        return err_set(TCJ_EINVAL, "%s: is a directory, not a data file", path);
    const loader *ld;
    int rc = choose_loader(path, opt, &ld);
    if (rc)
        return rc;
    /* cols= and delim= pick fields of text lines; a binary file's rows have
     * none, and dropping them silently would join what the user dropped. */
    if ((opt->cols || opt->delim) && ld != loader_find("csv"))
        return err_set(TCJ_EINVAL,
                       "%s: %s= applies to delimited text only, not to a %s file; load it "
                       "whole",
                       path, opt->cols ? "cols" : "delim", ld->name);
    dataset ds = {0};
    if ((rc = ld->load(path, opt, &ds)) != 0)
        return rc;
    if (ds.n == 0)
        rc = opt->offset
                 ? err_set(TCJ_EINVAL, "%s: no points left after offset=%zu", path, opt->offset)
                 : err_set(TCJ_EINVAL, "%s: no points (empty data)", path);
    else if (ds.d == 0)
        rc = err_set(TCJ_EINVAL, "%s: d = 0: the points have no coordinates", path);
    else if (ds.n == 1)
        rc = err_set(TCJ_EINVAL, "%s: only 1 point; a self-join needs at least 2 points", path);
    if (rc) {
        free(ds.v);
        return rc;
    }
    char *abs = realpath(path, NULL);
    ds.path = abs ? abs : xstrdup(path);
    ds.format = xstrdup(ld->name);
    if (opt->offset || opt->limit) {
        /* a slice gets a name of its own: it is not the whole file */
        size_t k = strlen(base_name(path)) + 48;
        ds.name = xmalloc(k);
        snprintf(ds.name, k, "%s[%zu:%zu]", base_name(path), opt->offset, opt->offset + ds.n);
    } else
        ds.name = xstrdup(base_name(path));
    if (dataset_hash_checked(&ds, opt->cancel, &ds.hash)) {
        dataset_free(&ds);
        return err_cancelled("load %s", path);
    }
    *out = ds;
    return 0;
}

void dataset_free(dataset *ds)
{
    if (!ds)
        return;
    free(ds->name);
    free(ds->path);
    free(ds->format);
    free(ds->v);
    memset(ds, 0, sizeof *ds);
}

size_t dataset_bytes(const dataset *ds)
{
    return ds->n * ds->d * dataset_dtype(ds)->bytes;
}

void dataset_values_f64(const dataset *ds, size_t k0, size_t m, double *dst)
{
    const dtype *t = dataset_dtype(ds);
    t->to_f64((const char *)ds->v + k0 * t->bytes, m, dst);
}

void dataset_rows_f64(const dataset *ds, size_t i0, size_t count, double *dst)
{
    dataset_values_f64(ds, i0 * ds->d, count * ds->d, dst);
}

const double *dataset_row_f64(const dataset *ds, size_t i, double *buf)
{
    if (ds->type == DTYPE_F64)
        return (const double *)ds->v + i * ds->d;
    dataset_rows_f64(ds, i, 1, buf);
    return buf;
}

double dataset_value(const dataset *ds, size_t k)
{
    const dtype *t = dataset_dtype(ds);
    double v;
    t->to_f64((const char *)ds->v + k * t->bytes, 1, &v);
    return v;
}

size_t dataset_block_rows(const dataset *ds)
{
    return ds->d && ds->d < DATASET_BLOCK_VALUES ? DATASET_BLOCK_VALUES / ds->d : 1;
}

void dataset_set_f64(dataset *ds, const double *x, size_t n, size_t d, dtype_id t)
{
    ds->n = n;
    ds->d = d;
    ds->type = t;
    free(ds->v);
    ds->v = xmalloc((n * d > 0 ? n * d : 1) * dtype_get(t)->bytes);
    dtype_get(t)->from_f64(x, n * d, ds->v);
    ds->hash = dataset_hash(ds);
}

/* FNV-1a's constants, for the duplicate search's row hash below. */
#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

/* The content hash (docs/DATASETS.md, "Content hash"): the values as
 * IEEE-754 binary64 bit patterns in row-major order, cut into chunks of
 * DATASET_HASH_CHUNK values; each chunk hashed in four interleaved lanes
 * (value k of the chunk into lane k mod 4: multiply, rotate, multiply),
 * the lanes folded; the chunks' hashes folded in order after n and d;
 * splitmix64's finalizer last. The cut is fixed, not the machine's, so the
 * same numbers give the same hash from any type, on any machine and any
 * number of cores; the chunks are hashed on all of them, where a
 * byte-serial hash (FNV-1a, before) cost more than a join of the same
 * data (docs/BENCHMARKS.md, "The Python module"). */
#define DATASET_HASH_CHUNK ((size_t)1 << 16)
#define H_K1 0x9e3779b97f4a7c15ULL
#define H_K2 0xc2b2ae3d27d4eb4fULL
#define H_K3 0x165667b19e3779f9ULL

static uint64_t h_rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}

static uint64_t h_final(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t hash_chunk(const double *v, size_t m)
{
    uint64_t l[4] = {H_K1, H_K2, H_K3, H_K1 ^ H_K2};
    size_t k = 0;
    for (; k + 4 <= m; k += 4)
        for (int t = 0; t < 4; t++) {
            uint64_t b;
            memcpy(&b, &v[k + (size_t)t], 8);
            l[t] = h_rotl(l[t] ^ (b * H_K2), 31) * H_K1;
        }
    for (; k < m; k++) {
        uint64_t b;
        memcpy(&b, &v[k], 8);
        l[k % 4] = h_rotl(l[k % 4] ^ (b * H_K2), 31) * H_K1;
    }
    uint64_t h = m;
    for (int t = 0; t < 4; t++)
        h = h_rotl(h ^ h_final(l[t]), 27) * H_K3;
    return h;
}

static uint64_t hash_fold(uint64_t h, uint64_t x)
{
    return h_rotl(h ^ h_final(x), 27) * H_K3 + H_K1;
}

typedef struct hash_job {
    const dataset *ds;
    uint64_t *chunk; /* each chunk's hash (NULL: no hash asked) */
    size_t all;
    const volatile int *cancel;
    volatile int cancelled;
    int find;                      /* look for the first value that is not finite */
    size_t first[PAR_MAX_THREADS]; /* per range: its first non-finite value, or all */
} hash_job;

static void hash_range(void *ctx, int t, size_t a, size_t b)
{
    hash_job *j = ctx;
    double *buf = xmalloc(DATASET_HASH_CHUNK * sizeof *buf);
    j->first[t] = j->all;
    for (size_t c = a; c < b; c++) {
        /* a 4 GB dataset hashes for a while: Ctrl-C is looked at every chunk */
        if (j->cancel && *j->cancel) {
            j->cancelled = 1;
            break;
        }
        const size_t i0 = c * DATASET_HASH_CHUNK;
        const size_t m = j->all - i0 < DATASET_HASH_CHUNK ? j->all - i0 : DATASET_HASH_CHUNK;
        dataset_values_f64(j->ds, i0, m, buf);
        if (j->chunk)
            j->chunk[c] = hash_chunk(buf, m);
        for (size_t k = 0; j->find && k < m && j->first[t] == j->all; k++)
            if (!isfinite(buf[k]))
                j->first[t] = i0 + k;
    }
    free(buf);
}

/* One pass over the values on the cores: their hash into *out (NULL:
 * none), the first value that is not finite into *nonfinite (NULL: not
 * looked for; n * d: none). */
static int dataset_scan(const dataset *ds, const volatile int *cancel, uint64_t *out,
                        size_t *nonfinite)
{
    hash_job j = {.ds = ds, .all = ds->n * ds->d, .cancel = cancel, .find = nonfinite != NULL};
    const size_t nc = (j.all + DATASET_HASH_CHUNK - 1) / DATASET_HASH_CHUNK;
    if (out)
        j.chunk = xmalloc((nc ? nc : 1) * sizeof *j.chunk);
    int nt;
    par_for(nc, DATASET_HASH_CHUNK, hash_range, &j, &nt);
    uint64_t h = hash_fold(hash_fold(H_K3, ds->n), ds->d);
    for (size_t c = 0; out && c < nc; c++)
        h = hash_fold(h, j.chunk[c]);
    free(j.chunk);
    if (j.cancelled)
        return TCJ_ECANCEL;
    if (out)
        *out = h_final(h);
    if (nonfinite) {
        *nonfinite = j.all;
        for (int t = 0; t < nt; t++)
            *nonfinite = j.first[t] < *nonfinite ? j.first[t] : *nonfinite;
    }
    return 0;
}

int dataset_hash_scan(const dataset *ds, const volatile int *cancel, uint64_t *out,
                      size_t *nonfinite)
{
    return dataset_scan(ds, cancel, out, nonfinite);
}

int dataset_nonfinite(const dataset *ds, const volatile int *cancel, size_t *first)
{
    return dataset_scan(ds, cancel, NULL, first);
}

int dataset_hash_checked(const dataset *ds, const volatile int *cancel, uint64_t *out)
{
    return dataset_hash_scan(ds, cancel, out, NULL);
}

uint64_t dataset_hash(const dataset *ds)
{
    uint64_t h = 0;
    dataset_hash_checked(ds, NULL, &h);
    return h;
}

/* Row hash for duplicate search: -0.0 and 0.0 compare equal, so they hash alike. */
static uint64_t row_hash(const double *r, size_t d)
{
    uint64_t h = FNV_OFFSET;
    for (size_t j = 0; j < d; j++) {
        double v = r[j] == 0 ? 0.0 : r[j];
        uint64_t b;
        memcpy(&b, &v, 8);
        h = (h ^ b) * FNV_PRIME;
        h ^= h >> 29;
    }
    return h;
}

static int rows_equal(const double *a, const double *b, size_t d)
{
    for (size_t j = 0; j < d; j++)
        if (a[j] != b[j])
            return 0;
    return 1;
}

/* Points equal to an earlier point: open addressing over row indices. */
static size_t count_duplicates(const dataset *ds, double *rb)
{
    if (ds->n < 2)
        return 0;
    size_t cap = 1;
    while (cap < 2 * ds->n)
        cap <<= 1;
    size_t *slot = xmalloc(cap * sizeof *slot);
    memset(slot, 0xff, cap * sizeof *slot);
    size_t dup = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const double *r = dataset_row_f64(ds, i, rb);
        size_t k = (size_t)row_hash(r, ds->d) & (cap - 1);
        for (;;) {
            if (slot[k] == SIZE_MAX) {
                slot[k] = i;
                break;
            }
            if (rows_equal(dataset_row_f64(ds, slot[k], rb + ds->d), r, ds->d)) {
                dup++;
                break;
            }
            k = (k + 1) & (cap - 1);
        }
    }
    free(slot);
    return dup;
}

int dataset_info_compute(const dataset *ds, dataset_info *info)
{
    memset(info, 0, sizeof *info);
    size_t m = ds->n * ds->d;
    if (!m)
        return 0;
    const double tiny = ldexp(1, -24), norm_min = ldexp(1, -14);
    info->min = info->max = dataset_value(ds, 0);
    /* two rows widened to FP64: 4.3 GB at d = 2^28 (src/mem.h) */
    double *rb = mem_alloc(ds->name ? ds->name : "dataset", "two rows widened to FP64", 2 * ds->d,
                           sizeof *rb, 0);
    if (!rb)
        return TCJ_ENOMEM;
    for (size_t i = 0; i < ds->n; i++) {
        const double *r = dataset_row_f64(ds, i, rb);
        double s = 0;
        for (size_t j = 0; j < ds->d; j++) {
            double v = r[j], a = fabs(v);
            if (v < info->min)
                info->min = v;
            if (v > info->max)
                info->max = v;
            if (a > info->absmax)
                info->absmax = a;
            if (a > 65504.0)
                info->fp16_overflow++;
            else if (a != 0 && a < tiny)
                info->fp16_underflow++;
            else if (a != 0 && a < norm_min)
                info->fp16_subnormal++;
            s += v * v;
        }
        if (s > info->max_norm2)
            info->max_norm2 = s;
    }
    info->duplicates = count_duplicates(ds, rb);
    free(rb);
    return 0;
}

const char *const load_opt_names[] = {"format",  "offset",         "limit", "cols",
                                      "header",  "delim",          "dtype", "dim",
                                      "dataset", "drop-nonfinite", NULL};

int dataset_parse_count(const char *key, const char *val, size_t *out)
{
    char *end;
    errno = 0;
    if (!*val || *val == '-' || *val == '+' || isspace((unsigned char)*val))
        goto bad;
    unsigned long long v = strtoull(val, &end, 10);
    if (end == val || errno == ERANGE)
        goto bad;
    if (*end) {
        static const char sfx[] = "kKMG";
        static const double mul[] = {1e3, 1e3, 1e6, 1e9};
        double dv = strtod(val, &end);
        if (*end && !end[1] && end != val && strchr(sfx, *end)) {
            dv *= mul[strchr(sfx, *end) - sfx];
            end++;
        }
        if (*end || !(dv >= 0) || dv > 9007199254740992.0 || dv != floor(dv))
            goto bad;
        v = (unsigned long long)dv;
    }
    *out = (size_t)v;
    return 0;
bad:
    return err_set(TCJ_EINVAL, "%s: expected a non-negative integer, got '%s'", key, val);
}

static int parse_size(const char *key, const char *val, size_t *out)
{
    char *e;
    errno = 0;
    if (!val || !*val || *val == '-')
        return err_set(TCJ_EINVAL, "%s=%s: expected a whole number >= 0", key, val ? val : "");
    unsigned long long v = strtoull(val, &e, 10);
    /* 1e6 and 100k are how people write sizes */
    if (*e == 'e' || *e == 'E') {
        char *e2;
        double x = strtod(val, &e2);
        if (*e2 || x != floor(x) || x > 1e18)
            return err_set(TCJ_EINVAL, "%s=%s: expected a whole number >= 0", key, val);
        v = (unsigned long long)x;
        e = e2;
    } else if ((*e == 'k' || *e == 'K') && !e[1]) {
        v *= 1000, e++;
    } else if ((*e == 'm' || *e == 'M') && !e[1]) {
        v *= 1000000, e++;
    }
    if (*e || errno)
        return err_set(TCJ_EINVAL, "%s=%s: expected a whole number >= 0", key, val);
    *out = (size_t)v;
    return 0;
}

static int parse_bool(const char *key, const char *val, int *out)
{
    if (!strcmp(val, "1") || !strcasecmp(val, "yes") || !strcasecmp(val, "true") ||
        !strcasecmp(val, "on"))
        *out = 1;
    else if (!strcmp(val, "0") || !strcasecmp(val, "no") || !strcasecmp(val, "false") ||
             !strcasecmp(val, "off"))
        *out = 0;
    else
        return err_set(TCJ_EINVAL, "%s=%s: expected 1 or 0 (yes/no)", key, val);
    return 0;
}

int load_opts_set(load_opts *o, const char *key, const char *val)
{
    if (!val)
        val = "";
    if (!strcmp(key, "format")) {
        if (!loader_find(val))
            return err_set(TCJ_EINVAL, "format=%s: unknown format (one of: %s)", val,
                           format_names());
        o->format = val;
    } else if (!strcmp(key, "offset"))
        return parse_size(key, val, &o->offset);
    else if (!strcmp(key, "limit"))
        return parse_size(key, val, &o->limit);
    else if (!strcmp(key, "cols"))
        o->cols = val;
    else if (!strcmp(key, "header")) {
        int b;
        if (!strcasecmp(val, "auto"))
            o->header = -1;
        else if (parse_bool(key, val, &b))
            return err_set(TCJ_EINVAL, "header=%s: expected auto, yes or no", val);
        else
            o->header = b;
    } else if (!strcmp(key, "delim")) {
        if (!strcasecmp(val, "tab") || !strcmp(val, "\\t"))
            o->delim = '\t';
        else if (!strcasecmp(val, "space") || !strcasecmp(val, "spaces") ||
                 !strcasecmp(val, "whitespace") || !strcmp(val, " "))
            o->delim = ' ';
        else if (!strcasecmp(val, "comma"))
            o->delim = ',';
        else if (!strcasecmp(val, "semicolon"))
            o->delim = ';';
        else if (!strcasecmp(val, "auto"))
            o->delim = 0;
        else if (strlen(val) == 1 && val[0] != '#' && val[0] != '"')
            o->delim = val[0];
        else
            return err_set(TCJ_EINVAL, "delim=%s: expected one character, tab, space or auto", val);
    } else if (!strcmp(key, "dtype")) {
        int be;
        if (ld_type_parse(val, &be) < 0)
            return err_set(TCJ_EINVAL,
                           "dtype=%s: expected f16 f32 f64 u8 i8 u16 i16 u32 i32 u64 "
                           "i64 (suffix be for big-endian)",
                           val);
        o->dtype = val;
    } else if (!strcmp(key, "dim")) {
        int rc = parse_size(key, val, &o->dim);
        if (!rc && o->dim == 0)
            return err_set(TCJ_EINVAL, "dim=0: expected the number of values per point (>= 1)");
        return rc;
    } else if (!strcmp(key, "h5name") || !strcmp(key, "dataset"))
        o->h5name = val;
    else if (!strcmp(key, "drop-nonfinite") || !strcmp(key, "drop_nonfinite"))
        return parse_bool(key, val, &o->drop_nonfinite);
    else
        return err_set(TCJ_EINVAL,
                       "unknown load option '%s' (format offset limit cols header "
                       "delim dtype dim dataset drop-nonfinite)",
                       key);
    return 0;
}

void load_opts_init(load_opts *o)
{
    memset(o, 0, sizeof *o);
    o->header = -1;
}
