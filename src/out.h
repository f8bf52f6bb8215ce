/* The one writer all text output goes through. It targets stdout (plain or
 * --json), the dashboard's log panel, or a buffer in tests. Handlers print
 * human text with out_printf and describe each result with a record; in
 * JSON mode only records reach stdout (one JSON object per line), in plain
 * mode only text does. Errors always go through out_error. */
#ifndef TCJ_OUT_H
#define TCJ_OUT_H

#include <stddef.h>
#include <stdint.h>

typedef enum out_kind {
    OUT_TEXT,   /* human-readable text (may hold several lines) */
    OUT_ERROR,  /* one line, without the "error: " prefix */
    OUT_RECORD, /* one complete JSON object, no newline */
    OUT_CANCEL, /* one line: a command the user stopped (Ctrl-C, Esc), not a failure */
} out_kind;

typedef void (*out_fn)(void *ctx, out_kind kind, const char *text);

/* Route output. Default: text to stdout, errors to stderr as
 * "tcjoin: error: ...", cancellations to stderr as "tcjoin: ...", records
 * dropped unless json is on. */
void out_set_sink(out_fn fn, void *ctx);
void out_reset_sink(void);
/* The sink out_reset_sink restores (stdout/stderr), for sinks that wrap it. */
void out_default_sink(void *ctx, out_kind kind, const char *text);
void out_set_json(int on);
int out_json(void);

void out_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void out_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A command the user stopped: one line like an error, but not called one
 * (the message says what was cancelled). */
void out_cancelled(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Records: written by the one JSON writer (json.h, which says how strings
 * and numbers are written). A flat JSON object with optional nested objects/arrays.
 *   out_rec *r = out_rec_begin("run");   -- adds "type":"run"
 *   out_rec_int(r, "run_id", 3); out_rec_obj(r, "phases"); ... out_rec_close(r);
 *   out_rec_end(r);                      -- emits and frees
 */
typedef struct out_rec out_rec;
out_rec *out_rec_begin(const char *type);
void out_rec_str(out_rec *r, const char *key, const char *val); /* NULL -> null */
void out_rec_int(out_rec *r, const char *key, int64_t val);
void out_rec_uint(out_rec *r, const char *key, uint64_t val);
void out_rec_dbl(out_rec *r, const char *key, double val); /* NaN/Inf -> null */
void out_rec_bool(out_rec *r, const char *key, int val);
void out_rec_null(out_rec *r, const char *key);
void out_rec_obj(out_rec *r, const char *key); /* open a nested object */
void out_rec_arr(out_rec *r, const char *key); /* open a nested array */
void out_rec_close(out_rec *r);                /* close the innermost */
/* Array elements (key ignored inside arrays: pass NULL). */
void out_rec_end(out_rec *r);
/* Free a record without emitting it (the command failed part way). */
void out_rec_discard(out_rec *r);
/* The record's JSON text (malloc'd), not emitted; r is freed (what a
 * command keeps in the session log, src/cli/cmd.h's `stored`). */
char *out_rec_take(out_rec *r);
/* Emit a record kept as its JSON text (an object). */
void out_rec_raw(const char *json);
/* The record's JSON writer, for code that writes members with json.h
 * directly (the store's run object, a comparison side). */
struct json_w;
struct json_w *out_rec_json(out_rec *r);
/* A value given as text (settings): a JSON number when the whole text is
 * one finite number, else a string. */
void out_rec_text_value(out_rec *r, const char *key, const char *text);
/* In --json mode only: an error as a record on stdout,
 * {"type":"error","message":...,"command":...,"line":...}; command NULL and
 * line <= 0 are written as null. out_error still writes the stderr line. */
void out_error_record(const char *message, const char *command, long line);
/* The same for a command the user stopped: {"type":"cancelled",...} with
 * the fields of the error record. */
void out_cancel_record(const char *message, const char *command, long line);

/* A growable buffer sink for tests: collects everything as text, records
 * one per line, errors prefixed with "error: ", cancellations one per line
 * without a prefix. */
typedef struct out_buf {
    char *data;
    size_t len, cap;
} out_buf;
void out_buf_sink(void *ctx, out_kind kind, const char *text);
void out_buf_free(out_buf *b);

/* The shortest decimal that reads back as the same double (json.h's
 * json_fmt_double; used for JSON numbers and exact human output). */
void out_fmt_double(char *buf, size_t size, double v);

#endif
