/* tcjoin: parse the command line and hand over to app_main. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "err.h"
#include "mem.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: tcjoin [--db FILE] [--json] [--plain] [-i] [-e 'CMD; CMD'] [FILE.tcj]\n"
               "       tcjoin --version | --help\n"
               "A workbench for Euclidean distance similarity self-joins on tensor cores.\n"
               "  -e 'CMD; CMD'  run these commands and exit (batch mode)\n"
               "  FILE.tcj       run the commands in FILE and exit (batch mode)\n"
               "  --db FILE      session log database (default $TCJOIN_DB, else\n"
               "                 $XDG_DATA_HOME/tcjoin/sessions.db)\n"
               "  --json         print one JSON object per result instead of text\n"
               "  --plain        the line REPL instead of the dashboard\n"
               "  -i             with -e: run the commands, then stay interactive\n"
               "Without -e or FILE: the dashboard on a terminal, the line REPL with --plain,\n"
               "commands read from stdin when it is not a terminal. Type help inside.\n"
               "See tcjoin(1).\n");
}

int main(int argc, char **argv)
{
    mem_keep_freed();
    app_args a;
    memset(&a, 0, sizeof a);
    char *exec = NULL;

    /* The whole command line, for the sessions row. */
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *line = xmalloc(len);
    line[0] = '\0';
    for (int i = 0; i < argc; i++) {
        strcat(line, argv[i]);
        if (i + 1 < argc)
            strcat(line, " ");
    }
    a.argv_line = line;

    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (strcmp(w, "-e") == 0 || strcmp(w, "--exec") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tcjoin: %s needs commands, e.g. -e 'gen uniform; eps 0.1'\n", w);
                return 2;
            }
            const char *c = argv[++i];
            size_t n = (exec ? strlen(exec) + 1 : 0) + strlen(c) + 1;
            char *joined = xmalloc(n);
            snprintf(joined, n, "%s%s%s", exec ? exec : "", exec ? ";" : "", c);
            free(exec);
            exec = joined;
        } else if (strcmp(w, "--db") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "tcjoin: --db needs a file name\n");
                return 2;
            }
            a.db_path = argv[++i];
        } else if (strncmp(w, "--db=", 5) == 0) {
            a.db_path = w + 5;
        } else if (strcmp(w, "--json") == 0) {
            a.json = 1;
        } else if (strcmp(w, "--plain") == 0) {
            a.plain = 1;
        } else if (strcmp(w, "-i") == 0 || strcmp(w, "--interactive") == 0) {
            a.interactive = 1;
        } else if (strcmp(w, "--version") == 0 || strcmp(w, "-V") == 0) {
            printf("tcjoin %s\n", TCJ_VERSION);
            return 0;
        } else if (strcmp(w, "--help") == 0 || strcmp(w, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (w[0] == '-' && w[1]) {
            fprintf(stderr, "tcjoin: unknown option '%s' (tcjoin --help)\n", w);
            return 2;
        } else if (!a.script) {
            a.script = w;
        } else {
            fprintf(stderr, "tcjoin: one script at a time ('%s' and '%s')\n", a.script, w);
            return 2;
        }
    }
    a.exec = exec;
    int status = app_main(&a);
    free(exec);
    free(line);
    return status;
}
