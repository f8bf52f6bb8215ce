/* What src/cli/cmd.c needs from the rest of tcjoin, for the fuzz harnesses that
 * link only the loaders and the command parser (no CUDA, no session log).
 * The command table holds `load` and `gen` with their real option names;
 * their handlers parse every option as the real ones do, and load nothing. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "store.h"

double engine_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void out_error_record(const char *message, const char *command, long line)
{
    (void)message;
    (void)command;
    (void)line;
}

void out_error(const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
}

void out_cancel_record(const char *message, const char *command, long line)
{
    (void)message;
    (void)command;
    (void)line;
}

void out_cancelled(const char *fmt, ...)
{
    char buf[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
}

int64_t store_command_begin(store *st, int64_t session_id, const char *line)
{
    return 0;
}

int store_command_end(store *st, int64_t command_id, int status, const char *error, double seconds)
{
    return 0;
}

static int stub_load(session *s, int argc, char **argv)
{
    load_opts o;
    load_opts_init(&o);
    char *pos[2];
    if (cmd_positional(argc, argv, pos, 2) != 1)
        return err_set(TCJ_EINVAL, "Usage: load FILE");
    for (int i = 0; i < argc; i++) {
        if (!cmd_is_opt(argv[i]))
            continue;
        char key[64];
        const char *eq = strchr(argv[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        int rc = load_opts_set(&o, key, cmd_opt(argc, argv, key));
        if (rc)
            return rc;
    }
    size_t v;
    const char *w = cmd_opt(argc, argv, "limit");
    return w ? cmd_parse_size(w, "limit", &v) : 0;
}

static int stub_gen(session *s, int argc, char **argv)
{
    gen_opts o;
    gen_opts_init(&o);
    for (int i = 0; i < argc; i++) {
        if (!cmd_is_opt(argv[i]))
            continue;
        char key[64];
        const char *eq = strchr(argv[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        int rc = gen_opts_set(&o, key, cmd_opt(argc, argv, key));
        if (rc)
            return rc;
    }
    double x;
    const char *w = cmd_opt(argc, argv, "sigma");
    return w ? cmd_parse_double(w, "sigma", &x) : 0;
}

static const cmd stub_cmds[] = {
    {.name = "load",
     .usage = "load FILE",
     .min_args = 1,
     .max_args = 11,
     .options = load_opt_names,
     .run = stub_load},
    {.name = "gen",
     .usage = "gen KIND",
     .min_args = 1,
     .max_args = 7,
     .options = gen_opt_names,
     .run = stub_gen},
};

const cmd *cmd_find(const char *name)
{
    for (size_t i = 0; i < sizeof stub_cmds / sizeof stub_cmds[0]; i++)
        if (!strcmp(stub_cmds[i].name, name))
            return &stub_cmds[i];
    return NULL;
}

/* The fuzzed parser suggests no command (src/cli/cmd_table.c has the real one). */
const cmd *cmd_nearest(const char *name)
{
    (void)name;
    return NULL;
}
