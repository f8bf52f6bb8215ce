/* The precision lab in the session log (tables labs and lab_rows, schema
 * version 5): a lab is begun once its reference ran, gets one row per
 * format as each finishes (its run and comparison already stored by the
 * caller), and is ended with the format chosen. Reading it back gives the
 * lab_result the live command printed: the numbers come from the runs,
 * counters and comparison_sides rows the lab rows point at. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "store_int.h"

int64_t store_lab_begin(store *st, const store_lab_rec *r)
{
    const char *what = "storing a precision lab";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO labs(session_id, command_id, dataset_id, eps, ref_engine, "
                      "run_ref, min_overlap, baseline, started) VALUES(?1, ?2, ?3, ?4, ?5, ?6, "
                      "?7, ?8, " STORE_NOW ")",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, r->session_id);
    store_bind_id(s, 2, r->command_id);
    store_bind_id(s, 3, r->dataset_id);
    store_bind_real(s, 4, r->eps);
    store_bind_text(s, 5, r->ref_engine);
    store_bind_id(s, 6, r->run_ref);
    store_bind_real(s, 7, r->min_overlap);
    store_bind_text(s, 8, r->baseline);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    return sqlite3_last_insert_rowid(st->db);
}

int store_lab_row(store *st, int64_t lab_id, int seq, const lab_row *row)
{
    const char *what = "storing a precision lab's row";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO lab_rows(lab_id, seq, format, bits, engine, status, reason, "
                      "run_id, comparison_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, lab_id);
    sqlite3_bind_int(s, 2, seq);
    store_bind_text(s, 3, row->format);
    sqlite3_bind_int(s, 4, row->bits);
    store_bind_text(s, 5, row->engine);
    store_bind_text(s, 6, lab_status_name(row->status));
    store_bind_text(s, 7, row->status == LAB_OK ? NULL : row->reason);
    store_bind_id(s, 8, row->run_id);
    store_bind_id(s, 9, row->comparison_id);
    return store_step_done(st, s, what);
}

int store_lab_end(store *st, int64_t lab_id, const char *chosen, const char *note)
{
    const char *what = "finishing a precision lab";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "UPDATE labs SET chosen = ?2, note = ?3, ended = " STORE_NOW " WHERE id = ?1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, lab_id);
    store_bind_text(s, 2, chosen);
    store_bind_text(s, 3, note);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    if (sqlite3_changes(st->db) == 0)
        return err_set(TCJ_EINVAL, "%s: %s: no lab with id %lld", st->path, what,
                       (long long)lab_id);
    return 0;
}

static double real_col(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

/* One lab_rows row (the columns of the rows statement below) into w. */
static void lab_row_read(sqlite3_stmt *s, lab_row *w)
{
    lab_row_init(w);
    store_col_text(s, 0, w->format, sizeof w->format);
    w->bits = sqlite3_column_int(s, 1);
    store_col_text(s, 2, w->engine, sizeof w->engine);
    char status[16];
    store_col_text(s, 3, status, sizeof status);
    w->status = lab_status_parse(status);
    store_col_text(s, 4, w->reason, sizeof w->reason);
    w->run_id = sqlite3_column_int64(s, 5);
    w->comparison_id = sqlite3_column_int64(s, 6);
    w->pairs = (uint64_t)sqlite3_column_int64(s, 7);
    w->seconds = real_col(s, 9);
    /* As the live row: the end-to-end time where a run has no kernel time. */
    w->kernel_s = sqlite3_column_type(s, 8) == SQLITE_NULL ? w->seconds : real_col(s, 8);
    w->d_padded = (size_t)sqlite3_column_int64(s, 10);
    cmp_side *sd = &w->side;
    sd->engine = NULL;
    sd->run_id = w->run_id;
    sd->judged = sqlite3_column_type(s, 11) != SQLITE_NULL;
    sd->overlap = real_col(s, 11);
    sd->both = (uint64_t)sqlite3_column_int64(s, 12);
    sd->only_engine = (uint64_t)sqlite3_column_int64(s, 13);
    sd->only_ref = (uint64_t)sqlite3_column_int64(s, 14);
    sd->err_mean = real_col(s, 15);
    sd->err_std = real_col(s, 16);
    sd->err_min = real_col(s, 17);
    sd->err_max = real_col(s, 18);
    sd->only_engine_rel_max = real_col(s, 19);
    sd->only_ref_rel_max = real_col(s, 20);
}

