/* SQL a fault script runs on a session log, for what f_db has no word for
 * (a trigger that refuses a write, a count of any table):
 *   f_sql DB SQL    run each statement of SQL in turn, printing the rows
 *                   of each (columns joined by '|')
 * Exit 0 on success, 1 on an SQLite error (printed), 2 on bad usage. */
#include <sqlite3.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        fprintf(stderr, "f_sql: open: %s\n", sqlite3_errmsg(db));
        sqlite3_close(db);
        return 1;
    }
    sqlite3_busy_timeout(db, 10000);
    const char *sql = argv[2];
    int rc = SQLITE_OK;
    while (rc == SQLITE_OK && sql && *sql) {
        sqlite3_stmt *s = NULL;
        rc = sqlite3_prepare_v2(db, sql, -1, &s, &sql);
        if (rc != SQLITE_OK || !s)
            break;
        while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(s); c++) {
                const unsigned char *t = sqlite3_column_text(s, c);
                printf("%s%s", c ? "|" : "", t ? (const char *)t : "");
            }
            putchar('\n');
        }
        sqlite3_finalize(s);
        rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    if (rc != SQLITE_OK)
        fprintf(stderr, "f_sql: %s\n", sqlite3_errmsg(db));
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : 1;
}
