/* Bounded waits on the other ranks, and the pulses that tell which rank
 * lags (src/cli/mpi_wait.h). */
#include "mpi_wait.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "interrupt.h"
#include "rank_wait.h"

enum { MW_TAG_PULSE = 1 };

/* One pulse: what its sender tells the rank it goes to. */
typedef struct mw_pulse {
    int32_t entered; /* the meetings the sender has entered */
    int32_t cancel;  /* from rank 0: the command its Ctrl-C cancels (0: none) */
} mw_pulse;

static pthread_mutex_t mw_mpi_mu = PTHREAD_MUTEX_INITIALIZER;
/* Guards what the pulses tell (mw_heard, mw_entered), Ctrl-C's time and
 * the broken state's cause. */
static pthread_mutex_t mw_mu = PTHREAD_MUTEX_INITIALIZER;
static int mw_rank, mw_size = 1;
static MPI_Comm mw_comm = MPI_COMM_NULL;
static double mw_bound = RANK_WAIT_BOUND, mw_period = 0.5;
static double *mw_heard; /* when each rank's last pulse came (mw_now) */
static int *mw_entered;  /* each rank's meetings, by its last pulse */
/* Per rank: its mw_heard when a line named it silent; a silence is named
 * once, whichever wait (a thread's, the next meeting's) sees it. */
static double *mw_named_at;
static double mw_cancel_t0 = -1;
static atomic_int mw_my_entered, mw_cmd_no;
static volatile int *mw_cancel_flag;
static pthread_t mw_tid;
static int mw_running;
static atomic_int mw_stop;
static MPI_Request *mw_sreq; /* per rank: the pulse to it still in flight */
static mw_pulse *mw_sbuf;
static atomic_int mw_broken;
static int mw_broken_code, mw_broken_said;
static char mw_broken_msg[640];

static double mw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A pause longer than this between two looks of one loop means this rank
 * was stopped itself (Ctrl-Z of the whole job): the silence it then sees
 * is its own, not the others'. */
static double mw_gap(void)
{
    return 4 * mw_period > 1.0 ? 4 * mw_period : 1.0;
}

static void mw_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

void mpi_wait_lock(void)
{
    pthread_mutex_lock(&mw_mpi_mu);
}

void mpi_wait_unlock(void)
{
    pthread_mutex_unlock(&mw_mpi_mu);
}

static void mw_say(const char *line)
{
    fprintf(stderr, "tcjoin-mpi: %s\n", line);
    fflush(stderr);
}

/* The ranks can no longer meet: the first cause is kept. */
static void mw_break(int code, const char *msg, int said)
{
    pthread_mutex_lock(&mw_mu);
    if (!atomic_load(&mw_broken)) {
        mw_broken_code = code;
        mw_broken_said = said;
        snprintf(mw_broken_msg, sizeof mw_broken_msg, "%s", msg);
        atomic_store(&mw_broken, 1);
    }
    pthread_mutex_unlock(&mw_mu);
}

int mpi_wait_broken(void)
{
    return atomic_load(&mw_broken);
}

int mpi_wait_broken_error(void)
{
    pthread_mutex_lock(&mw_mu);
    int code = mw_broken_code ? mw_broken_code : TCJ_EIO;
    err_set(code, "%s", mw_broken_msg[0] ? mw_broken_msg : "the ranks cannot meet again");
    pthread_mutex_unlock(&mw_mu);
    return code;
}

int mpi_wait_said(void)
{
    pthread_mutex_lock(&mw_mu);
    int said = mw_broken_said;
    pthread_mutex_unlock(&mw_mu);
    return said;
}

void mpi_wait_mark_said(void)
{
    pthread_mutex_lock(&mw_mu);
    mw_broken_said = 1;
    pthread_mutex_unlock(&mw_mu);
}

