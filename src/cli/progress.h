/* Progress of long work on stderr for the line REPL and batch mode: one
 * line, rewritten in place, with the fraction done, the rate and the time
 * left; erased before any output and when the command ends. Only when
 * stderr is a terminal (a log file or a pipe gets nothing). */
#ifndef TCJ_PROGRESS_H
#define TCJ_PROGRESS_H

#include <stddef.h>

#include "session.h"

/* Install the hooks on s when stderr is a terminal; 1 if installed. */
int progress_install(session *s);
/* Erase the line if one is shown (call after each command). */
void progress_clear(void);

/* The line itself, at most width columns (pure, for tests): "run cpu  42%
 * [#####     ] 10.5 %/s, 6 s left". elapsed is seconds since this work
 * began; frac in [0, 1]. */
void progress_format(char *buf, size_t size, int width, const char *what, double frac,
                     double elapsed);

#endif
