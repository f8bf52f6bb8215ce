/* Dataset panel: name, n x d, value range against FP16's. */
#include <math.h>
#include <stdio.h>

#include "panels.h"
#include "plot.h"

void ui_panel_dataset(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    /* The eps every join command will use, always in view. */
    char e[32];
    if (v->cur_have_eps)
        snprintf(e, sizeof e, "eps %.6g", v->cur_eps);
    else
        snprintf(e, sizeof e, "eps unset: eps V, sweep S");
    if (!v->have_ds) {
        ui_put(w, 0, 0, "no dataset: load FILE or gen");
        if (h > 1)
            ui_put(w, 1, 0, e);
        return;
    }
    char a[16], b[16];
    ui_putf(w, 0, 0, "%s", v->ds_name);
    ui_putf(w, 1, 0, "n=%.0f d=%.0f %s", v->n, v->d, v->ds_format);
    wattron(w, ui_attr(c, UI_C_TITLE));
    ui_put(w, 2, 0, e);
    wattroff(w, ui_attr(c, UI_C_TITLE));
    if (!v->have_info) {
        ui_put(w, 3, 0, "range: N/A (info)");
        return;
    }
    ui_fmt_num(a, sizeof a, v->vmin);
    ui_fmt_num(b, sizeof b, v->vmax);
    ui_putf(w, 3, 0, "range [%s, %s]", a, b);
    /* FP16's finite range is +-65504; FASTED reads its inputs in FP16. */
    int fits = v->absmax <= 65504 && v->fp16_over == 0;
    if (h > 4) {
        wattron(w, ui_attr(c, fits ? UI_C_BAR : UI_C_WARN));
        ui_putf(w, 4, 0, "fp16 %s: |v|<=%s of 65504", fits ? "ok" : "OVERFLOW",
                (ui_fmt_num(a, sizeof a, v->absmax), a));
        wattroff(w, ui_attr(c, fits ? UI_C_BAR : UI_C_WARN));
    }
    if (h > 5)
        ui_putf(w, 5, 0, "over %.0f under %.0f dup %.0f", v->fp16_over, v->fp16_under, v->dups);
}
