/* The line REPL. readline's callback interface with select(), so a SIGINT
 * at the prompt wakes the loop and the line is cleared outside the signal
 * handler. */
#include "repl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "interrupt.h"
#include "cmd.h"
#include "complete.h"
#include "err.h"
#include "out.h"
#include "progress.h"
#include "version.h"

#define REPL_HISTORY_MAX 5000

static session *repl_s;
static char *repl_hist;

/* mkdir -p of the directory part of path. */
static void make_parents(const char *path)
{
    char *p = xstrdup(path);
    for (char *q = p + 1; *q; q++)
        if (*q == '/') {
            *q = '\0';
            mkdir(p, 0700);
            *q = '/';
        }
    free(p);
}

char *repl_history_path(void)
{
    const char *env = getenv("TCJOIN_HISTORY");
    char *path;
    if (env && *env) {
        path = xstrdup(env);
    } else {
        const char *state = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        size_t n = 64 + (state ? strlen(state) : 0) + (home ? strlen(home) : 0);
        path = xmalloc(n);
        if (state && *state)
            snprintf(path, n, "%s/tcjoin/history", state);
        else if (home && *home)
            snprintf(path, n, "%s/.local/state/tcjoin/history", home);
        else {
            free(path);
            return NULL;
        }
    }
    make_parents(path);
    return path;
}

/* ---- completion ---- */

static char **comp_cands;
static int comp_k;

static char *comp_next(const char *text, int state)
{
    if (!comp_cands || !comp_cands[comp_k])
        return NULL;
    return strdup(comp_cands[comp_k++]);
}

static char **repl_complete(const char *text, int start, int end)
{
    size_t ws;
    complete_free(comp_cands);
    comp_cands = NULL;
    comp_k = 0;
    rl_attempted_completion_over = 1; /* no readline file-name fallback */
    int n = complete_line(rl_line_buffer, (size_t)end, &comp_cands, &ws);
    if (n == 0)
        return NULL;
    /* No space after a directory or an option key: more follows. */
    rl_completion_append_character = ' ';
    if (n == 1) {
        size_t l = strlen(comp_cands[0]);
        if (l && (comp_cands[0][l - 1] == '/' || comp_cands[0][l - 1] == '='))
            rl_completion_append_character = '\0';
    }
    return rl_completion_matches(text, comp_next);
}

void repl_completion_install(void)
{
    rl_readline_name = "tcjoin";
    rl_basic_word_break_characters = " \t;";
    rl_completer_word_break_characters = " \t;";
    rl_attempted_completion_function = repl_complete;
}

/* ---- the loop ---- */

static void repl_on_line(char *line)
{
    if (!line) {
        repl_s->quit = 1;
        rl_callback_handler_remove();
        printf("\n");
        return;
    }
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p) {
        add_history(line);
        if (repl_hist)
            append_history(1, repl_hist);
        interrupt_busy = 1;
        cmd_exec(repl_s, line);
        interrupt_busy = 0;
        progress_clear();
        interrupt_pending = 0;
        fflush(stdout);
    }
    free(line);
    if (repl_s->quit)
        rl_callback_handler_remove();
}

int repl_run(session *s)
{
    repl_s = s;
    repl_hist = repl_history_path();
    using_history();
    stifle_history(REPL_HISTORY_MAX);
    if (repl_hist) {
        /* append_history needs the file to exist. */
        FILE *f = fopen(repl_hist, "a");
        if (f)
            fclose(f);
        read_history(repl_hist);
    }
    repl_completion_install();
    rl_catch_signals = 0; /* SIGINT is app.c's */

    printf("tcjoin %s: type help for the commands, Ctrl-D or quit to leave\n", TCJ_VERSION);
    const char *prompt = "tcjoin> ";
    rl_callback_handler_install(prompt, repl_on_line);
    while (!s->quit) {
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(STDIN_FILENO, &fds);
        int r = select(STDIN_FILENO + 1, &fds, NULL, NULL, NULL);
        if (r < 0 && errno != EINTR)
            break;
        if (interrupt_pending) {
            /* Ctrl-C at the prompt: drop the line, start a fresh one. */
            interrupt_pending = 0;
            rl_callback_sigcleanup();
            rl_replace_line("", 0);
            rl_crlf();
            rl_on_new_line();
            rl_redisplay();
            continue;
        }
        if (r > 0)
            rl_callback_read_char();
    }
    if (!s->quit)
        rl_callback_handler_remove();
    if (repl_hist) {
        history_truncate_file(repl_hist, REPL_HISTORY_MAX);
        free(repl_hist);
        repl_hist = NULL;
    }
    complete_free(comp_cands);
    comp_cands = NULL;
    return 0;
}
