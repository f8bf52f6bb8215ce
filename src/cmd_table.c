/* The command table: one row per command, one file per command. A new
 * command is one new file, one extern line and one row here (keep both one
 * per line; the order of rows is the order of help). */
#include <string.h>

#include "cmd.h"

extern const cmd cmd_load;
extern const cmd cmd_gen;
extern const cmd cmd_info;
extern const cmd cmd_eps;
extern const cmd cmd_set;
extern const cmd cmd_run;
extern const cmd cmd_compare;
extern const cmd cmd_explain;
extern const cmd cmd_ablate;
extern const cmd cmd_history;
extern const cmd cmd_runs;
extern const cmd cmd_show;
extern const cmd cmd_export;
extern const cmd cmd_engines;
extern const cmd cmd_profile;
extern const cmd cmd_help;
extern const cmd cmd_quit;
extern const cmd cmd_exit;
extern const cmd cmd_sweep;
extern const cmd cmd_curve;
extern const cmd cmd_kdist;

/* clang-format off */
const cmd *const cmd_table[] = {
    &cmd_load,
    &cmd_gen,
    &cmd_info,
    &cmd_eps,
    &cmd_set,
    &cmd_run,
    &cmd_compare,
    &cmd_explain,
    &cmd_ablate,
    &cmd_history,
    &cmd_runs,
    &cmd_show,
    &cmd_export,
    &cmd_engines,
    &cmd_profile,
    &cmd_help,
    &cmd_quit,
    &cmd_exit,
    &cmd_sweep,
    &cmd_curve,
    &cmd_kdist,
    NULL,
};
/* clang-format on */

const cmd *cmd_find(const char *name)
{
    for (const cmd *const *c = cmd_table; *c; c++)
        if (strcmp((*c)->name, name) == 0)
            return *c;
    return NULL;
}
