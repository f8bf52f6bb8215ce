/* Per-point summaries of runs in mode perpoint (src/perpoint.h): one row
 * per run and its histogram bins. The tables are created here, on first
 * write, with CREATE TABLE IF NOT EXISTS rather than by a numbered
 * migration (PERPOINT_DDL can move into one unchanged); a log without them
 * reads as "no summaries". */
#include <string.h>

#include "err.h"
#include "store_int.h"

#define PERPOINT_DDL                                                                               \
    "CREATE TABLE IF NOT EXISTS perpoint_summaries (\n"                                            \
    "  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,\n"                        \
    "  npoints INTEGER NOT NULL,\n"                                                                \
    "  min INTEGER, p10 INTEGER, median INTEGER, p90 INTEGER, max INTEGER,\n"                      \
    "  mean REAL,\n"                                                                               \
    "  minpts INTEGER,\n"                                                                          \
    "  core INTEGER,\n"                                                                            \
    "  noise INTEGER\n"                                                                            \
    ");\n"                                                                                         \
    "CREATE TABLE IF NOT EXISTS perpoint_bins (\n"                                                 \
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,\n"                           \
    "  bin INTEGER NOT NULL,\n"                                                                    \
    "  lo INTEGER NOT NULL,\n"                                                                     \
    "  hi INTEGER NOT NULL,\n"                                                                     \
    "  count INTEGER NOT NULL,\n"                                                                  \
    "  PRIMARY KEY (run_id, bin)\n"                                                                \
    ");\n"

int store_perpoint_tables(store *st)
{
    return store_exec(st, PERPOINT_DDL, "creating the per-point tables");
}

static int pp_insert(store *st, int64_t run_id, const perpoint_summary *p)
{
    const char *what = "storing the per-point summary";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT OR REPLACE INTO perpoint_summaries(run_id, npoints, min, p10, "
                      "median, p90, max, mean, minpts, core, noise) "
                      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    store_bind_u64(s, 2, p->npoints);
    store_bind_u64(s, 3, p->min);
    store_bind_u64(s, 4, p->p10);
    store_bind_u64(s, 5, p->median);
    store_bind_u64(s, 6, p->p90);
    store_bind_u64(s, 7, p->max);
    store_bind_real(s, 8, p->mean);
    if (p->minpts) {
        store_bind_u64(s, 9, p->minpts);
        store_bind_u64(s, 10, p->core);
        store_bind_u64(s, 11, p->noise);
    }
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    if (store_prepare(st, "DELETE FROM perpoint_bins WHERE run_id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    if (store_prepare(st,
                      "INSERT INTO perpoint_bins(run_id, bin, lo, hi, count) "
                      "VALUES(?1, ?2, ?3, ?4, ?5)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (int b = 0; b < p->nbins && !rc; b++) {
        sqlite3_bind_int64(s, 1, run_id);
        sqlite3_bind_int(s, 2, b);
        store_bind_u64(s, 3, p->bin[b].lo);
        store_bind_u64(s, 4, p->bin[b].hi);
        store_bind_u64(s, 5, p->bin[b].count);
        rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_fail(st, what);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

int store_perpoint(store *st, int64_t run_id, const perpoint_summary *p)
{
    if (run_id <= 0)
        return err_set(TCJ_EINVAL, "%s: per-point summary of a run not stored", st->path);
    if (store_perpoint_tables(st))
        return TCJ_ESTORE;
    if (store_begin(st))
        return TCJ_ESTORE;
    int rc = pp_insert(st, run_id, p);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st);
}

/* 1 when the tables exist: reading never creates them, so show and export
 * stay read-only on a log written before them (or by another process). */
static int pp_tables_exist(store *st, int *yes, const char *what)
{
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                      "name IN ('perpoint_summaries', 'perpoint_bins')",
                      &s, what))
        return TCJ_ESTORE;
    int rc = sqlite3_step(s);
    *yes = rc == SQLITE_ROW && sqlite3_column_int(s, 0) == 2;
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 0 : store_fail(st, what);
}

int store_perpoint_find(store *st, int64_t run_id, perpoint_summary *p, int *found)
{
    const char *what = "reading the per-point summary";
    memset(p, 0, sizeof *p);
    *found = 0;
    int have;
    if (pp_tables_exist(st, &have, what))
        return TCJ_ESTORE;
    if (!have)
        return 0;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT npoints, min, p10, median, p90, max, mean, minpts, core, noise "
                      "FROM perpoint_summaries WHERE run_id = ?1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        return rc == SQLITE_DONE ? 0 : store_fail(st, what);
    }
    p->npoints = (size_t)sqlite3_column_int64(s, 0);
    uint64_t *v[] = {&p->min, &p->p10, &p->median, &p->p90, &p->max};
    for (int k = 0; k < 5; k++)
        *v[k] = (uint64_t)sqlite3_column_int64(s, 1 + k);
    p->mean = sqlite3_column_double(s, 6);
    p->minpts = (uint64_t)sqlite3_column_int64(s, 7);
    p->core = (uint64_t)sqlite3_column_int64(s, 8);
    p->noise = (uint64_t)sqlite3_column_int64(s, 9);
    sqlite3_finalize(s);
    if (store_prepare(st, "SELECT lo, hi, count FROM perpoint_bins WHERE run_id = ?1 ORDER BY bin",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && p->nbins < PERPOINT_MAX_BINS) {
        perpoint_bin *b = &p->bin[p->nbins++];
        b->lo = (uint64_t)sqlite3_column_int64(s, 0);
        b->hi = (uint64_t)sqlite3_column_int64(s, 1);
        b->count = (uint64_t)sqlite3_column_int64(s, 2);
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_fail(st, what);
    *found = 1;
    return 0;
}

int store_perpoint_get(store *st, int64_t run_id, perpoint_summary *p)
{
    int found;
    int rc = store_perpoint_find(st, run_id, p, &found);
    if (!rc && !found)
        rc = err_set(TCJ_EINVAL, "run %lld has no per-point summary", (long long)run_id);
    return rc;
}
