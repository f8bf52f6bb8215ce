/* engines: the engine table, with whether each can run here. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "kernels.h"
#include "out.h"

/* Why engines cannot run here, each reason once with the engines it
 * stops: without a GPU every GPU engine gives the same one. */
#define ENGINES_REASONS 8
typedef struct engines_why {
    int n;
    struct {
        char text[512];  /* the reason less the engine's own name */
        char names[512]; /* the engines it stops */
        int count;
    } r[ENGINES_REASONS];
} engines_why;

/* Note that e is not available for msg ("NAME needs ..." read as "needs
 * ..."); 0, or -1 when the table of reasons is full (print it there). */
static int engines_why_add(engines_why *w, const engine *e, const char *msg)
{
    const size_t nl = strlen(e->name);
    if (!strncmp(msg, e->name, nl) && msg[nl] == ' ')
        msg += nl + 1;
    int k = 0;
    while (k < w->n && strcmp(w->r[k].text, msg))
        k++;
    if (k == w->n) {
        if (w->n == ENGINES_REASONS)
            return -1;
        snprintf(w->r[k].text, sizeof w->r[k].text, "%s", msg);
        w->r[k].names[0] = '\0';
        w->r[k].count = 0;
        w->n++;
    }
    const size_t at = strlen(w->r[k].names);
    snprintf(w->r[k].names + at, sizeof w->r[k].names - at, "%s%s", at ? " " : "", e->name);
    w->r[k].count++;
    return 0;
}

static void engines_why_print(const engines_why *w)
{
    for (int k = 0; k < w->n; k++)
        out_printf("not available (%d engine%s: %s): %s\n", w->r[k].count,
                   w->r[k].count == 1 ? "" : "s", w->r[k].names, w->r[k].text);
}

int cmd_engines_list(session *s)
{
    engines_why why = {0};
    int ndev = kern_device_count();
    out_printf("CUDA devices: %d%s\n", ndev,
               kern_built_with_cuda() ? "" : " (this build has no CUDA)");
    out_rec *r = out_rec_begin("engines");
    out_rec_int(r, "cuda_devices", ndev);
    out_rec_bool(r, "built_with_cuda", kern_built_with_cuda());
    out_rec_arr(r, "engines");
    /* Columns as wide as the table's longest name and precision
     * (cpu-fp8-e4m3 is 12), so every row lines up. */
    int wn = 0, wp = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        if ((int)strlen((*t)->name) > wn)
            wn = (int)strlen((*t)->name);
        if ((int)strlen((*t)->precision) > wp)
            wp = (int)strlen((*t)->precision);
    }
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        err_clear();
        int rc = engine_available(e, &s->eopt);
        out_printf("  %-*s %-*s d2 %-4s %-6s %-14s %s\n", wn, e->name, wp, e->precision,
                   engine_dist_name(e->dist), e->exact ? "exact" : "",
                   rc ? "not available" : "available", e->summary);
        if (rc && engines_why_add(&why, e, err_msg()))
            out_printf("  %-*s %-*s    %-4s %-6s %-14s (%s)\n", wn, "", wp, "", "", "", "",
                       err_msg());
        out_rec_obj(r, NULL);
        out_rec_str(r, "engine", e->name);
        out_rec_str(r, "precision", e->precision);
        out_rec_str(r, "dist", engine_dist_name(e->dist));
        out_rec_bool(r, "exact", e->exact);
        out_rec_int(r, "rank_default", e->rank[ENGINE_ROLE_DEFAULT]);
        out_rec_int(r, "rank_truth", e->rank[ENGINE_ROLE_TRUTH]);
        out_rec_bool(r, "gpu", e->gpu);
        out_rec_bool(r, "available", rc == 0);
        out_rec_str(r, "why", rc ? err_msg() : NULL);
        out_rec_close(r);
    }
    out_rec_close(r);
    engines_why_print(&why);
    /* The roles as the runner fills them now, with these settings. */
    const engine *def = engine_best(ENGINE_ROLE_DEFAULT, &s->eopt);
    const engine *truth = engine_best(ENGINE_ROLE_TRUTH, &s->eopt);
    out_printf("default engine: %s; ground truth: %s\n", def ? def->name : "none",
               truth ? truth->name : "none");
    out_rec_str(r, "default", def ? def->name : NULL);
    out_rec_str(r, "truth", truth ? truth->name : NULL);
    out_rec_end(r);
    err_clear();
    return 0;
}

static int engines_run(session *s, int argc, char **argv)
{
    return cmd_engines_list(s);
}

const cmd cmd_engines = {
    .name = "engines",
    .usage = "engines",
    .summary = "list the engines and whether each can run here",
    .help = "List every engine (name, precision, the type its squared distances are\n"
            "formed and compared in, whether its pair set is exact, one line about it) and\n"
            "whether it can run here with the current settings (set device), with the\n"
            "number of CUDA devices; under the table, each reason an engine cannot run,\n"
            "once, with the engines it stops; last, which engine runs when none is named\n"
            "and which is the ground truth. Same as help engines.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = engines_run,
};
