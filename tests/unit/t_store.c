/* The session log: path rules, opening, migrations from an older schema,
 * refusing a newer one, one transaction per write, queries and export. The
 * database is checked through a second, raw sqlite3 connection, and exports
 * are read back with a CSV and a JSON parser written here. */
#include "check.h"

#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "err.h"
#include "store.h"
#include "store_ranks.h"
#include "store_int.h"

/* ---- helpers ---- */

/* A fresh database path per test (files are never shared between tests). */
static const char *fresh_db(const char *name)
{
    const char *p = t_path(name);
    char wal[1100];
    remove(p);
    snprintf(wal, sizeof wal, "%s-wal", p);
    remove(wal);
    snprintf(wal, sizeof wal, "%s-shm", p);
    remove(wal);
    return p;
}

/* A read-only connection of its own and one statement on it. */
typedef struct raw {
    sqlite3 *db;
    sqlite3_stmt *s;
} raw;

/* The statement of sql stepped to its first row; NULL when there is none or
 * on any error. raw_close in every case. */
static sqlite3_stmt *raw_row(const char *path, const char *sql, raw *r)
{
    r->s = NULL;
    if (sqlite3_open_v2(path, &r->db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(r->db, sql, -1, &r->s, NULL) == SQLITE_OK &&
        sqlite3_step(r->s) == SQLITE_ROW)
        return r->s;
    return NULL;
}

static void raw_close(raw *r)
{
    sqlite3_finalize(r->s);
    sqlite3_close(r->db);
}

/* An integer from a raw connection of its own; -999 on any error. */
static int64_t raw_int(const char *path, const char *sql)
{
    raw r;
    sqlite3_stmt *s = raw_row(path, sql, &r);
    int64_t v = !s                                         ? -999
                : sqlite3_column_type(s, 0) == SQLITE_NULL ? -998
                                                           : sqlite3_column_int64(s, 0);
    raw_close(&r);
    return v;
}

static double raw_real(const char *path, const char *sql)
{
    raw r;
    sqlite3_stmt *s = raw_row(path, sql, &r);
    double v = s ? sqlite3_column_double(s, 0) : NAN;
    raw_close(&r);
    return v;
}

/* Text of the first column of the first row (static buffer), NULL if none. */
static const char *raw_text(const char *path, const char *sql)
{
    static char buf[1024];
    raw r;
    sqlite3_stmt *s = raw_row(path, sql, &r);
    const char *t = s ? (const char *)sqlite3_column_text(s, 0) : NULL;
    if (t)
        snprintf(buf, sizeof buf, "%s", t);
    raw_close(&r);
    return t ? buf : NULL;
}

static int raw_exec(const char *path, const char *sql)
{
    sqlite3 *db;
    int rc = sqlite3_open(path, &db);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    sqlite3_close(db);
    return rc;
}

/* Rows handed to a store_row_fn, copied. */
#define RS_ROWS 256
#define RS_COLS 48
typedef struct rowset {
    int n, stop_after;
    int ncol[RS_ROWS];
    char *name[RS_ROWS][RS_COLS];
    char *val[RS_ROWS][RS_COLS];
} rowset;

static int collect(void *ctx, int ncol, const char *const *names, const char *const *vals)
{
    rowset *rs = ctx;
    if (rs->n >= RS_ROWS)
        return 1;
    int r = rs->n++;
    rs->ncol[r] = ncol < RS_COLS ? ncol : RS_COLS;
    for (int i = 0; i < rs->ncol[r]; i++) {
        rs->name[r][i] = xstrdup(names[i]);
        rs->val[r][i] = vals[i] ? xstrdup(vals[i]) : NULL;
    }
    return rs->stop_after && rs->n >= rs->stop_after;
}

static void rs_free(rowset *rs)
{
    for (int r = 0; r < rs->n; r++)
        for (int i = 0; i < rs->ncol[r]; i++) {
            free(rs->name[r][i]);
            free(rs->val[r][i]);
        }
    rs->n = 0;
}

static const char RS_MISSING[] = "<no such column>";

/* Value of column `name` in row r: NULL for SQL NULL, RS_MISSING if absent. */
static const char *rs_get(const rowset *rs, int r, const char *name)
{
    if (r < 0 || r >= rs->n)
        return RS_MISSING;
    for (int i = 0; i < rs->ncol[r]; i++)
        if (strcmp(rs->name[r][i], name) == 0)
            return rs->val[r][i];
    return RS_MISSING;
}

static int rs_is(const rowset *rs, int r, const char *name, const char *want)
{
    const char *v = rs_get(rs, r, name);
    if (!want)
        return v == NULL;
    return v && v != RS_MISSING && strcmp(v, want) == 0;
}

/* Rows whose "section" is sec: count, and index of the k-th. */
static int rs_section(const rowset *rs, const char *sec, int k)
{
    for (int r = 0; r < rs->n; r++)
        if (rs_is(rs, r, "section", sec) && k-- == 0)
            return r;
    return -1;
}

static int rs_count(const rowset *rs, const char *sec)
{
    int n = 0;
    while (rs_section(rs, sec, n) >= 0)
        n++;
    return n;
}

static double num(const char *s)
{
    return s && s != RS_MISSING ? strtod(s, NULL) : NAN;
}

static store *open_ok(const char *path)
{
    store *st = NULL;
    int rc = store_open(path, &st);
    if (rc) {
        printf("# store_open(%s): %d %s\n", path, rc, err_msg());
        return NULL;
    }
    return st;
}

/* A CPU-like result: two phases, three metrics (one not available). */
static void sample_result(join_result *res, uint64_t pairs)
{
    memset(res, 0, sizeof *res);
    res->pairs = pairs;
    res->seconds = 0.75;
    res->kernel_seconds = 0.5;
    join_result_phase(res, "convert", 0.125);
    join_result_phase(res, "kernel", 0.5);
    join_result_metric(res, "sm_clock_mhz.max", 1980, "MHz");
    join_result_metric(res, "dram_throughput", 61.5, "%");
    join_result_metric(res, "power_w.mean", NAN, "W");
    res->d_padded = 64;
    snprintf(res->device, sizeof res->device, "test CPU");
    snprintf(res->variant, sizeof res->variant, "blocked");
    snprintf(res->precision, sizeof res->precision, "fp64");
}

static store_run_rec sample_rec(int64_t session, int64_t dataset, const join_result *res)
{
    store_run_rec r = {0};
    r.session_id = session;
    r.dataset_id = dataset;
    r.engine = "cpu";
    r.mode = "count";
    r.options = "threads=2";
    r.eps = 0.25;
    r.q0 = 0;
    r.q1 = 100;
    r.n = 100;
    r.d = 8;
    r.dtype = "f16";
    r.res = res;
    r.selectivity = 11.34;
    r.tflops_padded = 0.0125;
    r.tflops_unpadded = 0.0015625;
    return r;
}

/* ---- path rules ---- */

/* A judged comparison side with these numbers and bins (the rest 0). */
static cmp_side side_with(const char *engine, int64_t run, double overlap, uint64_t both,
                          uint64_t only_engine, uint64_t only_ref, size_t nbins, const double *lo,
                          const double *hi, const uint64_t *cnt)
{
    cmp_side sd;
    memset(&sd, 0, sizeof sd);
    sd.engine = engine;
    sd.run_id = run;
    sd.judged = 1;
    sd.overlap = overlap;
    sd.both = both;
    sd.only_engine = only_engine;
    sd.only_ref = only_ref;
    sd.nbins = nbins;
    for (size_t k = 0; k < nbins && k < CMP_ERR_BINS; k++) {
        sd.bin_lo[k] = lo[k];
        sd.bin_hi[k] = hi[k];
        sd.bin_count[k] = cnt[k];
    }
    return sd;
}

static char *save_env(const char *name)
{
    const char *v = getenv(name);
    return v ? xstrdup(v) : NULL;
}

static void restore_env(const char *name, char *v)
{
    if (v)
        setenv(name, v, 1);
    else
        unsetenv(name);
    free(v);
}

static int path_is(const char *want)
{
    char *p = store_default_path();
    int ok = p && strcmp(p, want) == 0;
    if (!ok)
        printf("# default path %s, expected %s\n", p ? p : "(null)", want);
    free(p);
    return ok;
}

TEST(default_path_rules)
{
    char *db = save_env("TCJOIN_DB"), *xdg = save_env("XDG_DATA_HOME"), *home = save_env("HOME");
    int ok = 1;
    setenv("TCJOIN_DB", "/some/where/log.db", 1);
    setenv("XDG_DATA_HOME", "/xdg/data", 1);
    ok &= path_is("/some/where/log.db");
    setenv("TCJOIN_DB", "", 1); /* empty counts as unset */
    ok &= path_is("/xdg/data/tcjoin/sessions.db");
    unsetenv("TCJOIN_DB");
    setenv("XDG_DATA_HOME", "/xdg/data/", 1);
    ok &= path_is("/xdg/data/tcjoin/sessions.db");
    setenv("HOME", "/home/someone", 1);
    setenv("XDG_DATA_HOME", "relative/data", 1); /* invalid per the XDG spec */
    ok &= path_is("/home/someone/.local/share/tcjoin/sessions.db");
    unsetenv("XDG_DATA_HOME");
    ok &= path_is("/home/someone/.local/share/tcjoin/sessions.db");
    restore_env("TCJOIN_DB", db);
    restore_env("XDG_DATA_HOME", xdg);
    restore_env("HOME", home);
    CHECK(ok);
}

TEST(open_default_creates_parents_and_wal)
{
    char *db = save_env("TCJOIN_DB"), *xdg = save_env("XDG_DATA_HOME");
    unsetenv("TCJOIN_DB");
    setenv("XDG_DATA_HOME", t_path("xdg/deep"), 1);
    store *st = NULL;
    int rc = store_open(NULL, &st);
    restore_env("TCJOIN_DB", db);
    restore_env("XDG_DATA_HOME", xdg);
    CHECK_MSG(rc == 0, "store_open: %s", err_msg());
    const char *want = t_path("xdg/deep/tcjoin/sessions.db");
    CHECK(strcmp(store_path(st), want) == 0);
    struct stat sb;
    CHECK(stat(t_path("xdg/deep/tcjoin"), &sb) == 0 && S_ISDIR(sb.st_mode));
    CHECK_EQ_INT(sb.st_mode & 0777, 0700);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);

    rowset rs = {0};
    CHECK_EQ_INT(store_query(st, "PRAGMA journal_mode", NULL, 0, collect, &rs), 0);
    CHECK(rs.n == 1 && rs.val[0][0] && strcmp(rs.val[0][0], "wal") == 0);
    rs_free(&rs);
    CHECK_EQ_INT(store_query(st, "PRAGMA foreign_keys", NULL, 0, collect, &rs), 0);
    CHECK(rs.n == 1 && rs.val[0][0] && strcmp(rs.val[0][0], "1") == 0);
    rs_free(&rs);
    store_close(st);
    /* The file itself says so, to any other connection. */
    CHECK(strcmp(raw_text(want, "PRAGMA journal_mode"), "wal") == 0);
    CHECK_EQ_INT(raw_int(want, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(want, "PRAGMA application_id"), STORE_APPLICATION_ID);
    /* Opening again changes nothing. */
    st = open_ok(want);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    store_close(st);
}

/* ---- migrations ---- */

/* A database as the version-1 program left it, with one run in it. */
static int make_v1(const char *path)
{
    const char *rows =
        "PRAGMA user_version = 1;"
        "INSERT INTO sessions(started, argv, version, host) "
        "  VALUES('2025-01-01T00:00:00.000Z', 'tcjoin -e run', '0.1', 'box');"
        "INSERT INTO datasets(path, name, format, n, d, hash, first_seen) "
        "  VALUES('/data/x.fvecs', 'x.fvecs', 'fvecs', 100, 8, '00000000deadbeef',"
        "         '2025-01-01T00:00:00.000Z');"
        "INSERT INTO commands(session_id, at, line, status, seconds) "
        "  VALUES(1, '2025-01-01T00:00:01.000Z', 'run cpu', 0, 0.5);"
        "INSERT INTO runs(session_id, command_id, dataset_id, at, engine, precision, mode, eps,"
        "  q0, q1, n, d, options, device, status, pairs, selectivity, seconds)"
        "  VALUES(1, 1, 1, '2025-01-01T00:00:01.000Z', 'cpu', 'fp64', 'count', 0.25, 0, 100,"
        "         100, 8, 'threads=2', 'x86', 0, 1234, 11.34, 0.5);"
        "INSERT INTO run_phases(run_id, seq, name, seconds) VALUES(1, 0, 'kernel', 0.4);";
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    int rc = sqlite3_exec(db, store_migration_sql(1), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, rows, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        printf("# v1: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

TEST(migrate_v1_forward)
{
    const char *path = fresh_db("v1.db");
    CHECK_EQ_INT(make_v1(path), SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'counters'"), 0);
    CHECK(strcmp(raw_text(path, "PRAGMA journal_mode"), "delete") == 0);

    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK(strcmp(raw_text(path, "PRAGMA journal_mode"), "wal") == 0);

    /* The old row is intact; the columns version 2 added are NULL in it. */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 1);
    CHECK(strcmp(raw_text(path, "SELECT engine FROM runs WHERE id = 1"), "cpu") == 0);
    CHECK(strcmp(raw_text(path, "SELECT options FROM runs WHERE id = 1"), "threads=2") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 1"), 1234);
    CHECK_NEAR(raw_real(path, "SELECT eps FROM runs WHERE id = 1"), 0.25, 0);
    CHECK_NEAR(raw_real(path, "SELECT selectivity FROM runs WHERE id = 1"), 11.34, 0);
    CHECK_EQ_INT(raw_int(path, "SELECT d_padded FROM runs WHERE id = 1"), -998);
    CHECK_EQ_INT(raw_int(path, "SELECT tflops_padded FROM runs WHERE id = 1"), -998);
    CHECK_NEAR(raw_real(path, "SELECT seconds FROM run_phases WHERE run_id = 1"), 0.4, 0);

    /* The listing reads the old run. */
    rowset rs = {0};
    CHECK_EQ_INT(store_runs(st, 10, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 1);
    CHECK(rs_is(&rs, 0, "dataset", "x.fvecs"));
    CHECK(rs_is(&rs, 0, "pairs", "1234"));
    CHECK(rs_is(&rs, 0, "tflops", NULL));
    rs_free(&rs);

    /* The new tables work, also for the old run. */
    CHECK_EQ_INT(store_counter(st, 1, "sm_clock_mhz.mean", 1410, "MHz"), 0);
    CHECK_NEAR(raw_real(path, "SELECT value FROM counters WHERE run_id = 1"), 1410, 0);
    join_result res;
    sample_result(&res, 2000);
    store_run_rec r = sample_rec(1, 1, &res);
    int64_t run2 = store_run(st, &r);
    CHECK_EQ_INT(run2, 2);
    CHECK_EQ_INT(raw_int(path, "SELECT d_padded FROM runs WHERE id = 2"), 64);
    double lo[1] = {-1e-6}, hi[1] = {1e-6};
    uint64_t cnt[1] = {1234};
    static cmp_side sa, sb;
    sa = side_with("cpu-fp16", 2, 0.99, 0, 0, 0, 1, lo, hi, cnt);
    cmp_side_ref(&sb, "cpu", 1);
    store_cmp_rec c = {.session_id = 1, .eps = 0.25, .side = {&sa, &sb}};
    CHECK(store_comparison(st, &c) > 0);
    int64_t sw = store_sweep_begin(st, 1, 1, "cpu", "solve", 64, 0.005);
    CHECK(sw > 0);
    CHECK_EQ_INT(store_sweep_step(st, sw, 0, "sample", 0.2, 60, 6100, 0.01), 0);

    /* The dataset row of version 1 is found again by path and hash. */
    dataset ds = {.name = "x.fvecs",
                  .path = "/data/x.fvecs",
                  .format = "fvecs",
                  .n = 100,
                  .d = 8,
                  .hash = 0xdeadbeefULL};
    CHECK_EQ_INT(store_dataset(st, &ds), 1);
    store_close(st);
}

/* A database as the version-2 program left it: the v1 rows, a second run
 * and a comparison of the two (B the reference) with two histogram bins. */
static int make_v2(const char *path)
{
    int rc = make_v1(path);
    const char *rows =
        "PRAGMA user_version = 2;"
        "INSERT INTO runs(session_id, command_id, dataset_id, at, engine, precision, mode, eps,"
        "  q0, q1, n, d, status, pairs, selectivity, seconds, d_padded)"
        "  VALUES(1, 1, 1, '2025-01-01T00:00:02.000Z', 'cpu-fp16', 'fp16-32', 'count', 0.25,"
        "         0, 100, 100, 8, 0, 1230, 11.3, 0.2, 8);"
        "INSERT INTO comparisons(session_id, run_a, run_b, engine_a, engine_b, eps, overlap,"
        "  err_mean, err_std, err_min, err_max, both, only_a, only_b, only_a_rel_max,"
        "  only_b_rel_max, at)"
        "  VALUES(1, 2, 1, 'cpu-fp16', 'cpu', 0.25, 0.995, 1e-7, 2e-6, -4e-6, 5e-6, 1220, 10,"
        "         14, 2e-4, 3e-4, '2025-01-01T00:00:03.000Z');"
        "INSERT INTO histogram_bins(comparison_id, bin, lo, hi, count)"
        "  VALUES(1, 0, -1e-5, 0, 600), (1, 1, 0, 1e-5, 620);";
    sqlite3 *db;
    if (rc != SQLITE_OK || sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    rc = sqlite3_exec(db, store_migration_sql(2), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, rows, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        printf("# v2: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

/* The whole text of a small file (static buffer). */
static const char *slurp_small(const char *path)
{
    static char buf[1 << 16];
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return buf;
}

TEST(migrate_v2_forward)
{
    const char *path = fresh_db("v2.db");
    CHECK_EQ_INT(make_v2(path), SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), 2);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);

    /* The old comparison names its reference: B, as version 2 meant; its
     * numbers are side a's now, B keeps its engine and run. */
    CHECK(strcmp(raw_text(path, "SELECT ref_engine FROM comparisons WHERE id = 1"), "cpu") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT run_ref FROM comparisons WHERE id = 1"), 1);
    CHECK_NEAR(raw_real(path, "SELECT overlap FROM comparison_sides WHERE comparison_id = 1 "
                              "AND side = 'a'"),
               0.995, 0);
    CHECK_EQ_INT(raw_int(path, "SELECT only_ref FROM comparison_sides WHERE comparison_id = 1 "
                               "AND side = 'a'"),
                 14);
    CHECK_EQ_INT(raw_int(path, "SELECT run_id FROM comparison_sides WHERE comparison_id = 1 "
                               "AND side = 'b'"),
                 1);
    CHECK_EQ_INT(raw_int(path, "SELECT overlap IS NULL FROM comparison_sides WHERE "
                               "comparison_id = 1 AND side = 'b'"),
                 1);
    /* Its bins survived the rebuilds as side a, in order. */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM histogram_bins"), 2);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM histogram_bins WHERE side = 'a'"), 2);
    CHECK_EQ_INT(raw_int(path, "SELECT count FROM histogram_bins WHERE bin = 1"), 620);
    CHECK_NEAR(raw_real(path, "SELECT lo FROM histogram_bins WHERE bin = 0"), -1e-5, 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparison_sides"), 2);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v3' OR "
                               "name LIKE '%_v4'"),
                 0);
    /* Deleting the comparison still takes its bins and sides along. */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_list('histogram_bins') "
                               "WHERE \"table\" = 'comparisons' AND on_delete = 'CASCADE'"),
                 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_list('comparison_sides') "
                               "WHERE \"table\" = 'comparisons' AND on_delete = 'CASCADE'"),
                 1);

    /* A comparison of two engines against a third: runs 1 (cpu, the
     * reference), 2 (cpu-fp16, A) and 3 (B). Same bin numbers on both
     * sides. */
    join_result res;
    sample_result(&res, 1231);
    store_run_rec r = sample_rec(1, 1, &res);
    r.engine = "cpu-fp16";
    int64_t run3 = store_run(st, &r);
    CHECK_EQ_INT(run3, 3);
    double lo[2] = {-1e-5, 0}, hi[2] = {0, 1e-5}, blo[1] = {-2e-5}, bhi[1] = {2e-5};
    uint64_t cnt[2] = {610, 612}, bcnt[1] = {1229};
    static cmp_side sa, sb;
    sa = side_with("cpu-fp16", 2, 0.99, 1222, 8, 12, 2, lo, hi, cnt);
    sb = side_with("cpu-fp16", 3, 0.993, 1229, 2, 5, 1, blo, bhi, bcnt);
    sb.err_mean = -3e-7;
    sb.only_ref_rel_max = 4e-4;
    store_cmp_rec c = {
        .session_id = 1, .run_ref = 1, .ref_engine = "cpu", .eps = 0.25, .side = {&sa, &sb}};
    int64_t cid = store_comparison(st, &c);
    CHECK_EQ_INT(cid, 2);
    CHECK(strcmp(raw_text(path, "SELECT ref_engine FROM comparisons WHERE id = 2"), "cpu") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT run_ref FROM comparisons WHERE id = 2"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT run_id FROM comparison_sides WHERE comparison_id = 2 "
                               "AND side = 'b'"),
                 3);
    CHECK_NEAR(raw_real(path, "SELECT overlap FROM comparison_sides WHERE comparison_id = 2 "
                              "AND side = 'b'"),
               0.993, 0);
    CHECK_EQ_INT(raw_int(path, "SELECT only_ref FROM comparison_sides WHERE comparison_id = 2 "
                               "AND side = 'b'"),
                 5);
    CHECK_EQ_INT(raw_int(path, "SELECT only_ref FROM comparison_sides WHERE comparison_id = 2 "
                               "AND side = 'a'"),
                 12);
    CHECK_EQ_INT(raw_int(path, "SELECT count FROM histogram_bins WHERE comparison_id = 2 AND "
                               "side = 'b' AND bin = 0"),
                 1229);
    CHECK_EQ_INT(raw_int(path, "SELECT sum(count) FROM histogram_bins WHERE comparison_id = 2 "
                               "AND side = 'a'"),
                 1222);

    /* A side b whose bins fail leaves nothing of the comparison. */
    sb.bin_lo[0] = NAN;
    CHECK_EQ_INT(store_comparison(st, &c), TCJ_ESTORE);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparisons"), 2);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparison_sides"), 4);
    sb.bin_lo[0] = -2e-5;

    /* show run: the reference's run sees the comparison as ref; B's run
     * gets both side rows and both sides' bins. */
    rowset rs = {0};
    CHECK_EQ_INT(store_show_run(st, 1, collect, &rs), 0);
    CHECK_EQ_INT(rs_count(&rs, "comparison"), 2);
    CHECK(rs_is(&rs, rs_section(&rs, "comparison", 0), "role", "b"));
    CHECK(rs_is(&rs, rs_section(&rs, "comparison", 1), "role", "ref"));
    rs_free(&rs);
    CHECK_EQ_INT(store_show_run(st, 3, collect, &rs), 0);
    CHECK_EQ_INT(rs_count(&rs, "comparison"), 1);
    int k = rs_section(&rs, "comparison", 0);
    CHECK(rs_is(&rs, k, "role", "b") && rs_is(&rs, k, "ref_engine", "cpu"));
    CHECK_EQ_INT(rs_count(&rs, "side"), 2);
    k = rs_section(&rs, "side", 1);
    CHECK(rs_is(&rs, k, "side", "b") && rs_is(&rs, k, "only_engine", "2"));
    CHECK_EQ_INT(rs_count(&rs, "bin"), 3);
    CHECK(rs_is(&rs, rs_section(&rs, "bin", 2), "side", "b"));
    CHECK(rs_is(&rs, rs_section(&rs, "bin", 2), "count", "1229"));
    rs_free(&rs);

    /* export: both sides nested in the same shape; the old comparison's
     * side b is the reference, its accuracy null. */
    const char *out = t_path("v2-export.json");
    CHECK_EQ_INT(store_export(st, 3, "json", out), 0);
    const char *j = slurp_small(out);
    CHECK_STR_CONTAINS(j, "\"ref\":{\"engine\":\"cpu\",\"run_id\":1,\"accuracy\":null}");
    CHECK_STR_CONTAINS(j, "\"b\":{\"engine\":\"cpu-fp16\",\"run_id\":3,\"accuracy\":"
                          "{\"overlap\":0.993");
    CHECK_STR_CONTAINS(j, "\"histogram\":[{\"lo\":-2e-05,\"hi\":2e-05,\"count\":1229}]}}}]}");
    CHECK_EQ_INT(store_export(st, 1, "json", out), 0);
    j = slurp_small(out);
    CHECK_STR_CONTAINS(j, "\"role\":\"b\"");
    CHECK_STR_CONTAINS(j, "\"count\":620}]}}");
    CHECK_STR_CONTAINS(j, "\"b\":{\"engine\":\"cpu\",\"run_id\":1,\"accuracy\":null}");
    store_close(st);
}

