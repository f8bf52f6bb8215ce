/* Error reporting: functions return a negative code and leave one line of
 * text here; only the front end decides how to show it. Thread-local so
 * engine worker threads cannot clobber the REPL's message. */
#ifndef TCJ_ERR_H
#define TCJ_ERR_H

#include <stdarg.h>

enum {
    TCJ_OK = 0,
    TCJ_EINVAL = -1,  /* bad argument or input data */
    TCJ_EIO = -2,     /* file could not be read or written */
    TCJ_ENOMEM = -3,  /* allocation failed */
    TCJ_ENODEV = -4,  /* engine needs a GPU and none is usable */
    TCJ_EGPU = -5,    /* a CUDA call failed during a run */
    TCJ_ECANCEL = -6, /* the user cancelled */
    TCJ_ESTORE = -7,  /* SQLite error */
    TCJ_EUNSUP = -8,  /* not supported here (no library, no privilege) */
};

/* Set the message and return code, so callers can `return err_set(...)`. */
int err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int err_vset(int code, const char *fmt, va_list ap);
/* The last message set in this thread ("" if none). */
const char *err_msg(void);
void err_clear(void);

/* Abort with a message when memory runs out: allocation failure is not a
 * recoverable condition for a workbench. Returned memory is the caller's. */
void *xmalloc(unsigned long n);
void *xcalloc(unsigned long n, unsigned long size);
void *xrealloc(void *p, unsigned long n);
char *xstrdup(const char *s);

#endif
