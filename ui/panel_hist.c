/* Error histogram: distance error A - B over pairs both found, log counts
 * (the FASTED paper's Figure 11). */
#include "panels.h"
#include "plot.h"

void ui_panel_hist(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->nbins == 0) {
        ui_put(w, 0, 0,
               v->have_cmp ? "no error bins in the comparison" : "no histogram: compare A B");
        return;
    }
    /* The bins are A against the ground truth, which is B unless ref= chose another. */
    ui_putf(w, 0, 0, "dist %s - %s, log count", v->cmp_a, v->cmp_ref);
    if (h < 4 || wd < 12)
        return;
    char cells[250 * 70];
    if (wd * (h - 1) > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, h - 1);
    ui_plot_hist(&g, v->bin_lo, v->bin_hi, v->bin_count, v->nbins, 1);
    ui_put_grid(w, 1, 0, &g, c);
}
