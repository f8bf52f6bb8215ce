/* The ncurses dashboard: panels (ui/panel_*.c) laid out by ui/layout.c
 * above a progress line and a readline prompt. readline runs through its
 * callback interface, fed one key at a time from wgetch, and draws through
 * rl_redisplay_function into the prompt window, so typing never leaves
 * curses. Output from commands reaches the log panel through the writer's
 * sink; its records update the view model the panels draw. */
#include "dashboard.h"

#include <locale.h>
#include <math.h>
#include <panel.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curses.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "interrupt.h"
#include "cmd.h"
#include "engine.h"
#include "err.h"
#include "gpu_status.h"
#include "layout.h"
#include "out.h"
#include "panels.h"
#include "progress.h"
#include "plot.h"
#include "status.h"
#include "repl.h"
#include "store.h"
#include "typeahead.h"
#include "view.h"
#include "version.h"

#define DASH_HISTORY_MAX 5000
#define DASH_PROMPT "tcjoin> "

typedef struct dash {
    session *s;
    ui_view view;
    ui_layout L;
    WINDOW *win[UI_NPANEL];
    PANEL *pan[UI_NPANEL];
    int focus, zoom;
    int layout_flags; /* UI_LAYOUT_NO_GPU without a CUDA device */
    int scroll[UI_NBODY];
    int color;
    int running; /* inside cmd_exec */
    char run_line[256];
    /* progress */
    char prog_what[64];
    double prog_frac, prog_t0, prog_drawn;
    int prog_on;
    /* readline's one-key input buffer */
    int rl_key, rl_have;
    int quit;
    char *hist;
    nvml_sample series[1024];
    size_t nseries;
    /* Keys typed during a run, fed to the prompt after it (in order). */
    ui_typeahead ahead;
    int ahead_full;   /* said once per run that keys are being dropped */
    char prompt[160]; /* "tcjoin [DATASET eps=E]> " */
} dash;

static dash *D;

typedef void (*panel_draw_fn)(WINDOW *, const ui_view *, const ui_pctx *);
static const panel_draw_fn draw_fns[UI_NBODY] = {
    ui_panel_dataset,  ui_panel_runs,   ui_panel_compare, ui_panel_curve, ui_panel_hist,
    ui_panel_counters, ui_panel_clocks, ui_panel_kdist,   ui_panel_lab,   ui_panel_log,
};

/* ---- windows ---- */

static void dash_free_windows(dash *d)
{
    for (int p = 0; p < UI_NPANEL; p++) {
        if (d->pan[p])
            del_panel(d->pan[p]);
        if (d->win[p])
            delwin(d->win[p]);
        d->pan[p] = NULL;
        d->win[p] = NULL;
    }
}

static void dash_layout(dash *d)
{
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    dash_free_windows(d);
    ui_layout_compute(rows, cols, d->focus, d->zoom, d->layout_flags, &d->L);
    for (int p = 0; p < UI_NPANEL; p++) {
        const ui_rect *r = &d->L.r[p];
        if (!r->visible)
            continue;
        d->win[p] = newwin(r->h, r->w, r->y, r->x);
        if (!d->win[p])
            continue;
        d->pan[p] = new_panel(d->win[p]);
    }
    if (d->win[UI_PROMPT]) {
        keypad(d->win[UI_PROMPT], TRUE);
        wtimeout(d->win[UI_PROMPT], 200);
        top_panel(d->pan[UI_PROMPT]);
    }
}

static ui_pctx dash_pctx(dash *d, int p)
{
    ui_pctx c;
    memset(&c, 0, sizeof c);
    c.scroll = p < UI_NBODY ? d->scroll[p] : 0;
    c.color = d->color;
    d->nseries = nvml_series(d->series, sizeof d->series / sizeof d->series[0]);
    c.series = d->series;
    c.nseries = d->nseries;
    c.nvml_note = nvml_unavailable_reason();
    c.live = nvml_sampler_running();
    return c;
}

/* How far a panel can scroll: lines it has beyond its inside height. */
static int dash_scroll_max(dash *d, int p)
{
    int inner = d->L.r[p].h - 2;
    int lines = 0;
    switch (p) {
    case UI_LOG:
        lines = d->view.log_n;
        break;
    case UI_RUNS:
        lines = d->view.nruns + 1;
        break;
    case UI_COUNTERS:
        lines = d->view.ncnt + 2;
        break;
    default:
        return 0;
    }
    return lines > inner ? lines - inner : 0;
}

