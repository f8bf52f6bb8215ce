/* A small JSON reader for the writer's records (src/out.h): enough to pull
 * the few fields the dashboard panels draw. Parses into a tree of nodes in
 * one allocation owned by the caller (json_free). */
#ifndef TCJ_UI_JSON_MINI_H
#define TCJ_UI_JSON_MINI_H

#include <stddef.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json {
    json_type type;
    char *key;  /* member name inside an object, else NULL */
    char *str;  /* JSON_STR: decoded UTF-8 text, NUL-terminated */
    size_t len; /* JSON_STR: its length in bytes (\u0000 may sit inside) */
    double num; /* JSON_NUM, JSON_BOOL (0/1) */
    struct json *child, *next;
} json;

/* Parse text; NULL on malformed input: anything RFC 8259 does not allow
 * (raw control characters or bytes that are not UTF-8 in strings, unknown
 * escapes, numbers outside JSON's grammar, trailing text). A lone
 * surrogate escape reads as U+FFFD. */
json *json_parse(const char *text);
void json_free(json *j);

/* Member of an object by name, or NULL. */
const json *json_get(const json *obj, const char *key);
/* Number member, NAN when missing or not a number (null is NAN). */
double json_num(const json *obj, const char *key);
/* String member, or def. */
const char *json_str(const json *obj, const char *key, const char *def);
/* Elements of an array: count and k-th. */
size_t json_len(const json *arr);
const json *json_at(const json *arr, size_t k);

#endif
