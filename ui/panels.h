/* One draw function per panel (ui/panel_*.c). Each draws the inside of its
 * window (rows 1..h-2, columns 1..w-2); the dashboard draws the border and
 * the title. Panels read the view model and never change it. */
#ifndef TCJ_UI_PANELS_H
#define TCJ_UI_PANELS_H

#include <curses.h>

#include "gpu_status.h"
#include "view.h"

/* Colour pairs set up by the dashboard (0 when monochrome). */
enum { UI_C_TITLE = 1, UI_C_ERR, UI_C_BAR, UI_C_WARN, UI_C_DIM, UI_C_FOCUS };

typedef struct ui_pctx {
    int scroll;                /* lines scrolled: back from the newest (log), down (tables) */
    int color;                 /* has_colors() and colours started */
    const nvml_sample *series; /* the clocks panel's samples, oldest first */
    size_t nseries;
    const char *nvml_note; /* why NVML gives nothing ("" when it does) */
    int live;              /* a GPU run is in progress */
} ui_pctx;

/* Attributes for a colour pair with a monochrome fallback. */
attr_t ui_attr(const ui_pctx *c, int pair);
/* Print s at (y, x) clipped to the window's inside. */
void ui_put(WINDOW *w, int y, int x, const char *s);
/* Print with printf formatting, clipped. */
void ui_putf(WINDOW *w, int y, int x, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Inside size of a window (without the border). */
void ui_inner(WINDOW *w, int *h, int *wd);
/* A plot panel too short for its plot (80x24): its last line says which
 * keys show it zoomed (key: the panel's focus key, "F9"). */
void ui_zoom_hint(WINDOW *w, const char *key);
/* Copy a grid (ui/plot.h) into the window's inside at (y, x). */
struct ui_grid;
void ui_put_grid(WINDOW *w, int y, int x, const struct ui_grid *g, const ui_pctx *c);

void ui_panel_dataset(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_runs(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_compare(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_curve(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_kdist(WINDOW *w, const ui_view *v, const ui_pctx *c);
/* The title of the F9 panel: "clusters" while it shows them, else its
 * name in the layout ("k-distance"). */
const char *ui_panel_kdist_title(const ui_view *v);
/* Drawn by ui_panel_kdist in its place while the view's clusters are the
 * newer result (ui/panel_clusters.c). */
void ui_panel_clusters(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_lab(WINDOW *w, const ui_view *v, const ui_pctx *c);
/* Drawn by ui_panel_lab in its place while the view's ladder is the newer
 * result (ui/panel_ladder.c). */
void ui_panel_ladder(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_hist(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_counters(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_clocks(WINDOW *w, const ui_view *v, const ui_pctx *c);
void ui_panel_log(WINDOW *w, const ui_view *v, const ui_pctx *c);

#endif