/* A panel collapsed to one line (no GPU): its title and why it is empty. */
static void dash_draw_line(dash *d, int p, const ui_pctx *c)
{
    WINDOW *w = d->win[p];
    char text[256];
    if (p == UI_COUNTERS)
        snprintf(text, sizeof text, "N/A: %s",
                 d->view.cnt_note[0] ? d->view.cnt_note
                                     : "hardware counters need a CUDA device; none here");
    else
        snprintf(text, sizeof text, "N/A: no CUDA device here%s%s",
                 c->nvml_note && c->nvml_note[0] ? "; NVML: " : "",
                 c->nvml_note ? c->nvml_note : "");
    int focused = p == d->focus;
    wattron(w, ui_attr(c, focused ? UI_C_FOCUS : UI_C_TITLE));
    mvwprintw(w, 0, 0, " F%d %s ", ui_panel_fkey(p), ui_panel_name(p));
    wattroff(w, ui_attr(c, focused ? UI_C_FOCUS : UI_C_TITLE));
    int x = getcurx(w), W = getmaxx(w);
    wattron(w, ui_attr(c, UI_C_DIM));
    if (x < W)
        mvwaddnstr(w, 0, x, text, W - x);
    wattroff(w, ui_attr(c, UI_C_DIM));
}

static void dash_draw_panel(dash *d, int p)
{
    WINDOW *w = d->win[p];
    if (!w)
        return;
    ui_pctx c = dash_pctx(d, p);
    werase(w);
    if (ui_layout_is_line(&d->L, p)) {
        dash_draw_line(d, p, &c);
        wnoutrefresh(w);
        return;
    }
    int focused = p == d->focus;
    attr_t a = ui_attr(&c, focused ? UI_C_FOCUS : UI_C_DIM);
    wattron(w, a);
    box(w, 0, 0);
    wattroff(w, a);
    wattron(w, ui_attr(&c, focused ? UI_C_FOCUS : UI_C_TITLE));
    mvwprintw(w, 0, 2, " F%d %s%s ", ui_panel_fkey(p),
              p == UI_KDIST ? ui_panel_kdist_title(&d->view) : ui_panel_name(p),
              d->zoom == p ? " (zoom)" : "");
    wattroff(w, ui_attr(&c, focused ? UI_C_FOCUS : UI_C_TITLE));
    if (c.scroll) {
        int H, W;
        getmaxyx(w, H, W);
        mvwprintw(w, H - 1, W - 12 > 0 ? W - 12 : 0, " +%d ", c.scroll);
    }
    if (p == UI_LOG && d->L.too_small) {
        /* The log holds the whole screen; say why there are no panels. */
        mvwprintw(w, 0, 0, "terminal too small (%dx%d): need %dx%d", d->L.cols, d->L.rows,
                  UI_MIN_COLS, UI_MIN_ROWS);
    }
    draw_fns[p](w, &d->view, &c);
    wnoutrefresh(w);
}

static void dash_draw_progress(dash *d)
{
    WINDOW *w = d->win[UI_PROGRESS];
    if (!w)
        return;
    werase(w);
    int W = getmaxx(w);
    char line[512];
    if (d->prog_on) {
        double el = engine_now() - d->prog_t0;
        double f = d->prog_frac < 0 ? 0 : d->prog_frac > 1 ? 1 : d->prog_frac;
        double rate = el > 0 ? f / el : 0;
        ui_status_line(line, sizeof line, W, 1, f, d->prog_what, rate,
                       rate > 0 ? (1 - f) / rate : 0);
        mvwaddnstr(w, 0, 0, line, W);
    } else {
        ui_pctx c = {0};
        c.color = d->color;
        ui_status_line(line, sizeof line, W, 0, 0, "", 0, 0);
        wattron(w, ui_attr(&c, UI_C_DIM));
        mvwaddnstr(w, 0, 0, line, W);
        wattroff(w, ui_attr(&c, UI_C_DIM));
    }
    wnoutrefresh(w);
}

