/* The dashboard's bottom status line as text, fit to the terminal's width
 * (a pure function: tests/unit/t_layout.c checks it at 80 columns and
 * below). Parts are dropped whole, least needed first, so nothing is cut
 * mid-word: the rate, then the time left, then the bar; idle, shorter
 * forms of the key help. */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "plot.h"

static void status_idle(char *out, size_t size, int cols)
{
    static const char *const forms[] = {
        "Tab/F2-F10,F12 focus  PgUp/PgDn scroll  F11 or z zoom  Esc cancel  help  quit",
        "Tab/F-keys focus  PgUp/PgDn scroll  F11/z zoom  Esc cancel  help  quit",
        "Tab focus  PgUp/PgDn scroll  z zoom  Esc cancel  quit",
        "Tab focus  z zoom  Esc cancel  quit",
        "z zoom  quit",
    };
    const int nf = (int)(sizeof forms / sizeof forms[0]);
    int k = 0;
    while (k < nf - 1 && (int)strlen(forms[k]) > cols)
        k++;
    snprintf(out, size, "%.*s", cols > 0 ? cols : 0, forms[k]);
}

void ui_status_line(char *out, size_t size, int cols, int running, double frac, const char *what,
                    double rate, double left_s)
{
    if (!running) {
        status_idle(out, size, cols);
        return;
    }
    double f = frac < 0 ? 0 : frac > 1 ? 1 : frac;
    char tails[4][192];
    int nt = 0;
    if (f > 0 && rate > 0) {
        snprintf(tails[nt++], sizeof tails[0], " %3.0f%% %s %.1f%%/s, %.1f s left  Esc cancels",
                 100 * f, what, 100 * rate, left_s);
        snprintf(tails[nt++], sizeof tails[0], " %3.0f%% %s, %.1f s left  Esc cancels", 100 * f,
                 what, left_s);
    }
    snprintf(tails[nt++], sizeof tails[0], " %3.0f%% %s  Esc cancels", 100 * f, what);
    snprintf(tails[nt++], sizeof tails[0], " %3.0f%%  Esc cancels", 100 * f);
    /* With a bar of at least 8 cells where some form leaves room, else the
     * longest form that fits alone. */
    for (int k = 0; k < nt; k++) {
        int bw = cols - (int)strlen(tails[k]) - 2;
        if (bw >= 8) {
            char bar[256];
            if (bw > 255)
                bw = 255;
            ui_plot_bar(bar, bw, f);
            snprintf(out, size, "[%s]%s", bar, tails[k]);
            return;
        }
    }
    for (int k = 0; k < nt; k++)
        if ((int)strlen(tails[k]) <= cols || k == nt - 1) {
            snprintf(out, size, "%.*s", cols > 0 ? cols : 0, tails[k] + 1);
            return;
        }
}