int store_lab_get(store *st, int64_t lab_id, lab_result *out)
{
    const char *what = "reading a precision lab";
    memset(out, 0, sizeof *out);
    out->chosen = out->closest = out->baseline_row = -1;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT l.id, l.eps, l.ref_engine, l.run_ref, l.min_overlap, l.baseline, "
                      "l.chosen, ds.name, coalesce(rr.n, ds.n), coalesce(rr.d, ds.d), rr.pairs, "
                      "coalesce(rr.kernel_seconds, rr.seconds) FROM labs l "
                      "LEFT JOIN datasets ds ON ds.id = l.dataset_id "
                      "LEFT JOIN runs rr ON rr.id = l.run_ref WHERE l.id = ?1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, lab_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE ? err_set(TCJ_EINVAL, "no lab %lld in the session log %s",
                                           (long long)lab_id, st->path)
                                 : store_fail(st, what);
    }
    char chosen[24];
    out->lab_id = sqlite3_column_int64(s, 0);
    out->eps = real_col(s, 1);
    store_col_text(s, 2, out->ref_engine, sizeof out->ref_engine);
    out->ref_run_id = sqlite3_column_int64(s, 3);
    out->min_overlap = real_col(s, 4);
    store_col_text(s, 5, out->baseline, sizeof out->baseline);
    store_col_text(s, 6, chosen, sizeof chosen);
    store_col_text(s, 7, out->dataset, sizeof out->dataset);
    out->n = (size_t)sqlite3_column_int64(s, 8);
    out->d = (size_t)sqlite3_column_int64(s, 9);
    out->ref_pairs = (uint64_t)sqlite3_column_int64(s, 10);
    out->ref_kernel_s = real_col(s, 11);
    sqlite3_finalize(s);

    sqlite3_stmt *m;
    if (store_prepare(st,
                      "SELECT lr.format, lr.bits, lr.engine, lr.status, lr.reason, lr.run_id, "
                      "lr.comparison_id, r.pairs, r.kernel_seconds, r.seconds, r.d_padded, "
                      "sd.overlap, sd.both, sd.only_engine, sd.only_ref, sd.err_mean, sd.err_std, "
                      "sd.err_min, sd.err_max, sd.only_engine_rel_max, sd.only_ref_rel_max "
                      "FROM lab_rows lr LEFT JOIN runs r ON r.id = lr.run_id "
                      "LEFT JOIN comparison_sides sd ON sd.comparison_id = lr.comparison_id "
                      "AND sd.side = 'a' WHERE lr.lab_id = ?1 ORDER BY lr.seq",
                      &s, what))
        return TCJ_ESTORE;
    if (store_prepare(st, "SELECT name, value FROM counters WHERE run_id = ?1", &m, what)) {
        sqlite3_finalize(s);
        return TCJ_ESTORE;
    }
    sqlite3_bind_int64(s, 1, lab_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out->nrow < LAB_MAX_FORMATS) {
        lab_row *w = &out->row[out->nrow++];
        lab_row_read(s, w);
        /* The transforms are the run's counters (absent: not recorded). */
        sqlite3_reset(m);
        sqlite3_bind_int64(m, 1, w->run_id);
        int mrc;
        while ((mrc = sqlite3_step(m)) == SQLITE_ROW)
            lab_row_set_metric(w, (const char *)sqlite3_column_text(m, 0), real_col(m, 1));
        if (mrc != SQLITE_DONE) {
            rc = mrc;
            break;
        }
    }
    int ret = rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_fail(st, what);
    sqlite3_finalize(s);
    sqlite3_finalize(m);
    if (ret)
        return ret;
    /* The choice made when the lab ran; closest is derived as then. */
    lab_derive(out);
    lab_choose(out);
    out->chosen = -1;
    for (int k = 0; chosen[0] && k < out->nrow; k++)
        if (out->row[k].status == LAB_OK && strcmp(out->row[k].format, chosen) == 0)
            out->chosen = k;
    return 0;
}
