/* Engines: ways to compute the ε-join. One file per engine (src/engine_*.c),
 * one row per engine in engine_table (src/engine_table.c). Engines never
 * print: they fill a join_result or return an error code with err_msg(). */
#ifndef TCJ_ENGINE_H
#define TCJ_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "dataset.h"
#include "engine_opts.h"

/* A kernel library entry that runs one join (kernels.h's kern_join_fn),
 * spelled here so the domain's headers need not include kernels.h. */
struct kern_join_args;
struct kern_join_result;
typedef int (*engine_kjoin_fn)(const struct kern_join_args *a, struct kern_join_result *r);

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

    const struct engine *engine; /* the row being run: set by engine_run */

    /* tcjoin-mpi (src/dist.h): the GPU engines take the ranges of their
     * work list from this queue shared by the ranks (kernels.h's
     * kern_tiles) and compute only those (NULL: the whole run). */
    const struct kern_tiles *tiles;
    /* PAIRS under several ranks: the sink takes this rank's share of the
     * pairs only, and the caller merges what it built from them (DBSCAN's
     * forests and border labels, src/cluster/dbscan.c); 0: every rank's sink sees
     * every pair. */
    int sink_rank_share;
    /* A join inside an algorithm whose joins are not stored one by one
     * (the k-distance's refinement, the curve's Boruvka rounds): NVML does
     * not sample it, as its samples would be dropped and their start and
     * stop cost more than a small join's kernels. */
    int inner;
    /* The clustering layer's subset join (engine.consume alone, over
     * every row, q0 = 0, q1 = n): the dataset's rows sub[0..nsub), the
     * first sub_q of them queries; the pairs with a query row among them
     * are consumed. An engine that cannot declines (ENGINE_DECLINED); exact
     * off its grid path reads the rows from its resident copy of the
     * dataset (kernels.h, kern_subset_run). NULL: every row. */
    const uint32_t *sub;
    size_t nsub, sub_q;
} join_spec;

#define JOIN_MAX_PHASES 8
#define JOIN_MAX_METRICS 160 /* 8 devices of a list: shares and NVML figures each */

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

/* The type an engine's squared distances are computed and compared in. */
typedef enum engine_dist {
    ENGINE_DIST_UNSET, /* a row that forgot to say (a unit test rejects it) */
    ENGINE_DIST_FP32,  /* d2 formed and compared in FP32 (float eps^2) */
    ENGINE_DIST_FP64,  /* d2 formed and compared in FP64 */
} engine_dist;

/* Roles the program fills without naming an engine. An engine's rank for a
 * role: 0 = never, higher = preferred; the chosen one is the available
 * engine of highest rank (engine_best). */
typedef enum engine_role {
    ENGINE_ROLE_DEFAULT, /* what `run` runs when no engine is named */
    ENGINE_ROLE_TRUTH,   /* the ground truth compare and sweep measure against */
    ENGINE_NROLES,
} engine_role;

/* One row of the engine table: what the engine computes, stated so that no
 * code outside engine_table.c needs to compare names or precision strings. */
/* k-distance: for each query row q, the squared distance to its K-th
 * nearest other row. The contract of engine.kdist:
 * - out[q - q0] = the K-th smallest of d2(q, j) over all rows j != q (self
 *   excluded by index, so a duplicate point is a neighbour at 0), d2 as the
 *   engine's arithmetic computes it, widened to double (the cpu engine:
 *   exact FP64, direct (a-b)^2 form, the same values its join compares
 *   with eps^2). Ties need no breaking: the K-th value is the same.
 * - 1 <= k <= KDIST_MAX_K and k <= n-1 (checked by kdist_run).
 * - Memory bounded by a per-row top-K (k values per query row in flight),
 *   never the pair set; engines never print.
 * - cancel and progress as in join_spec; res gets timings by phase,
 *   kernel_seconds, device, variant and precision as in a join (pairs 0).
 * Returns 0 or a TCJ_E* code with err_msg, or ENGINE_ESTIMATE when out
 * holds estimates (res their phases and metrics) that the engine's joins
 * are to make exact. Call it through kdist_run (src/cluster/kdist.h),
 * which validates the spec, refines estimates and times the run. */
