/* The one JSON writer and the one number formatter of the program. Pure:
 * builds text in memory, no I/O and no policy about where it goes (out.c
 * sends records to a sink, store/query.c writes exports to a file).
 * Output is RFC 8259 JSON that strict readers accept whatever bytes they
 * are given:
 *  - strings: '"' and '\' escaped, \b \f \n \r \t as such, the other
 *    control characters (U+0000..U+001F) and DEL as \u00XX. Valid UTF-8
 *    passes through unchanged. Each byte that does not begin a valid UTF-8
 *    sequence (RFC 3629: no overlong forms, no encoded surrogates
 *    U+D800..U+DFFF, nothing above U+10FFFF, no truncated sequence) becomes
 *    one U+FFFD, written \ufffd: a Latin-1 file name "caf\xe9" reads back
 *    as "caf\ufffd". The writer never emits \uD8xx surrogate escapes.
 *  - numbers: integers as integers; doubles in the fewest significant
 *    digits that strtod reads back to the same bits (%.15g, %.16g or
 *    %.17g, trailing zeros dropped; subnormals from %.1g up), so a reader
 *    gets exactly the double that was written; NaN and infinities as null. */
#ifndef TCJ_JSON_H
#define TCJ_JSON_H

#include <stddef.h>
#include <stdint.h>

/* Room for any output of json_fmt_double ("-2.2250738585072014e-308"). */
#define JSON_NUM_MAX 32
#define JSON_DEPTH 16

typedef struct json_w {
    char *buf; /* NUL-terminated text so far (NULL until something is written) */
    size_t len, cap;
    int depth;
    char kind[JSON_DEPTH];           /* '{' or '[' per open level; [0] the top */
    unsigned char first[JSON_DEPTH]; /* nothing written yet at this level */
} json_w;

/* The shortest decimal that reads back as v (see above); "null" when v is
 * not finite. size >= JSON_NUM_MAX. Also the number formatter for CSV and
 * exact human output. */
void json_fmt_double(char *buf, size_t size, double v);

/* Start a document whose top level is an object or an array ('{' or '['). */
void json_w_init(json_w *w, char top);
/* Members: key names the member inside an object and is ignored inside an
 * array (pass NULL there). */
void json_w_str(json_w *w, const char *key, const char *val); /* NULL -> null */
/* A string of n bytes that may hold NUL bytes (escaped as \u0000). */
void json_w_strn(json_w *w, const char *key, const char *val, size_t n);
void json_w_int(json_w *w, const char *key, int64_t val);
void json_w_uint(json_w *w, const char *key, uint64_t val);
void json_w_dbl(json_w *w, const char *key, double val); /* non-finite -> null */
void json_w_bool(json_w *w, const char *key, int val);
void json_w_null(json_w *w, const char *key);
void json_w_obj(json_w *w, const char *key); /* open a nested object */
void json_w_arr(json_w *w, const char *key); /* open a nested array */
void json_w_close(json_w *w);                /* close the innermost nested level */
/* Close every level, the top included, and give the text (caller frees;
 * w is empty afterwards). */
char *json_w_finish(json_w *w);
/* Drop everything (after an error). */
void json_w_free(json_w *w);

#endif
