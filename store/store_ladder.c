/* The teaching ladder in the session log (schema version 9: ladders,
 * ladder_rungs): written in one transaction, read back for the dashboard's
 * ladder panel and `export ladder`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_int.h"

/* The rung columns after (ladder_id, rung), in the order of both the
 * insert and the select. */
#define RUNG_COLS                                                                                  \
    "name, unit, status, note, run_id, pairs, kernel_s, tflops, cublas_dtype, cublas_tflops, "     \
    "tensor_pct, fma_pct, conflicts_pct, dram_pct, smem_pct, l2_hit_pct, occupancy_pct, sm_mhz, "  \
    "power_w, peak_max_pct, peak_run_pct"

/* The measured numbers of a row, in RUNG_COLS' order from kernel_s on
 * (cublas_dtype sits between tflops and cublas_tflops). */
static double *row_num(ladder_row *r, int k)
{
    double *const p[] = {&r->kernel_s,   &r->tflops,        &r->blas_tflops, &r->tensor_pct,
                         &r->fma_pct,    &r->conflicts_pct, &r->dram_pct,    &r->smem_pct,
                         &r->l2_hit_pct, &r->occupancy_pct, &r->sm_mhz,      &r->power_w,
                         &r->peak_max,   &r->peak_run};
    return p[k];
}
#define NNUM 14

