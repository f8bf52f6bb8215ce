/* The ncurses dashboard front end: panels above a readline prompt driven
 * through readline's callback interface. */
#ifndef TCJ_DASHBOARD_H
#define TCJ_DASHBOARD_H

#include "session.h"

/* Run the dashboard until the user quits. Returns 0, or TCJ_EUNSUP with
 * err_msg when the terminal cannot host it (the caller falls back to the
 * line REPL). */
int ui_dashboard_run(session *s);
/* The same, first executing init (commands separated by ';' or newlines)
 * inside the dashboard as if typed, so its results fill the panels; NULL
 * for none. For `make demo` (tcjoin -i -e '...' on a terminal). */
int ui_dashboard_run_init(session *s, const char *init);

#endif
