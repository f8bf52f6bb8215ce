/* Selectivity panel: S(eps) from `curve`, or the points `sweep` found. */
#include <stdio.h>

#include "panels.h"
#include "plot.h"

void ui_panel_curve(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->ncurve == 0 && v->nsweep == 0) {
        ui_put(w, 0, 0, "no curve: curve or sweep S");
        return;
    }
    /* Whose curve: the dataset, then the latest sweep result in words. */
    int top = 1;
    ui_putf(w, 0, 0, "%s: S against eps, log S (S = 0 not drawn)%s", v->curve_dataset,
            v->ncurve > 1 ? "" : ", sweep results (curve LO HI draws the line)");
    if (v->nsweep > 0 && h > 4) {
        size_t k = v->nsweep - 1;
        char t[16], e[16], s[16];
        ui_fmt_num(t, sizeof t, v->sweep_target[k]);
        ui_fmt_num(e, sizeof e, v->sweep_eps[k]);
        ui_fmt_num(s, sizeof s, v->sweep_sel[k]);
        ui_putf(w, 1, 0, "sweep S=%s: eps %s -> S %s (O: %zu found)", t, e, s, v->nsweep);
        top = 2;
    }
    int ph = h - top;
    if (ph < 3 || wd < 12) {
        ui_zoom_hint(w, "F5");
        return;
    }
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    /* Sweep results are marks on the measured curve, never a line of
     * their own (a line through a few targets would look measured). */
    size_t n = v->ncurve > 1 ? v->ncurve : 0;
    if (ui_plot_curve(&g, v->curve_eps, v->curve_sel, n, v->sweep_eps, v->sweep_sel, v->nsweep, 0,
                      1) == 0)
        ui_plot_ylabel(&g, "S");
    ui_put_grid(w, top, 0, &g, c);
}
