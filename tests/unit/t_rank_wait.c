/* src/cli/rank_wait.c: what a waiting rank of tcjoin-mpi says, and when
 * rank 0 gives up after Ctrl-C, from the facts alone (no MPI). */
#include <string.h>

#include "check.h"
#include "rank_wait.h"

/* A wait of rank `rank` among 4 at 30 s bound: every rank heard a moment
 * ago, none late, no Ctrl-C. */
typedef struct fixture {
    double silent[4];
    char late[4];
    rank_wait_view v;
    char line[256];
} fixture;

static void fixture_init(fixture *f, int rank)
{
    memset(f, 0, sizeof *f);
    for (int r = 0; r < 4; r++)
        f->silent[r] = r == rank || (rank != 0 && r != 0) ? -1 : 0.1;
    f->v = (rank_wait_view){.rank = rank,
                            .size = 4,
                            .bound = 30,
                            .silent = f->silent,
                            .late = f->late,
                            .since_cancel = -1};
}

static rank_wait_verdict judge(fixture *f)
{
    return rank_wait_judge(&f->v, f->line, sizeof f->line, NULL);
}

TEST(names_one_two_many)
{
    char set[20] = {0}, buf[160];
    set[2] = 1;
    rank_wait_names(set, 20, buf, sizeof buf);
    CHECK(strcmp(buf, "rank 2") == 0);
    set[5] = 1;
    rank_wait_names(set, 20, buf, sizeof buf);
    CHECK(strcmp(buf, "ranks 2 and 5") == 0);
    set[1] = 1;
    rank_wait_names(set, 20, buf, sizeof buf);
    CHECK(strcmp(buf, "ranks 1, 2 and 5") == 0);
    for (int r = 6; r < 20; r++)
        set[r] = 1;
    rank_wait_names(set, 20, buf, sizeof buf);
    CHECK_MSG(strcmp(buf, "ranks 1, 2, 5, 6, 7, 8, 9, 10 and 9 more") == 0, "%s", buf);
}

/* Within the bound nothing is said, whoever is late. */
TEST(quiet_within_the_bound)
{
    fixture f;
    fixture_init(&f, 0);
    f.late[2] = 1;
    f.v.waited = 29.9;
    f.silent[2] = 29.9;
    CHECK(judge(&f) == RANK_WAIT_ON);
    CHECK(f.line[0] == '\0');
}

/* Rank 0 names a rank silent past the bound; once named, neither that
 * name again nor this wait's "still at work" line. */
TEST(rank0_names_a_silent_rank)
{
    fixture f;
    fixture_init(&f, 0);
    f.late[2] = 1;
    f.v.waited = 31;
    f.silent[2] = 30.4;
    CHECK(judge(&f) == RANK_WAIT_SILENT);
    CHECK_MSG(strcmp(f.line, "rank 0 waits for rank 2 (no answer for 30 s; stopped or lost?)") == 0,
              "%s", f.line);
    const char named[4] = {0, 0, 1, 0};
    f.v.named = named;
    f.v.said_silent = 1;
    CHECK(judge(&f) == RANK_WAIT_ON);
}

/* A silence named by one wait is not named again by another (a second
 * device thread's, the next meeting's); a rank silent since is. */
TEST(a_silence_is_named_once)
{
    fixture f;
    char named[4] = {0}, now[4] = {0};
    fixture_init(&f, 0);
    f.v.named = named;
    f.silent[2] = 31;
    CHECK(rank_wait_judge(&f.v, f.line, sizeof f.line, now) == RANK_WAIT_SILENT);
    CHECK(now[2] && !now[1] && !now[3]);
    named[2] = 1;
    CHECK(judge(&f) == RANK_WAIT_ON);
    f.silent[3] = 30;
    memset(now, 0, sizeof now);
    CHECK(rank_wait_judge(&f.v, f.line, sizeof f.line, now) == RANK_WAIT_SILENT);
    CHECK_MSG(strcmp(f.line, "rank 0 waits for rank 3 (no answer for 30 s; stopped or lost?)") == 0,
              "%s", f.line);
    CHECK(now[3] && !now[2]);
}

