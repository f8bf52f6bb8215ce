/* Delimited text: one point per line, fields separated by ',', tab, ';' or
 * runs of spaces. Line endings LF, CRLF or CR alone (old Mac files). '#'
 * starts a comment that runs to the end of the line; blank lines are
 * skipped; a UTF-8 byte order mark is ignored. Fields may be "quoted".
 *
 * Delimiter (load_opts.delim 0): the first content line decides: a tab if it
 * has one (unless a tab-separated field holds a space: then whitespace),
 * else ',' if it has one, else ';' if it has one, else whitespace.
 * Header (load_opts.header -1): the first content line is a header when any
 * of its fields is not a number (so "Letter,1,2,...,16" is one, whatever
 * columns are kept); header 1 forces one, 0 forces none.
 *
 * Column selection (load_opts.cols; column numbers are 0-based):
 *   cols  := item { ',' item }
 *   item  := [ '-' ] sel          a leading '-' drops the columns
 *   sel   := N | N '-' M | N '-' | N '-last' | 'last' | NAME
 * N-M is an inclusive range, "N-" and "N-last" run to the last column,
 * "last" is the last column, NAME a header field. Kept columns are the
 * union of the plain items (all columns when there are none) minus the
 * dropped ones, in file order. Examples: "1-16", "0,2,5", "-0" (all but the
 * first), "-last" (all but the last), "-id" (all but the header's "id"). */
#include <ctype.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "load_util.h"

static locale_t c_locale;
static pthread_once_t c_locale_once = PTHREAD_ONCE_INIT;

/* Numbers are read in the C locale whatever the program's LC_NUMERIC is. */
static void c_locale_init(void)
{
    c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
}

int text_probe(const unsigned char *head, size_t len)
{
    int digits = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = head[i];
        if (c == 0 || (c < 32 && c != '\n' && c != '\r' && c != '\t'))
            return 0;
        digits += isdigit(c) != 0;
    }
    return digits > 0;
}

typedef struct line_reader {
    FILE *f;
    const char *path;
    char *buf;
    size_t len, cap;
    size_t lineno;
    uint64_t byte; /* file offset of the next character */
    int after_cr;  /* the last line ended in CR: a following LF belongs to it */
} line_reader;

/* Longer lines mean binary data or a file without line endings (a device,
 * /dev/zero): refused rather than read until memory runs out. */
#define LINE_MAX_BYTES (256u << 20)

/* Next line without its terminator: 1, 0 at end of file, or an error code
 * for a NUL byte or an overlong line. */
static int next_line(line_reader *r)
{
    int c;
    r->len = 0;
    if (r->after_cr) {
        c = getc_unlocked(r->f);
        if (c != '\n' && c != EOF)
            ungetc(c, r->f);
        else if (c == '\n')
            r->byte++;
        r->after_cr = 0;
    }
    for (;;) {
        c = getc_unlocked(r->f);
        if (c == EOF) {
            if (r->len == 0)
                return 0;
            break;
        }
        r->byte++;
        if (c == '\n')
            break;
        if (c == '\r') {
            r->after_cr = 1;
            break;
        }
        if (c == 0)
            return err_set(TCJ_EINVAL, "%s:%zu: byte %llu: a NUL byte: not a text file", r->path,
                           r->lineno + 1, (unsigned long long)(r->byte - 1));
        if (r->len + 1 >= LINE_MAX_BYTES)
            return err_set(
                TCJ_EINVAL, "%s:%zu: line longer than %u MiB at byte %llu: not delimited text",
                r->path, r->lineno + 1, LINE_MAX_BYTES >> 20, (unsigned long long)r->byte);
        if (r->len + 1 >= r->cap) {
            r->cap = r->cap ? 2 * r->cap : 4096;
            r->buf = xrealloc(r->buf, r->cap);
        }
        r->buf[r->len++] = (char)c;
    }
    if (!r->buf) {
        r->cap = 64;
        r->buf = xmalloc(r->cap);
    }
    r->buf[r->len] = 0;
    r->lineno++;
    return 1;
}

typedef struct fields {
    char **f;
    size_t n, cap;
} fields;

static void fields_push(fields *fs, char *p)
{
    if (fs->n == fs->cap) {
        fs->cap = fs->cap ? 2 * fs->cap : 64;
        fs->f = xrealloc(fs->f, fs->cap * sizeof *fs->f);
    }
    fs->f[fs->n++] = p;
}

/* Trim spaces and one pair of double quotes in place; fields stay pointers
 * into the line so their column in the file is known. */
static char *field_trim(char *p, char *end)
{
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    if (end - p >= 2 && *p == '"' && end[-1] == '"') {
        p++;
        end--;
    }
    *end = 0;
    return p;
}