int mpi_wait_check(int mrc, const char *what)
{
    if (mrc == MPI_SUCCESS)
        return 0;
    char reason[MPI_MAX_ERROR_STRING] = "";
    int n = 0;
    mpi_wait_lock();
    if (MPI_Error_string(mrc, reason, &n) != MPI_SUCCESS)
        snprintf(reason, sizeof reason, "code %d", mrc);
    mpi_wait_unlock();
    char msg[sizeof mw_broken_msg];
    snprintf(msg, sizeof msg, "%s: MPI error: %.200s (the ranks cannot meet again)", what, reason);
    mw_break(TCJ_EIO, msg, 0);
    return mpi_wait_broken_error();
}

int mpi_wait_meeting(void)
{
    return atomic_fetch_add(&mw_my_entered, 1) + 1;
}

void mpi_wait_command(int no)
{
    atomic_store(&mw_cmd_no, no);
}

void mpi_wait_follow_cancel(volatile int *flag)
{
    mw_cancel_flag = flag;
}

static void mw_heard_reset(double now)
{
    pthread_mutex_lock(&mw_mu);
    for (int r = 0; r < mw_size; r++)
        mw_heard[r] = now;
    pthread_mutex_unlock(&mw_mu);
}

static void mw_heard_from(int from, const mw_pulse *p, double now)
{
    pthread_mutex_lock(&mw_mu);
    mw_heard[from] = now;
    mw_entered[from] = p->entered;
    pthread_mutex_unlock(&mw_mu);
    /* Rank 0's Ctrl-C reaches the command this rank runs, not a later one
     * (the number says which). */
    if (mw_rank != 0 && from == 0 && p->cancel > 0 && p->cancel == atomic_load(&mw_cmd_no) &&
        mw_cancel_flag)
        *mw_cancel_flag = 1;
}

/* Take every pulse that came; send one to each rank this rank pulses
 * (rank 0: every rank; the others: rank 0) that took the last one (a
 * synchronous send completes then): a stopped rank has one in flight,
 * never a pile. Caller holds the MPI lock. */
static int mw_pulse_once(double now, int send)
{
    int mrc = MPI_SUCCESS;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        mrc = MPI_Iprobe(MPI_ANY_SOURCE, MW_TAG_PULSE, mw_comm, &flag, &st);
        if (mrc != MPI_SUCCESS || !flag)
            break;
        mw_pulse p;
        mrc = MPI_Recv(&p, 2, MPI_INT32_T, st.MPI_SOURCE, MW_TAG_PULSE, mw_comm, MPI_STATUS_IGNORE);
        if (mrc != MPI_SUCCESS)
            break;
        mw_heard_from(st.MPI_SOURCE, &p, now);
    }
    for (int r = 0; send && mrc == MPI_SUCCESS && r < mw_size; r++) {
        if (r == mw_rank || (mw_rank != 0 && r != 0))
            continue;
        if (mw_sreq[r] != MPI_REQUEST_NULL) {
            int done = 0;
            mrc = MPI_Test(&mw_sreq[r], &done, MPI_STATUS_IGNORE);
            if (mrc != MPI_SUCCESS || !done)
                continue;
        }
        mw_sbuf[r].entered = atomic_load(&mw_my_entered);
        mw_sbuf[r].cancel =
            mw_rank == 0 && interrupt_pending && interrupt_busy ? atomic_load(&mw_cmd_no) : 0;
        mrc = MPI_Issend(&mw_sbuf[r], 2, MPI_INT32_T, r, MW_TAG_PULSE, mw_comm, &mw_sreq[r]);
    }
    return mrc;
}

static void *mw_pulse_main(void *arg)
{
    (void)arg;
    double last = mw_now(), next = 0;
    /* Broken, no thread calls MPI again before MPI_Abort: a collective
     * left pending may not write into buffers its caller has freed. */
    while (!atomic_load(&mw_stop) && !mpi_wait_broken()) {
        const double now = mw_now();
        if (now - last > mw_gap())
            mw_heard_reset(now);
        last = now;
        mpi_wait_lock();
        int mrc = mw_pulse_once(now, now >= next);
        mpi_wait_unlock();
        if (now >= next)
            next = now + mw_period;
        if (mrc != MPI_SUCCESS) {
            mpi_wait_check(mrc, "the ranks' pulses");
            break;
        }
        mw_sleep(mw_period / 4);
    }
    return NULL;
}

