/* The precision lab (`precisions`): every number format of the engine
 * table (the rows' .lab) run on one dataset and eps, each judged against
 * one reference by the accuracy comparer (src/compare.h), and the fastest
 * format whose overlap reaches a threshold. Per format the lab runs the
 * GPU row where engine_available says it can, else the CPU emulation (the
 * row with .gpu == 0 and the same .lab), so a format added to the table
 * is measured with no change here. The reference's timed run is made once
 * per lab and stands for it in every comparison, and its pairs are made
 * once per block of rows for all the formats together.
 * Library code: nothing here prints or stores; the caller does both
 * through the callbacks, as each run finishes (src/cli/cmd_precisions.c). */
#ifndef TCJ_LAB_H
#define TCJ_LAB_H

#include <stddef.h>
#include <stdint.h>

#include "compare.h"
#include "engine.h"

#define LAB_MAX_FORMATS 16
#define LAB_DEFAULT_MIN_OVERLAP 0.9999
#define LAB_REPEATS 3 /* timings of the two fastest rows before one is named */

typedef enum lab_status {
    LAB_OK,          /* ran and was judged */
    LAB_REFUSED,     /* the engine refused the data or the options (one line in reason) */
    LAB_UNAVAILABLE, /* no row of the format can run here (reason says why) */
    LAB_FAILED,      /* any other error of the engine (reason) */
} lab_status;

/* "ok", "refused", "unavailable", "failed" (as stored and in JSON). */
const char *lab_status_name(lab_status st);
/* The inverse; LAB_FAILED for an unknown name. */
lab_status lab_status_parse(const char *name);

/* One format's row. Names are copied, so a row read back from the
 * session log looks the same as one just measured. */
typedef struct lab_row {
    char format[24]; /* the rows' .lab: "fp16", "ue4m4", ... */
    int bits;        /* .lab_bits: bits per stored value */
    char engine[32]; /* the engine that ran it */
    lab_status status;
    char reason[256];              /* why it did not run (status != LAB_OK), else "" */
    int64_t run_id, comparison_id; /* set by the caller once stored (0: not stored) */
    int reused;                    /* the run is a stored one (lab_spec.reuse), not timed here */

    uint64_t pairs;  /* its COUNT run's pairs */
    double kernel_s; /* kernel time of that run (its end-to-end time when it has none) */
    double seconds;  /* end-to-end time of that run */
    size_t d_padded;
    /* Against the reference: overlap (eq. 3), both, only_engine, only_ref,
     * distance errors in data units, one-sided pairs' largest |rel|. */
    cmp_side side;
    /* The transforms the run records (join_result metrics of the same
     * names, NAN when it records none): centred 0|1 (`set center`),
     * scale_log2 (the power of two an FP8 format scales by), shifted 0|1
     * (`set shift on`), underflow_values (values that became 0), inexact
     * (int8: values that were not integers). tflops_paper: the engine's
     * own TFLOPS figure. */
    double centred, scale_log2, shifted, underflow_values, inexact, tflops_paper;

    /* Derived by lab_derive: TFLOPS (tflops_paper, else the FASTED
     * paper's count 2*n*n*d_padded/kernel_s), the speed against the
     * baseline (its kernel_s / this kernel_s; NAN when the baseline did
     * not run), the errors relative to eps (max: the larger of |err_min|
     * and |err_max|). */
    double tflops, speedup;
    double err_mean_rel, err_std_rel, err_max_rel;
} lab_row;

typedef struct lab_result {
    int64_t lab_id; /* set by the caller once stored */
    char dataset[96];
    size_t n, d;
    double eps;
    char ref_engine[32];
    int64_t ref_run_id;
    uint64_t ref_pairs;
    double ref_kernel_s;
    double min_overlap;
    /* The format speeds are measured against (lab_baseline_format(); "" when
     * none) and its row (-1 when it is not among the rows, or did not run). */
    char baseline[24];
    int baseline_row;
    int nrow;
    lab_row row[LAB_MAX_FORMATS];
    /* lab_choose: the fastest ok row with overlap >= min_overlap (ties:
     * the earlier row), or -1; when -1, closest is the ok row of highest
     * overlap (-1 when no row ran). */
    int chosen, closest;
    /* lab_run then times the two fastest rows that reach min_overlap
     * (chosen and runner_up, -1 when there is one) LAB_REPEATS times in
     * all: the range of their kernel times (lo, hi; [0] chosen, [1] the
     * runner-up). Overlapping ranges are within noise: chosen is then the
     * earlier row of the two, so the verdict does not follow the noise;
     * otherwise the faster median. repeats 0: not timed again (a lab read
     * back from the session log). */
    int runner_up, repeats, within_noise;
    double rep_lo[2], rep_hi[2];
    /* Where the lab's time went (wall seconds; 0 for a lab read back from
     * the session log): all of it, the reference's timed run, the
     * formats' timed runs, the pair pass and the part of it inside the
     * engines (the rest: sorting, merging, judging one-sided pairs). */
    double seconds, ref_seconds, runs_seconds, pass_seconds, pass_engine_seconds;
} lab_result;

