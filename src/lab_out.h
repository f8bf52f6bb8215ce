/* The precision lab's result (lab.h) as output: its table and closing
 * sentence as text, its records (one "lab_format" per row, then one
 * "lab"), and the fields both are made of, which `export lab` writes as
 * CSV or JSON. The one writer of each, shared by `precisions` as it
 * finishes and by `show lab` / `export lab` reading the session log, so a
 * stored lab reads as the live one did. */
#ifndef TCJ_LAB_OUT_H
#define TCJ_LAB_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "lab.h"

/* One named field: text ('s', NULL is null), integer ('i'), number ('n',
 * NAN is null) or null ('z'). */
typedef struct lab_cell {
    const char *name;
    char type;
    const char *s;
    int64_t i;
    double d;
} lab_cell;

#define LAB_MAX_CELLS 40

/* The summary's fields (row < 0) or one row's (docs/JSON.md, records lab
 * and lab_format; the row's start with format, lab_id excluded). Strings
 * point into r or into buf (size bytes, kept for the cells' life).
 * Returns the count. */
size_t lab_cells(const lab_result *r, int row, lab_cell *out, char *buf, size_t size);
/* The cells as members of the open object of w. */
void lab_cells_json(json_w *w, const lab_cell *c, size_t n);

/* The sentence that ends the table, without indentation or newline:
 * which format is the fastest with overlap >= min-overlap, or that none
 * is and which comes closest. */
void lab_sentence(const lab_result *r, char *buf, size_t size);

/* The table and the sentence, through out_printf. */
void lab_print(const lab_result *r);
/* One "lab_format" record per row, then the "lab" record. */
void lab_records(const lab_result *r);

#endif
