/* help [NAME]: the command table is the help text. */
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "out.h"
#include "settings.h"

int cmd_engines_list(session *s); /* cmd_engines.c */

/* The settings table as help shows it (help settings, help set). */
static void help_settings(void)
{
    for (const setting *t = settings_table; t->name; t++)
        out_printf("  set %-11s %-22s %s\n", t->name, t->usage, t->help);
}

static int help_run(session *s, int argc, char **argv)
{
    if (argc == 0) {
        out_printf("Commands (help NAME for details, help engines, help settings):\n");
        /* The summaries line up after the longest name. */
        int width = 0;
        for (const cmd *const *c = cmd_table; *c; c++)
            if ((int)strlen((*c)->name) > width)
                width = (int)strlen((*c)->name);
        for (const char *const *g = cmd_group_names; *g; g++) {
            out_printf("%s:\n", *g);
            for (const cmd *const *c = cmd_table; *c; c++)
                if (strcmp(cmd_group(*c), *g) == 0)
                    out_printf("  %-*s %s\n", width, (*c)->name, (*c)->summary);
        }
        out_rec *r = out_rec_begin("help");
        out_rec_arr(r, "commands");
        for (const cmd *const *c = cmd_table; *c; c++)
            out_rec_str(r, NULL, (*c)->name);
        out_rec_close(r);
        /* The same grouping as the text, so a reader need not know it. */
        out_rec_arr(r, "groups");
        for (const char *const *g = cmd_group_names; *g; g++) {
            out_rec_obj(r, NULL);
            out_rec_str(r, "group", *g);
            out_rec_arr(r, "commands");
            for (const cmd *const *c = cmd_table; *c; c++)
                if (strcmp(cmd_group(*c), *g) == 0)
                    out_rec_str(r, NULL, (*c)->name);
            out_rec_close(r);
            out_rec_close(r);
        }
        out_rec_close(r);
        out_rec_end(r);
        return 0;
    }
    if (strcmp(argv[0], "settings") == 0) {
        help_settings();
        return 0;
    }
    const cmd *c = cmd_find(argv[0]);
    if (!c)
        return err_set(TCJ_EINVAL, "no command '%s' (help lists them)", argv[0]);
    out_printf("Usage: %s\n%s\n", c->usage, c->help);
    out_rec *r = out_rec_begin("help");
    out_rec_str(r, "name", c->name);
    out_rec_str(r, "group", cmd_group(c));
    out_rec_str(r, "usage", c->usage);
    out_rec_str(r, "summary", c->summary);
    out_rec_str(r, "help", c->help);
    out_rec_end(r);
    /* help engines: the command's text, then the list itself; help set
     * the same with the settings. */
    if (strcmp(c->name, "engines") == 0)
        return cmd_engines_list(s);
    if (strcmp(c->name, "set") == 0)
        help_settings();
    return 0;
}

const cmd cmd_help = {
    .name = "help",
    .usage = "help [NAME|engines|settings]",
    .summary = "list the commands, or explain one",
    .help = "Without arguments, list every command. help NAME prints its usage and full\n"
            "text; help engines lists the engines and whether each can run here; help\n"
            "settings lists what set changes.",
    .min_args = 0,
    .max_args = 1,
    .options = NULL,
    .run = help_run,
};
