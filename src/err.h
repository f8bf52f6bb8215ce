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

/* A command the user stopped (Ctrl-C, Esc) is said one way, defined here
 * so it cannot drift: "WHO: cancelled", WHO the command's name and what
 * tells it apart ("run cpu", "load FILE"), printf-style. Returns
 * TCJ_ECANCEL. */
int err_cancelled(const char *who, ...) __attribute__((format(printf, 1, 2)));
/* The same with one more fact after "; ", one of ERR_NOTE_* (NULL: none):
 * "ladder: cancelled; what it finished is kept in the log". */
int err_cancelled_note(const char *note, const char *who, ...)
    __attribute__((format(printf, 2, 3)));
/* What code that does not know its command says (an engine, a file
 * writer); the front end names it ("NAME: cancelled", cmd_cancel_text). */
#define ERR_CANCELLED "cancelled"
/* The facts a cancellation may add. */
#define ERR_NOTE_KEPT "what it finished is kept in the log"
#define ERR_NOTE_LOCKED "the session log was locked by another process"

/* Abort with a message when memory runs out: allocation failure is not a
 * recoverable condition for a workbench. Returned memory is the caller's. */
void *xmalloc(unsigned long n);
void *xcalloc(unsigned long n, unsigned long size);
void *xrealloc(void *p, unsigned long n);
char *xstrdup(const char *s);

#endif
