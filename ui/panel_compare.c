/* Compare panel: engines A and B side by side, A (and B when another
 * engine was the ground truth) judged against the reference. */
#include <math.h>
#include <string.h>

#include "panels.h"
#include "plot.h"

void ui_panel_compare(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (!v->have_cmp) {
        ui_put(w, 0, 0, "no comparison: compare A B");
        return;
    }
    char x[16], y[16], z[16];
    wattron(w, ui_attr(c, UI_C_TITLE));
    int other_ref = v->cmp_ref[0] && strcmp(v->cmp_ref, v->cmp_b) != 0;
    /* Which data the numbers describe: the dataset here, the eps below. */
    if (other_ref)
        ui_putf(w, 0, 0, "%s vs %s (truth %s) on %s", v->cmp_a, v->cmp_b, v->cmp_ref,
                v->cmp_dataset);
    else
        ui_putf(w, 0, 0, "%s vs %s on %s", v->cmp_a, v->cmp_b, v->cmp_dataset);
    wattroff(w, ui_attr(c, UI_C_TITLE));
    ui_fmt_num(x, sizeof x, v->cmp_eps);
    /* With a third engine as the truth: A's number first, then B's. */
    int two = other_ref && !isnan(v->b_overlap);
    if (two)
        ui_putf(w, 1, 0, "eps %s  overlap %.6f  B %.6f", x, v->overlap, v->b_overlap);
    else
        ui_putf(w, 1, 0, "eps %s  overlap %.6f", x, v->overlap);
    ui_fmt_num(x, sizeof x, v->err_mean);
    ui_fmt_num(y, sizeof y, v->err_std);
    ui_fmt_num(z, sizeof z, v->err_max);
    ui_putf(w, 2, 0, "err mean %s std %s", x, y);
    int row = 3;
    /* The smallest error beside the largest: the spread of A's bias. */
    char m[16];
    ui_fmt_num(m, sizeof m, v->err_min);
    if (ui_view_no_error(v) && row < h)
        ui_put(w, row++, 0, "err min 0 max 0: no error");
    else if (!isnan(v->err_max) && row < h)
        ui_putf(w, row++, 0, "err min %s max %s", m, z);
    ui_fmt_num(x, sizeof x, v->only_a);
    ui_fmt_num(y, sizeof y, two ? v->b_only_engine : v->only_b);
    ui_fmt_num(z, sizeof z, v->both);
    if (row < h)
        ui_putf(w, row++, 0, "only A %s  only B %s  both %s", x, y, z);
    /* Pairs of the truth each side missed. */
    ui_fmt_num(x, sizeof x, v->only_b);
    ui_fmt_num(y, sizeof y, v->b_only_ref);
    if (two && row < h)
        ui_putf(w, row++, 0, "missed A %s  B %s", x, y);
    ui_fmt_num(x, sizeof x, v->time_a);
    ui_fmt_num(y, sizeof y, v->time_b);
    if (row < h && !(isnan(v->time_a) && isnan(v->time_b)))
        ui_putf(w, row++, 0, "time A %s s  B %s s", x, y);
}
