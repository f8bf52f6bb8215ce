/* The one writer: plain text, JSON records, errors, routed to a sink. */
#include "out.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static out_fn sink_fn = out_default_sink;
static void *sink_ctx;
static int json_on;

/* Text goes to stdout in plain mode and records in JSON mode, so a JSON
 * consumer reads nothing but objects. Errors go to stderr in both. */
void out_default_sink(void *ctx, out_kind kind, const char *text)
{
    switch (kind) {
    case OUT_TEXT:
        if (!json_on)
            fputs(text, stdout);
        break;
    case OUT_RECORD:
        if (json_on) {
            fputs(text, stdout);
            fputc('\n', stdout);
        }
        break;
    case OUT_ERROR:
        fflush(stdout); /* keep the order of interleaved stdout/stderr */
        fprintf(stderr, "tcjoin: error: %s\n", text);
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

void out_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = out_vfmt(fmt, ap);
    va_end(ap);
    sink_fn(sink_ctx, OUT_TEXT, s);
    free(s);
}

void out_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = out_vfmt(fmt, ap);
    va_end(ap);
    /* An error is one line: cut anything after the first newline. */
    char *nl = strchr(s, '\n');
    if (nl)
        *nl = '\0';
    sink_fn(sink_ctx, OUT_ERROR, s);
    free(s);
}

/* ---- records ---- */

#define REC_DEPTH 16

struct out_rec {
    char *buf;
    size_t len, cap;
    int depth;
    char kind[REC_DEPTH]; /* '{' or '[' per open level */
    int first[REC_DEPTH]; /* nothing written yet at this level */
};

static void rec_put(out_rec *r, const char *s, size_t n)
{
    if (r->len + n + 1 > r->cap) {
        while (r->len + n + 1 > r->cap)
            r->cap = r->cap ? 2 * r->cap : 256;
        r->buf = xrealloc(r->buf, r->cap);
    }
    memcpy(r->buf + r->len, s, n);
    r->len += n;
    r->buf[r->len] = '\0';
}

static void rec_puts(out_rec *r, const char *s)
{
    rec_put(r, s, strlen(s));
}

/* A JSON string literal: quotes, backslashes and control characters
 * escaped; other bytes (UTF-8) passed through. */
static void rec_string(out_rec *r, const char *s)
{
    rec_put(r, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        switch (*p) {
        case '"':
            rec_puts(r, "\\\"");
            break;
        case '\\':
            rec_puts(r, "\\\\");
            break;
        case '\n':
            rec_puts(r, "\\n");
            break;
        case '\r':
            rec_puts(r, "\\r");
            break;
        case '\t':
            rec_puts(r, "\\t");
            break;
        case '\b':
            rec_puts(r, "\\b");
            break;
        case '\f':
            rec_puts(r, "\\f");
            break;
        default:
            if (*p < 0x20 || *p == 0x7f) {
                snprintf(esc, sizeof esc, "\\u%04x", *p);
                rec_puts(r, esc);
            } else {
                rec_put(r, (const char *)p, 1);
            }
        }
    }
    rec_put(r, "\"", 1);
}

/* Separator and key for the next member (key ignored inside arrays). */
static void rec_key(out_rec *r, const char *key)
{
    if (!r->first[r->depth])
        rec_put(r, ",", 1);
    r->first[r->depth] = 0;
    if (r->kind[r->depth] == '{') {
        rec_string(r, key ? key : "");
        rec_put(r, ":", 1);
    }
}

out_rec *out_rec_begin(const char *type)
{
    out_rec *r = xcalloc(1, sizeof *r);
    r->kind[0] = '{';
    r->first[0] = 1;
    rec_put(r, "{", 1);
    if (type)
        out_rec_str(r, "type", type);
    return r;
}

void out_rec_str(out_rec *r, const char *key, const char *val)
{
    rec_key(r, key);
    if (val)
        rec_string(r, val);
    else
        rec_puts(r, "null");
}

void out_rec_int(out_rec *r, const char *key, int64_t val)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", (long long)val);
    rec_key(r, key);
    rec_puts(r, num);
}

/* The shortest of %.15g / %.17g that reads back as the same double. */
void out_fmt_double(char *buf, size_t size, double v)
{
    snprintf(buf, size, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, size, "%.17g", v);
}

void out_rec_dbl(out_rec *r, const char *key, double val)
{
    char num[40];
    rec_key(r, key);
    if (!isfinite(val)) {
        rec_puts(r, "null");
        return;
    }
    out_fmt_double(num, sizeof num, val);
    rec_puts(r, num);
}

void out_rec_bool(out_rec *r, const char *key, int val)
{
    rec_key(r, key);
    rec_puts(r, val ? "true" : "false");
}

static void rec_open(out_rec *r, const char *key, char kind)
{
    rec_key(r, key);
    if (r->depth + 1 >= REC_DEPTH)
        abort(); /* a programming error: records are shallow */
    r->depth++;
    r->kind[r->depth] = kind;
    r->first[r->depth] = 1;
    rec_put(r, kind == '{' ? "{" : "[", 1);
}

void out_rec_obj(out_rec *r, const char *key)
{
    rec_open(r, key, '{');
}

void out_rec_arr(out_rec *r, const char *key)
{
    rec_open(r, key, '[');
}

void out_rec_close(out_rec *r)
{
    if (r->depth == 0)
        return;
    rec_put(r, r->kind[r->depth] == '{' ? "}" : "]", 1);
    r->depth--;
}

void out_rec_end(out_rec *r)
{
    while (r->depth > 0)
        out_rec_close(r);
    rec_put(r, "}", 1);
    sink_fn(sink_ctx, OUT_RECORD, r->buf);
    free(r->buf);
    free(r);
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
