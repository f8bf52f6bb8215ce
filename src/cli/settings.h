/* Settings changed with `set NAME VALUE`: one table drives `set`, its
 * listing, completion and the man page check. Values land in the session
 * (engine_opts, output mode and file). */
#ifndef TCJ_SETTINGS_H
#define TCJ_SETTINGS_H

#include <stddef.h>

#include "session.h"

typedef struct setting {
    const char *name;
    const char *usage; /* value words as shown: "on|off", "N", "NAME on|off" */
    const char *help;  /* one line */
    int nvals;         /* value words after the name */
    /* Completion of value word k (0-based): '|'-separated choices, "@file"
     * for a path, "@switch" for a FASTED switch name, NULL for free form. */
    const char *complete[2];
    void (*get)(const session *s, char *buf, size_t size);
    int (*set)(session *s, char **vals);
    /* A caution about the value as it stands, said under it by set (empty
     * for none); NULL where a setting has none. */
    void (*note)(const session *s, char *buf, size_t size);
    /* Whether a run of engine e is made under this setting (its result or
     * its cost depends on it): e's runs' options (settings_describe, the
     * runs table's options and the key of a run's reuse) then carry it as
     * " NAME=VALUE" where it is not its default. NULL: the fixed fields
     * there, or not a run's. */
    int (*in_options)(const struct engine *e);
} setting;

extern const setting settings_table[]; /* terminated by a row with name NULL */
const setting *setting_find(const char *name);

/* Defaults for a new session's settings. */
void settings_default(session *s);
/* The engine options of a run of e as one line for the runs table
 * ("threads=0 ...", then the rows whose in_options holds for e that are
 * not their default; e NULL: every such row). */
void settings_describe(const session *s, const struct engine *e, char *buf, size_t size);
const char *settings_mode_name(join_mode m);

#endif
