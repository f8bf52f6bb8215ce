/* The dashboard layout as a pure function: from the terminal size and which
 * panel is focused or zoomed, the rectangle of every panel. Touches no
 * ncurses state, so it is unit-tested headless (tests/unit/t_layout.c). */
#ifndef TCJ_UI_LAYOUT_H
#define TCJ_UI_LAYOUT_H

typedef enum ui_panel_id {
    UI_DATASET,
    UI_RUNS,
    UI_COMPARE,
    UI_CURVE,
    UI_HIST,
    UI_COUNTERS,
    UI_CLOCKS,
    UI_KDIST, /* the k-distance curve of `kdist` and its knee */
    UI_LAB,   /* the precision lab of `precisions`: time against 1 - overlap */
    UI_LOG,
    UI_PROGRESS, /* one line above the prompt */
    UI_PROMPT,   /* the last line */
    UI_NPANEL
} ui_panel_id;

/* Panels that can be focused, scrolled and zoomed: UI_DATASET..UI_LOG. */
#define UI_NBODY (UI_LOG + 1)

typedef struct ui_rect {
    int y, x, h, w; /* top-left corner and size in cells */
    int visible;    /* 0: not shown at this size (h = w = 0) */
} ui_rect;

typedef struct ui_layout {
    int rows, cols;
    int too_small; /* below UI_MIN_ROWS x UI_MIN_COLS: only log and prompt */
    int flags;     /* UI_LAYOUT_* it was computed with */
    ui_rect r[UI_NPANEL];
} ui_layout;

#define UI_MIN_ROWS 8
#define UI_MIN_COLS 30

/* flags: UI_LAYOUT_NO_GPU: no CUDA device here, so the counters and clocks
 * panels can only say N/A: each collapses to one line (no border) above
 * the progress line, and the room goes to the log. */
#define UI_LAYOUT_NO_GPU 1

/* Fill *out for a rows x cols screen. focus: the focused body panel (at
 * small sizes it decides which of the smaller panels gets the shared
 * slot); zoom: a body panel that takes the whole body above a short log,
 * or -1. Log and prompt are always visible (the log may be one line at
 * tiny sizes). */
void ui_layout_compute(int rows, int cols, int focus, int zoom, int flags, ui_layout *out);
/* 1 if panel id is drawn as one line without a border in this layout. */
int ui_layout_is_line(const ui_layout *L, int id);

/* Short title shown on the panel's border ("runs", "clocks", ...). */
const char *ui_panel_name(int id);
/* The function key that focuses a body panel (F2 ... F10 in order, the
 * lab F12: F11 zooms), 0 for the others; and the panel of a function key
 * number, or -1. */
int ui_panel_fkey(int id);
int ui_panel_of_fkey(int n);

#endif
