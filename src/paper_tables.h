/* The FASTED paper's own figures, beside which tcjoin prints what it
 * measures: Table 5 (leave-one-out, A100, Synth |D| = 10^5, d = 4096) keyed
 * by switch name, and the metric set of Table 6 (counters of fasted and
 * ted at d = 128, 256, 4096). Kept apart from src/fasted_opts.c, which owns
 * the switches' names, bits and texts. */
#ifndef TCJ_PAPER_TABLES_H
#define TCJ_PAPER_TABLES_H

/* The paper's all-on figure: derived TFLOPS on the A100. */
#define PAPER_T5_ALL_ON 154.0

/* One row of Table 5. name: a switch name (src/fasted_opts.c), or a
 * combination "a+b" the paper turned off together; tflops 0 when the paper
 * has no such row. why: one line on why the H200 ranks it differently. */
typedef struct paper_t5_row {
    const char *name;
    const char *paper_label;
    double tflops;
    const char *why;
} paper_t5_row;

extern const paper_t5_row paper_t5[]; /* ends with a NULL name */
const paper_t5_row *paper_t5_find(const char *name);
/* The paper's slowdown against all on (154 / tflops), 0 when it has none. */
double paper_t5_slowdown(const paper_t5_row *r);

/* Table 6's metrics: label, the CUPTI metric read for fasted and for ted
 * (they differ for the tensor pipe: FP16 vs FP64), a scale from the CUPTI
 * unit to the shown one, and the paper's values (NaN: not available here). */
typedef struct paper_t6_metric {
    const char *label;
    const char *unit;
    const char *metric_fasted, *metric_ted;
    double scale;
    double paper[6]; /* fasted d=128, 256, 4096, ted d=128, 256, 4096 */
} paper_t6_metric;

#define PAPER_T6_COLS 6
extern const paper_t6_metric paper_t6[]; /* ends with a NULL label */
extern const int paper_t6_d[3];          /* 128, 256, 4096 */
extern const char *const paper_t6_engine[2];
/* Why the paper's cells are empty, and how the paper reports ted at d=4096. */
extern const char paper_t6_note[];
extern const char paper_t6_ted_smem[];

#endif
