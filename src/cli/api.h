/* libtcjoin's insides (include/tcjoin.h is its face): the context and
 * data types and the call bracket its files share (src/cli/api.c, the
 * command calls; api_typed.c, the typed calls; api_graph.c, the pairs and
 * the radius-neighbours graph). */
#ifndef TCJ_API_H
#define TCJ_API_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd.h"
#include "session.h"
#include "tcjoin.h"

typedef struct api_buf {
    char *data;
    size_t len, cap;
} api_buf;

/* A per-point array a command handed over (session_put), copied. */
typedef struct api_array {
    char name[32];
    session_type type;
    size_t n;
    void *data;
} api_array;
#define API_ARRAYS 8

/* The radius graph tcj_graph_rows built on a device (src/cli/api_graph.c),
 * kept for tcj_graph_fill of the same data, eps, engine and include_self;
 * any other call frees it. */
struct engine;
struct kern_graph;
typedef struct api_graph_kept {
    struct kern_graph *g;
    const struct tcj_data *x;
    double eps;
    const struct engine *e;
    int include_self;
} api_graph_kept;

struct tcj_ctx {
    session s;
    ui_hooks ui;
    char err[1024];
    tcj_progress_fn pfn;
    void *puser;
    volatile double frac; /* the call in flight's progress, -1 between calls */
    api_buf text, recs;   /* the last call's output */
    api_array arr[API_ARRAYS];
    int narr;
    api_graph_kept graph;
};

struct tcj_data {
    dataset ds;               /* v: the caller's values, or own */
    void *own;                /* a converted copy (i8), or NULL */
    const tcj_ctx *stored_in; /* the context whose log has dataset_id */
    int64_t dataset_id;
};

/* A call's bracket: the process's lock taken, the last results cleared,
 * x's rows (NULL: none) and eps (<= 0: none) put in c's session, the
 * output caught; api_end undoes it, keeps the message of a failure and
 * returns rc. */
void api_begin(tcj_ctx *c, tcj_data *x, double eps);
/* api_begin, with the graph the last call kept moved into *kept (its g
 * NULL where none) instead of freed. */
void api_begin_kept(tcj_ctx *c, tcj_data *x, double eps, api_graph_kept *kept);
int api_end(tcj_ctx *c, int rc);
/* The message of a failure found by the library itself; returns rc. */
int api_fail(tcj_ctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Inside the bracket: a command line through the workbench's commands. */
int api_exec_locked(tcj_ctx *c, const char *line);
/* The number under key (a top-level member) in the last call's first
 * record of type. */
int api_rec_number(tcj_ctx *c, const char *type, const char *key, double *v);

#endif
