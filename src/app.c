/* Wiring: session log, session state, signals, the choice of front end. */
#include "app.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "dashboard.h"
#include "err.h"
#include "out.h"
#include "repl.h"
#include "settings.h"
#include "store.h"

volatile int app_sigint;
volatile int app_busy;
static session *app_session;

/* Ctrl-C: cancel the run in flight (engines check the flag between work
 * batches); a second Ctrl-C while the first is still pending kills the
 * process, the escape hatch for anything that does not check. */
static void app_on_sigint(int sig)
{
    if (app_busy && app_session) {
        if (app_session->cancel) {
            signal(SIGINT, SIG_DFL);
            raise(SIGINT);
            return;
        }
        app_session->cancel = 1;
    }
    /* batch mode stops at Ctrl-C, between commands too, and exits 130 */
    if (app_session && app_session->batch)
        app_session->quit = 1;
    app_sigint = 1;
}

static void app_signals(session *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = app_on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: the REPL's select() must wake up */
    app_session = s;
    sigaction(SIGINT, &sa, NULL);
}

/* Execute lines from a stream (a script file or a non-terminal stdin);
 * errors name the script and line when name is not NULL. */
static void app_stream(session *s, FILE *f, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    while (!s->quit && getline(&line, &cap, f) >= 0) {
        cmd_set_location(name, ++lineno);
        app_busy = 1;
        cmd_exec(s, line);
        app_busy = 0;
    }
    cmd_set_location(NULL, 0);
    free(line);
}

static void app_open_store(session *s, const app_args *a)
{
    char *path = NULL;
    if (a->db_path)
        path = xstrdup(a->db_path);
    else if (getenv("TCJOIN_DB") && *getenv("TCJOIN_DB"))
        path = xstrdup(getenv("TCJOIN_DB"));
    else
        path = store_default_path();
    if (!path) {
        out_error("no place for the session log (set TCJOIN_DB); going on without logging");
        return;
    }
    if (store_open(path, &s->db) != 0) {
        out_error("session log unavailable: %s; going on without logging", err_msg());
        s->db = NULL;
    } else {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        s->session_id = store_session_begin(s->db, a->argv_line, TCJ_VERSION, host);
        if (s->session_id < 0)
            s->session_id = 0;
    }
    free(path);
}

int app_main(const app_args *a)
{
    static session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    out_set_json(a->json);

    int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    /* -i -e 'cmds' on a terminal: the commands run inside the front end,
     * which then stays (make demo uses it to open the dashboard). */
    int stay = a->interactive && a->exec && !a->script && tty;
    int batch = !stay && (a->exec || a->script || !isatty(STDIN_FILENO));
    s.batch = batch;
    app_open_store(&s, a);
    app_signals(&s);

    if (stay) {
        int rc = TCJ_EUNSUP;
        if (!a->plain)
            rc = ui_dashboard_run_init(&s, a->exec);
        if (rc == TCJ_EUNSUP) {
            if (!a->plain)
                out_error("%s; using the line REPL", err_msg());
            app_busy = 1;
            cmd_exec(&s, a->exec);
            app_busy = 0;
            if (!s.quit)
                repl_run(&s);
        }
    } else if (a->exec) {
        app_busy = 1;
        cmd_exec(&s, a->exec);
        app_busy = 0;
    }
    if (a->script && !s.quit) {
        FILE *f = strcmp(a->script, "-") == 0 ? stdin : fopen(a->script, "r");
        if (!f) {
            out_error("%s: cannot open script: %s", a->script, strerror(errno));
            s.failed = 1;
        } else {
            app_stream(&s, f, a->script);
            if (f != stdin)
                fclose(f);
        }
    }
    if (!stay && !a->exec && !a->script) {
        if (batch) {
            app_stream(&s, stdin, NULL);
        } else {
            int rc = TCJ_EUNSUP;
            if (!a->plain && isatty(STDOUT_FILENO))
                rc = ui_dashboard_run(&s);
            if (rc == TCJ_EUNSUP) {
                if (!a->plain && isatty(STDOUT_FILENO))
                    out_error("%s; using the line REPL", err_msg());
                repl_run(&s);
            }
        }
    }

    if (s.db) {
        store_session_end(s.db, s.session_id);
        store_close(s.db);
    }
    if (s.have_ds)
        dataset_free(&s.ds);
    fflush(stdout);
    if (batch && app_sigint)
        return 130; /* 128 + SIGINT, as a shell reports a job stopped by Ctrl-C */
    return batch && s.failed ? 1 : 0;
}
