/* set: list the settings, or change one. */
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "out.h"
#include "settings.h"

/* "NAME VALUE", the setting's caution under it, and the record. */
static void set_say(const session *s, const setting *t)
{
    char val[512], note[256] = "";
    t->get(s, val, sizeof val);
    if (t->note)
        t->note(s, note, sizeof note);
    out_printf("%s %s\n", t->name, val);
    if (note[0])
        out_printf("  note: %s\n", note);
    out_rec *r = out_rec_begin("set");
    out_rec_str(r, "name", t->name);
    out_rec_text_value(r, "value", val);
    if (note[0])
        out_rec_str(r, "note", note);
    out_rec_end(r);
}

static int set_run(session *s, int argc, char **argv)
{
    char val[512];
    if (argc == 0) {
        out_rec *r = out_rec_begin("settings");
        for (const setting *t = settings_table; t->name; t++) {
            t->get(s, val, sizeof val);
            out_printf("  %-11s %-28s %s\n", t->name, val, t->help);
            out_rec_text_value(r, t->name, val);
        }
        out_rec_end(r);
        return 0;
    }
    const setting *t = setting_find(argv[0]);
    if (!t)
        return err_set(TCJ_EINVAL, "unknown setting '%s' (set lists them)", argv[0]);
    if (argc == 1) {
        set_say(s, t);
        return 0;
    }
    if (argc - 1 != t->nvals)
        return err_set(TCJ_EINVAL, "Usage: set %s %s", t->name, t->usage);
    int rc = t->set(s, argv + 1);
    if (rc)
        return rc;
    set_say(s, t);
    return 0;
}

const cmd cmd_set = {
    .name = "set",
    .usage = "set [NAME [VALUE...]]",
    .summary = "list the settings or change one",
    .help = "Without arguments, list every setting with its value. With a name, show it;\n"
            "with a name and values, change it. The settings (help settings lists them\n"
            "alone):",
    .min_args = 0,
    .max_args = 3,
    .options = NULL,
    .run = set_run,
};
