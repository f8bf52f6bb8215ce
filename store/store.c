/* The session log: where it lives, opening it, and every write. Each write
 * function is one transaction, committed before it returns, so a killed
 * process loses at most the run in flight. Only bound parameters carry
 * values into SQL. */
#include <errno.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "store_int.h"

/* How long a tcjoin process waits for another one's write lock before it
 * reports the log busy ($TCJOIN_DB_WAIT seconds overrides it). A tcjoin
 * write takes milliseconds; a longer lock is another program's. */
#define STORE_WAIT_MS 30000

/* ---- helpers shared with schema.c and query.c ---- */

double store_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void store_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int store_fail(store *st, const char *what)
{
    /* said as every cancellation is; still a failed write of the log */
    if (store_is_busy(st) && st->wait_cancelled) {
        err_cancelled_note(ERR_NOTE_LOCKED, "%s: %s", st->path, what);
        return TCJ_ESTORE;
    }
    if (store_is_busy(st))
        return err_set(TCJ_ESTORE,
                       "%s: %s: the session log stayed locked by another process for %g s (%s)",
                       st->path, what, st->wait_ms / 1000.0, sqlite3_errmsg(st->db));
    return err_set(TCJ_ESTORE, "%s: %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

int store_exec(store *st, const char *sql, const char *what)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return store_fail(st, what);
    return 0;
}

int store_prepare(store *st, const char *sql, sqlite3_stmt **out, const char *what)
{
    if (sqlite3_prepare_v2(st->db, sql, -1, out, NULL) != SQLITE_OK) {
        *out = NULL;
        return store_fail(st, what);
    }
    return 0;
}

int store_step_done(store *st, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s);
    int ret = rc == SQLITE_DONE ? 0 : store_fail(st, what);
    sqlite3_finalize(s);
    return ret;
}

int store_begin(store *st)
{
    return store_exec(st, "BEGIN IMMEDIATE", "starting a transaction");
}

int store_commit(store *st)
{
    if (store_exec(st, "COMMIT", "committing")) {
        store_rollback(st);
        return TCJ_ESTORE;
    }
    return 0;
}

void store_rollback(store *st)
{
    if (!sqlite3_get_autocommit(st->db))
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
}

int store_bind_id(sqlite3_stmt *s, int i, int64_t id)
{
    return id > 0 ? sqlite3_bind_int64(s, i, id) : sqlite3_bind_null(s, i);
}

int store_bind_text(sqlite3_stmt *s, int i, const char *text)
{
    if (!text || !*text)
        return sqlite3_bind_null(s, i);
    return sqlite3_bind_text(s, i, text, -1, SQLITE_TRANSIENT);
}

int store_bind_real(sqlite3_stmt *s, int i, double v)
{
    return isfinite(v) ? sqlite3_bind_double(s, i, v) : sqlite3_bind_null(s, i);
}

int64_t store_end_insert(store *st, int rc, int64_t id)
{
    if (rc) {
        store_rollback(st);
        return rc;
    }
    return store_commit(st) ? TCJ_ESTORE : id;
}

void store_col_text(sqlite3_stmt *s, int col, char *buf, size_t size)
{
    const char *t = (const char *)sqlite3_column_text(s, col);
    snprintf(buf, size, "%s", t ? t : "");
}

int store_bind_u64(sqlite3_stmt *s, int i, uint64_t v)
{
    /* Beyond SQLite's signed 64-bit integers only as an approximate real. */
    if (v > (uint64_t)INT64_MAX)
        return sqlite3_bind_double(s, i, (double)v);
    return sqlite3_bind_int64(s, i, (int64_t)v);
}

/* ---- where the log lives ---- */

static char *path_join(const char *dir, const char *rest)
{
    size_t a = strlen(dir), b = strlen(rest);
    while (a > 1 && dir[a - 1] == '/')
        a--;
    char *p = xmalloc(a + b + 1);
    memcpy(p, dir, a);
    memcpy(p + a, rest, b + 1);
    return p;
}

int store_dir_exists(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return 1;
    if (slash == path)
        return 1;
    char *dir = xstrdup(path);
    dir[slash - path] = '\0';
    struct stat sb;
    int ok = stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode);
    free(dir);
    return ok;
}

