/* Ladder panel: one bar per rung of the last `ladder`, its length the
 * rung's % of cuBLAS of its dtype (100% marked), the TFLOPS beside it;
 * rungs that did not run, or counted wrong, say so instead of a bar. Drawn
 * by the precision lab panel in its place while the ladder is newer. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "panels.h"
#include "plot.h"

void ui_panel_ladder(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    ui_putf(w, 0, 0, "ladder %lld: %s n=%.0f d=%.0f, %% of cuBLAS", (long long)v->ladder_id,
            v->ladder_device, v->ladder_n, v->ladder_d);
    /* the widest bar: 100% of cuBLAS, or the largest share above it */
    double top = 100;
    for (int k = 0; k < v->nladder; k++)
        if (v->ladder[k].pct > top)
            top = v->ladder[k].pct;
    const int label = 18, tail = 16, bw = wd - label - tail;
    int row = 1;
    const int first = c->scroll < v->nladder ? c->scroll : 0; /* PgDn scrolls the rungs */
    for (int k = first; k < v->nladder && row < h - 1; k++, row++) {
        const struct ui_ladder_bar *b = &v->ladder[k];
        char name[32];
        snprintf(name, sizeof name, "%2d %s", b->rung, b->name);
        ui_putf(w, row, 0, "%-*.*s", label, label - 1, name);
        if (strcmp(b->status, "ok") != 0 || isnan(b->pct) || bw < 4) {
            ui_putf(w, row, label, "%s", strcmp(b->status, "ok") ? b->status : "no cuBLAS figure");
            continue;
        }
        /* the bar in [0, top] with a '|' where 100% of cuBLAS falls */
        char bar[256];
        const int n = bw < (int)sizeof bar - 1 ? bw : (int)sizeof bar - 1;
        ui_plot_bar(bar, n, b->pct / top);
        const int mark = (int)lround(100 / top * n);
        if (mark < n && bar[mark] != '#')
            bar[mark] = '|';
        wattron(w, ui_attr(c, UI_C_BAR));
        ui_put(w, row, label, bar);
        wattroff(w, ui_attr(c, UI_C_BAR));
        ui_putf(w, row, label + bw, " %5.1f%% %s", b->pct, b->blas);
    }
    if (h > 2 && row < h)
        ui_put(w, h - 1, 0, "| 100% of cuBLAS; ladder prints the evidence");
}
