/* explain [NAME]: what a FASTED optimization does and what turning it off
 * costs, from the switch table (src/fasted_opts.c). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "out.h"

static int explain_run(session *s, int argc, char **argv)
{
    (void)s;
    if (argc == 0) {
        out_printf("FASTED optimizations (set opt NAME off turns one off; explain NAME):\n");
        out_rec *r = out_rec_begin("explain");
        out_rec_arr(r, "switches");
        for (const fasted_switch *w = fasted_switches; w->name; w++) {
            int off = (s->eopt.fasted_off & w->bit) != 0;
            out_printf("  %-12s %-3s %s\n", w->name, off ? "off" : "on", w->title);
            out_rec_obj(r, NULL);
            out_rec_str(r, "name", w->name);
            out_rec_str(r, "title", w->title);
            out_rec_bool(r, "on", !off);
            out_rec_close(r);
        }
        out_rec_close(r);
        out_rec_end(r);
        return 0;
    }
    const fasted_switch *w = fasted_switch_find(argv[0]);
    if (!w) {
        char names[256] = "";
        for (const fasted_switch *t = fasted_switches; t->name; t++) {
            strncat(names, " ", sizeof names - strlen(names) - 1);
            strncat(names, t->name, sizeof names - strlen(names) - 1);
        }
        return err_set(TCJ_EINVAL, "no optimization '%s'; there are:%s", argv[0], names);
    }
    out_printf("%s: %s\n%s\n", w->name, w->title, w->explain);
    out_rec *r = out_rec_begin("explain");
    out_rec_str(r, "name", w->name);
    out_rec_str(r, "title", w->title);
    out_rec_str(r, "explain", w->explain);
    out_rec_bool(r, "on", !(s->eopt.fasted_off & w->bit));
    out_rec_end(r);
    return 0;
}

const cmd cmd_explain = {
    .name = "explain",
    .usage = "explain [NAME]",
    .summary = "what a FASTED optimization does and what turning it off costs",
    .help = "Without a name, list FASTED's optimizations (the paper's Table 5) with their\n"
            "state; with one, say what it does and what turning it off costs.\n"
            "set opt NAME off turns one off (one at a time: each is a compiled variant);\n"
            "ablate runs the leave-one-out table.",
    .min_args = 0,
    .max_args = 1,
    .options = NULL,
    .run = explain_run,
};