/* A database as the version-3 program left it, built with the migrations
 * of that time: three runs (1 cpu, 2 cpu-fp16, 3 fasted), a comparison
 * with B the reference (comparison 1: A's numbers on the comparisons row,
 * bins on side a) and one of two engines against a third (comparison 2:
 * B's numbers in comparison_sides side 'b', bins on both sides), and one
 * with nothing measured (comparison 3: NULL numbers, no bins). */
static int make_v3(const char *path)
{
    const char *rows =
        "PRAGMA user_version = 3;"
        "INSERT INTO sessions(id, started) VALUES(1, '2026-01-01T00:00:00.000Z');"
        "INSERT INTO runs(id, session_id, at, engine, eps, pairs) VALUES"
        "  (1, 1, '2026-01-01T00:00:01.000Z', 'cpu', 0.5, 1000),"
        "  (2, 1, '2026-01-01T00:00:02.000Z', 'cpu-fp16', 0.5, 998),"
        "  (3, 1, '2026-01-01T00:00:03.000Z', 'fasted', 0.5, 1003);"
        "INSERT INTO comparisons(id, session_id, run_a, run_b, engine_a, engine_b, eps,"
        "  overlap, err_mean, err_std, err_min, err_max, both, only_a, only_b, only_a_rel_max,"
        "  only_b_rel_max, at, ref_engine, run_ref) VALUES"
        "  (1, 1, 2, 1, 'cpu-fp16', 'cpu', 0.5, 0.9975, 1.25e-7, 3.5e-6, -9.5e-6, 8.25e-6,"
        "   990, 8, 10, 1.5e-4, 2.5e-4, '2026-01-01T00:00:04.000Z', 'cpu', 1),"
        "  (2, 1, 2, 3, 'cpu-fp16', 'fasted', 0.5, 0.9975, 1.25e-7, 3.5e-6, -9.5e-6, 8.25e-6,"
        "   990, 8, 10, 1.5e-4, 2.5e-4, '2026-01-01T00:00:05.000Z', 'cpu', 1),"
        "  (3, NULL, NULL, NULL, 'x', 'y', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
        "   NULL, NULL, NULL, '2026-01-01T00:00:06.000Z', 'y', NULL);"
        "INSERT INTO comparison_sides(comparison_id, side, engine, run_id, overlap, err_mean,"
        "  err_std, err_min, err_max, both, only_engine, only_ref, only_engine_rel_max,"
        "  only_ref_rel_max) VALUES (2, 'b', 'fasted', 3, 0.9925, -2.5e-7, 4.5e-6, -1.25e-5,"
        "  1.5e-5, 995, 8, 5, 3.25e-4, 4.75e-4),"
        /* a side a row no version-3 writer made: the comparisons row wins */
        "  (1, 'a', 'stale', 2, 0.5, 0, 0, 0, 0, 1, 1, 1, 0, 0);"
        "INSERT INTO histogram_bins(comparison_id, side, bin, lo, hi, count) VALUES"
        "  (1, 'a', 0, -1e-5, 0, 500), (1, 'a', 1, 0, 1e-5, 490),"
        "  (2, 'a', 0, -1e-5, 0, 501), (2, 'a', 1, 0, 1e-5, 489),"
        "  (2, 'b', 0, -2e-5, 2e-5, 995);";
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK)
        return -1;
    int rc = SQLITE_OK;
    for (int v = 1; v <= 3 && rc == SQLITE_OK; v++)
        rc = sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, rows, NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        printf("# v3: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc;
}