static void dash_draw_prompt(dash *d)
{
    WINDOW *w = d->win[UI_PROMPT];
    if (!w)
        return;
    werase(w);
    int W = getmaxx(w);
    if (d->running || ui_ta_len(&d->ahead)) {
        /* The run, then what was typed meanwhile (it runs next). */
        char pend[256] = "";
        int lines = ui_ta_describe(&d->ahead, KEY_BACKSPACE, pend, sizeof pend);
        if (d->running)
            mvwprintw(w, 0, 0, "running: %.*s", W > 10 ? W - 10 : 0, d->run_line);
        if (ui_ta_len(&d->ahead)) {
            int x = getcurx(w);
            char head[48];
            snprintf(head, sizeof head, "%squeued %d: ", d->running ? "  " : "", lines);
            if (x + (int)strlen(head) < W - 4) {
                ui_pctx c = {0};
                c.color = d->color;
                wattron(w, ui_attr(&c, UI_C_WARN));
                mvwaddnstr(w, 0, x, head, W - x);
                wattroff(w, ui_attr(&c, UI_C_WARN));
                x += (int)strlen(head);
                /* the newest keys matter most: keep the tail */
                int room = W - x - 1;
                int len = (int)strlen(pend);
                mvwaddnstr(w, 0, x, len > room ? pend + len - room : pend, room);
            }
        }
        wnoutrefresh(w);
        return;
    }
    const char *prompt = rl_display_prompt ? rl_display_prompt : DASH_PROMPT;
    int pl = (int)strlen(prompt);
    const char *line = rl_line_buffer ? rl_line_buffer : "";
    int point = rl_point;
    /* Scroll the line horizontally so the cursor stays in view. */
    int room = W - pl - 1;
    int off = 0;
    if (room < 1)
        room = 1;
    if (point > room)
        off = point - room;
    mvwaddnstr(w, 0, 0, prompt, W);
    if (pl < W)
        mvwaddnstr(w, 0, pl, line + off, W - pl);
    int cx = pl + point - off;
    wmove(w, 0, cx < W ? cx : W - 1);
    wnoutrefresh(w);
}

static void dash_draw_all(dash *d)
{
    for (int p = 0; p < UI_NBODY; p++)
        if (d->win[p])
            dash_draw_panel(d, p);
    dash_draw_progress(d);
    update_panels();
    dash_draw_prompt(d);
    doupdate();
}

static void dash_relayout(dash *d)
{
    dash_layout(d);
    clearok(curscr, TRUE);
    dash_draw_all(d);
}

/* ---- output sink ---- */

static void dash_set_focus(dash *d, int p)
{
    int was_visible = d->L.r[p].visible;
    d->focus = p;
    if (d->zoom >= 0 && d->zoom != p)
        d->zoom = p;
    if (!was_visible || d->zoom >= 0)
        dash_layout(d);
}

static void dash_update_prompt(dash *d);

static void dash_sink(void *ctx, out_kind kind, const char *text)
{
    dash *d = ctx;
    switch (kind) {
    case OUT_TEXT:
        ui_view_log(&d->view, text, 0);
        break;
    case OUT_ERROR:
    case OUT_CANCEL: {
        size_t n = strlen(text) + 16;
        char *line = xmalloc(n);
        /* The user stopped it (Esc, Ctrl-C): a cancellation, not a failure. */
        int cancelled = kind == OUT_CANCEL;
        snprintf(line, n, "%s%s\n", cancelled ? "" : "error: ", text);
        ui_view_log(&d->view, line, !cancelled);
        free(line);
        break;
    }
    case OUT_RECORD: {
        int got = ui_view_record(&d->view, text);
        /* eps or the dataset may have changed mid-line ("gen; eps 3; run"). */
        dash_update_prompt(d);
        if (got == UI_DATASET && d->s->have_ds && !d->view.have_info &&
            (double)d->s->ds.n * (double)d->s->ds.d <= 2e7) {
            dataset_info in;
            dataset_info_compute(&d->s->ds, &in);
            ui_view *v = &d->view;
            v->have_info = 1;
            v->vmin = in.min, v->vmax = in.max, v->absmax = in.absmax;
            v->fp16_over = (double)in.fp16_overflow;
            v->fp16_under = (double)in.fp16_underflow;
            v->dups = (double)in.duplicates;
        }
        /* New data in a panel that this size hides: show it in the slot. */
        if (got >= 0 && got < UI_NBODY && !d->L.r[got].visible && d->zoom < 0)
            dash_set_focus(d, got);
        break;
    }
    }
    d->scroll[UI_LOG] = 0;
    if (d->running)
        dash_draw_all(d);
}

