/* The one JSON writer: escaping, the number formatter, nesting. */
#include "json.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

void json_fmt_double(char *buf, size_t size, double v)
{
    if (!isfinite(v)) {
        snprintf(buf, size, "null");
        return;
    }
    /* Increasing precision until the text reads back to the same bits (17
     * significant digits always do for an IEEE double; bits, not ==, so -0
     * stays -0). Starting at 15 loses nothing: when some p <= 15 digits
     * read back, v rounded to p digits is also v rounded to 15 digits (15
     * digits resolve 5e-16 of v, a double only 1.1e-16), and %g drops the
     * trailing zeros. %.15g also keeps integers up to 15 digits plain
     * ("100", not the "1e+02" of %.1g). Subnormals carry fewer bits than
     * that and are searched from 1 digit ("5e-324"). */
    int from = v != 0 && fabs(v) < DBL_MIN ? 1 : 15;
    for (int prec = from; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        double back = strtod(buf, NULL);
        if (memcmp(&back, &v, sizeof v) == 0)
            break;
    }
    /* The dashboard sets the user's locale; JSON wants '.' whatever the
     * locale's decimal point is. */
    const char *dp = localeconv()->decimal_point;
    if (dp && strcmp(dp, ".") != 0 && *dp) {
        char *p = strstr(buf, dp);
        if (p) {
            size_t n = strlen(dp);
            *p = '.';
            memmove(p + 1, p + n, strlen(p + n) + 1);
        }
    }
}

static void put(json_w *w, const char *s, size_t n)
{
    if (w->len + n + 1 > w->cap) {
        while (w->len + n + 1 > w->cap)
            w->cap = w->cap ? 2 * w->cap : 256;
        w->buf = xrealloc(w->buf, w->cap);
    }
    memcpy(w->buf + w->len, s, n);
    w->len += n;
    w->buf[w->len] = '\0';
}

static void puts_(json_w *w, const char *s)
{
    put(w, s, strlen(s));
}

/* Length of the valid UTF-8 sequence at p (at most `left` bytes), 0 when the
 * bytes there are not one (RFC 3629 table 3.7 of Unicode). */
static size_t utf8_len(const unsigned char *p, size_t left)
{
    unsigned c = p[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        if (c == 0xe0)
            lo = 0xa0; /* overlong */
        if (c == 0xed)
            hi = 0x9f; /* encoded surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        if (c == 0xf0)
            lo = 0x90; /* overlong */
        if (c == 0xf4)
            hi = 0x8f; /* above U+10FFFF */
    } else {
        return 0;
    }
    if (n > left || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

static void string_lit(json_w *w, const char *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    put(w, "\"", 1);
    while (p < end) {
        unsigned c = *p;
        const char *esc = NULL;
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        }
        if (esc) {
            puts_(w, esc);
            p++;
        } else if (c < 0x20 || c == 0x7f) {
            char u[7] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15], 0};
            puts_(w, u);
            p++;
        } else {
            /* One UTF-8 sequence, or one invalid byte. */
            size_t k = utf8_len(p, (size_t)(end - p));
            if (k == 0) {
                puts_(w, "\\ufffd");
                p++;
            } else if (k == 2 && c == 0xc2 && p[1] <= 0x9f) {
                /* A C1 control (U+0080..U+009F; U+009B is CSI): valid JSON
                 * raw, but a terminal showing the record would act on it. */
                char u[7] = {'\\', 'u', '0', '0', hex[p[1] >> 4], hex[p[1] & 15], 0};
                puts_(w, u);
                p += 2;
            } else {
                put(w, (const char *)p, k);
                p += k;
            }
        }
    }
    put(w, "\"", 1);
}

/* Separator and key before the next value. */
static void key(json_w *w, const char *k)
{
    if (!w->first[w->depth])
        put(w, ",", 1);
    w->first[w->depth] = 0;
    if (w->kind[w->depth] == '{') {
        const char *kk = k ? k : "";
        string_lit(w, kk, strlen(kk));
        put(w, ":", 1);
    }
}

void json_w_init(json_w *w, char top)
{
    memset(w, 0, sizeof *w);
    w->kind[0] = top == '[' ? '[' : '{';
    w->first[0] = 1;
    put(w, w->kind[0] == '[' ? "[" : "{", 1);
}

void json_w_str(json_w *w, const char *k, const char *val)
{
    if (!val) {
        json_w_null(w, k);
        return;
    }
    json_w_strn(w, k, val, strlen(val));
}

void json_w_strn(json_w *w, const char *k, const char *val, size_t n)
{
    key(w, k);
    string_lit(w, val, n);
}

void json_w_int(json_w *w, const char *k, int64_t val)
{
    char num[JSON_NUM_MAX];
    snprintf(num, sizeof num, "%lld", (long long)val);
    key(w, k);
    puts_(w, num);
}

void json_w_uint(json_w *w, const char *k, uint64_t val)
{
    char num[JSON_NUM_MAX];
    snprintf(num, sizeof num, "%llu", (unsigned long long)val);
    key(w, k);
    puts_(w, num);
}

void json_w_dbl(json_w *w, const char *k, double val)
{
    char num[JSON_NUM_MAX];
    json_fmt_double(num, sizeof num, val);
    key(w, k);
    puts_(w, num);
}

void json_w_bool(json_w *w, const char *k, int val)
{
    key(w, k);
    puts_(w, val ? "true" : "false");
}

void json_w_null(json_w *w, const char *k)
{
    key(w, k);
    puts_(w, "null");
}

static void open_level(json_w *w, const char *k, char kind)
{
    key(w, k);
    if (w->depth + 1 >= JSON_DEPTH)
        abort(); /* a programming error: records are shallow */
    w->depth++;
    w->kind[w->depth] = kind;
    w->first[w->depth] = 1;
    put(w, kind == '{' ? "{" : "[", 1);
}

void json_w_obj(json_w *w, const char *k)
{
    open_level(w, k, '{');
}

void json_w_arr(json_w *w, const char *k)
{
    open_level(w, k, '[');
}

void json_w_close(json_w *w)
{
    if (w->depth == 0)
        return;
    put(w, w->kind[w->depth] == '{' ? "}" : "]", 1);
    w->depth--;
}

char *json_w_finish(json_w *w)
{
    while (w->depth > 0)
        json_w_close(w);
    put(w, w->kind[0] == '[' ? "]" : "}", 1);
    char *text = w->buf;
    memset(w, 0, sizeof *w);
    return text;
}

void json_w_free(json_w *w)
{
    free(w->buf);
    memset(w, 0, sizeof *w);
}
