/* Layout: a few templates of bands of panels, chosen by size. Each band has
 * a height weight, each panel in it a width weight. One "slot" per template
 * shows whichever hidden panel has the focus, so every panel can be reached
 * at small sizes with Tab. */
#include "layout.h"

#include <string.h>

#define UI_SLOT (-2) /* stands for the focused hidden panel */
#define MAX_BANDS 4
#define MAX_IN_BAND 3

typedef struct band {
    int weight;
    int n;
    int id[MAX_IN_BAND];
    int w[MAX_IN_BAND];
} band;

typedef struct templ {
    int min_cols, min_body;
    int slot_default;
    int nbands;
    band b[MAX_BANDS];
} templ;

/* Largest first; the first that fits is used. */
static const templ templates[] = {
    /* The log gets a band of its own, the full width: the lab's table is
     * wide, and the plots of kdist and precisions share the band above.
     * At 120x40 the heights are 7, 10 (the histogram's dataset line needs
     * 8 inside), 9 and 10 rows. */
    {120,
     36,
     -1,
     4,
     {{7, 3, {UI_DATASET, UI_RUNS, UI_CLOCKS}, {2, 4, 3}},
      {10, 3, {UI_COMPARE, UI_HIST, UI_CURVE}, {4, 3, 3}},
      {9, 3, {UI_COUNTERS, UI_KDIST, UI_LAB}, {2, 3, 4}},
      {6, 1, {UI_LOG}, {1}}}},
    {120,
     30,
     UI_KDIST,
     3,
     {{3, 3, {UI_DATASET, UI_RUNS, UI_CLOCKS}, {2, 4, 3}},
      {4, 3, {UI_COMPARE, UI_HIST, UI_CURVE}, {4, 3, 3}},
      {3, 3, {UI_COUNTERS, UI_SLOT, UI_LOG}, {2, 3, 4}}}},
    {120,
     18,
     UI_CURVE,
     3,
     {{4, 3, {UI_DATASET, UI_RUNS, UI_CLOCKS}, {2, 4, 3}},
      {5, 3, {UI_COMPARE, UI_HIST, UI_SLOT}, {4, 3, 3}},
      {4, 1, {UI_LOG}, {1}}}},
    {80,
     30,
     UI_COUNTERS,
     4,
     {{3, 2, {UI_DATASET, UI_RUNS}, {1, 2}},
      {4, 2, {UI_COMPARE, UI_HIST}, {1, 1}},
      {3, 2, {UI_CURVE, UI_SLOT}, {1, 1}},
      {3, 1, {UI_LOG}, {1}}}},
    {80,
     18,
     UI_HIST,
     3,
     {{3, 2, {UI_DATASET, UI_RUNS}, {1, 2}},
      {4, 2, {UI_COMPARE, UI_SLOT}, {1, 1}},
      {4, 1, {UI_LOG}, {1}}}},
    {0, 0, UI_RUNS, 2, {{1, 1, {UI_SLOT}, {1}}, {1, 1, {UI_LOG}, {1}}}},
};

/* Each panel's title and function key. */
static const struct {
    const char *name;
    int fkey;
} panels[UI_NPANEL] = {
    [UI_DATASET] = {"dataset", 2},       [UI_RUNS] = {"runs", 3},
    [UI_COMPARE] = {"compare", 4},       [UI_CURVE] = {"selectivity", 5},
    [UI_HIST] = {"error histogram", 6},  [UI_COUNTERS] = {"counters", 7},
    [UI_CLOCKS] = {"clocks & power", 8}, [UI_KDIST] = {"k-distance", 9},
    [UI_LAB] = {"precision lab", 12},    [UI_LOG] = {"log", 10},
    [UI_PROGRESS] = {"progress", 0},     [UI_PROMPT] = {"prompt", 0},
};

const char *ui_panel_name(int id)
{
    return id >= 0 && id < UI_NPANEL ? panels[id].name : "?";
}

int ui_panel_fkey(int id)
{
    return id >= 0 && id < UI_NPANEL ? panels[id].fkey : 0;
}

int ui_panel_of_fkey(int n)
{
    for (int id = 0; id < UI_NBODY; id++)
        if (n > 0 && panels[id].fkey == n)
            return id;
    return -1;
}

static void set_rect(ui_rect *r, int y, int x, int h, int w)
{
    r->y = y;
    r->x = x;
    r->h = h;
    r->w = w;
    r->visible = h > 0 && w > 0;
    if (!r->visible)
        r->h = r->w = 0;
}

