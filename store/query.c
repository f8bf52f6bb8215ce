/* Reading the session log: rows for `history`, `runs` and `show run N`, and
 * `export` of runs as CSV (RFC 4180 quoting) or JSON (RFC 8259 strings). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/err.h"
#include "store_int.h"

/* Step s to the end, handing each row to fn as text; finalizes s. *stopped
 * (may be NULL) says whether fn asked to stop. */
static int rows_stop(store *st, sqlite3_stmt *s, store_row_fn fn, void *ctx, const char *what,
                     int *stopped)
{
    int ncol = sqlite3_column_count(s);
    const char **names = xcalloc((unsigned long)ncol + 1, sizeof *names);
    const char **vals = xcalloc((unsigned long)ncol + 1, sizeof *vals);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        /* Names are read per row: a re-prepared statement invalidates them. */
        for (int i = 0; i < ncol; i++) {
            names[i] = sqlite3_column_name(s, i);
            vals[i] = (const char *)sqlite3_column_text(s, i);
        }
        if (fn && fn(ctx, ncol, names, vals)) {
            rc = SQLITE_DONE;
            if (stopped)
                *stopped = 1;
            break;
        }
    }
    int ret = rc == SQLITE_DONE ? 0 : store_fail(st, what);
    free(names);
    free(vals);
    sqlite3_finalize(s);
    return ret;
}

static int rows_to(store *st, sqlite3_stmt *s, store_row_fn fn, void *ctx, const char *what)
{
    return rows_stop(st, s, fn, ctx, what, NULL);
}

int store_query(store *st, const char *sql, const int64_t *params, int nparams, store_row_fn fn,
                void *ctx)
{
    const char *what = "query";
    sqlite3_stmt *s;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, &tail) != SQLITE_OK)
        return store_fail(st, what);
    if (!s)
        return err_set(TCJ_EINVAL, "%s: %s: no statement in the text", st->path, what);
    while (tail &&
           (*tail == ' ' || *tail == '\t' || *tail == '\n' || *tail == '\r' || *tail == ';'))
        tail++;
    int rc = 0;
    if (tail && *tail)
        rc = err_set(TCJ_EINVAL, "%s: %s: one statement at a time", st->path, what);
    else if (sqlite3_bind_parameter_count(s) != nparams)
        rc = err_set(TCJ_EINVAL, "%s: %s: %d parameters given, the statement has %d", st->path,
                     what, nparams, sqlite3_bind_parameter_count(s));
    if (rc) {
        sqlite3_finalize(s);
        return rc;
    }
    for (int i = 0; i < nparams; i++)
        sqlite3_bind_int64(s, i + 1, params[i]);
    return rows_to(st, s, fn, ctx, what);
}

/* TCJ_ECANCEL as SQL text: a run the user stopped is not an error. */
#define CANCELLED "-6"
_Static_assert(TCJ_ECANCEL == -6, "CANCELLED matches TCJ_ECANCEL");

