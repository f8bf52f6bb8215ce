/* tcjoin-mpi: commands sent from rank 0 to every rank, and each join and
 * k-distance shared by the ranks through a queue of query rows on rank 0
 * (docs/SCALING.md, "Beyond one host").
 *
 * The ranks meet at sync points, each one MPI_Iallgather of a fixed record
 * (mpi_rec): a shared run's check-in, its outcome, a pair file's close,
 * the end of every command. Because every meeting is the same collective,
 * a rank that left a command early (an error before the run) still meets
 * the others: they see its END record at their check-in and fail the run
 * with its message, and it repeats its END meeting until every rank is at
 * the end of the command. Between check-in and outcome the ranks talk to
 * rank 0's queue thread alone (point to point on their own communicator).
 *
 * No call here blocks: each is nonblocking and waited on by
 * src/cli/mpi_wait.c, which says which rank lags once a bound has passed
 * and lets rank 0's Ctrl-C end a job that a stopped rank holds. An MPI
 * error fails the run with its message; the ranks then cannot meet again,
 * so the session ends and the job with it. */
#include "mpi_run.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include "cmd.h"
#include "curve_list.h"
#include "err.h"
#include "kdist.h"
#include "kernels.h"
#include "mpi_queue.h"
#include "mpi_wait.h"
#include "out.h"
#include "session.h"
#include "sink.h"
#include "store.h"
#include "store_ranks.h"

enum { STAGE_JOIN = 1, STAGE_OUTCOME, STAGE_PAIRS, STAGE_END };
enum { TAG_REQ = 11, TAG_BYE, TAG_RANGE, TAG_STOP, TAG_ACK, TAG_OPEN, TAG_OPENED, TAG_TILE };
/* The forest merge's messages (on m_cmd, between runs). */
enum { TAG_FOREST = 31 };

/* One rank's word at a sync point. */
typedef struct mpi_rec {
    int32_t stage, rc;
    uint64_t rows, chunks, pairs; /* rows: a tile-shared run's items */
    int32_t lists, pad;           /* a tile-shared run's work lists */
    double seconds;
    char host[64];
    char device[128];
    char what[256]; /* check-in: the run as this rank sees it */
    char msg[512];  /* a failure's message */
} mpi_rec;

static int m_rank, m_size;
static int m_local_rank;    /* among the ranks of this host */
static MPI_Comm m_cmd, m_q; /* commands and sync points; the queue's messages */
static char m_host[64];
static dist_ops m_ops;
/* The recent shared runs' records, for the log (rank 0), by the result
 * they filled: a command may run several before it stores one (compare's
 * pair passes after its count runs). */
#define M_KEEP 16
static struct {
    const join_result *res;
    mpi_rec *all;
} m_kept[M_KEEP];
static int m_kept_next;
/* Set by SIGTERM (mpirun ending the job because a rank died). */
static volatile sig_atomic_t m_term;
/* Nonzero while a shared run is in flight: its parts run locally. */
static atomic_int m_busy;

static void m_on_term(int sig)
{
    (void)sig;
    m_term = 1;
}

/* A collective of every rank, begun (mrc: the call's code) as the next
 * meeting and waited on. 0, or a TCJ_E* code with err_msg. */
static int m_meet(int mrc, MPI_Request *rq, int meeting, const char *what)
{
    if (mrc != MPI_SUCCESS)
        return mpi_wait_check(mrc, what);
    const mpi_wait_on on = {.meeting = meeting, .peer = -1, .what = what};
    return mpi_wait_all(1, rq, MPI_STATUSES_IGNORE, &on);
}

static int m_allgather(const void *mine, void *all, int count, MPI_Datatype t, const char *what)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    const int k = mpi_wait_meeting();
    MPI_Request rq;
    mpi_wait_lock();
    int mrc = MPI_Iallgather(mine, count, t, all, count, t, m_cmd, &rq);
    mpi_wait_unlock();
    return m_meet(mrc, &rq, k, what);
}

static int m_bcast(void *buf, int count, MPI_Datatype t, int root, const char *what)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    const int k = mpi_wait_meeting();
    MPI_Request rq;
    mpi_wait_lock();
    int mrc = MPI_Ibcast(buf, count, t, root, m_cmd, &rq);
    mpi_wait_unlock();
    return m_meet(mrc, &rq, k, what);
}

/* in may be MPI_IN_PLACE. */
static int m_allreduce(const void *in, void *out, int count, MPI_Datatype t, MPI_Op op,
                       const char *what)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    const int k = mpi_wait_meeting();
    MPI_Request rq;
    mpi_wait_lock();
    int mrc = MPI_Iallreduce(in, out, count, t, op, m_cmd, &rq);
    mpi_wait_unlock();
    return m_meet(mrc, &rq, k, what);
}

/* Every rank's record into all[]: the one collective of every sync point. */
static int m_sync(const mpi_rec *mine, mpi_rec *all)
{
    return m_allgather(mine, all, (int)sizeof *mine, MPI_BYTE, "the ranks' meeting");
}

static void m_rec_init(mpi_rec *r, int stage)
{
    memset(r, 0, sizeof *r);
    r->stage = stage;
    snprintf(r->host, sizeof r->host, "%s", m_host);
}

/* A rank that is at another stage than `stage` (it ended the command
 * early): its index, else -1. */
static int m_other_stage(const mpi_rec *all, int stage)
{
    for (int r = 0; r < m_size; r++)
        if (all[r].stage != stage)
            return r;
    return -1;
}

static int m_fail_from(const mpi_rec *all, int r)
{
    /* Rank 0 is the session the user sees: its own failures (a refusal of
     * the data, which every rank would make) read as in one process. */
    if (r == 0 && all[0].rc && all[0].stage != STAGE_END)
        return err_set(all[0].rc, "%s", all[0].msg);
    if (all[r].stage == STAGE_END && all[r].rc == 0)
        return err_set(TCJ_EINVAL,
                       "rank %d (%s): did not take part in the run (its command "
                       "ended first)",
                       r, all[r].host);
    return err_set(all[r].rc ? all[r].rc : TCJ_EINVAL, "rank %d (%s): %s", r, all[r].host,
                   all[r].msg[0] ? all[r].msg : "failed");
}

/* ---- commands ---- */

/* The commands sent, counted alike on every rank (a cancel names one). */
static int m_commands;

int mpi_send_command(const char *text)
{
    /* Length first (0: the session is over), then the text. */
    long len = text ? (long)strlen(text) + 1 : 0;
    if (text)
        mpi_wait_command(++m_commands);
    int rc = m_bcast(&len, 1, MPI_LONG, 0, "sending the command");
    if (!rc && len)
        rc = m_bcast((void *)text, (int)len, MPI_CHAR, 0, "sending the command");
    return rc;
}

int mpi_recv_command(char **text)
{
    long len = 0;
    /* An idle rank waits here as long as rank 0's user types nothing:
     * mpi_wait_all sleeps between its tests. */
    if (m_bcast(&len, 1, MPI_LONG, 0, "receiving a command"))
        return -1;
    if (len <= 0)
        return 0;
    mpi_wait_command(++m_commands);
    *text = xmalloc((unsigned long)len);
    if (m_bcast(*text, (int)len, MPI_CHAR, 0, "receiving a command")) {
        free(*text);
        *text = NULL;
        return -1;
    }
    return 1;
}

static void m_command_begin(const char *text)
{
    /* A failure breaks the job: the command then fails at its end's
     * meeting, with the cause. */
    if (m_rank == 0)
        mpi_send_command(text);
}

int mpi_job_dying(void)
{
    return m_term != 0;
}

/* The ranks cannot meet again (a rank died and mpirun ends the job, an
 * MPI error, rank 0 gave up on a rank after Ctrl-C): rank 0 ends its
 * session, the log closed, rather than wait to be killed; it says the
 * cause once, here unless the command said it. Another rank prints
 * nothing here: tcjoin-mpi's main says it before ending the job. */
static int m_command_lost(session *s, int rc)
{
    s->quit = 1;
    s->failed = 1;
    if (m_term)
        return rc ? rc : TCJ_EIO;
    const int lost = mpi_wait_broken_error();
    if (m_rank == 0) {
        if (!mpi_wait_said())
            out_error("%s", err_msg());
        mpi_wait_mark_said();
    }
    return rc ? rc : lost;
}