/* Every column of one comparison side, as text ("NULL" for NULL), in a
 * fixed order: what the v3 file held must read back the same. */
static const char *side_text(const char *path, int64_t cid, const char *side)
{
    char sql[600];
    snprintf(sql, sizeof sql,
             "SELECT engine || '|' || coalesce(run_id, 'NULL') || '|' || "
             "coalesce(quote(overlap), 'NULL') || '|' || coalesce(quote(err_mean), 'NULL') || "
             "'|' || coalesce(quote(err_std), 'NULL') || '|' || coalesce(quote(err_min), "
             "'NULL') || '|' || coalesce(quote(err_max), 'NULL') || '|' || coalesce(both, "
             "'NULL') || '|' || coalesce(only_engine, 'NULL') || '|' || coalesce(only_ref, "
             "'NULL') || '|' || coalesce(quote(only_engine_rel_max), 'NULL') || '|' || "
             "coalesce(quote(only_ref_rel_max), 'NULL') FROM comparison_sides WHERE "
             "comparison_id = %lld AND side = '%s'",
             (long long)cid, side);
    const char *t = raw_text(path, sql);
    return t ? t : "<no row>";
}

TEST(migrate_v3_forward)
{
    const char *path = fresh_db("v3.db");
    CHECK_EQ_INT(make_v3(path), SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), 3);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);

    /* What has no side stays on the comparison; nothing else does. */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparisons"), 3);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_table_info('comparisons') WHERE "
                               "name IN ('engine_a', 'engine_b', 'run_a', 'run_b', 'overlap', "
                               "'only_a', 'only_b', 'err_mean', 'both')"),
                 0);
    CHECK_NEAR(raw_real(path, "SELECT eps FROM comparisons WHERE id = 2"), 0.5, 0);
    CHECK(strcmp(raw_text(path, "SELECT at FROM comparisons WHERE id = 2"),
                 "2026-01-01T00:00:05.000Z") == 0);
    CHECK(strcmp(raw_text(path, "SELECT ref_engine FROM comparisons WHERE id = 3"), "y") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT run_ref IS NULL FROM comparisons WHERE id = 3"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT run_ref FROM comparisons WHERE id = 1"), 1);

    /* Side a: the old comparisons row, column for column. */
    const char *a1 = "cpu-fp16|2|0.9975|1.25e-07|3.5e-06|-9.5e-06|8.25e-06|990|8|10|0.00015|"
                     "0.00025";
    CHECK_MSG(strcmp(side_text(path, 1, "a"), a1) == 0, "%s", side_text(path, 1, "a"));
    CHECK_MSG(strcmp(side_text(path, 2, "a"), a1) == 0, "%s", side_text(path, 2, "a"));
    /* Side b of comparison 1 is the reference: engine and run only. */
    CHECK(strcmp(side_text(path, 1, "b"),
                 "cpu|1|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL") == 0);
    /* Side b of comparison 2: the old side row as it was. */
    CHECK_MSG(strcmp(side_text(path, 2, "b"), "fasted|3|0.9925|-2.5e-07|4.5e-06|-1.25e-05|"
                                              "1.5e-05|995|8|5|0.000325|0.000475") == 0,
              "%s", side_text(path, 2, "b"));
    CHECK(strcmp(side_text(path, 3, "a"), "x|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|"
                                          "NULL") == 0);
    CHECK(strcmp(side_text(path, 3, "b"), "y|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|NULL|"
                                          "NULL") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparison_sides"), 6);
    /* Every bin, on its side, in order. */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM histogram_bins"), 5);
    const char *bins = raw_text(path, "SELECT group_concat(comparison_id || side || bin || ':' "
                                      "|| quote(lo) || ',' || quote(hi) || ',' || count, ' ') "
                                      "FROM (SELECT * FROM histogram_bins ORDER BY "
                                      "comparison_id, side, bin)");
    CHECK_MSG(bins && strcmp(bins, "1a0:-1.0e-05,0.0,500 1a1:0.0,1.0e-05,490 2a0:-1.0e-05,0.0,"
                                   "501 2a1:0.0,1.0e-05,489 2b0:-2.0e-05,2.0e-05,995") == 0,
              "%s", bins ? bins : "(none)");
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE '%_v4'"), 0);

    /* Read back through the store: show run and export see both sides. */
    rowset rs = {0};
    CHECK_EQ_INT(store_show_run(st, 2, collect, &rs), 0);
    CHECK_EQ_INT(rs_count(&rs, "comparison"), 2);
    CHECK_EQ_INT(rs_count(&rs, "side"), 4);
    CHECK_EQ_INT(rs_count(&rs, "bin"), 5);
    rs_free(&rs);
    const char *out = t_path("v3-export.json");
    CHECK_EQ_INT(store_export(st, 3, "json", out), 0);
    const char *j = slurp_small(out);
    CHECK_STR_CONTAINS(j, "\"a\":{\"engine\":\"cpu-fp16\",\"run_id\":2,\"accuracy\":{\"overlap\":"
                          "0.9975,\"both\":990,\"only_engine\":8,\"only_ref\":10,\"err_mean\":"
                          "1.25e-07,\"err_std\":3.5e-06,\"err_min\":-9.5e-06,\"err_max\":"
                          "8.25e-06,\"only_engine_rel_max\":0.00015,\"only_ref_rel_max\":"
                          "0.00025,\"histogram\":[{\"lo\":-1e-05,\"hi\":0,\"count\":501},"
                          "{\"lo\":0,\"hi\":1e-05,\"count\":489}]}}");
    CHECK_STR_CONTAINS(j, "\"b\":{\"engine\":\"fasted\",\"run_id\":3,\"accuracy\":{\"overlap\":"
                          "0.9925");
    store_close(st);
    /* Deleting a migrated comparison takes its sides and bins along. */
    CHECK_EQ_INT(raw_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM comparisons WHERE id = 2"),
                 SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparison_sides WHERE comparison_id = 2"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM histogram_bins WHERE comparison_id = 2"), 0);
}

/* Version 4 to 5 adds the precision lab's tables and leaves every row as
 * it was; a lab row points at its run and comparison and goes with its
 * lab. */
