/* Recursive-descent JSON reader; nodes are malloc'd one by one and freed
 * by json_free. Depth is bounded so a hostile line cannot blow the stack. */
#include "json_mini.h"

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

/* Decode a string starting at the opening quote into a new buffer. */
static char *parse_string(parser *ps)
{
    if (*ps->p != '"')
        return NULL;
    ps->p++;
    size_t cap = 16, n = 0;
    char *out = xmalloc(cap);
    for (;;) {
        char c = *ps->p++;
        if (c == '\0') {
            free(out);
            return NULL;
        }
        if (c == '"')
            break;
        unsigned cp = (unsigned char)c;
        if (c == '\\') {
            char e = *ps->p++;
            switch (e) {
            case 'n':
                cp = '\n';
                break;
            case 't':
                cp = '\t';
                break;
            case 'r':
                cp = '\r';
                break;
            case 'b':
                cp = '\b';
                break;
            case 'f':
                cp = '\f';
                break;
            case 'u': {
                cp = 0;
                for (int k = 0; k < 4; k++) {
                    int h = hexval(ps->p[k]);
                    if (h < 0) {
                        free(out);
                        return NULL;
                    }
                    cp = cp * 16 + (unsigned)h;
                }
                ps->p += 4;
                break;
            }
            case '\0':
                free(out);
                return NULL;
            default:
                cp = (unsigned char)e;
                break;
            }
        }
        if (n + 4 >= cap)
            out = xrealloc(out, cap *= 2);
        /* Raw bytes are copied; \u escapes become UTF-8 (surrogate pairs,
         * rare in records, stay two 3-byte sequences). */
        if (c != '\\' || cp < 0x80) {
            out[n++] = (char)cp;
        } else if (cp < 0x800) {
            out[n++] = (char)(0xC0 | (cp >> 6));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        } else {
            out[n++] = (char)(0xE0 | (cp >> 12));
            out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[n++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    out[n] = '\0';
    return out;
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
            key = parse_string(ps);
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
        char *s = parse_string(ps);
        if (s) {
            j = node(JSON_STR);
            j->str = s;
        }
    } else if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        j = node(JSON_BOOL);
        j->num = c == 't';
        ps->p += c == 't' ? 4 : 5;
    } else if (strncmp(ps->p, "null", 4) == 0) {
        j = node(JSON_NULL);
        ps->p += 4;
    } else {
        char *end;
        double v = strtod(ps->p, &end);
        if (end != ps->p) {
            j = node(JSON_NUM);
            j->num = v;
            ps->p = end;
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
