/* Dataset panel: name, n x d, value range against FP16's. */
#include <math.h>

#include "panels.h"
#include "plot.h"

void ui_panel_dataset(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (!v->have_ds) {
        ui_put(w, 0, 0, "no dataset: load FILE or gen");
        return;
    }
    char a[16], b[16];
    ui_putf(w, 0, 0, "%s", v->ds_name);
    ui_putf(w, 1, 0, "n=%.0f d=%.0f %s", v->n, v->d, v->ds_format);
    if (!v->have_info) {
        ui_put(w, 2, 0, "range: N/A (info)");
        return;
    }
    ui_fmt_num(a, sizeof a, v->vmin);
    ui_fmt_num(b, sizeof b, v->vmax);
    ui_putf(w, 2, 0, "range [%s, %s]", a, b);
    /* FP16's finite range is +-65504; FASTED reads its inputs in FP16. */
    int fits = v->absmax <= 65504 && v->fp16_over == 0;
    if (h > 3) {
        wattron(w, ui_attr(c, fits ? UI_C_BAR : UI_C_WARN));
        ui_putf(w, 3, 0, "fp16 %s: |v|<=%s of 65504", fits ? "ok" : "OVERFLOW",
                (ui_fmt_num(a, sizeof a, v->absmax), a));
        wattroff(w, ui_attr(c, fits ? UI_C_BAR : UI_C_WARN));
    } else {
        ui_put(w, 2, 0, "");
    }
    if (h > 4)
        ui_putf(w, 4, 0, "over %.0f under %.0f dup %.0f", v->fp16_over, v->fp16_under, v->dups);
}
