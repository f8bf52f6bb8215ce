/* libtcjoin: the workbench's ε-joins, k-distances and clusterings as a C
 * library (docs/PYTHON.md has the API and an example; the Python module
 * python/tcjoin is ctypes over it).
 *
 * A context holds what a workbench session holds: the settings (`set`),
 * an optional session log the dashboard reads, the last call's results.
 * Data are wrapped, not copied, where their type allows (f32, f64, f16,
 * u8; i8 is copied to f16, which holds it exactly): the caller's rows
 * must stay unchanged and alive while the tcj_data lives, as the
 * engines' caches key on the values' hash taken at the wrap.
 *
 * Every call goes through the same code as the command of its name in
 * the workbench (one implementation): the same engines, defaults, checks,
 * records and session-log rows. Errors: a negative code, and one line in
 * tcj_error(ctx). Nothing prints.
 *
 * Threads: calls on any contexts from any threads are safe; they run one
 * at a time (a process-wide lock: the GPU engines share device caches).
 * tcj_cancel may be called from any thread or a signal handler; the
 * callbacks (progress, pairs) run on the calling thread inside the lock
 * and must not call the library. */
#ifndef TCJOIN_H
#define TCJOIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TCJOIN_API_VERSION 1

/* Return codes (the workbench's own). */
#define TCJOIN_OK 0
#define TCJOIN_EINVAL (-1)  /* bad argument or input data */
#define TCJOIN_EIO (-2)     /* a file could not be read or written */
#define TCJOIN_ENOMEM (-3)  /* not enough memory (the message says how much) */
#define TCJOIN_ENODEV (-4)  /* the engine needs a GPU and none is usable */
#define TCJOIN_EGPU (-5)    /* a CUDA call failed during a run */
#define TCJOIN_ECANCEL (-6) /* cancelled (tcj_cancel, or the progress callback) */
#define TCJOIN_ESTORE (-7)  /* the session log could not be written */
#define TCJOIN_EUNSUP (-8)  /* not supported here */

typedef struct tcj_ctx tcj_ctx;
typedef struct tcj_data tcj_data;

typedef enum tcj_dtype { TCJ_F32, TCJ_F64, TCJ_F16, TCJ_U8, TCJ_I8 } tcj_dtype;
/* The element type of a result array. */
typedef enum tcj_atype { TCJ_A_I32, TCJ_A_U8, TCJ_A_U64, TCJ_A_F64 } tcj_atype;

/* The library's version string ("0.9.0 ...") and API version. */
const char *tcj_version(void);
int tcj_api_version(void);

/* A context. log: the session log's path (a SQLite file the workbench
 * opens with --db), "" for the workbench's default log, NULL for none.
 * argv_line: what the log's sessions row shows (NULL: "libtcjoin"). */
int tcj_open(const char *log, const char *argv_line, tcj_ctx **out);
void tcj_close(tcj_ctx *c);
/* The last failed call's message on this context ("" after a success);
 * tcj_open's failure message when it returned no context: tcj_error(NULL). */
const char *tcj_error(const tcj_ctx *c);
/* `set NAME VALUE` (the workbench's settings: devices, threads, center,
 * ...); tcj_get writes the current value. */
int tcj_set(tcj_ctx *c, const char *name, const char *value);
int tcj_get(tcj_ctx *c, const char *name, char *buf, size_t size);

/* Progress of long calls: fn(user, what, frac) from the calling thread
 * now and then; a nonzero return cancels the call (TCJOIN_ECANCEL).
 * NULL: none. tcj_progress: the call in flight's fraction, or -1. */
typedef int (*tcj_progress_fn)(void *user, const char *what, double frac);
void tcj_set_progress(tcj_ctx *c, tcj_progress_fn fn, void *user);
double tcj_progress(const tcj_ctx *c);
/* Stop the call in flight on c (within about a second). */
void tcj_cancel(tcj_ctx *c);

/* n x d values, row-major, contiguous. Checked: n >= 1, d >= 1, every
 * value finite (TCJOIN_EINVAL naming the first row and column that is
 * not). name: for the log (NULL: "array"). */
int tcj_data_wrap(tcj_ctx *c, const void *x, size_t n, size_t d, tcj_dtype t, const char *name,
                  tcj_data **out);
void tcj_data_free(tcj_data *x);

/* Any workbench command line (`;`-separated) on data x (NULL: none; the
 * commands that load or generate data are refused: data come from the
 * caller) at eps (<= 0: none set, unless an earlier `eps` in the line
 * sets it). Its results stay in c until the next call: */
