/* A second program on a session log, for the fault scripts (the sqlite3
 * shell may not be installed):
 *   f_db hold DB MS        take the write lock (BEGIN IMMEDIATE), print
 *                          "locked", hold it MS milliseconds, commit
 *   f_db check DB          PRAGMA integrity_check: prints "ok" or the faults
 *   f_db count DB TABLE    rows of sessions|commands|runs|datasets|run_ranks
 *   f_db ids DB            run ids, one per line, ascending
 *   f_db failed DB         "status|error" of every failed run
 *   f_db version DB N      set PRAGMA user_version to N
 * Exit 0 on success, 1 on an SQLite error (printed), 2 on bad usage. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(sqlite3 *db, const char *what)
{
    fprintf(stderr, "f_db: %s: %s\n", what, sqlite3_errmsg(db));
    sqlite3_close(db);
    return 1;
}

/* Print every row of sql, columns joined by '|'. */
static int print_rows(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(db, sql);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int c = 0; c < sqlite3_column_count(s); c++) {
            const unsigned char *t = sqlite3_column_text(s, c);
            printf("%s%s", c ? "|" : "", t ? (const char *)t : "");
        }
        putchar('\n');
    }
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return fail(db, sql);
    sqlite3_close(db);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    const char *op = argv[1];
    sqlite3 *db;
    if (sqlite3_open_v2(argv[2], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK)
        return fail(db, "open");
    sqlite3_busy_timeout(db, 10000);
    if (!strcmp(op, "hold") && argc == 4) {
        if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, "BEGIN IMMEDIATE");
        printf("locked\n");
        fflush(stdout);
        long ms = atol(argv[3]);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, "COMMIT");
        sqlite3_close(db);
        return 0;
    }
    if (!strcmp(op, "check") && argc == 3)
        return print_rows(db, "PRAGMA integrity_check");
    if (!strcmp(op, "ids") && argc == 3)
        return print_rows(db, "SELECT id FROM runs ORDER BY id");
    if (!strcmp(op, "failed") && argc == 3)
        return print_rows(db, "SELECT status, error FROM runs WHERE status <> 0 ORDER BY id");
    if (!strcmp(op, "count") && argc == 4) {
        static const char *const tables[] = {"sessions",    "commands", "runs", "datasets",
                                             "sweeps",      "sweep_steps",
                                             "run_ranks" /* tests/mpi */};
        for (size_t k = 0; k < sizeof tables / sizeof tables[0]; k++)
            if (!strcmp(argv[3], tables[k])) {
                char sql[64];
                snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", tables[k]);
                return print_rows(db, sql);
            }
        return 2;
    }
    if (!strcmp(op, "version") && argc == 4) {
        char sql[64];
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", atoi(argv[3]));
        if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
            return fail(db, "PRAGMA user_version");
        sqlite3_close(db);
        return 0;
    }
    sqlite3_close(db);
    return 2;
}
