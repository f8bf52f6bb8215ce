/* The dashboard's view model: what the panels draw, built from the output
 * writer's records ("run", "compare", "sweep", "curve", "dataset", "info",
 * "profile", "kdist", "lab_format", "lab", "dbscan", "dbscan_curve", "hdbscan") and text (the log).
 * No ncurses here, so it is testable.
 */
#ifndef TCJ_UI_VIEW_H
#define TCJ_UI_VIEW_H

#include <stddef.h>
#include <stdint.h>

#define UI_MAX_RUNS 64
#define UI_MAX_BINS 256
#define UI_MAX_CURVE 512
#define UI_MAX_COUNTERS 48
#define UI_LOG_LINES 2000
#define UI_MAX_LAB 16
#define UI_MAX_LADDER 16
#define UI_CLU_TOP 10
#define UI_HD_NODES 256 /* an hdbscan record's condensed clusters kept, the root included */

typedef struct ui_run_row {
    int64_t id;
    char engine[24];
    char dataset[48];
    double eps, sel, time_s, tflops;
    uint64_t pairs;
    int failed;    /* the run stopped on an error, or was cancelled: */
    int cancelled; /* by the user (Esc, Ctrl-C), not by an error */
} ui_run_row;

typedef struct ui_metric {
    char name[64];
    double value;
} ui_metric;

typedef struct ui_view {
    /* dataset panel ("dataset" and "info" records); the session's current
     * eps, set by the front end after each command */
    int have_ds, have_info;
    int cur_have_eps;
    double cur_eps;
    char ds_name[96], ds_format[16], ds_hash[24];
    double n, d, vmin, vmax, absmax, fp16_over, fp16_under, dups;

    /* runs panel: newest last */
    ui_run_row runs[UI_MAX_RUNS];
    int nruns;

    /* compare panel and its error histogram */
    int have_cmp;
    char cmp_a[24], cmp_b[24], cmp_dataset[96];
    double cmp_eps, overlap, err_mean, err_std, err_min, err_max, only_a, only_b, both;
    /* The ground truth (cmp_b when B was it) and B's numbers against it
     * (NaN when B was the reference itself). */
    char cmp_ref[24];
    double b_overlap, b_only_engine, b_only_ref;
    double time_a, time_b;
    size_t nbins;
    double bin_lo[UI_MAX_BINS], bin_hi[UI_MAX_BINS], bin_count[UI_MAX_BINS];

    /* selectivity curve: S(eps) points, and sweep results as marks; the
     * dataset they were measured on */
    char curve_dataset[96];
    size_t ncurve;
    double curve_eps[UI_MAX_CURVE], curve_sel[UI_MAX_CURVE];
    size_t nsweep;
    double sweep_target[32], sweep_eps[32], sweep_sel[32];

    /* counters panel (profile record, or metrics of the latest run) */
    char cnt_engine[24], cnt_note[200];
    int64_t cnt_run;
    ui_metric cnt[UI_MAX_COUNTERS];
    int ncnt;

    /* clocks panel: the latest GPU run's NVML summary (metrics of a run) */
    char clk_engine[24];
    int64_t clk_run;
    ui_metric clk[16];
    int nclk;

    /* log: a ring of lines */
    char *log[UI_LOG_LINES];
    int log_head, log_n;
    int log_err[UI_LOG_LINES];

    unsigned version; /* bumped on every change, so the screen knows */

    /* k-distance panel ("kdist" record, ui/view_kdist.c): the sorted
     * curve, its knee, and whose curve it is (dataset, K, engine) */
    size_t nkdist;
    double kdist_rank[UI_MAX_CURVE], kdist_dist[UI_MAX_CURVE];
    int kdist_k, kdist_have_knee;
    double kdist_n, kdist_knee_rank, kdist_knee_dist, kdist_eps;
    char kdist_engine[24], kdist_dataset[96];

    /* clusters ("dbscan_curve" and "dbscan" records, ui/view_clusters.c),
     * drawn in the k-distance panel's place while clu_newer (a kdist
     * record clears it): the cluster count against eps, the eps marked,
     * the widest plateau; the last clustering's counts and largest sizes */
    int clu_newer, clu_have_run, clu_ntop;
    size_t nclu;
    double clu_x[UI_MAX_CURVE], clu_y[UI_MAX_CURVE];
    double clu_max, clu_mark_eps, clu_mark_n, clu_plateau_lo, clu_plateau_hi, clu_plateau_n;
    double clu_minpts, clu_n, clu_eps, clu_clusters, clu_core, clu_border, clu_noise;
    double clu_top[UI_CLU_TOP];
    char clu_engine[24], clu_dataset[96];
    char clu_flags[96]; /* the clustering's red flags, comma-separated ("" none) */
    /* an "hdbscan" record (ui/view_clusters.c) in the clusters' place
     * while hd_show (a dbscan or dbscan_curve record clears it): its
     * condensed tree's first clusters, node 0 the root */
    int hd_show, hd_nodes;
    int hd_parent[UI_HD_NODES], hd_label[UI_HD_NODES];
    double hd_lambda[UI_HD_NODES], hd_size[UI_HD_NODES];
    double hd_mcs, hd_clusters, hd_noise;

    /* precision lab panel ("lab_format" records, then a "lab" record;
     * ui/view_lab.c): one point per format, the lab it belongs to */
    int nlab, lab_done;
    int64_t lab_id;
    struct ui_lab_point {
        char format[24], engine[32], status[16];
        double kernel_s, overlap;
    } lab[UI_MAX_LAB];
    char lab_dataset[96], lab_ref[32], lab_chosen[24], lab_closest[24];
    double lab_eps, lab_min_overlap;

    /* ladder panel ("ladder" record, ui/view_ladder.c), drawn in the lab
     * panel's place while ladder_newer (a lab record clears it): one bar
     * per rung, its % of cuBLAS */
    int nladder, ladder_newer;
    int64_t ladder_id;
    char ladder_device[96];
    double ladder_n, ladder_d;
    struct ui_ladder_bar {
        int rung;
        char name[24], status[12], blas[8];
        double pct, tflops;
    } ladder[UI_MAX_LADDER];
} ui_view;