static int in_template(const templ *t, int id)
{
    for (int b = 0; b < t->nbands; b++)
        for (int k = 0; k < t->b[b].n; k++)
            if (t->b[b].id[k] == id)
                return 1;
    return 0;
}

/* Panels collapsed to a line (UI_LAYOUT_NO_GPU) leave the bands. */
static int collapsed(int flags, int id)
{
    return (flags & UI_LAYOUT_NO_GPU) && (id == UI_COUNTERS || id == UI_CLOCKS);
}

/* The band's panels that are shown: ids (slot resolved) and weights. */
static int band_members(const band *b, int slot, int flags, int *ids, int *ws)
{
    int n = 0;
    for (int k = 0; k < b->n; k++) {
        int id = b->id[k] == UI_SLOT ? slot : b->id[k];
        if (id < 0 || collapsed(flags, id))
            continue;
        ids[n] = id;
        ws[n++] = b->w[k];
    }
    return n;
}

static void place_band(ui_layout *L, const int *ids, const int *ws, int n, int y, int h, int cols)
{
    int total = 0;
    for (int k = 0; k < n; k++)
        total += ws[k];
    int x = 0;
    for (int k = 0; k < n; k++) {
        int w = k == n - 1 ? cols - x : cols * ws[k] / total;
        set_rect(&L->r[ids[k]], y, x, h, w);
        x += w;
    }
}

int ui_layout_is_line(const ui_layout *L, int id)
{
    return id >= 0 && id < UI_NBODY && L->r[id].visible && L->r[id].h == 1;
}

void ui_layout_compute(int rows, int cols, int focus, int zoom, int flags, ui_layout *L)
{
    memset(L, 0, sizeof *L);
    L->rows = rows;
    L->cols = cols;
    L->flags = flags;
    if (rows < 1 || cols < 1)
        return;
    set_rect(&L->r[UI_PROMPT], rows - 1, 0, 1, cols);
    if (rows < UI_MIN_ROWS || cols < UI_MIN_COLS) {
        L->too_small = 1;
        set_rect(&L->r[UI_LOG], 0, 0, rows - 1, cols);
        return;
    }
    set_rect(&L->r[UI_PROGRESS], rows - 2, 0, 1, cols);
    int body = rows - 2;

    if (zoom >= 0 && zoom < UI_LOG) {
        /* The zoomed panel takes the body; a few log lines stay visible so
         * messages are never lost. */
        int log_h = body / 5;
        log_h = log_h < 3 ? 3 : log_h > 8 ? 8 : log_h;
        set_rect(&L->r[zoom], 0, 0, body - log_h, cols);
        set_rect(&L->r[UI_LOG], body - log_h, 0, log_h, cols);
        return;
    }
    if (zoom == UI_LOG) {
        set_rect(&L->r[UI_LOG], 0, 0, body, cols);
        return;
    }

    if (flags & UI_LAYOUT_NO_GPU) {
        /* Counters and clocks: one line each at the bottom of the body. */
        set_rect(&L->r[UI_COUNTERS], body - 2, 0, 1, cols);
        set_rect(&L->r[UI_CLOCKS], body - 1, 0, 1, cols);
        body -= 2;
    }

    const templ *t = &templates[sizeof templates / sizeof templates[0] - 1];
    for (size_t k = 0; k < sizeof templates / sizeof templates[0]; k++)
        if (cols >= templates[k].min_cols && body >= templates[k].min_body) {
            t = &templates[k];
            break;
        }
    int slot = t->slot_default;
    if (focus >= 0 && focus < UI_LOG && !in_template(t, focus) && !collapsed(flags, focus))
        slot = focus;
    if (collapsed(flags, slot))
        slot = -1; /* already on screen as a line: the slot's room goes to its band */

    int ids[MAX_BANDS][MAX_IN_BAND], ws[MAX_BANDS][MAX_IN_BAND], nb[MAX_BANDS];
    int total = 0;
    for (int b = 0; b < t->nbands; b++) {
        nb[b] = band_members(&t->b[b], slot, flags, ids[b], ws[b]);
        total += t->b[b].weight;
    }
    /* The last band holds the log: it takes what the others leave, and
     * without a GPU two more shares, so the log gets the collapsed room. */
    if (flags & UI_LAYOUT_NO_GPU)
        total += 2;
    int y = 0;
    for (int b = 0; b < t->nbands; b++) {
        if (!nb[b])
            continue;
        int h = b == t->nbands - 1 ? body - y : body * t->b[b].weight / total;
        place_band(L, ids[b], ws[b], nb[b], y, h, cols);
        y += h;
    }
}
