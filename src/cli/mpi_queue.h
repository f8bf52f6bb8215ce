/* The work queue the ranks of tcjoin-mpi share (src/cli/mpi_run.c): ranges of
 * a list of work items, handed out on request by a counter on rank 0, so
 * that a faster rank takes more. For the CPU engines the items are query
 * rows and each range is one engine run over those rows; the GPU engines'
 * joins take ranges of their own work list (tiles) from the same counter
 * through kernels.h's kern_tiles (mpi_run.c's m_tiles_open/m_tiles_take). */
#ifndef TCJ_MPI_QUEUE_H
#define TCJ_MPI_QUEUE_H

#include <stddef.h>

typedef struct mpi_queue {
    /* The next range [*b, *e) of the list; 0 when there is none left or the
     * run is stopping (another rank failed, rank 0 was cancelled: then
     * *stop is set). Called by one thread of a rank at a time. */
    int (*take)(void *ctx, size_t *b, size_t *e, int *stop);
    void *ctx;
} mpi_queue;

/* The size of each range: dist_chunk (src/dist.h). */

#endif
