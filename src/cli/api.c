/* libtcjoin's contexts, data and command calls (include/tcjoin.h): a
 * context is a session with no terminal; a call attaches the caller's
 * data to it, runs the workbench's command through cmd_exec with the
 * output caught (text, records, errors) and the per-point arrays the
 * command hands over (session_put) kept until the next call. */
#include "api.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "fp16.h"
#include "json_mini.h"
#include "kernels.h"
#include "out.h"
#include "settings.h"
#include "store.h"
#include "version.h"

_Static_assert(TCJOIN_EINVAL == TCJ_EINVAL && TCJOIN_EIO == TCJ_EIO &&
                   TCJOIN_ENOMEM == TCJ_ENOMEM && TCJOIN_ENODEV == TCJ_ENODEV &&
                   TCJOIN_EGPU == TCJ_EGPU && TCJOIN_ECANCEL == TCJ_ECANCEL &&
                   TCJOIN_ESTORE == TCJ_ESTORE && TCJOIN_EUNSUP == TCJ_EUNSUP,
               "tcjoin.h's codes are err.h's");
_Static_assert((int)TCJ_A_I32 == (int)SESSION_I32 && (int)TCJ_A_U8 == (int)SESSION_U8 &&
                   (int)TCJ_A_U64 == (int)SESSION_U64 && (int)TCJ_A_F64 == (int)SESSION_F64,
               "tcjoin.h's array types are session.h's");

/* One call at a time in the process: the engines' device caches, the
 * output sink and the CUDA state are the process's. */
static pthread_mutex_t api_lock = PTHREAD_MUTEX_INITIALIZER;
/* tcj_open's failure, for tcj_error(NULL). */
static char api_open_err[512];

const char *tcj_version(void)
{
    return TCJ_VERSION;
}

int tcj_api_version(void)
{
    return TCJOIN_API_VERSION;
}

