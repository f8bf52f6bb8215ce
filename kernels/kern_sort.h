/* Sorting doubles on a CUDA device (kernels/kern_sort.cu): DBSCAN curve's
 * three O(n) sorts (src/cluster/dbscan_curve.c) where its engine has a device. */
#ifndef TCJ_KERN_SORT_H
#define TCJ_KERN_SORT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One sort: v[0..n) ascending, in place (order NULL), or with order (n)
 * v unchanged and order[0..n) the indices of v in ascending order, equal
 * values in index order (a stable sort). The values and order
 * src/sort_f64.h's sorts give, NaN aside, but for -0.0 and +0.0: equal
 * here (CUB's), the one before the other there; the curve's squared
 * distances have no -0.0, and the order among equal weights is free.
 * n < 2^31. */
typedef struct kern_sort_job {
    double *v;
    size_t n;
    uint32_t *order;
} kern_sort_job;

/* jobs[0..m) on CUDA device dev, in one allocation there (from its
 * pool: kernels/kern_pool.cuh). 0, or a KERN_* code with the
 * message (KERN_ENOMEM: the device's memory is short; KERN_ENODEV: no
 * CUDA): the caller sorts on the host then. */
int kern_sort_f64(int dev, const kern_sort_job *jobs, size_t m);

#ifdef __cplusplus
}
#endif

#endif