static int m_command_end(session *s, int rc)
{
    if (m_term || mpi_wait_broken()) {
        /* The command met the cause and failed on it: rank 0 said it. */
        if (rc && m_rank == 0)
            mpi_wait_mark_said();
        return m_command_lost(s, rc);
    }
    mpi_rec mine, *all = xmalloc((size_t)m_size * sizeof *all);
    m_rec_init(&mine, STAGE_END);
    mine.rc = rc;
    if (rc)
        snprintf(mine.msg, sizeof mine.msg, "%s", err_msg()[0] ? err_msg() : "failed");
    /* Meet until every rank is at the end (a rank still in a shared run
     * fails it on seeing this record, then comes here). */
    for (;;) {
        if (m_sync(&mine, all)) {
            free(all);
            return m_command_lost(s, rc);
        }
        if (m_other_stage(all, STAGE_END) < 0)
            break;
    }
    int out = rc;
    for (int r = 1; r < m_size && !rc; r++)
        if (all[r].rc) {
            /* One line for what rank 0 did not see itself. */
            if (m_rank == 0) {
                out_error("rank %d (%s): %s", r, all[r].host, all[r].msg);
                if (s->batch)
                    s->failed = 1;
            }
            out = all[r].rc;
            break;
        }
    free(all);
    return out;
}

/* Rank 0's log and help: nothing for the other ranks to do. */
static int m_skip(const char *name)
{
    static const char *const local[] = {"help",   "history", "runs",    "show",
                                        "export", "explain", "engines", NULL};
    /* Hardware counters of one device, the FASTED switches one at a time:
     * tools of one process on one GPU. */
    if (strcmp(name, "profile") == 0 || strcmp(name, "ablate") == 0 || strcmp(name, "ladder") == 0)
        return err_set(TCJ_EUNSUP, "%s runs in one process: use tcjoin, not tcjoin-mpi", name);
    if (m_rank == 0)
        return 0;
    for (int k = 0; local[k]; k++)
        if (strcmp(name, local[k]) == 0)
            return 1;
    return 0;
}

/* ---- the queue ---- */

/* A work list of a GPU run shared tile by tile (kernels.h's kern_tiles):
 * the k-th list every rank opens in the run is lists[k]. */
typedef struct m_list {
    unsigned long long total, next;
    int first;        /* the rank that opened it first */
    char variant[96]; /* the kernel the items are for */
} m_list;

/* Messages to rank 0 in a run: one request record (the tag says which);
 * from rank 0: one reply record. */
typedef struct m_req {
    int32_t failed, list, ndev, pad;
    uint64_t total, least, most;
    char variant[96];
} m_req;
typedef struct m_rep {
    uint64_t w[3]; /* a range (b, e, stop); an open's (bad, total, first rank) */
    char variant[96];
} m_rep;

/* Rank 0's replies in flight: each is sent without waiting (the rank it
 * goes to may be stopped) and reaped once out. */
typedef struct m_sent {
    MPI_Request *rq;
    m_rep **rep;
    int n, cap;
} m_sent;

/* Rank 0's side: the counter, and the thread that answers the others. */
typedef struct m_server {
    pthread_mutex_t mu;
    size_t next, end, total;
    int stop; /* no more ranges: a failure or a cancel */
    int byes; /* ranks done */
    int main_done;
    const volatile int *user_cancel;
    volatile int *local_stop; /* rank 0's own parts read it */
    m_list *lists;            /* tile mode: the lists opened so far */
    int nlists, caplists;
    m_sent sent; /* its replies in flight */
} m_server;

static int m_server_take(m_server *sv, size_t *b, size_t *e, int *stop)
{
    pthread_mutex_lock(&sv->mu);
    if (sv->user_cancel && *sv->user_cancel)
        sv->stop = 1;
    int ok = !sv->stop && sv->next < sv->end;
    if (ok) {
        size_t c = dist_chunk(sv->end - sv->next, sv->total, m_size);
        *b = sv->next;
        *e = sv->next + c;
        sv->next += c;
    }
    *stop = sv->stop;
    pthread_mutex_unlock(&sv->mu);
    return ok;
}

/* Rank `rank` opens its k-th list: the first opener sets it, every later
 * one must match it. 0, or 1 with the list as set in *set. */
static int m_server_open(m_server *sv, int rank, int k, unsigned long long total,
                         const char *variant, m_list *set)
{
    pthread_mutex_lock(&sv->mu);
    int bad = 0;
    if (k == sv->nlists) {
        if (sv->nlists == sv->caplists) {
            sv->caplists = sv->caplists ? 2 * sv->caplists : 8;
            sv->lists = xrealloc(sv->lists, (size_t)sv->caplists * sizeof *sv->lists);
        }
        m_list *l = &sv->lists[sv->nlists++];
        memset(l, 0, sizeof *l);
        l->total = total;
        l->first = rank;
        snprintf(l->variant, sizeof l->variant, "%s", variant);
    } else if (k > sv->nlists || sv->lists[k].total != total ||
               strcmp(sv->lists[k].variant, variant) != 0) {
        bad = 1;
        if (k < sv->nlists)
            *set = sv->lists[k];
        else
            memset(set, 0, sizeof *set);
        /* Nobody takes more: the run fails on this rank's line. */
        sv->stop = 1;
        *sv->local_stop = 1;
    }
    pthread_mutex_unlock(&sv->mu);
    return bad;
}

/* The next range of list k for a rank of ndev devices: a quarter of what
 * is left per device of every rank (as kern_multi's own queue), within
 * [least, most]. */
static int m_server_take_tiles(m_server *sv, int k, unsigned long long least,
                               unsigned long long most, int ndev, unsigned long long *b,
                               unsigned long long *e, int *stop)
{
    pthread_mutex_lock(&sv->mu);
    if (sv->user_cancel && *sv->user_cancel)
        sv->stop = 1;
    int ok = !sv->stop && k >= 0 && k < sv->nlists && sv->lists[k].next < sv->lists[k].total;
    if (ok) {
        m_list *l = &sv->lists[k];
        const unsigned long long left = l->total - l->next;
        unsigned long long c =
            left / (4ull * (unsigned long long)m_size * (unsigned long long)(ndev > 0 ? ndev : 1));
        if (c < least)
            c = least;
        if (most && c > most)
            c = most;
        if (c < 1)
            c = 1;
        if (c > left)
            c = left;
        *b = l->next;
        *e = l->next + c;
        l->next += c;
    }
    *stop = sv->stop;
    pthread_mutex_unlock(&sv->mu);
    return ok;
}

/* Caller holds the MPI lock. */
static int m_reply(m_sent *q, int to, int tag, uint64_t a, uint64_t b, uint64_t c,
                   const char *variant)
{
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 16;
        q->rq = xrealloc(q->rq, (size_t)q->cap * sizeof *q->rq);
        q->rep = xrealloc(q->rep, (size_t)q->cap * sizeof *q->rep);
    }
    m_rep *r = xcalloc(1, sizeof *r);
    r->w[0] = a;
    r->w[1] = b;
    r->w[2] = c;
    if (variant)
        snprintf(r->variant, sizeof r->variant, "%s", variant);
    q->rep[q->n] = r;
    int mrc = MPI_Isend(r, (int)sizeof *r, MPI_BYTE, to, tag, m_q, &q->rq[q->n]);
    if (mrc == MPI_SUCCESS)
        q->n++;
    else
        free(r);
    return mrc;
}

/* Every reply out: their buffers freed. */
static void m_sent_free(m_sent *q)
{
    for (int i = 0; i < q->n; i++)
        free(q->rep[i]);
    free(q->rq);
    free(q->rep);
    memset(q, 0, sizeof *q);
}

/* The replies that are out, freed. Caller holds the MPI lock. */
static int m_reap(m_sent *q)
{
    int mrc = MPI_SUCCESS, k = 0;
    for (int i = 0; i < q->n; i++) {
        int done = 0;
        if (mrc == MPI_SUCCESS)
            mrc = MPI_Test(&q->rq[i], &done, MPI_STATUS_IGNORE);
        if (done) {
            free(q->rep[i]);
        } else {
            q->rq[k] = q->rq[i];
            q->rep[k++] = q->rep[i];
        }
    }
    q->n = k;
    return mrc;
}

