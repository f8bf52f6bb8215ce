/* Result records kept as their JSON (store.h, "Result records"): one row
 * a result of a command whose results have no tables of their own. The
 * table is created here on first use (CREATE TABLE IF NOT EXISTS, as the
 * k-distance's); a log without it reads as holding no such records. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "store_int.h"

#define RECORDS_DDL                                                                                \
    "CREATE TABLE IF NOT EXISTS records (\n"                                                       \
    "  id INTEGER PRIMARY KEY,\n"                                                                  \
    "  session_id INTEGER REFERENCES sessions(id),\n"                                              \
    "  command_id INTEGER REFERENCES commands(id),\n"                                              \
    "  dataset_id INTEGER REFERENCES datasets(id),\n"                                              \
    "  at TEXT NOT NULL,\n"                                                                        \
    "  type TEXT NOT NULL CHECK (type <> ''),\n"                                                   \
    "  json TEXT NOT NULL\n"                                                                       \
    ");\n"

static int records_table(store *st)
{
    return store_exec(st, RECORDS_DDL, "creating the records table");
}

int64_t store_record_put(store *st, const store_record_rec *r)
{
    const char *what = "storing a result record";
    if (records_table(st) || store_begin(st))
        return TCJ_ESTORE;
    sqlite3_stmt *s;
    int rc = store_prepare(st,
                           "INSERT INTO records(session_id, command_id, dataset_id, at, type, "
                           "json) VALUES(?1, ?2, ?3, " STORE_NOW ", ?4, ?5)",
                           &s, what)
                 ? TCJ_ESTORE
                 : 0;
    int64_t id = 0;
    if (!rc) {
        store_bind_id(s, 1, r->session_id);
        store_bind_id(s, 2, r->command_id);
        store_bind_id(s, 3, r->dataset_id);
        store_bind_text(s, 4, r->type);
        store_bind_text(s, 5, r->json);
        rc = store_step_done(st, s, what) ? TCJ_ESTORE : 0;
        id = sqlite3_last_insert_rowid(st->db);
    }
    return store_end_insert(st, rc, id);
}

int store_record_get(store *st, const char *type, int64_t id, char **json)
{
    const char *what = "reading a result record";
    *json = NULL;
    if (records_table(st))
        return TCJ_ESTORE;
    sqlite3_stmt *s;
    if (store_prepare(st, "SELECT json FROM records WHERE id = ?1 AND type = ?2", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, id);
    store_bind_text(s, 2, type);
    const int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(s, 0);
        *json = xstrdup(t ? t : "{}");
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_ROW)
        return 0;
    if (rc != SQLITE_DONE)
        return store_fail(st, what);
    return err_set(TCJ_EINVAL, "no %s %lld in the session log", type, (long long)id);
}
