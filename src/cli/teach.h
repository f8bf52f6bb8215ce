/* What `explain`, `ablate` and `profile table6` share for teaching: the
 * measured slowdown of a switch (the session log's latest ablate, else the
 * table embedded from docs/BENCHMARKS.md), and the printing of the embedded
 * tables (src/teach_gen.h) when nothing can be measured here. */
#ifndef TCJ_TEACH_H
#define TCJ_TEACH_H

#include <stddef.h>

#include "session.h"

struct out_rec;
#include <stdint.h>

#include "paper_tables.h"
#include "teach_gen.h"

/* text right-aligned in width terminal columns (UTF-8 aware: "—" is one
 * column, three bytes), written into buf. */
const char *teach_cell(char *buf, size_t size, const char *text, int width);

/* The off bits of a switch name or of "a+b" (src/fasted_opts.c's bits,
 * OR-ed); 0 when a name is not a switch. */
unsigned teach_off_bits(const char *names);

/* 1 when the variant name is a kernel this build can run (not "invalid",
 * nor the stub's "none"). */
int teach_variant_compiled(const char *variant);

/* Where a measured slowdown came from. */
enum { TEACH_NONE = 0, TEACH_SESSION = 1, TEACH_DOC = 2 };

/* The slowdown of turning switch `name` off (kernel time over the mma.sync
 * all-on's): from the latest ablate in the session log, else from the
 * embedded doc table. label says where from (GPU, date, shape). Returns
 * TEACH_*; *slow is 0 with TEACH_NONE. */
int teach_slowdown(session *s, const teach_bench *doc, const char *name, double *slow, char *label,
                   size_t label_size);

/* The excerpts tagged `name`, printed with file:line (and added to r as
 * "excerpts" when r is not NULL); a line saying they are not tagged when
 * there is none. Returns how many were printed. */
int teach_print_excerpts(const teach_excerpts *t, const char *name, struct out_rec *r);

/* SASS counts of variant against all-on (or why there are none), added to
 * r as "all_on" and "counts" when r is not NULL. Returns 0, or TCJ_EINVAL
 * when the table has no all-on kernel. */
int teach_print_sass(const teach_sass *t, const char *variant, struct out_rec *r);

/* The stored leave-one-out table (doc) beside the paper's, marked as not
 * measured here. */
void teach_print_stored_t5(const teach_bench *doc, const char *why);

/* The rows (switch names, or "a+b" combinations, with their slowdown)
 * ranked by slowdown beside the paper's rank, with a line on the likely
 * cause where the two ranks differ. */
void teach_print_ranking(const char *const *names, const double *slow, int n, const char *what);

/* ---- Table 6 ---- */
/* Measured cells: value per metric and column (engine-major, then d), NaN
 * where not measured; note per column ("" or why not). */
typedef struct teach_t6_cells {
    double v[8][PAPER_T6_COLS];
    char note[PAPER_T6_COLS][160];
    int64_t run[PAPER_T6_COLS];
} teach_t6_cells;

/* All cells NaN (not measured), no notes. */
void teach_t6_init(teach_t6_cells *c);
/* The cells in the paper's layout, "measured (paper)", with the notes;
 * measured says whether they were measured here (the JSON record says so). */
void teach_print_t6(const teach_t6_cells *c, const char *title, int measured);
/* The doc's Table 6 (cells matched by metric label), marked as not
 * measured here for the reason why. */
void teach_print_t6_stored(const teach_bench *doc, const char *why);

#endif
