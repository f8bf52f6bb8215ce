/* Text plots on a character grid; see plot.h. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ui_grid_init(ui_grid *g, char *cells, int w, int h)
{
    g->w = w > 0 ? w : 0;
    g->h = h > 0 ? h : 0;
    g->c = cells;
    if (g->w && g->h)
        memset(cells, ' ', (size_t)g->w * (size_t)g->h);
}

char ui_grid_at(const ui_grid *g, int y, int x)
{
    if (y < 0 || x < 0 || y >= g->h || x >= g->w)
        return ' ';
    return g->c[y * g->w + x];
}

void ui_grid_put(ui_grid *g, int y, int x, char ch)
{
    if (y < 0 || x < 0 || y >= g->h || x >= g->w)
        return;
    g->c[y * g->w + x] = ch;
}

void ui_grid_text(ui_grid *g, int y, int x, const char *s)
{
    for (; *s; s++, x++)
        ui_grid_put(g, y, x, *s);
}

void ui_grid_row(const ui_grid *g, int y, char *out)
{
    if (y >= 0 && y < g->h)
        memcpy(out, g->c + y * g->w, (size_t)g->w);
    out[y >= 0 && y < g->h ? g->w : 0] = '\0';
}

void ui_grid_row_trimmed(const ui_grid *g, int y, char *out)
{
    ui_grid_row(g, y, out);
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == ' ')
        out[--n] = '\0';
}

void ui_fmt_num(char *buf, size_t size, double v)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, size, "N/A");
    else if (isinf(v))
        snprintf(buf, size, v > 0 ? "inf" : "-inf");
    else if (v == 0)
        snprintf(buf, size, "0");
    else if (a >= 1e9)
        snprintf(buf, size, "%.2g", v);
    else if (a >= 1e6)
        snprintf(buf, size, "%.3gM", v / 1e6);
    else if (a >= 1e4)
        snprintf(buf, size, "%.3gk", v / 1e3);
    else if (a >= 100)
        snprintf(buf, size, "%.0f", v);
    else if (a >= 0.01)
        snprintf(buf, size, "%.3g", v);
    else
        snprintf(buf, size, "%.1e", v);
}

int ui_plot_bar(char *out, int width, double frac)
{
    if (width < 0)
        width = 0;
    if (isnan(frac)) {
        memset(out, ' ', (size_t)width);
        out[width] = '\0';
        return -1;
    }
    frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    int full = (int)lround(frac * width);
    for (int k = 0; k < width; k++)
        out[k] = k < full ? '#' : '.';
    out[width] = '\0';
    return 0;
}

void ui_plot_spark(char *out, int width, const double *v, size_t n, double lo, double hi)
{
    static const char levels[] = " .:-=+*#";
    const int nl = (int)sizeof levels - 1;
    if (width < 0)
        width = 0;
    memset(out, ' ', (size_t)width);
    out[width] = '\0';
    size_t first = n > (size_t)width ? n - (size_t)width : 0;
    for (size_t k = first; k < n; k++) {
        double t = hi > lo ? (v[k] - lo) / (hi - lo) : 1.0;
        if (isnan(v[k]))
            continue;
        t = t < 0 ? 0 : t > 1 ? 1 : t;
        int l = 1 + (int)lround(t * (nl - 2)); /* ' ' is kept for N/A */
        out[k - first] = levels[l];
    }
}

static int tr(double v, int lg, double *out)
{
    if (!isfinite(v))
        return 0;
    if (lg) {
        if (v <= 0)
            return 0;
        v = log10(v);
    }
    *out = v;
    return 1;
}

/* Axes shared by the line plot and the histogram: y labels on the left, a
 * bottom axis, x labels under it. Returns the plot area's left column and
 * height through x0/ph, or -1 if there is no room. */
