/* Inside the session log: the handle and the helpers store.c, schema.c and
 * query.c share. Not for other modules: they use store.h. */
#ifndef TCJ_STORE_INT_H
#define TCJ_STORE_INT_H

#include <sqlite3.h>
#include <stdint.h>

#include "store.h"

struct store {
    sqlite3 *db;
    char *path;         /* as opened, for messages */
    int wait_ms;        /* how long a write waits for another process's lock */
    double wait_t0;     /* when the busy handler's current wait began */
    int wait_cancelled; /* the last wait ended by cancel, not by time */
};

/* PRAGMA application_id of a tcjoin session log ("tcjn"), so a database of
 * another program is refused instead of being migrated. */
#define STORE_APPLICATION_ID 0x74636a6e

/* The SQL expression every time column is written with: ISO-8601 UTC with
 * milliseconds, e.g. 2026-11-21T19:33:33.123Z. */
#define STORE_NOW "strftime('%Y-%m-%dT%H:%M:%fZ','now')"

/* Leave "PATH: WHAT: sqlite message" in err_msg; returns TCJ_ESTORE. */
int store_fail(store *st, const char *what);
/* Run fixed program text (no user text ever reaches it). */
int store_exec(store *st, const char *sql, const char *what);
int store_prepare(store *st, const char *sql, sqlite3_stmt **out, const char *what);
/* Step a statement that returns no rows, then finalize it. */
int store_step_done(store *st, sqlite3_stmt *s, const char *what);

/* How long to wait for another process's lock, in ms ($TCJOIN_DB_WAIT
 * seconds, default 30 s), read when the log is opened into st->wait_ms. */
int store_wait_ms(void);
/* Whether the last failure on st was another process holding a lock. */
int store_is_busy(store *st);
/* A monotonic clock in seconds, and a pause, for retries. */
double store_clock(void);
void store_sleep_ms(unsigned ms);

/* Write transactions: BEGIN IMMEDIATE so two processes never deadlock on a
 * read lock upgrade; the busy timeout waits for the other writer. */
int store_begin(store *st);
int store_commit(store *st);
/* Keeps err_msg as it is (the reason for the rollback). */
void store_rollback(store *st);
/* The end of a write opened by store_begin: rc, the insert's code, rolls
 * it back and is returned; else the commit, and id (TCJ_ESTORE when the
 * commit fails). */
int64_t store_end_insert(store *st, int rc, int64_t id);
/* A run (a store_run_rec), its phases and counters, inside a write the
 * caller opened (a DBSCAN stores its passes' runs with it). */
int store_run_insert(store *st, const void *rec, int64_t *id);

/* Binding helpers: ids <= 0, empty strings and non-finite numbers are NULL. */
int store_bind_id(sqlite3_stmt *s, int i, int64_t id);
int store_bind_text(sqlite3_stmt *s, int i, const char *text);
int store_bind_real(sqlite3_stmt *s, int i, double v);
int store_bind_u64(sqlite3_stmt *s, int i, uint64_t v);
/* Column col of the current row as text into buf ("" for NULL), cut to
 * size. */
void store_col_text(sqlite3_stmt *s, int col, char *buf, size_t size);

/* schema.c: refuse another program's database or a newer schema, writing
 * nothing; then bring the database to STORE_SCHEMA_VERSION in one
 * transaction. */
int store_check_version(store *st);
int store_migrate(store *st);
/* The SQL that takes a database from version-1 to version (1 = create);
 * NULL outside 1..STORE_SCHEMA_VERSION. Tests build old databases with it. */
const char *store_migration_sql(int version);

#endif
