/* The progress line on stderr: width, bar, rate and time left computed
 * from the fraction and the elapsed time (the numbers checked by hand). */
#include "check.h"
#include "progress.h"

#include <string.h>

TEST(line_has_rate_and_time_left)
{
    char b[256];
    /* A quarter in 10 s: 2.5 %/s, the other three quarters take 30 s. */
    progress_format(b, sizeof b, 79, "run cpu", 0.25, 10.0);
    CHECK_STR_CONTAINS(b, "run cpu  25% [");
    CHECK_STR_CONTAINS(b, "] 2.5 %/s, 30 s left");
    CHECK((int)strlen(b) <= 79);
    /* The bar: 40 cells at most, a quarter of them filled. */
    const char *open = strchr(b, '['), *close = strchr(b, ']');
    CHECK(open && close);
    int cells = (int)(close - open - 1), fill = 0;
    for (const char *p = open + 1; p < close; p++)
        fill += *p == '#';
    CHECK_EQ_INT(cells, 40);
    CHECK_EQ_INT(fill, 10);
    /* Long waits in minutes: 1 % in 60 s leaves 99 min. */
    progress_format(b, sizeof b, 79, "sweep", 0.01, 60.0);
    CHECK_STR_CONTAINS(b, "0.0 %/s, 99 min left");
}

TEST(line_fits_narrow_terminals)
{
    char b[256];
    for (int w = 0; w <= 120; w++) {
        progress_format(b, sizeof b, w, "compare fasted ted", 0.5, 3.0);
        CHECK_MSG((int)strlen(b) <= w, "width %d: '%s'", w, b);
    }
    progress_format(b, sizeof b, 30, "run cpu", 0.5, 3.0);
    CHECK(strlen(b) <= 30);
    CHECK_STR_CONTAINS(b, "run cpu  50%");
}

TEST(no_rate_before_any_progress)
{
    char b[256];
    progress_format(b, sizeof b, 79, "run cpu", 0.0, 2.0);
    CHECK_STR_CONTAINS(b, "run cpu   0% [");
    CHECK_STR_CONTAINS(b, "] 2 s");
    CHECK(strstr(b, "left") == NULL);
    progress_format(b, sizeof b, 79, "run cpu", 1.5, 2.0); /* clamped */
    CHECK_STR_CONTAINS(b, "run cpu 100% [");
}

/* The clock of a command's progress: a step's new name keeps it (the
 * fraction is the whole command's, so the time left is too: precisions
 * said 0.7 s left with 35 s to go when each format restarted it); a
 * fraction that goes back (a new command's work) and none running start
 * it again. */
TEST(steps_keep_the_commands_clock)
{
    CHECK(progress_restarts(0, 0, 0) == 1);
    CHECK(progress_restarts(1, 0.40, 0.45) == 0); /* next format, whole fraction */
    CHECK(progress_restarts(1, 0.45, 0.45) == 0);
    CHECK(progress_restarts(1, 0.45, 0.02) == 1); /* went back */
}
