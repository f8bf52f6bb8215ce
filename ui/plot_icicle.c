/* HDBSCAN*'s condensed tree as an icicle plot (ui/plot.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"

#define ICICLE_MARGIN 8 /* the distance labels' columns */

/* Whether node k or an ancestor is chosen (label >= 0). */
static int icicle_chosen(const int *parent, const int *label, int k)
{
    for (; k > 0; k = parent[k])
        if (label[k] >= 0)
            return 1;
    return label[0] >= 0;
}

int ui_plot_icicle(ui_grid *g, const int *parent, const double *lam, const double *size,
                   const int *label, int n)
{
    const int w = g->w - ICICLE_MARGIN, h = g->h;
    if (n < 1 || w < 8 || h < 3 || !(size[0] > 0)) {
        ui_grid_text(g, 0, 0, n < 1 ? "no condensed tree" : "no room");
        return -1;
    }
    for (int k = 1; k < n; k++)
        if (parent[k] < 0 || parent[k] >= k)
            return -1; /* parents come first */
    double *x0 = malloc((size_t)n * 3 * sizeof *x0), *x1 = x0 + n, *cur = x1 + n;
    int *row = malloc((size_t)n * 2 * sizeof *row), *end = row + n;
    if (!x0 || !row) {
        free(x0);
        free(row);
        return -1;
    }
    /* distances of the births: the rows, far at the top, on a log scale */
    double dmax = 0, dmin = INFINITY;
    for (int k = 1; k < n; k++) {
        const double d = lam[k] > 0 ? 1.0 / lam[k] : INFINITY;
        if (d > 0 && isfinite(d)) {
            dmax = d > dmax ? d : dmax;
            dmin = d < dmin ? d : dmin;
        }
    }
    x0[0] = 0;
    x1[0] = w;
    cur[0] = 0;
    row[0] = 0;
    for (int k = 1; k < n; k++) {
        const int p = parent[k];
        const double span = x1[p] - x0[p];
        x0[k] = x0[p] + cur[p];
        x1[k] = x0[k] + span * (size[p] > 0 ? size[k] / size[p] : 0);
        cur[p] += x1[k] - x0[k];
        cur[k] = 0;
        const double d = lam[k] > 0 ? 1.0 / lam[k] : 0;
        int r = 1;
        if (dmax > dmin && d > 0)
            r = 1 + (int)lround((double)(h - 2) * (log(dmax) - log(d)) / (log(dmax) - log(dmin)));
        else if (!(d > 0))
            r = h - 1;
        r = r <= row[p] ? row[p] + 1 : r;
        row[k] = r < h ? r : h - 1;
    }
    /* a node's block: from its birth down to its first child's birth, a
     * leaf's one row (the root's every row where it has no child) */
    for (int k = 0; k < n; k++)
        end[k] = k ? -1 : h; /* -1, h: no child yet */
    for (int k = 1; k < n; k++) {
        const int p = parent[k];
        if (end[p] < 0 || end[p] == h || row[k] - 1 < end[p])
            end[p] = row[k] - 1;
    }
    for (int k = 0; k < n; k++) {
        if (end[k] < 0)
            end[k] = row[k];
        else if (end[k] >= h)
            end[k] = h - 1;
        if (end[k] < row[k])
            end[k] = row[k];
    }
    for (int k = 0; k < n; k++) {
        const int a = (int)lround(x0[k]), b = (int)lround(x1[k]);
        const char ch = icicle_chosen(parent, label, k) ? '#' : k ? ':' : '-';
        for (int y = row[k]; y <= end[k] && y < h; y++)
            for (int x = a; x < b && x < w; x++)
                ui_grid_put(g, y, ICICLE_MARGIN + x, ch);
        if (label[k] >= 0 && b - a >= 2) {
            char t[16];
            snprintf(t, sizeof t, "%d", label[k]);
            if ((int)strlen(t) <= b - a)
                ui_grid_text(g, row[k], ICICLE_MARGIN + a, t);
        }
    }
    char t[16];
    ui_grid_text(g, 0, 0, "dist");
    if (dmax > 0) {
        ui_fmt_num(t, sizeof t, dmax);
        ui_grid_text(g, 1, 0, t);
    }
    if (isfinite(dmin) && dmin < dmax) {
        ui_fmt_num(t, sizeof t, dmin);
        ui_grid_text(g, h - 1, 0, t);
    }
    free(x0);
    free(row);
    return 0;
}
