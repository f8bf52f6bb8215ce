/* Counters panel: hardware counters of the latest profiled run as Speed Of
 * Light style bars (percentages) with their numbers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cupti_prof.h"
#include "panels.h"
#include "plot.h"

void ui_panel_counters(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    int row = 0;
    if (v->cnt_engine[0]) {
        wattron(w, ui_attr(c, UI_C_TITLE));
        ui_putf(w, row++, 0, "%s run %lld", v->cnt_engine, (long long)v->cnt_run);
        wattroff(w, ui_attr(c, UI_C_TITLE));
    }
    if (v->cnt_note[0]) {
        wattron(w, ui_attr(c, UI_C_WARN));
        ui_putf(w, row++, 0, "N/A: %s", v->cnt_note);
        wattroff(w, ui_attr(c, UI_C_WARN));
    }
    if (v->ncnt == 0) {
        if (!v->cnt_note[0])
            ui_put(w, row, 0, "no counters: profile ENGINE [sol]");
        return;
    }
    int lw = wd >= 60 ? 24 : wd >= 40 ? 16 : 10;
    int vw = 9;
    int bw = wd - lw - vw - 2;
    for (int k = c->scroll; k < v->ncnt && row < h; k++, row++) {
        const ui_metric *m = &v->cnt[k];
        const cupti_metric_def *def = cupti_metric_find(m->name);
        const char *label = def ? def->label : m->name;
        int pct = def ? def->pct : strstr(m->name, "pct") != NULL;
        ui_putf(w, row, 0, "%-*.*s", lw, lw, label);
        char num[16];
        ui_fmt_num(num, sizeof num, m->value);
        if (pct && bw >= 5) {
            char bar[256];
            if (bw > 255)
                bw = 255;
            ui_plot_bar(bar, bw, m->value / 100.0);
            if (isnan(m->value))
                snprintf(bar, sizeof bar, "%s", "N/A");
            wattron(w, ui_attr(c, UI_C_BAR));
            ui_put(w, row, lw + 1, bar);
            wattroff(w, ui_attr(c, UI_C_BAR));
            ui_putf(w, row, lw + 2 + bw, "%6s %%", num);
        } else {
            ui_putf(w, row, lw + 1, "%s %s", num, def ? def->unit : "");
        }
    }
}
