/* Drawing helpers shared by the panels. */
#include "panels.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

attr_t ui_attr(const ui_pctx *c, int pair)
{
    if (c->color)
        return COLOR_PAIR(pair) | (pair == UI_C_TITLE || pair == UI_C_FOCUS ? A_BOLD : 0);
    switch (pair) {
    case UI_C_ERR:
        return A_BOLD;
    case UI_C_FOCUS:
        return A_REVERSE;
    case UI_C_TITLE:
        return A_BOLD;
    case UI_C_DIM:
        return A_DIM;
    default:
        return A_NORMAL;
    }
}

void ui_inner(WINDOW *w, int *h, int *wd)
{
    int H, W;
    getmaxyx(w, H, W);
    *h = H - 2;
    *wd = W - 2;
}

void ui_put(WINDOW *w, int y, int x, const char *s)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (y < 0 || y >= h || x < 0 || x >= wd)
        return;
    int n = 0;
    /* Control bytes would move the cursor; show them as '?'. */
    while (s[n] && x + n < wd) {
        char ch = s[n];
        if (ch == '\x01')
            break;
        mvwaddch(w, y + 1, x + 1 + n, (unsigned char)ch < 32 ? '?' : (chtype)(unsigned char)ch);
        n++;
    }
}

void ui_putf(WINDOW *w, int y, int x, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ui_put(w, y, x, buf);
}

void ui_put_grid(WINDOW *w, int y, int x, const ui_grid *g, const ui_pctx *c)
{
    char row[1100];
    for (int r = 0; r < g->h; r++) {
        if (g->w >= (int)sizeof row)
            return;
        ui_grid_row(g, r, row);
        ui_put(w, y + r, x, row);
        /* Colour the marks so plots stand out from their axes. */
        if (c->color)
            for (int k = 0; row[k]; k++) {
                if (row[k] == '#' || row[k] == '*')
                    mvwchgat(w, y + r + 1, x + k + 1, 1, 0, UI_C_BAR, NULL);
                else if (row[k] == 'O') /* a sweep's result on the curve */
                    mvwchgat(w, y + r + 1, x + k + 1, 1, A_BOLD, UI_C_WARN, NULL);
            }
    }
}

void ui_zoom_hint(WINDOW *w, const char *key)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (h < 1)
        return;
    char hint[128];
    snprintf(hint, sizeof hint, "too small to plot: %s, F11 zooms", key);
    wmove(w, h, 1);
    for (int k = 0; k < wd; k++)
        waddch(w, ' ');
    ui_put(w, h - 1, 0, hint);
}