static void split(char *line, char delim, fields *fs)
{
    fs->n = 0;
    if (delim == ' ') {
        char *p = line;
        for (;;) {
            while (*p == ' ' || *p == '\t')
                p++;
            if (!*p)
                break;
            char *s = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
            int last = !*p;
            *p = 0;
            fields_push(fs, field_trim(s, p));
            if (last)
                break;
            p++;
        }
        return;
    }
    char *s = line;
    for (;;) {
        char *e = strchr(s, delim);
        if (!e) {
            fields_push(fs, field_trim(s, s + strlen(s)));
            return;
        }
        fields_push(fs, field_trim(s, e));
        s = e + 1;
    }
}

/* See the top of the file; a tab counts only when no tab-separated field
 * has a space inside (columns aligned with a mix of tabs and spaces). */
static char detect_delim(const char *line)
{
    if (strchr(line, '\t')) {
        char *copy = xstrdup(line);
        fields fs = {0};
        int inner_space = 0;
        split(copy, '\t', &fs);
        for (size_t j = 0; j < fs.n; j++)
            inner_space |= strchr(fs.f[j], ' ') != NULL;
        free(fs.f);
        free(copy);
        return inner_space ? ' ' : '\t';
    }
    return strchr(line, ',') ? ',' : strchr(line, ';') ? ';' : ' ';
}

static int parse_number(const char *s, double *v)
{
    if (!*s)
        return 0;
    char *e;
    *v = strtod_l(s, &e, c_locale);
    return *e == 0;
}

static const char *delim_name(char c)
{
    switch (c) {
    case '\t':
        return "tab";
    case ' ':
        return "whitespace";
    case ',':
        return "','";
    case ';':
        return "';'";
    default:
        return "the delimiter";
    }
}

/* One column selector word (without a leading '-') into [lo, hi]. */
static int cols_item(const char *path, const char *it, size_t nf, const fields *hdr, size_t *lo,
                     size_t *hi)
{
    if (!strcmp(it, "last")) {
        *lo = *hi = nf - 1;
        return 0;
    }
    if (isdigit((unsigned char)it[0])) {
        char *e;
        unsigned long long a = strtoull(it, &e, 10), b = a;
        if (*e == '-') {
            const char *r = e + 1;
            if (!*r || !strcmp(r, "last"))
                b = nf - 1;
            else {
                b = strtoull(r, &e, 10);
                if (e == r || *e)
                    return err_set(TCJ_EINVAL,
                                   "%s: cols: cannot read '%s' (N, N-M, N-, last, "
                                   "or a header name; '-' in front drops)",
                                   path, ld_esc(it, 60));
            }
        } else if (*e)
            return err_set(TCJ_EINVAL,
                           "%s: cols: cannot read '%s' (N, N-M, N-, last, or a header "
                           "name; '-' in front drops)",
                           path, ld_esc(it, 60));
        if (a > b)
            return err_set(TCJ_EINVAL,
                           "%s: cols: '%s' is reversed (first column after last); "
                           "write %llu-%llu",
                           path, ld_esc(it, 60), b, a);
        if (b >= nf)
            return err_set(TCJ_EINVAL, "%s: cols: '%s' is outside columns 0 to %zu", path,
                           ld_esc(it, 60), nf - 1);
        *lo = (size_t)a;
        *hi = (size_t)b;
        return 0;
    }
    if (!hdr)
        return err_set(TCJ_EINVAL, "%s: cols: '%s' names a column but the file has no header line",
                       path, ld_esc(it, 60));
    for (size_t j = 0; j < hdr->n; j++)
        if (!strcmp(hdr->f[j], it)) {
            *lo = *hi = j;
            return 0;
        }
    return err_set(TCJ_EINVAL, "%s: cols: no column named '%s' in the header", path,
                   ld_esc(it, 60));
}

