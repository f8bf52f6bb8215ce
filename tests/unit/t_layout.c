/* The dashboard layout: no overlap, nothing off screen, log and prompt
 * always there, zoom gives the panel the body, from 80x24 to 250x70. */
#include "check.h"
#include "layout.h"
#include "status.h"

#include <stdlib.h>
#include <string.h>

/* Paint every visible rectangle into a cell map; any cell painted twice or
 * outside the screen is a failure. Returns the first problem or NULL. */
static const char *paint(const ui_layout *L, int rows, int cols)
{
    static char msg[160];
    unsigned char *map = calloc((size_t)rows * cols, 1);
    for (int p = 0; p < UI_NPANEL; p++) {
        const ui_rect *r = &L->r[p];
        if (!r->visible) {
            if (r->h || r->w) {
                snprintf(msg, sizeof msg, "%s hidden with size %dx%d", ui_panel_name(p), r->h,
                         r->w);
                free(map);
                return msg;
            }
            continue;
        }
        if (r->y < 0 || r->x < 0 || r->h <= 0 || r->w <= 0 || r->y + r->h > rows ||
            r->x + r->w > cols) {
            snprintf(msg, sizeof msg, "%s off screen: y=%d x=%d h=%d w=%d on %dx%d",
                     ui_panel_name(p), r->y, r->x, r->h, r->w, cols, rows);
            free(map);
            return msg;
        }
        for (int y = r->y; y < r->y + r->h; y++)
            for (int x = r->x; x < r->x + r->w; x++) {
                if (map[y * cols + x]) {
                    snprintf(msg, sizeof msg, "%s overlaps %s at y=%d x=%d on %dx%d",
                             ui_panel_name(p), ui_panel_name(map[y * cols + x] - 1), y, x, cols,
                             rows);
                    free(map);
                    return msg;
                }
                map[y * cols + x] = (unsigned char)(p + 1);
            }
    }
    free(map);
    return NULL;
}

static int count_visible(const ui_layout *L)
{
    int n = 0;
    for (int p = 0; p < UI_NBODY; p++)
        n += L->r[p].visible;
    return n;
}

TEST(all_sizes_no_overlap_on_screen)
{
    for (int rows = 24; rows <= 70; rows++)
        for (int cols = 80; cols <= 250; cols++)
            for (int focus = 0; focus < UI_NBODY; focus++) {
                ui_layout L;
                ui_layout_compute(rows, cols, focus, -1, 0, &L);
                const char *bad = paint(&L, rows, cols);
                CHECK_MSG(!bad, "%s (focus %d)", bad, focus);
                CHECK(!L.too_small);
                CHECK_MSG(L.r[UI_LOG].visible && L.r[UI_LOG].h >= 3, "log at %dx%d", cols, rows);
                CHECK(L.r[UI_PROMPT].visible);
                CHECK_EQ_INT(L.r[UI_PROMPT].y, rows - 1);
                CHECK_EQ_INT(L.r[UI_PROMPT].w, cols);
                CHECK(L.r[UI_PROGRESS].visible);
                /* Readable: every shown panel holds a border and a line. */
                for (int p = 0; p < UI_NBODY; p++)
                    if (L.r[p].visible)
                        CHECK_MSG(L.r[p].h >= 3 && L.r[p].w >= 10, "%s is %dx%d at %dx%d",
                                  ui_panel_name(p), L.r[p].w, L.r[p].h, cols, rows);
                /* The focused panel is always on screen. */
                CHECK_MSG(L.r[focus].visible, "focused %s hidden at %dx%d", ui_panel_name(focus),
                          cols, rows);
            }
}

TEST(body_is_covered)
{
    /* Without zoom the panels tile the body exactly: no dead cells. */
    int sizes[][2] = {{24, 80}, {25, 81}, {40, 120}, {33, 99}, {70, 250}, {31, 119}, {47, 163}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int rows = sizes[k][0], cols = sizes[k][1];
        ui_layout L;
        ui_layout_compute(rows, cols, UI_LOG, -1, 0, &L);
        long area = 0;
        for (int p = 0; p < UI_NPANEL; p++)
            area += (long)L.r[p].h * L.r[p].w;
        CHECK_EQ_INT(area, (long)rows * cols);
    }
}

TEST(large_screen_shows_every_panel)
{
    ui_layout L;
    ui_layout_compute(40, 120, UI_LOG, -1, 0, &L);
    CHECK_EQ_INT(count_visible(&L), UI_NBODY);
    ui_layout_compute(70, 250, UI_RUNS, -1, 0, &L);
    CHECK_EQ_INT(count_visible(&L), UI_NBODY);
}