/* Rank 0's queue thread: answers the requests; once rank 0's own work is
 * done it waits for the others' byes, through mpi_wait_step (a stopped
 * rank is named, and after Ctrl-C given up on). */
static void *m_server_main(void *arg)
{
    m_server *sv = arg;
    struct timespec nap = {0, 50000};
    char *gone = xcalloc((size_t)m_size, 1);   /* said bye: no stop goes to it */
    char *behind = xcalloc((size_t)m_size, 1); /* not yet said bye */
    for (int r = 1; r < m_size; r++)
        behind[r] = 1;
    const mpi_wait_on on = {.peer = -1, .behind = behind, .what = "the queue's byes"};
    mpi_wait w;
    int waiting = 0, stop_sent = 0, mrc = MPI_SUCCESS;
    while (mrc == MPI_SUCCESS && !mpi_wait_broken()) {
        int flag = 0;
        MPI_Status st;
        m_req q;
        mpi_wait_lock();
        mrc = m_reap(&sv->sent);
        if (mrc == MPI_SUCCESS)
            mrc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, m_q, &flag, &st);
        if (mrc == MPI_SUCCESS && flag)
            mrc = MPI_Recv(&q, (int)sizeof q, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, m_q,
                           MPI_STATUS_IGNORE);
        if (mrc == MPI_SUCCESS && flag) {
            q.variant[sizeof q.variant - 1] = '\0';
            if (st.MPI_TAG == TAG_REQ) {
                size_t b = 0, e = 0;
                int stop = 0;
                if (!m_server_take(sv, &b, &e, &stop))
                    b = e = 0;
                mrc = m_reply(&sv->sent, st.MPI_SOURCE, TAG_RANGE, b, e, (uint64_t)stop, NULL);
            } else if (st.MPI_TAG == TAG_OPEN) {
                m_list set;
                int bad = m_server_open(sv, st.MPI_SOURCE, q.list, q.total, q.variant, &set);
                mrc = m_reply(&sv->sent, st.MPI_SOURCE, TAG_OPENED, (uint64_t)bad,
                              bad ? set.total : 0, bad ? (uint64_t)set.first : 0,
                              bad ? set.variant : NULL);
            } else if (st.MPI_TAG == TAG_TILE) {
                unsigned long long b = 0, e = 0;
                int stop = 0;
                if (!m_server_take_tiles(sv, q.list, q.least, q.most, q.ndev, &b, &e, &stop))
                    b = e = 0;
                mrc = m_reply(&sv->sent, st.MPI_SOURCE, TAG_RANGE, b, e, (uint64_t)stop, NULL);
            } else {
                pthread_mutex_lock(&sv->mu);
                sv->byes++;
                if (q.failed) {
                    /* A rank failed: nobody takes more, rank 0 stops. */
                    sv->stop = 1;
                    *sv->local_stop = 1;
                }
                pthread_mutex_unlock(&sv->mu);
                gone[st.MPI_SOURCE] = 1;
                behind[st.MPI_SOURCE] = 0;
                mrc = m_reply(&sv->sent, st.MPI_SOURCE, TAG_ACK, 0, 0, 0, NULL);
            }
        }
        mpi_wait_unlock();
        if (mrc != MPI_SUCCESS || flag)
            continue;
        pthread_mutex_lock(&sv->mu);
        if ((sv->user_cancel && *sv->user_cancel) || m_term) {
            sv->stop = 1;
            *sv->local_stop = 1;
        }
        int stop = sv->stop;
        int main_done = sv->main_done;
        int over = sv->byes == m_size - 1 && main_done;
        pthread_mutex_unlock(&sv->mu);
        /* mpirun is ending the job (a rank died): nobody will say bye. */
        if (over || m_term)
            break;
        if (stop && !stop_sent) {
            /* A cancel or a failure: the ranks in the middle of a range
             * stop now, not at their next request. */
            mpi_wait_lock();
            for (int r = 1; r < m_size && mrc == MPI_SUCCESS; r++)
                if (!gone[r])
                    mrc = m_reply(&sv->sent, r, TAG_STOP, 0, 0, 1, NULL);
            mpi_wait_unlock();
            stop_sent = 1;
        }
        if (main_done) {
            if (!waiting)
                mpi_wait_start(&w);
            waiting = 1;
            /* Given up (Ctrl-C, a rank with no sign): the run ends here,
             * its outcome is the job's end (mpi_wait_broken). */
            if (mpi_wait_step(&w, &on))
                break;
        }
        nanosleep(&nap, NULL);
    }
    if (mrc != MPI_SUCCESS)
        mpi_wait_check(mrc, "the queue");
    free(gone);
    free(behind);
    return NULL;
}

/* The other ranks: their main thread (requests, bye), their device
 * threads (tile requests) and a watcher thread (rank 0's stop) share MPI
 * under mpi_wait_lock with the pulses, never at once
 * (MPI_THREAD_SERIALIZED); a request and its reply's receive are posted
 * in one turn under it, so replies match requests in order. */

/* A rank's view of the queue. */
typedef struct m_client {
    m_server *sv; /* rank 0 */
    volatile int *local_stop;
    volatile int watching;
} m_client;

static void *m_watch(void *arg)
{
    m_client *c = arg;
    struct timespec nap = {0, 1000000};
    int mrc = MPI_SUCCESS;
    while (c->watching && mrc == MPI_SUCCESS && !mpi_wait_broken()) {
        int flag = 0;
        m_rep r;
        mpi_wait_lock();
        mrc = MPI_Iprobe(0, TAG_STOP, m_q, &flag, MPI_STATUS_IGNORE);
        if (mrc == MPI_SUCCESS && flag)
            mrc = MPI_Recv(&r, (int)sizeof r, MPI_BYTE, 0, TAG_STOP, m_q, MPI_STATUS_IGNORE);
        mpi_wait_unlock();
        if (flag)
            *c->local_stop = 1;
        nanosleep(&nap, NULL);
    }
    if (mrc != MPI_SUCCESS) {
        mpi_wait_check(mrc, "the queue's stop");
        *c->local_stop = 1;
    }
    return NULL;
}

/* One request to rank 0 and its reply (a rank other than 0). 0, or a
 * TCJ_E* code with err_msg (the job broken): the rank then stops. */
static int m_ask(m_client *c, int tag, const m_req *q, int want, m_rep *r)
{
    if (mpi_wait_broken()) {
        *c->local_stop = 1;
        return mpi_wait_broken_error();
    }
    MPI_Request rq[2];
    mpi_wait_lock();
    int mrc = MPI_Isend((void *)q, (int)sizeof *q, MPI_BYTE, 0, tag, m_q, &rq[0]);
    if (mrc == MPI_SUCCESS &&
        (mrc = MPI_Irecv(r, (int)sizeof *r, MPI_BYTE, 0, want, m_q, &rq[1])) != MPI_SUCCESS)
        MPI_Request_free(&rq[0]);
    mpi_wait_unlock();
    const mpi_wait_on on = {.peer = 0, .what = "the queue on rank 0"};
    int rc = mrc != MPI_SUCCESS ? mpi_wait_check(mrc, on.what)
                                : mpi_wait_all(2, rq, MPI_STATUSES_IGNORE, &on);
    if (rc)
        *c->local_stop = 1;
    return rc;
}

static int m_take(void *ctx, size_t *b, size_t *e, int *stop)
{
    m_client *c = ctx;
    if (m_rank == 0)
        return m_server_take(c->sv, b, e, stop);
    m_req q;
    m_rep rep;
    memset(&q, 0, sizeof q);
    memset(&rep, 0, sizeof rep);
    if (m_ask(c, TAG_REQ, &q, TAG_RANGE, &rep)) {
        *stop = 1;
        return 0;
    }
    *b = (size_t)rep.w[0];
    *e = (size_t)rep.w[1];
    *stop = (int)rep.w[2] || *c->local_stop;
    if (*stop)
        *c->local_stop = 1;
    return *e > *b && !*stop;
}

/* A rank other than 0 is done: tell rank 0 (failed or not) and wait for
 * its answer, taking any stop sent before it (the watcher has ended: a
 * stop and the answer come in the order sent); then no message of this
 * run is left in flight. */
