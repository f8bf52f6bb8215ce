/* explain [NAME [sass]]: what a FASTED optimization does and what turning
 * it off costs: the prose (src/fasted_opts.c), the measured slowdown (the
 * session log's latest ablate, else docs/BENCHMARKS.md embedded at build
 * time), the paper's figure, the kernel lines tagged with the switch and,
 * with sass, the instruction counts of its variant against all-on. Needs
 * no GPU: everything comes from build-time tables (src/teach_gen.h). */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "paper_tables.h"
#include "teach.h"

static int explain_list(session *s)
{
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

static void explain_numbers(session *s, const fasted_switch *w, out_rec *r)
{
    double slow;
    char label[512];
    int from = teach_slowdown(s, &teach_bench_doc, w->name, &slow, label, sizeof label);
    out_printf("slowdown with it off:\n");
    if (from)
        out_printf("  measured  %.2fx  (%s)\n", slow, label);
    else
        out_printf(
            "  measured  —      (no ablate in the session log, none in docs/BENCHMARKS.md)\n");
    const paper_t5_row *p = paper_t5_find(w->name);
    if (p && p->tflops > 0)
        out_printf(
            "  paper     %.2fx  (A100: %.1f of %.0f TFLOPS, %s off; Synth |D|=1e5, d=4096)\n",
            paper_t5_slowdown(p), p->tflops, PAPER_T5_ALL_ON, p->paper_label);
    else if (p)
        out_printf("  paper     —      (%s)\n", p->paper_label);
    else
        out_printf("  paper     —      (not in the paper: tcjoin's own)\n");
    /* The paper turns memcpy_async off only with the pipeline. */
    const paper_t5_row *both = paper_t5_find("async-copy+pipeline");
    const int is_pipe = strcmp(w->name, "pipeline") == 0;
    if ((is_pipe || strcmp(w->name, "async-copy") == 0) && both)
        out_printf("  paper     %.2fx  (with %s: %.1f TFLOPS; ablate's async-copy+pipeline row)\n",
                   paper_t5_slowdown(both), is_pipe ? "memcpy_async" : "the pipeline",
                   both->tflops);
    out_rec_str(r, "measured_from",
                from == TEACH_SESSION ? "session"
                : from == TEACH_DOC   ? "doc"
                                      : NULL);
    if (from) {
        out_rec_dbl(r, "measured_slowdown", slow);
        out_rec_str(r, "measured_label", label);
    }
    if (p && p->tflops > 0) {
        out_rec_dbl(r, "paper_tflops", p->tflops);
        out_rec_dbl(r, "paper_slowdown", paper_t5_slowdown(p));
    }
}

static int explain_run(session *s, int argc, char **argv)
{
    if (argc == 0)
        return explain_list(s);
    const fasted_switch *w = fasted_switch_find(argv[0]);
    if (!w) {
        char names[256] = "";
        for (const fasted_switch *t = fasted_switches; t->name; t++) {
            strncat(names, " ", sizeof names - strlen(names) - 1);
            strncat(names, t->name, sizeof names - strlen(names) - 1);
        }
        return err_set(TCJ_EINVAL, "no optimization '%s'; there are:%s", argv[0], names);
    }
    if (argc == 2 && strcmp(argv[1], "sass") != 0)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("explain")->usage);
    if (argc == 2) {
        /* The Hopper kernel is its own variant; every other switch is the
         * mma.sync kernel's no-NAME. */
        char variant[64];
        const int wg = strcmp(w->name, "wgmma") == 0;
        snprintf(variant, sizeof variant, "%s%s", wg ? "" : "no-", w->name);
        out_printf("%s: %s\n", w->name, w->title);
        out_rec *r = out_rec_begin("explain_sass");
        out_rec_str(r, "name", w->name);
        out_rec_str(r, "variant", variant);
        out_rec_str(r, "status", teach_sass_counts.status[0] ? teach_sass_counts.status : NULL);
        int rc = teach_print_sass(&teach_sass_counts, variant, r);
        out_rec_end(r);
        return rc;
    }
    out_printf("%s: %s\n%s\n", w->name, w->title, w->explain);
    out_rec *r = out_rec_begin("explain");
    out_rec_str(r, "name", w->name);
    out_rec_str(r, "title", w->title);
    out_rec_str(r, "explain", w->explain);
    out_rec_bool(r, "on", !(s->eopt.fasted_off & w->bit));
    explain_numbers(s, w, r);
    int shown = teach_print_excerpts(&teach_tags, w->name, r);
    out_rec_int(r, "excerpts", shown);
    out_rec_end(r);
    return 0;
}

const cmd cmd_explain = {
    .name = "explain",
    .usage = "explain [NAME [sass]]",
    .summary = "what a FASTED optimization does and what turning it off costs",
    .help = "Without a name, list FASTED's optimizations (the paper's Table 5) with their\n"
            "state; with one, say what it does, what turning it off costs (measured: the\n"
            "latest ablate in the session log, else the table of docs/BENCHMARKS.md built\n"
            "in, with its GPU, date and commit; and the paper's A100 figure), and show the\n"
            "kernel lines the switch changes (tagged /* [NAME] */ in kernels/, embedded at\n"
            "build time). Needs no GPU.\n"
            "  sass   instruction counts (HMMA, HGMMA, LDSM, LDGSTS, LDS, STS, UTMALDG) of the\n"
            "         variant's count kernel against all-on, from cuobjdump at build time\n"
            "set opt NAME off turns one off (one at a time: each is a compiled variant);\n"
            "ablate runs the leave-one-out table.",
    .min_args = 0,
    .max_args = 2,
    .options = NULL,
    .run = explain_run,
};