void ui_view_init(ui_view *v);
void ui_view_free(ui_view *v);
/* Take one JSON record (ignored if it does not parse). Returns the panel
 * (ui_panel_id) that got new data, or -1. */
int ui_view_record(ui_view *v, const char *json_text);
/* Append text to the log, split at newlines; err marks error lines. A
 * partial last line is kept open for the next call. */
void ui_view_log(ui_view *v, const char *text, int err);
/* Log line k counting from the oldest, k < v->log_n. */
const char *ui_view_log_line(const ui_view *v, int k, int *err);

/* Add or update a run row (from the session log), kept in ascending id
 * order; fields the row lacks (NAN) keep what a record gave. */
void ui_view_add_run(ui_view *v, const ui_run_row *row);

/* Take a "kdist" record (ui/view_kdist.c); returns UI_KDIST. */
struct json;
int ui_view_take_kdist(ui_view *v, const struct json *r);
/* Take a "dbscan_curve" (curve 1) or "dbscan" record (ui/view_clusters.c);
 * returns UI_KDIST, whose place the clusters panel takes. */
int ui_view_take_clusters(ui_view *v, const struct json *r, int curve);
/* Take an "hdbscan" record (ui/view_clusters.c); returns UI_KDIST, whose
 * place the clusters panel takes, drawing its condensed tree. */
int ui_view_take_hdbscan(ui_view *v, const struct json *r);
/* Take a "ladder" record (ui/view_ladder.c); returns UI_LAB, whose place
 * the ladder panel takes. */
int ui_view_take_ladder(ui_view *v, const struct json *r);
/* Take a "lab_format" or "lab" record (ui/view_lab.c); returns UI_LAB.
 * A lab_format of another lab, or after the lab record, starts anew. */
int ui_view_take_lab(ui_view *v, const struct json *r, int summary);
/* 1 when every distance error of the comparison is exactly 0 (A's
 * distances equal the reference's on every pair both found). */
int ui_view_no_error(const ui_view *v);

/* Value of a metric by name in a list, NAN if missing. */
double ui_metric_get(const ui_metric *m, int n, const char *name);

#endif
