/* The SQLite session log: schema, migrations, writes and queries.
 * One database per user ($TCJOIN_DB, --db, or
 * $XDG_DATA_HOME/tcjoin/sessions.db), WAL mode, schema version in
 * PRAGMA user_version, migrated forward on open. Every write function is one
 * transaction: a killed process loses at most the run in flight.
 * Schema documented in docs/SCHEMA.md.
 *
 * Functions returning int64_t give the new row id (> 0), or a negative
 * TCJ_E* code with err_msg() set ("PATH: what: sqlite message"). Functions
 * returning int give 0 or a TCJ_E* code. Ids <= 0 passed in (a session,
 * dataset, command or run not stored) are written as NULL. */
#ifndef TCJ_STORE_H
#define TCJ_STORE_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "dataset.h"
#include "compare.h"
#include "engine.h"
#include "lab.h"
#include "kdist.h"
#include "perpoint.h"
#include "dbscan_out.h"
#include "ladder.h"

typedef struct store store;

#define STORE_SCHEMA_VERSION 9 /* 7: DBSCAN; 8: MPI ranks; 9: the teaching ladder */

/* The default path following DESIGN.md's rules: $TCJOIN_DB, else
 * $XDG_DATA_HOME/tcjoin/sessions.db (an absolute XDG_DATA_HOME only), else
 * ~/.local/share/tcjoin/sessions.db. Caller frees; NULL (err_msg set) when
 * no home directory is known. */
char *store_default_path(void);
/* 1 when the directory path names exists (a bare name: the current one).
 * A named log (--db, TCJOIN_DB, libtcjoin's) must be in an existing
 * directory, so a typo does not grow a tree; store_open makes the
 * directories of the default path only as its callers ask for that. */
int store_dir_exists(const char *path);
/* Open or create (path NULL: the default path); creates parent
 * directories; WAL mode, foreign keys on, a busy timeout for a second
 * process; migrates an older schema forward in one transaction; refuses a
 * newer schema or another program's database, writing nothing to it. */
int store_open(const char *path, store **out);
void store_close(store *st);
/* While *flag is set (Ctrl-C), an open or a write waiting for another
 * process's lock gives up at once (one line saying so) instead of waiting
 * the whole $TCJOIN_DB_WAIT. One flag for the process; NULL: never. */
void store_set_cancel(const volatile int *flag);
int store_schema_version(store *st);
/* The path as opened (owned by st). */
const char *store_path(store *st);

int64_t store_session_begin(store *st, const char *argv_line, const char *version,
                            const char *host);
int store_session_end(store *st, int64_t session_id);

/* Returns the datasets row (reused when path+hash match). */
int64_t store_dataset(store *st, const dataset *ds);

/* A command line, committed as it finishes (status 0 ok, else the error). */
int64_t store_command(store *st, int64_t session_id, const char *line, int status,
                      const char *error, double seconds);
/* The same in two steps, so runs made by the command can name it: begin
 * commits the line with status NULL ("unfinished" if the process dies),
 * end fills in status, error and seconds. */
int64_t store_command_begin(store *st, int64_t session_id, const char *line);
int store_command_end(store *st, int64_t command_id, int status, const char *error, double seconds);

/* A run and everything measured with it, in one transaction. */
typedef struct store_run_rec {
    int64_t session_id, dataset_id, command_id;
    const char *engine, *precision, *mode, *options, *variant, *device;
    const char *dtype; /* the dataset's element type (dtype name); NULL: unknown */
    double eps;
    size_t q0, q1, n, d, d_padded;
    int status;             /* 0 ok, else error code */
    const char *error;      /* NULL when ok */
    const join_result *res; /* phases and metrics are stored with it */
    double selectivity, tflops_padded, tflops_unpadded;
} store_run_rec;
int64_t store_run(store *st, const store_run_rec *r);

/* A comparison: engines A and B, each judged against a reference that is B
 * itself (side[1].judged == 0) or a third engine. Each side becomes one
 * comparison_sides row and its histogram bins; a side that is not judged
 * keeps its engine and run only. */
typedef struct store_cmp_rec {
    int64_t session_id;
    double eps;
    const char *ref_engine;  /* NULL: side[1]'s engine */
    int64_t run_ref;         /* <= 0 with ref_engine NULL: side[1]'s run */
    const cmp_side *side[2]; /* A, B */
} store_cmp_rec;
int64_t store_comparison(store *st, const store_cmp_rec *c);