static int m_bye(m_client *c, int failed)
{
    m_req q;
    memset(&q, 0, sizeof q);
    q.failed = failed;
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    MPI_Request sq;
    mpi_wait_lock();
    int mrc = MPI_Isend(&q, (int)sizeof q, MPI_BYTE, 0, TAG_BYE, m_q, &sq);
    mpi_wait_unlock();
    const mpi_wait_on on = {.peer = 0, .what = "the queue on rank 0"};
    int rc = mpi_wait_check(mrc, on.what);
    for (int tag = -1; !rc && tag != TAG_ACK;) {
        m_rep r;
        MPI_Request rq;
        MPI_Status st;
        mpi_wait_lock();
        mrc = MPI_Irecv(&r, (int)sizeof r, MPI_BYTE, 0, MPI_ANY_TAG, m_q, &rq);
        mpi_wait_unlock();
        rc = mrc != MPI_SUCCESS ? mpi_wait_check(mrc, on.what) : mpi_wait_all(1, &rq, &st, &on);
        if (!rc) {
            tag = st.MPI_TAG;
            if (tag == TAG_STOP)
                *c->local_stop = 1;
        }
    }
    if (!rc)
        rc = mpi_wait_all(1, &sq, MPI_STATUSES_IGNORE, &on);
    return rc;
}

/* ---- a GPU run shared tile by tile (kern_tiles over the queue) ---- */

typedef struct m_tiles {
    m_client *c;
    pthread_mutex_t mu;
    int opens;                 /* lists this rank opened in the run */
    unsigned long long taken;  /* items it took */
    unsigned long long ranges; /* ranges it took */
} m_tiles;

static int m_tiles_open(void *ctx, unsigned long long total, const char *variant, int *list,
                        char *why, size_t why_len)
{
    m_tiles *t = ctx;
    pthread_mutex_lock(&t->mu);
    const int k = t->opens++;
    pthread_mutex_unlock(&t->mu);
    *list = k;
    m_list set;
    int bad;
    if (m_rank == 0) {
        bad = m_server_open(t->c->sv, 0, k, total, variant, &set);
    } else {
        m_req q;
        m_rep rep;
        memset(&q, 0, sizeof q);
        q.list = k;
        q.total = total;
        snprintf(q.variant, sizeof q.variant, "%s", variant);
        if (m_ask(t->c, TAG_OPEN, &q, TAG_OPENED, &rep)) {
            snprintf(why, why_len, "%s", err_msg());
            return 1;
        }
        bad = (int)rep.w[0];
        set.total = rep.w[1];
        set.first = (int)rep.w[2];
        rep.variant[sizeof rep.variant - 1] = '\0';
        snprintf(set.variant, sizeof set.variant, "%s", rep.variant);
    }
    if (bad)
        snprintf(why, why_len,
                 "its work list %d is %llu items of '%s' where rank %d's is %llu items of '%s': "
                 "the ranks' GPUs or settings differ (one kind of GPU per run)",
                 k, total, variant, set.first, set.total, set.variant);
    return bad;
}

static int m_tiles_take(void *ctx, int list, unsigned long long least, unsigned long long most,
                        int ndev, unsigned long long *b, unsigned long long *e)
{
    m_tiles *t = ctx;
    int stop = 0, ok;
    if (m_rank == 0) {
        ok = m_server_take_tiles(t->c->sv, list, least, most, ndev, b, e, &stop);
    } else {
        m_req q;
        m_rep rep;
        memset(&q, 0, sizeof q);
        q.list = list;
        q.least = least;
        q.most = most;
        q.ndev = ndev;
        memset(&rep, 0, sizeof rep);
        if (m_ask(t->c, TAG_TILE, &q, TAG_RANGE, &rep))
            rep.w[2] = 1; /* the job is broken: this rank stops */
        *b = rep.w[0];
        *e = rep.w[1];
        stop = (int)rep.w[2];
        ok = *e > *b && !stop;
    }
    if (stop || *t->c->local_stop) {
        *t->c->local_stop = 1;
        return 0;
    }
    if (ok) {
        pthread_mutex_lock(&t->mu);
        t->taken += *e - *b;
        t->ranges++;
        pthread_mutex_unlock(&t->mu);
    }
    return ok;
}

/* Whether a run of e is shared tile by tile: a GPU row that runs through
 * kernels.h's join entries (engine.kjoin); the others (the CPU engines,
 * the ladder) by query rows. TCJOIN_MPI_SPLIT=rows forces rows (for
 * measuring the difference). */
static int m_by_tiles(const engine *e, const join_spec *js)
{
    const char *f = getenv("TCJOIN_MPI_SPLIT");
    return js && e->gpu && e->kjoin && !(f && strcmp(f, "rows") == 0);
}

/* ---- a shared run ---- */

/* A test hook (tests/mpi/): TCJOIN_MPI_FAULT=RANK:error makes that rank's
 * first part fail, RANK:kill kills it there, RANK:mpi makes an MPI call
 * fail there (MPI's own error), RANK:slow makes it wait 3 s before it asks
 * for its first range (a slow rank). */
static const char *m_fault_kind(void)
{
    const char *f = getenv("TCJOIN_MPI_FAULT");
    if (!f)
        return "";
    char *colon;
    long r = strtol(f, &colon, 10);
    return r == m_rank && *colon == ':' ? colon + 1 : "";
}

static int m_fault(int part)
{
    const char *k = m_fault_kind();
    if (part != 0 || !*k || strcmp(k, "slow") == 0)
        return 0;
    if (strcmp(k, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(k, "mpi") == 0) {
        /* A negative count: MPI refuses the call with its own code. */
        int x = 0;
        return m_allreduce(MPI_IN_PLACE, &x, -1, MPI_INT, MPI_SUM, "injected fault");
    }
    return err_set(TCJ_EIO, "injected fault (TCJOIN_MPI_FAULT)");
}

/* The pairs a rank found, kept for the other ranks when the sink is not a
 * per-rank file (compare's and the lab's in-memory buffers). */
typedef struct m_pairs {
    size_t len, cap;
    uint32_t *i, *j;
    double *d2;
} m_pairs;

static int m_pairs_put(void *ctx, const pair_batch *b)
{
    m_pairs *p = ctx;
    if (p->len + b->k > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + b->k)
            cap *= 2;
        p->i = xrealloc(p->i, cap * sizeof *p->i);
        p->j = xrealloc(p->j, cap * sizeof *p->j);
        p->d2 = xrealloc(p->d2, cap * sizeof *p->d2);
        p->cap = cap;
    }
    memcpy(p->i + p->len, b->i, b->k * sizeof *b->i);
    memcpy(p->j + p->len, b->j, b->k * sizeof *b->j);
    memcpy(p->d2 + p->len, b->d2, b->k * sizeof *b->d2);
    p->len += b->k;
    return 0;
}

/* Every rank's pairs to every rank, handed to sink in batches in rank
 * order. The sink may refuse (compare's full buffer): that ends the replay
 * with its code, the same on every rank. */
static int m_pairs_replay(m_pairs *p, const pair_sink *sink, size_t batch)
{
    static const char what[] = "sharing the ranks' pairs";
    long long mine = (long long)p->len, *lens = xmalloc((size_t)m_size * sizeof *lens);
    int rc = m_allgather(&mine, lens, 1, MPI_LONG_LONG, what);
    for (int r = 0; r < m_size && !rc; r++) {
        for (long long off = 0; off < lens[r] && !rc;) {
            long long k = lens[r] - off < (long long)batch ? lens[r] - off : (long long)batch;
            uint32_t *bi = xmalloc((size_t)k * sizeof *bi), *bj = xmalloc((size_t)k * sizeof *bj);
            double *bd = xmalloc((size_t)k * sizeof *bd);
            if (r == m_rank) {
                memcpy(bi, p->i + off, (size_t)k * sizeof *bi);
                memcpy(bj, p->j + off, (size_t)k * sizeof *bj);
                memcpy(bd, p->d2 + off, (size_t)k * sizeof *bd);
            }
            rc = m_bcast(bi, (int)k, MPI_UINT32_T, r, what);
            if (!rc)
                rc = m_bcast(bj, (int)k, MPI_UINT32_T, r, what);
            if (!rc)
                rc = m_bcast(bd, (int)k, MPI_DOUBLE, r, what);
            if (!rc) {
                pair_batch b = {.k = (size_t)k, .i = bi, .j = bj, .d2 = bd};
                rc = sink->put(sink->ctx, &b);
                /* Stop together (the same sinks refuse alike; one that
                 * fails alone must not leave the others broadcasting). */
                int mine_failed = rc != 0, any = 0;
                int arc = m_allreduce(&mine_failed, &any, 1, MPI_INT, MPI_LOR, what);
                if (arc)
                    rc = arc;
                else if (any && !rc)
                    rc = err_set(TCJ_EIO, "the pair sink of another rank refused the pairs");
            }
            free(bi);
            free(bj);
            free(bd);
            off += k;
        }
    }
    free(lens);
    return rc;
}

