/* Type-ahead: keys come back in the order typed; the pending text shows
 * the lines that will run, with Backspace applied. */
#include "check.h"
#include "typeahead.h"

#include <string.h>

static void type(ui_typeahead *q, const char *s)
{
    for (; *s; s++)
        CHECK_EQ_INT(ui_ta_push(q, (unsigned char)*s), 0);
}

TEST(keys_in_order)
{
    static ui_typeahead q;
    ui_ta_clear(&q);
    type(&q, "eps 3\nrun cpu\n");
    CHECK_EQ_INT(ui_ta_len(&q), 14);
    char got[32];
    int k, n = 0;
    while (ui_ta_pop(&q, &k))
        got[n++] = (char)k;
    got[n] = '\0';
    CHECK(strcmp(got, "eps 3\nrun cpu\n") == 0);
    CHECK_EQ_INT(ui_ta_pop(&q, &k), 0);
    /* Wraps around the ring without losing order. */
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < UI_TA_MAX - 1; i++)
            CHECK(ui_ta_push(&q, i) == 0);
        for (int i = 0; i < UI_TA_MAX - 1; i++)
            CHECK(ui_ta_pop(&q, &k) && k == i);
    }
    for (int i = 0; i < UI_TA_MAX; i++)
        ui_ta_push(&q, 'x');
    CHECK_EQ_INT(ui_ta_push(&q, 'y'), -1); /* full: refused, not overwritten */
}

TEST(describe_pending_lines)
{
    static ui_typeahead q;
    ui_ta_clear(&q);
    char b[64];
    CHECK_EQ_INT(ui_ta_describe(&q, 0, b, sizeof b), 0);
    CHECK(strcmp(b, "") == 0);
    type(&q, "eps 3\n\n  \nrun cpx\x7fu\ncompare cpu-fp16 cpu\nsw");
    /* 263 stands for curses' KEY_BACKSPACE; 259 (an arrow) is left out. */
    ui_ta_push(&q, 'x');
    ui_ta_push(&q, 263);
    ui_ta_push(&q, 259);
    CHECK_EQ_INT(ui_ta_describe(&q, 263, b, sizeof b), 3);
    CHECK(strcmp(b, "eps 3; run cpu; compare cpu-fp16 cpu; sw") == 0);
    /* Too long: the newest text is kept, the start cut. */
    CHECK_EQ_INT(ui_ta_describe(&q, 263, b, 12), 3);
    CHECK(strcmp(b, "... cpu; sw") == 0);
    CHECK_EQ_INT((int)strlen(b), 11);
}