static int draw_axes(ui_grid *g, double ylo, double yhi, double xlo, double xhi, int logx, int logy,
                     int *x0, int *ph)
{
    char top[16], bot[16], left[16], right[16];
    ui_fmt_num(top, sizeof top, yhi);
    ui_fmt_num(bot, sizeof bot, ylo);
    ui_fmt_num(left, sizeof left, xlo);
    ui_fmt_num(right, sizeof right, xhi);
    int lw = (int)(strlen(top) > strlen(bot) ? strlen(top) : strlen(bot));
    *x0 = lw + 1;
    *ph = g->h - 2;
    if (*ph < 1 || g->w - *x0 < 4) {
        ui_grid_text(g, 0, 0, "(no room)");
        return -1;
    }
    for (int y = 0; y < *ph; y++)
        ui_grid_put(g, y, lw, '|');
    ui_grid_put(g, *ph, lw, '+');
    for (int x = *x0; x < g->w; x++)
        ui_grid_put(g, *ph, x, '-');
    ui_grid_text(g, 0, lw - (int)strlen(top), top);
    ui_grid_text(g, *ph - 1 > 0 ? *ph - 1 : 0, lw - (int)strlen(bot), bot);
    ui_grid_text(g, g->h - 1, *x0, left);
    int rx = g->w - (int)strlen(right);
    if (rx > *x0 + (int)strlen(left))
        ui_grid_text(g, g->h - 1, rx, right);
    /* A logarithmic axis says so, between the x labels where they leave
     * room: the labels alone (1, 1000) do not tell log from linear. */
    const char *scale = logx && logy ? "log x, log y" : logx ? "log x" : logy ? "log y" : NULL;
    if (scale) {
        int sl = (int)strlen(scale), lend = *x0 + (int)strlen(left) + 1;
        int rbeg = rx > *x0 + (int)strlen(left) ? rx - 1 : g->w;
        int mx = *x0 + (g->w - *x0 - sl) / 2;
        if (mx < lend)
            mx = lend;
        if (mx + sl <= rbeg)
            ui_grid_text(g, g->h - 1, mx, scale);
    }
    return 0;
}

/* Row and column of (tx, ty) in the plot area, in transformed units. */
static int to_row(double ty, double ylo, double ys, int ph)
{
    return ph - 1 - (int)lround((ty - ylo) / ys * (ph - 1));
}

int ui_plot_curve(ui_grid *g, const double *x, const double *y, size_t n, const double *mx,
                  const double *my, size_t nm, int logx, int logy)
{
    return ui_plot_curve_rule(g, x, y, n, mx, my, nm, logx, logy, NAN);
}

int ui_plot_curve_rule(ui_grid *g, const double *x, const double *y, size_t n, const double *mx,
                       const double *my, size_t nm, int logx, int logy, double rule)
{
    /* The x axis spans every point with a usable x, from the first one,
     * even where y cannot be drawn (S = 0 on a log axis); y spans the
     * drawable values. Marks widen both. */
    double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
    size_t m = 0;
    for (int set = 0; set < 2; set++) {
        const double *px = set ? mx : x, *py = set ? my : y;
        size_t pn = set ? nm : n;
        for (size_t k = 0; k < pn; k++) {
            double tx, ty;
            if (!tr(px[k], logx, &tx))
                continue;
            xlo = fmin(xlo, tx), xhi = fmax(xhi, tx);
            if (!tr(py[k], logy, &ty))
                continue;
            ylo = fmin(ylo, ty), yhi = fmax(yhi, ty);
            m++;
        }
    }
    if (m == 0) {
        ui_grid_text(g, 0, 0, "(no data)");
        return -1;
    }
    double trule;
    int have_rule = tr(rule, logy, &trule);
    if (have_rule)
        ylo = fmin(ylo, trule), yhi = fmax(yhi, trule);
    int x0, ph;
    if (draw_axes(g, logy ? pow(10, ylo) : ylo, logy ? pow(10, yhi) : yhi,
                  logx ? pow(10, xlo) : xlo, logx ? pow(10, xhi) : xhi, logx, logy, &x0, &ph))
        return -1;
    int pw = g->w - x0;
    double ys = yhi > ylo ? yhi - ylo : 1;
    /* The rule first, so the curve and the marks draw over it. */
    if (have_rule) {
        int r = to_row(trule, ylo, ys, ph);
        for (int c = 0; c < pw; c++)
            ui_grid_put(g, r, x0 + c, c % 2 ? ' ' : '-');
    }
    /* One mark per column: the curve interpolated at the column's x, so a
     * few points still draw a continuous line. */
    for (int c = 0; c < pw && n > 0; c++) {
        double xv = pw > 1 ? xlo + (xhi - xlo) * c / (pw - 1) : xlo;
        int have = 0;
        double yv = 0, px = 0, py = 0;
        int havep = 0;
        for (size_t k = 0; k < n && !have; k++) {
            double tx, ty;
            if (!tr(x[k], logx, &tx) || !tr(y[k], logy, &ty))
                continue;
            if (tx == xv || (m == 1 && nm == 0)) {
                yv = ty, have = 1;
            } else if (havep && px <= xv && xv <= tx) {
                yv = tx > px ? py + (ty - py) * (xv - px) / (tx - px) : ty;
                have = 1;
            }
            px = tx, py = ty, havep = 1;
        }
        if (!have)
            continue;
        ui_grid_put(g, to_row(yv, ylo, ys, ph), x0 + c, '*');
    }
    /* Marks at their own points, over the line. */
    double xs = xhi > xlo ? xhi - xlo : 1;
    for (size_t k = 0; k < nm; k++) {
        double tx, ty;
        if (!tr(mx[k], logx, &tx) || !tr(my[k], logy, &ty))
            continue;
        int c = pw > 1 ? (int)lround((tx - xlo) / xs * (pw - 1)) : 0;
        ui_grid_put(g, to_row(ty, ylo, ys, ph), x0 + c, 'O');
    }
    return 0;
}

