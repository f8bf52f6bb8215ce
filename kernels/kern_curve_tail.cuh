/* DBSCAN curve's end on the device (kernels/kern_curve_tail.cu): after
 * the first round's merging where the core join left everything
 * (kern_curve_core.cu, kern_curve_merge.cu), whether a later join would
 * find any row (src/cluster/curve_later.c, curve_later_rows), and where none would,
 * the curve's three sorted arrays made there: the host's steps after the
 * merging (the components and bounds back, its capping and row loops, the
 * three sorts' copies up and down, the forest's gather) took some 2 ms of
 * the MNIST-like curve's 7.8 on the H200 host, its device work 0.3. */
#ifndef TCJ_KERN_CURVE_TAIL_CUH
#define TCJ_KERN_CURVE_TAIL_CUH

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* What the merging leaves on the current device. */
struct kct_in {
    size_t n;
    const double *core;       /* n: core distances (squared, +inf above max) */
    const double *reach;      /* n: reachabilities (squared) */
    const uint32_t *comp;     /* n: each row's root, flattened */
    const curve_edge *bound;  /* n: each root's bound (w +inf: closed) */
    const curve_edge *forest; /* nf: the forest's edges */
    size_t nf;
    size_t open;          /* the merging's open count */
    const uint32_t *part; /* NULL (one part), or n (host): the core join's parts */
};

/* *finished = 1 where no later join would find a row (at most one
 * component open, or none of the core join's parts holds core rows of two
 * open components: curve_later_rows's first test), the sorted arrays handed to
 * take(ctx, what, v, m) as they come back (curve_merge.take: the
 * forest's nf weights ascending and their edges' ends, the order among
 * equal weights free as the host's sort leaves it, then the n core
 * distances and the n reachabilities ascending), in host memory valid
 * during the call; else 0 and take not called. 0 or an error code (KERN_ENOMEM: the sorts' room,
 * before take is called). */
int kct_finish(const kct_in *in, void (*take)(void *ctx, int what, const void *v, size_t m),
               void *ctx, int *finished);
/* The pinned memory and streams the end keeps between curves. */
void kct_release(void);

#endif
