/* k-distance panel: the sorted K-distance curve of `kdist` and its knee,
 * the eps it offers. Its own place beside the selectivity curve: the two
 * answer different questions (which eps gives S neighbours; which eps
 * leaves few points without K), and one should not hide the other. */
#include <math.h>
#include <stdio.h>

#include "layout.h"
#include "panels.h"
#include "plot.h"

const char *ui_panel_kdist_title(const ui_view *v)
{
    return v->clu_newer ? "clusters" : ui_panel_name(UI_KDIST);
}

void ui_panel_kdist(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    if (v->clu_newer) {
        ui_panel_clusters(w, v, c);
        return;
    }
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->nkdist == 0) {
        ui_put(w, 0, 0, "no k-distance: kdist K");
        return;
    }
    /* Whose curve first, as the selectivity panel says its dataset. */
    ui_putf(w, 0, 0, "%s: %d-dist, %s (minPts %d)", v->kdist_dataset, v->kdist_k, v->kdist_engine,
            v->kdist_k + 1);
    char e[16], r[16], n[16];
    ui_fmt_num(n, sizeof n, v->kdist_n);
    if (v->kdist_have_knee) {
        ui_fmt_num(e, sizeof e, v->kdist_eps);
        ui_fmt_num(r, sizeof r, v->kdist_knee_rank);
        /* eps first: the panel is often narrow */
        char now[40] = "";
        if (v->cur_have_eps) {
            char ce[16];
            ui_fmt_num(ce, sizeof ce, v->cur_eps);
            snprintf(now, sizeof now, "; eps now %s (- -)", ce);
        }
        ui_putf(w, 1, 0, "knee (O) eps %s at rank %s of %s%s", e, r, n, now);
    } else {
        ui_putf(w, 1, 0, "no knee: the curve is flat or straight (%s points)", n);
    }
    int ph = h - 2;
    if (ph < 3 || wd < 12) {
        ui_zoom_hint(w, "F9");
        return;
    }
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    /* The knee as an O on the curve: where the eps offered comes from; the
     * current eps as a dashed rule. Outliers (a few points far from the
     * rest, as on a lidar scan) would press the curve onto one row of a
     * linear axis: then the axis is logarithmic, and says so. */
    int logy = ui_kdist_logy(v->kdist_dist, v->nkdist);
    ui_plot_curve_rule(&g, v->kdist_rank, v->kdist_dist, v->nkdist, &v->kdist_knee_rank,
                       &v->kdist_knee_dist, v->kdist_have_knee ? 1 : 0, 0, logy,
                       v->cur_have_eps ? v->cur_eps : NAN);
    ui_put_grid(w, 2, 0, &g, c);
}
