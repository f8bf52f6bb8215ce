/* Sorting doubles by their bits in O(n): the ε search's sample and the
 * k-distance curve (3.7e7 values: qsort takes seconds, this a fraction). */
#ifndef TCJ_SORT_F64_H
#define TCJ_SORT_F64_H

#include <stddef.h>
#include <stdint.h>

/* v[0..n) ascending (in place): an LSD radix sort, 8 bits a pass (the
 * scatter's 256 heads stay in cache; measured faster than 11 to 16 bits at
 * 2e7 values, and a distance's top byte is often common), of the
 * bit patterns mapped so that they order as the values (negatives with
 * every bit flipped, the rest with the sign bit set); -0.0 before +0.0,
 * NaN (positive) after +inf. Passes where every key shares the digit are
 * skipped; above some 2.6e5 values each pass is split over the cores
 * (src/par.h's fixed ranges: the same result on every machine).
 * Allocates 2n 8-byte words of scratch. */
void sort_f64(double *v, size_t n);
/* order[0..n) = the indices of v in ascending order of v (v unchanged), as
 * sort_f64 orders the values; equal values keep their index order (the
 * sort is stable). n < 2^32. Allocates 4n 8-byte words of scratch. */
void sort_f64_order(const double *v, size_t n, uint32_t *order);

#endif
