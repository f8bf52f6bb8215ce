/* Shared by the FP64 engines (kernels/fp64.cu, ted.cu, ted_index.cu): the
 * device-side pair emitter for the four output modes and their side of the
 * common launch loop (kern_drive.cuh): uploads, outputs, and work items
 * split when the pair buffer overflows. */
#ifndef TCJ_F64_COMMON_CUH
#define TCJ_F64_COMMON_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include "kern_drive.cuh"
#include "kern_hist.cuh"
#include "kern_multi.cuh"
#include "kernels.h"

/* Where a kernel puts what it finds; device pointers. */
struct f64_out {
    int mode;
    double eps2; /* in the join when d2 <= eps2 */
    size_t q0;
    unsigned long long *count; /* COUNT: total */
    unsigned long long
        *examined; /* distances computed (a pruning kernel adds them; kern_join_result.examined) */
    unsigned long long *counts; /* PERPOINT: per query row - q0 */
    uint32_t *pi, *pj;          /* PAIRS: buffers of cap entries */
    double *pd;
    unsigned long long *np; /* PAIRS: pairs produced (may pass cap) */
    unsigned long long cap;
    const double *edges; /* HIST: nbins+1 edges */
    int nbins;
    unsigned long long *hist; /* HIST: [0] below edges[0], [1+b] bin b */
};

/* Record one candidate pair (q, c) with squared distance d2. COUNT adds to
 * the thread's `local`, which the kernel flushes with f64_flush. */
__device__ __forceinline__ void f64_emit(const f64_out &o, uint32_t q, uint32_t c, double d2,
                                         unsigned long long &local)
{
    if (!(d2 <= o.eps2))
        return;
    switch (o.mode) {
    case KJOIN_COUNT:
        local++;
        break;
    case KJOIN_PERPOINT:
        atomicAdd(&o.counts[q - o.q0], 1ULL);
        break;
    case KJOIN_PAIRS: {
        unsigned long long k = atomicAdd(o.np, 1ULL);
        if (k < o.cap) {
            o.pi[k] = q;
            o.pj[k] = c;
            o.pd[k] = d2;
        }
        break;
    }
    default:
        atomicAdd(&o.hist[kern_hist_slot(d2, o.edges, o.nbins)], 1ULL);
        break;
    }
}

__device__ __forceinline__ void f64_flush(const f64_out &o, unsigned long long local)
{
    if (local)
        atomicAdd(o.count, local);
}

/* One launch's share of the work. Brute-force kernels: query rows [qa, qb)
 * against candidate rows [ca, cb); sym 1 = a diagonal item (qa==ca, qb==cb:
 * tiles below the diagonal skipped, those above mirrored), 2 = every pair
 * also emitted mirrored. The index kernel reads qa..qb as query groups and
 * ca..cb as a range of positions in its sorted order. */
struct f64_item {
    size_t qa, qb, ca, cb;
    int sym;
};

struct f64_run;
typedef int (*f64_launch_fn)(f64_run *r, const f64_item *it, void *user);

/* An FP64 engine's run: the common state (kern_run: device, stream,
 * budget, pair buffers), its outputs on the device, and its work: items
 * run in order, each PAIRS item that overflows the buffer split and run
 * again. */
struct f64_run {
    kern_run k;
    const kern_join_args *a;
    kern_join_result *res;
    size_t nq;     /* query rows */
    size_t ncount; /* PERPOINT: entries of the counts (kern_count_rows) */
    f64_out out;
    unsigned long long *d_count, *d_counts, *d_np, *d_hist;
    double *d_edges;
    /* the work: items [next, stop) of the list, then (q) ranges taken
     * from the run's queue */
    const f64_item *items;
    size_t nitems, next, stop;
    kern_queue *q;            /* a run over several devices (NULL: one) */
    unsigned long long taken; /* items this device took from q */
    f64_item *stack, cur;
    size_t top, scap;
    double total, done;
    f64_launch_fn fn;
    void *user;
};

/* kern_begin, then allocate and zero the outputs (need_dmma: FP64 tensor
 * cores). On failure everything is released. */
int f64_begin(f64_run *r, const kern_join_args *a, kern_join_result *res, const char *who,
              int need_dmma);
/* Upload a's rows (n x d, widened to FP64 a slab at a time) to a device
 * array of n x dp doubles, zero padded, row s being a's row order[s]
 * (order NULL: s) with the columns in the order perm (NULL = as is).
 * Adds to t_h2d. */
int f64_upload(f64_run *r, const kern_join_args *a, const uint32_t *order, size_t dp,
               const int *perm, double **out);
/* Device memory through the run's budget (kern_malloc). */
int f64_malloc(f64_run *r, void **p, size_t bytes, const char *what);
/* Run the items through kern_drive (PAIRS: each drained, split where it
 * overflowed; progress after every launch). With r->q set (one device's
 * share of a run over several), the items come one at a time from the
 * queue, which `what` (the kernel run) opens: every device lists the same
 * items and runs the same kernel. */
int f64_drive(f64_run *r, const f64_item *items, size_t nitems, f64_launch_fn fn, void *user,
              const char *what);
/* Query rows per brute-force item: chunk on one device; through the queue
 * (q), about a sixteenth of the rows, so that each device gets several
 * items of a small join, but not under min rows (a launch worth its
 * overhead) nor over chunk. */
size_t f64_chunk(const f64_run *r, size_t chunk, size_t min);
/* Fetch counts, histogram and totals into the result. */
int f64_finish(f64_run *r);
void f64_end(f64_run *r);
/* Brute-force items over [q0, q1) x [0, n) (a cross run: x [c0, n)),
 * symmetric where asked and the mode allows it. *items is malloc'ed (the caller frees). */
size_t f64_brute_items(const kern_join_args *a, size_t chunk, int symmetric, f64_item **items);

#endif
