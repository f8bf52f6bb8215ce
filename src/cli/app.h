/* The application: the only place that wires modules together (session
 * log, front ends, signals). main.c parses the command line into app_args. */
#ifndef TCJ_APP_H
#define TCJ_APP_H

#include "session.h"
#include "version.h"

typedef struct app_args {
    const char *exec;      /* -e 'cmd; cmd' (several -e joined with ';'), or NULL */
    const char *script;    /* FILE.tcj, or NULL */
    const char *db_path;   /* --db FILE, or NULL: $TCJOIN_DB, then the default */
    int json;              /* --json */
    int plain;             /* --plain: the line REPL instead of the dashboard */
    int interactive;       /* -i: after -e, stay in the dashboard or REPL */
    const char *argv_line; /* the whole command line, for the sessions row */
} app_args;

/* Run tcjoin; returns the exit status (batch: 1 if any command failed). */
int app_main(const app_args *a);

/* The Ctrl-C flags the handler sets: src/cli/interrupt.h. */

#endif