/* ε searches (filled by the sweep issue). */
int64_t store_sweep_begin(store *st, int64_t session_id, int64_t dataset_id, const char *engine,
                          const char *kind, double target, double tolerance);
int store_sweep_step(store *st, int64_t sweep_id, int step, const char *method, double eps,
                     double selectivity, uint64_t pairs, double seconds);
int store_sweep_end(store *st, int64_t sweep_id, double eps, double selectivity, int passes,
                    double seconds, const char *note);
/* A whole curve (a sweeps row of kind "curve" and its npt points as steps)
 * in one transaction: all of it is stored or none (a lock held past the
 * wait, a full disk). */
typedef struct store_curve_rec {
    int64_t session_id, dataset_id;
    const char *engine, *note;
    size_t npt;
    const double *eps, *sel;
    const uint64_t *pairs;
    double seconds;
} store_curve_rec;
int64_t store_curve(store *st, const store_curve_rec *r);
/* Remove a sweep and its steps (a search that failed half-way). */
int store_sweep_delete(store *st, int64_t sweep_id);

/* Counters outside a run (attached later), by metric name; a name already
 * stored for the run is replaced. A NaN value is stored as NULL: not
 * available. */
int store_counter(store *st, int64_t run_id, const char *name, double value, const char *unit);

/* Queries for `history`, `runs`, `show run N`, `export`. The callback gets
 * column names and text values of each row (NULL for SQL NULL; reals in
 * the shortest text that reads back as the stored double); names[ncol] is
 * a string of ncol letters giving each value's SQLite type: 'i' integer,
 * 'r' real, 't' text, 'b' blob, 'n' NULL. Return nonzero to stop. store_query runs one statement of
 * program text with params bound to ?1..?N. */
typedef int (*store_row_fn)(void *ctx, int ncol, const char *const *names,
                            const char *const *values);
int store_query(store *st, const char *sql, const int64_t *params, int nparams, store_row_fn fn,
                void *ctx);
/* The dashboard's query API: results as structs, so ui/ never holds SQL
 * text. A run as the runs panel lists it; NAN for what the log lacks. */
typedef struct store_run_brief {
    int64_t id;
    char engine[32];
    double eps, selectivity, seconds, tflops; /* tflops: the padded count */
    uint64_t pairs;
    int status; /* 0, or the TCJ_E* code it stopped with (TCJ_ECANCEL: cancelled) */
} store_run_brief;
/* The last max runs of session session_id, newest first, each to fn
 * (nonzero from fn stops). A log without the tflops column gives NAN
 * there. 0 or a TCJ_E* code with err_msg. */
int store_session_runs(store *st, int64_t session_id, int max,
                       int (*fn)(void *ctx, const store_run_brief *r), void *ctx);
/* The last `limit` command lines (limit <= 0: all), oldest first:
 * command_id, at, status (ok, error, unfinished), line. */
/* History lists commands with an id below before_id (0: all), so the
 * running `history` command does not list itself. */
int store_history(store *st, int limit, int64_t before_id, store_row_fn fn, void *ctx);
/* The last `limit` runs (limit <= 0: all), oldest first: run_id, at,
 * engine, dataset, n, d, eps, pairs, selectivity, time_s, tflops (the
 * padded count, the FASTED paper's), status (ok, error). */
int store_runs(store *st, int limit, store_row_fn fn, void *ctx);
/* One run, as rows whose first column "section" says what follows:
 * "run" (the run's columns under their JSON names, docs/JSON.md), "phase" (name, seconds, in
 * order), "counter" (name, value, unit), "comparison" (role a|b|ref, then every comparisons
 * column), "side" (every comparison_sides column, sides a and b of each comparison; a side that is
 * the reference has NULL accuracy), "bin" (comparison_id, bin, lo, hi, count, side a|b). TCJ_EINVAL
 * when there is no such run. */
int store_show_run(store *st, int64_t run_id, store_row_fn fn, void *ctx);
/* One comparison by id, as store_show_run's sections: "comparison" (every
 * comparisons column, then dataset), "side", "bin". TCJ_EINVAL when there
 * is no such comparison. */