TEST(migrate_v4_forward_labs)
{
    const char *path = fresh_db("v4.db");
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    int rc = SQLITE_OK;
    for (int v = 1; v <= 4 && rc == SQLITE_OK; v++)
        rc = sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "PRAGMA user_version = 4;"
                          "INSERT INTO sessions(started) VALUES('2026-01-01T00:00:00.000Z');"
                          "INSERT INTO runs(session_id, at, engine, eps, pairs) "
                          "  VALUES(1, '2026-01-01T00:00:01.000Z', 'cpu', 0.5, 120);"
                          "INSERT INTO comparisons(session_id, eps, ref_engine, run_ref, at) "
                          "  VALUES(1, 0.5, 'cpu', 1, '2026-01-01T00:00:02.000Z');",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK_EQ_INT(rc, SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'labs'"), 0);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 1"), 120);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparisons"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM labs"), 0);

    store_lab_rec lr = {.session_id = 1,
                        .run_ref = 1,
                        .eps = 0.5,
                        .min_overlap = 0.9999,
                        .ref_engine = "cpu",
                        .baseline = "fp16"};
    int64_t id = store_lab_begin(st, &lr);
    CHECK_EQ_INT(id, 1);
    lab_row w;
    lab_row_init(&w);
    snprintf(w.format, sizeof w.format, "fp16");
    snprintf(w.engine, sizeof w.engine, "cpu-fp16");
    w.bits = 16;
    w.run_id = 1;
    w.comparison_id = 1;
    CHECK_EQ_INT(store_lab_row(st, id, 0, &w), 0);
    w.status = LAB_REFUSED;
    snprintf(w.format, sizeof w.format, "ue5m3");
    snprintf(w.reason, sizeof w.reason, "cpu-ue5m3: negative");
    w.comparison_id = 0;
    CHECK_EQ_INT(store_lab_row(st, id, 1, &w), 0);
    /* A row's seq is its place: the same one twice is refused. */
    CHECK(store_lab_row(st, id, 1, &w) != 0);
    CHECK_EQ_INT(store_lab_end(st, id, "fp16", NULL), 0);
    CHECK_EQ_INT(store_lab_end(st, 7, NULL, NULL), TCJ_EINVAL);
    CHECK(
        strcmp(raw_text(path, "SELECT group_concat(format || ':' || status || ':' || "
                              "coalesce(reason, '-') || ':' || coalesce(comparison_id, '-'), ' ') "
                              "FROM lab_rows WHERE lab_id = 1"),
               "fp16:ok:-:1 ue5m3:refused:cpu-ue5m3: negative:-") == 0);
    CHECK(strcmp(raw_text(path, "SELECT chosen FROM labs WHERE id = 1"), "fp16") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT ended IS NOT NULL FROM labs WHERE id = 1"), 1);
    store_close(st);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    /* A status outside the four is refused by the table itself. */
    CHECK(raw_exec(path, "INSERT INTO lab_rows(lab_id, seq, format, engine, status) "
                         "VALUES(1, 5, 'x', 'y', 'maybe')") != SQLITE_OK);
    CHECK_EQ_INT(raw_exec(path, "PRAGMA foreign_keys = ON; DELETE FROM labs WHERE id = 1"),
                 SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM lab_rows"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 1);
}

/* Version 5 to 6 adds the runs' element type: a run stored before it keeps
 * every value and NULL for the type (it was not recorded); a new run
 * records the type it is given, and an unknown one stays NULL. */
TEST(migrate_v5_forward_dtype)
{
    const char *path = fresh_db("v5.db");
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    int rc = SQLITE_OK;
    for (int v = 1; v <= 5 && rc == SQLITE_OK; v++)
        rc = sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "PRAGMA user_version = 5;"
                          "INSERT INTO sessions(started) VALUES('2026-01-01T00:00:00.000Z');"
                          "INSERT INTO runs(session_id, at, engine, eps, pairs) "
                          "  VALUES(1, '2026-01-01T00:00:01.000Z', 'cpu', 0.5, 120);",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK_EQ_INT(rc, SQLITE_OK);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_table_info('runs') "
                               "WHERE name = 'dtype'"),
                 0);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 1"), 120);
    CHECK_EQ_INT(raw_int(path, "SELECT dtype IS NULL FROM runs WHERE id = 1"), 1);

    rowset rs = {0};
    CHECK_EQ_INT(store_show_run(st, 1, collect, &rs), 0);
    CHECK(rs_is(&rs, rs_section(&rs, "run", 0), "dtype", NULL));
    rs_free(&rs);

    join_result res;
    sample_result(&res, 77);
    store_run_rec r = sample_rec(1, 0, &res);
    r.dtype = "u8";
    CHECK_EQ_INT(store_run(st, &r), 2);
    r.dtype = NULL;
    CHECK_EQ_INT(store_run(st, &r), 3);
    CHECK(strcmp(raw_text(path, "SELECT group_concat(coalesce(dtype, '-'), ' ') FROM "
                                "(SELECT dtype FROM runs ORDER BY id)"),
                 "- u8 -") == 0);
    rs = (rowset){0};
    CHECK_EQ_INT(store_show_run(st, 2, collect, &rs), 0);
    CHECK(rs_is(&rs, rs_section(&rs, "run", 0), "dtype", "u8"));
    rs_free(&rs);
    store_close(st);
}

/* Version 6 to 7: the DBSCAN tables appear, older rows untouched; a
 * clustering round-trips through store_dbscan and store_dbscan_get, its
 * size bins cascade with it. */
TEST(migrate_v6_forward_dbscan)
{
    const char *path = fresh_db("v6.db");
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    int rc = SQLITE_OK;
    for (int v = 1; v <= 6 && rc == SQLITE_OK; v++)
        rc = sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "PRAGMA user_version = 6;"
                          "INSERT INTO sessions(started) VALUES('2026-01-01T00:00:00.000Z');"
                          "INSERT INTO runs(session_id, at, engine, eps, pairs) "
                          "  VALUES(1, '2026-01-01T00:00:01.000Z', 'cpu', 0.5, 120);",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK_EQ_INT(rc, SQLITE_OK);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 1"), 120);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM dbscans"), 0);

    dbscan_result res;
    memset(&res, 0, sizeof res);
    res.n = 100;
    res.clusters = 3;
    res.core = 60;
    res.border = 25;
    res.noise = 15;
    res.ntop = 3;
    res.top[0] = 50;
    res.top[1] = 30;
    res.top[2] = 5;
    res.size_hist[2] = 1; /* [4, 8) */
    res.size_hist[4] = 1; /* [16, 32) */
    res.size_hist[5] = 1; /* [32, 64) */
    res.seconds = 0.25;
    res.pass_seconds[0] = 0.125;
    dbscan_view v = {.engine = "cpu",
                     .precision = "fp64",
                     .dataset = "t",
                     .d = 4,
                     .eps = 0.5,
                     .minpts = 5,
                     .labels_path = "l.npy",
                     .res = &res};
    v.run_id[0] = 1;
    store_dbscan_rec r = {.session_id = 1, .view = &v};
    int64_t id = store_dbscan(st, &r);
    CHECK_EQ_INT(id, 1);
    store_dbscan_row *row = malloc(sizeof *row);
    CHECK_EQ_INT(store_dbscan_get(st, id, row), 0);
    CHECK(row->res.clusters == 3 && row->res.core == 60 && row->res.border == 25 &&
          row->res.noise == 15 && row->res.n == 100);
    CHECK(row->res.ntop == 3 && row->res.top[0] == 50 && row->res.top[2] == 5);
    CHECK(row->res.size_hist[2] == 1 && row->res.size_hist[4] == 1 && row->res.size_hist[5] == 1 &&
          row->res.size_hist[3] == 0);
    CHECK(row->view.run_id[0] == 1 && row->view.run_id[1] == 0 && row->view.eps == 0.5 &&
          row->view.minpts == 5 && row->res.seconds == 0.25);
    CHECK(strcmp(row->view.engine, "cpu") == 0 && strcmp(row->view.labels_path, "l.npy") == 0);
    CHECK_EQ_INT(store_dbscan_get(st, 99, row), TCJ_EINVAL);
    free(row);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM dbscan_sizes WHERE dbscan_id = 1"), 3);
    CHECK_EQ_INT(raw_int(path, "SELECT flags IS NULL FROM dbscans WHERE id = 1"), 1);
    store_close(st);
}

/* ---- MPI (schema 8): a run's ranks ---- */
TEST(migrate_v6_forward_run_ranks)
{
    const char *path = fresh_db("v6.db");
    sqlite3 *db;
    CHECK_EQ_INT(sqlite3_open(path, &db), SQLITE_OK);
    int rc = SQLITE_OK;
    for (int v = 1; v <= 6 && rc == SQLITE_OK; v++)
        rc = sqlite3_exec(db, store_migration_sql(v), NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db,
                          "PRAGMA user_version = 6;"
                          "INSERT INTO sessions(started) VALUES('2026-01-01T00:00:00.000Z');"
                          "INSERT INTO runs(session_id, at, engine, eps, pairs) "
                          "  VALUES(1, '2026-01-01T00:00:01.000Z', 'cpu', 0.5, 120);",
                          NULL, NULL, NULL);
    sqlite3_close(db);
    CHECK_EQ_INT(rc, SQLITE_OK);
    store *st = open_ok(path);
    CHECK(st);
    CHECK_EQ_INT(store_schema_version(st), STORE_SCHEMA_VERSION);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM run_ranks"), 0);
    store_rank_rec rr = {.run_id = 1,
                         .rank = 1,
                         .host = "h2",
                         .device = "cpu (2 threads)",
                         .rows = 700,
                         .parts = 5,
                         .pairs = 55,
                         .seconds = 0.25,
                         .status = 0};
    CHECK_EQ_INT(store_run_rank(st, &rr), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT rows + parts + pairs FROM run_ranks WHERE rank = 1"), 760);
    CHECK(strcmp(raw_text(path, "SELECT host FROM run_ranks"), "h2") == 0);
    store_close(st);
}
/* ---- end MPI ---- */

TEST(migration_failure_rolls_back)
{
    /* A v1 file where migration 2 fails half-way (after its ALTER TABLEs):
     * nothing of it may stay, and the version stays 1. */
    const char *path = fresh_db("v1-broken.db");
    CHECK_EQ_INT(make_v1(path), SQLITE_OK);
    CHECK_EQ_INT(raw_exec(path, "CREATE TABLE sweeps(x)"), SQLITE_OK);
    store *st = NULL;
    int rc = store_open(path, &st);
    CHECK_EQ_INT(rc, TCJ_ESTORE);
    CHECK(st == NULL);
    CHECK_STR_CONTAINS(err_msg(), path);
    CHECK_STR_CONTAINS(err_msg(), "migrating to schema version 2");
    CHECK_STR_CONTAINS(err_msg(), "sweeps");
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM pragma_table_info('runs') "
                               "WHERE name = 'd_padded'"),
                 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master WHERE name = 'counters'"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 1"), 1234);
}

TEST(newer_schema_refused)
{
    const char *path = fresh_db("future.db");
    char sql[200];
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d; PRAGMA user_version = %d; CREATE TABLE later(x);",
             STORE_APPLICATION_ID, STORE_SCHEMA_VERSION + 1);
    CHECK_EQ_INT(raw_exec(path, sql), SQLITE_OK);
    store *st = NULL;
    CHECK_EQ_INT(store_open(path, &st), TCJ_ESTORE);
    CHECK(st == NULL);
    CHECK_STR_CONTAINS(err_msg(), path);
    CHECK_STR_CONTAINS(err_msg(), "is newer than this tcjoin");
    char want[80];
    snprintf(want, sizeof want, "version %d", STORE_SCHEMA_VERSION + 1);
    CHECK_STR_CONTAINS(err_msg(), want);
    /* Nothing was written: version, journal mode and tables as they were. */
    CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION + 1);
    CHECK(strcmp(raw_text(path, "PRAGMA journal_mode"), "delete") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sqlite_master"), 1);
}

TEST(foreign_files_refused)
{
    store *st = NULL;
    /* Another program's database. */
    const char *other = fresh_db("other.db");
    CHECK_EQ_INT(raw_exec(other, "CREATE TABLE notes(x); INSERT INTO notes VALUES(1);"), SQLITE_OK);
    CHECK_EQ_INT(store_open(other, &st), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), other);
    CHECK_STR_CONTAINS(err_msg(), "not a tcjoin session log");
    CHECK_EQ_INT(raw_int(other, "SELECT count(*) FROM sqlite_master"), 1);
    const char *app = fresh_db("app.db");
    CHECK_EQ_INT(raw_exec(app, "PRAGMA application_id = 42"), SQLITE_OK);
    CHECK_EQ_INT(store_open(app, &st), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "application_id 0x2a");

    /* A text file. */
    const char *txt = t_path("notes.txt");
    FILE *f = fopen(txt, "w");
    CHECK(f);
    for (int i = 0; i < 100; i++)
        fputs("this is not a database at all\n", f);
    fclose(f);
    CHECK_EQ_INT(store_open(txt, &st), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), txt);
    CHECK_STR_CONTAINS(err_msg(), "not a database");

    /* A directory, and a directory path through a file. */
    CHECK_EQ_INT(store_open(t_tmpdir(), &st), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "is a directory");
    char bad[1100];
    snprintf(bad, sizeof bad, "%s/sub/s.db", txt);
    CHECK_EQ_INT(store_open(bad, &st), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), txt);
    CHECK(st == NULL);
}

/* ---- writes ---- */

