/* Progress on stderr: see progress.h. */
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "engine.h"
#include "out.h"

/* Quick commands draw nothing: a line only after this many seconds. */
#define PROGRESS_DELAY 0.5
#define PROGRESS_EVERY 0.1

static struct {
    int shown;
    char what[64];
    double t0, last, frac;
} pr;

void progress_format(char *buf, size_t size, int width, const char *what, double frac,
                     double elapsed)
{
    if (size == 0)
        return;
    double f = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    if (width >= (int)size)
        width = (int)size - 1;
    char tail[96];
    double rate = elapsed > 0 ? f / elapsed : 0;
    if (f > 0 && rate > 0 && f < 1) {
        double left = (1 - f) / rate;
        if (left < 90)
            snprintf(tail, sizeof tail, " %.1f %%/s, %.0f s left", 100 * rate, left);
        else
            snprintf(tail, sizeof tail, " %.1f %%/s, %.0f min left", 100 * rate, left / 60);
    } else {
        snprintf(tail, sizeof tail, " %.0f s", elapsed);
    }
    char head[96];
    snprintf(head, sizeof head, "%s %3.0f%% ", what, 100 * f);
    int bar = width - (int)strlen(head) - (int)strlen(tail) - 2;
    if (bar > 40)
        bar = 40;
    if (bar < 5) {
        /* Too narrow for a bar: the percentage alone, cut to width. */
        snprintf(buf, size, "%s", head);
        if ((int)strlen(buf) > width && width >= 0)
            buf[width] = '\0';
        return;
    }
    int fill = (int)(f * bar + 0.5);
    size_t k = (size_t)snprintf(buf, size, "%s[", head);
    for (int i = 0; i < bar && k + 1 < size; i++)
        buf[k++] = i < fill ? '#' : ' ';
    buf[k] = '\0';
    snprintf(buf + k, size - k, "]%s", tail);
}

static int progress_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col - 1; /* never the last column: no wrap */
    return 79;
}

static void progress_erase(void)
{
    if (!pr.shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pr.shown = 0;
}

void progress_clear(void)
{
    progress_erase();
    pr.t0 = 0;
    pr.frac = 0;
    pr.what[0] = '\0';
}

int progress_restarts(int on, double prev_frac, double frac)
{
    return !on || frac < prev_frac;
}

static void progress_draw(void *ctx, const char *what, double frac)
{
    (void)ctx;
    double now = engine_now();
    if (progress_restarts(pr.t0 != 0, pr.frac, frac)) {
        pr.t0 = now;
        pr.last = 0;
    }
    snprintf(pr.what, sizeof pr.what, "%s", what);
    pr.frac = frac;
    if (now - pr.t0 < PROGRESS_DELAY || now - pr.last < PROGRESS_EVERY)
        return;
    pr.last = now;
    char line[512];
    progress_format(line, sizeof line, progress_width(), what, frac, now - pr.t0);
    fflush(stdout);
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
    pr.shown = 1;
}

/* Output erases the line first, so text never lands after a bar. */
static void progress_sink(void *ctx, out_kind kind, const char *text)
{
    progress_erase();
    out_default_sink(ctx, kind, text);
}

static void progress_done(void *ctx)
{
    (void)ctx;
    progress_clear();
}

static const ui_hooks progress_hooks = {progress_draw, NULL, progress_done};

int progress_install(session *s)
{
    if (!isatty(STDERR_FILENO))
        return 0;
    const char *term = getenv("TERM");
    if (term && strcmp(term, "dumb") == 0)
        return 0;
    s->ui = &progress_hooks;
    s->ui_ctx = NULL;
    out_set_sink(progress_sink, NULL);
    return 1;
}
