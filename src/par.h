/* A parallel loop for the host's whole-dataset scans (format fit, int8
 * plan, centring's means): [0, n) cut into one contiguous range per
 * thread, each handed to fn; the caller combines what the ranges left in
 * their own slots. Small work (n times weight, the values an item holds,
 * under PAR_MIN) runs on the calling thread. */
#ifndef TCJ_PAR_H
#define TCJ_PAR_H

#include <stddef.h>

#define PAR_MIN ((size_t)1 << 20)
#define PAR_MAX_THREADS 16
/* The weight of an item whose loop reads at random (a row's component,
 * root or label looked up): one core reads some 16,000 such rows in the
 * time the kept workers take to pick up a call, so such loops split from
 * there (split, DBSCAN's numbering at 60,000 rows takes about half as
 * long). */
#define PAR_WEIGHT_RANDOM 64

/* fn(ctx, t, a, b) for ranges t = 0..*nt-1 (*nt is 1 or PAR_MAX_THREADS,
 * fixed by n and weight alone, so the combination the caller makes is the
 * same on every machine), on at most one thread a core. */
/* How many ranges par_for(n, weight, ...) cuts [0, n) into (1 or
 * PAR_MAX_THREADS), for callers that size per-range state first. */
int par_ranges(size_t n, size_t weight);
/* Tests: split work of n times weight at least min (0: PAR_MIN), so that
 * small cases take the ranges on threads, as the large ones do. */
void par_for_tests(size_t min);

/* The cores online (sysconf), asked once. */
long par_cores(void);

void par_for(size_t n, size_t weight, void (*fn)(void *ctx, int t, size_t a, size_t b), void *ctx,
             int *nt);

/* fn(ctx, t) for t = 0..nt-1 (at most PAR_MAX_THREADS), each on a thread
 * of its own, t = 0 on the caller's (as is one whose thread cannot
 * start); returns when all have. */
void par_threads(int nt, void (*fn)(void *ctx, int t), void *ctx);

/* The counts par_for's ranges left, at[0..nt), into each range's offset
 * in one output written in range order; the total returned. */
size_t par_offsets(size_t *at, int nt);

/* Zero bytes at p on the cores (par_for's ranges): a fresh buffer's pages
 * are faulted in by all of them at once, not one page at a time by the
 * first writer. For the large buffers a device copy fills (per-point
 * counts, k-distances, DBSCAN's labels): on the H200 host a copy into
 * 148 MB of fresh pages takes some five times as long as zeroing them on
 * 16 threads and the copy after, together. */
void par_zero(void *p, size_t bytes);

/* The pages of the m ranges (p[r], bytes[r]), r < PAR_FAULT_MAX, faulted
 * in on the cores (par_for's ranges over them laid end to end), each
 * byte left as it was, where some page of a range is not resident
 * (mincore); a range all resident costs a system call. For what a device
 * copy fills where the buffer may be fresh: the heap's memory kept
 * between runs (mem_keep_freed) is resident, and zeroing it again would
 * cost the MNIST-like curve six 480 KB memsets on one core for nothing. */
#define PAR_FAULT_MAX 16
void par_fault_in(void *const *p, const size_t *bytes, int m);

#endif
