/* tcjoin-mpi's shared runs and command steps (src/dist.h's hooks over
 * MPI). Only tcjoin-mpi links this. */
#ifndef TCJ_MPI_RUN_H
#define TCJ_MPI_RUN_H

#include <mpi.h>

#include "dist.h"

/* Set up the communicators and the pulses (src/cli/mpi_wait.h) and
 * install `dist` (rank and size from MPI_COMM_WORLD). Call after
 * MPI_Init_thread. 0, or a TCJ_E* code with err_msg. */
int mpi_run_init(void);
/* Every rank meets a last time and the pulses stop; then MPI_Finalize.
 * 0, or a code with err_msg: the job cannot end in order (MPI_Abort). */
int mpi_run_end(void);

/* Rank 0: send the command text to the other ranks (NULL: the session is
 * over); 0 or a code with err_msg. Other ranks: the next command into
 * *text (malloc'ed, the caller's): 1; 0 when the session is over; -1
 * when the job is broken (mpi_wait_broken). */
int mpi_send_command(const char *text);
int mpi_recv_command(char **text);

/* Whether mpirun is ending the job (a rank died during a run): rank 0
 * then leaves without meeting the others. */
int mpi_job_dying(void);

#endif
