/* Text plots drawn into a plain character grid (no ncurses), so they are
 * unit-tested on a buffer: bars, sparklines, x-y line plots and histograms
 * with axes. Panels copy the grid's rows into their window. ASCII only, so
 * they read the same over ssh, in tmux and in monochrome. */
#ifndef TCJ_UI_PLOT_H
#define TCJ_UI_PLOT_H

#include <stddef.h>
#include <stdint.h>

/* w*h cells, row-major, in caller-owned memory (no terminating NULs). */
typedef struct ui_grid {
    int w, h;
    char *c;
} ui_grid;

/* Point g at cells (w*h bytes) and fill them with spaces. */
void ui_grid_init(ui_grid *g, char *cells, int w, int h);
char ui_grid_at(const ui_grid *g, int y, int x);            /* ' ' outside */
void ui_grid_put(ui_grid *g, int y, int x, char ch);        /* ignored outside */
void ui_grid_text(ui_grid *g, int y, int x, const char *s); /* clipped */
/* Copy row y into out (w chars + NUL, trailing spaces kept). */
void ui_grid_row(const ui_grid *g, int y, char *out);
/* The same without its trailing spaces: the text plots the commands print. */
void ui_grid_row_trimmed(const ui_grid *g, int y, char *out);

/* A compact number in at most 7 characters: 0, 12.5, 1234, 12.3k, 4.56M,
 * 1.2e-05, -0.031. NaN gives "N/A". */
void ui_fmt_num(char *buf, size_t size, double v);

/* A horizontal bar: width cells of '#' for frac (clamped to [0,1]) then
 * '.', NUL-terminated into out (width+1 bytes). NaN: all ' ' and returns -1. */
int ui_plot_bar(char *out, int width, double frac);

/* A sparkline of the last `width` values of v[0..n) between lo and hi, one
 * cell per value, levels " .:-=+*#"; NaN is ' '. out gets width+1 bytes. */
void ui_plot_spark(char *out, int width, const double *v, size_t n, double lo, double hi);

/* Line plot of (x[k], y[k]), k < n, x ascending, with a y axis labelled by
 * its max and min on the left and the x range on the bottom row. logx/logy
 * plot log10 (nonpositive values are skipped) and the bottom row says
 * "log x" / "log y" between the x labels. Returns 0, or -1 when there
 * is nothing to plot or no room (the grid is then left with a note). */
int ui_plot_xy(ui_grid *g, const double *x, const double *y, size_t n, int logx, int logy);

/* The same with marks: the line through (x[k], y[k]), k < n (none when n
 * is 0), then an 'O' at each (mx[k], my[k]), k < nm, on the same axes (a
 * sweep's results on a measured curve). The x axis starts at the first
 * point with a usable x even where its y cannot be drawn (0 on a log
 * axis). Returns 0 or -1 as ui_plot_xy. */
int ui_plot_curve(ui_grid *g, const double *x, const double *y, size_t n, const double *mx,
                  const double *my, size_t nm, int logx, int logy);

/* ui_plot_curve with a horizontal rule at y = rule (a dashed row under
 * the curve and the marks; the y axis widens to hold it); NaN for none. The
 * k-distance plot marks the current eps with it. */
int ui_plot_curve_rule(ui_grid *g, const double *x, const double *y, size_t n, const double *mx,
                       const double *my, size_t nm, int logx, int logy, double rule);

/* Name the y axis of a plot drawn by ui_plot_curve: name on the top row
 * just right of the axis, where those cells are blank (a curve that passes
 * there keeps them). Returns 0, or -1 when there was no room. */
int ui_plot_ylabel(ui_grid *g, const char *name);

/* Whether a sorted k-distance curve dist[0..n) needs a logarithmic y
 * axis: its largest value beyond 10x its median (outliers). */
int ui_kdist_logy(const double *dist, size_t n);

/* Labelled points: an 'o' at each (x[k], y[k]), k < n, with label[k]
 * beside it (right of the point, else left, else on the row above or
 * below, else left out: labels never cover a point or another label;
 * points on one cell get one label, "a,b"), on
 * a linear x axis and a log10 y axis whose floor is yfloor > 0: a y at or
 * below it (0 included) is drawn on the floor's row. A point with a NaN
 * or infinite coordinate is not drawn. Returns 0, or -1 when nothing can
 * be drawn or there is no room. */
int ui_plot_points(ui_grid *g, const double *x, const double *y, const char *const *label, size_t n,
                   double yfloor);

/* Vertical-bar histogram of count[b] over bins [lo[b], hi[b]), b < nbins,
 * bins ascending; logy scales heights by log10(1+count) (as the FASTED
 * paper's Figure 11 does for the distance error). The x axis spans the
 * bins from the first to the last that hold a count. Returns 0 or -1. */
int ui_plot_hist(ui_grid *g, const double *lo, const double *hi, const double *count, size_t nbins,
                 int logy);

/* Wrap s[0..len) into lines of at most width characters, breaking after
 * the last space that fits (a word longer than width is cut): line k is
 * s[start[k] .. start[k]+count[k]). Returns the number of lines (1 for an
 * empty s), at most max. */
int ui_wrap(const char *s, int len, int width, int *start, int *count, int max);

/* HDBSCAN*'s condensed tree as an icicle: n clusters, 0 the root (size
 * its points), cluster k's parent parent[k] < k, birth lam[k] (1 /
 * distance; the root's 0), points size[k], label[k] its number where
 * chosen (else -1). Columns: each cluster's share of its parent's, left
 * to right in order (the rest of a parent's width: points that fell out);
 * rows: the birth distance on a log scale, far at the top (labelled in
 * the left 8 columns), the root's row first; a cluster's block reaches
 * down to its first child's birth. Cells: '#' a chosen cluster and what
 * lies under it (its label on its first row), ':' another, '-' the root.
 * Returns 0, or -1 (a note in the grid) with nothing to draw or no room. */
int ui_plot_icicle(ui_grid *g, const int *parent, const double *lam, const double *size,
                   const int *label, int n);

#endif
