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
#include "interrupt.h"
#include "kernels.h"
#include "ofile.h"
#include "out.h"
#include "progress.h"
#include "repl.h"
#include "settings.h"
#include "store.h"

static session *app_session;

/* Ctrl-C: cancel the run in flight (engines check the flag between work
 * batches); a second Ctrl-C while the first is still pending kills the
 * process, the escape hatch for anything that does not check. */
static void app_on_sigint(int sig)
{
    /* Batch mode stops at Ctrl-C, between commands too. */
    if (app_session && app_session->batch)
        app_session->quit = 1;
    if (interrupt_busy && app_session) {
        if (app_session->cancel) {
            signal(SIGINT, SIG_DFL);
            raise(SIGINT);
            return;
        }
        app_session->cancel = 1;
    }
    /* Batch mode: stop after the command in flight and exit 130, as a
     * shell does, so a script calling tcjoin sees the interrupt. */
    if (app_session && app_session->batch)
        app_session->quit = 1;
    interrupt_pending = 1;
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
    /* A FIFO output whose reader went away is that command's error
     * (EPIPE, src/ofile.c), not the silent end of the session. */
    signal(SIGPIPE, SIG_IGN);
}

/* A script line longer than this is refused: commands are short, and a
 * script read from /dev/zero or an endless pipe must not grow until memory
 * runs out (the text loader's cap on a data line is 256 MiB). */
#define APP_LINE_MAX ((size_t)1 << 20)

/* The next line of f into *line (its newline kept): 1, 0 at the end, or -1
 * with one line said (a read error such as a directory given as the
 * script, a line past APP_LINE_MAX, memory). */
static int app_read_line(FILE *f, char **line, size_t *cap, const char *name, long lineno)
{
    const char *who = name ? name : "stdin";
    size_t len = 0;
    int c = 0;
    errno = 0;
    while ((c = getc(f)) != EOF) {
        if (len + 2 > *cap) {
            size_t want = *cap ? *cap * 2 : 256;
            char *p = realloc(*line, want);
            if (!p) {
                out_error("%s:%ld: no memory for the line", who, lineno);
                return -1;
            }
            *line = p;
            *cap = want;
        }
        (*line)[len++] = (char)c;
        if (c == '\n')
            break;
        if (len >= APP_LINE_MAX) {
            out_error("%s:%ld: line longer than %zu MiB; not a script", who, lineno,
                      APP_LINE_MAX >> 20);
            return -1;
        }
    }
    if (c == EOF && ferror(f)) {
        out_error("%s:%ld: cannot read the script: %s", who, lineno, strerror(errno ? errno : EIO));
        return -1;
    }
    if (len == 0)
        return 0;
    (*line)[len] = 0;
    return 1;
}

/* Execute lines from a stream (a script file or a non-terminal stdin);
 * errors name the script and line when name is not NULL. A script that
 * cannot be read to its end fails the session (batch exit 1). */
static void app_stream(session *s, FILE *f, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    long lineno = 0;
    int got = 0;
    while (!s->quit && !interrupt_pending &&
           (got = app_read_line(f, &line, &cap, name, lineno + 1)) > 0) {
        cmd_set_location(name, ++lineno);
        interrupt_busy = 1;
        cmd_exec(s, line);
        interrupt_busy = 0;
        progress_clear();
    }
    if (got < 0)
        s->failed = 1;
    cmd_set_location(NULL, 0);
    free(line);
}

/* A log that cannot be used is said on one line; the commands still run,
 * unlogged, and batch mode then exits 1. */
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
        s->failed = s->batch;
        return;
    }
    /* Only the default place gets its directories made; a named file's
     * directory must exist, so a typo'd --db does not grow a tree. */
    if ((a->db_path || (getenv("TCJOIN_DB") && *getenv("TCJOIN_DB"))) && !store_dir_exists(path)) {
        out_error("session log unavailable: %s: its directory does not exist (--db and "
                  "TCJOIN_DB name a file in an existing directory); going on without logging",
                  path);
        free(path);
        s->failed = s->batch;
        return;
    }
    if (store_open(path, &s->db) != 0) {
        out_error("session log unavailable: %s; going on without logging", err_msg());
        s->db = NULL;
        s->failed = s->batch;
    } else {
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        s->session_id = store_session_begin(s->db, a->argv_line, TCJ_VERSION, host);
        if (s->session_id < 0) {
            out_error("%s", err_msg());
            s->session_id = 0;
            s->failed = s->batch;
        }
    }
    free(path);
}

int app_main(const app_args *a)
{
    static session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    out_set_json(a->json);
    /* TCJOIN_TRACE read now: a word that is no part is said before any
     * command's output, not in the middle of the first run's. */
    (void)kern_trace_on();

    int tty = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    /* -i -e 'cmds' on a terminal: the commands run inside the front end,
     * which then stays (make demo uses it to open the dashboard). */
    int stay = a->interactive && a->exec && !a->script && tty;
    int batch = !stay && (a->exec || a->script || !isatty(STDIN_FILENO));
    s.batch = batch;
    /* Ctrl-C is caught before the log is opened: a wait for another
     * process's lock on it stops at once (store_set_cancel). */
    app_signals(&s);
    store_set_cancel(&interrupt_pending);
    ofile_set_cancel(&s.cancel);
    app_open_store(&s, a);

    if (stay) {
        int rc = TCJ_EUNSUP;
        if (!a->plain)
            rc = ui_dashboard_run_init(&s, a->exec);
        if (rc == TCJ_EUNSUP) {
            if (!a->plain)
                out_error("%s; using the line REPL", err_msg());
            progress_install(&s);
            interrupt_busy = 1;
            cmd_exec(&s, a->exec);
            interrupt_busy = 0;
            progress_clear();
            if (!s.quit)
                repl_run(&s);
        }
    } else if (a->exec) {
        progress_install(&s);
        interrupt_busy = 1;
        cmd_exec(&s, a->exec);
        interrupt_busy = 0;
        progress_clear();
    }
    if (a->script && !s.quit) {
        FILE *f = strcmp(a->script, "-") == 0 ? stdin : fopen(a->script, "r");
        if (!f) {
            out_error("%s: cannot open script: %s", a->script, strerror(errno));
            s.failed = 1;
        } else {
            progress_install(&s);
            app_stream(&s, f, f == stdin ? "stdin" : a->script);
            if (f != stdin)
                fclose(f);
        }
    }
    if (!stay && !a->exec && !a->script) {
        if (batch) {
            progress_install(&s);
            app_stream(&s, stdin, "stdin");
        } else {
            int rc = TCJ_EUNSUP;
            if (!a->plain && isatty(STDOUT_FILENO))
                rc = ui_dashboard_run(&s);
            if (rc == TCJ_EUNSUP) {
                if (!a->plain && isatty(STDOUT_FILENO))
                    out_error("%s; using the line REPL", err_msg());
                progress_install(&s);
                repl_run(&s);
            }
        }
    }

    if (s.db) {
        if (s.session_id > 0 && store_session_end(s.db, s.session_id)) {
            out_error("%s", err_msg());
            s.failed = s.batch;
        }
        store_close(s.db);
    }
    if (s.have_ds)
        dataset_free(&s.ds);
    fflush(stdout);
    /* 128 + SIGINT, as a shell reports a command stopped by Ctrl-C. */
    if (batch && interrupt_pending)
        return 130;
    return batch && s.failed ? 1 : 0;
}
