/* The one writer: plain text, JSON records, errors, routed to a sink. */
#include "out.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "esc.h"
#include "json.h"

static out_fn sink_fn = out_default_sink;
static void *sink_ctx;
static int json_on;

/* tcjoin ignores SIGPIPE, so that a FIFO output whose reader went away is
 * an error of that command (src/ofile.c); standard output's reader going
 * away (tcjoin ... | head) still ends tcjoin, as it ends any filter. */
static void out_stdout_check(int rc)
{
    if (rc == EOF && errno == EPIPE) {
        signal(SIGPIPE, SIG_DFL);
        raise(SIGPIPE);
    }
}

/* Text goes to stdout in plain mode and records in JSON mode, so a JSON
 * consumer reads nothing but objects. Errors go to stderr in both. */
void out_default_sink(void *ctx, out_kind kind, const char *text)
{
    switch (kind) {
    case OUT_TEXT:
        if (!json_on)
            out_stdout_check(fputs(text, stdout));
        break;
    case OUT_RECORD:
        if (json_on) {
            out_stdout_check(fputs(text, stdout));
            out_stdout_check(fputc('\n', stdout));
        }
        break;
    case OUT_ERROR:
        /* keep the order of interleaved stdout/stderr */
        out_stdout_check(fflush(stdout));
        fprintf(stderr, "tcjoin: error: %s\n", text);
        fflush(stderr);
        break;
    case OUT_CANCEL:
        /* Where errors go, so a script's stdout keeps only results; the
         * message itself says "cancelled". */
        out_stdout_check(fflush(stdout));
        fprintf(stderr, "tcjoin: %s\n", text);
        fflush(stderr);
        break;
    }
}

void out_set_sink(out_fn fn, void *ctx)
{
    sink_fn = fn ? fn : out_default_sink;
    sink_ctx = fn ? ctx : NULL;
}

void out_reset_sink(void)
{
    out_set_sink(NULL, NULL);
}

void out_set_json(int on)
{
    json_on = on;
}

int out_json(void)
{
    return json_on;
}

static char *out_vfmt(const char *fmt, va_list ap)
{
    va_list aq;
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, aq);
    va_end(aq);
    if (n < 0)
        n = 0;
    char *buf = xmalloc((unsigned long)n + 1);
    vsnprintf(buf, (size_t)n + 1, fmt, ap);
    return buf;
}

/* Human text reaches the sink with its control characters escaped (a file
 * name or a CSV field could hold a terminal escape sequence). */
static void out_text_escaped(out_kind kind, const char *s, int keep_newline)
{
    if (!esc_needed(s, keep_newline)) {
        sink_fn(sink_ctx, kind, s);
        return;
    }
    char *e = esc_text(s, keep_newline);
    sink_fn(sink_ctx, kind, e);
    free(e);
}

void out_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = out_vfmt(fmt, ap);
    va_end(ap);
    out_text_escaped(OUT_TEXT, s, 1);
    free(s);
}

/* Errors and cancellations are one line: anything after the first
 * newline is cut. */
static void out_line(out_kind kind, const char *fmt, va_list ap)
{
    char *s = out_vfmt(fmt, ap);
    char *nl = strchr(s, '\n');
    if (nl)
        *nl = '\0';
    out_text_escaped(kind, s, 0);
    free(s);
}

void out_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_line(OUT_ERROR, fmt, ap);
    va_end(ap);
}

void out_cancelled(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_line(OUT_CANCEL, fmt, ap);
    va_end(ap);
}

/* ---- records: the JSON writer (json.c) plus a sink ---- */

struct out_rec {
    json_w w;
};

out_rec *out_rec_begin(const char *type)
{
    out_rec *r = xcalloc(1, sizeof *r);
    json_w_init(&r->w, '{');
    if (type)
        json_w_str(&r->w, "type", type);
    return r;
}

void out_rec_str(out_rec *r, const char *key, const char *val)
{
    json_w_str(&r->w, key, val);
}

void out_rec_int(out_rec *r, const char *key, int64_t val)
{
    json_w_int(&r->w, key, val);
}

void out_rec_uint(out_rec *r, const char *key, uint64_t val)
{
    json_w_uint(&r->w, key, val);
}

void out_fmt_double(char *buf, size_t size, double v)
{
    json_fmt_double(buf, size, v);
}

void out_rec_dbl(out_rec *r, const char *key, double val)
{
    json_w_dbl(&r->w, key, val);
}

void out_rec_bool(out_rec *r, const char *key, int val)
{
    json_w_bool(&r->w, key, val);
}

void out_rec_null(out_rec *r, const char *key)
{
    json_w_null(&r->w, key);
}

void out_rec_obj(out_rec *r, const char *key)
{
    json_w_obj(&r->w, key);
}

void out_rec_arr(out_rec *r, const char *key)
{
    json_w_arr(&r->w, key);
}

void out_rec_close(out_rec *r)
{
    json_w_close(&r->w);
}

void out_rec_end(out_rec *r)
{
    char *text = json_w_finish(&r->w);
    sink_fn(sink_ctx, OUT_RECORD, text);
    free(text);
    free(r);
}

char *out_rec_take(out_rec *r)
{
    char *text = json_w_finish(&r->w);
    free(r);
    return text;
}

void out_rec_raw(const char *json)
{
    sink_fn(sink_ctx, OUT_RECORD, json);
}

void out_rec_discard(out_rec *r)
{
    free(json_w_finish(&r->w));
    free(r);
}

json_w *out_rec_json(out_rec *r)
{
    return &r->w;
}

void out_rec_text_value(out_rec *r, const char *key, const char *text)
{
    char *end;
    /* JSON's number syntax is narrower than strtod's: no hex, inf, nan,
     * leading '+' or '.', and no leading blanks. */
    int numeric =
        text && strspn(text, "0123456789+-.eE") == strlen(text) &&
        (isdigit((unsigned char)text[0]) || (text[0] == '-' && isdigit((unsigned char)text[1])));
    double v = numeric ? strtod(text, &end) : 0;
    if (numeric && !*end && isfinite(v))
        json_w_dbl(&r->w, key, v);
    else
        json_w_str(&r->w, key, text);
}

static void problem_record(const char *type, const char *message, const char *command, long line)
{
    if (!json_on)
        return;
    out_rec *r = out_rec_begin(type);
    out_rec_str(r, "message", message);
    out_rec_str(r, "command", command);
    if (line > 0)
        out_rec_int(r, "line", line);
    else
        out_rec_null(r, "line");
    out_rec_end(r);
}

void out_error_record(const char *message, const char *command, long line)
{
    problem_record("error", message, command, line);
}

void out_cancel_record(const char *message, const char *command, long line)
{
    problem_record("cancelled", message, command, line);
}

/* ---- buffer sink (tests) ---- */

static void buf_put(out_buf *b, const char *s)
{
    size_t n = strlen(s);
    if (b->len + n + 1 > b->cap) {
        while (b->len + n + 1 > b->cap)
            b->cap = b->cap ? 2 * b->cap : 256;
        b->data = xrealloc(b->data, b->cap);
    }
    memcpy(b->data + b->len, s, n + 1);
    b->len += n;
}

void out_buf_sink(void *ctx, out_kind kind, const char *text)
{
    out_buf *b = ctx;
    if (kind == OUT_ERROR)
        buf_put(b, "error: ");
    buf_put(b, text);
    if (kind != OUT_TEXT)
        buf_put(b, "\n");
}

void out_buf_free(out_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
