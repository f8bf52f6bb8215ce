/* Recursive-descent JSON reader, strict about RFC 8259 (it is also the
 * test oracle of the writer, src/json.c); nodes are malloc'd one by one and freed
 * by json_free. Depth is bounded so a hostile line cannot blow the stack. */
#include "json_mini.h"

#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

typedef struct parser {
    const char *p;
    int depth;
} parser;

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Length of the valid UTF-8 sequence at p, 0 when the bytes there are not
 * one (no overlong forms, no encoded surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *p)
{
    unsigned c = p[0], lo = 0x80, hi = 0xbf;
    size_t n;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : lo;
        hi = c == 0xed ? 0x9f : hi;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : lo;
        hi = c == 0xf4 ? 0x8f : hi;
    } else {
        return 0;
    }
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 2; k < n; k++)
        if ((p[k] & 0xc0) != 0x80)
            return 0;
    return n;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(p[k]);
        if (h < 0)
            return -1;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *out, unsigned cp)
{
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode a string starting at the opening quote into a new buffer (*len
 * bytes, NUL-terminated; \u0000 gives a NUL inside). Strict RFC 8259:
 * control characters must be escaped, only the defined escapes, raw bytes
 * must be UTF-8. \u escapes become UTF-8; a surrogate pair becomes its
 * code point, a lone surrogate U+FFFD. */
static char *parse_string(parser *ps, size_t *len)
{
    if (*ps->p != '"')
        return NULL;
    ps->p++;
    size_t cap = 16, n = 0;
    char *out = xmalloc(cap);
    for (;;) {
        if (n + 8 >= cap)
            out = xrealloc(out, cap *= 2);
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c < 0x20) /* NUL (the end of the text) or a raw control character */
            goto bad;
        if (c != '\\') {
            size_t k = utf8_len((const unsigned char *)ps->p);
            if (k == 0)
                goto bad;
            memcpy(out + n, ps->p, k);
            n += k;
            ps->p += k;
            continue;
        }
        char e = ps->p[1], d;
        ps->p += 2;
        switch (e) {
        case '"':
        case '\\':
        case '/':
            d = e;
            break;
        case 'b':
            d = '\b';
            break;
        case 'f':
            d = '\f';
            break;
        case 'n':
            d = '\n';
            break;
        case 'r':
            d = '\r';
            break;
        case 't':
            d = '\t';
            break;
        case 'u':
            d = 0;
            break;
        default:
            goto bad;
        }
        if (e != 'u') {
            out[n++] = d;
            continue;
        }
        unsigned cp, lo;
        if (hex4(ps->p, &cp))
            goto bad;
        ps->p += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && ps->p[0] == '\\' && ps->p[1] == 'u' &&
            hex4(ps->p + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            ps->p += 6;
        } else if (cp >= 0xD800 && cp <= 0xDFFF) {
            cp = 0xFFFD;
        }
        n += put_utf8(out + n, cp);
    }
    out[n] = '\0';
    if (len)
        *len = n;
    return out;
bad:
    free(out);
    return NULL;
}

/* A number by JSON's grammar (no '+', hex, inf, nan, leading '.' or
 * leading zeros), read whatever the locale's decimal point is. */
static int parse_number(parser *ps, double *out)
{
    const char *p = ps->p;
    if (*p == '-')
        p++;
    if (*p == '0')
        p++;
    else if (*p >= '1' && *p <= '9')
        while (*p >= '0' && *p <= '9')
            p++;
    else
        return -1;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!(*p >= '0' && *p <= '9'))
            return -1;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    char buf[400];
    size_t n = (size_t)(p - ps->p);
    if (n >= sizeof buf - 8)
        return -1;
    memcpy(buf, ps->p, n);
    buf[n] = '\0';
    char *dot = strchr(buf, '.');
    const char *dp = localeconv()->decimal_point;
    if (dot && dp && *dp && strcmp(dp, ".") != 0) {
        size_t k = strlen(dp);
        memmove(dot + k, dot + 1, strlen(dot + 1) + 1);
        memcpy(dot, dp, k);
    }
    *out = strtod(buf, NULL);
    ps->p = p;
    return 0;
}

static json *parse_value(parser *ps);

static json *node(json_type t)
{
    json *j = xcalloc(1, sizeof *j);
    j->type = t;
    return j;
}

static json *parse_container(parser *ps, int obj)
{
    json *j = node(obj ? JSON_OBJ : JSON_ARR);
    json **tail = &j->child;
    ps->p++;
    skip_ws(ps);
    if (*ps->p == (obj ? '}' : ']')) {
        ps->p++;
        return j;
    }
    for (;;) {
        char *key = NULL;
        skip_ws(ps);
        if (obj) {
            key = parse_string(ps, NULL);
            skip_ws(ps);
            if (!key || *ps->p != ':') {
                free(key);
                json_free(j);
                return NULL;
            }
            ps->p++;
        }
        json *v = parse_value(ps);
        if (!v) {
            free(key);
            json_free(j);
            return NULL;
        }
        v->key = key;
        *tail = v;
        tail = &v->next;
        skip_ws(ps);
        if (*ps->p == ',') {
            ps->p++;
            continue;
        }
        if (*ps->p == (obj ? '}' : ']')) {
            ps->p++;
            return j;
        }
        json_free(j);
        return NULL;
    }
}

static json *parse_value(parser *ps)
{
    if (++ps->depth > 64)
        return NULL;
    skip_ws(ps);
    json *j = NULL;
    char c = *ps->p;
    if (c == '{' || c == '[') {
        j = parse_container(ps, c == '{');
    } else if (c == '"') {
        size_t len = 0;
        char *s = parse_string(ps, &len);
        if (s) {
            j = node(JSON_STR);
            j->str = s;
            j->len = len;
        }
    } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        j = node(JSON_BOOL);
        j->num = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        j = node(JSON_NULL);
        ps->p += 4;
    } else {
        double v;
        if (parse_number(ps, &v) == 0) {
            j = node(JSON_NUM);
            j->num = v;
        }
    }
    ps->depth--;
    return j;
}

json *json_parse(const char *text)
{
    parser ps = {text, 0};
    json *j = parse_value(&ps);
    if (!j)
        return NULL;
    skip_ws(&ps);
    if (*ps.p) {
        json_free(j);
        return NULL;
    }
    return j;
}

void json_free(json *j)
{
    while (j) {
        json *next = j->next;
        json_free(j->child);
        free(j->key);
        free(j->str);
        free(j);
        j = next;
    }
}

const json *json_get(const json *obj, const char *key)
{
    if (!obj || obj->type != JSON_OBJ)
        return NULL;
    for (const json *c = obj->child; c; c = c->next)
        if (c->key && strcmp(c->key, key) == 0)
            return c;
    return NULL;
}

double json_num(const json *obj, const char *key)
{
    const json *v = json_get(obj, key);
    return v && (v->type == JSON_NUM || v->type == JSON_BOOL) ? v->num : NAN;
}

const char *json_str(const json *obj, const char *key, const char *def)
{
    const json *v = json_get(obj, key);
    return v && v->type == JSON_STR ? v->str : def;
}

size_t json_len(const json *arr)
{
    size_t n = 0;
    if (arr && (arr->type == JSON_ARR || arr->type == JSON_OBJ))
        for (const json *c = arr->child; c; c = c->next)
            n++;
    return n;
}

const json *json_at(const json *arr, size_t k)
{
    if (!arr || (arr->type != JSON_ARR && arr->type != JSON_OBJ))
        return NULL;
    const json *c = arr->child;
    while (c && k--)
        c = c->next;
    return c;
}
