/* Runs spread over processes: the hooks tcjoin-mpi installs (src/mpi_*.c,
 * docs/SCALING.md). In the plain tcjoin `dist` is NULL and every caller
 * below takes its one-process path; nothing here needs MPI. */
#ifndef TCJ_DIST_H
#define TCJ_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"

struct engine;
struct join_spec;
struct join_result;
struct kdist_spec;
struct session;
struct store;

/* What join and kdist return when the caller is to run the work in this
 * process after all (a part of a shared run calling back). */
#define DIST_LOCAL 1

typedef struct dist_ops {
    int rank, nranks;
    /* Rank 0, before each command runs: send it to the other ranks. */
    void (*command_begin)(const char *text);
    /* Every rank, after each command: the ranks' outcomes compared; rank 0
     * reports a failure of another rank in one line. Returns the code the
     * command ends with (the same on every rank). */
    int (*command_end)(struct session *s, int rc);
    /* Whether this rank runs a command: 0 runs it; 1 skips it here (rank
     * 0's log and help: history, show, ...); a TCJ_E* code with err_msg
     * refuses it on every rank (a single-process tool). */
    int (*skip)(const char *name);
    /* engine_run and kdist_run over every rank: the work shared, the
     * results reduced so that every rank holds the whole run's. */
    int (*join)(const struct engine *e, const struct join_spec *s, struct join_result *res);
    int (*kdist)(const struct engine *e, const struct kdist_spec *s, struct join_result *res);
    /* A per-rank pair file closed on every rank (ok: kept): rank 0 writes
     * PATH.manifest naming the ranks' files. */
    int (*pairs_closed)(const char *path, const char *format, int ok, uint64_t pairs);
    /* After rank 0 stored run run_id, whose result is res: the ranks'
     * shares in the log (when res was filled by a shared run). */
    void (*store_run)(struct store *db, int64_t run_id, const struct join_result *res);
    /* DBSCAN over the ranks (src/cluster/dbscan.c): each rank's union-find forest
     * over n rows (parent[x] <= x, built from its share of the pairs)
     * merged with every other rank's; on return every rank's parent[x] is
     * the root of x's component in the union of the forests (its smallest
     * index). O(n) memory a rank. Returns 0 or a TCJ_E* code. */
    int (*forest_merge)(uint32_t *parent, size_t n);
    /* v[x] = the minimum of v[x] over the ranks, on every rank. */
    int (*min_i32)(int32_t *v, size_t n);
    /* v[x] = the sum of v[x] over the ranks, on every rank (DBSCAN's
     * neighbour counts from each rank's share of the pairs). */
    int (*sum_u64)(uint64_t *v, size_t n);
    int (*min_f64)(double *v, size_t n);
    /* l[x] = the merge (curve_list_merge) of l[x] over the ranks, on every
     * rank: the curve's lists, each rank having seen its share. */
    int (*merge_lists)(curve_list *l, size_t n);
} dist_ops;

/* NULL in the plain tcjoin; set once at start by tcjoin-mpi. */
extern const dist_ops *dist;

/* The size of the next range of a shared run's queue when `left` items of
 * `total` remain among `ranks` ranks: a 1/(2 ranks) share of what is left
 * (guided self-scheduling), never below total / (64 ranks) (at least 1),
 * never above what is left. */
size_t dist_chunk(size_t left, size_t total, int ranks);

/* path as this rank writes it: "PATH.RANK" under several ranks, else path.
 * The result is a static buffer, valid until the next call. */
const char *dist_rank_path(const char *path);
/* Whether a file at path is this rank's own to write: 1 in one process and
 * on rank 0; on another rank only a path dist_rank_path gave (other files,
 * the counts and CSV that rank 0 writes, go to /dev/null there). */
int dist_own_file(const char *path);

#endif
