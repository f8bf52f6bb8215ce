/* Engines: ways to compute the ε-join. One file per engine (src/engine_*.c),
 * one row per engine in engine_table (src/engine_table.c). Engines never
 * print: they fill a join_result or return an error code with err_msg(). */
#ifndef TCJ_ENGINE_H
#define TCJ_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

typedef enum join_mode {
    JOIN_COUNT,    /* only the total pair count */
    JOIN_PERPOINT, /* neighbour count per query row (self included) */
    JOIN_PAIRS,    /* every pair streamed to a sink in bounded batches */
    JOIN_HIST,     /* pairs counted per bin of squared distance */
} join_mode;

/* One batch of pairs. i is the query row, j the candidate row (both global
 * row numbers); d2 the squared distance as the engine computed it, widened
 * to double. Arrays are valid only during the call. */
typedef struct pair_batch {
    size_t k;
    const uint32_t *i, *j;
    const double *d2;
} pair_batch;

/* Receives pair batches; returns 0 to go on, nonzero (a TCJ_E* code, with
 * err_msg set) to stop the run. */
typedef struct pair_sink {
    int (*put)(void *ctx, const pair_batch *b);
    void *ctx;
} pair_sink;

/* Engine settings that persist across runs (`set`). */
typedef struct engine_opts {
    int threads;         /* CPU threads, 0 = one per core */
    int symmetric;       /* GPU: compute tiles on/above the diagonal only */
    unsigned fasted_off; /* FASTED optimizations turned off (bit per switch) */
    int ted_paper;       /* ted: 1 = the TED-Join paper's WMMA kernel */
    int index_k;         /* ted-index: dimensions indexed, default 6 */
    size_t batch_pairs;  /* pairs per sink batch (host and device buffers) */
    int device;          /* CUDA device ordinal */
} engine_opts;

void engine_opts_default(engine_opts *o);

typedef struct join_spec {
    const dataset *ds;
    double eps;
    size_t q0, q1; /* query rows [q0, q1); candidates are all rows */
    join_mode mode;
    const engine_opts *opts;

    uint64_t *counts; /* PERPOINT: q1-q0 entries, zeroed by the engine */
    pair_sink sink;   /* PAIRS */

    /* HIST: nbins+1 ascending edges of squared distance. hist[b] counts
     * pairs with edges[b] < d2 <= edges[b+1]; *hist_below counts pairs with
     * d2 <= edges[0]. Pairs beyond edges[nbins] are not counted; eps is
     * ignored in this mode (the engine joins at sqrt(edges[nbins])). */
    const double *hist_edges;
    size_t hist_nbins;
    uint64_t *hist;
    uint64_t *hist_below;

    /* Checked between work batches; set to nonzero to stop (TCJ_ECANCEL). */
    const volatile int *cancel;
    /* Called now and then with the fraction done, from the calling thread. */
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
} join_spec;

#define JOIN_MAX_PHASES 8
#define JOIN_MAX_METRICS 48

typedef struct join_phase {
    const char *name; /* static string: "h2d", "convert", "norms", "kernel", "d2h", "sink" */
    double seconds;
} join_phase;

typedef struct join_metric {
    char name[128]; /* counter or clock name, as stored in the counters table */
    double value;
    char unit[16];
} join_metric;

typedef struct join_result {
    uint64_t pairs;        /* pairs for the query rows, self-pairs included */
    double seconds;        /* end to end, set by engine_run */
    double kernel_seconds; /* join kernels alone (GPU); compute loop (CPU) */
    join_phase phase[JOIN_MAX_PHASES];
    int nphase;
    size_t d_padded;  /* dimension as computed (FASTED: multiple of 64) */
    char device[128]; /* "NVIDIA H200 (sm_90, 132 SMs)" or the CPU */
    char variant[96]; /* kernel variant / configuration actually run */
    char precision[32];
    join_metric metric[JOIN_MAX_METRICS];
    int nmetric;
} join_result;

typedef struct engine {
    const char *name;      /* fasted, ted, ted-index, fp64, cpu, cpu-fp16 */
    const char *precision; /* "fp64", "fp16-32", ... */
    const char *summary;   /* one line for help and the man page */
    int gpu;               /* needs a CUDA device */
    /* 0 if it can run here; else TCJ_ENODEV/TCJ_EUNSUP with err_msg. */
    int (*available)(void);
    int (*run)(const join_spec *spec, join_result *res);
} engine;

extern const engine *const engine_table[]; /* NULL-terminated */
const engine *engine_find(const char *name);

/* 0 when e can run here, else TCJ_ENODEV/TCJ_EUNSUP with the reason in
 * err_msg (a GPU engine on a machine without an NVIDIA driver says so). */
int engine_available(const engine *e);
/* Validate the spec, time the whole run, fill res->seconds and precision,
 * then call e->run. Returns 0 or a TCJ_E* code with err_msg. */
int engine_run(const engine *e, const join_spec *spec, join_result *res);

/* Helpers for engines. */
void join_result_phase(join_result *r, const char *name, double seconds);
void join_result_metric(join_result *r, const char *name, double value, const char *unit);
double engine_now(void); /* monotonic seconds */
/* Derived TFLOPS, the FASTED paper's count: 2*nq*n*d / seconds. */
double engine_tflops(double nq, double n, double d, double seconds);
/* Selectivity (|R| - nq) / nq for a join over nq query rows. */
double engine_selectivity(uint64_t pairs, size_t nq);

#endif