int store_history(store *st, int limit, int64_t before_id, store_row_fn fn, void *ctx)
{
    const char *what = "reading the history";
    sqlite3_stmt *s;
    if (store_prepare(
            st,
            "SELECT * FROM (SELECT id, at, CASE WHEN status IS NULL THEN 'unfinished' "
            "WHEN status = 0 THEN 'ok' WHEN status = " CANCELLED " THEN 'cancelled' "
            "ELSE 'error' END AS status, line "
            "FROM commands WHERE ?2 <= 0 OR id < ?2 ORDER BY id DESC LIMIT ?1) ORDER BY id",
            &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int(s, 1, limit > 0 ? limit : -1);
    sqlite3_bind_int64(s, 2, before_id);
    return rows_to(st, s, fn, ctx, what);
}

int store_runs(store *st, int limit, store_row_fn fn, void *ctx)
{
    const char *what = "listing runs";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT * FROM (SELECT r.id, r.at, r.engine, ds.name AS dataset, r.n, r.d, "
                      "r.eps, r.pairs, r.selectivity, r.seconds, r.tflops_padded AS tflops, "
                      "CASE WHEN r.status = 0 THEN 'ok' WHEN r.status = " CANCELLED
                      " THEN 'cancelled' "
                      "ELSE 'error' END AS status "
                      "FROM runs r LEFT JOIN datasets ds ON ds.id = r.dataset_id "
                      "ORDER BY r.id DESC LIMIT ?1) ORDER BY id",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int(s, 1, limit > 0 ? limit : -1);
    return rows_to(st, s, fn, ctx, what);
}

/* The query behind one run's row: every runs column, then the dataset's. */
#define RUN_SELECT                                                                                 \
    "r.*, ds.name AS dataset, ds.path AS dataset_path, ds.format AS dataset_format, "              \
    "ds.hash AS dataset_hash FROM runs r LEFT JOIN datasets ds ON ds.id = r.dataset_id"

/* The comparisons a run ?1 took part in (as A, B or the reference) and its
 * role there; B's role wins when B was the reference itself. */
#define CMP_OF_RUN "(c.run_a = ?1 OR c.run_b = ?1 OR c.run_ref = ?1)"
#define CMP_ROLE "CASE WHEN c.run_a = ?1 THEN 'a' WHEN c.run_b = ?1 THEN 'b' ELSE 'ref' END"

static int run_exists(store *st, int64_t run_id, const char *what)
{
    sqlite3_stmt *s;
    if (store_prepare(st, "SELECT 1 FROM runs WHERE id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    int rc = sqlite3_step(s);
    int ret = rc == SQLITE_ROW    ? 0
              : rc == SQLITE_DONE ? err_set(TCJ_EINVAL, "no run %lld in the session log %s",
                                            (long long)run_id, st->path)
                                  : store_fail(st, what);
    sqlite3_finalize(s);
    return ret;
}

int store_show_run(store *st, int64_t run_id, store_row_fn fn, void *ctx)
{
    static const char *const sql[] = {
        "SELECT 'run' AS section, " RUN_SELECT " WHERE r.id = ?1",
        "SELECT 'phase' AS section, name, seconds FROM run_phases WHERE run_id = ?1 ORDER BY seq",
        "SELECT 'counter' AS section, name, value, unit FROM counters WHERE run_id = ?1 "
        "ORDER BY name",
        "SELECT 'comparison' AS section, " CMP_ROLE " AS role, c.* FROM comparisons c "
        "WHERE " CMP_OF_RUN " ORDER BY c.id",
        "SELECT 'side' AS section, sd.* FROM comparison_sides sd "
        "JOIN comparisons c ON c.id = sd.comparison_id WHERE " CMP_OF_RUN
        " ORDER BY sd.comparison_id, sd.side",
        /* side last: readers take the first columns by position */
        "SELECT 'bin' AS section, h.comparison_id, h.bin, h.lo, h.hi, h.count, h.side "
        "FROM histogram_bins h JOIN comparisons c ON c.id = h.comparison_id "
        "WHERE " CMP_OF_RUN " ORDER BY h.comparison_id, h.side, h.bin",
    };
    const char *what = "showing a run";
    int rc = run_exists(st, run_id, what);
    /* A callback that stops early stops the whole listing. */
    int stopped = 0;
    for (size_t k = 0; !rc && !stopped && k < sizeof sql / sizeof sql[0]; k++) {
        sqlite3_stmt *s;
        if (store_prepare(st, sql[k], &s, what))
            return TCJ_ESTORE;
        sqlite3_bind_int64(s, 1, run_id);
        rc = rows_stop(st, s, fn, ctx, what, &stopped);
    }
    return rc;
}

int store_show_compare(store *st, int64_t comparison_id, store_row_fn fn, void *ctx)
{
    static const char *const sql[] = {
        "SELECT 'comparison' AS section, c.*, ds.name AS dataset FROM comparisons c "
        "LEFT JOIN runs r ON r.id = c.run_a LEFT JOIN datasets ds ON ds.id = r.dataset_id "
        "WHERE c.id = ?1",
        "SELECT 'side' AS section, sd.* FROM comparison_sides sd WHERE sd.comparison_id = ?1 "
        "ORDER BY sd.side",
        "SELECT 'bin' AS section, h.comparison_id, h.bin, h.lo, h.hi, h.count, h.side "
        "FROM histogram_bins h WHERE h.comparison_id = ?1 ORDER BY h.side, h.bin",
    };
    const char *what = "showing a comparison";
    sqlite3_stmt *s;
    if (store_prepare(st, "SELECT 1 FROM comparisons WHERE id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, comparison_id);
    int rc = sqlite3_step(s);
    rc = rc == SQLITE_ROW    ? 0
         : rc == SQLITE_DONE ? err_set(TCJ_EINVAL, "no comparison %lld in the session log %s",
                                       (long long)comparison_id, st->path)
                             : store_fail(st, what);
    sqlite3_finalize(s);
    int stopped = 0;
    for (size_t k = 0; !rc && !stopped && k < sizeof sql / sizeof sql[0]; k++) {
        if (store_prepare(st, sql[k], &s, what))
            return TCJ_ESTORE;
        sqlite3_bind_int64(s, 1, comparison_id);
        rc = rows_stop(st, s, fn, ctx, what, &stopped);
    }
    return rc;
}

/* ---- export ---- */

/* The shortest %g that reads back as the same double. */
static void fmt_real(char *buf, size_t len, double v)
{
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, len, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

static void csv_text(FILE *f, const char *t)
{
    /* RFC 4180: quote a field holding a separator, a quote or a line
     * break (and one with edge spaces, which some readers trim). */
    size_t n = strlen(t);
    int quote = n > 0 && (t[0] == ' ' || t[n - 1] == ' ');
    for (const char *p = t; *p && !quote; p++)
        quote = *p == ',' || *p == '"' || *p == '\n' || *p == '\r';
    if (!quote) {
        fputs(t, f);
        return;
    }
    fputc('"', f);
    for (const char *p = t; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

/* Length of the valid UTF-8 sequence at p, 0 if the bytes are not one. */
static int utf8_len(const unsigned char *p)
{
    unsigned c = p[0];
    int n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0;
        if (c == 0xed)
            hi = 0x9f; /* no UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90;
        if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (int k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

/* A JSON string; bytes that are not UTF-8 (file names can be anything)
 * become U+FFFD so the output always parses. */
static void json_str(FILE *f, const char *t)
{
    const unsigned char *p = (const unsigned char *)t;
    fputc('"', f);
    while (*p) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            p++;
        } else if (c < 0x20) {
            /* Control characters with a short escape: each one, then its letter. */
            static const char short_esc[] = "\nn\rr\tt\bb\ff";
            const char *e = strchr(short_esc, (int)c);
            if (e)
                fprintf(f, "\\%c", e[1]);
            else
                fprintf(f, "\\u%04x", c);
            p++;
        } else {
            int n = utf8_len(p);
            if (n == 0) {
                fputs("\\ufffd", f);
                p++;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
        }
    }
    fputc('"', f);
}

/* One column of the current row: numbers as they read back, text through
 * text(), NULL as null_text. */
static void put_cell(FILE *f, sqlite3_stmt *s, int col, void (*text)(FILE *, const char *),
                     const char *null_text)
{
    char buf[40];
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
        fprintf(f, "%lld", (long long)sqlite3_column_int64(s, col));
        break;
    case SQLITE_FLOAT:
        fmt_real(buf, sizeof buf, sqlite3_column_double(s, col));
        fputs(buf, f);
        break;
    case SQLITE_TEXT:
        text(f, (const char *)sqlite3_column_text(s, col));
        break;
    default:
        fputs(null_text, f);
        break;
    }
}

static void csv_cell(FILE *f, sqlite3_stmt *s, int col)
{
    put_cell(f, s, col, csv_text, ""); /* NULL: an empty field */
}

static void json_cell(FILE *f, sqlite3_stmt *s, int col)
{
    put_cell(f, s, col, json_str, "null");
}

/* The comma before every item of a JSON list but the first. */
static void json_sep(FILE *f, int *first)
{
    if (!*first)
        fputc(',', f);
    *first = 0;
}

/* "name":value for columns [from, ncol) of the current row. */
static void json_members(FILE *f, sqlite3_stmt *s, int from, int *first)
{
    for (int i = from; i < sqlite3_column_count(s); i++) {
        json_sep(f, first);
        json_str(f, sqlite3_column_name(s, i));
        fputc(':', f);
        json_cell(f, s, i);
    }
}

/* A list of names (phase or counter columns of the CSV). */
typedef struct name_list {
    char **name;
    int n;
} name_list;

static void name_list_free(name_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->name[i]);
    free(l->name);
}

static int name_list_find(const name_list *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->name[i], name) == 0)
            return i;
    return -1;
}

static int names_of(store *st, const char *sql, int64_t run_id, name_list *out)
{
    sqlite3_stmt *s;
    memset(out, 0, sizeof *out);
    if (store_prepare(st, sql, &s, "exporting runs"))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        out->name = xrealloc(out->name, sizeof *out->name * (unsigned long)(out->n + 1));
        out->name[out->n++] = xstrdup((const char *)sqlite3_column_text(s, 0));
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : store_fail(st, "exporting runs");
}

/* Ready a prepared detail statement for the rows of another id. */
static void rebind(sqlite3_stmt *s, int64_t id)
{
    sqlite3_reset(s);
    sqlite3_bind_int64(s, 1, id);
}

/* Per-run detail statements of an export, prepared once. */
typedef struct export_ctx {
    store *st;
    FILE *f;
    sqlite3_stmt *phases, *counters, *cmps, *bins, *sides, *bbins;
    name_list phase_names, counter_names;
} export_ctx;

/* Values of a run's phases or counters placed under the CSV's columns. */
static int csv_detail(export_ctx *x, sqlite3_stmt *s, int64_t run_id, const name_list *cols)
{
    char **cell = xcalloc((unsigned long)cols->n + 1, sizeof *cell);
    rebind(s, run_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        int k = name_list_find(cols, (const char *)sqlite3_column_text(s, 0));
        if (k >= 0 && sqlite3_column_type(s, 1) != SQLITE_NULL) {
            char buf[40];
            fmt_real(buf, sizeof buf, sqlite3_column_double(s, 1));
            free(cell[k]);
            cell[k] = xstrdup(buf);
        }
    }
    for (int k = 0; k < cols->n; k++) {
        fputc(',', x->f);
        if (cell[k])
            fputs(cell[k], x->f);
        free(cell[k]);
    }
    free(cell);
    return rc == SQLITE_DONE ? 0 : store_fail(x->st, "exporting runs");
}

static int csv_run(export_ctx *x, sqlite3_stmt *run)
{
    int ncol = sqlite3_column_count(run);
    for (int i = 0; i < ncol; i++) {
        if (i)
            fputc(',', x->f);
        csv_cell(x->f, run, i);
    }
    int64_t id = sqlite3_column_int64(run, 0);
    int rc = csv_detail(x, x->phases, id, &x->phase_names);
    if (!rc)
        rc = csv_detail(x, x->counters, id, &x->counter_names);
    fputc('\n', x->f);
    return rc;
}

/* Header cells PREFIX.NAME, one per name. */
static void csv_names(FILE *f, const char *prefix, const name_list *l)
{
    char buf[300];
    for (int k = 0; k < l->n; k++) {
        snprintf(buf, sizeof buf, "%s.%s", prefix, l->name[k]);
        fputc(',', f);
        csv_text(f, buf);
    }
}

static void csv_header(export_ctx *x, sqlite3_stmt *run)
{
    for (int i = 0; i < sqlite3_column_count(run); i++) {
        if (i)
            fputc(',', x->f);
        csv_text(x->f, sqlite3_column_name(run, i));
    }
    csv_names(x->f, "phase", &x->phase_names);
    csv_names(x->f, "counter", &x->counter_names);
    fputc('\n', x->f);
}

/* A comparison's bins of one side as a JSON array. */
static int json_bins(export_ctx *x, sqlite3_stmt *bins, int64_t cid)
{
    FILE *f = x->f;
    rebind(bins, cid);
    int brc, firstb = 1;
    fputc('[', f);
    while ((brc = sqlite3_step(bins)) == SQLITE_ROW) {
        json_sep(f, &firstb);
        fputc('{', f);
        int first = 1;
        json_members(f, bins, 0, &first);
        fputc('}', f);
    }
    fputc(']', f);
    return brc == SQLITE_DONE ? 0 : store_fail(x->st, "exporting runs");
}

static int json_run(export_ctx *x, sqlite3_stmt *run)
{
    FILE *f = x->f;
    int64_t id = sqlite3_column_int64(run, 0);
    int first = 1, rc;
    fputc('{', f);
    json_members(f, run, 0, &first);

    fputs(",\"phases\":{", f);
    rebind(x->phases, id);
    first = 1;
    while ((rc = sqlite3_step(x->phases)) == SQLITE_ROW) {
        json_sep(f, &first);
        json_str(f, (const char *)sqlite3_column_text(x->phases, 0));
        fputc(':', f);
        json_cell(f, x->phases, 1);
    }
    if (rc != SQLITE_DONE)
        return store_fail(x->st, "exporting runs");

    fputs("},\"counters\":{", f);
    rebind(x->counters, id);
    first = 1;
    while ((rc = sqlite3_step(x->counters)) == SQLITE_ROW) {
        json_sep(f, &first);
        json_str(f, (const char *)sqlite3_column_text(x->counters, 0));
        fputs(":{\"value\":", f);
        json_cell(f, x->counters, 1);
        fputs(",\"unit\":", f);
        json_cell(f, x->counters, 2);
        fputc('}', f);
    }
    if (rc != SQLITE_DONE)
        return store_fail(x->st, "exporting runs");

    fputs("},\"comparisons\":[", f);
    rebind(x->cmps, id);
    int firstc = 1;
    while ((rc = sqlite3_step(x->cmps)) == SQLITE_ROW) {
        json_sep(f, &firstc);
        fputc('{', f);
        first = 1;
        json_members(f, x->cmps, 0, &first);
        int64_t cid = sqlite3_column_int64(x->cmps, 1);
        fputs(",\"histogram\":", f);
        if (json_bins(x, x->bins, cid))
            return TCJ_ESTORE;
        /* B judged against a reference other than itself */
        rebind(x->sides, cid);
        int src = sqlite3_step(x->sides);
        if (src == SQLITE_ROW) {
            fputs(",\"b_accuracy\":{", f);
            first = 1;
            json_members(f, x->sides, 0, &first);
            fputs(",\"histogram\":", f);
            if (json_bins(x, x->bbins, cid))
                return TCJ_ESTORE;
            fputc('}', f);
        } else if (src != SQLITE_DONE) {
            return store_fail(x->st, "exporting runs");
        }
        fputc('}', f);
    }
    if (rc != SQLITE_DONE)
        return store_fail(x->st, "exporting runs");
    fputs("]}", f);
    return 0;
}

static int export_prepare(export_ctx *x)
{
    static const char *const sql[] = {
        "SELECT name, seconds FROM run_phases WHERE run_id = ?1 ORDER BY seq",
        "SELECT name, value, unit FROM counters WHERE run_id = ?1 ORDER BY name",
        /* id second: json_run reads it to find the histogram */
        "SELECT " CMP_ROLE " AS role, c.* FROM comparisons c WHERE " CMP_OF_RUN " ORDER BY c.id",
        "SELECT bin, lo, hi, count FROM histogram_bins WHERE comparison_id = ?1 AND side = 'a' "
        "ORDER BY bin",
        "SELECT engine, run_id, overlap, err_mean, err_std, err_min, err_max, both, "
        "only_engine, only_ref, only_engine_rel_max, only_ref_rel_max FROM comparison_sides "
        "WHERE comparison_id = ?1 AND side = 'b'",
        "SELECT bin, lo, hi, count FROM histogram_bins WHERE comparison_id = ?1 AND side = 'b' "
        "ORDER BY bin",
    };
    sqlite3_stmt **dst[] = {&x->phases, &x->counters, &x->cmps, &x->bins, &x->sides, &x->bbins};
    for (int k = 0; k < 6; k++)
        if (store_prepare(x->st, sql[k], dst[k], "exporting runs"))
            return TCJ_ESTORE;
    return 0;
}

int store_export(store *st, int64_t run_id, const char *format, const char *path)
{
    int csv = format && strcmp(format, "csv") == 0;
    if (!csv && !(format && strcmp(format, "json") == 0))
        return err_set(TCJ_EINVAL, "export format '%s': expected csv or json",
                       format ? format : "");
    if (run_id >= 0) {
        int rc = run_exists(st, run_id, "exporting runs");
        if (rc)
            return rc;
    }

    export_ctx x = {.st = st};
    sqlite3_stmt *run = NULL;
    int rc = export_prepare(&x);
    if (!rc && csv) {
        rc = names_of(st,
                      "SELECT name FROM run_phases WHERE ?1 < 0 OR run_id = ?1 GROUP BY name "
                      "ORDER BY min(seq), name",
                      run_id, &x.phase_names);
        if (!rc)
            rc = names_of(st,
                          "SELECT DISTINCT name FROM counters WHERE ?1 < 0 OR run_id = ?1 "
                          "ORDER BY name",
                          run_id, &x.counter_names);
    }
    if (!rc)
        rc = store_prepare(st, "SELECT " RUN_SELECT " WHERE ?1 < 0 OR r.id = ?1 ORDER BY r.id",
                           &run, "exporting runs");
    if (!rc) {
        sqlite3_bind_int64(run, 1, run_id);
        x.f = fopen(path, "w");
        if (!x.f)
            rc = err_set(TCJ_EIO, "%s: cannot write: %s", path, strerror(errno));
    }
    if (!rc) {
        if (csv)
            csv_header(&x, run);
        else
            fputs("[\n", x.f);
        int src = SQLITE_DONE, nrow = 0;
        while (!rc && (src = sqlite3_step(run)) == SQLITE_ROW) {
            if (!csv && nrow)
                fputs(",\n", x.f);
            rc = csv ? csv_run(&x, run) : json_run(&x, run);
            nrow++;
        }
        if (!rc && src != SQLITE_DONE)
            rc = store_fail(st, "exporting runs");
        if (!csv)
            fputs(nrow ? "\n]\n" : "]\n", x.f);
        int werr = ferror(x.f);
        if (fclose(x.f) != 0 || werr) {
            if (!rc)
                rc = err_set(TCJ_EIO, "%s: write failed: %s", path, strerror(errno));
        }
    }
    sqlite3_finalize(run);
    sqlite3_finalize(x.phases);
    sqlite3_finalize(x.counters);
    sqlite3_finalize(x.cmps);
    sqlite3_finalize(x.bins);
    sqlite3_finalize(x.sides);
    sqlite3_finalize(x.bbins);
    name_list_free(&x.phase_names);
    name_list_free(&x.counter_names);
    return rc;
}