/* ---- the session log as a source ---- */

static int dash_run_row(void *ctx, const store_run_brief *r)
{
    ui_view *v = ctx;
    ui_run_row row;
    memset(&row, 0, sizeof row);
    row.id = r->id;
    snprintf(row.engine, sizeof row.engine, "%.23s", r->engine);
    row.eps = r->eps;
    row.sel = r->selectivity;
    row.time_s = r->seconds;
    row.tflops = r->tflops;
    row.pairs = r->pairs;
    row.failed = r->status != 0;
    row.cancelled = r->status == TCJ_ECANCEL;
    ui_view_add_run(v, &row);
    return 0;
}

/* Runs made by commands that emit no "run" record (compare, sweep) and
 * failed or cancelled runs come from the session log. */
static void dash_sync_runs(dash *d)
{
    if (!d->s->db)
        return;
    if (store_session_runs(d->s->db, d->s->session_id, 64, dash_run_row, &d->view) != 0)
        err_clear();
}

/* ---- front-end hooks for long work ---- */

static void dash_progress(void *ctx, const char *what, double frac)
{
    dash *d = ctx;
    double now = engine_now();
    if (progress_restarts(d->prog_on, d->prog_frac, frac)) {
        d->prog_t0 = now;
        d->prog_on = 1;
    }
    snprintf(d->prog_what, sizeof d->prog_what, "%s", what);
    d->prog_frac = frac;
    if (now - d->prog_drawn < 0.05)
        return;
    d->prog_drawn = now;
    dash_draw_progress(d);
    if (nvml_sampler_running())
        dash_draw_panel(d, UI_CLOCKS);
    update_panels();
    dash_draw_prompt(d);
    doupdate();
}

static int dash_key(dash *d, int ch);

/* A cancel drops what was typed ahead too: it was meant to follow the
 * cancelled work (a pasted tour would go on without its eps). */
static void dash_drop_ahead(dash *d)
{
    char pend[64];
    int lines = ui_ta_describe(&d->ahead, KEY_BACKSPACE, pend, sizeof pend);
    if (ui_ta_len(&d->ahead)) {
        char msg[128];
        snprintf(msg, sizeof msg, "dropped what was typed ahead (%d line%s)\n", lines,
                 lines == 1 ? "" : "s");
        ui_view_log(&d->view, msg, 0);
    }
    ui_ta_clear(&d->ahead);
}

static void dash_poll(void *ctx)
{
    dash *d = ctx;
    WINDOW *w = d->win[UI_PROMPT];
    if (!w)
        return;
    wtimeout(w, 0);
    int ch, typed = 0;
    while ((ch = wgetch(w)) != ERR) {
        if (ch == 27 || ch == 3) {
            if (!d->s->cancel)
                ui_view_log(&d->view, "cancelling...\n", 0);
            d->s->cancel = 1;
            dash_drop_ahead(d);
        } else if (ch == KEY_RESIZE) {
            dash_relayout(d);
            w = d->win[UI_PROMPT];
            if (!w)
                return;
            wtimeout(w, 0);
        } else if (ch == KEY_PPAGE || ch == KEY_NPAGE || ch == KEY_BTAB || ch == KEY_F(11) ||
                   (ch >= KEY_F(0) && ch <= KEY_F(63) && ui_panel_of_fkey(ch - KEY_F(0)) >= 0)) {
            /* Looking around stays live during a run. */
            dash_key(d, ch);
            w = d->win[UI_PROMPT];
            if (!w)
                return;
            wtimeout(w, 0);
        } else if (ui_ta_push(&d->ahead, ch) == 0) {
            typed = 1; /* typed ahead: runs after this command */
        } else if (ui_ta_len(&d->ahead) == UI_TA_MAX && !d->ahead_full) {
            d->ahead_full = 1;
            ui_view_log(&d->view, "type-ahead full: further keys are dropped until the run ends\n",
                        1);
        }
    }
    wtimeout(w, 200);
    if (typed) {
        dash_draw_prompt(d);
        doupdate();
    }
}

