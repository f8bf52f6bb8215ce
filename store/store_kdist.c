/* k-distance curves (src/cluster/kdist.h): one row per `kdist` with its knee, and
 * its quantile points. The tables are created here, on first use, with
 * CREATE TABLE IF NOT EXISTS rather than by a numbered migration
 * (KDIST_DDL can move into one unchanged); a log without them reads as
 * "no k-distance curves". */
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "store_int.h"

#define KDIST_DDL                                                                                  \
    "CREATE TABLE IF NOT EXISTS kdists (\n"                                                        \
    "  id INTEGER PRIMARY KEY,\n"                                                                  \
    "  session_id INTEGER REFERENCES sessions(id),\n"                                              \
    "  command_id INTEGER REFERENCES commands(id),\n"                                              \
    "  dataset_id INTEGER REFERENCES datasets(id),\n"                                              \
    "  at TEXT NOT NULL,\n"                                                                        \
    "  engine TEXT NOT NULL CHECK (engine <> ''),\n"                                               \
    "  precision TEXT,\n"                                                                          \
    "  k INTEGER NOT NULL,\n"                                                                      \
    "  n INTEGER NOT NULL,\n"                                                                      \
    "  npoints INTEGER NOT NULL,\n"                                                                \
    "  knee_rank INTEGER,\n"                                                                       \
    "  knee_dist REAL,\n"                                                                          \
    "  knee_method TEXT,\n"                                                                        \
    "  eps REAL,\n"                                                                                \
    "  seconds REAL,\n"                                                                            \
    "  device TEXT,\n"                                                                             \
    "  variant TEXT\n"                                                                             \
    ");\n"                                                                                         \
    "CREATE TABLE IF NOT EXISTS kdist_points (\n"                                                  \
    "  kdist_id INTEGER NOT NULL REFERENCES kdists(id) ON DELETE CASCADE,\n"                       \
    "  seq INTEGER NOT NULL,\n"                                                                    \
    "  rank INTEGER NOT NULL,\n"                                                                   \
    "  dist REAL NOT NULL,\n"                                                                      \
    "  PRIMARY KEY (kdist_id, seq)\n"                                                              \
    ");\n"

int store_kdist_tables(store *st)
{
    return store_exec(st, KDIST_DDL, "creating the k-distance tables");
}

static int kd_insert(store *st, const store_kdist_rec *r, int64_t *id)
{
    const char *what = "storing the k-distance curve";
    const kdist_curve *c = r->curve;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "INSERT INTO kdists(session_id, command_id, dataset_id, at, engine, "
                      "precision, k, n, npoints, knee_rank, knee_dist, knee_method, eps, seconds, "
                      "device, variant) VALUES(?1, ?2, ?3, " STORE_NOW
                      ", ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                      &s, what))
        return TCJ_ESTORE;
    store_bind_id(s, 1, r->session_id);
    store_bind_id(s, 2, r->command_id);
    store_bind_id(s, 3, r->dataset_id);
    store_bind_text(s, 4, r->engine);
    store_bind_text(s, 5, r->precision);
    sqlite3_bind_int(s, 6, c->k);
    store_bind_u64(s, 7, c->n);
    store_bind_u64(s, 8, c->npts);
    if (c->have_knee) {
        store_bind_u64(s, 9, c->rank[c->knee_point]);
        store_bind_real(s, 10, c->dist[c->knee_point]);
        store_bind_real(s, 12, c->eps);
    }
    store_bind_text(s, 11, c->knee_method);
    store_bind_real(s, 13, r->seconds);
    store_bind_text(s, 14, r->device);
    store_bind_text(s, 15, r->variant);
    if (store_step_done(st, s, what))
        return TCJ_ESTORE;
    *id = sqlite3_last_insert_rowid(st->db);
    if (store_prepare(st,
                      "INSERT INTO kdist_points(kdist_id, seq, rank, dist) VALUES(?1, ?2, ?3, ?4)",
                      &s, what))
        return TCJ_ESTORE;
    int rc = 0;
    for (size_t j = 0; j < c->npts && !rc; j++) {
        sqlite3_bind_int64(s, 1, *id);
        sqlite3_bind_int64(s, 2, (int64_t)j);
        store_bind_u64(s, 3, c->rank[j]);
        sqlite3_bind_double(s, 4, c->dist[j]);
        rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_fail(st, what);
        sqlite3_reset(s);
    }
    sqlite3_finalize(s);
    return rc;
}

int64_t store_kdist(store *st, const store_kdist_rec *r)
{
    if (store_kdist_tables(st))
        return TCJ_ESTORE;
    if (store_begin(st))
        return TCJ_ESTORE;
    int64_t id = 0;
    const int rc = kd_insert(st, r, &id); /* before id is read */
    return store_end_insert(st, rc, id);
}

int store_kdist_get(store *st, int64_t id, kdist_curve *c, char *engine, size_t engine_size)
{
    const char *what = "reading a k-distance curve";
    memset(c, 0, sizeof *c);
    if (store_kdist_tables(st))
        return TCJ_ESTORE;
    sqlite3_stmt *s;
    if (store_prepare(st,
                      "SELECT id, engine, k, n, knee_rank, knee_dist, knee_method, eps FROM kdists "
                      "WHERE id = ?1 OR (?1 <= 0 AND id = (SELECT max(id) FROM kdists))",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, id);
    int rc = sqlite3_step(s);
    if (rc != SQLITE_ROW) {
        sqlite3_finalize(s);
        if (rc != SQLITE_DONE)
            return store_fail(st, what);
        return id > 0 ? err_set(TCJ_EINVAL, "no k-distance curve %lld in the session log",
                                (long long)id)
                      : err_set(TCJ_EINVAL, "no k-distance curve in the session log");
    }
    int64_t kid = sqlite3_column_int64(s, 0);
    if (engine)
        snprintf(engine, engine_size, "%s", (const char *)sqlite3_column_text(s, 1));
    c->k = sqlite3_column_int(s, 2);
    c->n = (size_t)sqlite3_column_int64(s, 3);
    int knee = sqlite3_column_type(s, 4) != SQLITE_NULL;
    size_t knee_rank = (size_t)sqlite3_column_int64(s, 4);
    c->eps = sqlite3_column_double(s, 7);
    /* knee_method points at a static string, not at the statement's text */
    const char *m = (const char *)sqlite3_column_text(s, 6);
    c->knee_method = !m                          ? "none"
                     : strcmp(m, "kneedle") == 0 ? "kneedle"
                     : strcmp(m, "none") == 0    ? "none"
                                                 : "farthest below the chord";
    sqlite3_finalize(s);
    if (store_prepare(st, "SELECT rank, dist FROM kdist_points WHERE kdist_id = ?1 ORDER BY seq",
                      &s, what))
        return TCJ_ESTORE;
    sqlite3_bind_int64(s, 1, kid);
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && c->npts < KDIST_MAX_POINTS) {
        c->rank[c->npts] = (size_t)sqlite3_column_int64(s, 0);
        c->dist[c->npts] = sqlite3_column_double(s, 1);
        if (knee && c->rank[c->npts] == knee_rank) {
            c->have_knee = 1;
            c->knee_point = c->npts;
        }
        c->npts++;
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        return store_fail(st, what);
    if (c->have_knee)
        c->knee_d2 = c->dist[c->knee_point] * c->dist[c->knee_point];
    return 0;
}
