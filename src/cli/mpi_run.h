/* tcjoin-mpi's shared runs and command steps (src/dist.h's hooks over
 * MPI). Only tcjoin-mpi links this. */
#ifndef TCJ_MPI_RUN_H
#define TCJ_MPI_RUN_H

#include <mpi.h>

#include "dist.h"

/* Set up the communicators and install `dist` (rank and size from
 * MPI_COMM_WORLD). Call after MPI_Init_thread. */
void mpi_run_init(void);

/* Rank 0: send the command text to the other ranks (NULL: the session is
 * over). Other ranks: the next command into *text (malloc'ed, the
 * caller's), or 0 when the session is over. */
void mpi_send_command(const char *text);
int mpi_recv_command(char **text);

/* Whether mpirun is ending the job (a rank died during a run): rank 0
 * then leaves without meeting the others. */
int mpi_job_dying(void);

#endif