int store_show_compare(store *st, int64_t comparison_id, store_row_fn fn, void *ctx);
/* Write runs (run_id < 0: all) as csv or json to path: CSV has one row per
 * run with phase.NAME and counter.NAME columns; JSON is an array of run
 * objects with dataset, phases, counters and comparisons nested, each
 * comparison with its sides a and b in one shape (docs/JSON.md). */
int store_export(store *st, int64_t run_id, const char *format, const char *path);
/* The same into f, an output file the caller opened (src/ofile.h) and
 * commits; path names it in messages. */
int store_export_f(store *st, int64_t run_id, const char *format, FILE *f, const char *path);
/* The members of one run's export object (the same fields, phases,
 * counters and comparisons) written into the open object of w: `show run`
 * in JSON. TCJ_EINVAL when there is no such run. */
struct json_w;
int store_run_json(store *st, int64_t run_id, struct json_w *w);

/* Per-point summaries (run mode perpoint; src/perpoint.h), one per run,
 * with the histogram bins. Tables perpoint_summaries and perpoint_bins,
 * created on first use (not a numbered migration). get: TCJ_EINVAL when
 * the run has none. */
int store_perpoint(store *st, int64_t run_id, const perpoint_summary *p);
int store_perpoint_get(store *st, int64_t run_id, perpoint_summary *p);
/* The same for a run that may have none (count and pairs runs, a log
 * written before the tables): *found 0 and 0 returned. Reads only. */
int store_perpoint_find(store *st, int64_t run_id, perpoint_summary *p, int *found);

/* Result records (store/store_records.c): the results of commands that
 * have no tables of their own (hdbscan, hdbscan compare: the commands
 * whose table row names the type, src/cli/cmd.h's `stored`) kept as
 * their JSON record, one row each (table records, created on first use);
 * `show TYPE ID` and `export TYPE ID json FILE` read them back. */
typedef struct store_record_rec {
    int64_t session_id, command_id, dataset_id; /* 0: none */
    const char *type;                           /* the record's type */
    const char *json;                           /* the record, an object */
} store_record_rec;
/* The record's id, or a negative TCJ_E* code (err_msg says). */
int64_t store_record_put(store *st, const store_record_rec *r);
/* *json (malloc'd) of record id of type; TCJ_EINVAL "no TYPE ID in the
 * session log" when there is none. */
int store_record_get(store *st, const char *type, int64_t id, char **json);

/* k-distance curves (src/cluster/kdist.h): one kdists row (engine, K, n, knee,
 * eps, time) and its quantile points, created on first use (tables kdists
 * and kdist_points, not a numbered migration). */
typedef struct store_kdist_rec {
    int64_t session_id, dataset_id, command_id;
    const char *engine, *precision, *device, *variant;
    const kdist_curve *curve;
    double seconds;
} store_kdist_rec;
int64_t store_kdist(store *st, const store_kdist_rec *r);
/* Read curve id (id <= 0: the latest) back; engine (may be NULL) gets its
 * engine's name. knee_d2 is the square of the stored knee distance.
 * TCJ_EINVAL when there is none. */
int store_kdist_get(store *st, int64_t id, kdist_curve *c, char *engine, size_t engine_size);
/* Write curve id (id <= 0: the latest) to path: csv, one line per point
 * with the curve's columns repeated, or json, one object with a points
 * array. */
int store_kdist_export(store *st, int64_t id, const char *format, const char *path);
int store_kdist_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path);

/* The precision lab (`precisions`, src/lab.h): tables labs and lab_rows
 * (schema version 5). begin: once the reference ran; row: one per
 * format as it finishes, after its run and comparison are stored (their
 * ids in row); end: the format chosen (NULL: none) and a note (NULL, or
 * why the lab stopped early). */
typedef struct store_lab_rec {
    int64_t session_id, command_id, dataset_id, run_ref;
    double eps, min_overlap;
    const char *ref_engine, *baseline;
} store_lab_rec;
int64_t store_lab_begin(store *st, const store_lab_rec *r);
int store_lab_row(store *st, int64_t lab_id, int seq, const lab_row *row);
int store_lab_end(store *st, int64_t lab_id, const char *chosen, const char *note);
/* Read lab id back as the lab_result `precisions` printed (numbers from
 * the runs, counters and comparison_sides its rows point at; the choice as
 * stored). TCJ_EINVAL when there is no such lab. */