char *store_default_path(void)
{
    const char *env = getenv("TCJOIN_DB");
    if (env && *env)
        return xstrdup(env);
    /* The XDG spec says a relative XDG_DATA_HOME is invalid and ignored. */
    env = getenv("XDG_DATA_HOME");
    if (env && env[0] == '/')
        return path_join(env, "/tcjoin/sessions.db");
    const char *home = getenv("HOME");
    if (!home || !*home) {
        struct passwd *pw = getpwuid(getuid());
        home = pw ? pw->pw_dir : NULL;
    }
    if (!home || !*home) {
        err_set(TCJ_ESTORE, "no home directory for the session log: set TCJOIN_DB or use "
                            "--db FILE");
        return NULL;
    }
    return path_join(home, "/.local/share/tcjoin/sessions.db");
}

/* mkdir -p of the directory holding path; private to the user because the
 * log names the user's files. */
static int make_parents(const char *path)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (!slash || slash == dir) {
        free(dir);
        return 0;
    }
    *slash = '\0';
    for (char *p = dir + 1; !rc; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST)
            rc = err_set(TCJ_EIO, "%s: cannot create directory: %s", dir, strerror(errno));
        *p = c;
        if (c == '\0')
            break;
    }
    struct stat sb;
    if (!rc && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)))
        rc = err_set(TCJ_EIO, "%s: not a directory, cannot hold the session log", dir);
    free(dir);
    return rc;
}

/* ---- open and close ---- */

int store_wait_ms(void)
{
    const char *env = getenv("TCJOIN_DB_WAIT");
    if (env && *env) {
        char *end;
        double sec = strtod(env, &end);
        if (!*end && sec >= 0 && sec <= 86400)
            return (int)(sec * 1000);
    }
    return STORE_WAIT_MS;
}

int store_is_busy(store *st)
{
    int code = sqlite3_errcode(st->db) & 0xff;
    return code == SQLITE_BUSY || code == SQLITE_LOCKED;
}

/* A damaged file is refused before anything can write to it: a write into
 * a corrupt b-tree spreads the damage, and the person may want to recover
 * the rows that are still readable. */
static int store_quick_check(store *st)
{
    const char *fix = "left as it is: move it aside (or restore a copy), or choose another file "
                      "with --db";
    sqlite3_stmt *s = NULL;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_step(s);
    int ret = 0;
    if (rc == SQLITE_ROW) {
        const char *res = (const char *)sqlite3_column_text(s, 0);
        if (!res || strcmp(res, "ok") != 0) {
            /* The answer is several lines after a header: keep one line. */
            char line[256];
            const char *hdr = "*** in database main ***\n";
            if (res && strncmp(res, hdr, strlen(hdr)) == 0)
                res += strlen(hdr);
            snprintf(line, sizeof line, "%s", res ? res : "no answer");
            for (char *p = line; *p; p++)
                if (*p == '\n')
                    *p = ' ';
            ret = err_set(TCJ_ESTORE, "%s: the session log is damaged (quick_check: %s); %s",
                          st->path, line, fix);
        }
    } else if ((sqlite3_errcode(st->db) & 0xff) == SQLITE_CORRUPT ||
               (sqlite3_errcode(st->db) & 0xff) == SQLITE_NOTADB) {
        ret = err_set(TCJ_ESTORE, "%s: the session log is damaged or not a database (%s); %s",
                      st->path, sqlite3_errmsg(st->db), fix);
    } else {
        ret = store_fail(st, "checking the session log");
    }
    sqlite3_finalize(s);
    return ret;
}

/* Check, switch to WAL and migrate; TCJ_ESTORE with store_is_busy() true
 * when another process held a lock too long. */
static int store_setup_once(store *st)
{
    if (store_quick_check(st) || store_check_version(st))
        return TCJ_ESTORE;
    sqlite3_stmt *s;
    if (store_prepare(st, "PRAGMA journal_mode = WAL", &s, "switching to WAL mode"))
        return TCJ_ESTORE;
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW)
        return store_fail(st, "switching to WAL mode");
    /* NORMAL is safe in WAL mode: a crash of the process loses nothing
     * committed, a power loss at most the last transactions. */
    if (store_exec(st, "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL", "setting pragmas"))
        return TCJ_ESTORE;
    return store_migrate(st);
}

/* sqlite's busy handler: wait (polling every few ms) for another process's
 * lock until wait_ms has passed, or at once when the cancel flag is set
 * (sqlite3_busy_timeout sleeps the whole wait through a Ctrl-C). */
