/* Sorting doubles by their bits in O(n): the ε search's sample and the
 * k-distance curve (3.7e7 values: qsort takes seconds, this a fraction). */
#ifndef TCJ_SORT_F64_H
#define TCJ_SORT_F64_H

#include <stddef.h>

/* v[0..n) ascending (in place): an LSD radix sort, 16 bits a pass, of the
 * bit patterns mapped so that they order as the values (negatives with
 * every bit flipped, the rest with the sign bit set); -0.0 before +0.0,
 * NaN (positive) after +inf. Passes where every key shares the digit are
 * skipped. Allocates n doubles of scratch. */
void sort_f64(double *v, size_t n);

#endif
