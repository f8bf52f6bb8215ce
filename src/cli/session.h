/* The state a command works on: the current dataset, ε, engine settings,
 * the session log. Owned by app.c; handlers read and change it. */
#ifndef TCJ_SESSION_H
#define TCJ_SESSION_H

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
} session;

#endif
