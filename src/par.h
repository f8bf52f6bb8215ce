/* A parallel loop for the host's whole-dataset scans (format fit, int8
 * plan): [0, n) cut into one contiguous range per thread, each handed to
 * fn; the caller combines what the ranges left in their own slots. Small
 * n (under PAR_MIN) runs on the calling thread. */
#ifndef TCJ_PAR_H
#define TCJ_PAR_H

#include <stddef.h>

#define PAR_MIN ((size_t)1 << 20)
#define PAR_MAX_THREADS 16

/* fn(ctx, t, a, b) for ranges t = 0..*nt-1; returns the number of ranges
 * (at most PAR_MAX_THREADS), written to *nt. */
void par_for(size_t n, void (*fn)(void *ctx, int t, size_t a, size_t b), void *ctx, int *nt);

#endif
