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

/* Whether a progress report starts the command's clock again (pure, for
 * tests): when none is running (on 0) or the fraction went back (a new
 * command's work). A command of several steps (precisions' formats, the
 * passes of dbscan) reports its whole fraction under each step's name:
 * a new name keeps the clock, so the time left covers the whole command. */
int progress_restarts(int on, double prev_frac, double frac);

#endif