TEST(small_screen_slot_follows_focus)
{
    ui_layout L;
    ui_layout_compute(24, 80, UI_LOG, -1, 0, &L);
    CHECK(L.r[UI_DATASET].visible && L.r[UI_RUNS].visible && L.r[UI_COMPARE].visible);
    CHECK(L.r[UI_HIST].visible);
    CHECK(!L.r[UI_COUNTERS].visible);
    ui_layout_compute(24, 80, UI_COUNTERS, -1, 0, &L);
    CHECK(L.r[UI_COUNTERS].visible);
    CHECK(!L.r[UI_HIST].visible);
}

TEST(zoom_gives_the_body)
{
    int sizes[][2] = {{24, 80}, {40, 120}, {70, 250}, {29, 97}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int rows = sizes[k][0], cols = sizes[k][1];
        for (int z = 0; z < UI_NBODY; z++) {
            ui_layout L;
            ui_layout_compute(rows, cols, z, z, 0, &L);
            CHECK(!paint(&L, rows, cols));
            const ui_rect *r = &L.r[z];
            CHECK_EQ_INT(r->y, 0);
            CHECK_EQ_INT(r->x, 0);
            CHECK_EQ_INT(r->w, cols);
            CHECK(L.r[UI_PROMPT].visible);
            CHECK(L.r[UI_LOG].visible);
            if (z == UI_LOG) {
                CHECK_EQ_INT(r->h, rows - 2);
                CHECK_EQ_INT(count_visible(&L), 1);
            } else {
                /* The body less a short log: at least three quarters of it. */
                CHECK(r->h + L.r[UI_LOG].h == rows - 2);
                CHECK(r->h * 4 >= (rows - 2) * 3);
                CHECK_EQ_INT(count_visible(&L), 2);
            }
        }
    }
}

TEST(too_small_keeps_log_and_prompt)
{
    int sizes[][2] = {{7, 80}, {24, 29}, {3, 10}, {2, 2}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int rows = sizes[k][0], cols = sizes[k][1];
        ui_layout L;
        ui_layout_compute(rows, cols, UI_RUNS, -1, 0, &L);
        CHECK(L.too_small);
        CHECK(!paint(&L, rows, cols));
        CHECK(L.r[UI_PROMPT].visible);
        CHECK(L.r[UI_LOG].visible);
        CHECK_EQ_INT(count_visible(&L), 1);
    }
}

TEST(odd_sizes_between_min_and_80x24)
{
    for (int rows = UI_MIN_ROWS; rows < 30; rows++)
        for (int cols = UI_MIN_COLS; cols < 90; cols++) {
            ui_layout L;
            ui_layout_compute(rows, cols, UI_CURVE, -1, 0, &L);
            CHECK(!L.too_small);
            CHECK_MSG(!paint(&L, rows, cols), "%s", paint(&L, rows, cols));
            CHECK(L.r[UI_LOG].visible && L.r[UI_PROMPT].visible);
            CHECK(L.r[UI_CURVE].visible);
        }
}

TEST(no_gpu_collapses_counters_and_clocks)
{
    /* Without a GPU the counters and clocks panels are one line each, the
     * screen stays tiled exactly, and the log gets more room than with a
     * GPU at the same size. */
    int sizes[][2] = {{24, 80}, {25, 81}, {40, 120}, {33, 99}, {70, 250}, {31, 119}, {47, 163}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int rows = sizes[k][0], cols = sizes[k][1];
        for (int focus = 0; focus < UI_NBODY; focus++) {
            ui_layout L, G;
            ui_layout_compute(rows, cols, focus, -1, UI_LAYOUT_NO_GPU, &L);
            ui_layout_compute(rows, cols, focus, -1, 0, &G);
            const char *bad = paint(&L, rows, cols);
            CHECK_MSG(!bad, "%s (focus %d, no GPU)", bad, focus);
            long area = 0;
            for (int p = 0; p < UI_NPANEL; p++)
                area += (long)L.r[p].h * L.r[p].w;
            CHECK_EQ_INT(area, (long)rows * cols);
            for (int p = UI_COUNTERS; p <= UI_CLOCKS; p++) {
                CHECK_MSG(ui_layout_is_line(&L, p), "%s is a line at %dx%d", ui_panel_name(p), cols,
                          rows);
                CHECK_EQ_INT(L.r[p].w, cols);
                CHECK(!ui_layout_is_line(&G, p));
            }
            /* The two lines sit right above the progress line. */
            CHECK_EQ_INT(L.r[UI_CLOCKS].y, rows - 3);
            CHECK_EQ_INT(L.r[UI_COUNTERS].y, rows - 4);
            for (int p = 0; p < UI_NBODY; p++)
                if (L.r[p].visible && p != UI_COUNTERS && p != UI_CLOCKS)
                    CHECK_MSG(L.r[p].h >= 3 && L.r[p].w >= 10, "%s is %dx%d at %dx%d",
                              ui_panel_name(p), L.r[p].w, L.r[p].h, cols, rows);
            CHECK_MSG((long)L.r[UI_LOG].h * L.r[UI_LOG].w > (long)G.r[UI_LOG].h * G.r[UI_LOG].w,
                      "log no larger without a GPU at %dx%d (focus %d)", cols, rows, focus);
            CHECK(L.r[focus].visible);
            CHECK(L.r[UI_DATASET].visible && L.r[UI_RUNS].visible);
        }
    }
    /* Zoom still gives a collapsed panel the body. */
    ui_layout L;
    ui_layout_compute(24, 80, UI_COUNTERS, UI_COUNTERS, UI_LAYOUT_NO_GPU, &L);
    CHECK(!ui_layout_is_line(&L, UI_COUNTERS));
    CHECK_EQ_INT(L.r[UI_COUNTERS].w, 80);
    CHECK(L.r[UI_COUNTERS].h >= 15);
}

