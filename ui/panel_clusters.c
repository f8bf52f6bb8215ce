/* Clusters panel: `dbscan curve`'s cluster count against eps with the
 * current eps marked (O), its widest plateau, and the last `dbscan`'s
 * counts and largest clusters; or the last `hdbscan`'s condensed tree
 * (an icicle, ui_plot_icicle) where that is the newer. It takes the k-distance panel's place when
 * its result is the newer (both are about DBSCAN's eps; the keys and the
 * layout stay as they are). */
#include <math.h>
#include <stdio.h>

#include "panels.h"
#include "plot.h"

/* The last hdbscan: its counts and its condensed tree as an icicle. */
static void panel_hdbscan(WINDOW *w, const ui_view *v, const ui_pctx *c, int h, int wd)
{
    ui_putf(w, 0, 0, "%s: HDBSCAN* min_cluster_size %.0f, min_samples %.0f, %s", v->clu_dataset,
            v->hd_mcs, v->clu_minpts, v->clu_engine);
    if (h > 1)
        ui_putf(w, 1, 0, "%.0f clusters (#), noise %.0f; rows: where each splits off",
                v->hd_clusters, v->hd_noise);
    const int ph = h - 2;
    char cells[250 * 70];
    if (ph < 3 || wd < 20 || wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    ui_plot_icicle(&g, v->hd_parent, v->hd_lambda, v->hd_size, v->hd_label, v->hd_nodes);
    ui_put_grid(w, 2, 0, &g, c);
}

void ui_panel_clusters(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->hd_show) {
        panel_hdbscan(w, v, c, h, wd);
        return;
    }
    ui_putf(w, 0, 0, "%s: DBSCAN minPts %.0f, %s", v->clu_dataset, v->clu_minpts, v->clu_engine);
    int y = 1;
    if (v->clu_have_run) {
        char e[16];
        ui_fmt_num(e, sizeof e, v->clu_eps);
        ui_putf(w, y++, 0, "eps %s: %.0f clusters, core %.0f, border %.0f, noise %.0f", e,
                v->clu_clusters, v->clu_core, v->clu_border, v->clu_noise);
        /* Red flags always (the advice is in the log); the plot next: the
         * sizes only where it keeps 8 rows. */
        if (v->clu_flags[0] && y < h) {
            wattron(w, ui_attr(c, UI_C_WARN));
            ui_putf(w, y++, 0, "red flag: %s", v->clu_flags);
            wattroff(w, ui_attr(c, UI_C_WARN));
        }
        if (v->clu_ntop && h - y >= 10) {
            char line[256];
            int len = snprintf(line, sizeof line, "largest:");
            for (int k = 0; k < v->clu_ntop && len < (int)sizeof line - 12; k++)
                len += snprintf(line + len, sizeof line - len, " %.0f", v->clu_top[k]);
            ui_put(w, y++, 0, line);
        }
    }
    if (v->nclu == 0) {
        if (y < h)
            ui_put(w, y, 0, "no curve: dbscan curve [max=EPS]");
        return;
    }
    if (!isnan(v->clu_plateau_n) && h - y >= 8) {
        char lo[16], hi[16];
        ui_fmt_num(lo, sizeof lo, v->clu_plateau_lo);
        ui_fmt_num(hi, sizeof hi, v->clu_plateau_hi);
        ui_putf(w, y++, 0, "widest plateau [%s, %s): %.0f clusters", lo, hi, v->clu_plateau_n);
    }
    int ph = h - y;
    if (ph < 3 || wd < 12)
        return;
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    int mark = !isnan(v->clu_mark_eps) && !isnan(v->clu_mark_n);
    ui_plot_curve(&g, v->clu_x, v->clu_y, v->nclu, &v->clu_mark_eps, &v->clu_mark_n, mark ? 1 : 0,
                  0, 0);
    ui_put_grid(w, y, 0, &g, c);
}
