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
#include "mpi_run.h"
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
    /* Ctrl-C is rank 0's: it cancels the run there, and the queue stops
     * every rank. */
    signal(SIGINT, SIG_IGN);
    char *text;
    while (mpi_recv_command(&text)) {
        /* quit ends rank 0's session, which then says so; until then this
         * rank takes every command rank 0 sends. */
        s.quit = 0;
        cmd_exec(&s, text);
        free(text);
    }
    if (s.have_ds)
        dataset_free(&s.ds);
}

int main(int argc, char **argv)
{
    int provided = 0;
    /* Rank 0's queue thread answers the others while the main thread
     * computes; they never call MPI at the same time. */
    MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
    if (provided < MPI_THREAD_SERIALIZED) {
        fprintf(stderr, "tcjoin-mpi: this MPI library gives no MPI_THREAD_SERIALIZED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mpi_run_init();
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
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
    MPI_Finalize();
    return status;
}