TEST(run_roundtrip_and_show)
{
    const char *path = fresh_db("runs.db");
    store *st = open_ok(path);
    CHECK(st);
    int64_t ses = store_session_begin(st, "tcjoin -e 'run cpu'", "1.0", "host1");
    CHECK_EQ_INT(ses, 1);
    dataset ds = {.name = "uniform n=100 d=8",
                  .format = "synth",
                  .n = 100,
                  .d = 8,
                  .hash = 0xfedcba9876543210ULL};
    int64_t did = store_dataset(st, &ds);
    CHECK_EQ_INT(did, 1);
    CHECK(strcmp(raw_text(path, "SELECT hash FROM datasets"), "fedcba9876543210") == 0);
    int64_t cmd = store_command_begin(st, ses, "run cpu");
    CHECK(cmd > 0);
    CHECK_EQ_INT(raw_int(path, "SELECT status FROM commands"), -998); /* unfinished */

    join_result res;
    sample_result(&res, 1234);
    store_run_rec r = sample_rec(ses, did, &res);
    r.command_id = cmd;
    int64_t id = store_run(st, &r);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(store_command_end(st, cmd, 0, NULL, 0.8), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT status FROM commands"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT command_id FROM runs"), cmd);
    CHECK_EQ_INT(store_command_end(st, 99, 0, NULL, 0.1), TCJ_EINVAL);

    rowset rs = {0};
    CHECK_EQ_INT(store_show_run(st, id, collect, &rs), 0);
    CHECK_EQ_INT(rs_count(&rs, "run"), 1);
    int k = rs_section(&rs, "run", 0);
    CHECK(rs_is(&rs, k, "engine", "cpu"));
    CHECK(rs_is(&rs, k, "precision", "fp64")); /* from the result */
    CHECK(rs_is(&rs, k, "mode", "count"));
    CHECK(rs_is(&rs, k, "pairs", "1234"));
    CHECK(rs_is(&rs, k, "n", "100"));
    CHECK(rs_is(&rs, k, "d_padded", "64"));
    CHECK(rs_is(&rs, k, "variant", "blocked"));
    CHECK(rs_is(&rs, k, "device", "test CPU"));
    CHECK(rs_is(&rs, k, "dataset", "uniform n=100 d=8"));
    CHECK(rs_is(&rs, k, "dataset_path", NULL));
    CHECK(rs_is(&rs, k, "dtype", "f16"));
    CHECK(rs_is(&rs, k, "error", NULL));
    CHECK_NEAR(num(rs_get(&rs, k, "eps")), 0.25, 0);
    CHECK_NEAR(num(rs_get(&rs, k, "selectivity")), 11.34, 0);
    CHECK_NEAR(num(rs_get(&rs, k, "time_s")), 0.75, 0);
    CHECK_NEAR(num(rs_get(&rs, k, "kernel_s")), 0.5, 0);
    CHECK_NEAR(num(rs_get(&rs, k, "tflops")), 0.0125, 0);
    CHECK_NEAR(num(rs_get(&rs, k, "tflops_unpadded")), 0.0015625, 0);
    CHECK(rs_get(&rs, k, "at") && strlen(rs_get(&rs, k, "at")) == 24);
    CHECK(rs_get(&rs, k, "at")[10] == 'T' && rs_get(&rs, k, "at")[23] == 'Z');

    CHECK_EQ_INT(rs_count(&rs, "phase"), 2);
    CHECK(rs_is(&rs, rs_section(&rs, "phase", 0), "name", "convert"));
    CHECK(rs_is(&rs, rs_section(&rs, "phase", 1), "name", "kernel"));
    CHECK_NEAR(num(rs_get(&rs, rs_section(&rs, "phase", 1), "seconds")), 0.5, 0);
    CHECK_EQ_INT(rs_count(&rs, "counter"), 3);
    /* sorted by name: dram_throughput, power_w.mean, sm_clock_mhz.max */
    k = rs_section(&rs, "counter", 0);
    CHECK(rs_is(&rs, k, "name", "dram_throughput") && rs_is(&rs, k, "unit", "%"));
    CHECK_NEAR(num(rs_get(&rs, k, "value")), 61.5, 0);
    k = rs_section(&rs, "counter", 1);
    CHECK(rs_is(&rs, k, "name", "power_w.mean") && rs_is(&rs, k, "value", NULL));
    CHECK_EQ_INT(rs_count(&rs, "comparison"), 0);
    rs_free(&rs);

    /* A counter attached later replaces one of the same name. */
    CHECK_EQ_INT(store_counter(st, id, "dram_throughput", 70.25, "%"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM counters"), 3);
    CHECK_NEAR(raw_real(path, "SELECT value FROM counters WHERE name = 'dram_throughput'"), 70.25,
               0);
    CHECK_EQ_INT(store_counter(st, 999, "x", 1, NULL), TCJ_ESTORE); /* no such run */
    CHECK_STR_CONTAINS(err_msg(), "FOREIGN KEY");

    /* A failed run keeps its error and time, never a pair count. */
    store_run_rec f = sample_rec(ses, did, &res);
    f.status = TCJ_ECANCEL;
    f.error = "cancelled";
    int64_t fid = store_run(st, &f);
    CHECK_EQ_INT(fid, 2);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM runs WHERE id = 2"), -998);
    CHECK_EQ_INT(raw_int(path, "SELECT status FROM runs WHERE id = 2"), TCJ_ECANCEL);
    CHECK(strcmp(raw_text(path, "SELECT error FROM runs WHERE id = 2"), "cancelled") == 0);

    CHECK_EQ_INT(store_show_run(st, 77, collect, &rs), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no run 77");

    store_session_end(st, ses);
    CHECK(raw_text(path, "SELECT ended FROM sessions") != NULL);
    store_close(st);
}

TEST(run_is_one_transaction)
{
    const char *path = fresh_db("atomic.db");
    store *st = open_ok(path);
    CHECK(st);
    join_result res;

    /* Fails at the third counter (empty name), after the run row, both
     * phases and two counters were inserted. */
    sample_result(&res, 10);
    res.metric[2].name[0] = '\0';
    store_run_rec r = sample_rec(0, 0, &res);
    CHECK_EQ_INT(store_run(st, &r), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "storing a run's counters");
    CHECK_STR_CONTAINS(err_msg(), path);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM run_phases"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM counters"), 0);

    /* Fails at the second phase (no name). */
    sample_result(&res, 10);
    res.phase[1].name = NULL;
    CHECK_EQ_INT(store_run(st, &r), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "run_phases.name");
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM run_phases"), 0);

    /* No engine: fails at the first row. */
    sample_result(&res, 10);
    r.engine = NULL;
    CHECK_EQ_INT(store_run(st, &r), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "runs.engine");
    r.engine = "cpu";

    /* The connection is usable afterwards and nothing is left open: a
     * second connection sees the good run committed. */
    int64_t id = store_run(st, &r);
    CHECK(id > 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM run_phases"), 2);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM counters"), 3);

    /* A metric reported twice keeps its last value. */
    sample_result(&res, 10);
    join_result_metric(&res, "dram_throughput", 62.5, "%");
    id = store_run(st, &r);
    CHECK(id > 0);
    char sql[200];
    snprintf(sql, sizeof sql,
             "SELECT value FROM counters WHERE run_id = %lld AND name = 'dram_throughput'",
             (long long)id);
    CHECK_NEAR(raw_real(path, sql), 62.5, 0);
    store_close(st);
}

TEST(comparison_is_one_transaction)
{
    const char *path = fresh_db("cmp.db");
    store *st = open_ok(path);
    CHECK(st);
    join_result res;
    sample_result(&res, 100);
    store_run_rec r = sample_rec(0, 0, &res);
    int64_t a = store_run(st, &r);
    r.engine = "cpu-fp16";
    int64_t b = store_run(st, &r);
    CHECK(a > 0 && b > 0);

    double lo[3] = {-2e-6, -1e-6, 0}, hi[3] = {-1e-6, 0, 1e-6};
    uint64_t cnt[3] = {5, 40, 55};
    static cmp_side sa, sb;
    sa = side_with("cpu-fp16", b, 0.9875, 100, 2, 3, 3, lo, hi, cnt);
    sa.err_mean = -1.5e-7;
    sa.err_std = 4e-7;
    sa.err_min = -2e-6;
    sa.err_max = 1e-6;
    sa.only_engine_rel_max = 1e-4;
    sa.only_ref_rel_max = -2e-4;
    cmp_side_ref(&sb, "cpu", a);
    store_cmp_rec c = {.eps = 0.25, .side = {&sa, &sb}};
    /* A NaN edge in the last bin: the comparison and its first bins go too. */
    sa.bin_lo[2] = NAN;
    CHECK_EQ_INT(store_comparison(st, &c), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "histogram");
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparisons"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM histogram_bins"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparison_sides"), 0);
    sa.bin_lo[2] = 0;
    /* A side without an engine is refused before anything is written. */
    sb.engine = NULL;
    CHECK_EQ_INT(store_comparison(st, &c), TCJ_EINVAL);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM comparisons"), 0);
    sb.engine = "cpu";
    c.side[1] = NULL;
    CHECK_EQ_INT(store_comparison(st, &c), TCJ_EINVAL);
    c.side[1] = &sb;

    int64_t cid = store_comparison(st, &c);
    CHECK_EQ_INT(cid, 1);
    CHECK_EQ_INT(raw_int(path, "SELECT sum(count) FROM histogram_bins"), 100);
    CHECK_EQ_INT(raw_int(path, "SELECT only_ref FROM comparison_sides WHERE side = 'a'"), 3);
    /* The reference side keeps its engine and run, nothing judged. */
    CHECK(strcmp(raw_text(path, "SELECT ref_engine FROM comparisons"), "cpu") == 0);
    CHECK_EQ_INT(raw_int(path, "SELECT run_ref FROM comparisons"), a);
    CHECK_EQ_INT(raw_int(path, "SELECT run_id FROM comparison_sides WHERE side = 'b'"), a);
    CHECK_EQ_INT(raw_int(path, "SELECT overlap FROM comparison_sides WHERE side = 'b'"), -998);

    rowset rs = {0};
    CHECK_EQ_INT(store_show_run(st, b, collect, &rs), 0);
    CHECK_EQ_INT(rs_count(&rs, "comparison"), 1);
    int k = rs_section(&rs, "comparison", 0);
    CHECK(rs_is(&rs, k, "role", "a"));
    CHECK(rs_is(&rs, k, "ref_engine", "cpu"));
    k = rs_section(&rs, "side", 0);
    CHECK(rs_is(&rs, k, "side", "a"));
    CHECK_NEAR(num(rs_get(&rs, k, "overlap")), 0.9875, 0);
    CHECK(rs_is(&rs, k, "err_mean", "-1.5e-07")); /* the double, not 15 digits of it */
    CHECK_EQ_INT(rs_count(&rs, "bin"), 3);
    k = rs_section(&rs, "bin", 1);
    CHECK(rs_is(&rs, k, "bin", "1") && rs_is(&rs, k, "count", "40"));
    CHECK_NEAR(num(rs_get(&rs, k, "lo")), -1e-6, 0);
    rs_free(&rs);
    CHECK_EQ_INT(store_show_run(st, a, collect, &rs), 0);
    CHECK(rs_is(&rs, rs_section(&rs, "comparison", 0), "role", "b"));
    rs_free(&rs);
    /* A callback that stops gets no more rows. */
    rs.stop_after = 2;
    CHECK_EQ_INT(store_show_run(st, a, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 2);
    rs_free(&rs);
    store_close(st);
}

TEST(sweeps_and_steps)
{
    const char *path = fresh_db("sweep.db");
    store *st = open_ok(path);
    CHECK(st);
    int64_t ses = store_session_begin(st, NULL, "1.0", NULL);
    int64_t sw = store_sweep_begin(st, ses, 0, "cpu", "solve", 64, 0.005);
    CHECK_EQ_INT(sw, 1);
    CHECK(raw_text(path, "SELECT started FROM sweeps") != NULL);
    CHECK(raw_text(path, "SELECT ended FROM sweeps") == NULL);
    CHECK_EQ_INT(store_sweep_step(st, sw, 0, "sample", 0.21, 58.5, 5950, 0.01), 0);
    CHECK_EQ_INT(store_sweep_step(st, sw, 1, "histogram", 0.2231, 64.2, 6520, 0.2), 0);
    CHECK_EQ_INT(store_sweep_step(st, sw, 2, "reference", 0.2231, 64.2, 6520, 0.3), 0);
    /* The same step twice, or a step of no sweep, is refused. */
    CHECK_EQ_INT(store_sweep_step(st, sw, 1, "refine", 0.2, 60, 6100, 0.1), TCJ_ESTORE);
    CHECK_EQ_INT(store_sweep_step(st, 999, 0, "sample", 0.2, 60, 6100, 0.1), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "FOREIGN KEY");
    CHECK_EQ_INT(store_sweep_end(st, sw, 0.2231, 64.2, 2, 0.51, "within 0.5%"), 0);
    CHECK_EQ_INT(store_sweep_end(st, 999, 0.2231, 64.2, 2, 0.51, NULL), TCJ_EINVAL);
    CHECK_EQ_INT(raw_int(path, "SELECT passes FROM sweeps"), 2);
    CHECK_NEAR(raw_real(path, "SELECT eps FROM sweeps"), 0.2231, 0);
    CHECK(strcmp(raw_text(path, "SELECT note FROM sweeps"), "within 0.5%") == 0);
    CHECK(raw_text(path, "SELECT ended FROM sweeps") != NULL);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sweep_steps"), 3);
    CHECK_EQ_INT(raw_int(path, "SELECT pairs FROM sweep_steps WHERE step = 1"), 6520);
    CHECK(strcmp(raw_text(path, "SELECT method FROM sweep_steps WHERE step = 2"), "reference") ==
          0);

    /* A search that failed half-way is removed with its steps. */
    int64_t sw2 = store_sweep_begin(st, ses, 0, "cpu", "solve", 1e9, 0.005);
    CHECK(sw2 > 0);
    CHECK_EQ_INT(store_sweep_step(st, sw2, 0, "sample", 9, 1e3, 5950, 0.01), 0);
    CHECK_EQ_INT(store_sweep_delete(st, sw2), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sweeps"), 1);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sweep_steps"), 3);
    CHECK_EQ_INT(store_sweep_delete(st, sw2), TCJ_EINVAL);
    store_close(st);
}

