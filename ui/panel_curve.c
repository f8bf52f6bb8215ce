/* Selectivity panel: S(eps) from `curve`, or the points `sweep` found. */
#include <stdio.h>

#include "panels.h"
#include "plot.h"

void ui_panel_curve(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    int marks = v->nsweep > 0;
    int ph = h - (marks ? 1 : 0);
    if (v->ncurve == 0 && v->nsweep == 0) {
        ui_put(w, 0, 0, "no curve: curve or sweep S");
        return;
    }
    if (marks) {
        /* The latest sweep result in words above the plot. */
        size_t k = v->nsweep - 1;
        char t[16], e[16], s[16];
        ui_fmt_num(t, sizeof t, v->sweep_target[k]);
        ui_fmt_num(e, sizeof e, v->sweep_eps[k]);
        ui_fmt_num(s, sizeof s, v->sweep_sel[k]);
        ui_putf(w, 0, 0, "sweep S=%s: eps %s -> S %s (%zu)", t, e, s, v->nsweep);
    }
    if (ph < 3 || wd < 12)
        return;
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    if (v->ncurve > 1)
        ui_plot_xy(&g, v->curve_eps, v->curve_sel, v->ncurve, 0, 1);
    else
        ui_plot_xy(&g, v->sweep_eps, v->sweep_sel, v->nsweep, 0, 1);
    ui_put_grid(w, marks, 0, &g, c);
}