/* The formats the lab can run, in table order (each .lab once). */
size_t lab_format_names(const char **names, size_t max);
/* The format speeds are compared with: the .lab of the row of highest
 * ENGINE_ROLE_DEFAULT rank among the rows with a .lab (FASTED's fp16),
 * whether or not it can run here; NULL when no such row. */
const char *lab_baseline_format(void);

/* Pick one row per format, in table order: the GPU row when
 * engine_available(row, o) is 0 and cpu_only is 0, else the row with
 * .gpu == 0. names[0..nnames) restricts the formats (nnames 0: all); an
 * unknown name is TCJ_EINVAL naming the valid ones. A format with no row
 * that can run here gets the first row of the format, its
 * engine_available code in avail_rc and the reason in why; otherwise
 * avail_rc is 0. Returns 0 or TCJ_EINVAL; *n the count. */
typedef struct lab_pick {
    const engine *e;
    int avail_rc;
    char why[256];
} lab_pick;
int lab_pick_rows(const engine_opts *o, const char *const *names, size_t nnames, int cpu_only,
                  lab_pick *out, size_t max, size_t *n);

/* The reference: the available engine of highest ENGINE_ROLE_TRUTH rank,
 * among the CPU rows only when cpu_only (exact on a GPU, else cpu). */
const engine *lab_reference(const engine_opts *o, int cpu_only);

typedef struct lab_spec {
    const dataset *ds;
    double eps;
    const engine_opts *opts;
    const engine *ref;
    const lab_pick *rows; /* from lab_pick_rows, or built by hand (tests) */
    size_t nrows;
    double min_overlap;
    size_t block_pairs; /* the comparer's bound (0: its default) */
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac, const char *what);
    void *progress_ctx;
    /* Called once the reference ran (res); after each format's COUNT run
     * (run, with its code run_rc: 0, or the error that stopped it), so
     * the caller stores the run as it finishes and sets row->run_id; and
     * once a row is final (its comparison cmp, NULL unless the row is ok;
     * the row's position is row - r->row). Unavailable rows get on_row
     * only. A nonzero return stops the lab with that code. */
    int (*on_ref)(void *ctx, lab_result *r, const join_result *res);
    /* A stored run of the reference that stands for its timed run (the
     * same data, eps and settings: src/cli/reuse.c), and its id; NULL: run it.
     * on_ref still gets it, with r->ref_run_id already set. */
    const join_result *ref_reused;
    int64_t ref_reused_id;
    /* A stored COUNT run that stands for a format's timed run (the same
     * data, eps and settings: src/cli/reuse.c, which also reads the run's
     * transforms back), so `precisions` after `compare` or `run` does not
     * time a format again: returns 1 with *out and *id filled, 0 when
     * there is none, or a negative code (the lab then stops). The row
     * keeps the stored run's id (reused 1) and on_run is not called for
     * it. NULL: every format runs. */
    int (*reuse)(void *ctx, const engine *e, join_result *out, int64_t *id);
    int (*on_run)(void *ctx, lab_result *r, lab_row *row, const engine *e, const join_result *run,
                  int run_rc);
    int (*on_row)(void *ctx, lab_result *r, lab_row *row, const engine *e, const cmp_result *cmp);
    void *ctx;
} lab_spec;

/* Run the lab into *r (zeroed first): the reference once in COUNT mode
 * (its failure fails the lab), each row's COUNT run, and one pair pass
 * (src/compare.h, cmp_pass) judging every row against the reference:
 * per block of rows the reference's pairs once and each row's. A row
 * whose engine fails is kept with its status and one-line reason and the
 * lab goes on; TCJ_ECANCEL stops it; a failure of the reference's pair
 * pass fails the rows waiting for it and the lab. Ends with lab_derive
 * and lab_choose. Returns 0, TCJ_ECANCEL, the reference's error or a
 * callback's code, with err_msg. r is large: allocate it (about 30 KB). */
int lab_run(const lab_spec *s, lab_result *r);

/* Fill one row's transforms from a run's metrics (NAN where absent). */
void lab_row_metrics(lab_row *row, const join_result *res);
/* Set one transform by metric name (the names lab_row_metrics reads);
 * other names are ignored. For rows read back from the session log. */
void lab_row_set_metric(lab_row *row, const char *name, double value);
/* The row with every number unset (NAN) and the status ok. */
void lab_row_init(lab_row *row);

/* TFLOPS, speedups and relative errors of every row; baseline_row. */
void lab_derive(lab_result *r);
/* chosen and closest from the rows and min_overlap (see lab_result). */
void lab_choose(lab_result *r);

/* The transforms a row records, as shown: "centred, 2^-3, shifted",
 * "underflow 12", "inexact 40", or "-" when none. */
void lab_transforms(const lab_row *row, char *buf, size_t size);

#endif
