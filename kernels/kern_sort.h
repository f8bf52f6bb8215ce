/* Sorting doubles on a CUDA device (kernels/kern_sort.cu): DBSCAN curve's
 * three O(n) sorts (src/dbscan_curve.c) where its engine has a device. */
#ifndef TCJ_KERN_SORT_H
#define TCJ_KERN_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* v[0..n) ascending, in place, on CUDA device dev (v copied there and
 * back), or with order (n) v unchanged and order[0..n) the indices of v in
 * ascending order, equal values in index order (a stable sort): the values
 * and order src/sort_f64.h's sorts give, NaN aside. n < 2^31. 0, or a
 * KERN_* code with the message (KERN_ENOMEM: the device's memory is
 * short; KERN_ENODEV: no CUDA): the caller sorts on the host then. */
int kern_sort_f64(int dev, double *v, size_t n, uint32_t *order);

#ifdef __cplusplus
}
#endif

#endif