static const volatile int *store_cancel;

static int store_busy_wait(void *ctx, int count)
{
    store *st = ctx;
    if (count == 0) {
        st->wait_t0 = store_clock();
        st->wait_cancelled = 0;
    }
    if (store_cancel && *store_cancel) {
        st->wait_cancelled = 1;
        return 0;
    }
    if ((store_clock() - st->wait_t0) * 1000 >= st->wait_ms)
        return 0;
    store_sleep_ms(count < 10 ? 1 + (unsigned)count : 10);
    return 1;
}

void store_set_cancel(const volatile int *flag)
{
    store_cancel = flag;
}

/* Several processes opening one new file at the same moment meet locks the
 * busy handler does not wait for (a journal mode switch, WAL recovery):
 * those are retried until the wait runs out. */
static int store_setup(store *st)
{
    int wait = st->wait_ms;
    sqlite3_busy_handler(st->db, store_busy_wait, st);
    double t0 = store_clock();
    unsigned pause_ms = 5;
    for (;;) {
        int rc = store_setup_once(st);
        if (!rc || !store_is_busy(st) || (store_clock() - t0) * 1000 >= wait ||
            (store_cancel && *store_cancel))
            return rc;
        store_rollback(st);
        store_sleep_ms(pause_ms + (unsigned)(rand() % 10));
        pause_ms = pause_ms < 100 ? pause_ms * 2 : pause_ms;
    }
}