static int ladder_insert(store *st, int64_t sid, int64_t did, int64_t cid, const ladder_view *v,
                         int64_t *id)
{
    const char *what = "storing the ladder";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO ladders(session_id, command_id, dataset_id, at, device, n, d, "
                      "eps, ref_engine, ref_pairs) VALUES(?1, ?2, ?3, " STORE_NOW
                      ", ?4, ?5, ?6, ?7, ?8, ?9)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, sid);
    store_bind_id(s, 2, cid);
    store_bind_id(s, 3, did);
    store_bind_text(s, 4, v->device);
    store_bind_u64(s, 5, v->n);
    store_bind_u64(s, 6, v->d);
    sqlite3_bind_double(s, 7, v->eps);
    store_bind_text(s, 8, v->ref_engine);
    store_bind_u64(s, 9, v->ref_pairs);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    *id = sqlite3_last_insert_rowid(st->db);
    if (store_prepare(st,
                      "INSERT INTO ladder_rungs(ladder_id, rung, " RUNG_COLS ") VALUES(?1, ?2, ?3, "
                      "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
                      "?20, ?21, ?22, ?23)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (int k = 0; k < v->nrows && !rc; k++) {
        ladder_row r = v->row[k];
        sqlite3_bind_int64(s, 1, *id);
        sqlite3_bind_int(s, 2, r.rung);
        store_bind_text(s, 3, r.name);
        store_bind_text(s, 4, r.unit);
        store_bind_text(s, 5, ladder_status_names[r.status]);
        store_bind_text(s, 6, r.note[0] ? r.note : NULL);
        store_bind_id(s, 7, r.run_id);
        store_bind_u64(s, 8, r.pairs);
        store_bind_real(s, 9, r.kernel_s);
        store_bind_real(s, 10, r.tflops);
        store_bind_text(s, 11, r.blas);
        for (int q = 2; q < NNUM; q++)
            store_bind_real(s, 10 + q, *row_num(&r, q));
        rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_fail(st, what);
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
    }
    sqlite3_finalize(s);
    return rc;
}

int64_t store_ladder(store *st, int64_t session_id, int64_t dataset_id, int64_t command_id,
                     const ladder_view *v)
{
    if (store_begin(st))
        return TCJ_ESTORE;
    int64_t id = 0;
    const int rc =
        ladder_insert(st, session_id, dataset_id, command_id, v, &id); /* before id is read */
    return store_end_insert(st, rc, id);
}

static double real_col(sqlite3_stmt *s, int col)
{
    return sqlite3_column_type(s, col) == SQLITE_NULL ? NAN : sqlite3_column_double(s, col);
}

int store_ladder_get(store *st, int64_t id, ladder_view *out)
{
    const char *what = "reading a ladder";
    memset(out, 0, sizeof *out);
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT l.id, l.device, d.name, l.n, l.d, l.eps, l.ref_engine, l.ref_pairs "
                      "FROM ladders l LEFT JOIN datasets d ON d.id = l.dataset_id WHERE l.id = ?1 "
                      "OR (?1 <= 0 AND l.id = (SELECT max(id) FROM ladders))",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return store_fail(st, what);
        return id > 0 ? err_set(TCJ_EINVAL, "no ladder %lld in the session log", (long long)id)
                      : err_set(TCJ_EINVAL, "no ladder in the session log (run ladder)");
    }
    out->id = sqlite3_column_int64(s, 0);
    store_col_text(s, 1, out->device, sizeof out->device);
    store_col_text(s, 2, out->dataset, sizeof out->dataset);
    out->n = (size_t)sqlite3_column_int64(s, 3);
    out->d = (size_t)sqlite3_column_int64(s, 4);
    out->eps = sqlite3_column_double(s, 5);
    store_col_text(s, 6, out->ref_engine, sizeof out->ref_engine);
    out->ref_pairs = (uint64_t)sqlite3_column_int64(s, 7);
    sqlite3_finalize(s);
    if (store_prepare(
            st, "SELECT rung, " RUNG_COLS " FROM ladder_rungs WHERE ladder_id = ?1 ORDER BY rung",
            &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, out->id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && out->nrows < LADDER_MAX_RUNGS) {
        ladder_row *r = &out->row[out->nrows++];
        r->rung = sqlite3_column_int(s, 0);
        store_col_text(s, 1, r->name, sizeof r->name);
        store_col_text(s, 2, r->unit, sizeof r->unit);
        char status[16];
        store_col_text(s, 3, status, sizeof status);
        r->status = LADDER_FAILED;
        for (int k = 0; k <= LADDER_FAILED; k++)
            if (strcmp(status, ladder_status_names[k]) == 0)
                r->status = k;
        store_col_text(s, 4, r->note, sizeof r->note);
        r->run_id = sqlite3_column_int64(s, 5);
        r->pairs = (uint64_t)sqlite3_column_int64(s, 6);
        r->kernel_s = real_col(s, 7);
        r->tflops = real_col(s, 8);
        store_col_text(s, 9, r->blas, sizeof r->blas);
        for (int q = 2; q < NNUM; q++)
            *row_num(r, q) = real_col(s, 8 + q);
        r->pct_blas = r->blas_tflops > 0 && r->tflops > 0 ? 100 * r->tflops / r->blas_tflops : NAN;
        r->speedup = NAN;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_fail(st, what);
    ladder_speedups(out); /* x prev from the stored times */
    return 0;
}

/* A CSV number: empty where unknown. */
static void csv_num(FILE *f, double x)
{
    char b[JSON_NUM_MAX];
    if (isnan(x)) {
        fputs(",", f);
        return;
    }
    json_fmt_double(b, sizeof b, x);
    fprintf(f, ",%s", b);
}

static void csv_text(FILE *f, const char *t)
{
    fputs(",\"", f);
    for (const char *p = t ? t : ""; *p; p++)
        fputs(*p == '"' ? "\"\"" : (char[]){*p, 0}, f);
    fputs("\"", f);
}

int store_ladder_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path)
{
    int csv = format && strcmp(format, "csv") == 0;
    if (!csv && !(format && strcmp(format, "json") == 0))
        return err_set(TCJ_EINVAL, "export format '%s': expected csv or json",
                       format ? format : "");
    ladder_view *v = xmalloc(sizeof *v);
    int rc = store_ladder_get(st, id, v);
    if (rc) {
        free(v);
        return rc;
    }
    if (csv) {
        fputs("ladder_id,device,dataset,n,d,eps,ref_engine,ref_pairs,rung,name,unit,status,note,"
              "run_id,pairs,kernel_s,tflops,cublas_dtype,cublas_tflops,pct_cublas,speedup_prev,"
              "tensor_pct,fma_pct,conflicts_pct,dram_pct,smem_pct,l2_hit_pct,occupancy_pct,"
              "sm_mhz,power_w,peak_max_pct,peak_run_pct\n",
              f);
        for (int k = 0; k < v->nrows; k++) {
            ladder_row *r = &v->row[k];
            fprintf(f, "%lld", (long long)v->id);
            csv_text(f, v->device);
            csv_text(f, v->dataset);
            fprintf(f, ",%zu,%zu", v->n, v->d);
            csv_num(f, v->eps);
            fprintf(f, ",%s,%llu,%d,%s,%s,%s", v->ref_engine, (unsigned long long)v->ref_pairs,
                    r->rung, r->name, r->unit, ladder_status_names[r->status]);
            csv_text(f, r->note);
            if (r->run_id)
                fprintf(f, ",%lld", (long long)r->run_id);
            else
                fputs(",", f);
            fprintf(f, ",%llu", (unsigned long long)r->pairs);
            csv_num(f, r->kernel_s);
            csv_num(f, r->tflops);
            fprintf(f, ",%s", r->blas);
            csv_num(f, r->blas_tflops);
            csv_num(f, r->pct_blas);
            csv_num(f, r->speedup);
            for (int q = 3; q < NNUM; q++)
                csv_num(f, *row_num(r, q));
            fputs("\n", f);
        }
    } else {
        json_w w;
        json_w_init(&w, '{');
        ladder_json(&w, v);
        char *text = json_w_finish(&w);
        fprintf(f, "%s\n", text);
        free(text);
    }
    if (fflush(f) || ferror(f))
        rc = err_set(TCJ_EIO, "%s: write failed", path);
    free(v);
    return rc;
}
