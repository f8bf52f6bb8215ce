/* The line REPL: GNU readline through its callback interface, history,
 * completion, Ctrl-C clearing the line at the prompt. */
#ifndef TCJ_REPL_H
#define TCJ_REPL_H

#include "session.h"

/* Read and execute commands until quit or end of input. */
int repl_run(session *s);

/* The history file: $TCJOIN_HISTORY, else $XDG_STATE_HOME/tcjoin/history,
 * else ~/.local/state/tcjoin/history; parent directories are created.
 * Caller frees; NULL when there is no home. */
char *repl_history_path(void);

/* Install tcjoin's completion into readline (also used by the dashboard). */
void repl_completion_install(void);

#endif