static void dash_refresh(void *ctx)
{
    dash_sync_runs(ctx);
    dash_draw_all(ctx);
}

static const ui_hooks dash_hooks = {dash_progress, dash_poll, dash_refresh};

/* ---- readline glue ---- */

static int dash_rl_getc(FILE *f)
{
    (void)f;
    while (!D->rl_have) {
        int ch;
        if (!ui_ta_pop(&D->ahead, &ch))
            ch = wgetch(D->win[UI_PROMPT] ? D->win[UI_PROMPT] : stdscr);
        if (ch != ERR && ch < 256) {
            D->rl_key = ch;
            D->rl_have = 1;
        }
    }
    D->rl_have = 0;
    return D->rl_key;
}

static int dash_rl_avail(void)
{
    return D->rl_have;
}

static void dash_rl_redisplay(void)
{
    dash_draw_prompt(D);
    doupdate();
}

static void dash_rl_noprep(int meta)
{
    (void)meta;
}

static void dash_rl_nodeprep(void) {}

/* Several completions: list them in the log instead of on the terminal. */
static void dash_rl_matches(char **matches, int n, int maxlen)
{
    char line[1024];
    size_t k = 0;
    line[0] = '\0';
    for (int i = 1; i <= n && k < sizeof line - 2; i++)
        k += (size_t)snprintf(line + k, sizeof line - k, "%s%s", i > 1 ? "  " : "", matches[i]);
    ui_view_log(&D->view, line, 0);
    ui_view_log(&D->view, "\n", 0);
    D->scroll[UI_LOG] = 0;
    if (D->win[UI_LOG])
        dash_draw_panel(D, UI_LOG);
    update_panels();
    dash_draw_prompt(D);
    doupdate();
}

/* The prompt names the dataset and eps the next command works on, so they
 * are always in view: "tcjoin [letter.csv eps=3]> ". */
static void dash_update_prompt(dash *d)
{
    char p[sizeof d->prompt];
    const session *s = d->s;
    if (!s->have_ds && !s->have_eps) {
        snprintf(p, sizeof p, "%s", DASH_PROMPT);
    } else {
        char eps[32] = "unset";
        if (s->have_eps)
            snprintf(eps, sizeof eps, "%.6g", s->eps);
        const char *name = s->have_ds ? s->ds.name : "no dataset";
        size_t nl = strlen(name);
        /* a long name keeps its end (the slice, the file) */
        if (nl > 28)
            snprintf(p, sizeof p, "tcjoin [...%s eps=%s]> ", name + nl - 25, eps);
        else
            snprintf(p, sizeof p, "tcjoin [%s eps=%s]> ", name, eps);
    }
    if (strcmp(p, d->prompt) != 0) {
        snprintf(d->prompt, sizeof d->prompt, "%s", p);
        rl_set_prompt(d->prompt);
    }
    d->view.cur_have_eps = s->have_eps;
    d->view.cur_eps = s->eps;
}

/* Execute one line as if typed: echo it, run it with progress and the
 * cancel key live, then redraw from the results. */
static void dash_exec(dash *d, const char *line)
{
    size_t n = strlen(line) + sizeof d->prompt + 16;
    char *echo = xmalloc(n);
    snprintf(echo, n, "%s%s\n", d->prompt[0] ? d->prompt : DASH_PROMPT, line);
    ui_view_log(&d->view, echo, 0);
    free(echo);
    snprintf(d->run_line, sizeof d->run_line, "%s", line);
    d->running = 1;
    d->ahead_full = 0;
    d->s->cancel = 0;
    d->prog_on = 0;
    dash_draw_all(d);
    interrupt_busy = 1;
    cmd_exec(d->s, line);
    interrupt_busy = 0;
    if (interrupt_pending) /* Ctrl-C cancelled it: drop the type-ahead as Esc does */
        dash_drop_ahead(d);
    interrupt_pending = 0;
    d->running = 0;
    d->prog_on = 0;
    d->s->cancel = 0; /* the command itself reports the cancellation */
    if (d->s->quit)
        d->quit = 1;
    dash_update_prompt(d);
    dash_sync_runs(d);
}

