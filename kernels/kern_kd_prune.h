/* The k-distance's pruned passes (kernels/kern_kd_prune.c): exact's
 * k-distance (kernels/fasted_kdist.cu) runs its passes B and C over the
 * rows in an order of their own (the cluster cut's clusters,
 * kernels/kern_cluster.c, each in shells about its centre) and joins only
 * the tile items whose rows can hold a pair within a row's reach; every
 * other item's pairs are proved farther apart by the centres and the
 * rows' distances from them. Host code. */
#ifndef TCJ_KERN_KD_PRUNE_H
#define TCJ_KERN_KD_PRUNE_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The order is taken where a sample predicts it keeps at most this share
 * of the pairs, and a round's items are pruned where they keep at most
 * KD_PRUNE_ITEMS of the grid's. */
#define KD_PRUNE_KEEP 0.5
#define KD_PRUNE_ITEMS 0.6

typedef struct kd_prune {
    int K;                    /* clusters (0: no order) */
    size_t n, d;              /* rows, dimension */
    const uint32_t *perm;     /* n: run row v is the dataset's row perm[v] */
    const double *dist;       /* n: run row v's distance from its cluster's centre (FP64) */
    const size_t *off, *size; /* K: each cluster's run rows */
    const double *sep;        /* K x K: the centres' distance, rounded down */
    double hmax;              /* the largest distance from a centre */
} kd_prune;

/* A row's reach (data units) from its bound u2 and its norm nx, as the
 * passes see them: exact_bound_within's T over the passes' scale. It only
 * grows with either, so a tile's is at most that of its largest. */
typedef double (*kd_prune_reach_fn)(const void *ctx, double nx, double u2);

/* The clusters of a's rows (an ordinary run over the whole dataset) as
 * the passes' order, where a sample of the rows predicts the order keeps
 * at most KD_PRUNE_KEEP of the pairs at the rows' reaches (u2 and nx by
 * the dataset's row, u2 negative: none); pr->K 0 where it would not pay
 * or the rows make no clusters. Within a cluster the rows go by their
 * distance from its centre, so a tile is a thin shell. The order is kept
 * for the dataset (pr points into it until another dataset is ordered;
 * the sample is not asked again). 0 or KERN_ENOMEM. */
int kd_prune_open(const kern_join_args *a, const float *u2, const double *nx,
                  kd_prune_reach_fn reach, const void *ctx, kd_prune *pr);
void kd_prune_close(kd_prune *pr);

/* The items of a pass whose rows can hold a pair within their reach: u2
 * and nx by run row of the order (u2 negative: the row takes no pair;
 * +inf or NaN: every pair), a row tile's reach that of its largest u2 and
 * nx. Item (r, c) covers rows [r ur, (r + 1) ur) and columns
 * [c uc, (c + 1) uc). tri: the upper triangle of a symmetric run
 * (ur == uc, c >= r), an item kept where either side's rows reach the
 * other's; else the rows against every column. *items: two uint32 an
 * item, row by row, each once (malloc'd), *total the unpruned grid's
 * items; *items NULL where more than KD_PRUNE_ITEMS of the grid would
 * stay (the listing stops early). 0 or KERN_ENOMEM. */
int kd_prune_items(const kd_prune *pr, const float *u2, const double *nx, kd_prune_reach_fn reach,
                   const void *ctx, size_t ur, size_t uc, int tri, uint32_t **items, size_t *nitems,
                   size_t *total);

#ifdef __cplusplus
}
#endif

#endif
