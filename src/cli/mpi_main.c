/* tcjoin-mpi: `mpirun -np R tcjoin-mpi [options] [FILE.tcj | -e 'CMD; CMD']`.
 * Rank 0 is tcjoin as usual (src/cli/main.c, built here as tcjoin_main): it
 * reads the script, the -e commands or standard input, opens the session
 * log, and sends each command to the other ranks (src/cli/mpi_run.c). Every
 * other rank runs the commands it is sent, silently, without a log, until
 * rank 0 says the session is over. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "err.h"
#include "interrupt.h"
#include "mpi_run.h"
#include "mpi_wait.h"
#include "out.h"
#include "session.h"
#include "settings.h"

int tcjoin_main(int argc, char **argv);

static void mpi_quiet(void *ctx, out_kind kind, const char *text)
{
    (void)ctx;
    (void)kind;
    (void)text;
}

/* A rank other than 0: the session's state, fed by rank 0's commands. */
static void mpi_follow(void)
{
    static session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    s.batch = 1;
    out_set_sink(mpi_quiet, NULL);
    /* Ctrl-C is rank 0's: it cancels the run there, the queue stops every
     * rank, and rank 0's pulses cancel the command this rank runs. */
    signal(SIGINT, SIG_IGN);
    mpi_wait_follow_cancel(&s.cancel);
    char *text;
    while (mpi_recv_command(&text) > 0) {
        /* quit ends rank 0's session, which then says so; until then this
         * rank takes every command rank 0 sends. */
        s.quit = 0;
        cmd_exec(&s, text);
        free(text);
        if (mpi_wait_broken())
            break;
    }
    if (s.have_ds)
        dataset_free(&s.ds);
}

int main(int argc, char **argv)
{
    int provided = 0;
    /* The threads of a rank (rank 0's queue, the pulses, a watcher) call
     * MPI one at a time, under mpi_wait_lock. */
    if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "tcjoin-mpi: MPI_Init_thread failed\n");
        return 2;
    }
    if (provided < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "tcjoin-mpi: this MPI library gives no MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (mpi_run_init() != 0) {
        fprintf(stderr, "tcjoin-mpi: %s\n", err_msg());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int rank = dist->rank;
    int status = 0;
    if (rank == 0) {
        status = tcjoin_main(argc, argv);
        fflush(stdout);
        if (mpi_job_dying()) {
            fflush(stderr);
            _exit(status ? status : 1);
        }
        mpi_send_command(NULL);
    } else {
        mpi_follow();
    }
    if (mpi_run_end() != 0) {
        /* The ranks cannot meet again (an MPI error, or rank 0 gave up on
         * a rank after Ctrl-C): MPI_Finalize would wait on them. Rank 0's
         * log is closed by now; the cause is said once. */
        if (!mpi_wait_said()) {
            if (rank == 0)
                fprintf(stderr, "tcjoin-mpi: %s; ending the job\n", err_msg());
            else
                fprintf(stderr, "tcjoin-mpi: rank %d: %s; ending the job\n", rank, err_msg());
        }
        fflush(stdout);
        fflush(stderr);
        /* A thread may be in its last MPI call: one thread at a time. */
        mpi_wait_lock();
        MPI_Abort(MPI_COMM_WORLD, interrupt_pending ? 130 : status ? status : 1);
    }
    if (MPI_Finalize() != MPI_SUCCESS) {
        fprintf(stderr, "tcjoin-mpi: rank %d: MPI_Finalize failed\n", rank);
        return status ? status : 1;
    }
    return status;
}
