/* quit / exit: leave the session. */
#include "cmd.h"

static int quit_run(session *s, int argc, char **argv)
{
    s->quit = 1;
    return 0;
}

const cmd cmd_quit = {
    .name = "quit",
    .usage = "quit",
    .summary = "end the session",
    .help = "End the session (Ctrl-D does the same). exit is another name for it.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = quit_run,
};

const cmd cmd_exit = {
    .name = "exit",
    .usage = "exit",
    .summary = "end the session (same as quit)",
    .help = "End the session; the same as quit.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = quit_run,
};
