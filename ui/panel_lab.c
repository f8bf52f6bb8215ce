/* Precision lab panel: each format of the last `precisions` (or `show
 * lab`) as a point, kernel time across and 1 - overlap up on a log axis,
 * labelled with the format's name. Overlap 1 has no logarithm: such a
 * format sits on the axis floor, and the panel says so. Formats that did
 * not run are named below the plot. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "panels.h"
#include "plot.h"

void ui_panel_lab(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (v->ladder_newer) {
        ui_panel_ladder(w, v, c);
        return;
    }
    if (v->nlab == 0) {
        ui_put(w, 0, 0, "no lab: precisions");
        return;
    }
    char e[16], mo[24];
    ui_fmt_num(e, sizeof e, v->lab_eps);
    /* all the digits the threshold has: 7 characters would round 0.9999 to 1 */
    snprintf(mo, sizeof mo, "%.10g", v->lab_min_overlap);
    if (v->lab_done)
        ui_putf(w, 0, 0, "lab %lld: %s eps %s vs %s", (long long)v->lab_id, v->lab_dataset, e,
                v->lab_ref);
    else
        ui_putf(w, 0, 0, "lab %lld: %d formats so far", (long long)v->lab_id, v->nlab);
    /* The choice on a line of its own where there is room for it. */
    int top = 1;
    if (h >= 8 && v->lab_done) {
        if (v->lab_chosen[0])
            ui_putf(w, 1, 0, "fastest with overlap >= %s: %s", mo, v->lab_chosen);
        else
            ui_putf(w, 1, 0, "none reaches overlap %s (closest %s)", mo,
                    v->lab_closest[0] ? v->lab_closest : "-");
        top = 2;
    }

    double x[UI_MAX_LAB], y[UI_MAX_LAB], ymin = INFINITY;
    const char *label[UI_MAX_LAB];
    char missing[160] = "";
    size_t np = 0, mlen = 0;
    int at_floor = 0;
    for (int k = 0; k < v->nlab && k < UI_MAX_LAB; k++) {
        const struct ui_lab_point *p = &v->lab[k];
        if (strcmp(p->status, "ok") != 0 || isnan(p->overlap) || isnan(p->kernel_s)) {
            if (mlen < sizeof missing)
                mlen += (size_t)snprintf(missing + mlen, sizeof missing - mlen, " %s", p->format);
            continue;
        }
        x[np] = p->kernel_s;
        y[np] = 1 - p->overlap;
        label[np] = p->format;
        if (y[np] > 0)
            ymin = fmin(ymin, y[np]);
        else
            at_floor = 1;
        np++;
    }
    /* The floor: a decade below the smallest nonzero 1 - overlap. */
    double floor_y = isfinite(ymin) ? pow(10, floor(log10(ymin)) - 1) : 1e-6;
    char fl[16], note[200];
    ui_fmt_num(fl, sizeof fl, floor_y);
    snprintf(note, sizeof note, "x kernel s, y 1-overlap%s%s%s%s", at_floor ? "; on " : "",
             at_floor ? fl : "", at_floor ? ": overlap 1" : "", missing[0] ? "; not run:" : "");
    if (missing[0])
        snprintf(note + strlen(note), sizeof note - strlen(note), "%s", missing);
    ui_put(w, h - 1, 0, note);
    int ph = h - 1 - top;
    if (np > 0 && (ph < 3 || wd < 12)) {
        ui_zoom_hint(w, "F12");
        return;
    }
    if (ph < 3 || wd < 12 || np == 0)
        return;
    char cells[250 * 70];
    if (wd * ph > (int)sizeof cells)
        return;
    ui_grid g;
    ui_grid_init(&g, cells, wd, ph);
    ui_plot_points(&g, x, y, label, np, floor_y);
    ui_put_grid(w, top, 0, &g, c);
}
