/* A k-d tree over a dataset's rows for the host's exact searches: the cpu
 * engine's k-distance (src/cpu_kdist.c) and HDBSCAN*'s host rounds
 * (src/cluster/hdbscan_mst.c). Each node is cut near the median of its
 * box's widest side, at a whole group of rows (any cut is right: the boxes
 * are the rows'); a leaf holds at most KD_TREE_LEAF rows, copied in
 * FP64 into groups of CPU_GROUP rows transposed to [k][lane] (the layout
 * of src/cpu_simd.h), so a query meets a leaf in one SIMD kernel call:
 * the FP64 direct (a - b)^2 form in dimension order, cpu's bits.
 *
 * A box prunes only where its gap proves every row in it farther than a
 * limit as those kernels compute distances (kd_tree.shrink). Searches walk
 * it with batches of up to KD_TREE_BATCH query rows (kd_tree_walk).
 * Memory: the rows once in FP64 (every leaf but the last whole groups),
 * each node's box (16 bytes a dimension) and 8 bytes a row; building,
 * another FP64 copy of the rows. */
#ifndef TCJ_KD_TREE_H
#define TCJ_KD_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "cpu_simd.h"
#include "dataset.h"

#define KD_TREE_LEAF 32
/* A leaf's values for one query row in kd_tree_leaf_rows' output. */
#define KD_TREE_OSTRIDE (KD_TREE_LEAF + CPU_GROUP)
/* Query rows that search together (a bit each in a 32-bit mask). */
#define KD_TREE_BATCH 32

/* The k-distance takes the tree at d up to this (the cpu engine's; above
 * it boxes rarely prune and the blocked brute force is faster). */
#define KD_TREE_KDIST_MAX_D 32

typedef struct kd_tree {
    size_t n, d, nn;     /* rows, dimensions, nodes */
    uint32_t *perm;      /* position -> row (each node's rows a range) */
    uint32_t *pos;       /* row -> position */
    uint32_t *beg, *end; /* node t holds positions [beg[t], end[t]) */
    uint32_t *kid;       /* children kid[t] and kid[t] + 1; 0: a leaf */
    double *lo, *hi;     /* each node's box, d values each */
    size_t *grp;         /* a leaf's first group (gx + grp[t] * d * CPU_GROUP) */
    double *gx;          /* the leaves' rows as FP64 groups */
    size_t depth;
    /* A box's squared gap g2 from a query proves every row in it farther
     * than lim, as the leaf kernels compute squared distances, where
     * g2 * shrink > lim: in exact arithmetic the gap is at most each
     * distance; each side errs by at most gamma_{d+4} (unit 2^-53)
     * relative, which shrink = 1 - 2 gamma takes off. */
    double shrink;
    const cpu_simd_ops *ops;
} kd_tree;

/* Build the tree over every row of ds. TCJ_ENOMEM with a message when the
 * memory check refuses it. */
int kd_tree_build(const dataset *ds, const cpu_simd_ops *ops, kd_tree *t);
/* The same with the top `levels` levels cut on the cores and the subtrees
 * below them built side by side (0: on the calling thread): the same tree
 * node for node whatever levels (kd_tree_build picks them by n). */
int kd_tree_build_levels(const dataset *ds, const cpu_simd_ops *ops, kd_tree *t, int levels);
void kd_tree_free(kd_tree *t);

/* The squared gap between point x (FP64, d values) and node t's box. */
double kd_tree_gap2(const kd_tree *t, uint32_t node, const double *x);

/* The rows at positions [p0, p1) as the leaves hold them, row-major into
 * x ((p1 - p0) * d values). */
void kd_tree_rows(const kd_tree *t, uint32_t p0, uint32_t p1, double *x);

/* A batch walk's scratch, one a thread (kd_tree_walk_new): the stack, the
 * batch's rows (x row-major, xt transposed), their limits, mean and the
 * kernel's rows and output. */
typedef struct kd_tree_walk_state {
    struct kd_tree_walk_visit *stack;
    double *x, *xt, *lim, *mid, *a, *out;
} kd_tree_walk_state;

/* What a walk's caller decides: at each node, the rows of mask that go on
 * (their limits lim[r] refreshed; 0: the node is left), and what a
 * leaf's distances give (out as kd_tree_leaf_rows writes it, for the rows
 * of mask). */
typedef struct kd_tree_walker {
    uint32_t (*enter)(void *ctx, uint32_t node, uint32_t mask, double *lim);
    void (*leaf)(void *ctx, uint32_t node, uint32_t mask, const double *out);
    void *ctx;
} kd_tree_walker;

void kd_tree_walk_new(const kd_tree *t, kd_tree_walk_state *s);
void kd_tree_walk_free(kd_tree_walk_state *s);

/* The batch loaded in s (kd_tree_batch into s->x, s->xt, s->mid; its
 * limits in s->lim) walks the tree nearer child (to its mean) first: a
 * node is visited once for the rows of the batch that w->enter keeps and
 * its box does not prune at their limits; a leaf's rows are computed for
 * them (kd_tree_leaf_rows) and handed to w->leaf. */
void kd_tree_walk(const kd_tree *t, kd_tree_walk_state *s, uint32_t mask, const kd_tree_walker *w);

/* A batch of m <= KD_TREE_BATCH query rows at positions pos[0 .. m):
 * their values row-major into x (for the kernels), transposed into xt
 * (value k of row r at xt[k * KD_TREE_BATCH + r], for kd_tree_live) and
 * their mean into mid (the order of a batch's walk). */
void kd_tree_batch(const kd_tree *t, const uint32_t *pos, size_t m, double *x, double *xt,
                   double *mid);

/* The rows of mask (bit r: row r, value k at xt[k * KD_TREE_BATCH + r])
 * that node's box does not prune at their own limits lim[r]. */
uint32_t kd_tree_live(const kd_tree *t, uint32_t node, const double *xt, uint32_t mask,
                      const double *lim);

/* Leaf node's squared distances from each row r of mask (x: row-major):
 * out[r * KD_TREE_OSTRIDE + p - beg] for its positions p, the kernel
 * taking up to f64_rows of them a call (a: room for that many rows); a
 * value above lim[r] may be any value above it. */
void kd_tree_leaf_rows(const kd_tree *t, uint32_t node, const double *x, uint32_t mask,
                       const double *lim, double *a, double *out);

/* Each listed row's k-th smallest squared distance to another row (the
 * k-distance: the row itself excluded by index, duplicates counted), the
 * query rows rows[0 .. nrows) (NULL: every row), into out[row - q0], on
 * nthr threads, KD_TREE_BATCH rows at a time in the tree's order
 * walking the tree together (a leaf's rows, loaded once, serve each row
 * that its box does not prune). With kl > 0 also each row's kl
 * nearest other rows by (d2, row), ascending, into nb and nd2 at
 * (row - q0) * kl (past a row's count UINT32_MAX and +inf): every row
 * whose d2 is below the kl-th's is among them. *examined (may be NULL)
 * gets the distances computed. TCJ_ECANCEL when *cancel is set. */
int kd_tree_knn(const kd_tree *t, const uint32_t *rows, size_t nrows, size_t q0, int k, double *out,
                size_t kl, uint32_t *nb, double *nd2, int nthr, const volatile int *cancel,
                uint64_t *examined);

#endif