int store_open(const char *path, store **out)
{
    *out = NULL;
    char *def = NULL;
    if (!path) {
        def = store_default_path();
        if (!def)
            return TCJ_ESTORE;
        path = def;
    }
    int rc = 0;
    struct stat sb;
    if (!*path)
        rc = err_set(TCJ_EINVAL, "empty path for the session log");
    else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        rc = err_set(TCJ_ESTORE, "%s: is a directory, expected a session log file", path);
    else
        rc = make_parents(path);
    if (rc) {
        free(def);
        return rc;
    }

    store *st = xcalloc(1, sizeof *st);
    st->path = xstrdup(path);
    st->wait_ms = store_wait_ms();
    free(def);
    int src = sqlite3_open_v2(st->path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (src != SQLITE_OK) {
        rc = err_set(TCJ_ESTORE, "%s: %s", st->path,
                     st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(src));
    } else {
        rc = store_setup(st);
    }
    if (rc) {
        store_close(st);
        return rc;
    }
    *out = st;
    return 0;
}

void store_close(store *st)
{
    if (!st)
        return;
    sqlite3_close(st->db);
    free(st->path);
    free(st);
}

const char *store_path(store *st)
{
    return st->path;
}

int store_schema_version(store *st)
{
    sqlite3_stmt *s;
    if (store_prepare(st, "PRAGMA user_version", &s, "reading the schema version"))
        return TCJ_ESTORE;
    int v = sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : TCJ_ESTORE;
    if (v == TCJ_ESTORE)
        store_fail(st, "reading the schema version");
    sqlite3_finalize(s);
    return v;
}

/* ---- single-statement writes (autocommit makes each one transaction) ---- */

/* Step one row of a statement reused in a loop, then ready it for the next. */
static int step_row(store *st, sqlite3_stmt *s, const char *what)
{
    int rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_fail(st, what);
    sqlite3_reset(s);
    return rc;
}

/* Step an INSERT and give its row id, or a negative code. */
static int64_t insert_done(store *st, sqlite3_stmt *s, const char *what)
{
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    return sqlite3_last_insert_rowid(st->db);
}

/* Step an UPDATE or DELETE of one row by id; TCJ_EINVAL when no row had it. */
static int update_done(store *st, sqlite3_stmt *s, const char *what, const char *table, int64_t id)
{
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    if (sqlite3_changes(st->db) == 0)
        return err_set(TCJ_EINVAL, "%s: %s: no %s with id %lld", st->path, what, table,
                       (long long)id);
    return 0;
}

int64_t store_session_begin(store *st, const char *argv_line, const char *version, const char *host)
{
    const char *what = "storing the session";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO sessions(started, argv, version, host) "
                      "VALUES(" STORE_NOW ", ?1, ?2, ?3)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_text(s, 1, argv_line);
    store_bind_text(s, 2, version);
    store_bind_text(s, 3, host);
    return insert_done(st, s, what);
}

int store_session_end(store *st, int64_t session_id)
{
    const char *what = "ending the session";
    sqlite3_stmt *s;
    if (store_prepare(st, "UPDATE sessions SET ended = " STORE_NOW " WHERE id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, session_id);
    return update_done(st, s, what, "session", session_id);
}

int64_t store_command(store *st, int64_t session_id, const char *line, int status,
                      const char *error, double seconds)
{
    const char *what = "storing a command";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO commands(session_id, at, line, status, error, seconds) "
                      "VALUES(?1, " STORE_NOW ", ?2, ?3, ?4, ?5)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, session_id);
    sqlite3_bind_text(s, 2, line ? line : "", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 3, status);
    store_bind_text(s, 4, status ? error : NULL);
    store_bind_real(s, 5, seconds);
    return insert_done(st, s, what);
}

int64_t store_command_begin(store *st, int64_t session_id, const char *line)
{
    const char *what = "storing a command";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO commands(session_id, at, line) VALUES(?1, " STORE_NOW ", ?2)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, session_id);
    sqlite3_bind_text(s, 2, line ? line : "", -1, SQLITE_TRANSIENT);
    return insert_done(st, s, what);
}

int store_command_end(store *st, int64_t command_id, int status, const char *error, double seconds)
{
    const char *what = "finishing a command";
    sqlite3_stmt *s;
    if (store_prepare(st, "UPDATE commands SET status = ?2, error = ?3, seconds = ?4 WHERE id = ?1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, command_id);
    sqlite3_bind_int(s, 2, status);
    store_bind_text(s, 3, status ? error : NULL);
    store_bind_real(s, 4, seconds);
    return update_done(st, s, what, "command", command_id);
}

/* A metric named twice for a run keeps its last value. */
#define COUNTER_UPSERT                                                                             \
    "INSERT INTO counters(run_id, name, value, unit) VALUES(?1, ?2, ?3, ?4) "                      \
    "ON CONFLICT(run_id, name) DO UPDATE SET value = excluded.value, unit = excluded.unit"

int store_counter(store *st, int64_t run_id, const char *name, double value, const char *unit)
{
    const char *what = "storing a counter";
    sqlite3_stmt *s;
    if (store_prepare(st, COUNTER_UPSERT, &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, run_id);
    store_bind_text(s, 2, name);
    store_bind_real(s, 3, value);
    store_bind_text(s, 4, unit);
    return store_step_done(st, s, what);
}

/* ---- writes of several rows: one explicit transaction each ---- */

/* Run fn(st, rec, &id) as one transaction: the id it gives, or its code
 * after a rollback. */
static int64_t write_tx_once(store *st, int (*fn)(store *, const void *, int64_t *),
                             const void *rec, const char *what)
{
    if (store_exec(st, "BEGIN IMMEDIATE", what))
        return TCJ_ESTORE;
    int64_t id = 0;
    int rc = fn(st, rec, &id);
    if (rc) {
        store_rollback(st);
        return rc;
    }
    if (store_commit(st))
        return TCJ_ESTORE;
    return id;
}

/* The busy handler waits for another writer inside each statement; a lock
 * it does not wait for (WAL recovery by another process) gets the whole
 * transaction again, until the same wait has passed. */
static int64_t write_tx(store *st, int (*fn)(store *, const void *, int64_t *), const void *rec,
                        const char *what)
{
    double t0 = store_clock();
    for (;;) {
        int64_t id = write_tx_once(st, fn, rec, what);
        if (id >= 0 || !store_is_busy(st) || (store_clock() - t0) * 1000 >= st->wait_ms ||
            (store_cancel && *store_cancel))
            return id;
        store_sleep_ms(10);
    }
}

/* The id of the dataset with this path and content, stored if new. */
static int dataset_find_or_insert(store *st, const void *rec, int64_t *id)
{
    const dataset *ds = rec;
    const char *what = "storing the dataset";
    char hash[17];
    snprintf(hash, sizeof hash, "%016llx", (unsigned long long)ds->hash);
    sqlite3_stmt *s;
    /* "IS" so generated data (no path) matches by content hash alone. */
    if (store_prepare(st, "SELECT id FROM datasets WHERE path IS ?1 AND hash = ?2", &s, what))
        return TCJ_ESTORE;
    store_bind_text(s, 1, ds->path);
    sqlite3_bind_text(s, 2, hash, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s, 0);
    else if (rc != SQLITE_DONE)
        store_fail(st, what);
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return TCJ_ESTORE;
    if (*id)
        return 0;
    if (store_prepare(st,
                      "INSERT INTO datasets(path, name, format, n, d, hash, first_seen) "
                      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, " STORE_NOW ")",
                      &s, what))
        return TCJ_ESTORE;
    const char *name = ds->name && *ds->name ? ds->name : ds->path ? ds->path : "dataset";
    store_bind_text(s, 1, ds->path);
    sqlite3_bind_text(s, 2, name, -1, SQLITE_TRANSIENT);
    store_bind_text(s, 3, ds->format);
    store_bind_u64(s, 4, ds->n);
    store_bind_u64(s, 5, ds->d);
    sqlite3_bind_text(s, 6, hash, -1, SQLITE_TRANSIENT);
    *id = insert_done(st, s, what);
    return *id < 0 ? TCJ_ESTORE : 0;
}

int64_t store_dataset(store *st, const dataset *ds)
{
    return write_tx(st, dataset_find_or_insert, ds, "storing the dataset");
}

static const char *first_text(const char *a, const char *b)
{
    return a && *a ? a : b;
}

static int run_insert_row(store *st, const store_run_rec *r, int64_t *id)
{
    const char *what = "storing a run";
    const join_result *res = r->res;
    int ok = r->status == 0 && res;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO runs(session_id, command_id, dataset_id, at, engine, "
                      "precision, mode, eps, q0, q1, n, d, d_padded, options, variant, device, "
                      "status, error, pairs, selectivity, seconds, kernel_seconds, "
                      "tflops_padded, tflops_unpadded, dtype) VALUES(?1, ?2, ?3, " STORE_NOW
                      ", ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
                      "?19, ?20, ?21, ?22, ?23, ?24)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, r->session_id);
    store_bind_id(s, 2, r->command_id);
    store_bind_id(s, 3, r->dataset_id);
    store_bind_text(s, 4, r->engine);
    store_bind_text(s, 5, first_text(r->precision, res ? res->precision : NULL));
    store_bind_text(s, 6, r->mode);
    store_bind_real(s, 7, r->eps);
    store_bind_u64(s, 8, r->q0);
    store_bind_u64(s, 9, r->q1);
    store_bind_u64(s, 10, r->n);
    store_bind_u64(s, 11, r->d);
    size_t d_padded = r->d_padded ? r->d_padded : res ? res->d_padded : 0;
    if (d_padded)
        store_bind_u64(s, 12, d_padded);
    store_bind_text(s, 13, r->options);
    store_bind_text(s, 14, first_text(r->variant, res ? res->variant : NULL));
    store_bind_text(s, 15, first_text(r->device, res ? res->device : NULL));
    store_bind_text(s, 24, r->dtype);
    sqlite3_bind_int(s, 16, r->status);
    store_bind_text(s, 17, r->status ? r->error : NULL);
    if (ok) {
        store_bind_u64(s, 18, res->pairs);
        store_bind_real(s, 19, r->selectivity);
        if (res->kernel_seconds > 0)
            store_bind_real(s, 21, res->kernel_seconds);
        /* 0 TFLOPS means "not computed", never a measurement. */
        if (r->tflops_padded > 0)
            store_bind_real(s, 22, r->tflops_padded);
        if (r->tflops_unpadded > 0)
            store_bind_real(s, 23, r->tflops_unpadded);
    }
    if (res)
        store_bind_real(s, 20, res->seconds);
    *id = insert_done(st, s, what);
    return *id < 0 ? TCJ_ESTORE : 0;
}

static int run_insert_phases(store *st, int64_t run_id, const join_result *res)
{
    const char *what = "storing a run's phases";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO run_phases(run_id, seq, name, seconds) VALUES(?1, ?2, ?3, ?4)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (int k = 0; k < res->nphase && k < JOIN_MAX_PHASES && !rc; k++) {
        sqlite3_bind_int64(s, 1, run_id);
        sqlite3_bind_int(s, 2, k);
        store_bind_text(s, 3, res->phase[k].name);
        store_bind_real(s, 4, res->phase[k].seconds);
        rc = step_row(st, s, what);
    }
    sqlite3_finalize(s);
    return rc;
}

static int run_insert_counters(store *st, int64_t run_id, const join_result *res)
{
    const char *what = "storing a run's counters";
    sqlite3_stmt *s;
    if (store_prepare(st, COUNTER_UPSERT, &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (int k = 0; k < res->nmetric && k < JOIN_MAX_METRICS && !rc; k++) {
        const join_metric *m = &res->metric[k];
        sqlite3_bind_int64(s, 1, run_id);
        store_bind_text(s, 2, m->name);
        store_bind_real(s, 3, m->value);
        store_bind_text(s, 4, m->unit);
        rc = step_row(st, s, what);
    }
    sqlite3_finalize(s);
    return rc;
}

/* The run's row, then its phases and counters. */
int store_run_insert(store *st, const void *rec, int64_t *id)
{
    const store_run_rec *r = rec;
    int rc = run_insert_row(st, r, id);
    if (!rc && r->res)
        rc = run_insert_phases(st, *id, r->res);
    if (!rc && r->res)
        rc = run_insert_counters(st, *id, r->res);
    return rc;
}

int64_t store_run(store *st, const store_run_rec *r)
{
    return write_tx(st, store_run_insert, r, "storing a run");
}

/* One side's histogram bins. */
static int cmp_insert_bins(store *st, int64_t id, const char *side, size_t nbins, const double *lo,
                           const double *hi, const uint64_t *count)
{
    const char *what = "storing a comparison's histogram";
    if (nbins && (!lo || !hi || !count))
        return err_set(TCJ_EINVAL, "%s: %s: %zu bins without their edges or counts", st->path, what,
                       nbins);
    if (!nbins)
        return 0;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO histogram_bins(comparison_id, side, bin, lo, hi, count) "
                      "VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (size_t b = 0; b < nbins && !rc; b++) {
        sqlite3_bind_int64(s, 1, id);
        store_bind_text(s, 2, side);
        sqlite3_bind_int64(s, 3, (int64_t)b);
        store_bind_real(s, 4, lo[b]);
        store_bind_real(s, 5, hi[b]);
        store_bind_u64(s, 6, count[b]);
        rc = step_row(st, s, what);
    }
    sqlite3_finalize(s);
    return rc;
}

/* One side's comparison_sides row and its histogram bins. */
static int cmp_insert_side(store *st, int64_t id, const char *name, const cmp_side *sd)
{
    const char *what = "storing a comparison side";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO comparison_sides(comparison_id, side, engine, run_id, overlap, "
                      "err_mean, err_std, err_min, err_max, both, only_engine, only_ref, "
                      "only_engine_rel_max, only_ref_rel_max) VALUES(?1, ?2, ?3, ?4, ?5, ?6, "
                      "?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, id);
    store_bind_text(s, 2, name);
    store_bind_text(s, 3, sd->engine);
    store_bind_id(s, 4, sd->run_id);
    /* A side that is the reference keeps NULL accuracy. */
    if (sd->judged) {
        store_bind_real(s, 5, sd->overlap);
        store_bind_real(s, 6, sd->err_mean);
        store_bind_real(s, 7, sd->err_std);
        store_bind_real(s, 8, sd->err_min);
        store_bind_real(s, 9, sd->err_max);
        store_bind_u64(s, 10, sd->both);
        store_bind_u64(s, 11, sd->only_engine);
        store_bind_u64(s, 12, sd->only_ref);
        store_bind_real(s, 13, sd->only_engine_rel_max);
        store_bind_real(s, 14, sd->only_ref_rel_max);
    }
    int rc = step_row(st, s, what);
    sqlite3_finalize(s);
    if (!rc && sd->judged)
        rc = cmp_insert_bins(st, id, name, sd->nbins, sd->bin_lo, sd->bin_hi, sd->bin_count);
    return rc;
}

static int cmp_insert(store *st, const void *rec, int64_t *id)
{
    const store_cmp_rec *c = rec;
    const char *what = "storing a comparison";
    for (int k = 0; k < 2; k++)
        if (!c->side[k] || !c->side[k]->engine || !*c->side[k]->engine)
            return err_set(TCJ_EINVAL, "%s: %s: side %c has no engine", st->path, what, "ab"[k]);
    /* B is the reference unless another engine is named. */
    int named = c->ref_engine && *c->ref_engine;
    const char *ref = named ? c->ref_engine : c->side[1]->engine;
    int64_t run_ref = named ? c->run_ref : c->side[1]->run_id;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO comparisons(session_id, eps, ref_engine, run_ref, at) "
                      "VALUES(?1, ?2, ?3, ?4, " STORE_NOW ")",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, c->session_id);
    store_bind_real(s, 2, c->eps);
    store_bind_text(s, 3, ref);
    store_bind_id(s, 4, run_ref);
    *id = insert_done(st, s, what);
    if (*id < 0)
        return TCJ_ESTORE;
    int rc = cmp_insert_side(st, *id, "a", c->side[0]);
    if (!rc)
        rc = cmp_insert_side(st, *id, "b", c->side[1]);
    return rc;
}

int64_t store_comparison(store *st, const store_cmp_rec *c)
{
    return write_tx(st, cmp_insert, c, "storing a comparison");
}

/* ---- ε searches: each step committed as it is made ---- */

int64_t store_sweep_begin(store *st, int64_t session_id, int64_t dataset_id, const char *engine,
                          const char *kind, double target, double tolerance)
{
    const char *what = "storing a sweep";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO sweeps(session_id, dataset_id, engine, kind, target, "
                      "tolerance, started) VALUES(?1, ?2, ?3, ?4, ?5, ?6, " STORE_NOW ")",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, session_id);
    store_bind_id(s, 2, dataset_id);
    store_bind_text(s, 3, engine);
    store_bind_text(s, 4, kind);
    store_bind_real(s, 5, target);
    store_bind_real(s, 6, tolerance);
    return insert_done(st, s, what);
}

int store_sweep_step(store *st, int64_t sweep_id, int step, const char *method, double eps,
                     double selectivity, uint64_t pairs, double seconds)
{
    const char *what = "storing a sweep step";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO sweep_steps(sweep_id, step, method, eps, selectivity, pairs, "
                      "seconds) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, sweep_id);
    sqlite3_bind_int(s, 2, step);
    store_bind_text(s, 3, method);
    store_bind_real(s, 4, eps);
    store_bind_real(s, 5, selectivity);
    store_bind_u64(s, 6, pairs);
    store_bind_real(s, 7, seconds);
    return store_step_done(st, s, what);
}

int store_sweep_end(store *st, int64_t sweep_id, double eps, double selectivity, int passes,
                    double seconds, const char *note)
{
    const char *what = "finishing a sweep";
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "UPDATE sweeps SET eps = ?2, selectivity = ?3, passes = ?4, seconds = ?5, "
                      "note = ?6, ended = " STORE_NOW " WHERE id = ?1",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, sweep_id);
    store_bind_real(s, 2, eps);
    store_bind_real(s, 3, selectivity);
    sqlite3_bind_int(s, 4, passes);
    store_bind_real(s, 5, seconds);
    store_bind_text(s, 6, note);
    return update_done(st, s, what, "sweep", sweep_id);
}

static int curve_insert(store *st, const void *rec, int64_t *id)
{
    const store_curve_rec *r = rec;
    int64_t sid = store_sweep_begin(st, r->session_id, r->dataset_id, r->engine, "curve", NAN, NAN);
    if (sid < 0)
        return (int)sid;
    for (size_t k = 0; k < r->npt; k++) {
        int rc = store_sweep_step(st, sid, (int)k, "curve", r->eps[k], r->sel[k], r->pairs[k], 0);
        if (rc)
            return rc;
    }
    int rc =
        store_sweep_end(st, sid, r->eps[r->npt - 1], r->sel[r->npt - 1], 1, r->seconds, r->note);
    if (rc)
        return rc;
    *id = sid;
    return 0;
}

int64_t store_curve(store *st, const store_curve_rec *r)
{
    if (!r->npt)
        return err_set(TCJ_EINVAL, "a curve of no points");
    return write_tx(st, curve_insert, r, "storing a curve");
}

int store_sweep_delete(store *st, int64_t sweep_id)
{
    const char *what = "removing a sweep";
    sqlite3_stmt *s;
    /* The steps go with it: ON DELETE CASCADE. */
    if (store_prepare(st, "DELETE FROM sweeps WHERE id = ?1", &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, sweep_id);
    return update_done(st, s, what, "sweep", sweep_id);
}
