/* The ranks of a run of tcjoin-mpi (schema version 8, table run_ranks):
 * one row per rank with its host, device, share and time. */
#ifndef TCJ_STORE_RANKS_H
#define TCJ_STORE_RANKS_H

#include <stdint.h>

#include "store.h"

typedef struct store_rank_rec {
    int64_t run_id;
    int rank;
    const char *host, *device;
    uint64_t rows, parts, pairs; /* query rows taken, queue ranges, pairs found */
    double seconds;              /* from the run's start to this rank's last range */
    int status;                  /* 0, or the rank's own TCJ_E* code */
} store_rank_rec;

/* One rank's row; returns its id or a negative TCJ_E* code (err_msg). */
int64_t store_run_rank(store *st, const store_rank_rec *r);

#endif
