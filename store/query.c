/* Reading the session log: rows for `history`, `runs` and `show run N`, and
 * `export` of runs (and of k-distance curves and precision labs) as CSV
 * (RFC 4180 quoting) or JSON (RFC 8259 strings). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ofile.h"
#include "json.h"
#include "lab_out.h"
#include "perpoint_out.h"
#include "store_int.h"

/* Step s to the end, handing each row to fn as text; finalizes s. *stopped
 * (may be NULL) says whether fn asked to stop. */
static int rows_stop(store *st, sqlite3_stmt *s, store_row_fn fn, void *ctx, const char *what,
                     int *stopped)
{
    int ncol = sqlite3_column_count(s);
    const char **names = xcalloc((unsigned long)ncol + 1, sizeof *names);
    const char **vals = xcalloc((unsigned long)ncol + 1, sizeof *vals);
    char *types = xcalloc((unsigned long)ncol + 1, 1);
    char(*reals)[JSON_NUM_MAX] = xcalloc((unsigned long)ncol + 1, sizeof *reals);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        /* Names are read per row: a re-prepared statement invalidates them. */
        for (int i = 0; i < ncol; i++) {
            names[i] = sqlite3_column_name(s, i);
            switch (sqlite3_column_type(s, i)) {
            case SQLITE_INTEGER:
                types[i] = 'i';
                break;
            case SQLITE_FLOAT:
                types[i] = 'r';
                break;
            case SQLITE_NULL:
                types[i] = 'n';
                break;
            case SQLITE_BLOB:
                types[i] = 'b';
                break;
            default:
                types[i] = 't';
            }
            /* SQLite's own text of a real keeps 15 digits; the writer's
             * formatter keeps the double. */
            if (types[i] == 'r') {
                json_fmt_double(reals[i], sizeof reals[i], sqlite3_column_double(s, i));
                vals[i] = reals[i];
            } else {
                vals[i] = (const char *)sqlite3_column_text(s, i);
            }
        }
        names[ncol] = types;
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
    free(types);
    free(reals);
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

static double col_real(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

int store_session_runs(store *st, int64_t session_id, int max,
                       int (*fn)(void *ctx, const store_run_brief *r), void *ctx)
{
    /* A log from before tflops_padded lacks the column: the short form. */
    static const char *const sql[2] = {
        "SELECT id, engine, eps, selectivity, seconds, pairs, status, tflops_padded FROM runs "
        "WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2",
        "SELECT id, engine, eps, selectivity, seconds, pairs, status FROM runs "
        "WHERE session_id = ?1 ORDER BY id DESC LIMIT ?2",
    };
    sqlite3_stmt *s = NULL;
    for (int k = 0; k < 2 && !s; k++)
        if (sqlite3_prepare_v2(st->db, sql[k], -1, &s, NULL) != SQLITE_OK)
            s = NULL;
    if (!s)
        return store_fail(st, "session runs");
    sqlite3_bind_int64(s, 1, session_id);
    sqlite3_bind_int64(s, 2, max);
    const int ncol = sqlite3_column_count(s);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        store_run_brief r;
        memset(&r, 0, sizeof r);
        r.id = sqlite3_column_int64(s, 0);
        const unsigned char *e = sqlite3_column_text(s, 1);
        snprintf(r.engine, sizeof r.engine, "%s", e ? (const char *)e : "");
        r.eps = col_real(s, 2);
        r.selectivity = col_real(s, 3);
        r.seconds = col_real(s, 4);
        r.pairs = (uint64_t)sqlite3_column_int64(s, 5);
        r.status = sqlite3_column_int(s, 6);
        r.tflops = ncol > 7 ? col_real(s, 7) : NAN;
        if (fn(ctx, &r)) {
            rc = SQLITE_DONE;
            break;
        }
    }
    int ret = rc == SQLITE_DONE ? 0 : store_fail(st, "session runs");
    sqlite3_finalize(s);
    return ret;
}

/* Columns named as in every JSON record (docs/JSON.md): one name per
 * quantity, whichever command shows it. */
/* TCJ_ECANCEL as SQL text: a run the user stopped is not an error. */
#define CANCELLED "-6"
_Static_assert(TCJ_ECANCEL == -6, "CANCELLED matches TCJ_ECANCEL");
#define RUN_STATUS                                                                                 \
    "CASE WHEN r.status = 0 THEN 'ok' WHEN r.status = " CANCELLED " THEN 'cancelled' ELSE "        \
    "'error' END"
#define RUN_SELECT                                                                                 \
    "r.id AS run_id, r.at, r.session_id, r.command_id, r.engine, r.precision, r.variant, "         \
    "r.mode, r.options, r.device, r.dataset_id, ds.name AS dataset, ds.path AS dataset_path, "     \
    "ds.format AS dataset_format, ds.hash AS dataset_hash, r.dtype, r.n, r.d, r.d_padded, r.eps, " \
    "r.q0, r.q1, " RUN_STATUS " AS status, r.error, r.pairs, r.selectivity, r.seconds AS time_s, " \
    "r.kernel_seconds AS kernel_s, r.tflops_padded AS tflops, r.tflops_unpadded "                  \
    "FROM runs r LEFT JOIN datasets ds ON ds.id = r.dataset_id"

/* The comparisons a run ?1 took part in (as side a, side b or the
 * reference) and its role there: a before b before ref. */
#define CMP_OF_RUN                                                                                 \
    "(c.run_ref = ?1 OR EXISTS (SELECT 1 FROM comparison_sides x WHERE x.comparison_id = c.id "    \
    "AND x.run_id = ?1))"
#define CMP_ROLE                                                                                   \
    "coalesce((SELECT min(x.side) FROM comparison_sides x WHERE x.comparison_id = c.id AND "       \
    "x.run_id = ?1), 'ref')"

int store_history(store *st, int limit, int64_t before_id, store_row_fn fn, void *ctx)
{
    const char *what = "reading the history";
    sqlite3_stmt *s;
    if (store_prepare(
            st,
            "SELECT * FROM (SELECT id AS command_id, at, CASE WHEN status IS NULL THEN "
            "'unfinished' "
            "WHEN status = 0 THEN 'ok' WHEN status = " CANCELLED " THEN 'cancelled' "
            "ELSE 'error' END AS status, line "
            "FROM commands WHERE ?2 <= 0 OR id < ?2 ORDER BY id DESC LIMIT ?1) ORDER BY command_id",
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
                      "SELECT * FROM (SELECT r.id AS run_id, r.at, r.engine, ds.name AS dataset, "
                      "r.n, r.d, r.eps, r.pairs, r.selectivity, r.seconds AS time_s, "
                      "r.tflops_padded AS tflops, " RUN_STATUS " AS status "
                      "FROM runs r LEFT JOIN datasets ds ON ds.id = r.dataset_id "
                      "ORDER BY r.id DESC LIMIT ?1) ORDER BY run_id",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int(s, 1, limit > 0 ? limit : -1);
    return rows_to(st, s, fn, ctx, what);
}

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
        "SELECT 'comparison' AS section, " CMP_ROLE " AS role, c.id AS comparison_id, c.eps, "
        "c.ref_engine, c.run_ref, c.at FROM comparisons c WHERE " CMP_OF_RUN " ORDER BY c.id",
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
        "LEFT JOIN comparison_sides sa ON sa.comparison_id = c.id AND sa.side = 'a' "
        "LEFT JOIN runs r ON r.id = sa.run_id LEFT JOIN datasets ds ON ds.id = r.dataset_id "
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

/* ---- export and the run object of show ---- */

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

/* One CSV field of the current row: numbers as they read back, text
 * quoted, NULL as an empty field. */
static void csv_cell(FILE *f, sqlite3_stmt *s, int col)
{
    char buf[JSON_NUM_MAX];
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
        fprintf(f, "%lld", (long long)sqlite3_column_int64(s, col));
        break;
    case SQLITE_FLOAT:
        json_fmt_double(buf, sizeof buf, sqlite3_column_double(s, col));
        fputs(buf, f);
        break;
    case SQLITE_TEXT:
        csv_text(f, (const char *)sqlite3_column_text(s, col));
        break;
    default:
        break;
    }
}

/* One column of the current row as a JSON member (key NULL in arrays). */
static void json_cell(json_w *w, const char *key, sqlite3_stmt *s, int col)
{
    switch (sqlite3_column_type(s, col)) {
    case SQLITE_INTEGER:
        json_w_int(w, key, sqlite3_column_int64(s, col));
        break;
    case SQLITE_FLOAT:
        json_w_dbl(w, key, sqlite3_column_double(s, col));
        break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: {
        const char *t = (const char *)sqlite3_column_text(s, col);
        json_w_strn(w, key, t ? t : "", (size_t)sqlite3_column_bytes(s, col));
        break;
    }
    default:
        json_w_null(w, key);
        break;
    }
}

/* "name":value for columns [from, to) of the current row (to < 0: all). */
static void json_members(json_w *w, sqlite3_stmt *s, int from, int to)
{
    int n = sqlite3_column_count(s);
    if (to < 0 || to > n)
        to = n;
    for (int i = from; i < to; i++)
        json_cell(w, sqlite3_column_name(s, i), s, i);
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
    sqlite3_stmt *phases, *counters, *cmps, *sides, *bins;
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
            char buf[JSON_NUM_MAX];
            json_fmt_double(buf, sizeof buf, sqlite3_column_double(s, 1));
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

/* One side's histogram bins as the member "histogram". */
static int json_bins(export_ctx *x, json_w *w, int64_t cid, const char *side)
{
    sqlite3_stmt *b = x->bins;
    rebind(b, cid);
    sqlite3_bind_text(b, 2, side, -1, SQLITE_TRANSIENT);
    json_w_arr(w, "histogram");
    int rc;
    while ((rc = sqlite3_step(b)) == SQLITE_ROW) {
        json_w_obj(w, NULL);
        json_members(w, b, 0, -1);
        json_w_close(w);
    }
    json_w_close(w);
    return rc == SQLITE_DONE ? 0 : store_fail(x->st, "exporting runs");
}

/* Sides a and b of comparison cid, each {engine, run_id, accuracy}; the
 * accuracy is null for a side that is the reference itself. Columns of
 * x->sides: side, engine, run_id, judged, then the accuracy. */
static int json_sides(export_ctx *x, json_w *w, int64_t cid)
{
    rebind(x->sides, cid);
    int rc;
    while ((rc = sqlite3_step(x->sides)) == SQLITE_ROW) {
        const char *side = (const char *)sqlite3_column_text(x->sides, 0);
        char name[2] = {side && *side == 'b' ? 'b' : 'a', 0};
        json_w_obj(w, name);
        json_members(w, x->sides, 1, 3);
        if (sqlite3_column_int(x->sides, 3)) {
            json_w_obj(w, "accuracy");
            json_members(w, x->sides, 4, -1);
            if (json_bins(x, w, cid, name))
                return TCJ_ESTORE;
            json_w_close(w);
        } else {
            json_w_null(w, "accuracy");
        }
        json_w_close(w);
    }
    return rc == SQLITE_DONE ? 0 : store_fail(x->st, "exporting runs");
}

/* The members of one run object: the run's columns, then phases, counters
 * and comparisons. Columns of the comparisons statement: role, id, eps,
 * ref_engine, run_ref, at. */
static int json_run(export_ctx *x, json_w *w, sqlite3_stmt *run)
{
    int64_t id = sqlite3_column_int64(run, 0);
    int rc;
    json_members(w, run, 0, -1);

    json_w_obj(w, "phases");
    rebind(x->phases, id);
    while ((rc = sqlite3_step(x->phases)) == SQLITE_ROW)
        json_cell(w, (const char *)sqlite3_column_text(x->phases, 0), x->phases, 1);
    json_w_close(w);
    if (rc != SQLITE_DONE)
        return store_fail(x->st, "exporting runs");

    /* Counters as in the run record: values by name, units beside them. */
    const char *part[2] = {"counters", "counter_units"};
    for (int k = 0; k < 2; k++) {
        json_w_obj(w, part[k]);
        rebind(x->counters, id);
        while ((rc = sqlite3_step(x->counters)) == SQLITE_ROW)
            json_cell(w, (const char *)sqlite3_column_text(x->counters, 0), x->counters, 1 + k);
        json_w_close(w);
        if (rc != SQLITE_DONE)
            return store_fail(x->st, "exporting runs");
    }

    /* A perpoint run's summary, as the live run record has it. */
    perpoint_summary *pp = xmalloc(sizeof *pp);
    int found;
    rc = store_perpoint_find(x->st, id, pp, &found);
    if (!rc && found)
        perpoint_json(w, pp);
    free(pp);
    if (rc)
        return rc;

    json_w_arr(w, "comparisons");
    rebind(x->cmps, id);
    while ((rc = sqlite3_step(x->cmps)) == SQLITE_ROW) {
        int64_t cid = sqlite3_column_int64(x->cmps, 1);
        json_w_obj(w, NULL);
        json_cell(w, "comparison_id", x->cmps, 1);
        json_cell(w, "role", x->cmps, 0);
        json_cell(w, "eps", x->cmps, 2);
        json_cell(w, "at", x->cmps, 5);
        json_w_obj(w, "ref");
        json_cell(w, "engine", x->cmps, 3);
        json_cell(w, "run_id", x->cmps, 4);
        json_w_null(w, "accuracy");
        json_w_close(w);
        if (json_sides(x, w, cid))
            return TCJ_ESTORE;
        json_w_close(w);
    }
    json_w_close(w);
    if (rc != SQLITE_DONE)
        return store_fail(x->st, "exporting runs");
    return 0;
}

static int export_prepare(export_ctx *x)
{
    static const char *const sql[] = {
        "SELECT name, seconds FROM run_phases WHERE run_id = ?1 ORDER BY seq",
        "SELECT name, value, unit FROM counters WHERE run_id = ?1 ORDER BY name",
        /* id second: json_run reads it to find the sides */
        "SELECT " CMP_ROLE " AS role, c.id, c.eps, c.ref_engine, c.run_ref, c.at "
        "FROM comparisons c WHERE " CMP_OF_RUN " ORDER BY c.id",
        /* A side is judged when its accuracy was stored (overlap is never
         * NULL for a judged side: it is 1 over an empty set). */
        "SELECT side, engine, run_id, overlap IS NOT NULL AS judged, overlap, both, "
        "only_engine, only_ref, err_mean, err_std, err_min, err_max, only_engine_rel_max, "
        "only_ref_rel_max FROM comparison_sides WHERE comparison_id = ?1 ORDER BY side",
        "SELECT lo, hi, count FROM histogram_bins WHERE comparison_id = ?1 AND side = ?2 "
        "ORDER BY bin",
    };
    sqlite3_stmt **dst[] = {&x->phases, &x->counters, &x->cmps, &x->sides, &x->bins};
    for (size_t k = 0; k < sizeof dst / sizeof dst[0]; k++)
        if (store_prepare(x->st, sql[k], dst[k], "exporting runs"))
            return TCJ_ESTORE;
    return 0;
}

static void export_finish(export_ctx *x)
{
    sqlite3_finalize(x->phases);
    sqlite3_finalize(x->counters);
    sqlite3_finalize(x->cmps);
    sqlite3_finalize(x->sides);
    sqlite3_finalize(x->bins);
    name_list_free(&x->phase_names);
    name_list_free(&x->counter_names);
}

int store_run_json(store *st, int64_t run_id, json_w *w)
{
    const char *what = "showing a run";
    int rc = run_exists(st, run_id, what);
    if (rc)
        return rc;
    export_ctx x = {.st = st};
    sqlite3_stmt *run = NULL;
    rc = export_prepare(&x);
    if (!rc)
        rc = store_prepare(st, "SELECT " RUN_SELECT " WHERE r.id = ?1", &run, what);
    if (!rc) {
        sqlite3_bind_int64(run, 1, run_id);
        int src = sqlite3_step(run);
        if (src == SQLITE_ROW)
            rc = json_run(&x, w, run);
        else
            rc = store_fail(st, what);
    }
    sqlite3_finalize(run);
    export_finish(&x);
    return rc;
}

int store_export_f(store *st, int64_t run_id, const char *format, FILE *f, const char *path)
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
        x.f = f;
    }
    if (!rc) {
        if (csv)
            csv_header(&x, run);
        else
            fputs("[\n", x.f);
        int src = SQLITE_DONE, nrow = 0;
        while (!rc && (src = sqlite3_step(run)) == SQLITE_ROW) {
            if (csv) {
                rc = csv_run(&x, run);
            } else {
                /* One run object per line. */
                json_w w;
                json_w_init(&w, '{');
                rc = json_run(&x, &w, run);
                char *text = json_w_finish(&w);
                if (!rc)
                    fprintf(x.f, "%s%s", nrow ? ",\n" : "", text);
                free(text);
            }
            nrow++;
        }
        if (!rc && src != SQLITE_DONE)
            rc = store_fail(st, "exporting runs");
        if (!csv)
            fputs(nrow ? "\n]\n" : "]\n", x.f);
        if (ferror(x.f) && !rc)
            rc = err_set(TCJ_EIO, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
    }
    sqlite3_finalize(run);
    export_finish(&x);
    return rc;
}

/* ---- k-distance curves ---- */

int store_kdist_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path)
{
    const char *what = "exporting a k-distance curve";
    int csv = format && strcmp(format, "csv") == 0;
    if (!csv && !(format && strcmp(format, "json") == 0))
        return err_set(TCJ_EINVAL, "export format '%s': expected csv or json",
                       format ? format : "");
    kdist_curve probe;
    int rc = store_kdist_get(st, id, &probe, NULL, 0); /* exists, and the tables too */
    if (rc)
        return rc;
    sqlite3_stmt *k = NULL, *p = NULL;
    if (store_prepare(st,
                      "SELECT k.id AS kdist_id, k.at, k.engine, k.precision, d.name AS dataset, "
                      "d.hash AS dataset_hash, k.k, k.k + 1 AS minpts, k.n, k.npoints, "
                      "k.knee_rank, k.knee_dist, k.knee_method, k.eps, k.seconds, k.device, "
                      "k.variant FROM kdists k LEFT JOIN datasets d ON d.id = k.dataset_id "
                      "WHERE k.id = ?1 OR (?1 <= 0 AND k.id = (SELECT max(id) FROM kdists))",
                      &k, what) ||
        store_prepare(st,
                      "SELECT seq, rank, dist FROM kdist_points WHERE kdist_id = ?1 "
                      "ORDER BY seq",
                      &p, what)) {
        sqlite3_finalize(k);
        return TCJ_ESTORE;
    }
    sqlite3_bind_int64(k, 1, id);
    if (sqlite3_step(k) != SQLITE_ROW)
        rc = store_fail(st, what);
    if (!rc) {
        int nk = sqlite3_column_count(k), np = sqlite3_column_count(p);
        json_w w;
        json_w_init(&w, '{');
        sqlite3_bind_int64(p, 1, sqlite3_column_int64(k, 0));
        if (csv) {
            for (int i = 0; i < nk + np; i++) {
                if (i)
                    fputc(',', f);
                csv_text(f, i < nk ? sqlite3_column_name(k, i) : sqlite3_column_name(p, i - nk));
            }
            fputc('\n', f);
        } else {
            json_members(&w, k, 0, -1);
            json_w_arr(&w, "points");
        }
        int src, nrow = 0;
        while ((src = sqlite3_step(p)) == SQLITE_ROW) {
            if (csv) {
                for (int i = 0; i < nk + np; i++) {
                    if (i)
                        fputc(',', f);
                    csv_cell(f, i < nk ? k : p, i < nk ? i : i - nk);
                }
                fputc('\n', f);
            } else {
                json_w_obj(&w, NULL);
                json_members(&w, p, 0, -1);
                json_w_close(&w);
            }
            nrow++;
        }
        if (src != SQLITE_DONE)
            rc = store_fail(st, what);
        if (!csv) {
            char *txt = json_w_finish(&w);
            fprintf(f, "%s\n", txt ? txt : "{}");
            free(txt);
        } else {
            json_w_free(&w);
        }
        if (ferror(f) && !rc)
            rc = err_set(TCJ_EIO, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
    }
    sqlite3_finalize(k);
    sqlite3_finalize(p);
    return rc;
}

/* ---- precision labs ---- */

/* One cell of a lab as a CSV field: text quoted, numbers as they read
 * back, null empty. */
static void csv_lab_cell(FILE *f, const lab_cell *c)
{
    char buf[JSON_NUM_MAX];
    switch (c->type) {
    case 's':
        if (c->s)
            csv_text(f, c->s);
        break;
    case 'i':
        fprintf(f, "%lld", (long long)c->i);
        break;
    case 'n':
        if (isfinite(c->d)) {
            json_fmt_double(buf, sizeof buf, c->d);
            fputs(buf, f);
        }
        break;
    default:
        break;
    }
}

int store_lab_export_f(store *st, int64_t lab_id, const char *format, FILE *f, const char *path)
{
    int csv = format && strcmp(format, "csv") == 0;
    if (!csv && !(format && strcmp(format, "json") == 0))
        return err_set(TCJ_EINVAL, "export format '%s': expected csv or json",
                       format ? format : "");
    lab_result *r = xmalloc(sizeof *r);
    int rc = store_lab_get(st, lab_id, r);
    if (!rc) {
        lab_cell head[LAB_MAX_CELLS], row[LAB_MAX_CELLS];
        char hbuf[1024], rbuf[1024];
        size_t nh = lab_cells(r, -1, head, hbuf, sizeof hbuf);
        if (csv) {
            /* The lab's columns, then the row's, on every line. */
            size_t nr = lab_cells(r, 0, row, rbuf, sizeof rbuf);
            for (size_t k = 0; k < nh + nr; k++) {
                if (k)
                    fputc(',', f);
                csv_text(f, k < nh ? head[k].name : row[k - nh].name);
            }
            fputc('\n', f);
            for (int i = 0; i < r->nrow; i++) {
                nr = lab_cells(r, i, row, rbuf, sizeof rbuf);
                for (size_t k = 0; k < nh + nr; k++) {
                    if (k)
                        fputc(',', f);
                    csv_lab_cell(f, k < nh ? &head[k] : &row[k - nh]);
                }
                fputc('\n', f);
            }
        } else {
            json_w w;
            json_w_init(&w, '{');
            lab_cells_json(&w, head, nh);
            json_w_arr(&w, "formats");
            for (int i = 0; i < r->nrow; i++) {
                json_w_obj(&w, NULL);
                lab_cells_json(&w, row, lab_cells(r, i, row, rbuf, sizeof rbuf));
                json_w_close(&w);
            }
            char *txt = json_w_finish(&w);
            fprintf(f, "%s\n", txt ? txt : "{}");
            free(txt);
        }
        if (ferror(f) && !rc)
            rc = err_set(TCJ_EIO, "%s: write failed: %s", path, strerror(errno ? errno : EIO));
    }
    free(r);
    return rc;
}

/* ---- exports to a file by name: through src/ofile.h like every file
 * tcjoin writes (a temporary file renamed into place, a link replaced and
 * never written through, the log's own files refused); the name is the
 * caller's choice, so an existing file is replaced. ---- */

typedef int (*export_fn)(store *st, int64_t id, const char *format, FILE *f, const char *path);

static int export_by_name(store *st, export_fn fn, int64_t id, const char *format, const char *path)
{
    ofile *of;
    int rc = ofile_open(path, 1, st->path, &of);
    if (rc)
        return rc;
    FILE *f = ofile_stream(of);
    if (!f) {
        ofile_abort(of);
        return TCJ_EIO;
    }
    if ((rc = fn(st, id, format, f, path))) {
        rc = ofile_failure(of, rc);
        ofile_abort(of);
        return rc;
    }
    return ofile_commit(of);
}

int store_export(store *st, int64_t run_id, const char *format, const char *path)
{
    return export_by_name(st, store_export_f, run_id, format, path);
}

int store_kdist_export(store *st, int64_t id, const char *format, const char *path)
{
    return export_by_name(st, store_kdist_export_f, id, format, path);
}

int store_lab_export(store *st, int64_t lab_id, const char *format, const char *path)
{
    return export_by_name(st, store_lab_export_f, lab_id, format, path);
}

/* ---- runs that can stand for a new one (compare's reuse) ---- */

int64_t store_reusable_run(store *st, const store_reuse_key *key, store_run_summary *out)
{
    const char *what = "looking up a run to reuse";
    memset(out, 0, sizeof *out);
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)key->dataset_hash);
    sqlite3_stmt *s;
    /* The newest ok count run over all rows of the same content, eps,
     * engine and options, made on this session's host. */
    if (store_prepare(st,
                      "SELECT r.id, r.at, r.pairs, r.seconds, r.kernel_seconds, r.d_padded, "
                      "r.precision, r.variant, r.device FROM runs r "
                      "JOIN datasets d ON d.id = r.dataset_id "
                      "LEFT JOIN sessions se ON se.id = r.session_id "
                      "WHERE d.hash = ?1 AND r.eps = ?2 AND r.engine = ?3 AND r.options = ?4 "
                      "AND r.mode = 'count' AND r.status = 0 AND r.q0 = 0 AND r.q1 = ?5 "
                      "AND r.n = ?5 AND r.d = ?6 AND r.pairs IS NOT NULL "
                      "AND se.host IS (SELECT host FROM sessions WHERE id = ?7) "
                      "ORDER BY r.id DESC LIMIT 1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_text(s, 1, hash, -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(s, 2, key->eps);
    store_bind_text(s, 3, key->engine);
    store_bind_text(s, 4, key->options);
    store_bind_u64(s, 5, key->n);
    store_bind_u64(s, 6, key->d);
    sqlite3_bind_int64(s, 7, key->session_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE ? 0 : store_fail(st, what);
    }
    out->id = sqlite3_column_int64(s, 0);
    const char *t;
#define COPY_COL(dst, col)                                                                         \
    snprintf(dst, sizeof dst, "%s", (t = (const char *)sqlite3_column_text(s, col)) ? t : "")
    COPY_COL(out->at, 1);
    out->pairs = (uint64_t)sqlite3_column_int64(s, 2);
    out->seconds = sqlite3_column_double(s, 3);
    out->kernel_seconds = sqlite3_column_double(s, 4);
    out->d_padded = (size_t)sqlite3_column_int64(s, 5);
    COPY_COL(out->precision, 6);
    COPY_COL(out->variant, 7);
    COPY_COL(out->device, 8);
    sqlite3_finalize(s);
    if (store_prepare(st, "SELECT name, seconds FROM run_phases WHERE run_id = ?1 ORDER BY seq", &s,
                      what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, out->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out->nphase < STORE_MAX_PHASES) {
        COPY_COL(out->phase_name[out->nphase], 0);
        out->phase_seconds[out->nphase++] = sqlite3_column_double(s, 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_fail(st, what);
    if (store_prepare(st, "SELECT name, value, unit FROM counters WHERE run_id = ?1 ORDER BY rowid",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, out->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out->nmetric < JOIN_MAX_METRICS) {
        join_metric *m = &out->metric[out->nmetric++];
        COPY_COL(m->name, 0);
        m->value = sqlite3_column_type(s, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(s, 1);
        COPY_COL(m->unit, 2);
    }
#undef COPY_COL
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_fail(st, what);
    return out->id;
}