int store_lab_get(store *st, int64_t lab_id, lab_result *out);
/* Write lab id to path: csv, one line per format with the lab's columns
 * first, or json, one object with the lab's fields and a formats array
 * (the fields of the lab and lab_format records, docs/JSON.md). */
int store_lab_export(store *st, int64_t lab_id, const char *format, const char *path);
int store_lab_export_f(store *st, int64_t lab_id, const char *format, FILE *f, const char *path);

/* A stored run that can stand for a new COUNT run (compare's reuse, see
 * src/cli/reuse.h): the newest ok count run over all rows with the same
 * dataset content hash, eps (bit for bit), engine and options string (the
 * settings that choose the kernel variant), n and d, made on the host of
 * session_id. Returns its id with *out filled, 0 when there is none, or a
 * negative TCJ_E* code. */
#define STORE_MAX_PHASES 8
typedef struct store_reuse_key {
    int64_t session_id;
    const char *engine, *options;
    uint64_t dataset_hash;
    double eps;
    size_t n, d;
} store_reuse_key;
typedef struct store_run_summary {
    int64_t id;
    char at[32];
    uint64_t pairs;
    double seconds, kernel_seconds;
    size_t d_padded;
    char precision[32], variant[96], device[128];
    int nphase;
    char phase_name[STORE_MAX_PHASES][32];
    double phase_seconds[STORE_MAX_PHASES];
    /* its counters (the transforms, NVML figures, ...), as stored */
    int nmetric;
    join_metric metric[JOIN_MAX_METRICS];
} store_run_summary;
int64_t store_reusable_run(store *st, const store_reuse_key *key, store_run_summary *out);

/* DBSCAN results (`dbscan`, src/cluster/dbscan.h; schema version 7): one dbscans
 * row per clustering (engine, eps, minpts, counts, the largest sizes,
 * time by pass and the runs each pass made) and its cluster-size
 * histogram (dbscan_sizes); labels only ever go to files. The runs of its
 * passes (pass[k]) are stored with it in one transaction: all of it or
 * none. Returns the dbscans id and fills run_id (when not NULL: each
 * pass's run, else view->run_id[k]; 0 for none), or a negative TCJ_E*
 * code with nothing stored. */
typedef struct store_dbscan_rec {
    int64_t session_id, dataset_id, command_id;
    const dbscan_view *view;
    const store_run_rec *pass[DBSCAN_NPASS]; /* NULL: the pass ran no join, or view->run_id[k] */
    int64_t *run_id;                         /* out: DBSCAN_NPASS ids, or NULL */
} store_dbscan_rec;
int64_t store_dbscan(store *st, const store_dbscan_rec *r);
/* One stored clustering read back as it was shown (id <= 0: the
 * latest); the view's strings and result point into out. TCJ_EINVAL when
 * there is none. */
typedef struct store_dbscan_row {
    dbscan_view view;
    dbscan_result res;
    char engine[64], precision[32], dataset[256], labels[1024];
} store_dbscan_row;
int store_dbscan_get(store *st, int64_t id, store_dbscan_row *out);
/* Write clustering id to path: json, the "dbscan" record's object; csv, a
 * header and one line per size bin with the clustering's columns first. */
/* Writes to f, which the caller opened (src/ofile.c); path only names it
 * in messages. */
int store_dbscan_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path);

/* The teaching ladder (`ladder`, src/ladder.h; schema version 9): one
 * ladders row per ladder (device, data, the reference count) and one
 * ladder_rungs row per rung with its timed run, its share of cuBLAS and
 * the profiler's evidence; written in one transaction. Returns the id or
 * a negative TCJ_E* code. v->id is ignored. */
int64_t store_ladder(store *st, int64_t session_id, int64_t dataset_id, int64_t command_id,
                     const ladder_view *v);
/* Ladder id (id <= 0: the latest) read back into out; TCJ_EINVAL when
 * there is none. */
int store_ladder_get(store *st, int64_t id, ladder_view *out);
/* Write ladder id to f: json, the "ladder" record's object; csv, a header
 * and one line per rung with the ladder's columns first. path only names
 * f in messages. */
int store_ladder_export_f(store *st, int64_t id, const char *format, FILE *f, const char *path);

#endif
