/* The state a command works on: the current dataset, ε, engine settings,
 * the session log. Owned by app.c; handlers read and change it. */
#ifndef TCJ_SESSION_H
#define TCJ_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "dataset.h"
#include "engine.h"

struct store;

/* What a front end lets long work do: show progress, let the user cancel
 * (by setting session.cancel from poll), redraw after results. All may be
 * NULL; batch mode installs none. */
typedef struct ui_hooks {
    void (*progress)(void *ctx, const char *what, double frac);
    void (*poll)(void *ctx);    /* called between work batches: read keys */
    void (*refresh)(void *ctx); /* results changed: redraw */
} ui_hooks;

/* A front end that keeps a command's per-point results as arrays (the
 * library, src/cli/api.c): a command that computes one hands it over with
 * session_put before it frees it, and the hook copies what it keeps.
 * NULL: none (the REPL, scripts). */
typedef enum session_type { SESSION_I32, SESSION_U8, SESSION_U64, SESSION_F64 } session_type;
typedef void (*session_put_fn)(void *ctx, const char *name, const void *data, session_type t,
                               size_t n);
static inline size_t session_type_bytes(session_type t)
{
    static const size_t bytes[] = {4, 1, 8, 8}; /* i32, u8, u64, f64 */
    return bytes[t];
}

typedef struct session {
    dataset ds;
    int have_ds;
    int64_t dataset_id; /* row in the datasets table, 0 if not stored */

    double eps;
    int have_eps;
    engine_opts eopt;

    /* Output mode for `run`: count, perpoint, pairs (to out_path). */
    join_mode mode;
    char out_path[1024];
    char out_format[16]; /* "bin32", "bin64", "csv" */

    struct store *db;
    int64_t session_id;
    int64_t command_id; /* the command being executed */

    int batch;           /* not interactive: errors make the exit status 1 */
    int failed;          /* an error happened in batch mode */
    int quit;            /* the user asked to quit */
    volatile int cancel; /* set by SIGINT / the cancel key */

    int64_t last_run_id;
    /* Front-end hooks (progress, redraw); NULL in batch mode. */
    const ui_hooks *ui;
    void *ui_ctx;
    session_put_fn put;
    void *put_ctx;
} session;

/* Hand a command's array of n values to the front end that keeps them
 * (names: "labels", "core", "probabilities", "outlier_scores",
 * "kdist_d2", "counts", "pairs": a run's count, one value). */
static inline void session_put(const session *s, const char *name, const void *data, session_type t,
                               size_t n)
{
    if (s->put)
        s->put(s->put_ctx, name, data, t, n);
}

#endif