static void buf_add(api_buf *b, const char *text, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        b->cap = (b->len + n + 1) * 2;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, text, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void buf_clear(api_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* The output sink while a call runs: text kept, records one a line, the
 * first error (or cancellation) as the call's message. */
static void api_sink(void *ctx, out_kind kind, const char *text)
{
    tcj_ctx *c = ctx;
    switch (kind) {
    case OUT_TEXT:
        buf_add(&c->text, text, strlen(text));
        break;
    case OUT_RECORD:
        buf_add(&c->recs, text, strlen(text));
        buf_add(&c->recs, "\n", 1);
        break;
    case OUT_ERROR:
    case OUT_CANCEL:
        if (!c->err[0])
            snprintf(c->err, sizeof c->err, "%s", text);
        break;
    }
}

static void api_put(void *ctx, const char *name, const void *data, session_type t, size_t n)
{
    tcj_ctx *c = ctx;
    api_array *a = NULL;
    for (int k = 0; k < c->narr && !a; k++)
        if (!strcmp(c->arr[k].name, name))
            a = &c->arr[k];
    if (!a) {
        if (c->narr == API_ARRAYS)
            return;
        a = &c->arr[c->narr++];
        snprintf(a->name, sizeof a->name, "%s", name);
        a->data = NULL;
    }
    free(a->data);
    a->data = xmalloc(n * session_type_bytes(t) + 1);
    memcpy(a->data, data, n * session_type_bytes(t));
    a->type = t;
    a->n = n;
}

static void api_on_progress(void *ctx, const char *what, double frac)
{
    tcj_ctx *c = ctx;
    c->frac = frac;
    if (c->pfn && c->pfn(c->puser, what, frac))
        c->s.cancel = 1;
}

static void api_clear_results(tcj_ctx *c)
{
    buf_clear(&c->text);
    buf_clear(&c->recs);
    for (int k = 0; k < c->narr; k++)
        free(c->arr[k].data);
    c->narr = 0;
    kern_graph_free(c->graph.g);
    memset(&c->graph, 0, sizeof c->graph);
}

void api_begin(tcj_ctx *c, tcj_data *x, double eps)
{
    api_begin_kept(c, x, eps, NULL);
}

void api_begin_kept(tcj_ctx *c, tcj_data *x, double eps, api_graph_kept *kept)
{
    pthread_mutex_lock(&api_lock);
    if (kept) {
        *kept = c->graph;
        memset(&c->graph, 0, sizeof c->graph);
    }
    api_clear_results(c);
    c->err[0] = '\0';
    err_clear();
    c->frac = 0;
    out_set_sink(api_sink, c);
    c->s.have_eps = eps > 0;
    c->s.eps = eps > 0 ? eps : 0;
    c->s.quit = 0;
    if (x) {
        c->s.ds = x->ds;
        c->s.have_ds = 1;
        /* The dataset's row in this log, once per context. */
        if (c->s.db && x->stored_in != c) {
            int64_t id = store_dataset(c->s.db, &x->ds);
            x->dataset_id = id > 0 ? id : 0;
            x->stored_in = c;
        }
        c->s.dataset_id = c->s.db ? x->dataset_id : 0;
    }
}

int api_end(tcj_ctx *c, int rc)
{
    memset(&c->s.ds, 0, sizeof c->s.ds);
    c->s.have_ds = 0;
    c->s.dataset_id = 0;
    c->s.quit = 0;
    out_reset_sink();
    if (rc && !c->err[0])
        snprintf(c->err, sizeof c->err, "%s", err_msg()[0] ? err_msg() : "the call failed");
    if (!rc)
        c->err[0] = '\0';
    c->frac = -1;
    pthread_mutex_unlock(&api_lock);
    return rc;
}

int api_fail(tcj_ctx *c, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap);
    va_end(ap);
    return rc;
}

int tcj_open(const char *log, const char *argv_line, tcj_ctx **out)
{
    *out = NULL;
    api_open_err[0] = '\0';
    tcj_ctx *c = xcalloc(1, sizeof *c);
    settings_default(&c->s);
    c->s.batch = 1;
    c->ui.progress = api_on_progress;
    c->s.ui = &c->ui;
    c->s.ui_ctx = c;
    c->s.put = api_put;
    c->s.put_ctx = c;
    c->frac = -1;
    if (log && log[0] && !store_dir_exists(log)) {
        snprintf(api_open_err, sizeof api_open_err,
                 "session log %s: its directory does not exist (a named log's must)", log);
        free(c);
        return TCJ_EINVAL;
    }
    if (log) {
        char *path = log[0] ? xstrdup(log) : store_default_path();
        int rc = path ? store_open(path, &c->s.db)
                      : err_set(TCJ_EINVAL, "no place for the session log (give a path)");
        free(path);
        if (rc) {
            snprintf(api_open_err, sizeof api_open_err, "%s", err_msg());
            free(c);
            return rc;
        }
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        c->s.session_id =
            store_session_begin(c->s.db, argv_line ? argv_line : "libtcjoin", TCJ_VERSION, host);
        if (c->s.session_id < 0) {
            snprintf(api_open_err, sizeof api_open_err, "%s", err_msg());
            store_close(c->s.db);
            free(c);
            return TCJ_ESTORE;
        }
    }
    *out = c;
    return 0;
}

void tcj_close(tcj_ctx *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&api_lock);
    if (c->s.db) {
        if (c->s.session_id > 0)
            store_session_end(c->s.db, c->s.session_id);
        store_close(c->s.db);
    }
    api_clear_results(c); /* the kept graph's device memory under the lock */
    pthread_mutex_unlock(&api_lock);
    free(c->text.data);
    free(c->recs.data);
    free(c);
}

const char *tcj_error(const tcj_ctx *c)
{
    return c ? c->err : api_open_err;
}

void tcj_set_progress(tcj_ctx *c, tcj_progress_fn fn, void *user)
{
    c->pfn = fn;
    c->puser = user;
}

double tcj_progress(const tcj_ctx *c)
{
    return c->frac;
}

void tcj_cancel(tcj_ctx *c)
{
    c->s.cancel = 1;
}

int tcj_data_wrap(tcj_ctx *c, const void *x, size_t n, size_t d, tcj_dtype t, const char *name,
                  tcj_data **out)
{
    *out = NULL;
    c->err[0] = '\0';
    if (!x || n == 0 || d == 0)
        return api_fail(c, TCJ_EINVAL,
                        "data: expected n >= 1 rows of d >= 1 values, got %zu x %zu%s", n, d,
                        x ? "" : " at NULL");
    if (n > UINT32_MAX || n * d / d != n)
        return api_fail(c, TCJ_EINVAL,
                        "data: %zu x %zu values is more than the engines index "
                        "(rows up to 2^32 - 1)",
                        n, d);
    static const dtype_id id[] = {DTYPE_F32, DTYPE_F64, DTYPE_F16, DTYPE_U8, DTYPE_F16};
    if ((unsigned)t > TCJ_I8)
        return api_fail(c, TCJ_EINVAL, "data: unknown element type %d (f32, f64, f16, u8, i8)",
                        (int)t);
    tcj_data *dx = xcalloc(1, sizeof *dx);
    dx->ds.name = xstrdup(name && *name ? name : "array");
    dx->ds.format = xstrdup("array");
    dx->ds.n = n;
    dx->ds.d = d;
    dx->ds.type = id[t];
    if (t == TCJ_I8) { /* f16 holds every i8 value exactly */
        uint16_t *h = xmalloc(n * d * sizeof *h);
        const int8_t *s = x;
        for (size_t k = 0; k < n * d; k++)
            h[k] = fp16_from_double((double)s[k]);
        dx->own = h;
        dx->ds.v = h;
    } else {
        dx->ds.v = (void *)x;
    }
    size_t k; /* the hash's pass finds the first value that is not finite */
    dataset_hash_scan(&dx->ds, NULL, &dx->ds.hash, &k);
    if (k < n * d) {
        const double v = dataset_value(&dx->ds, k);
        const int rc = api_fail(c, TCJ_EINVAL,
                                "data %s: row %zu, column %zu is %s (the joins take finite values)",
                                dx->ds.name, k / d, k % d, isnan(v) ? "NaN" : "infinite");
        tcj_data_free(dx);
        return rc;
    }
    *out = dx;
    return 0;
}

