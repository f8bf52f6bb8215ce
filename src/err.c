#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for a path of PATH_MAX (4096) and its reason twice over. */
static _Thread_local char err_buf[12288];

/* A message longer than the buffer keeps its head and its end, where the
 * reason is ("PATH: No such file or directory"), and loses the middle. */
static void err_cut_middle(const char *full, size_t n)
{
    static const char mid[] = " ... ";
    const size_t room = sizeof err_buf - 1, tail = room / 2, head = room - tail - (sizeof mid - 1);
    memcpy(err_buf, full, head);
    memcpy(err_buf + head, mid, sizeof mid - 1);
    memcpy(err_buf + head + sizeof mid - 1, full + n - tail, tail);
    err_buf[room] = '\0';
}

int err_vset(int code, const char *fmt, va_list ap)
{
    va_list again;
    va_copy(again, ap);
    const int n = vsnprintf(err_buf, sizeof err_buf, fmt, ap);
    if (n >= (int)sizeof err_buf) {
        char *full = malloc((size_t)n + 1);
        if (full) {
            vsnprintf(full, (size_t)n + 1, fmt, again);
            err_cut_middle(full, (size_t)n);
            free(full);
        }
    }
    va_end(again);
    return code;
}

int err_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(code, fmt, ap);
    va_end(ap);
    return code;
}

/* "WHO: cancelled[; NOTE]": the one wording of a cancellation. */
static int err_vcancelled(const char *note, const char *who, va_list ap)
{
    char name[4352]; /* a path of PATH_MAX and a command name */
    vsnprintf(name, sizeof name, who, ap);
    return err_set(TCJ_ECANCEL, "%s: " ERR_CANCELLED "%s%s", name, note ? "; " : "",
                   note ? note : "");
}

int err_cancelled(const char *who, ...)
{
    va_list ap;
    va_start(ap, who);
    err_vcancelled(NULL, who, ap);
    va_end(ap);
    return TCJ_ECANCEL;
}

int err_cancelled_note(const char *note, const char *who, ...)
{
    va_list ap;
    va_start(ap, who);
    err_vcancelled(note, who, ap);
    va_end(ap);
    return TCJ_ECANCEL;
}

const char *err_msg(void)
{
    return err_buf;
}

void err_clear(void)
{
    err_buf[0] = '\0';
}

static void oom(unsigned long n)
{
    fprintf(stderr, "tcjoin: out of memory allocating %lu bytes\n", n);
    abort();
}

void *xmalloc(unsigned long n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(unsigned long n, unsigned long size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom(n * size);
    return p;
}

void *xrealloc(void *p, unsigned long n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = xmalloc(n);
    memcpy(p, s, n);
    return p;
}
