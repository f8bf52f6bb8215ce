/* Runs panel: the latest runs, newest first. */
#include <stdio.h>
#include <string.h>

#include "panels.h"
#include "plot.h"

void ui_panel_runs(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->nruns == 0) {
        ui_put(w, 0, 0, "no runs yet: run ENGINE");
        return;
    }
    /* The engine column as wide as the longest name shown (cpu-fp8-e4m3 is
     * 12), within what the other columns leave; 9 at the least. */
    int ew = 9;
    for (int k = 0; k < v->nruns; k++) {
        int len = (int)strlen(v->runs[k].engine);
        ew = len > ew ? len : ew;
    }
    if (ew > wd - 41)
        ew = wd - 41 > 9 ? wd - 41 : 9;
    wattron(w, ui_attr(c, UI_C_TITLE));
    ui_putf(w, 0, 0, "%4s %-*s %8s %9s %8s %7s", "id", ew, "engine", "eps", "S", "time s",
            "TFLOPS");
    wattroff(w, ui_attr(c, UI_C_TITLE));
    int first = v->nruns - 1 - c->scroll;
    for (int row = 1, k = first; row < h && k >= 0; row++, k--) {
        const ui_run_row *r = &v->runs[k];
        char eps[16], sel[16], t[16], tf[16];
        ui_fmt_num(eps, sizeof eps, r->eps);
        ui_fmt_num(sel, sizeof sel, r->sel);
        ui_fmt_num(t, sizeof t, r->time_s);
        ui_fmt_num(tf, sizeof tf, r->tflops);
        if (r->failed) {
            wattron(w, ui_attr(c, r->cancelled ? UI_C_WARN : UI_C_ERR));
            ui_putf(w, row, 0, "%4lld %-*.*s %8s %9s", (long long)r->id, ew, ew, r->engine, eps,
                    r->cancelled ? "cancelled" : "failed");
            wattroff(w, ui_attr(c, r->cancelled ? UI_C_WARN : UI_C_ERR));
            continue;
        }
        ui_putf(w, row, 0, "%4lld %-*.*s %8s %9s %8s %7s", (long long)r->id, ew, ew, r->engine, eps,
                sel, t, tf);
    }
}
