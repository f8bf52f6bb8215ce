/* Tables generated at build time (build/gen/, by scripts/gen_*.sh) and
 * compiled into the program, so `explain`, `ablate` and `profile table6`
 * have something to show without a GPU:
 *   bench_tables.c  the measured leave-one-out (and Table 6, when present)
 *                   from docs/BENCHMARKS.md, with GPU, date and commit
 *   kernel_tags.c   kernel source lines tagged with a switch name:
 *                   `code; / * [swizzle] * /` (one line) or
 *                   `/ * [swizzle] { * / ... / * } * /` (a block)
 *   sass_counts.c   instruction counts of each compiled FASTED variant
 *                   (cuobjdump -sass), or why there are none
 * Each generator takes a symbol prefix, so tests can embed fixtures beside
 * the real tables. */
#ifndef TCJ_TEACH_GEN_H
#define TCJ_TEACH_GEN_H

/* One row of a measured leave-one-out table: the switch turned off
 * ("" for all on), kernel ms, derived TFLOPS, slowdown against all-on. */
typedef struct teach_bench_row {
    const char *name;
    double kernel_ms, tflops, slowdown;
} teach_bench_row;

/* One row of a measured Table 6: metric label, then fasted at d = 128, 256,
 * 4096 and ted at the same d; NaN where the cell holds no number, with the
 * cell's text kept (e.g. "out of smem"). */
typedef struct teach_t6_row {
    const char *metric;
    double v[6];
    const char *text[6];
} teach_t6_row;

typedef struct teach_bench {
    const char *label; /* "GPU ..., date ..., commit ...; setting" ("" when none) */
    const teach_bench_row *rows;
    int nrows;
    const char *t6_label;
    const teach_t6_row *t6;
    int nt6;
} teach_bench;

/* One tagged kernel excerpt: switch name, file, first line, the lines. */
typedef struct teach_excerpt {
    const char *tag;
    const char *file;
    int line;
    const char *text;
} teach_excerpt;

typedef struct teach_excerpts {
    const teach_excerpt *rows;
    int n;
    int files; /* kernel files scanned */
} teach_excerpts;

/* SASS instruction counts of one variant's count kernel. */
typedef struct teach_sass_row {
    const char *variant; /* "all-on", "no-swizzle", ... */
    const char *function;
    const char *arch;
    int hmma, hgmma, ldsm, ldgsts, lds, sts, utmaldg, total;
} teach_sass_row;

typedef struct teach_sass {
    const char *status; /* "" when counted, else why not */
    const teach_sass_row *rows;
    int n;
} teach_sass;

extern const teach_bench teach_bench_doc;  /* build/gen/bench_tables.c */
extern const teach_excerpts teach_tags;    /* build/gen/kernel_tags.c */
extern const teach_sass teach_sass_counts; /* build/gen/sass_counts.c */

#endif
