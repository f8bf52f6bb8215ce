/* Type-ahead queue; see typeahead.h. */
#include "typeahead.h"

#include <string.h>

void ui_ta_clear(ui_typeahead *q)
{
    q->head = q->n = 0;
}

int ui_ta_len(const ui_typeahead *q)
{
    return q->n;
}

int ui_ta_push(ui_typeahead *q, int key)
{
    if (q->n == UI_TA_MAX)
        return -1;
    q->key[(q->head + q->n) % UI_TA_MAX] = key;
    q->n++;
    return 0;
}

int ui_ta_pop(ui_typeahead *q, int *key)
{
    if (q->n == 0)
        return 0;
    *key = q->key[q->head];
    q->head = (q->head + 1) % UI_TA_MAX;
    q->n--;
    return 1;
}

int ui_ta_describe(const ui_typeahead *q, int bs_key, char *buf, size_t size)
{
    /* Rebuild the text in a scratch line, then keep its tail. */
    static char text[UI_TA_MAX * 3 + 1];
    size_t len = 0, line_start = 0;
    int lines = 0;
    for (int i = 0; i < q->n; i++) {
        int k = q->key[(q->head + i) % UI_TA_MAX];
        if (k == '\n' || k == '\r') {
            /* A line with nothing on it runs nothing. */
            int blank = 1;
            for (size_t j = line_start; j < len; j++)
                blank &= text[j] == ' ' || text[j] == '\t';
            if (blank) {
                len = line_start;
                continue;
            }
            lines++;
            memcpy(text + len, "; ", 2);
            len += 2;
            line_start = len;
        } else if (k == 8 || k == 127 || (bs_key && k == bs_key)) {
            if (len > line_start)
                len--;
        } else if (k >= 32 && k < 256 && k != 127) {
            text[len++] = (char)k;
        }
    }
    text[len] = '\0';
    if (size == 0)
        return lines;
    if (len < size) {
        memcpy(buf, text, len + 1);
    } else if (size > 4) {
        memcpy(buf, "...", 3);
        memcpy(buf + 3, text + len - (size - 4), size - 4);
        buf[size - 1] = '\0';
    } else {
        buf[0] = '\0';
    }
    return lines;
}