static void m_add_phases(join_result *to, const join_result *from)
{
    for (int k = 0; k < from->nphase; k++) {
        int f = -1;
        for (int j = 0; j < to->nphase; j++)
            if (strcmp(to->phase[j].name, from->phase[k].name) == 0)
                f = j;
        if (f >= 0)
            to->phase[f].seconds += from->phase[k].seconds;
        else
            join_result_phase(to, from->phase[k].name, from->phase[k].seconds);
    }
}

/* A metric's value in r, NULL when r has none by that name. */
static double *m_metric(join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (strcmp(r->metric[k].name, name) == 0)
            return &r->metric[k].value;
    return NULL;
}

/* The metrics that add up over parts and ranks (a pruned run's pairs
 * examined: the derived rate counts them, src/engine.c; exact's band and
 * refinement counts, which over a tile-shared run then equal one
 * process's; their fractions are formed again from the sums). */
static const char *const m_additive[] = {"pairs_examined", "refined_pairs", "band_pairs",
                                         "listed_pairs", "sequential_pairs"};

/* Progress of a part mapped onto the whole (rank 0 alone reports). */
typedef struct m_prog {
    void (*fn)(void *ctx, double frac);
    void *ctx;
    m_server *sv;
    size_t b, e, q0, nq;
    int tiles; /* shared by tiles: the current list's counter */
} m_prog;

static void m_prog_fn(void *ctx, double frac)
{
    m_prog *p = ctx;
    if (!p->fn || !p->nq)
        return;
    if (p->tiles) {
        pthread_mutex_lock(&p->sv->mu);
        const m_list *l = p->sv->nlists ? &p->sv->lists[p->sv->nlists - 1] : NULL;
        double f = l && l->total ? (double)l->next / (double)l->total : 0;
        pthread_mutex_unlock(&p->sv->mu);
        /* Ranges handed out count as half done: a rough middle. */
        p->fn(p->ctx, f * (0.5 + 0.5 * frac));
        return;
    }
    pthread_mutex_lock(&p->sv->mu);
    size_t taken = p->sv->next - p->q0;
    pthread_mutex_unlock(&p->sv->mu);
    /* Ranges taken by others count as half done: a rough middle. */
    double done = ((double)taken - (double)(p->e - p->b) * (1 - frac)) / (double)p->nq;
    p->fn(p->ctx, done < 0 ? 0 : done > 1 ? 1 : done);
}

/* What one part computes: a join or a k-distance over rows [b, e). */
typedef struct m_work {
    const engine *e;
    const join_spec *js;
    const kdist_spec *ks;
    /* the join's parts' targets */
    pair_sink sink;
    uint64_t *hist, hist_below;
    uint64_t pairs;
    const kern_tiles *tiles; /* a GPU join shared by tiles */
} m_work;

/* A GPU rank's device: the node-local rank's GPU, counted from the one
 * `set device` names (local rank mod the host's GPUs), unless `set devices`
 * lists them. The options are copied into *mine. */
static const engine_opts *m_opts(const engine *e, const engine_opts *o, engine_opts *mine)
{
    static int ndev = -1;
    if (!e->gpu || !o || o->devices || o->devices_all)
        return o;
    if (ndev < 0) {
        ndev = kern_device_count();
        err_clear();
    }
    if (ndev <= 1)
        return o;
    *mine = *o;
    mine->device = (o->device + m_local_rank) % ndev;
    return mine;
}

static int m_part(m_work *w, size_t b, size_t e, volatile int *stop, m_prog *pg, join_result *acc,
                  int first)
{
    join_result r;
    int rc;
    engine_opts own;
    if (w->js) {
        join_spec p = *w->js;
        p.q0 = b;
        p.q1 = e;
        p.cancel = stop;
        p.progress = pg ? m_prog_fn : NULL;
        p.progress_ctx = pg;
        p.opts = m_opts(w->e, p.opts, &own);
        p.tiles = w->tiles;
        if (p.mode == JOIN_PERPOINT)
            p.counts = w->js->counts + (b - w->js->q0);
        if (p.mode == JOIN_PAIRS)
            p.sink = w->sink;
        uint64_t below = 0;
        if (p.mode == JOIN_HIST) {
            p.hist = xcalloc(w->js->hist_nbins, sizeof *p.hist);
            p.hist_below = &below;
        }
        rc = engine_run(w->e, &p, &r);
        if (!rc && p.mode == JOIN_HIST) {
            for (size_t k = 0; k < w->js->hist_nbins; k++)
                w->hist[k] += p.hist[k];
            w->hist_below += below;
        }
        if (p.mode == JOIN_HIST)
            free(p.hist);
        if (!rc)
            w->pairs += r.pairs;
    } else {
        kdist_spec p = *w->ks;
        p.q0 = b;
        p.q1 = e;
        p.cancel = stop;
        p.progress = pg ? m_prog_fn : NULL;
        p.progress_ctx = pg;
        p.out = w->ks->out + (b - w->ks->q0);
        p.opts = m_opts(w->e, p.opts, &own);
        rc = kdist_run(w->e, &p, &r);
    }
    if (first) {
        /* The first part's description stands for the rank's. */
        join_result keep = r;
        keep.nphase = 0;
        keep.kernel_seconds = 0;
        *acc = keep;
    }
    m_add_phases(acc, &r);
    acc->kernel_seconds += r.kernel_seconds;
    for (size_t k = 0; !first && k < sizeof m_additive / sizeof *m_additive; k++) {
        double *to = m_metric(acc, m_additive[k]), *from = m_metric(&r, m_additive[k]);
        if (to && from)
            *to += *from;
        else if (from)
            join_result_metric(acc, m_additive[k], *from, "pairs");
    }
    return rc;
}

/* The run as this rank sees it, for the check-in: the ranks must agree. */
static void m_describe(const engine *e, const join_spec *js, const kdist_spec *ks, char *buf,
                       size_t len)
{
    const dataset *ds = js ? js->ds : ks->ds;
    if (js)
        snprintf(buf, len,
                 "join %s mode %d eps %a rows %zu:%zu bins %zu on n=%zu d=%zu hash %016llx",
                 e->name, (int)js->mode, js->eps, js->q0, js->q1, js->hist_nbins, ds->n, ds->d,
                 (unsigned long long)ds->hash);
    else
        snprintf(buf, len, "kdist %s K=%d rows %zu:%zu on n=%zu d=%zu hash %016llx", e->name, ks->k,
                 ks->q0, ks->q1, ds->n, ds->d, (unsigned long long)ds->hash);
}

/* res is being filled anew: no kept ranks of an earlier run stand for it. */
static void m_forget(const join_result *res)
{
    for (int k = 0; k < M_KEEP; k++)
        if (m_kept[k].res == res)
            m_kept[k].res = NULL;
}

/* buf[0..n) (elements of size bytes, type t) reduced by op on every rank,
 * in pieces that an int count holds. 0, or a TCJ_E* code with err_msg
 * naming `what`. */
static int m_reduce(void *buf, size_t n, size_t size, MPI_Datatype t, MPI_Op op, const char *what)
{
    /* at most 2^26 records and 1 GB a call (the curve's lists are 1,032
     * bytes a record) */
    const size_t most = ((size_t)1 << 30) / size;
    const size_t piece = most < ((size_t)1 << 26) ? (most ? most : 1) : (size_t)1 << 26;
    int rc = 0;
    for (size_t o = 0; o < n && !rc; o += piece) {
        size_t k = n - o < piece ? n - o : piece;
        rc = m_allreduce(MPI_IN_PLACE, (char *)buf + o * size, (int)k, t, op, what);
    }
    return rc;
}

