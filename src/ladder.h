/* The teaching ladder's results (`ladder`, docs/TEACHING.md): one row per
 * rung with its time, its share of cuBLAS, the profiler's evidence and the
 * clock it ran at; printed, written as JSON and stored (store/
 * store_ladder.c). Also the rung sources' diff and "why" paragraph, and
 * the derived-against-profiled arithmetic of the throttling lesson. Pure
 * host code: no GPU needed. */
#ifndef TCJ_LADDER_H
#define TCJ_LADDER_H

#include <stddef.h>
#include <stdint.h>

#include "json.h"

#define LADDER_MAX_RUNGS 16

typedef enum ladder_status {
    LADDER_OK,      /* checked against the reference, then timed */
    LADDER_WRONG,   /* its count differs from the reference: not timed */
    LADDER_NOT_RUN, /* the device cannot run it (note says why) */
    LADDER_FAILED,  /* it ran and failed (note holds the error) */
} ladder_status;
extern const char *const ladder_status_names[]; /* "ok", "wrong", "not run", "failed" */

typedef struct ladder_row {
    int rung;
    char name[24], unit[12], blas[8];
    int64_t run_id; /* the stored timed run (0: none) */
    int status;     /* ladder_status */
    char note[200]; /* why not run, the error, or "" */
    uint64_t pairs;
    /* NAN where unknown: */
    double kernel_s, tflops, blas_tflops, pct_blas, speedup; /* speedup: over its prev rung */
    double tensor_pct, fma_pct, conflicts_pct, dram_pct, smem_pct, l2_hit_pct, occupancy_pct;
    double sm_mhz, power_w;    /* NVML means while the timed run ran */
    double peak_max, peak_run; /* derived % of peak at the max clock and at sm_mhz */
} ladder_row;

typedef struct ladder_view {
    int64_t id;
    char device[128], dataset[128], ref_engine[32];
    size_t n, d;
    double eps;
    uint64_t ref_pairs;
    int nrows;
    ladder_row row[LADDER_MAX_RUNGS];
} ladder_view;

/* Fill v's rows' derived fields: speedup over the rung each names as prev
 * (kern_ladder_rungs), pct_blas from blas_tflops, peak_max/peak_run from
 * the device's per-clock rate (ladder_peak_flops). */
void ladder_derive(ladder_view *v, int cc, int sms, double max_mhz);
/* Only the speedups and pct_blas (what a stored ladder needs again). */
void ladder_speedups(ladder_view *v);
/* Dense FLOPs one multiprocessor of compute capability cc does a clock in
 * unit ("cuda-fp32", "tc-fp16", "tc-fp8", "tc-int8"), from NVIDIA's
 * published peaks (sm_80, sm_90); 0 where this table does not know. */
double ladder_peak_flops(int cc, const char *unit);
/* The fraction of the n^2 pairs a rung's kernel computes: 1, or for a
 * symmetric rung of block tile bm the tiles on and above the diagonal. */
double ladder_work_fraction(int symmetric, size_t n, int bm);

/* The table as `ladder` prints it, and the record's fields into w. */
void ladder_print(const ladder_view *v);
void ladder_json(json_w *w, const ladder_view *v);

/* The embedded text of a file (src/ladder_src.h), or NULL. */
const char *ladder_src_find(const char *path);
/* The "why" of rung id: its file's first comment block (rungs past
 * KERN_LADDER_OWN: the rung's idea and its kernel's header comment), into
 * a malloc'ed string; NULL when there is none. */
char *ladder_why(int id);
/* A unified diff (3 lines of context) of a against b, labelled la and lb,
 * appended line by line to emit; returns the lines changed (0: equal).
 * Line-based LCS: O(lines(a) * lines(b)) time and memory, meant for kernel
 * files of a few hundred lines (refused above 4000 lines each: -1). */
int ladder_diff(const char *a, const char *b, const char *la, const char *lb,
                void (*emit)(void *ctx, const char *line), void *ctx);

#endif