/* A rank that went silent while rank 0 still computed is named as soon
 * as rank 0 waits, with its whole silence; two of them in one line. */
TEST(rank0_names_every_silent_rank_at_once)
{
    fixture f;
    fixture_init(&f, 0);
    f.v.waited = 0.2;
    f.silent[1] = 45;
    f.silent[3] = 31;
    f.late[3] = 1;
    CHECK(judge(&f) == RANK_WAIT_SILENT);
    CHECK_MSG(strcmp(f.line,
                     "rank 0 waits for ranks 1 and 3 (no answer for 31 s; stopped or lost?)") == 0,
              "%s", f.line);
}

/* Ranks that answer but are not there: rank 0 says so after the bound,
 * once; the other ranks never do. */
TEST(late_ranks_named_by_rank0_alone)
{
    fixture f;
    fixture_init(&f, 0);
    f.late[1] = f.late[3] = 1;
    f.v.waited = 30;
    CHECK(judge(&f) == RANK_WAIT_LATE);
    CHECK_MSG(strcmp(f.line, "rank 0 waits for ranks 1 and 3 (still at work after 30 s)") == 0,
              "%s", f.line);
    f.v.said_late = 1;
    CHECK(judge(&f) == RANK_WAIT_ON);
    fixture_init(&f, 2);
    f.late[0] = 1;
    f.v.waited = 100;
    CHECK(judge(&f) == RANK_WAIT_ON);
}

/* Rank 0 silent: rank 1 says so, the other ranks keep still (one line
 * for the job). */
TEST(rank0_silent_rank1_speaks)
{
    fixture f;
    fixture_init(&f, 1);
    f.silent[0] = 2.3;
    f.v.bound = 2;
    f.v.waited = 2.3;
    CHECK(judge(&f) == RANK_WAIT_SILENT);
    CHECK_MSG(strcmp(f.line, "rank 1 waits for rank 0 (no answer for 2.3 s; stopped or lost?)") ==
                  0,
              "%s", f.line);
    fixture_init(&f, 3);
    f.silent[0] = 100;
    f.v.waited = 100;
    CHECK(judge(&f) == RANK_WAIT_ON);
}

/* After Ctrl-C rank 0 gives up on a rank with no sign for 2 s, and on
 * ranks that still work after 10 s; not before. */
TEST(ctrl_c_gives_up)
{
    fixture f;
    fixture_init(&f, 0);
    f.late[2] = 1;
    f.v.since_cancel = 0.5;
    f.silent[2] = 1.9;
    CHECK(judge(&f) == RANK_WAIT_ON);
    f.silent[2] = 2.0;
    CHECK(judge(&f) == RANK_WAIT_GIVE_UP);
    CHECK_MSG(
        strcmp(f.line,
               "no sign from rank 2 for 2.0 s after Ctrl-C (stopped or lost?): ending the job") ==
            0,
        "%s", f.line);
    /* a rank that answers is waited for, up to the cap */
    f.silent[2] = 0.1;
    f.v.since_cancel = 9.9;
    CHECK(judge(&f) == RANK_WAIT_ON);
    f.v.since_cancel = 10;
    CHECK(judge(&f) == RANK_WAIT_GIVE_UP);
    CHECK_MSG(strcmp(f.line, "rank 2 still at work 10 s after Ctrl-C: ending the job") == 0, "%s",
              f.line);
    /* nobody late, nobody silent: the wait is about to end */
    f.late[2] = 0;
    f.v.since_cancel = 50;
    CHECK(judge(&f) == RANK_WAIT_ON);
    /* a rank other than 0 never gives up */
    fixture_init(&f, 1);
    f.silent[0] = 100;
    f.v.since_cancel = 100;
    const char named[4] = {1, 0, 0, 0};
    f.v.named = named;
    CHECK(judge(&f) == RANK_WAIT_ON);
}