int tcj_exec(tcj_ctx *c, tcj_data *x, double eps, const char *line);
/* the result records, one JSON object a line (what --json prints); */
const char *tcj_records(const tcj_ctx *c);
/* the human text the workbench would print; */
const char *tcj_text(const tcj_ctx *c);
/* a per-point array a command computed, by name ("labels", "core",
 * "probabilities", "outlier_scores", "kdist_d2", "counts", "pairs"): 0 and its
 * data (valid until the next call), type and length, or TCJOIN_EINVAL. */
int tcj_array(const tcj_ctx *c, const char *name, const void **data, tcj_atype *type, size_t *n);

/* Typed calls. engine: an engine name, or NULL for the command's default:
 * run's (fasted on a GPU, else cpu) for count, perpoint, pairs and kdist;
 * the ground truth (exact on a GPU, cpu without one) for the graph,
 * dbscan, hdbscan and sweep. Output arrays hold n entries. */
/* The pairs (i, j) with |xi - xj| <= eps, self-pairs included. */
int tcj_count(tcj_ctx *c, tcj_data *x, double eps, const char *engine, uint64_t *pairs);
/* Each point's neighbours within eps, itself included. */
int tcj_perpoint(tcj_ctx *c, tcj_data *x, double eps, const char *engine, uint64_t *counts);
/* Every pair streamed to fn in batches (i, j, squared distance as the
 * engine computed it; valid during the call), both orders and the
 * self-pairs included; a nonzero return stops the run (TCJOIN_ECANCEL). */
typedef int (*tcj_pairs_fn)(void *user, size_t k, const uint32_t *i, const uint32_t *j,
                            const double *d2);
int tcj_pairs(tcj_ctx *c, tcj_data *x, double eps, const char *engine, tcj_pairs_fn fn, void *user);
/* The radius-neighbours graph as CSR, in two calls so the caller
 * allocates: tcj_graph_rows fills indptr (n + 1 entries), the row
 * pointers; tcj_graph_fill the column indices (indptr[n] entries, each
 * row's ascending) and, where dist is not NULL, the distances. include_self
 * 0 leaves out each point's own entry (scikit-learn's default). The two
 * calls must name the same data, eps, engine and include_self. On a GPU
 * engine tcj_graph_rows runs the one join and keeps the entries on the
 * device (16 bytes each) for the tcj_graph_fill that follows it, which
 * only copies them out; any other call on c in between frees them, and
 * the fill then joins again. */
int tcj_graph_rows(tcj_ctx *c, tcj_data *x, double eps, const char *engine, int include_self,
                   int64_t *indptr);
int tcj_graph_fill(tcj_ctx *c, tcj_data *x, double eps, const char *engine, int include_self,
                   const int64_t *indptr, int32_t *indices, double *dist);
/* Each point's distance to its k-th nearest other point (1 <= k <= 256). */
int tcj_kdist(tcj_ctx *c, tcj_data *x, int k, const char *engine, double *dist);
/* DBSCAN (scikit-learn's definitions): labels (-1 noise), core flags (may
 * be NULL); *clusters (may be NULL) their number. */
int tcj_dbscan(tcj_ctx *c, tcj_data *x, double eps, size_t min_samples, const char *engine,
               int32_t *labels, uint8_t *core, size_t *clusters);
/* HDBSCAN* (scikit-learn's HDBSCAN): options as the command's words
 * ("min_cluster_size=10 min_samples=5 method=leaf epsilon=0.1 single",
 * NULL: the defaults); probabilities and scores (GLOSH) may be NULL. */
int tcj_hdbscan(tcj_ctx *c, tcj_data *x, const char *options, const char *engine, int32_t *labels,
                double *probabilities, double *scores);
/* DBSCAN at every eps up to max_eps at once (`dbscan curve`): *json its
 * record (points: eps, clusters, core, noise, largest_core; plateaus),
 * valid until the next call on c. */
int tcj_curve(tcj_ctx *c, tcj_data *x, size_t min_samples, double max_eps, const char *engine,
              const char **json);
/* Two engines side by side at eps, each against the FP64 ground truth
 * (`compare A B`): *json the comparison's record, as tcj_curve's. */
int tcj_compare(tcj_ctx *c, tcj_data *x, double eps, const char *engine_a, const char *engine_b,
                const char **json);
/* The eps of selectivity target (pairs per point, self excluded). */
int tcj_sweep(tcj_ctx *c, tcj_data *x, double target, const char *engine, double *eps,
              double *selectivity);

#ifdef __cplusplus
}
#endif

#endif