#define KDIST_MAX_K 256

struct engine;
typedef struct kdist_spec {
    const struct engine *engine; /* set by kdist_run: the engine whose entry runs */
    const dataset *ds;
    size_t q0, q1; /* query rows [q0, q1); candidates are all rows */
    int k;
    const engine_opts *opts;
    double *out; /* q1-q0 entries, written by the engine */
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
    /* q1-q0 flags, zero (kdist_run's; NULL: none): an entry that returns
     * ENGINE_ESTIMATE sets those of the rows whose out is already the
     * engine's exact value, and the refinement leaves those rows. */
    unsigned char *known;
} kdist_spec;

/* What a PAIRS run's pairs are used for where they are computed, without
 * crossing to the host: the clustering layer's passes (src/cluster/) and
 * the library's radius graph (src/cli/api_graph.c); the io types are
 * kernels/cluster_types.h's, shared with the kernels. The clients ask an
 * engine for these and nothing else algorithm-specific (engine.consume);
 * each io says what comes out. */
typedef enum pair_use {
    PAIRS_DBSCAN,      /* DBSCAN's passes over every row at spec->eps (.dbscan) */
    PAIRS_CURVE_CORE,  /* the curve's core distances (and with K its first round) at max */
    PAIRS_CURVE_ROUND, /* one Boruvka round over spec's rows (a reordered copy: round->at) */
    PAIRS_MST_ROUND,   /* one Boruvka round of HDBSCAN*'s tree over every row, every pair (.mst) */
    PAIRS_GRAPH,       /* the radius-neighbours graph of every row, its entries kept (.graph) */
} pair_use;
typedef struct pair_consumer {
    pair_use use;
    dbscan_dev_io *dbscan;       /* PAIRS_DBSCAN */
    curve_core_io *core;         /* PAIRS_CURVE_CORE */
    const curve_round_io *round; /* PAIRS_CURVE_ROUND */
    mst_round_io *mst;           /* PAIRS_MST_ROUND */
    graph_dev_io *graph;         /* PAIRS_GRAPH */
    /* PAIRS_DBSCAN, out: the core pass's record (first); whether the
     * rest of the passes ran (res their record) and under which mode */
    struct join_result *first;
    int rest_ran;
    join_mode rest_mode;
} pair_consumer;
/* What an optional entry returns when it cannot take the work here (the
 * caller's general path then); err_msg left clear. */
#define ENGINE_DECLINED 1
/* What an engine's kdist entry returns when out holds estimates within the
 * engine's bound rather than its exact values (its k-distance pass is in
 * another arithmetic than its joins); err_msg left clear. The caller
 * (kdist_run) refines them with the engine's joins
 * (src/cluster/kdist_refine.h): engines never call up into the clients. */