/* keep[j] = 1 for each kept column of nf; returns the count or an error. */
static int cols_resolve(const char *path, const char *spec, size_t nf, const fields *hdr,
                        unsigned char *keep, size_t *nkeep)
{
    memset(keep, 1, nf);
    if (spec && *spec) {
        char *copy = xstrdup(spec), *save = NULL;
        int any_plain = 0;
        for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
            if (*field_trim(t, t + strlen(t)) != '-')
                any_plain = 1;
        free(copy);
        if (any_plain)
            memset(keep, 0, nf);
        copy = xstrdup(spec);
        int rc = 0;
        for (char *t = strtok_r(copy, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
            t = field_trim(t, t + strlen(t));
            int drop = *t == '-';
            size_t lo = 0, hi = 0;
            rc = cols_item(path, t + drop, nf, hdr, &lo, &hi);
            for (size_t j = lo; !rc && j <= hi; j++)
                keep[j] = !drop;
        }
        free(copy);
        if (rc)
            return rc;
    }
    *nkeep = 0;
    for (size_t j = 0; j < nf; j++)
        *nkeep += keep[j];
    return 0;
}

int load_text(const char *path, const load_opts *opt, dataset *out)
{
    pthread_once(&c_locale_once, c_locale_init);
    uint64_t size;
    ld_stamp stamp;
    FILE *f = ld_open(path, &size, &stamp);
    if (!f)
        return TCJ_EIO;
    line_reader r = {.f = f, .path = path};
    fields fs = {0}, hdr = {0};
    char *hdr_line = NULL;
    unsigned char *keep = NULL;
    size_t nf = 0, d = 0, first_line = 0, skipped = 0, take = (size_t)-1;
    char delim = opt->delim;
    int rc = 0, started = 0;
    ld_sink s = {0};
    if (opt->limit)
        take = opt->limit;
    int more = 0;
    while (take && (more = next_line(&r)) > 0) {
        if ((rc = ld_cancel_check(opt->cancel, path)) != 0)
            break;
        char *line = r.buf;
        if (r.lineno == 1 && !memcmp(line, "\xEF\xBB\xBF", 3))
            line += 3;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            continue;
        if (!started) {
            started = 1;
            if (!delim)
                delim = detect_delim(p);
            split(line, delim, &fs);
            nf = fs.n;
            first_line = r.lineno;
            int is_header = opt->header > 0;
            if (opt->header < 0)
                for (size_t j = 0; j < fs.n && !is_header; j++) {
                    double v;
                    is_header = !parse_number(fs.f[j], &v);
                }
            if (is_header) {
                /* keep the names for cols=NAME */
                hdr_line = xmalloc(r.len + 1);
                memcpy(hdr_line, r.buf, r.len + 1);
                for (size_t j = 0; j < fs.n; j++)
                    fields_push(&hdr, hdr_line + (fs.f[j] - r.buf));
            }
            keep = xmalloc(nf ? nf : 1);
            size_t nkeep;
            if ((rc = cols_resolve(path, opt->cols, nf, is_header ? &hdr : NULL, keep, &nkeep)))
                break;
            d = nkeep;
            if (d == 0) {
                rc = err_set(TCJ_EINVAL, "%s:%zu: no columns left to load (d = 0)", path, r.lineno);
                break;
            }
            if (is_header)
                continue;
        } else if (skipped < opt->offset) {
            skipped++;
            continue;
        } else
            split(line, delim, &fs);
        if (skipped < opt->offset) { /* the first line, already split */
            skipped++;
            continue;
        }
        if (fs.n != nf) {
            rc = err_set(TCJ_EINVAL,
                         "%s:%zu: %zu fields, expected %zu as on line %zu (separated "
                         "by %s)",
                         path, r.lineno, fs.n, nf, first_line, delim_name(delim));
            break;
        }
        if (!s.x) {
            /* size the array from the first data line (a short header would
             * overestimate); it grows if later lines are shorter */
            size_t est = (size_t)(size / (r.len + 1)) + 16;
            if (opt->limit && opt->limit < est)
                est = opt->limit;
            /* only a guess: start small when it would not fit, then grow
             * within available memory (ld_row) */
            if (ld_mem_check(path, est, d, DTYPE_F64, 0))
                est = 16;
            if ((rc = ld_sink_init(&s, path, d, est, opt, DTYPE_F64)) != 0)
                break;
        }
        double *row;
        if ((rc = ld_row(&s, &row)) != 0)
            break;
        size_t k = 0;
        for (size_t j = 0; j < nf; j++) {
            if (!keep[j])
                continue;
            double v;
            size_t col = (size_t)(fs.f[j] - r.buf) + 1;
            if (!parse_number(fs.f[j], &v) && opt->header == 0 && r.lineno == first_line) {
                /* header=no forced the first line to be data: name the cause. */
                rc = err_set(TCJ_EINVAL,
                             "%s:%zu:%zu: field %zu: expected a number, got '%s': the first "
                             "line is a header; drop header=no (or say header=yes)",
                             path, r.lineno, col, j, ld_esc(fs.f[j], 40));
                break;
            }
            if (!parse_number(fs.f[j], &v)) {
                rc = err_set(TCJ_EINVAL,
                             "%s:%zu:%zu: field %zu: expected a number, got '%s'; "
                             "leave the column out with cols=-%zu",
                             path, r.lineno, col, j, ld_esc(fs.f[j], 40), j);
                break;
            }
            if (!isfinite(v))
                ld_note_bad(&s, "line %zu column %zu (field %zu)", r.lineno, col, j);
            row[k++] = v;
        }
        if (rc)
            break;
        ld_commit(&s);
        take--;
    }
    if (!rc && more < 0)
        rc = more;
    if (!rc && ferror(f))
        rc = err_set(TCJ_EIO, "%s: read error after line %zu", path, r.lineno);
    rc = ld_unchanged(f, path, &stamp, rc);
    fclose(f);
    free(r.buf);
    free(fs.f);
    free(hdr.f);
    free(hdr_line);
    free(keep);
    if (!rc && !started)
        rc = err_set(TCJ_EINVAL, "%s: no data lines (empty file or only comments)", path);
    if (rc) {
        ld_sink_free(&s);
        return rc;
    }
    return ld_finish(&s, out);
}
