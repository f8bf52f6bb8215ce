/* Type-ahead: keys typed or pasted while a command runs, kept in order and
 * fed to the prompt afterwards, as a shell does. No ncurses here, so it is
 * unit-tested (tests/unit/t_typeahead.c). */
#ifndef TCJ_UI_TYPEAHEAD_H
#define TCJ_UI_TYPEAHEAD_H

#include <stddef.h>

#define UI_TA_MAX 8192 /* keys; a pasted tour is a few hundred */

typedef struct ui_typeahead {
    int key[UI_TA_MAX];
    int head, n;
} ui_typeahead;

void ui_ta_clear(ui_typeahead *q);
/* Queue a key (a character or a curses KEY_* code); -1 when full. */
int ui_ta_push(ui_typeahead *q, int key);
/* Take the oldest key; 0 when there is none. */
int ui_ta_pop(ui_typeahead *q, int *key);
int ui_ta_len(const ui_typeahead *q);
/* The pending text as one line: complete lines joined by "; ", then the
 * line still being typed; Backspace (8, 127 or bs_key) applied, other
 * non-printing keys left out; cut to size with "..." in front. Returns the
 * number of complete lines (each will run as a command). */
int ui_ta_describe(const ui_typeahead *q, int bs_key, char *buf, size_t size);

#endif
