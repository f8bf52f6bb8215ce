/* DBSCAN curve's end on the device (kernels/kern_curve_tail.cu): after
 * a round's merging where its join left everything (the core join's,
 * kern_curve_core.cu, or a later one's, kern_curve.cu; the merging
 * kern_curve_merge.cu) where no later join would find a row
 * (kern_curve_later.cuh), the curve's three sorted arrays made there: the
 * host's steps after the merging (the components and bounds back, its
 * capping and row loops, the three sorts' copies up and down, the
 * forest's gather) take about a quarter of the MNIST-like curve, some
 * seven times its device work. */
#ifndef TCJ_KERN_CURVE_TAIL_CUH
#define TCJ_KERN_CURVE_TAIL_CUH

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

/* What the merging leaves on the current device. */
struct kct_in {
    size_t n;
    const double *core;       /* n: core distances (squared, +inf above max) */
    const double *reach;      /* n: reachabilities (squared); NULL: reach_host's */
    const double *reach_host; /* n (host) where reach is NULL: copied up for the sorts */
    curve_edge *forest;       /* nf: the forest's edges, the first nhead of them head's */
    size_t nf;
    const curve_edge *head; /* nhead (host): the earlier rounds' edges, copied up first */
    size_t nhead;
};

/* The sorted arrays handed to take(ctx, what, v, m) as they come back
 * (curve_merge.take: the forest's nf weights ascending and their edges'
 * ends, the order among equal weights free as the host's sort leaves it,
 * then the n core distances and the n reachabilities ascending), in host
 * memory valid during the call; *finished = 1. 0 or an error code
 * (KERN_ENOMEM: the sorts' room, before take is called; *finished 0 and
 * take not called where the sorts are the host's: 2n past CUB's int). */
int kct_finish(const kct_in *in, void (*take)(void *ctx, int what, const void *v, size_t m),
               void *ctx, int *finished);
/* The pinned memory and streams the end keeps between curves. */
void kct_release(void);

#endif
