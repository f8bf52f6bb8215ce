/* Control characters escaped in human-readable output: esc_text directly
 * and through the output writer. */
#include <stdlib.h>

#include "check.h"
#include "esc.h"
#include "out.h"

/* esc_text(in) equals want. */
static int esc_is(const char *in, int keep_newline, const char *want)
{
    char *got = esc_text(in, keep_newline);
    int ok = strcmp(got, want) == 0;
    if (!ok)
        printf("# esc_text: got '%s', want '%s'\n", got, want);
    free(got);
    return ok;
}

TEST(esc_control_characters)
{
    CHECK(esc_is("plain text, tabs\tand\nlines", 1, "plain text, tabs\tand\nlines"));
    CHECK(esc_is("a\033[31mred\033[0m", 1, "a\\x1b[31mred\\x1b[0m"));
    CHECK(esc_is("cr\rbs\bbel\adel\x7f", 1, "cr\\x0dbs\\x08bel\\x07del\\x7f"));
    CHECK(esc_is("one\nline", 0, "one\\x0aline"));
    /* UTF-8 stays, C1 controls (U+0085, U+009B CSI) do not. */
    CHECK(esc_is("caf\xc3\xa9 \xc2\x9b"
                 "2J \xc2\x85",
                 1, "caf\xc3\xa9 \\u009b2J \\u0085"));
    CHECK(!esc_needed("caf\xc3\xa9\t\n", 1));
    CHECK(esc_needed("x\033", 1));
    CHECK(esc_needed("x\n", 0));
}

TEST(esc_through_the_writer)
{
    out_buf b = {0};
    out_set_sink(out_buf_sink, &b);
    out_printf("dataset %s: n=1\n", "evil\033]0;title\007.csv");
    out_error("%s: cannot read", "bad\rname\nsecond line");
    out_reset_sink();
    CHECK(b.data != NULL);
    CHECK(strchr(b.data, '\033') == NULL);
    CHECK(strchr(b.data, '\r') == NULL);
    CHECK_STR_CONTAINS(b.data, "dataset evil\\x1b]0;title\\x07.csv: n=1\n");
    CHECK_STR_CONTAINS(b.data, "bad\\x0dname");
    out_buf_free(&b);
}
