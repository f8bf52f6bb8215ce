/* The dashboard's status line (ui/status.c), pure text. */
#ifndef TCJ_UI_STATUS_H
#define TCJ_UI_STATUS_H

#include <stddef.h>

/* The status line for a terminal cols wide, into out: while running, a
 * progress bar (frac in [0,1]), what runs, the rate (fraction per second,
 * 0 unknown), the seconds left and "Esc cancels", parts dropped whole to
 * fit; idle, the key help in the longest form that fits. */
void ui_status_line(char *out, size_t size, int cols, int running, double frac, const char *what,
                    double rate, double left_s);

#endif