static int m_shared(const engine *e, const join_spec *js, const kdist_spec *ks, join_result *res)
{
    /* A part calling back, or a run inside an engine: this process. */
    int zero = 0;
    if (!atomic_compare_exchange_strong(&m_busy, &zero, 1))
        return DIST_LOCAL;
    const double t_run = engine_now();
    mpi_rec mine, *all = xmalloc((size_t)m_size * sizeof *all);
    m_rec_init(&mine, STAGE_JOIN);
    m_describe(e, js, ks, mine.what, sizeof mine.what);
    int rc = m_sync(&mine, all);
    if (rc)
        goto out;
    int other = m_other_stage(all, STAGE_JOIN);
    if (other >= 0) {
        rc = m_fail_from(all, other);
        goto out;
    }
    for (int r = 1; r < m_size; r++)
        if (strcmp(all[r].what, all[0].what) != 0) {
            rc = err_set(TCJ_EINVAL,
                         "rank %d (%s) would run '%s' where rank 0 runs '%s': the ranks' "
                         "datasets or settings differ",
                         r, all[r].host, all[r].what, all[0].what);
            goto out;
        }

    const size_t q0 = js ? js->q0 : ks->q0, q1 = js ? js->q1 : ks->q1;
    const join_mode mode = js ? js->mode : JOIN_COUNT;
    const size_t nb = js && mode == JOIN_HIST ? js->hist_nbins : 0;
    m_work w = {.e = e, .js = js, .ks = ks};
    m_pairs kept = {0};
    const int file_sink = js && mode == JOIN_PAIRS && js->sink.put == sink_file_pair_sink(NULL).put;
    /* A per-rank file, or a sink whose caller merges the ranks' shares
     * (DBSCAN's): each rank's pairs go to its own; any other sink sees
     * every rank's pairs, kept and replayed in rank order. */
    const int own_sink = file_sink || (js && js->sink_rank_share);
    if (js && mode == JOIN_PAIRS)
        w.sink = own_sink ? js->sink : (pair_sink){m_pairs_put, &kept};
    if (nb)
        w.hist = xcalloc(nb, sizeof *w.hist);
    if (js && mode == JOIN_PERPOINT)
        memset(js->counts, 0, (q1 - q0) * sizeof *js->counts);
    if (ks)
        memset(ks->out, 0, (q1 - q0) * sizeof *ks->out);

    volatile int stop = 0;
    m_server sv;
    memset(&sv, 0, sizeof sv);
    pthread_mutex_init(&sv.mu, NULL);
    sv.next = q0;
    sv.end = q1;
    sv.total = q1 - q0;
    sv.user_cancel = js ? js->cancel : ks->cancel;
    sv.local_stop = &stop;
    pthread_t tid;
    int have_thread = 0;
    struct sigaction old_term, on_term;
    if (m_rank == 0) {
        memset(&on_term, 0, sizeof on_term);
        on_term.sa_handler = m_on_term;
        sigaction(SIGTERM, &on_term, &old_term);
        have_thread = pthread_create(&tid, NULL, m_server_main, &sv) == 0;
    }
    m_client cl = {&sv, &stop, 1};
    /* A GPU join: every rank runs the whole run, each taking ranges of
     * the engine's own work list (its tiles, the symmetric half kept)
     * from rank 0's counter; its counts are its tiles' share. */
    const int by_tiles = m_by_tiles(e, js);
    m_tiles tl;
    memset(&tl, 0, sizeof tl);
    tl.c = &cl;
    pthread_mutex_init(&tl.mu, NULL);
    const kern_tiles kt = {m_tiles_open, m_tiles_take, &tl};
    if (by_tiles)
        w.tiles = &kt;
    pthread_t wtid;
    int watching = m_rank != 0 && pthread_create(&wtid, NULL, m_watch, &cl) == 0;
    m_prog pg = {js ? js->progress : ks->progress,
                 js ? js->progress_ctx : ks->progress_ctx,
                 &sv,
                 0,
                 0,
                 q0,
                 q1 - q0,
                 0};
    join_result acc;
    memset(&acc, 0, sizeof acc);
    const double t0 = engine_now();
    size_t b, eend;
    int qstop = 0, part = 0, lrc = 0;
    if (strcmp(m_fault_kind(), "slow") == 0)
        sleep(3);
    const mpi_queue q = {m_take, &cl};
    if (by_tiles) {
        pg.b = q0;
        pg.e = q1;
        pg.tiles = 1;
        if (!(lrc = m_fault(0)))
            lrc = m_part(&w, q0, q1, &stop, m_rank == 0 ? &pg : NULL, &acc, 1);
        mine.rows = tl.taken;
        part = (int)tl.ranges;
        mine.lists = tl.opens;
    }
    while (!by_tiles && !lrc && q.take(q.ctx, &b, &eend, &qstop)) {
        if ((lrc = m_fault(part)))
            break;
        pg.b = b;
        pg.e = eend;
        lrc = m_part(&w, b, eend, &stop, m_rank == 0 ? &pg : NULL, &acc, part == 0);
        mine.rows += eend - b;
        part++;
    }
    if (!lrc && (qstop || stop))
        lrc = err_set(TCJ_ECANCEL, ERR_CANCELLED);
    mine.seconds = engine_now() - t0;
    mine.chunks = (uint64_t)part;
    mine.pairs = w.pairs;
    if (m_rank == 0) {
        pthread_mutex_lock(&sv.mu);
        sv.main_done = 1;
        if (lrc)
            sv.stop = 1;
        pthread_mutex_unlock(&sv.mu);
        if (have_thread)
            pthread_join(tid, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        /* The last answers go out before their buffers are freed; in a
         * broken job they are left (the job ends). */
        if (!m_term && !mpi_wait_broken()) {
            const mpi_wait_on on = {.peer = -1, .what = "the queue's answers"};
            if (mpi_wait_all(sv.sent.n, sv.sent.rq, MPI_STATUSES_IGNORE, &on) == 0)
                m_sent_free(&sv.sent);
        }
    } else {
        if (watching) {
            cl.watching = 0;
            pthread_join(wtid, NULL);
        }
        /* A failure breaks the job: the outcome's meeting then fails. */
        if (!m_term)
            m_bye(&cl, lrc != 0);
    }
    pthread_mutex_destroy(&sv.mu);
    pthread_mutex_destroy(&tl.mu);
    free(sv.lists);
    if (m_term) {
        /* A rank died and mpirun is ending the job: no meeting can
         * complete. Fail here so that rank 0's log keeps the run. */
        free(w.hist);
        free(kept.i);
        free(kept.j);
        free(kept.d2);
        rc = err_set(TCJ_EIO, "mpirun is stopping every rank (a rank died, or mpirun was "
                              "interrupted)");
        goto out;
    }

    /* The outcome: every rank's code, share and time. */
    mpi_rec share = mine;
    m_rec_init(&mine, STAGE_OUTCOME);
    mine.rows = share.rows;
    mine.chunks = share.chunks;
    mine.pairs = share.pairs;
    mine.seconds = share.seconds;
    mine.lists = share.lists;
    mine.rc = lrc;
    if (lrc)
        snprintf(mine.msg, sizeof mine.msg, "%s", err_msg());
    snprintf(mine.device, sizeof mine.device, "%s", acc.device);
    if ((rc = m_sync(&mine, all)) != 0) {
        free(w.hist);
        free(kept.i);
        free(kept.j);
        free(kept.d2);
        goto out;
    }
    other = m_other_stage(all, STAGE_OUTCOME);
    if (other >= 0)
        rc = m_fail_from(all, other);
    /* The cause: the first rank that failed of itself, else a cancel. */
    for (int r = 0; r < m_size && !rc; r++)
        if (all[r].rc && all[r].rc != TCJ_ECANCEL)
            rc = m_fail_from(all, r);
    for (int r = 0; r < m_size && !rc; r++)
        if (all[r].rc)
            rc = err_set(TCJ_ECANCEL, ERR_CANCELLED);
    /* Shared by tiles, every rank must have taken its work from the queue,
     * list for list: a rank that ran a list of its own computed it whole
     * (its counts would be added twice). */
    for (int r = 0; r < m_size && !rc && by_tiles; r++)
        if (all[r].lists != all[0].lists || all[r].lists == 0)
            rc = err_set(TCJ_EINVAL,
                         "rank %d (%s): %s ran %d work lists through the ranks' queue where "
                         "rank 0 ran %d: run it in one process (tcjoin)",
                         r, all[r].host, e->name, all[r].lists, all[0].lists);

    if (!rc) {
        static const char what[] = "reducing the ranks' results";
        if (js && mode == JOIN_PERPOINT)
            rc = m_reduce(js->counts, q1 - q0, sizeof *js->counts, MPI_UINT64_T, MPI_SUM, what);
        if (ks && !rc)
            rc = m_reduce(ks->out, q1 - q0, sizeof *ks->out, MPI_DOUBLE, MPI_SUM, what);
        if (nb && !rc)
            rc = m_allreduce(w.hist, js->hist, (int)nb, MPI_UINT64_T, MPI_SUM, what);
        if (nb && !rc)
            rc = m_allreduce(&w.hist_below, js->hist_below, 1, MPI_UINT64_T, MPI_SUM, what);
        if (!rc && js && mode == JOIN_PAIRS && !own_sink) {
            const engine_opts *o = js->opts;
            size_t batch = o && o->batch_pairs ? o->batch_pairs : (size_t)1 << 20;
            rc = m_pairs_replay(&kept, &js->sink, batch);
        }
    }
    free(w.hist);
    free(kept.i);
    free(kept.j);
    free(kept.d2);

    /* The record: rank 0's description, the pairs of all, the ranks ran
     * side by side (the longest rank's kernel time and phases). */
    *res = acc;
    uint64_t total = 0;
    double kmax = 0;
    for (int r = 0; r < m_size; r++)
        total += all[r].pairs;
    static const char rec_what[] = "adding up the ranks' counters";
    int mrc = m_allreduce(&acc.kernel_seconds, &kmax, 1, MPI_DOUBLE, MPI_MAX, rec_what);
    res->kernel_seconds = kmax;
    res->pairs = js ? total : 0;
    for (size_t k = 0; k < sizeof m_additive / sizeof *m_additive && !mrc; k++) {
        double *v = m_metric(res, m_additive[k]), mine_v = v ? *v : 0, sum = 0;
        int have = v != NULL, any = 0;
        mrc = m_allreduce(&mine_v, &sum, 1, MPI_DOUBLE, MPI_SUM, rec_what);
        if (!mrc)
            mrc = m_allreduce(&have, &any, 1, MPI_INT, MPI_LOR, rec_what);
        if (v)
            *v = sum;
        else if (any)
            join_result_metric(res, m_additive[k], sum, "pairs");
    }
    if (mrc && !rc)
        rc = mrc;
    if (js) {
        /* exact's fractions over the whole run's pairs (engine_gpu_result.c) */
        double *rf = m_metric(res, "refined_fraction"), *bf = m_metric(res, "band_fraction");
        double *rp = m_metric(res, "refined_pairs"), *bp = m_metric(res, "band_pairs");
        if (rf && rp)
            *rf = total ? *rp / (double)total : 0;
        if (bf && bp)
            *bf = total ? *bp / (double)total : 0;
    }
    int hosts = 0;
    for (int r = 0; r < m_size; r++) {
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= strcmp(all[q].host, all[r].host) == 0;
        hosts += !seen;
    }
    char dev[sizeof res->device];
    snprintf(dev, sizeof dev, "%s", acc.device[0] ? acc.device : e->name);
    snprintf(res->device, sizeof res->device, "%.80s x%d ranks, %d host%s", dev, m_size, hosts,
             hosts == 1 ? "" : "s");
    join_result_metric(res, "ranks", m_size, "");
    /* 1: the ranks shared the engine's tiles (rank%d_rows count items). */
    join_result_metric(res, "ranks_by_tiles", by_tiles, "");
    join_result_metric(res, "hosts", hosts, "");
    for (int r = 0; r < m_size && r < 32; r++) {
        char name[64];
        snprintf(name, sizeof name, "rank%d_rows", r);
        join_result_metric(res, name, (double)all[r].rows, "");
        snprintf(name, sizeof name, "rank%d_parts", r);
        join_result_metric(res, name, (double)all[r].chunks, "");
        snprintf(name, sizeof name, "rank%d_seconds", r);
        join_result_metric(res, name, all[r].seconds, "s");
        if (js) {
            snprintf(name, sizeof name, "rank%d_pairs", r);
            join_result_metric(res, name, (double)all[r].pairs, "");
        }
    }
    if (m_rank == 0) {
        for (int k = 0; k < M_KEEP; k++)
            if (m_kept[k].res == res)
                m_kept[k].res = NULL;
        int k = m_kept_next++ % M_KEEP;
        free(m_kept[k].all);
        m_kept[k].res = res;
        m_kept[k].all = xmalloc((size_t)m_size * sizeof *all);
        memcpy(m_kept[k].all, all, (size_t)m_size * sizeof *all);
    }
    res->seconds = engine_now() - t_run;
    if (!rc && pg.fn && m_rank == 0)
        pg.fn(pg.ctx, 1.0);
out:
    free(all);
    atomic_store(&m_busy, 0);
    return rc;
}

static int m_join(const engine *e, const join_spec *s, join_result *res)
{
    if (atomic_load(&m_busy) == 0)
        m_forget(res);
    if (!s->ds || s->ds->n == 0 || s->q0 >= s->q1)
        return DIST_LOCAL; /* engine_run's own checks answer */
    int rc = m_shared(e, s, NULL, res);
    if (rc != DIST_LOCAL && !res->precision[0])
        snprintf(res->precision, sizeof res->precision, "%s", e->precision);
    return rc;
}

static int m_kdist(const engine *e, const kdist_spec *s, join_result *res)
{
    if (atomic_load(&m_busy) == 0)
        m_forget(res);
    if (!s->ds || s->ds->n == 0 || s->q0 >= s->q1 || !e->kdist || !s->out)
        return DIST_LOCAL;
    int rc = m_shared(e, NULL, s, res);
    if (rc != DIST_LOCAL && !res->precision[0])
        snprintf(res->precision, sizeof res->precision, "%s", e->precision);
    return rc;
}

/* ---- pair files ---- */

static int m_pairs_closed(const char *path, const char *format, int ok, uint64_t pairs)
{
    mpi_rec mine, *all = xmalloc((size_t)m_size * sizeof *all);
    m_rec_init(&mine, STAGE_PAIRS);
    mine.rc = ok ? 0 : TCJ_EIO;
    mine.pairs = pairs;
    if (!ok)
        snprintf(mine.msg, sizeof mine.msg, "%s", err_msg()[0] ? err_msg() : "not written");
    int rc = m_sync(&mine, all);
    int other = rc ? -1 : m_other_stage(all, STAGE_PAIRS);
    if (other >= 0)
        rc = m_fail_from(all, other);
    for (int r = 0; r < m_size && !rc; r++)
        if (all[r].rc)
            rc = m_fail_from(all, r);
    if (!rc && ok && m_rank == 0) {
        /* PATH.manifest: the files whose union is the pair set. */
        char mp[4200];
        snprintf(mp, sizeof mp, "%s.manifest", path);
        FILE *f = fopen(mp, "w");
        uint64_t total = 0;
        for (int r = 0; r < m_size; r++)
            total += all[r].pairs;
        if (!f) {
            rc = err_set(TCJ_EIO, "%s: cannot write the manifest", mp);
        } else {
            fprintf(f, "# tcjoin pair files: their union is the join's pair set\n");
            fprintf(f, "format %s\nranks %d\npairs %llu\n", format, m_size,
                    (unsigned long long)total);
            for (int r = 0; r < m_size; r++)
                fprintf(f, "file %s.%d rank %d host %s pairs %llu\n", path, r, r, all[r].host,
                        (unsigned long long)all[r].pairs);
            if (fclose(f) != 0)
                rc = err_set(TCJ_EIO, "%s: cannot write the manifest", mp);
        }
    }
    free(all);
    return rc;
}

/* ---- DBSCAN's merges (src/dist.h) ---- */

/* Pieces of n values whose count fits MPI's int. */
#define M_PIECE ((size_t)1 << 28)

static uint32_t m_uf_find(uint32_t *p, uint32_t x)
{
    while (p[x] != x) {
        p[x] = p[p[x]]; /* path halving: parents stay smaller */
        x = p[x];
    }
    return x;
}

/* The forests of every rank merged by a binomial tree onto rank 0 (at
 * step s, rank r + s sends its forest to rank r, which unions each edge
 * (x, parent(x)) of it into its own: the union of two forests' components
 * in O(n)), then the roots broadcast. Union by the smaller root keeps
 * parent[x] <= x, so a root is its component's smallest index, as in one
 * process. */
/* A message to (send) or from one rank inside meeting number `meeting`,
 * waited on as the meeting. */
static int m_p2p(int send, void *buf, int count, MPI_Datatype t, int peer, int tag, int meeting,
                 const char *what)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    MPI_Request rq;
    mpi_wait_lock();
    int mrc = send ? MPI_Isend(buf, count, t, peer, tag, m_cmd, &rq)
                   : MPI_Irecv(buf, count, t, peer, tag, m_cmd, &rq);
    mpi_wait_unlock();
    return m_meet(mrc, &rq, meeting, what);
}

