/* The command table: one row per command, one file per command. A new
 * command is one new file and one row here: its name and its group in
 * `help` (keep one row per line; the order of rows is the order of help
 * within a group). */
#include <string.h>

#include "cmd.h"

/* clang-format off */
#define CMD_ROWS(X)            \
    X(load,    "data")         \
    X(gen,     "data")         \
    X(info,    "data")         \
    X(eps,     "eps")          \
    X(sweep,   "eps")          \
    X(curve,   "eps")          \
    X(kdist,   "eps")          \
    X(set,     "join")         \
    X(run,     "join")         \
    X(explain, "join")         \
    X(ablate,  "join")         \
    X(ladder,  "join")         \
    X(compare, "accuracy")     \
    X(precisions, "accuracy")  \
    X(dbscan,  "cluster")      \
    X(hdbscan, "cluster")      \
    X(history, "log")          \
    X(runs,    "log")          \
    X(show,    "log")          \
    X(export,  "log")          \
    X(engines, "GPU")          \
    X(profile, "GPU")          \
    X(help,    "session")      \
    X(quit,    "session")      \
    X(exit,    "session")
/* clang-format on */

#define CMD_EXTERN(n, g) extern const cmd cmd_##n;
CMD_ROWS(CMD_EXTERN)

#define CMD_PTR(n, g) &cmd_##n,
const cmd *const cmd_table[] = {CMD_ROWS(CMD_PTR) NULL};

#define CMD_GROUP(n, g) g,
static const char *const cmd_groups[] = {CMD_ROWS(CMD_GROUP) NULL};

/* In the order help shows them; "eps" is printed as ε's name. */
const char *const cmd_group_names[] = {"data", "eps", "join",    "accuracy", "cluster",
                                       "log",  "GPU", "session", NULL};

const cmd *cmd_find(const char *name)
{
    for (const cmd *const *c = cmd_table; *c; c++)
        if (strcmp((*c)->name, name) == 0)
            return *c;
    return NULL;
}

const cmd *cmd_nearest(const char *name)
{
    const cmd *near = NULL;
    int best = 3; /* two edits at most: a typo, not another command */
    for (const cmd *const *t = cmd_table; *t; t++) {
        int dist = cmd_edit_distance(name, (*t)->name);
        if (dist < best) {
            best = dist;
            near = *t;
        }
    }
    return near;
}

int cmd_stored_type(const char *type)
{
    for (const cmd *const *c = cmd_table; *c; c++)
        for (const char *const *t = (*c)->stored; t && *t; t++)
            if (strcmp(*t, type) == 0)
                return 1;
    return 0;
}

const char *cmd_group(const cmd *c)
{
    for (size_t k = 0; cmd_table[k]; k++)
        if (cmd_table[k] == c)
            return cmd_groups[k];
    return "session";
}
