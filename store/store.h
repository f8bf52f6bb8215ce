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
#include <stdint.h>

#include "../src/dataset.h"
#include "../src/engine.h"

typedef struct store store;

#define STORE_SCHEMA_VERSION 3

/* The default path following DESIGN.md's rules: $TCJOIN_DB, else
 * $XDG_DATA_HOME/tcjoin/sessions.db (an absolute XDG_DATA_HOME only), else
 * ~/.local/share/tcjoin/sessions.db. Caller frees; NULL (err_msg set) when
 * no home directory is known. */
char *store_default_path(void);
/* Open or create (path NULL: the default path); creates parent
 * directories; WAL mode, foreign keys on, a busy timeout for a second
 * process; migrates an older schema forward in one transaction; refuses a
 * newer schema or another program's database, writing nothing to it. */
int store_open(const char *path, store **out);
void store_close(store *st);
int store_schema_version(store *st);
/* The path as opened (owned by st). */
const char *store_path(store *st);

int64_t store_session_begin(store *st, const char *argv_line, const char *version,
                            const char *host);
void store_session_end(store *st, int64_t session_id);

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
    double eps;
    size_t q0, q1, n, d, d_padded;
    int status;             /* 0 ok, else error code */
    const char *error;      /* NULL when ok */
    const join_result *res; /* phases and metrics are stored with it */
    double selectivity, tflops_padded, tflops_unpadded;
} store_run_rec;
int64_t store_run(store *st, const store_run_rec *r);

typedef struct store_cmp_rec {
    int64_t session_id, run_a, run_b;
    const char *engine_a, *engine_b;
    double eps;
    double overlap, err_mean, err_std, err_min, err_max;
    uint64_t both, only_a, only_b;
    /* histogram of the distance error A - B over pairs both found */
    size_t nbins;
    const double *bin_lo, *bin_hi;
    const uint64_t *bin_count;
    /* pairs found by one side only, as (d_fp64 - eps)/eps, summarized */
    double only_a_rel_max, only_b_rel_max;
    /* The ground truth A (and B) were judged against: NULL or engine_b
     * when B itself is the reference (run_ref is then run_b). */
    const char *ref_engine;
    int64_t run_ref;
    /* B judged against the reference (when has_b): the same numbers as
     * above for B, stored in comparison_sides and histogram_bins side 'b'. */
    int has_b;
    double b_overlap, b_err_mean, b_err_std, b_err_min, b_err_max;
    uint64_t b_both, b_only_engine, b_only_ref;
    double b_only_engine_rel_max, b_only_ref_rel_max;
    size_t b_nbins;
    const double *b_bin_lo, *b_bin_hi;
    const uint64_t *b_bin_count;
} store_cmp_rec;
int64_t store_comparison(store *st, const store_cmp_rec *c);

/* ε searches (filled by the sweep issue). */
int64_t store_sweep_begin(store *st, int64_t session_id, int64_t dataset_id, const char *engine,
                          const char *kind, double target, double tolerance);
int store_sweep_step(store *st, int64_t sweep_id, int step, const char *method, double eps,
                     double selectivity, uint64_t pairs, double seconds);
int store_sweep_end(store *st, int64_t sweep_id, double eps, double selectivity, int passes,
                    double seconds, const char *note);
/* Remove a sweep and its steps (a search that failed half-way). */
int store_sweep_delete(store *st, int64_t sweep_id);

/* Counters outside a run (attached later), by metric name; a name already
 * stored for the run is replaced. A NaN value is stored as NULL: not
 * available. */
int store_counter(store *st, int64_t run_id, const char *name, double value, const char *unit);

/* Queries for `history`, `runs`, `show run N`, `export`. The callback gets
 * column names and text values of each row (NULL for SQL NULL); return
 * nonzero to stop. store_query runs one statement of program text with
 * params bound to ?1..?N. */
typedef int (*store_row_fn)(void *ctx, int ncol, const char *const *names,
                            const char *const *values);
int store_query(store *st, const char *sql, const int64_t *params, int nparams, store_row_fn fn,
                void *ctx);
/* The last `limit` command lines (limit <= 0: all), oldest first:
 * id, at, status (ok, error, unfinished), line. */
/* History lists commands with an id below before_id (0: all), so the
 * running `history` command does not list itself. */
int store_history(store *st, int limit, int64_t before_id, store_row_fn fn, void *ctx);
/* The last `limit` runs (limit <= 0: all), oldest first: id, at, engine,
 * dataset, n, d, eps, pairs, selectivity, seconds, tflops (the padded
 * count, the FASTED paper's), status (ok, error). */
int store_runs(store *st, int limit, store_row_fn fn, void *ctx);
/* One run, as rows whose first column "section" says what follows:
 * "run" (every runs column, then dataset, dataset_path, dataset_format,
 * dataset_hash), "phase" (name, seconds, in order), "counter" (name, value,
 * unit), "comparison" (role a|b|ref, then every comparisons column), "side"
 * (every comparison_sides column: B judged against a reference other than
 * B), "bin" (comparison_id, bin, lo, hi, count, side a|b). TCJ_EINVAL when
 * there is no such run. */
int store_show_run(store *st, int64_t run_id, store_row_fn fn, void *ctx);
/* One comparison by id, as store_show_run's sections: "comparison" (every
 * comparisons column, then dataset), "side", "bin". TCJ_EINVAL when there
 * is no such comparison. */
int store_show_compare(store *st, int64_t comparison_id, store_row_fn fn, void *ctx);
/* Write runs (run_id < 0: all) as csv or json to path: CSV has one row per
 * run with phase.NAME and counter.NAME columns; JSON is an array of run
 * objects with dataset, phases, counters and comparisons nested (each
 * with its histogram, and b_accuracy with B's numbers and histogram when B
 * was judged against another reference). */
int store_export(store *st, int64_t run_id, const char *format, const char *path);

#endif
