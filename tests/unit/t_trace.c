/* TCJOIN_TRACE's parts (kernels/kern_trace.c), as kern_trace_set reads a
 * value: 1 and all turn on the step lines (what the variable has always
 * meant) and no file; a comma list names parts; 0, nothing and an empty
 * value trace nothing; a word that is no part, a part without its file or
 * with a value it takes none of is refused with one line naming the word
 * and every part, the other words taken. The dump itself:
 * tests/unit/t_stream.c (cluster_cut_dump_writes_the_layout). */
#include "check.h"

#include <string.h>

#include "kernels.h"

/* What spec turns on: the steps, and the cut dump's file ("" for none). */
static int traced(const char *spec, int rc, int steps, const char *file)
{
    const int got = kern_trace_set(spec);
    const char *f = kern_trace_file(KERN_TRACE_CUT_DUMP);
    const int ok = got == rc && kern_trace_on() == steps && strcmp(f ? f : "", file) == 0 &&
                   kern_trace_file(KERN_TRACE_STEPS) == NULL;
    if (!ok)
        fprintf(stderr, "'%s': rc %d steps %d file '%s'\n", spec ? spec : "(null)", got,
                kern_trace_on(), f ? f : "");
    return ok;
}

TEST(trace_parts)
{
    CHECK(traced("1", 0, 1, ""));
    CHECK(traced("all", 0, 1, ""));
    CHECK(traced("steps", 0, 1, ""));
    CHECK(traced("cut-dump=/tmp/cut.bin", 0, 0, "/tmp/cut.bin"));
    CHECK(traced("steps,cut-dump=a b.bin", 0, 1, "a b.bin"));
    CHECK(traced("cut-dump=x=y,1", 0, 1, "x=y"));
    CHECK(traced("steps,", 0, 1, ""));
    CHECK(traced("0", 0, 0, ""));
    CHECK(traced("", 0, 0, ""));
    CHECK(traced(NULL, 0, 0, ""));
}

TEST(a_bad_word_is_one_line)
{
    static const struct {
        const char *spec, *said;
        int steps;
    } bad[] = {
        {"yes", "'yes' is no part", 0},
        {"cutdump,steps", "'cutdump' is no part", 1},
        {"cut-dump", "'cut-dump' needs a file", 0},
        {"steps,cut-dump=", "'cut-dump=' needs a file", 1},
        {"steps=x", "'steps=x' takes no value", 0},
        {"all=1", "'all=1' is no part", 0},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        CHECK_MSG(traced(bad[k].spec, KERN_EINVAL, bad[k].steps, ""), "%s", bad[k].spec);
        char want[256];
        snprintf(want, sizeof want, "TCJOIN_TRACE: %s (parts: steps, cut-dump=FILE, all (or 1), 0)",
                 bad[k].said);
        CHECK_MSG(strcmp(kern_error(), want) == 0, "%s: '%s'", bad[k].spec, kern_error());
        CHECK(strchr(kern_error(), '\n') == NULL);
    }
    kern_trace_set(NULL);
}