int mpi_wait_init(MPI_Comm comm)
{
    mw_comm = comm;
    int mrc = MPI_Comm_rank(comm, &mw_rank);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_size(comm, &mw_size);
    if (mrc != MPI_SUCCESS)
        return mpi_wait_check(mrc, "starting the ranks' pulses");
    /* A test's short bound (tests/mpi/run.sh). */
    const char *e = getenv("TCJOIN_MPI_WAIT");
    char *end;
    double b = e ? strtod(e, &end) : 0;
    if (e && end != e && *end == '\0' && b > 0)
        mw_bound = b;
    mw_period = mw_bound / 10;
    mw_period = mw_period < 0.02 ? 0.02 : mw_period > 0.5 ? 0.5 : mw_period;
    mw_heard = xmalloc((size_t)mw_size * sizeof *mw_heard);
    mw_entered = xcalloc((size_t)mw_size, sizeof *mw_entered);
    mw_named_at = xmalloc((size_t)mw_size * sizeof *mw_named_at);
    for (int r = 0; r < mw_size; r++)
        mw_named_at[r] = -1;
    mw_sreq = xmalloc((size_t)mw_size * sizeof *mw_sreq);
    mw_sbuf = xcalloc((size_t)mw_size, sizeof *mw_sbuf);
    for (int r = 0; r < mw_size; r++)
        mw_sreq[r] = MPI_REQUEST_NULL;
    mw_heard_reset(mw_now());
    if (mw_size > 1) {
        if (pthread_create(&mw_tid, NULL, mw_pulse_main, NULL) != 0)
            return err_set(TCJ_EIO, "cannot start the thread of the ranks' pulses");
        mw_running = 1;
    }
    return 0;
}

void mpi_wait_start(mpi_wait *w)
{
    memset(w, 0, sizeof *w);
    w->t0 = w->last = mw_now();
}

static int mw_late(const mpi_wait_on *on, int r)
{
    if (r == mw_rank)
        return 0;
    if (on->behind)
        return on->behind[r] != 0;
    if (on->peer >= 0)
        return r == on->peer;
    return on->meeting > 0 && mw_entered[r] < on->meeting;
}

int mpi_wait_step(mpi_wait *w, const mpi_wait_on *on)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    const double now = mw_now();
    if (now - w->last > mw_gap())
        w->t0 += now - w->last;
    w->last = now;
    /* What the pulses tell changes at their pace. */
    if (mw_size < 2 || now - w->checked < mw_period / 4)
        return 0;
    w->checked = now;
    double *silent = xmalloc((size_t)mw_size * sizeof *silent);
    double *heard = xmalloc((size_t)mw_size * sizeof *heard);
    char *late = xcalloc((size_t)mw_size, 1), *named = xcalloc((size_t)mw_size, 1);
    char *named_now = xcalloc((size_t)mw_size, 1);
    double since = -1;
    pthread_mutex_lock(&mw_mu);
    for (int r = 0; r < mw_size; r++) {
        /* A rank other than 0 hears rank 0 alone. */
        heard[r] = mw_heard[r];
        silent[r] = r == mw_rank || (mw_rank != 0 && r != 0) ? -1 : now - heard[r];
        late[r] = (char)mw_late(on, r);
        named[r] = mw_named_at[r] == heard[r];
    }
    if (mw_rank == 0) {
        if (interrupt_pending) {
            if (mw_cancel_t0 < 0)
                mw_cancel_t0 = now;
            since = now - mw_cancel_t0;
        } else {
            mw_cancel_t0 = -1;
        }
    }
    pthread_mutex_unlock(&mw_mu);
    const rank_wait_view v = {.rank = mw_rank,
                              .size = mw_size,
                              .bound = mw_bound,
                              .waited = now - w->t0,
                              .silent = silent,
                              .late = late,
                              .named = named,
                              .since_cancel = since,
                              .said_silent = w->said_silent,
                              .said_late = w->said_late};
    char line[512];
    const rank_wait_verdict verdict = rank_wait_judge(&v, line, sizeof line, named_now);
    if (verdict == RANK_WAIT_SILENT) {
        pthread_mutex_lock(&mw_mu);
        for (int r = 0; r < mw_size; r++)
            if (named_now[r])
                mw_named_at[r] = heard[r];
        pthread_mutex_unlock(&mw_mu);
    }
    free(silent);
    free(heard);
    free(late);
    free(named);
    free(named_now);
    switch (verdict) {
    case RANK_WAIT_SILENT:
        w->said_silent = 1;
        mw_say(line);
        return 0;
    case RANK_WAIT_LATE:
        w->said_late = 1;
        mw_say(line);
        return 0;
    case RANK_WAIT_GIVE_UP:
        /* Said here, once: the command then reads as cancelled. */
        mw_say(line);
        mw_break(TCJ_ECANCEL, ERR_CANCELLED, 1);
        return mpi_wait_broken_error();
    default:
        return 0;
    }
}