TEST(function_keys_one_per_panel)
{
    /* F2 ... F10 in order, then the lab on F12: F11 is the zoom key. */
    int used[64] = {0};
    for (int p = 0; p < UI_NBODY; p++) {
        int k = ui_panel_fkey(p);
        CHECK_MSG(k >= 2 && k <= 12 && k != 11, "%s on F%d", ui_panel_name(p), k);
        CHECK(!used[k]);
        used[k] = 1;
        CHECK_EQ_INT(ui_panel_of_fkey(k), p);
    }
    CHECK_EQ_INT(ui_panel_fkey(UI_LAB), 12);
    CHECK_EQ_INT(ui_panel_fkey(UI_LOG), 10);
    CHECK_EQ_INT(ui_panel_of_fkey(11), -1);
    CHECK_EQ_INT(ui_panel_fkey(UI_PROMPT), 0);
    /* At 120x40 the lab and the k-distance panel share a band, and the
     * log has the full width. */
    ui_layout L;
    ui_layout_compute(40, 120, UI_LOG, -1, UI_LAYOUT_NO_GPU, &L);
    CHECK(L.r[UI_LAB].visible && L.r[UI_KDIST].visible);
    CHECK_EQ_INT(L.r[UI_LAB].y, L.r[UI_KDIST].y);
    CHECK_EQ_INT(L.r[UI_LOG].w, 120);
}

/* The status line fits its width whole: at 80 columns and below, while a
 * long command runs, it still ends with "Esc cancels" (parts dropped, not
 * cut), and the idle help is a complete form, not a cut one. */
TEST(status_line_fits)
{
    char line[512];
    const char *what = "compare cpu-fp8-e4m3 cpu: cpu-fp8-e4m3";
    for (int cols = 30; cols <= 200; cols += 10) {
        ui_status_line(line, sizeof line, cols, 1, 0.42, what, 0.0123, 47.1);
        CHECK_MSG((int)strlen(line) <= cols, "%d columns: '%s'", cols, line);
        size_t n = strlen(line);
        CHECK_MSG(n >= 11 && strcmp(line + n - 11, "Esc cancels") == 0, "%d columns: '%s'", cols,
                  line);
        CHECK_MSG(strstr(line, "42%") != NULL, "%d columns: '%s'", cols, line);
        ui_status_line(line, sizeof line, cols, 0, 0, "", 0, 0);
        CHECK_MSG((int)strlen(line) <= cols, "%d columns idle: '%s'", cols, line);
        n = strlen(line);
        CHECK_MSG(n >= 4 && strcmp(line + n - 4, "quit") == 0, "%d columns idle: '%s'", cols, line);
    }
    /* Wide: everything, the bar first. */
    ui_status_line(line, sizeof line, 160, 1, 0.5, "run cpu", 0.1, 5);
    CHECK(line[0] == '[');
    CHECK_STR_CONTAINS(line, "]  50% run cpu 10.0%/s, 5.0 s left  Esc cancels");
    /* 80 columns, a long name: the rate goes before the name or the bar. */
    ui_status_line(line, sizeof line, 80, 1, 0.42, what, 0.0123, 47.1);
    CHECK_STR_CONTAINS(line, what);
}
