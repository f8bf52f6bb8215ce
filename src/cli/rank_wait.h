/* What a rank of tcjoin-mpi says, and whether rank 0 gives up, while it
 * waits on the other ranks (src/cli/mpi_wait.c holds the MPI side). Pure:
 * the facts in, the verdict and its line out, so a unit test drives it
 * without MPI. */
#ifndef TCJ_RANK_WAIT_H
#define TCJ_RANK_WAIT_H

#include <stddef.h>

/* The longest a rank waits on another before it says which one it waits
 * for (TCJOIN_MPI_WAIT overrides it, for tests). */
#define RANK_WAIT_BOUND 30.0
/* After Ctrl-C on rank 0: a rank that gave no sign for this long is taken
 * as stopped or lost, and rank 0 ends the job. */
#define RANK_WAIT_CANCEL_SILENT 2.0
/* After Ctrl-C on rank 0: the longest it waits for ranks that still work. */
#define RANK_WAIT_CANCEL_MOST 10.0

/* What the waiting rank knows at one moment of one wait. */
typedef struct rank_wait_view {
    int rank, size;
    double bound;               /* RANK_WAIT_BOUND or the test's */
    double waited;              /* seconds this wait has lasted */
    const double *silent;       /* per rank: seconds since its last sign; < 0: this rank hears
                                 * nothing of it (a rank other than 0 hears rank 0 alone) */
    const char *late;           /* per rank: not yet where this wait needs it */
    const char *named;          /* per rank: named silent already, in this silence, by any
                                 * wait of this rank (one line for one stop); may be NULL */
    double since_cancel;        /* rank 0: seconds since Ctrl-C was seen; < 0: none */
    int said_silent, said_late; /* this wait said so already */
} rank_wait_view;

typedef enum rank_wait_verdict {
    RANK_WAIT_ON,     /* keep waiting, nothing to say */
    RANK_WAIT_SILENT, /* say the line: ranks that give no sign */
    RANK_WAIT_LATE,   /* say the line: ranks that answer but are not there yet */
    RANK_WAIT_GIVE_UP /* rank 0 after Ctrl-C: say the line, end the job */
} rank_wait_verdict;

/* The verdict, and its one line (without a program prefix or newline) in
 * line[len]. A waiting rank names the ranks that gave no sign for the
 * bound and are not named yet (rank 0 all of them, rank 1 rank 0, so that
 * one rank speaks); else, on rank 0 alone and once a wait, the ranks not
 * yet there after the bound. With RANK_WAIT_SILENT the ranks named are
 * flagged in named_now[0..size) (may be NULL), for the caller to keep. */
rank_wait_verdict rank_wait_judge(const rank_wait_view *v, char *line, size_t len, char *named_now);

/* "rank 2", "ranks 2 and 5", "ranks 1, 2 and 5" (the first eight, then
 * "and N more") for the ranks whose flag in set[0..size) is set. */
void rank_wait_names(const char *set, int size, char *buf, size_t len);

#endif