static void dash_on_line(char *line)
{
    dash *d = D;
    if (!line) {
        d->quit = 1;
        return;
    }
    char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p) {
        add_history(line);
        if (d->hist)
            append_history(1, d->hist);
        dash_exec(d, line);
    }
    free(line);
    dash_draw_all(d);
}

/* ---- keys ---- */

static void dash_scroll(dash *d, int dir)
{
    int p = d->focus;
    int page = d->L.r[p].h > 4 ? d->L.r[p].h - 3 : 1;
    /* The log scrolls back in time with PgUp; tables scroll down with PgDn. */
    int delta = p == UI_LOG ? -dir * page : dir * page;
    int s = d->scroll[p] + delta;
    int max = dash_scroll_max(d, p);
    d->scroll[p] = s < 0 ? 0 : s > max ? max : s;
}

static int line_empty(void)
{
    return !rl_line_buffer || rl_line_buffer[0] == '\0';
}

static void dash_feed(int ch)
{
    D->rl_key = ch;
    D->rl_have = 1;
    rl_callback_read_char();
}

/* Returns 1 when the key was a dashboard key (not for readline). */
static int dash_key(dash *d, int ch)
{
    switch (ch) {
    case KEY_RESIZE:
        dash_relayout(d);
        return 1;
    case '\t':
        if (!line_empty())
            return 0;
        dash_set_focus(d, (d->focus + 1) % UI_NBODY);
        break;
    case KEY_BTAB:
        dash_set_focus(d, (d->focus + UI_NBODY - 1) % UI_NBODY);
        break;
    case KEY_PPAGE:
        dash_scroll(d, -1);
        break;
    case KEY_NPAGE:
        dash_scroll(d, 1);
        break;
    case KEY_F(11):
    zoom:
        d->zoom = d->zoom >= 0 ? -1 : d->focus;
        dash_layout(d);
        break;
    case 'z':
        if (!line_empty())
            return 0;
        goto zoom;
    case 27: /* Esc: leave zoom, else clear the line */
        if (d->zoom >= 0) {
            d->zoom = -1;
            dash_layout(d);
        } else {
            rl_replace_line("", 0);
            rl_point = 0;
        }
        break;
    case KEY_LEFT:
        rl_backward_char(1, 0);
        break;
    case KEY_RIGHT:
        rl_forward_char(1, 0);
        break;
    case KEY_UP:
        rl_get_previous_history(1, 0);
        break;
    case KEY_DOWN:
        rl_get_next_history(1, 0);
        break;
    case KEY_HOME:
        rl_beg_of_line(1, 0);
        break;
    case KEY_END:
        rl_end_of_line(1, 0);
        break;
    case KEY_DC:
        rl_delete(1, 0);
        break;
    case KEY_BACKSPACE:
        dash_feed(127);
        return 1;
    case KEY_ENTER:
        dash_feed('\n');
        return 1;
    default:
        if (ch >= KEY_F(0) && ch <= KEY_F(63) && ui_panel_of_fkey(ch - KEY_F(0)) >= 0) {
            dash_set_focus(d, ui_panel_of_fkey(ch - KEY_F(0)));
            break;
        }
        if (ch >= 256)
            return 1; /* other function keys: ignored */
        return 0;
    }
    dash_draw_all(d);
    return 1;
}

/* ---- setup ---- */

static void dash_colors(dash *d)
{
    d->color = 0;
    if (!has_colors() || getenv("NO_COLOR"))
        return;
    start_color();
    use_default_colors();
    init_pair(UI_C_TITLE, COLOR_CYAN, -1);
    init_pair(UI_C_ERR, COLOR_RED, -1);
    init_pair(UI_C_BAR, COLOR_GREEN, -1);
    init_pair(UI_C_WARN, COLOR_YELLOW, -1);
    init_pair(UI_C_DIM, COLOR_BLUE, -1);
    init_pair(UI_C_FOCUS, COLOR_BLACK, COLOR_CYAN);
    d->color = 1;
}

int ui_dashboard_run(session *s)
{
    return ui_dashboard_run_init(s, NULL);
}

