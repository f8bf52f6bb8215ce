/* A pair batch's host work split by point, for a pair sink that keeps
 * per-point state and does real work a pair (dbscan curve's edge lists
 * and reachabilities; not the k-distance refinement, whose work a pair is
 * one comparison: there sixteen threads each reading the whole batch
 * were slower than one, measured). The point ids [0, n) are cut into one
 * contiguous range a thread; each range's function sees every pair of the
 * batch, in the batch's order, and does the work of the endpoints in its
 * range alone. So each point's state is touched by one thread, in the
 * order one thread would touch it: the result is the sequential one's,
 * bit for bit, whatever the machine's cores. In one thread's sink,
 * `dbscan curve` at 10^6 x 128 spends nearly ten times as long on a
 * join's pairs as on the join itself (docs/CLUSTERING.md). */
#ifndef TCJ_PAIR_PAR_H
#define TCJ_PAIR_PAR_H

#include <stddef.h>

#include "engine.h"
#include "par.h"

/* Batches of fewer pairs run on the calling thread: a thread's start
 * (tens of microseconds) outweighs their work. */
#define PAIR_PAR_MIN ((size_t)1 << 16)
#define PAIR_PAR_MAX_THREADS PAR_MAX_THREADS /* par_threads runs them */

/* fn(ctx, b, lo, hi): the work of b's endpoints in [lo, hi). */
typedef void (*pair_par_fn)(void *ctx, const pair_batch *b, size_t lo, size_t hi);

/* fn over ranges covering [0, n), in parallel where b is large; returns
 * the number of ranges used. */
int pair_par(const pair_batch *b, size_t n, pair_par_fn fn, void *ctx);

/* Tests: batches of at least k pairs split (0: PAIR_PAR_MIN), and at
 * least `threads` ranges whatever the cores (0: the cores). */
void pair_par_for_tests(size_t k, int threads);

#endif
