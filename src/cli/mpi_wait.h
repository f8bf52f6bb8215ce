/* Every wait of a tcjoin-mpi rank on the others (src/cli/mpi_run.c's
 * meetings, command broadcasts and queue messages) goes through here: a
 * nonblocking MPI call tested in a loop that sleeps, so that the waiting
 * rank can say which rank it waits for once a bound has passed
 * (rank_wait.h), and rank 0 can end the job after Ctrl-C when a rank gives
 * no sign. Which rank lags is known from pulses: a thread of each rank
 * sends rank 0 (and rank 0 sends each rank) the number of meetings it has
 * entered, a tenth of the bound apart (at most 0.5 s), whether its main
 * thread computes, waits or idles; a stopped or lost rank sends none.
 *
 * MPI is initialized with MPI_THREAD_SERIALIZED: every MPI call of the
 * process is made under mpi_wait_lock, held for one call, never across a
 * wait. */
#ifndef TCJ_MPI_WAIT_H
#define TCJ_MPI_WAIT_H

#include <mpi.h>

/* Start the pulses on comm (a communicator of their own, kept from now
 * on; MPI_ERRORS_RETURN set on it). 0, or a TCJ_E* code with err_msg. */
int mpi_wait_init(MPI_Comm comm);
/* Stop the pulses, once every rank has met a last time (the caller's
 * barrier): no pulse is left in flight for MPI_Finalize. 0 or a code. */
int mpi_wait_end(void);

void mpi_wait_lock(void);
void mpi_wait_unlock(void);

/* The number of the meeting this rank enters now: every rank counts the
 * collective calls it enters, in the one order MPI requires, so a rank
 * whose count is lower has not reached this one. */
int mpi_wait_meeting(void);
/* The number of the command now running (rank 0: sent; the others:
 * received), for a cancel that rank 0 carries in its pulses. */
void mpi_wait_command(int no);
/* A rank other than 0: the flag its commands read for a cancel; rank 0's
 * Ctrl-C sets it through the pulses (rank 0's queue stops shared runs). */
void mpi_wait_follow_cancel(volatile int *flag);

/* Whom a wait waits for. */
typedef struct mpi_wait_on {
    int meeting;                 /* > 0: the ranks that have not entered it */
    int peer;                    /* >= 0: that rank */
    const volatile char *behind; /* non-NULL: the ranks whose flag is set */
    const char *what;            /* what it waits for, for an MPI error's message */
} mpi_wait_on;

/* One wait's state between its steps. */
typedef struct mpi_wait {
    double t0, last, checked;
    int said_silent, said_late;
} mpi_wait;

void mpi_wait_start(mpi_wait *w);
/* One look while waiting: says the bound's line when due (once per kind),
 * and on rank 0 after Ctrl-C gives up on a rank with no sign. 0 to wait
 * on, or a TCJ_E* code with err_msg (the job broken: see below). */
int mpi_wait_step(mpi_wait *w, const mpi_wait_on *on);

/* The n requests completed (statuses, or MPI_STATUSES_IGNORE), or a code
 * with err_msg as mpi_wait_step's, or an MPI error. */
int mpi_wait_all(int n, MPI_Request *rq, MPI_Status *st, const mpi_wait_on *on);

/* An MPI call's return code: 0 for MPI_SUCCESS; else the job is broken
 * (which call matched which on the other ranks is unknown from now on)
 * and TCJ_EIO with err_msg naming `what` and MPI's reason. */
int mpi_wait_check(int mrc, const char *what);

/* Whether the ranks can no longer meet: an MPI error, or rank 0 gave up
 * after Ctrl-C. Every later wait returns at once, with the cause. */
int mpi_wait_broken(void);
/* The cause as this thread's error: its code, err_msg set. */
int mpi_wait_broken_error(void);
/* Whether the cause was said to the user; mark it said. */
int mpi_wait_said(void);
void mpi_wait_mark_said(void);

#endif