#define ENGINE_ESTIMATE 2
typedef struct engine {
    const char *name;      /* fasted, ted, ted-index, fp64, cpu, cpu-fp16, ... */
    const char *precision; /* label only (stored, shown): "fp64", "fp16-32", ... */
    const char *summary;   /* one line for help and the man page */
    int gpu;               /* needs a CUDA device */
    /* 0 if it can run here with these options (NULL: the defaults; GPU
     * engines check that opts->device exists); else TCJ_ENODEV/TCJ_EUNSUP
     * with a one-line reason in err_msg. NULL: always available, except
     * that rows with a format (below) are checked by engine_available
     * itself: the device and the compute capability the format needs. */
    int (*available)(const engine_opts *o);
    int (*run)(const join_spec *spec, join_result *res);
    /* What it computes (after run, so positional initializers of the first
     * six fields stay valid): */
    engine_dist dist; /* the type d2 is computed and compared in */
    int exact;        /* its pair set is the exact FP64 one (a ground truth) */
    /* Significand bits of the input format, implicit bit included (53 fp64,
     * 24 fp32, 11 fp16 and tf32, 8 bf16): integer coordinates up to
     * 2^in_bits in magnitude are held exactly. */
    int in_bits;
    int rank[ENGINE_NROLES]; /* per engine_role: 0 never, higher preferred */
    /* Tensor-core formats: the kernels' number format (KERN_FORMAT(name)),
     * read by kern_fasted_run. */
    const struct kern_format *format;
    /* GPU engines: the kernel entry engine_gpu_run calls (kernels.h's
     * kern_join_fn: kern_fasted_run, kern_fp64_run, ...). */
    engine_kjoin_fn kjoin;
    /* Optional: the k-distance of each query row (the contract above
     * kdist_spec); NULL when the engine has none. */
    int (*kdist)(const kdist_spec *spec, join_result *res);
    /* It converts to a low-precision signed format and honours `set
     * center` (src/center.h): the run records metric "centred" 0 or 1.
     * 2: also `set center local`, per grid cell (the CPU emulations that
     * use src/cpu_emul_local.c; "centred" 2); 1: the whole dataset only. */
    int centers;
    /* `set center default` means auto for this row, as for the exact
     * engines: the FP8 formats, whose error grows fastest with the norms
     * (their MMAs accumulate in fewer bits than FP32: docs/FORMATS.md). */
    int center_auto;
    /* An unsigned format (ue5m3, ue4m4): negative data are refused with one
     * line unless `set shift on` translates each column by its minimum
     * (src/shift.h; distances unchanged); the run records metric
     * "shifted". Such a row does not centre. */
    int shifts;
    /* The precision lab (`precisions`): the number format this row measures
     * ("fp16", "bf16", "fp8-e4m3", "int8", ...; NULL: not a lab format) and
     * the bits each value is stored in. A GPU row and its CPU emulation name
     * the same format; the lab runs the GPU row where one is available. */
    const char *lab;
    int lab_bits;
    /* A tensor-core format's two rows (the GPU engine and its CPU twin,
     * both generated from it): its row of tc_formats (src/format.h);
     * NULL for every other engine. */
    const struct tc_format *tcf;
    /* Optional: a PAIRS run (spec's rows, eps, options; its sink unused)
     * whose pairs c uses where they are computed (pair_consumer), the
     * data converted as the row's runs are; res the run's record.
     * ENGINE_DECLINED where it cannot here (several ranks, a state or a
     * dataset the device cannot hold, a path with no such form): the
     * layer's host route then, through a sink, with the same results.
     * NULL: never. */
    int (*consume)(const join_spec *spec, pair_consumer *c, join_result *res);
} engine;

extern const engine *const engine_table[]; /* NULL-terminated */
const engine *engine_find(const char *name);
/* "fp32", "fp64" ("?" when unset): how dist is shown and stored. */
const char *engine_dist_name(engine_dist d);
/* 0 when e can run here with these options, else TCJ_ENODEV/TCJ_EUNSUP
 * with the reason in err_msg naming the engine: e->available(o), or for a
 * tensor-core row the device and its compute capability; a GPU engine on
 * a machine without an NVIDIA driver says so. */
int engine_available(const engine *e, const engine_opts *o);
/* The engine a command computes k-distances with when none is named:
 * first when it has a kdist entry and can run here, else the first exact
 * row of the table that has one and can run; NULL when none can (err_msg
 * left clear). */
const engine *engine_kdist_pick(const engine *first, const engine_opts *o);
/* The available engine of highest rank for role (ties: the earlier row), or
 * NULL when none; leaves err_msg clear. */
const engine *engine_best(engine_role role, const engine_opts *o);
/* The same over any NULL-terminated table (for tests). */
const engine *engine_best_of(const engine *const *table, engine_role role, const engine_opts *o);
/* For GPU engines' available(): 0 when opts' device (NULL: device 0)
 * exists, filling *dv (may be NULL); else TCJ_ENODEV with "who: reason". */
struct kern_device;
int engine_gpu_device(const char *who, const engine_opts *o, struct kern_device *dv);
/* engine_gpu_device, and the device has FP64 tensor cores. */
int engine_gpu_fp64_tc(const char *who, const engine_opts *o);

/* Validate the spec, time the whole run, fill res->seconds and precision,
 * then call e->run. Returns 0 or a TCJ_E* code with err_msg. */
int engine_run(const engine *e, const join_spec *spec, join_result *res);