int ui_plot_ylabel(ui_grid *g, const char *name)
{
    int x = 0;
    while (x < g->w && ui_grid_at(g, 0, x) != '|')
        x++;
    const int n = (int)strlen(name);
    if (x + 1 + n > g->w)
        return -1;
    for (int k = 1; k <= n; k++)
        if (ui_grid_at(g, 0, x + k) != ' ')
            return -1;
    ui_grid_text(g, 0, x + 1, name);
    return 0;
}

int ui_plot_xy(ui_grid *g, const double *x, const double *y, size_t n, int logx, int logy)
{
    return ui_plot_curve(g, x, y, n, NULL, NULL, 0, logx, logy);
}

/* Whether cells [x, x+len) of row y lie in the plot area and are empty,
 * and so are the margin cells x-1 and x+len where they are inside it: a
 * label that touched another point or label would read as one word
 * ("fp16o", "fp16tf32"). */
static int free_cells(const ui_grid *g, int y, int x, int len, int x0, int ph)
{
    if (y < 0 || y >= ph || x < x0 || x + len > g->w)
        return 0;
    for (int k = -1; k <= len; k++) {
        int at = x + k;
        if ((k < 0 || k == len) && (at < x0 || at >= g->w))
            continue;
        if (ui_grid_at(g, y, at) != ' ')
            return 0;
    }
    return 1;
}

int ui_plot_points(ui_grid *g, const double *x, const double *y, const char *const *label, size_t n,
                   double yfloor)
{
    if (!(yfloor > 0) || !isfinite(yfloor)) {
        ui_grid_text(g, 0, 0, "(no data)");
        return -1;
    }
    double xlo = INFINITY, xhi = -INFINITY, ymax = yfloor;
    size_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(x[k]) || !isfinite(y[k]))
            continue;
        xlo = fmin(xlo, x[k]), xhi = fmax(xhi, x[k]);
        ymax = fmax(ymax, y[k]);
        m++;
    }
    if (m == 0) {
        ui_grid_text(g, 0, 0, "(no data)");
        return -1;
    }
    if (xhi == xlo) {
        /* One time for all: the points stand in the middle. */
        double pad = xlo != 0 ? fabs(xlo) * 0.1 : 1;
        xlo -= pad, xhi += pad;
    }
    double ylo = log10(yfloor), yhi = ceil(log10(ymax));
    if (yhi < ylo + 1)
        yhi = ylo + 1;
    int x0, ph;
    if (draw_axes(g, pow(10, ylo), pow(10, yhi), xlo, xhi, 0, 1, &x0, &ph))
        return -1;
    int pw = g->w - x0;
    int *col = calloc(n ? n : 1, sizeof *col), *row = calloc(n ? n : 1, sizeof *row);
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(x[k]) || !isfinite(y[k])) {
            row[k] = -1;
            continue;
        }
        double ty = y[k] > yfloor ? log10(y[k]) : ylo;
        col[k] = x0 + (pw > 1 ? (int)lround((x[k] - xlo) / (xhi - xlo) * (pw - 1)) : 0);
        row[k] = to_row(ty, ylo, yhi - ylo, ph);
        ui_grid_put(g, row[k], col[k], 'o');
    }
    /* Labels after every point, so that none hides one; points that fall
     * on one cell share one label, their names joined by commas. */
    for (size_t k = 0; k < n && label; k++) {
        if (row[k] < 0)
            continue;
        int dup = 0;
        for (size_t j = 0; j < k; j++)
            dup |= row[j] == row[k] && col[j] == col[k];
        if (dup)
            continue;
        char text[96] = "";
        size_t tl = 0;
        for (size_t j = k; j < n; j++)
            if (row[j] == row[k] && col[j] == col[k] && label[j] && *label[j] && tl < sizeof text)
                tl +=
                    (size_t)snprintf(text + tl, sizeof text - tl, "%s%s", tl ? "," : "", label[j]);
        if (!tl)
            continue;
        int len = (int)strlen(text);
        int mid = col[k] - len / 2;
        if (mid + len > g->w)
            mid = g->w - len;
        if (mid < x0)
            mid = x0;
        /* Row, column of the label, and the span that must be free (the
         * label; free_cells adds a margin each side, which beside the
         * point is the gap between them). */
        const int cand[4][4] = {{row[k], col[k] + 2, col[k] + 2, len},
                                {row[k], col[k] - 1 - len, col[k] - 1 - len, len},
                                {row[k] - 1, mid, mid, len},
                                {row[k] + 1, mid, mid, len}};
        for (int c = 0; c < 4; c++)
            if (free_cells(g, cand[c][0], cand[c][2], cand[c][3], x0, ph)) {
                ui_grid_text(g, cand[c][0], cand[c][1], text);
                break;
            }
    }
    free(col);
    free(row);
    return 0;
}

