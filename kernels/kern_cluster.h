/* The cluster cut's plan (kernels/kern_cluster.c): the rows clustered in
 * FP64, and at a given distance the groups of clusters a join must run
 * together, laid out for one run. Only kernels/kern_cluster.c,
 * kernels/kern_stream_clu.c, the k-distance's order (kernels/
 * kern_kd_prune.c) and the groups' test (tests/unit/t_clu_groups.c)
 * include it. */
#ifndef TCJ_KERN_CLUSTER_H
#define TCJ_KERN_CLUSTER_H

#include "kernels.h"

#define CLU_MAX_K 64 /* clusters a plan holds at most */

typedef struct clu_plan {
    int K;        /* clusters (after merging the small ones) */
    double *o;    /* K x d: each cluster's centre */
    double *est;  /* K: the rows the sample predicts */
    double *srad; /* K: the largest distance of a sampled member from its centre */
    /* Every row assigned (clu_plan_rows): */
    int rows;
    size_t *size, *off; /* K: members, and where they start in perm */
    uint32_t *perm;     /* n: rows by cluster, ascending within one */
    double *rad;        /* K: bounds every member's real distance from o */
    double *vmax;       /* K: the largest |x_k - o_k| of a member */
} clu_plan;

/* The run at one eps (kern_join_args' layout): groups of clusters none of
 * which is proved apart from another of its group (the connected pieces),
 * every pair of groups apart; each group's members, then padding to a
 * multiple of KERN_STREAM_ALIGN rows, group c being run rows [clu[c],
 * clu[c + 1]) and centred on o + d c. */
typedef struct clu_layout {
    int K;           /* groups */
    double *o;       /* K x d: each group's origin */
    size_t n;        /* run rows, padding included */
    uint32_t *rows;  /* n: the dataset's row, or KERN_ROW_PAD */
    uint8_t *origin; /* n: the row's group (KERN_ORIGIN_NONE: padding) */
    size_t *clu;     /* K + 1 */
    double vmax;     /* the largest |x_k - origin_k| */
    double work;     /* the share of the n^2 ordered pairs the run joins */
    uint64_t key;    /* the groups, for the device caches' key */
    int *comp;       /* the plan's K: each cluster's group */
} clu_layout;

/* |x - y|^2 over d values, in four interleaved sums (any order of the sum
 * stays within clu_mu's margin). */
double clu_d2(const double *x, const double *y, size_t d);
/* The nearest of K centres o to x (ties: the lower index), its d2 in *best. */
int clu_nearest(const double *o, int K, const double *x, size_t d, double *best);
/* The relative margin the plan's proofs take on a distance in d
 * dimensions: FP64's error on it (and on the sums over it), far exceeded,
 * and 2^-30 more. */
double clu_mu(size_t d);

/* The clusters of a's rows (an ordinary run: no cross rows) with clusters
 * of about min_rows rows at least, from a sample: *p NULL when the rows do
 * not make two such clusters. Kept across calls for one dataset. 0 or
 * KERN_ENOMEM. */
int clu_plan_sample(const kern_join_args *a, size_t min_rows, const clu_plan **p);
/* Every row to its nearest centre, the sizes, the members by cluster and
 * the radii. *ok 0 when a value is not finite (no cut). 0 or KERN_ENOMEM. */
int clu_plan_rows(const kern_join_args *a, int *ok);

/* Whether no pair of clusters a and b can be within lim in FP64 d2 (d the
 * dimension; rad the radii: the sample's, or the rows' bounds). */
int clu_apart(const clu_plan *p, size_t d, const double *rad, int a, int b, double lim);
/* comp[c] (K entries, K <= CLU_MAX_K): the group of cluster c at lim, the
 * connected pieces of "not apart" (clu_apart with rad), numbered 0, 1, ...
 * in order of each piece's first cluster; returns the groups. */
int clu_groups(const clu_plan *p, size_t d, const double *rad, double lim, int *comp);
/* The share of the n^2 ordered pairs the layout at lim would join, as the
 * sample sees it (1 when it makes fewer than two groups). The rows' own
 * radii are at least the sample's, so the rows make no more groups. */
double clu_sample_work(const clu_plan *p, size_t n, size_t d, double lim);
/* The layout at lim (after clu_plan_rows): *L NULL when the clusters make
 * one group. Kept while the groups stay the same. 0 or KERN_ENOMEM. */
int clu_plan_layout(const kern_join_args *a, double lim, const clu_layout **L);

#endif