int ui_dashboard_run_init(session *s, const char *init)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return err_set(TCJ_EUNSUP, "the dashboard needs a terminal");
    const char *term = getenv("TERM");
    if (!term || !*term || strcmp(term, "dumb") == 0)
        return err_set(TCJ_EUNSUP, "TERM=%s cannot host the dashboard", term ? term : "");
    setlocale(LC_ALL, "");
    SCREEN *scr = newterm(NULL, stdout, stdin);
    if (!scr)
        return err_set(TCJ_EUNSUP, "cannot start curses on TERM=%s", term);
    int rows, cols;
    getmaxyx(stdscr, rows, cols);
    (void)rows;
    (void)cols;

    static dash d;
    memset(&d, 0, sizeof d);
    D = &d;
    d.s = s;
    d.focus = UI_LOG;
    d.zoom = -1;
    /* No device, no counters or clocks to show: give their room to the log. */
    d.layout_flags = gpu_status_devices() > 0 ? 0 : UI_LAYOUT_NO_GPU;
    err_clear();
    ui_view_init(&d.view);

    cbreak(); /* not raw: Ctrl-C stays SIGINT, handled by app.c */
    noecho();
    nonl();
    set_escdelay(25);
    curs_set(1);
    dash_colors(&d);
    dash_layout(&d);

    /* readline: input from our key buffer, output drawn by us, no terminal
     * or signal handling of its own. */
    d.hist = repl_history_path();
    using_history();
    stifle_history(DASH_HISTORY_MAX);
    if (d.hist) {
        FILE *f = fopen(d.hist, "a");
        if (f)
            fclose(f);
        read_history(d.hist);
    }
    FILE *devnull = fopen("/dev/null", "w");
    rl_instream = stdin;
    rl_outstream = devnull ? devnull : stdout;
    rl_catch_signals = 0;
    rl_catch_sigwinch = 0;
    rl_change_environment = 0;
    rl_getc_function = dash_rl_getc;
    rl_input_available_hook = dash_rl_avail;
    rl_redisplay_function = dash_rl_redisplay;
    rl_prep_term_function = dash_rl_noprep;
    rl_deprep_term_function = dash_rl_nodeprep;
    rl_completion_display_matches_hook = dash_rl_matches;
    repl_completion_install();
    rl_callback_handler_install(DASH_PROMPT, dash_on_line);
    dash_update_prompt(&d);

    out_set_sink(dash_sink, &d);
    s->ui = &dash_hooks;
    s->ui_ctx = &d;
    ui_view_log(&d.view, "tcjoin " TCJ_VERSION ": type help for the commands, quit to leave\n", 0);
    nvml_open();
    if (nvml_unavailable_reason()[0]) {
        char line[256];
        snprintf(line, sizeof line, "NVML: %s (clocks and power are N/A)\n",
                 nvml_unavailable_reason());
        ui_view_log(&d.view, line, 0);
    }
    dash_draw_all(&d);
    if (init && *init) {
        dash_exec(&d, init);
        dash_draw_all(&d);
    }

    while (!d.quit && !s->quit) {
        WINDOW *w = d.win[UI_PROMPT] ? d.win[UI_PROMPT] : stdscr;
        int ch;
        /* Keys typed during the last run first, as if typed now. */
        if (!ui_ta_pop(&d.ahead, &ch))
            ch = wgetch(w);
        if (ch == ERR) {
            if (interrupt_pending) {
                /* Ctrl-C at the prompt: drop the line. */
                interrupt_pending = 0;
                rl_replace_line("", 0);
                rl_point = 0;
                dash_draw_all(&d);
            }
            continue;
        }
        if (dash_key(&d, ch))
            continue;
        if (ch == '\r')
            ch = '\n';
        dash_feed(ch);
    }

    rl_callback_handler_remove();
    if (d.hist) {
        history_truncate_file(d.hist, DASH_HISTORY_MAX);
        free(d.hist);
    }
    s->ui = NULL;
    s->ui_ctx = NULL;
    out_reset_sink();
    dash_free_windows(&d);
    endwin();
    delscreen(scr);
    if (devnull)
        fclose(devnull);
    rl_outstream = stdout;
    ui_view_free(&d.view);
    D = NULL;
    return 0;
}