void tcj_data_free(tcj_data *x)
{
    if (!x)
        return;
    free(x->ds.name);
    free(x->ds.format);
    free(x->own);
    free(x);
}

/* The commands that would put another dataset in the session (freeing the
 * caller's) or end it. */
static int api_refused(tcj_ctx *c, const char *line)
{
    char **cmds, *storage;
    int n = cmd_split_commands(line, &cmds, &storage);
    int rc = 0;
    for (int i = 0; i < n && !rc; i++) {
        char **argv, *st;
        int argc = cmd_split(cmds[i], &argv, &st);
        if (argc > 0 && (!strcmp(argv[0], "load") || !strcmp(argv[0], "gen") ||
                         !strcmp(argv[0], "quit") || !strcmp(argv[0], "exit")))
            rc = api_fail(c, TCJ_EINVAL,
                          "%s: not through the library (the data come from the caller)", argv[0]);
        if (argc >= 0)
            free(st);
    }
    free(storage);
    return rc;
}

int api_exec_locked(tcj_ctx *c, const char *line)
{
    int rc = api_refused(c, line);
    return rc ? rc : cmd_exec(&c->s, line);
}

int tcj_exec(tcj_ctx *c, tcj_data *x, double eps, const char *line)
{
    api_begin(c, x, eps);
    return api_end(c, api_exec_locked(c, line));
}

const char *tcj_records(const tcj_ctx *c)
{
    return c->recs.data ? c->recs.data : "";
}

const char *tcj_text(const tcj_ctx *c)
{
    return c->text.data ? c->text.data : "";
}

int tcj_array(const tcj_ctx *c, const char *name, const void **data, tcj_atype *type, size_t *n)
{
    for (int k = 0; k < c->narr; k++)
        if (!strcmp(c->arr[k].name, name)) {
            *data = c->arr[k].data;
            *type = (tcj_atype)c->arr[k].type;
            *n = c->arr[k].n;
            return 0;
        }
    return TCJ_EINVAL;
}

int tcj_set(tcj_ctx *c, const char *name, const char *value)
{
    if (!name || !setting_find(name))
        return api_fail(c, TCJ_EINVAL, "set: unknown setting '%s'", name ? name : "");
    char line[1024];
    snprintf(line, sizeof line, "set %s %s", name, value ? value : "");
    return tcj_exec(c, NULL, 0, line);
}

int tcj_get(tcj_ctx *c, const char *name, char *buf, size_t size)
{
    const setting *t = name ? setting_find(name) : NULL;
    if (!t)
        return api_fail(c, TCJ_EINVAL, "get: unknown setting '%s'", name ? name : "");
    pthread_mutex_lock(&api_lock);
    t->get(&c->s, buf, size);
    pthread_mutex_unlock(&api_lock);
    return 0;
}

int api_rec_number(tcj_ctx *c, const char *type, const char *key, double *v)
{
    for (const char *line = tcj_records(c); *line;) {
        const char *end = strchr(line, '\n');
        const size_t len = end ? (size_t)(end - line) : strlen(line);
        char *one = xmalloc(len + 1);
        memcpy(one, line, len);
        one[len] = '\0';
        json *j = json_parse(one);
        free(one);
        const int found = j && !strcmp(json_str(j, "type", ""), type) && json_get(j, key);
        if (found)
            *v = json_num(j, key);
        json_free(j);
        if (found)
            return 0;
        line = end ? end + 1 : line + len;
    }
    return api_fail(c, TCJ_EINVAL, "no %s in the %s record", key, type);
}