/* Between two tests: a few yields (a meeting of ranks that are all there
 * ends in microseconds), then short sleeps, then 1 ms ones (an idle rank
 * must not spin a core). */
static void mw_nap(int spin)
{
    if (spin < 50)
        sched_yield();
    else
        mw_sleep(spin < 1000 ? 50e-6 : 1e-3);
}

/* mpi_wait_all's loop; drain: take the pulses that come meanwhile (at
 * the end, when the thread that takes them has stopped). */
static int mw_wait(int n, MPI_Request *rq, MPI_Status *st, const mpi_wait_on *on, int drain)
{
    mpi_wait w;
    mpi_wait_start(&w);
    for (int spin = 0;; spin++) {
        int done = 0;
        mpi_wait_lock();
        int mrc = drain ? mw_pulse_once(mw_now(), 0) : MPI_SUCCESS;
        if (mrc == MPI_SUCCESS)
            mrc = MPI_Testall(n, rq, &done, st);
        mpi_wait_unlock();
        if (mrc != MPI_SUCCESS)
            return mpi_wait_check(mrc, on->what);
        if (done)
            return 0;
        int rc = mpi_wait_step(&w, on);
        if (rc)
            return rc;
        mw_nap(spin);
    }
}

int mpi_wait_all(int n, MPI_Request *rq, MPI_Status *st, const mpi_wait_on *on)
{
    return mw_wait(n, rq, st, on, 0);
}

int mpi_wait_end(void)
{
    if (mw_running) {
        atomic_store(&mw_stop, 1);
        pthread_join(mw_tid, NULL);
        mw_running = 0;
        /* No more pulses: silence counts from here. */
        mw_heard_reset(mw_now());
    }
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    if (mw_size < 2)
        return 0;
    /* This rank's last pulses taken by their ranks (synchronous sends),
     * then a barrier on the pulses' communicator, both while taking the
     * pulses that come: after it no pulse is in flight. */
    const mpi_wait_on on = {.meeting = 0, .peer = -1, .what = "the ranks' last pulses"};
    int rc = mw_wait(mw_size, mw_sreq, MPI_STATUSES_IGNORE, &on, 1);
    if (!rc) {
        const mpi_wait_on all = {.meeting = mpi_wait_meeting(), .peer = -1, .what = on.what};
        MPI_Request rq;
        mpi_wait_lock();
        int mrc = MPI_Ibarrier(mw_comm, &rq);
        mpi_wait_unlock();
        rc = mrc != MPI_SUCCESS ? mpi_wait_check(mrc, on.what)
                                : mw_wait(1, &rq, MPI_STATUSES_IGNORE, &all, 1);
    }
    return rc;
}