TEST(datasets_upsert)
{
    const char *path = fresh_db("ds.db");
    store *st = open_ok(path);
    CHECK(st);
    dataset a = {.name = "a.csv", .path = "/d/a.csv", .format = "csv", .n = 10, .d = 2, .hash = 1};
    int64_t ia = store_dataset(st, &a);
    CHECK_EQ_INT(ia, 1);
    CHECK_EQ_INT(store_dataset(st, &a), ia);
    a.hash = 2; /* the file changed (or another limit= took another part) */
    int64_t ib = store_dataset(st, &a);
    CHECK_EQ_INT(ib, 2);
    dataset g = {.name = "uniform", .format = "synth", .n = 10, .d = 2, .hash = 1};
    int64_t ig = store_dataset(st, &g);
    CHECK_EQ_INT(ig, 3);
    CHECK_EQ_INT(store_dataset(st, &g), ig); /* generated: matched by hash alone */
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM datasets"), 3);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM datasets WHERE path IS NULL"), 1);
    CHECK(strcmp(raw_text(path, "SELECT hash FROM datasets WHERE id = 2"), "0000000000000002") ==
          0);
    store_close(st);
}

TEST(history_and_runs_listings)
{
    const char *path = fresh_db("list.db");
    store *st = open_ok(path);
    CHECK(st);
    int64_t ses = store_session_begin(st, "tcjoin", "1.0", "h");
    const char *lines[5] = {"load a.csv", "eps 0.3", "run nope", "run cpu", "history"};
    for (int i = 0; i < 4; i++)
        CHECK(store_command(st, ses, lines[i], i == 2 ? TCJ_EINVAL : 0,
                            i == 2 ? "unknown engine 'nope'" : "ignored when ok", 0.1) > 0);
    CHECK(store_command_begin(st, ses, lines[4]) > 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM commands WHERE error IS NOT NULL"), 1);

    rowset rs = {0};
    CHECK_EQ_INT(store_history(st, 3, 0, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 3);
    CHECK_EQ_INT(rs.ncol[0], 4);
    CHECK(strcmp(rs.name[0][0], "command_id") == 0 && strcmp(rs.name[0][1], "at") == 0);
    CHECK(strcmp(rs.name[0][2], "status") == 0 && strcmp(rs.name[0][3], "line") == 0);
    CHECK(rs_is(&rs, 0, "command_id", "3") && rs_is(&rs, 0, "line", "run nope"));
    CHECK(rs_is(&rs, 0, "status", "error"));
    CHECK(rs_is(&rs, 1, "status", "ok") && rs_is(&rs, 1, "line", "run cpu"));
    CHECK(rs_is(&rs, 2, "status", "unfinished"));
    rs_free(&rs);
    CHECK_EQ_INT(store_history(st, 0, 0, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 5);
    CHECK(rs_is(&rs, 0, "line", "load a.csv"));
    rs_free(&rs);
    /* Commands before id 5: the running `history` does not list itself. */
    CHECK_EQ_INT(store_history(st, 2, 5, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 2);
    CHECK(rs_is(&rs, 0, "line", "run nope") && rs_is(&rs, 1, "line", "run cpu"));
    rs_free(&rs);

    dataset ds = {
        .name = "a.csv", .path = "/d/a.csv", .format = "csv", .n = 100, .d = 8, .hash = 7};
    int64_t did = store_dataset(st, &ds);
    join_result res;
    for (int i = 0; i < 4; i++) {
        sample_result(&res, 1000 + (uint64_t)i);
        store_run_rec r = sample_rec(ses, did, &res);
        CHECK(store_run(st, &r) > 0);
    }
    CHECK_EQ_INT(store_runs(st, 2, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 2);
    static const char *const cols[] = {"run_id",      "at",     "engine", "dataset",
                                       "n",           "d",      "eps",    "pairs",
                                       "selectivity", "time_s", "tflops", "status"};
    CHECK_EQ_INT(rs.ncol[0], 12);
    for (int i = 0; i < 12; i++)
        CHECK_MSG(strcmp(rs.name[0][i], cols[i]) == 0, "column %d is %s", i, rs.name[0][i]);
    CHECK(rs_is(&rs, 0, "run_id", "3") && rs_is(&rs, 1, "run_id", "4"));
    CHECK(rs_is(&rs, 1, "pairs", "1003") && rs_is(&rs, 1, "dataset", "a.csv"));
    CHECK(rs_is(&rs, 1, "status", "ok"));
    CHECK_NEAR(num(rs_get(&rs, 1, "tflops")), 0.0125, 0);
    rs_free(&rs);
    store_close(st);
}

TEST(query_rules)
{
    const char *path = fresh_db("q.db");
    store *st = open_ok(path);
    CHECK(st);
    for (int i = 0; i < 3; i++)
        store_session_begin(st, "x", NULL, NULL);
    rowset rs = {0};
    int64_t p[1] = {2};
    CHECK_EQ_INT(
        store_query(st, "SELECT id FROM sessions WHERE id >= ?1 ORDER BY id", p, 1, collect, &rs),
        0);
    CHECK(rs.n == 2 && rs_is(&rs, 0, "id", "2") && rs_is(&rs, 1, "id", "3"));
    rs_free(&rs);
    CHECK_EQ_INT(store_query(st, "SELECT version FROM sessions", NULL, 0, collect, &rs), 0);
    CHECK(rs.n == 3 && rs_is(&rs, 0, "version", NULL));
    rs_free(&rs);
    rs.stop_after = 1;
    CHECK_EQ_INT(store_query(st, "SELECT id FROM sessions;", NULL, 0, collect, &rs), 0);
    CHECK_EQ_INT(rs.n, 1);
    rs_free(&rs);
    CHECK_EQ_INT(store_query(st, "SELECT 1; DELETE FROM sessions", NULL, 0, collect, &rs),
                 TCJ_EINVAL);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sessions"), 3);
    CHECK_EQ_INT(store_query(st, "SELECT ?1, ?2", p, 1, collect, &rs), TCJ_EINVAL);
    CHECK_EQ_INT(store_query(st, "SELEKT 1", NULL, 0, collect, &rs), TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "syntax error");
    store_close(st);
}

TEST(two_processes_share_the_log)
{
    const char *path = fresh_db("shared.db");
    store *a = open_ok(path), *b = open_ok(path);
    CHECK(a && b);
    for (int i = 0; i < 3; i++) {
        CHECK(store_session_begin(a, "a", NULL, NULL) > 0);
        CHECK(store_session_begin(b, "b", NULL, NULL) > 0);
    }
    rowset rs = {0};
    CHECK_EQ_INT(store_query(a, "SELECT count(*) AS n FROM sessions WHERE argv = 'b'", NULL, 0,
                             collect, &rs),
                 0);
    CHECK(rs_is(&rs, 0, "n", "3"));
    rs_free(&rs);
    store_close(a);
    store_close(b);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sessions"), 6);
}

/* ---- export, read back by independent parsers ---- */

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = xmalloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n < 2)
            buf = xrealloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* RFC 4180 reader: rows of fields; -1 on a malformed quote. */
typedef struct csv_doc {
    int nrow;
    int nf[64];
    char *f[64][64];
} csv_doc;

static int csv_parse(const char *s, csv_doc *doc)
{
    memset(doc, 0, sizeof *doc);
    size_t cap = strlen(s) + 1;
    char *cell = xmalloc(cap);
    while (*s) {
        if (doc->nrow >= 64)
            return -1;
        int r = doc->nrow++;
        for (;;) {
            size_t n = 0;
            if (*s == '"') {
                s++;
                for (;;) {
                    if (!*s) {
                        free(cell);
                        return -1;
                    }
                    if (*s == '"' && s[1] == '"') {
                        cell[n++] = '"';
                        s += 2;
                    } else if (*s == '"') {
                        s++;
                        break;
                    } else
                        cell[n++] = *s++;
                }
                if (*s != ',' && *s != '\n' && *s) {
                    free(cell);
                    return -1;
                }
            } else {
                while (*s && *s != ',' && *s != '\n') {
                    if (*s == '"') {
                        free(cell);
                        return -1;
                    }
                    cell[n++] = *s++;
                }
            }
            cell[n] = '\0';
            if (doc->nf[r] < 64)
                doc->f[r][doc->nf[r]++] = xstrdup(cell);
            if (*s == ',') {
                s++;
                continue;
            }
            if (*s == '\n')
                s++;
            break;
        }
    }
    free(cell);
    return 0;
}

static void csv_free(csv_doc *doc)
{
    for (int r = 0; r < doc->nrow; r++)
        for (int i = 0; i < doc->nf[r]; i++)
            free(doc->f[r][i]);
}

static int csv_col(const csv_doc *doc, const char *name)
{
    for (int i = 0; i < doc->nf[0]; i++)
        if (strcmp(doc->f[0][i], name) == 0)
            return i;
    return -1;
}

static const char *csv_get(const csv_doc *doc, int row, const char *name)
{
    int c = csv_col(doc, name);
    return c >= 0 && row < doc->nrow && c < doc->nf[row] ? doc->f[row][c] : RS_MISSING;
}

/* A strict JSON reader (RFC 8259) into a small tree. */
enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
typedef struct jv {
    int t;
    double num;
    char *str;
    int n;
    char **key;
    struct jv **item;
} jv;

static void jv_free(jv *v)
{
    if (!v)
        return;
    for (int i = 0; i < v->n; i++) {
        if (v->key)
            free(v->key[i]);
        jv_free(v->item[i]);
    }
    free(v->key);
    free(v->item);
    free(v->str);
    free(v);
}

static void j_ws(const char **p)
{
    while (**p == ' ' || **p == '\n' || **p == '\r' || **p == '\t')
        (*p)++;
}

static int j_hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static char *j_string(const char **p)
{
    if (**p != '"')
        return NULL;
    (*p)++;
    size_t cap = 64, n = 0;
    char *s = xmalloc(cap);
    for (;;) {
        if (n + 8 > cap)
            s = xrealloc(s, cap *= 2);
        unsigned char c = (unsigned char)**p;
        if (c == '\0' || c < 0x20) {
            free(s);
            return NULL;
        }
        (*p)++;
        if (c == '"')
            break;
        if (c != '\\') {
            s[n++] = (char)c;
            continue;
        }
        char e = *(*p)++;
        unsigned u;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            s[n++] = e;
            break;
        case 'n':
            s[n++] = '\n';
            break;
        case 't':
            s[n++] = '\t';
            break;
        case 'r':
            s[n++] = '\r';
            break;
        case 'b':
            s[n++] = '\b';
            break;
        case 'f':
            s[n++] = '\f';
            break;
        case 'u':
            if (j_hex4(*p, &u)) {
                free(s);
                return NULL;
            }
            *p += 4;
            if (u >= 0xd800 && u < 0xdc00) {
                unsigned lo;
                if ((*p)[0] != '\\' || (*p)[1] != 'u' || j_hex4(*p + 2, &lo) || lo < 0xdc00 ||
                    lo > 0xdfff) {
                    free(s);
                    return NULL;
                }
                *p += 6;
                u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            }
            if (u < 0x80)
                s[n++] = (char)u;
            else if (u < 0x800) {
                s[n++] = (char)(0xc0 | (u >> 6));
                s[n++] = (char)(0x80 | (u & 0x3f));
            } else if (u < 0x10000) {
                s[n++] = (char)(0xe0 | (u >> 12));
                s[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
                s[n++] = (char)(0x80 | (u & 0x3f));
            } else {
                s[n++] = (char)(0xf0 | (u >> 18));
                s[n++] = (char)(0x80 | ((u >> 12) & 0x3f));
                s[n++] = (char)(0x80 | ((u >> 6) & 0x3f));
                s[n++] = (char)(0x80 | (u & 0x3f));
            }
            break;
        default:
            free(s);
            return NULL;
        }
    }
    s[n] = '\0';
    return s;
}

static jv *j_value(const char **p);

static jv *j_container(const char **p, int obj)
{
    jv *v = xcalloc(1, sizeof *v);
    v->t = obj ? J_OBJ : J_ARR;
    (*p)++;
    j_ws(p);
    if (**p == (obj ? '}' : ']')) {
        (*p)++;
        return v;
    }
    for (;;) {
        char *key = NULL;
        if (obj) {
            j_ws(p);
            key = j_string(p);
            j_ws(p);
            if (!key || **p != ':') {
                free(key);
                jv_free(v);
                return NULL;
            }
            (*p)++;
        }
        jv *item = j_value(p);
        if (!item) {
            free(key);
            jv_free(v);
            return NULL;
        }
        v->item = xrealloc(v->item, sizeof *v->item * (unsigned long)(v->n + 1));
        if (obj)
            v->key = xrealloc(v->key, sizeof *v->key * (unsigned long)(v->n + 1));
        v->item[v->n] = item;
        if (obj)
            v->key[v->n] = key;
        v->n++;
        j_ws(p);
        if (**p == ',') {
            (*p)++;
            continue;
        }
        if (**p == (obj ? '}' : ']')) {
            (*p)++;
            return v;
        }
        jv_free(v);
        return NULL;
    }
}

static jv *j_value(const char **p)
{
    j_ws(p);
    if (**p == '{' || **p == '[')
        return j_container(p, **p == '{');
    jv *v = xcalloc(1, sizeof *v);
    if (**p == '"') {
        v->t = J_STR;
        v->str = j_string(p);
        if (!v->str) {
            free(v);
            return NULL;
        }
    } else if (strncmp(*p, "null", 4) == 0) {
        v->t = J_NULL;
        *p += 4;
    } else if (strncmp(*p, "true", 4) == 0 || strncmp(*p, "false", 5) == 0) {
        v->t = J_BOOL;
        v->num = **p == 't';
        *p += **p == 't' ? 4 : 5;
    } else {
        /* RFC 8259 number grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
        const char *q = *p;
        if (*q == '-')
            q++;
        if (*q == '0')
            q++;
        else if (*q >= '1' && *q <= '9')
            while (*q >= '0' && *q <= '9')
                q++;
        else {
            free(v);
            return NULL;
        }
        if (*q == '.') {
            q++;
            if (!(*q >= '0' && *q <= '9')) {
                free(v);
                return NULL;
            }
            while (*q >= '0' && *q <= '9')
                q++;
        }
        if (*q == 'e' || *q == 'E') {
            q++;
            if (*q == '+' || *q == '-')
                q++;
            if (!(*q >= '0' && *q <= '9')) {
                free(v);
                return NULL;
            }
            while (*q >= '0' && *q <= '9')
                q++;
        }
        v->t = J_NUM;
        v->num = strtod(*p, NULL);
        *p = q;
    }
    return v;
}

static jv *json_parse(const char *s)
{
    const char *p = s;
    jv *v = j_value(&p);
    j_ws(&p);
    if (v && *p) {
        jv_free(v);
        return NULL;
    }
    return v;
}

/* The JSON document in a file; NULL if the file is unreadable or not JSON. */
static jv *json_file(const char *path)
{
    size_t len;
    char *text = slurp(path, &len);
    jv *doc = text ? json_parse(text) : NULL;
    free(text);
    return doc;
}

static const jv *jget(const jv *o, const char *key)
{
    if (!o || o->t != J_OBJ)
        return NULL;
    for (int i = 0; i < o->n; i++)
        if (strcmp(o->key[i], key) == 0)
            return o->item[i];
    return NULL;
}

static const jv *jat(const jv *a, int i)
{
    return a && a->t == J_ARR && i >= 0 && i < a->n ? a->item[i] : NULL;
}

static double jnum(const jv *v)
{
    return v && v->t == J_NUM ? v->num : NAN;
}

static int jnull(const jv *v)
{
    return v && v->t == J_NULL;
}

static int jstr_is(const jv *v, const char *want)
{
    return v && v->t == J_STR && strcmp(v->str, want) == 0;
}

/* Strings that need every kind of quoting and escaping. */
static const char OPTS[] = "threads=2, symmetric=\"on\"\nsecond line\r\\end";
static const char NAME[] = "na\xc3\xafve \"set\", v1 \xe2\x82\xac";
static const char PATH_BAD_UTF8[] = "/data/\xff\xfe-raw.bin";
static const char ERR_CTRL[] = "failed:\x01 at\tbyte 12";

static int64_t export_fixture(store *st, int64_t *run_ok, int64_t *run_bad)
{
    int64_t ses = store_session_begin(st, "tcjoin", "1.0", "h");
    dataset ds = {.name = (char *)NAME,
                  .path = (char *)PATH_BAD_UTF8,
                  .format = "raw",
                  .n = 100,
                  .d = 8,
                  .hash = 0x1234};
    int64_t did = store_dataset(st, &ds);
    join_result res;
    sample_result(&res, 1234);
    store_run_rec r = sample_rec(ses, did, &res);
    r.options = OPTS;
    r.eps = 0.1;
    *run_ok = store_run(st, &r);
    /* A second engine with another phase set. */
    memset(&res, 0, sizeof res);
    res.seconds = 1.0 / 3.0;
    join_result_phase(&res, "h2d", 0.125);
    store_run_rec f = sample_rec(ses, did, &res);
    f.engine = "fasted";
    f.status = TCJ_EGPU;
    f.error = ERR_CTRL;
    *run_bad = store_run(st, &f);
    double lo[2] = {-1e-7, 0}, hi[2] = {0, 1e-7};
    uint64_t cnt[2] = {600, 634};
    static cmp_side sa, sb;
    sa = side_with("fasted", *run_bad, 0.999, 0, 0, 0, 2, lo, hi, cnt);
    cmp_side_ref(&sb, "cpu", *run_ok);
    store_cmp_rec c = {.eps = 0.1, .side = {&sa, &sb}};
    return store_comparison(st, &c);
}

TEST(export_csv)
{
    const char *path = fresh_db("exp-csv.db");
    store *st = open_ok(path);
    CHECK(st);
    int64_t a, b;
    CHECK(export_fixture(st, &a, &b) > 0);
    const char *out = t_path("runs.csv");
    CHECK_MSG(store_export(st, -1, "csv", out) == 0, "%s", err_msg());
    size_t len;
    char *text = slurp(out, &len);
    CHECK(text);
    CHECK(text[len - 1] == '\n');
    csv_doc doc;
    int prc = csv_parse(text, &doc);
    free(text);
    CHECK_EQ_INT(prc, 0);
    CHECK_EQ_INT(doc.nrow, 3); /* header + 2 runs */
    for (int r = 1; r < doc.nrow; r++)
        CHECK_EQ_INT(doc.nf[r], doc.nf[0]);
    CHECK_EQ_INT(csv_col(&doc, "run_id"), 0);
    CHECK(strcmp(csv_get(&doc, 1, "run_id"), "1") == 0);
    CHECK(strcmp(csv_get(&doc, 1, "engine"), "cpu") == 0);
    CHECK(strcmp(csv_get(&doc, 1, "options"), OPTS) == 0);
    CHECK(strcmp(csv_get(&doc, 1, "dataset"), NAME) == 0);
    CHECK(strcmp(csv_get(&doc, 1, "dataset_path"), PATH_BAD_UTF8) == 0);
    CHECK(strcmp(csv_get(&doc, 1, "pairs"), "1234") == 0);
    CHECK(strtod(csv_get(&doc, 1, "eps"), NULL) == 0.1);
    CHECK(strcmp(csv_get(&doc, 1, "eps"), "0.1") == 0); /* shortest form */
    CHECK(strcmp(csv_get(&doc, 1, "error"), "") == 0);
    /* Phases of both engines as columns, empty where a run has none. */
    CHECK(strtod(csv_get(&doc, 1, "phase.kernel"), NULL) == 0.5);
    CHECK(strcmp(csv_get(&doc, 2, "phase.kernel"), "") == 0);
    CHECK(strtod(csv_get(&doc, 2, "phase.h2d"), NULL) == 0.125);
    CHECK(strtod(csv_get(&doc, 1, "counter.dram_throughput"), NULL) == 61.5);
    CHECK(strcmp(csv_get(&doc, 1, "counter.power_w.mean"), "") == 0);
    CHECK(strcmp(csv_get(&doc, 2, "error"), ERR_CTRL) == 0);
    CHECK(strcmp(csv_get(&doc, 2, "pairs"), "") == 0);
    CHECK(strtod(csv_get(&doc, 2, "time_s"), NULL) == 1.0 / 3.0); /* round-trips */
    csv_free(&doc);

    /* One run. */
    CHECK_EQ_INT(store_export(st, b, "csv", out), 0);
    text = slurp(out, &len);
    prc = csv_parse(text, &doc);
    free(text);
    CHECK_EQ_INT(prc, 0);
    CHECK_EQ_INT(doc.nrow, 2);
    CHECK(strcmp(csv_get(&doc, 1, "engine"), "fasted") == 0);
    CHECK_EQ_INT(csv_col(&doc, "phase.kernel"), -1);
    csv_free(&doc);
    store_close(st);
}

TEST(export_json)
{
    const char *path = fresh_db("exp-json.db");
    store *st = open_ok(path);
    CHECK(st);
    int64_t a, b;
    CHECK(export_fixture(st, &a, &b) > 0);
    const char *out = t_path("runs.json");
    CHECK_MSG(store_export(st, -1, "json", out) == 0, "%s", err_msg());
    jv *doc = json_file(out);
    CHECK_MSG(doc != NULL, "export is unreadable or not valid JSON");
    int ok = doc->t == J_ARR && doc->n == 2;
    const jv *r0 = jat(doc, 0), *r1 = jat(doc, 1);
    ok = ok && jnum(jget(r0, "run_id")) == 1;
    ok = ok && jstr_is(jget(r0, "engine"), "cpu") && jstr_is(jget(r0, "options"), OPTS);
    ok = ok && jstr_is(jget(r0, "dataset"), NAME);
    /* the two bytes that are not UTF-8 become U+FFFD each */
    ok = ok && jstr_is(jget(r0, "dataset_path"), "/data/\xef\xbf\xbd\xef\xbf\xbd-raw.bin");
    ok = ok && jnum(jget(r0, "eps")) == 0.1;
    ok = ok && jnum(jget(r0, "pairs")) == 1234 && jnull(jget(r0, "error"));
    ok = ok && jnum(jget(jget(r0, "phases"), "kernel")) == 0.5;
    ok = ok && jnum(jget(jget(r0, "phases"), "convert")) == 0.125;
    ok = ok && jnum(jget(jget(r0, "counters"), "dram_throughput")) == 61.5;
    ok = ok && jstr_is(jget(jget(r0, "counter_units"), "dram_throughput"), "%");
    ok = ok && jnull(jget(jget(r0, "counters"), "power_w.mean"));
    const jv *c = jat(jget(r0, "comparisons"), 0);
    const jv *acc = jget(jget(c, "a"), "accuracy");
    ok = ok && jstr_is(jget(c, "role"), "b") && jnum(jget(acc, "overlap")) == 0.999;
    ok =
        ok && jstr_is(jget(jget(c, "b"), "engine"), "cpu") && jnull(jget(jget(c, "b"), "accuracy"));
    const jv *h = jget(acc, "histogram");
    ok = ok && h && h->t == J_ARR && h->n == 2 && jnum(jget(jat(h, 1), "count")) == 634;
    ok = ok && jnum(jget(jat(h, 0), "lo")) == -1e-7;
    ok = ok && jstr_is(jget(r1, "error"), ERR_CTRL) && jnull(jget(r1, "pairs"));
    ok = ok && jnum(jget(r1, "time_s")) == 1.0 / 3.0;
    ok = ok && jstr_is(jget(jat(jget(r1, "comparisons"), 0), "role"), "a");
    const jv *rc1 = jget(r1, "counters");
    ok = ok && rc1 && rc1->t == J_OBJ && rc1->n == 0;
    jv_free(doc);
    CHECK(ok);

    CHECK_EQ_INT(store_export(st, a, "json", out), 0);
    doc = json_file(out);
    CHECK(doc && doc->t == J_ARR && doc->n == 1);
    CHECK(jnum(jget(jat(doc, 0), "run_id")) == (double)a);
    jv_free(doc);

    /* Nothing to export, and bad requests. */
    const char *empty = fresh_db("exp-empty.db");
    store *e = open_ok(empty);
    CHECK(e);
    CHECK_EQ_INT(store_export(e, -1, "json", out), 0);
    doc = json_file(out);
    CHECK(doc && doc->t == J_ARR && doc->n == 0);
    jv_free(doc);
    store_close(e);
    CHECK_EQ_INT(store_export(st, 999, "json", out), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no run 999");
    CHECK_EQ_INT(store_export(st, -1, "xml", out), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "expected csv or json");
    CHECK_EQ_INT(store_export(st, -1, "csv", t_path("no/such/dir/x.csv")), TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "no/such/dir/x.csv");
    store_close(st);
}

/* ---- faults: concurrent creation, corruption, a held lock ---- */

#include <sys/wait.h>
#include <unistd.h>

/* procs children open path at one moment (they block on a pipe until the
 * parent closes it), store a session and a command, and exit 0, or 1 after
 * printing why. Returns how many failed, -1 when fork failed. */
static int open_together(const char *path, int procs)
{
    int go[2];
    if (pipe(go) != 0)
        return -1;
    pid_t pid[16];
    for (int p = 0; p < procs; p++) {
        pid[p] = fork();
        if (pid[p] < 0)
            return -1;
        if (pid[p] == 0) {
            char c;
            close(go[1]);
            (void)!read(go[0], &c, 1); /* EOF when the parent closes: all go */
            store *st = NULL;
            int rc = store_open(path, &st);
            if (!rc) {
                int64_t sid = store_session_begin(st, "t_store", "0", "host");
                rc = sid > 0 && store_command(st, sid, "x", 0, NULL, 0) > 0 ? 0 : TCJ_ESTORE;
            }
            if (rc)
                fprintf(stderr, "child %d: %s\n", p, err_msg());
            store_close(st);
            _exit(rc ? 1 : 0);
        }
    }
    close(go[0]);
    usleep(20000);
    close(go[1]);
    int failed = 0;
    for (int p = 0; p < procs; p++) {
        int status;
        waitpid(pid[p], &status, 0);
        failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return failed;
}

TEST(new_log_opened_by_many_at_once)
{
    /* The owner check once read the version and the table list in two
     * statements: a process could see version 0 and another's tables and
     * refuse the file. 2 and 8 processes, many times. */
    for (int trial = 0; trial < 24; trial++) {
        int procs = trial % 2 ? 8 : 2;
        char name[64];
        snprintf(name, sizeof name, "together%d.db", trial);
        const char *path = fresh_db(name);
        int failed = open_together(path, procs);
        CHECK_MSG(failed == 0, "trial %d: %d of %d processes could not use a new log", trial,
                  failed, procs);
        CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM sessions"), procs);
        CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM commands"), procs);
        CHECK_EQ_INT(raw_int(path, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
    }
}

/* A log with a few rows, closed (its WAL checkpointed into the file). */
static int make_log(const char *path)
{
    store *st = NULL;
    if (store_open(path, &st))
        return -1;
    int64_t sid = store_session_begin(st, "make_log", "0", "h");
    for (int k = 0; k < 50 && sid > 0; k++)
        store_command(st, sid, "gen uniform n=10 d=2; eps 0.1; run cpu", 0, NULL, 0.5);
    store_close(st);
    return sid > 0 ? 0 : -1;
}

TEST(corrupt_log_refused_untouched)
{
    const char *path = fresh_db("corrupt.db");
    CHECK_EQ_INT(make_log(path), 0);
    int64_t root = raw_int(path, "SELECT rootpage FROM sqlite_master WHERE name = 'commands'");
    int64_t psize = raw_int(path, "PRAGMA page_size");
    CHECK(root >= 2 && psize >= 512);
    /* Garbage over the commands table's root page, its header included. */
    FILE *f = fopen(path, "r+b");
    CHECK(f);
    fseek(f, (long)((root - 1) * psize), SEEK_SET);
    for (int i = 0; i < psize; i++)
        fputc((i * 37 + 11) & 0xff, f);
    fclose(f);
    size_t n0, n1;
    char *before = slurp(path, &n0);
    CHECK(before);
    store *st = NULL;
    int rc = store_open(path, &st);
    char *after = slurp(path, &n1);
    int same = after && n0 == n1 && memcmp(before, after, n0) == 0;
    free(before);
    free(after);
    CHECK_EQ_INT(rc, TCJ_ESTORE);
    CHECK(st == NULL);
    CHECK_STR_CONTAINS(err_msg(), path);
    CHECK_STR_CONTAINS(err_msg(), "damaged");
    CHECK_MSG(same, "the damaged log was written to");
}

TEST(newer_log_left_byte_for_byte)
{
    const char *path = fresh_db("newer2.db");
    CHECK_EQ_INT(make_log(path), 0);
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", STORE_SCHEMA_VERSION + 1);
    CHECK_EQ_INT(raw_exec(path, sql), SQLITE_OK);
    size_t n0, n1;
    char *before = slurp(path, &n0);
    CHECK(before);
    store *st = NULL;
    int rc = store_open(path, &st);
    char *after = slurp(path, &n1);
    int same = after && n0 == n1 && memcmp(before, after, n0) == 0;
    free(before);
    free(after);
    CHECK_EQ_INT(rc, TCJ_ESTORE);
    CHECK_STR_CONTAINS(err_msg(), "is newer than this tcjoin");
    CHECK_MSG(same, "the newer log was written to");
}

/* Another process holding the write lock of path for ms milliseconds:
 * tests/faults/f_db (built next to this binary) run as "f_db hold", since
 * SQLite's locks do not survive a fork of a process with open connections.
 * Returns its pid once it holds the lock, -1 if it could not. */
static pid_t hold_lock(const char *path, int ms)
{
    char exe[1024], tool[1100], arg[32];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return -1;
    *slash = '\0';
    snprintf(tool, sizeof tool, "%s/f_db", exe);
    snprintf(arg, sizeof arg, "%d", ms);
    int out[2];
    if (pipe(out) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(out[1], 1);
        close(out[0]);
        execl(tool, "f_db", "hold", path, arg, (char *)NULL);
        _exit(127);
    }
    close(out[1]);
    char word[8] = "";
    ssize_t got = read(out[0], word, 6);
    close(out[0]);
    if (got < 6 || strncmp(word, "locked", 6) != 0) {
        waitpid(pid, NULL, 0);
        return -1;
    }
    return pid;
}

TEST(held_lock_write_waits_then_reports)
{
    const char *path = fresh_db("held.db");
    store *st = NULL, *impatient = NULL;
    setenv("TCJOIN_DB_WAIT", "3", 1);
    CHECK_EQ_INT(store_open(path, &st), 0);
    /* The wait is read when the log is opened. */
    setenv("TCJOIN_DB_WAIT", "0.3", 1);
    CHECK_EQ_INT(store_open(path, &impatient), 0);
    unsetenv("TCJOIN_DB_WAIT");
    int64_t sid = store_session_begin(st, "held", "0", "h");
    CHECK(sid > 0);

    /* Held shorter than the wait: the write waits and lands. */
    pid_t pid = hold_lock(path, 800);
    CHECK_MSG(pid > 0, "f_db hold did not take the lock (is it built next to t_store?)");
    CHECK(store_command(st, sid, "waited", 0, NULL, 0) > 0);
    waitpid(pid, NULL, 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM commands WHERE line = 'waited'"), 1);

    /* Held longer than the wait: the write fails with a line that says so,
     * and the whole run is rolled back, not half written. */
    pid = hold_lock(path, 1500);
    CHECK(pid > 0);
    join_result res;
    memset(&res, 0, sizeof res);
    res.nphase = 1;
    res.phase[0].name = "compute";
    res.phase[0].seconds = 1;
    store_run_rec r;
    memset(&r, 0, sizeof r);
    r.session_id = sid;
    r.engine = "cpu";
    r.res = &res;
    double t0 = store_clock();
    int64_t id = store_run(impatient, &r);
    double waited = store_clock() - t0;
    waitpid(pid, NULL, 0);
    CHECK_EQ_INT(id, TCJ_ESTORE);
    CHECK_MSG(waited >= 0.25 && waited < 1.4, "waited %.3f s for a 0.3 s wait", waited);
    CHECK_STR_CONTAINS(err_msg(), path);
    CHECK_STR_CONTAINS(err_msg(), "storing a run");
    CHECK_STR_CONTAINS(err_msg(), "locked by another process");
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM runs"), 0);
    CHECK_EQ_INT(raw_int(path, "SELECT count(*) FROM run_phases"), 0);
    /* And the log takes the run once the lock is gone. */
    CHECK(store_run(impatient, &r) > 0);
    store_close(impatient);
    store_close(st);
}

/* Result records (store_record_put/get): each kept as given under its
 * type and id, one id sequence for every type; another type's id, or
 * none, is one line. */
TEST(records_round_trip)
{
    char path[512];
    snprintf(path, sizeof path, "%s/records.db", t_tmpdir());
    store *st = open_ok(path);
    CHECK(st != NULL);
    const char *a = "{\"type\":\"hdbscan\",\"clusters\":3,\"x\":\"quote \\\" ok\"}";
    const char *b = "{\"type\":\"hdbscan_compare\",\"ari\":0.5}";
    const int64_t ia = store_record_put(st, &(store_record_rec){0, 0, 0, "hdbscan", a});
    const int64_t ib = store_record_put(st, &(store_record_rec){0, 0, 0, "hdbscan_compare", b});
    CHECK_MSG(ia > 0 && ib > ia, "ids %lld %lld: %s", (long long)ia, (long long)ib, err_msg());
    char *got = NULL;
    CHECK(store_record_get(st, "hdbscan", ia, &got) == 0);
    CHECK_MSG(got && strcmp(got, a) == 0, "got %s", got ? got : "(null)");
    free(got);
    CHECK(store_record_get(st, "hdbscan_compare", ib, &got) == 0);
    CHECK(got && strcmp(got, b) == 0);
    free(got);
    CHECK(store_record_get(st, "hdbscan", ib, &got) == TCJ_EINVAL && got == NULL);
    CHECK_MSG(strstr(err_msg(), "no hdbscan") != NULL, "%s", err_msg());
    CHECK(store_record_get(st, "hdbscan", ib + 5, &got) == TCJ_EINVAL);
    store_close(st);
    /* kept across a reopen */
    st = open_ok(path);
    CHECK(st != NULL);
    CHECK(store_record_get(st, "hdbscan", ia, &got) == 0 && got && strcmp(got, a) == 0);
    free(got);
    store_close(st);
}