/* Helpers for engines. */
void join_result_phase(join_result *r, const char *name, double seconds);
void join_result_metric(join_result *r, const char *name, double value, const char *unit);
/* The value r recorded under metric name, or NAN when it has none. */
double join_result_metric_value(const join_result *r, const char *name);
double engine_now(void); /* monotonic seconds */
/* The distance the run joins at: eps, or in HIST mode the root of the last
 * edge. */
double join_spec_eps(const join_spec *s);
/* Derived TFLOPS, the FASTED paper's count: 2*nq*n*d / seconds. */
double engine_tflops(double nq, double n, double d, double seconds);
/* The pairs a run examined: its metric "pairs_examined" (which an engine
 * records where an index pruned, docs/DESIGN's "report the pairs examined
 * instead"), else nq*n, every pair. *pruned says which. */
double engine_pairs_examined(const join_result *r, double nq, double n, int *pruned);
/* The run function of every GPU engine (src/engine_gpu.c): the row's
 * kjoin through kernels/' one launch loop. */
int engine_gpu_run(const join_spec *spec, join_result *res);
/* engine_gpu_run in kernel format fmt with the data multiplied by scale
 * (kern_join_args.scale; 0: none): rows that pick their format from the
 * data (int8). */
int engine_gpu_run_fmt(const join_spec *spec, join_result *res, const struct kern_format *fmt,
                       double scale);
/* The tensor-core rows' k-distance (kern_fasted_kdist in the row's format),
 * per the contract above kdist_spec. */
int engine_gpu_kdist(const kdist_spec *spec, join_result *res);
/* The k-distance of row e over the FP64 grid on the device
 * (kern_fp64_grid_kdist: cpu's values exactly), per the contract above
 * kdist_spec, its passes from radius r0. */
int engine_gpu_grid_kdist(const kdist_spec *spec, double r0, join_result *res);
/* The k-distance of row e by brute force in FP64 on the device
 * (kern_fp64_kdist_brute: cpu's values exactly), for small work. */
int engine_gpu_brute_kdist(const kdist_spec *spec, join_result *res);
/* DBSCAN's three passes of row e on the device over the FP64 grid
 * (kern_fp64_grid_dbscan): core (n flags) and labels (n) out as that
 * entry says; *pairs the eps-join's pairs, *core_s the core pass's
 * seconds; res: the run's timings, its pairs the unions called. */
int engine_gpu_grid_dbscan(const engine *e, const dataset *ds, double eps, size_t minpts,
                           const engine_opts *opts, const volatile int *cancel, uint8_t *core,
                           int32_t *labels, uint64_t *pairs, double *core_s, join_result *res);
/* engine.consume of the GPU rows (src/engine_gpu_consume.c): fn's PAIRS
 * run consumed on the device (kern_dbscan, kern_curve_core,
 * kern_curve_round), the data scaled by scale as the row's runs are (0:
 * none). engine_gpu_consume is the tensor-core rows' (fn: the row's
 * kjoin). */
int engine_gpu_consume_fn(const join_spec *spec, pair_consumer *c, join_result *res, double scale,
                          engine_kjoin_fn fn);
int engine_gpu_consume(const join_spec *spec, pair_consumer *c, join_result *res);
/* The int8 rows' runs (src/engine_int8.c, src/engine_cpu_int8.c): the
 * kernel format, or the quantization, picked from the data. */
int engine_int8_run(const join_spec *spec, join_result *res);
int engine_cpu_int8_run(const join_spec *spec, join_result *res);
/* NVML's summary of a GPU run (src/nvml.h) added to it as metrics
 * (src/engine_nvml.c): sm_clock_mhz.min/mean/max, mem_clock_mhz.mean,
 * power_w.min/mean/max, power_limit_w, temp_c.max, throttle_reasons (the
 * mask), nvml.samples. Metrics NVML could not read are left out (N/A), not
 * stored as 0. The _dev form names each "devK_" for device dev of a run
 * over several (dev < 0: the plain names). */
struct nvml_stats;
void nvml_add_metrics(join_result *r, const struct nvml_stats *st);
void nvml_add_metrics_dev(join_result *r, const struct nvml_stats *st, int dev);
/* Selectivity (|R| - nq) / nq for a join over nq query rows. */
double engine_selectivity(uint64_t pairs, size_t nq);

#endif