static int m_forest_merge(uint32_t *parent, size_t n)
{
    static const char what[] = "dbscan: merging the ranks' forests";
    const int meeting = mpi_wait_meeting();
    uint32_t *other = NULL;
    int rc = 0;
    for (int step = 1; step < m_size && !rc; step *= 2) {
        if (m_rank % (2 * step) == step) {
            for (size_t o = 0; o < n && !rc; o += M_PIECE) {
                size_t k = n - o < M_PIECE ? n - o : M_PIECE;
                rc = m_p2p(1, parent + o, (int)k, MPI_UINT32_T, m_rank - step, TAG_FOREST, meeting,
                           what);
            }
            break; /* this rank's forest is in rank m_rank - step's now */
        }
        if (m_rank % (2 * step) != 0 || m_rank + step >= m_size)
            continue;
        if (!other)
            other = xmalloc((n ? n : 1) * sizeof *other);
        for (size_t o = 0; o < n && !rc; o += M_PIECE) {
            size_t k = n - o < M_PIECE ? n - o : M_PIECE;
            rc =
                m_p2p(0, other + o, (int)k, MPI_UINT32_T, m_rank + step, TAG_FOREST, meeting, what);
        }
        for (size_t x = 0; x < n && !rc; x++) {
            if (other[x] == x)
                continue;
            uint32_t a = m_uf_find(parent, (uint32_t)x), b = m_uf_find(parent, other[x]);
            if (a != b) {
                if (a < b)
                    parent[b] = a;
                else
                    parent[a] = b;
            }
        }
    }
    free(other);
    if (m_rank == 0)
        for (size_t x = 0; x < n; x++) /* parent[x] < x is a root already */
            parent[x] = parent[parent[x]];
    for (size_t o = 0; o < n && !rc; o += M_PIECE) {
        size_t k = n - o < M_PIECE ? n - o : M_PIECE;
        rc = m_bcast(parent + o, (int)k, MPI_UINT32_T, 0, what);
    }
    return rc;
}

