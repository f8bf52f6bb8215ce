/* Aligned tables and per-row records for query results. */
#include "out_table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "out.h"

void out_table_init(out_table *t, const char *type)
{
    memset(t, 0, sizeof *t);
    t->type = type;
}

int out_table_row(void *ctx, int ncol, const char *const *names, const char *const *values)
{
    out_table *t = ctx;
    if (!t->names) {
        t->ncol = ncol;
        t->names = xcalloc((unsigned long)ncol, sizeof *t->names);
        for (int c = 0; c < ncol; c++)
            t->names[c] = xstrdup(names[c] ? names[c] : "");
    }
    if (t->nrow == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cells = xrealloc(t->cells, t->cap * (size_t)t->ncol * sizeof *t->cells);
        t->types = xrealloc(t->types, t->cap * (size_t)t->ncol);
    }
    /* The store gives each value's SQLite type after the names. */
    const char *types = names[ncol];
    for (int c = 0; c < t->ncol; c++) {
        const char *v = c < ncol ? values[c] : NULL;
        t->cells[t->nrow * (size_t)t->ncol + (size_t)c] = xstrdup(v ? v : "");
        t->types[t->nrow * (size_t)t->ncol + (size_t)c] = !v ? 'n' : types ? types[c] : 't';
    }
    t->nrow++;
    return 0;
}

/* A cell as the JSON value of its SQLite type: integers and reals as
 * numbers (reals come as text that reads back to the stored double), text
 * as a string however it looks. */
static void rec_cell(out_rec *r, const char *key, const char *v, char type)
{
    switch (type) {
    case 'n':
        out_rec_null(r, key);
        break;
    case 'i':
        out_rec_int(r, key, strtoll(v, NULL, 10));
        break;
    case 'r':
        out_rec_dbl(r, key, strtod(v, NULL));
        break;
    default:
        out_rec_str(r, key, v);
    }
}

/* Plain display: long fractions shortened to 6 significant digits. */
static const char *disp(const char *v, char *buf, size_t size)
{
    char *end;
    if (*v && strchr(v, '.') && strspn(v, "0123456789-+.eE") == strlen(v)) {
        double d = strtod(v, &end);
        if (!*end && strlen(v) > 8) {
            snprintf(buf, size, "%.6g", d);
            return buf;
        }
    }
    return v;
}

void out_table_flush(out_table *t)
{
    size_t nc = (size_t)t->ncol;
    for (size_t i = 0; i < t->nrow; i++) {
        out_rec *r = out_rec_begin(t->type);
        for (size_t c = 0; c < nc; c++)
            rec_cell(r, t->names[c], t->cells[i * nc + c], t->types[i * nc + c]);
        out_rec_end(r);
    }
    if (t->vertical) {
        size_t w = 0;
        for (size_t c = 0; c < nc; c++)
            w = strlen(t->names[c]) > w ? strlen(t->names[c]) : w;
        for (size_t i = 0; i < t->nrow; i++)
            for (size_t c = 0; c < nc; c++)
                out_printf("%-*s  %s\n", (int)w, t->names[c], t->cells[i * nc + c]);
    } else if (t->nrow) {
        char tmp[64];
        for (size_t i = 0; i < t->nrow * nc; i++) {
            const char *d = disp(t->cells[i], tmp, sizeof tmp);
            if (d != t->cells[i]) {
                free(t->cells[i]);
                t->cells[i] = xstrdup(d);
            }
        }
        size_t *w = xcalloc(nc ? nc : 1, sizeof *w);
        for (size_t c = 0; c < nc; c++) {
            w[c] = strlen(t->names[c]);
            for (size_t i = 0; i < t->nrow; i++)
                if (strlen(t->cells[i * nc + c]) > w[c])
                    w[c] = strlen(t->cells[i * nc + c]);
        }
        for (size_t c = 0; c < nc; c++)
            out_printf("%-*s%s", c + 1 < nc ? (int)w[c] : 0, t->names[c], c + 1 < nc ? "  " : "\n");
        for (size_t i = 0; i < t->nrow; i++)
            for (size_t c = 0; c < nc; c++)
                out_printf("%-*s%s", c + 1 < nc ? (int)w[c] : 0, t->cells[i * nc + c],
                           c + 1 < nc ? "  " : "\n");
        free(w);
    }
    for (size_t i = 0; i < t->nrow * nc; i++)
        free(t->cells[i]);
    for (size_t c = 0; c < nc; c++)
        free(t->names[c]);
    free(t->cells);
    free(t->types);
    free(t->names);
    const char *type = t->type;
    int vertical = t->vertical;
    out_table_init(t, type);
    t->vertical = vertical;
}
