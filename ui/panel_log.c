/* Log panel: command output, newest at the bottom, long lines wrapped;
 * scroll goes back by screen rows. */
#include <string.h>

#include "panels.h"
#include "plot.h"

void ui_panel_log(WINDOW *w, const ui_view *v, const ui_pctx *c)
{
    int h, wd;
    ui_inner(w, &h, &wd);
    if (wd < 1)
        return;
    int skip = c->scroll; /* screen rows hidden below the bottom */
    int row = h - 1;
    for (int k = v->log_n - 1; row >= 0 && k >= 0; k--) {
        int err;
        const char *s = ui_view_log_line(v, k, &err);
        int len = (int)strlen(s);
        if (len && s[len - 1] == '\x01')
            len--; /* an open line's marker */
        /* Wrapped at spaces, so a word is never split across rows. */
        int st[256], cnt[256];
        int parts = ui_wrap(s, len, wd, st, cnt, 256);
        for (int p = parts - 1; p >= 0 && row >= 0; p--) {
            if (skip > 0) {
                skip--;
                continue;
            }
            char piece[1024];
            int n = cnt[p] < (int)sizeof piece - 1 ? cnt[p] : (int)sizeof piece - 1;
            memcpy(piece, s + st[p], (size_t)n);
            piece[n] = '\0';
            if (err)
                wattron(w, ui_attr(c, UI_C_ERR));
            ui_put(w, row--, 0, piece);
            if (err)
                wattroff(w, ui_attr(c, UI_C_ERR));
        }
    }
}
