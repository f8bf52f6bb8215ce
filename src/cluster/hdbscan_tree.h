/* HDBSCAN*'s tree, from a minimum spanning tree of mutual-reachability
 * distances to labels (scikit-learn's `HDBSCAN`, so that labels compare;
 * docs/CLUSTERING.md): the single-linkage hierarchy, the condensed tree
 * with min_cluster_size, the stabilities, the selection by excess of mass
 * or leaves (with cluster_selection_epsilon and allow_single_cluster),
 * the labels numbered as scikit-learn numbers them, the membership
 * probabilities and GLOSH outlier scores (the `hdbscan` library's
 * `outlier_scores_`). Pure host code, O(n) time after the sort and O(n)
 * memory; nothing here prints. */
#ifndef TCJ_HDBSCAN_TREE_H
#define TCJ_HDBSCAN_TREE_H

#include <stddef.h>
#include <stdint.h>

typedef enum { HDBSCAN_EOM, HDBSCAN_LEAF } hdbscan_method;

typedef struct hdbscan_params {
    size_t min_cluster_size; /* >= 2 */
    hdbscan_method method;
    double epsilon; /* cluster_selection_epsilon, a distance (0: none) */
    int allow_single;
} hdbscan_params;

/* A row of the condensed tree whose child is a cluster (the tree the
 * dashboard draws): clusters are numbered n, n+1, ... (n the root). */
typedef struct hdbscan_node {
    uint32_t parent, child; /* cluster ids minus n: the root is 0 */
    double lambda;          /* 1 / the distance at which the child splits off */
    size_t size;            /* its points then */
} hdbscan_node;

typedef struct hdbscan_tree {
    size_t n;
    int32_t *labels;      /* n: cluster number or -1 */
    double *prob;         /* n: membership strength in [0, 1] (0 for noise) */
    double *score;        /* n: GLOSH outlier score in [0, 1] */
    size_t nclusters;     /* selected */
    size_t *sizes;        /* nclusters: points labelled with each */
    double *stability;    /* nclusters: each selected cluster's excess of mass */
    double *lambda_birth; /* nclusters: the lambda at which it appears (0: the root) */
    size_t ncond;         /* clusters in the condensed tree, the root included */
    hdbscan_node *nodes;  /* ncond - 1 rows: each cluster but the root */
    uint8_t *selected;    /* ncond: 1 for a selected cluster */
    double weight;        /* the spanning tree's total weight (distances) */
} hdbscan_tree;

/* From the n - 1 edges of a minimum spanning tree over points 0..n-1 in
 * ascending order of weight w (distances, not squared; equal weights in
 * any order), their ends ab[k] = a << 32 | b. Each edge is oriented away
 * from point 0 first (the order scikit-learn's Prim gives, from which its
 * cluster numbering follows). n >= 1. Returns 0, or TCJ_EINVAL with a
 * message when the edges are not a spanning tree. *t is the caller's:
 * hdbscan_tree_free. */
int hdbscan_tree_build(size_t n, const double *w, const uint64_t *ab, const hdbscan_params *p,
                       hdbscan_tree *t);
void hdbscan_tree_free(hdbscan_tree *t);

#endif
