/* DBSCAN results in the session log (schema version 7: dbscans,
 * dbscan_sizes): written in one transaction, read back for `show dbscan`,
 * exported as the "dbscan" record or CSV. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_int.h"

static void flags_text(const dbscan_result *r, char *buf, size_t size)
{
    unsigned f = dbscan_flags(r);
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < DBSCAN_NFLAGS && len < size; k++)
        if (f & (1u << k))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? "," : "",
                                    dbscan_flag_names[k]);
}

static void largest_text(const dbscan_result *r, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (size_t k = 0; k < r->ntop && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%zu", k ? " " : "", r->top[k]);
}

static int db_insert(store *st, const store_dbscan_rec *rec, const int64_t *run_id, int64_t *id)
{
    const char *what = "storing the dbscan result";
    const dbscan_view *v = rec->view;
    const dbscan_result *r = v->res;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO dbscans(session_id, command_id, dataset_id, at, engine, "
                      "precision, eps, minpts, n, d, clusters, core, border, noise, largest, "
                      "seconds, core_seconds, union_seconds, border_seconds, run_core, run_union, "
                      "run_border, flags, labels) VALUES(?1, ?2, ?3, " STORE_NOW
                      ", ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
                      "?20, ?21, ?22, ?23)",
                      &s, what))
        return TCJ_ESTORE;
    char largest[256], flags[128];
    largest_text(r, largest, sizeof largest);
    flags_text(r, flags, sizeof flags);
    store_bind_id(s, 1, rec->session_id);
    store_bind_id(s, 2, rec->command_id);
    store_bind_id(s, 3, rec->dataset_id);
    store_bind_text(s, 4, v->engine);
    store_bind_text(s, 5, v->precision);
    sqlite3_bind_double(s, 6, v->eps);
    store_bind_u64(s, 7, v->minpts);
    store_bind_u64(s, 8, r->n);
    store_bind_u64(s, 9, v->d);
    store_bind_u64(s, 10, r->clusters);
    store_bind_u64(s, 11, r->core);
    store_bind_u64(s, 12, r->border);
    store_bind_u64(s, 13, r->noise);
    store_bind_text(s, 14, largest);
    store_bind_real(s, 15, r->seconds);
    for (int k = 0; k < DBSCAN_NPASS; k++) {
        store_bind_real(s, 16 + k, r->pass_seconds[k]);
        store_bind_id(s, 19 + k, run_id[k]);
    }
    store_bind_text(s, 22, flags);
    store_bind_text(s, 23, v->labels_path);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    *id = sqlite3_last_insert_rowid(st->db);
    if (store_prepare(st,
                      "INSERT INTO dbscan_sizes(dbscan_id, lo, hi, clusters) "
                      "VALUES(?1, ?2, ?3, ?4)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (int b = 0; b < DBSCAN_SIZE_BINS && !rc; b++) {
        if (!r->size_hist[b])
            continue;
        sqlite3_bind_int64(s, 1, *id);
        store_bind_u64(s, 2, (uint64_t)1 << b);
        store_bind_u64(s, 3, (uint64_t)1 << (b + 1));
        store_bind_u64(s, 4, r->size_hist[b]);
        rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_fail(st, what);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

/* The passes' runs, then the dbscans row that names them, in the caller's
 * transaction. */
static int db_insert_all(store *st, const store_dbscan_rec *r, int64_t *run_id, int64_t *id)
{
    int rc = 0;
    for (int k = 0; k < DBSCAN_NPASS && !rc; k++) {
        run_id[k] = r->view->run_id[k];
        if (r->pass[k])
            rc = store_run_insert(st, r->pass[k], &run_id[k]);
    }
    return rc ? rc : db_insert(st, r, run_id, id);
}

int64_t store_dbscan(store *st, const store_dbscan_rec *r)
{
    if (store_begin(st))
        return TCJ_ESTORE;
    int64_t id = 0, run_id[DBSCAN_NPASS];
    const int rc = db_insert_all(st, r, run_id, &id); /* before id is read */
    id = store_end_insert(st, rc, id);
    if (id > 0 && r->run_id)
        memcpy(r->run_id, run_id, sizeof run_id);
    return id;
}

