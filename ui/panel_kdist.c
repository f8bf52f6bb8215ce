/* k-distance panel: the sorted K-distance curve of `kdist` and its knee,
 * the eps it offers. It shares the selectivity panel's place: that place
 * shows whichever curve was made last (ui_panel_curves). */
#include <stdio.h>

#include "panels.h"
#include "plot.h"

void ui_panel_kdist(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->nkdist == 0) {
        ui_put(w, 0, 0, "no k-distance: kdist K");
        return;
    }
    char e[16], r[16], n[16];
    ui_fmt_num(n, sizeof n, v->kdist_n);
    if (v->kdist_have_knee) {
        ui_fmt_num(e, sizeof e, v->kdist_eps);
        ui_fmt_num(r, sizeof r, v->kdist_knee_rank);
        /* eps first: the panel is often narrow */
        ui_putf(w, 0, 0, "%d-dist knee eps %s at %s/%s (minPts %d, %s)", v->kdist_k, e, r, n,
                v->kdist_k + 1, v->kdist_engine);
    } else {
        ui_putf(w, 0, 0, "%d-dist (minPts %d) %s: no knee", v->kdist_k, v->kdist_k + 1,
                v->kdist_engine);
    }
    int ph = h - 1;
    if (ph < 3 || wd < 12)
        return;
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    ui_plot_xy(&g, v->kdist_rank, v->kdist_dist, v->nkdist, 0, 0);
    ui_put_grid(w, 1, 0, &g, c);
}

void ui_panel_curves(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    if (v->kdist_newer && v->nkdist > 0)
        ui_panel_kdist(w, v, c);
    else
        ui_panel_curve(w, v, c);
}