static int m_min_i32(int32_t *v, size_t n)
{
    return m_reduce(v, n, sizeof *v, MPI_INT32_T, MPI_MIN,
                    "dbscan: reducing the ranks' border labels");
}

static int m_sum_u64(uint64_t *v, size_t n)
{
    return m_reduce(v, n, sizeof *v, MPI_UINT64_T, MPI_SUM,
                    "dbscan: adding the ranks' neighbour counts");
}

static int m_min_f64(double *v, size_t n)
{
    return m_reduce(v, n, sizeof *v, MPI_DOUBLE, MPI_MIN,
                    "dbscan curve: reducing the ranks' reachabilities");
}

/* A reduction of n records of size bytes by op over the ranks, on every
 * rank, the records carried as bytes (every rank is this same program on
 * one kind of host). 0 or a TCJ_E* code with err_msg. */
static int m_reduce_bytes(void *v, size_t n, size_t size, MPI_User_function *op, const char *what)
{
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    MPI_Datatype t;
    MPI_Op o;
    mpi_wait_lock();
    int mrc = MPI_Type_contiguous((int)size, MPI_BYTE, &t);
    if (mrc == MPI_SUCCESS && (mrc = MPI_Type_commit(&t)) != MPI_SUCCESS)
        MPI_Type_free(&t);
    if (mrc == MPI_SUCCESS && (mrc = MPI_Op_create(op, 1, &o)) != MPI_SUCCESS)
        MPI_Type_free(&t);
    mpi_wait_unlock();
    if (mrc != MPI_SUCCESS)
        return mpi_wait_check(mrc, what);
    int rc = m_reduce(v, n, size, t, o, what);
    mpi_wait_lock();
    mrc = MPI_Op_free(&o);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Type_free(&t);
    mpi_wait_unlock();
    return rc ? rc : mpi_wait_check(mrc, what);
}

/* Two ranks' lists of each point merged (curve_list_merge). */
static void m_list_merge_op(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const curve_list *x = in;
    curve_list *y = inout;
    for (int k = 0; k < *len; k++)
        curve_list_merge(&x[k], &y[k]);
}

static int m_merge_lists(curve_list *l, size_t n)
{
    return m_reduce_bytes(l, n, sizeof *l, m_list_merge_op,
                          "dbscan curve: merging the ranks' edge lists");
}

/* ---- the log ---- */

static void m_store_run(store *db, int64_t run_id, const join_result *res)
{
    if (m_rank != 0 || !db || run_id <= 0)
        return;
    for (int k = 0; k < M_KEEP; k++) {
        if (!m_kept[k].res || m_kept[k].res != res)
            continue;
        const mpi_rec *all = m_kept[k].all;
        for (int r = 0; r < m_size; r++) {
            store_rank_rec rr = {.run_id = run_id,
                                 .rank = r,
                                 .host = all[r].host,
                                 .device = all[r].device,
                                 .rows = all[r].rows,
                                 .parts = all[r].chunks,
                                 .seconds = all[r].seconds,
                                 .pairs = all[r].pairs,
                                 .status = all[r].rc};
            if (store_run_rank(db, &rr) < 0) {
                cmd_store_failed();
                break;
            }
        }
        m_kept[k].res = NULL;
        return;
    }
}

int mpi_run_init(void)
{
    /* Errors come back as codes: a failed call fails the run, and the
     * communicators duplicated below inherit it. */
    int mrc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_rank(MPI_COMM_WORLD, &m_rank);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_size(MPI_COMM_WORLD, &m_size);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_dup(MPI_COMM_WORLD, &m_cmd);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_dup(MPI_COMM_WORLD, &m_q);
    MPI_Comm node = MPI_COMM_NULL, pulse = MPI_COMM_NULL;
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_rank(node, &m_local_rank);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_free(&node);
    if (mrc == MPI_SUCCESS)
        mrc = MPI_Comm_dup(MPI_COMM_WORLD, &pulse);
    if (mrc != MPI_SUCCESS)
        return mpi_wait_check(mrc, "starting the ranks");
    gethostname(m_host, sizeof m_host - 1);
    int rc = mpi_wait_init(pulse);
    if (rc)
        return rc;
    m_ops = (dist_ops){.rank = m_rank,
                       .nranks = m_size,
                       .command_begin = m_command_begin,
                       .command_end = m_command_end,
                       .skip = m_skip,
                       .join = m_join,
                       .kdist = m_kdist,
                       .pairs_closed = m_pairs_closed,
                       .store_run = m_store_run,
                       .forest_merge = m_forest_merge,
                       .min_i32 = m_min_i32,
                       .sum_u64 = m_sum_u64,
                       .min_f64 = m_min_f64,
                       .merge_lists = m_merge_lists};
    dist = &m_ops;
    return 0;
}

int mpi_run_end(void)
{
    /* Every rank at the end (bounded as every meeting), then the pulses
     * stop: MPI_Finalize then waits on no one. */
    MPI_Request rq;
    if (mpi_wait_broken())
        return mpi_wait_broken_error();
    const int k = mpi_wait_meeting();
    mpi_wait_lock();
    int mrc = MPI_Ibarrier(m_cmd, &rq);
    mpi_wait_unlock();
    int rc = m_meet(mrc, &rq, k, "the ranks' last meeting");
    int erc = mpi_wait_end();
    return rc ? rc : erc;
}
