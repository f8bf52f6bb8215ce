/* Error histogram: distance error A - B over pairs both found, log counts
 * (the FASTED paper's Figure 11). */
#include <stdio.h>

#include "panels.h"
#include "plot.h"

void ui_panel_hist(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->have_cmp && ui_view_no_error(v)) {
        /* One full bin at 0 would draw a wall of bars that reads as error. */
        char n[16];
        ui_fmt_num(n, sizeof n, v->both);
        ui_putf(w, 0, 0, "%s vs %s on %s:", v->cmp_a, v->cmp_ref, v->cmp_dataset);
        wattron(w, ui_attr(c, UI_C_BAR));
        ui_put(w, 1, 0, "no error");
        wattroff(w, ui_attr(c, UI_C_BAR));
        ui_putf(w, 2, 0, "every distance of the %s pairs", n);
        ui_putf(w, 3, 0, "both found equals %s's", v->cmp_ref);
        return;
    }
    if (v->nbins == 0) {
        ui_put(w, 0, 0,
               v->have_cmp ? "no error bins in the comparison" : "no histogram: compare A B");
        return;
    }
    /* The bins are A against the ground truth, which is B unless ref= chose another. */
    char e[16];
    ui_fmt_num(e, sizeof e, v->cmp_eps);
    ui_putf(w, 0, 0, "dist %s - %s, log count", v->cmp_a, v->cmp_ref);
    /* Which data: a line of its own where there is room for it. */
    int top = 1;
    if (h >= 8) {
        ui_putf(w, 1, 0, "%s eps %s", v->cmp_dataset, e);
        top = 2;
    }
    if (h - top < 3 || wd < 12) {
        ui_zoom_hint(w, "F6");
        return;
    }
    char cells[250 * 70];
    if (wd * (h - top) > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, h - top);
    ui_plot_hist(&g, v->bin_lo, v->bin_hi, v->bin_count, v->nbins, 1);
    ui_put_grid(w, top, 0, &g, c);
}
