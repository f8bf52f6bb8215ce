#include "err.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char err_buf[1024];

int err_vset(int code, const char *fmt, va_list ap)
{
    vsnprintf(err_buf, sizeof err_buf, fmt, ap);
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