int store_dbscan_get(store *st, int64_t id, store_dbscan_row *out)
{
    const char *what = "reading a dbscan result";
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT b.id, b.engine, b.precision, d.name, b.eps, b.minpts, b.n, b.d, "
                      "b.clusters, b.core, b.border, b.noise, b.largest, b.seconds, "
                      "b.core_seconds, b.union_seconds, b.border_seconds, b.run_core, "
                      "b.run_union, b.run_border, b.labels FROM dbscans b LEFT JOIN datasets d "
                      "ON d.id = b.dataset_id WHERE b.id = ?1 OR (?1 <= 0 AND b.id = (SELECT "
                      "max(id) FROM dbscans))",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return store_fail(st, what);
        return id > 0 ? err_set(TCJ_EINVAL, "no dbscan %lld in the session log", (long long)id)
                      : err_set(TCJ_EINVAL, "no dbscan result in the session log");
    }
    dbscan_view *v = &out->view;
    dbscan_result *r = &out->res;
    v->id = sqlite3_column_int64(s, 0);
    store_col_text(s, 1, out->engine, sizeof out->engine);
    store_col_text(s, 2, out->precision, sizeof out->precision);
    store_col_text(s, 3, out->dataset, sizeof out->dataset);
    v->eps = sqlite3_column_double(s, 4);
    v->minpts = (size_t)sqlite3_column_int64(s, 5);
    r->n = (size_t)sqlite3_column_int64(s, 6);
    v->d = (size_t)sqlite3_column_int64(s, 7);
    r->clusters = (size_t)sqlite3_column_int64(s, 8);
    r->core = (size_t)sqlite3_column_int64(s, 9);
    r->border = (size_t)sqlite3_column_int64(s, 10);
    r->noise = (size_t)sqlite3_column_int64(s, 11);
    const char *lg = (const char *)sqlite3_column_text(s, 12);
    for (char *p = (char *)lg, *e; p && *p && r->ntop < DBSCAN_TOP; p = e) {
        unsigned long long x = strtoull(p, &e, 10);
        if (e == p)
            break;
        r->top[r->ntop++] = (size_t)x;
    }
    r->seconds = sqlite3_column_double(s, 13);
    for (int k = 0; k < DBSCAN_NPASS; k++) {
        r->pass_seconds[k] = sqlite3_column_double(s, 14 + k);
        v->run_id[k] = sqlite3_column_int64(s, 17 + k);
        r->ran[k] = v->run_id[k] > 0;
    }
    store_col_text(s, 20, out->labels, sizeof out->labels);
    sqlite3_finalize(s);
    v->engine = out->engine;
    v->precision = out->precision;
    v->dataset = out->dataset[0] ? out->dataset : NULL;
    v->labels_path = out->labels[0] ? out->labels : NULL;
    v->res = r;
    if (store_prepare(st, "SELECT lo, clusters FROM dbscan_sizes WHERE dbscan_id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, v->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        uint64_t lo = (uint64_t)sqlite3_column_int64(s, 0);
        int b = 0;
        while (b + 1 < DBSCAN_SIZE_BINS && lo >> (b + 1))
            b++;
        r->size_hist[b] = (size_t)sqlite3_column_int64(s, 1);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return store_fail(st, what);
    return 0;
}

int store_dbscan_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path)
{
    int csv = format && strcmp(format, "csv") == 0;
    if (!csv && !(format && strcmp(format, "json") == 0))
        return err_set(TCJ_EINVAL, "export format '%s': expected csv or json",
                       format ? format : "");
    store_dbscan_row *row = xmalloc(sizeof *row);
    int rc = store_dbscan_get(st, id, row);
    if (rc) {
        free(row);
        return rc;
    }
    const dbscan_view *v = &row->view;
    const dbscan_result *r = &row->res;
    if (csv) {
        char eps[JSON_NUM_MAX], t[JSON_NUM_MAX * 4];
        json_fmt_double(eps, sizeof eps, v->eps);
        fputs("dbscan_id,engine,precision,dataset,n,d,eps,minpts,clusters,core,border,noise,"
              "time_s,core_s,union_s,border_s,run_core,run_union,run_border,size_lo,size_hi,"
              "size_clusters\n",
              f);
        int any = 0;
        for (int b = 0; b <= DBSCAN_SIZE_BINS; b++) {
            if (b < DBSCAN_SIZE_BINS && !r->size_hist[b])
                continue;
            if (b == DBSCAN_SIZE_BINS && any)
                break;
            /* Text columns are names the program chose (engine, precision)
             * or the dataset's name, quoted. */
            fprintf(f, "%lld,%s,%s,\"", (long long)v->id, v->engine, v->precision);
            for (const char *p = v->dataset ? v->dataset : ""; *p; p++)
                fputs(*p == '"' ? "\"\"" : (char[]){*p, 0}, f);
            fprintf(f, "\",%zu,%zu,%s,%zu,%zu,%zu,%zu,%zu", r->n, v->d, eps, v->minpts, r->clusters,
                    r->core, r->border, r->noise);
            size_t len = 0;
            double secs[4] = {r->seconds, r->pass_seconds[0], r->pass_seconds[1],
                              r->pass_seconds[2]};
            for (int k = 0; k < 4; k++) {
                t[len++] = ',';
                json_fmt_double(t + len, sizeof t - len, secs[k]);
                len += strlen(t + len);
            }
            fputs(t, f);
            for (int k = 0; k < DBSCAN_NPASS; k++) {
                if (v->run_id[k])
                    fprintf(f, ",%lld", (long long)v->run_id[k]);
                else
                    fputs(",", f);
            }
            if (b < DBSCAN_SIZE_BINS)
                fprintf(f, ",%llu,%llu,%zu\n", 1ULL << b, 1ULL << (b + 1), r->size_hist[b]);
            else
                fputs(",,,\n", f);
            any = 1;
        }
    } else {
        json_w w;
        json_w_init(&w, '{');
        dbscan_json(&w, v);
        char *text = json_w_finish(&w);
        fprintf(f, "%s\n", text);
        free(text);
    }
    if (fflush(f) || ferror(f))
        rc = err_set(TCJ_EIO, "%s: write failed", path);
    free(row);
    return rc;
}