int ui_plot_hist(ui_grid *g, const double *lo, const double *hi, const double *count, size_t nbins,
                 int logy)
{
    double cmax = 0;
    for (size_t b = 0; b < nbins; b++)
        if (count[b] > cmax)
            cmax = count[b];
    if (nbins == 0 || !(cmax > 0)) {
        ui_grid_text(g, 0, 0, "(no data)");
        return -1;
    }
    /* The x axis spans the bins that hold something: empty bins at the
     * edges of a fixed range would squeeze the observed errors. */
    size_t first = 0, end = nbins;
    while (!(count[first] > 0))
        first++;
    while (!(count[end - 1] > 0))
        end--;
    lo += first, hi += first, count += first;
    nbins = end - first;
    int x0, ph;
    if (draw_axes(g, 0, cmax, lo[0], hi[nbins - 1], 0, logy, &x0, &ph))
        return -1;
    int pw = g->w - x0;
    if (pw > 1024)
        pw = 1024;
    /* Each column sums the bins it covers; with more columns than bins a
     * bin spans several columns. Heights are scaled by the tallest column. */
    double col[1024], cm = 0;
    for (int c = 0; c < pw; c++) {
        size_t b0 = (size_t)c * nbins / (size_t)pw;
        size_t b1 = (size_t)(c + 1) * nbins / (size_t)pw;
        if (b1 <= b0)
            b1 = b0 + 1;
        col[c] = 0;
        for (size_t b = b0; b < b1 && b < nbins; b++)
            col[c] += count[b];
        cm = fmax(cm, col[c]);
    }
    double top = logy ? log10(1 + cm) : cm;
    for (int c = 0; c < pw; c++) {
        if (!(col[c] > 0))
            continue;
        double v = logy ? log10(1 + col[c]) : col[c];
        int hgt = (int)lround(v / top * ph);
        if (hgt < 1)
            hgt = 1; /* a nonzero bin is always visible */
        for (int k = 0; k < hgt; k++)
            ui_grid_put(g, ph - 1 - k, x0 + c, '#');
    }
    return 0;
}

int ui_kdist_logy(const double *dist, size_t n)
{
    /* Sorted ascending: the median against the largest. A knee is read
     * in the bulk of the curve; past 10x the median a linear axis leaves
     * the bulk a few rows at the bottom. */
    size_t first = 0;
    while (first < n && !(dist[first] > 0))
        first++;
    if (n - first < 2)
        return 0;
    double med = dist[first + (n - first) / 2], top = dist[n - 1];
    return isfinite(top) && top > 10 * med;
}

int ui_wrap(const char *s, int len, int width, int *start, int *count, int max)
{
    if (width < 1 || max < 1)
        return 0;
    int np = 0, at = 0;
    do {
        int n = len - at;
        if (n > width) {
            /* the last space that ends a piece within the width; a word
             * longer than the width is cut */
            int cut = -1;
            for (int k = at + width; k > at; k--)
                if (s[k] == ' ') {
                    cut = k;
                    break;
                }
            n = cut > at ? cut - at : width;
        }
        start[np] = at;
        count[np] = n;
        np++;
        at += n;
        if (at < len && s[at] == ' ')
            at++; /* the space the line broke at starts no line */
    } while (at < len && np < max);
    return np;
}
