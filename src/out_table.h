/* Rows from the session log, printed as an aligned table (plain) or one
 * record per row (--json, each value typed as stored). Feed rows with
 * out_table_row as a store_row_fn, then out_table_flush. */
#ifndef TCJ_OUT_TABLE_H
#define TCJ_OUT_TABLE_H

#include <stddef.h>

typedef struct out_table {
    const char *type; /* record type of each row */
    int ncol;
    char **names; /* ncol, owned */
    char **cells; /* nrow*ncol, owned ("" for NULL) */
    char *types;  /* nrow*ncol: 'i' integer, 'r' real, 't' text, 'n' NULL (store.h) */
    size_t nrow, cap;
    int vertical; /* one "name  value" line per column (show run) */
} out_table;

void out_table_init(out_table *t, const char *type);
/* A store_row_fn: names[ncol] is the store's string of type letters
 * (store.h); a caller that is not the store passes NULL there (every value
 * is then text). */
int out_table_row(void *ctx, int ncol, const char *const *names, const char *const *values);
/* Print everything and free the rows. */
void out_table_flush(out_table *t);

#endif
