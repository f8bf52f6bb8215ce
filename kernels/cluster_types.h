/* The types the clustering layer (src/cluster/) and the kernels that
 * consume its pairs on the device (kernels/kern_dbscan.cu,
 * kern_curve*.cu; and the radius graph's, kern_graph.cu) share, defined
 * once: plain C, included by kernels.h and by the layer's headers, so a
 * host struct and its device twin cannot drift apart. How each field is
 * used: kernels/kern_engines.h, above the entries that take them (kern_dbscan,
 * kern_curve_round, kern_curve_core, kern_curve_merge_run,
 * kern_mst_round, kern_graph_run). */
#ifndef TCJ_CLUSTER_TYPES_H
#define TCJ_CLUSTER_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CURVE_HD __host__ __device__
#else
#define CURVE_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* An edge of DBSCAN's curve: its mutual-reachability weight (squared),
 * then its ends (a < b); edges compare by (w, a, b). */
typedef struct curve_edge {
    double w;
    uint32_t a, b;
} curve_edge;

/* A point's cheapest edges leaving its component, kept between the
 * curve's joins: a max-heap by (w, a, b) (e[0] the heaviest) of len <=
 * CURVE_LIST edges, each at most once. A longer list runs out later as
 * its component grows, so fewer joins are needed after the first round:
 * on the shared real sets at S = 32 and 64, 8 edges take 1-4 joins
 * (a LiDAR scan 4), 32 take 0-2 (the scan 1-2), 64 take 0-1, for 1,032
 * bytes a point (520 at 32, 136 at 8): a later join costs a round of
 * the merging and a join whatever its rows, which weigh more on those
 * sets than the longer lists' bytes. */
#define CURVE_LIST 64
typedef struct curve_list {
    curve_edge e[CURVE_LIST];
    uint32_t len, pad;
} curve_list;

/* x before y by (w, a, b): the order every list, sort and merging of the
 * curve uses, on the host and on the device alike. */
static inline CURVE_HD int curve_edge_before(const curve_edge *x, const curve_edge *y)
{
    if (x->w != y->w)
        return x->w < y->w;
    if (x->a != y->a)
        return x->a < y->a;
    return x->b < y->b;
}

/* The most nearest rows a core-distance join keeps a row (the heap's size
 * on the device: 12 K + 16 bytes a row). */
#define CURVE_CORE_MAX_K 64

/* The arrays the curve's end hands over (curve_merge.take), in this order. */
enum { CURVE_END_WEIGHTS, CURVE_END_ENDS, CURVE_END_CORE, CURVE_END_REACH };

/* The merging after a curve join done where its lists are (the same
 * passes and results as the host's, src/cluster/curve_merging.c). */
typedef struct curve_merge {
    uint32_t *comp;     /* n (host): every row's root, flattened; out: the same after */
    curve_edge *bound;  /* n (host, out): each root's bound; other rows' undefined */
    curve_edge *forest; /* (host) room for n - 1 edges: the merging's from forest[nf] on */
    size_t nf;          /* in and out */
    size_t open;        /* out: the components that may have an edge out the lists cannot name */
    int done;           /* out: 1 merged where the lists are */
    size_t passes;      /* out: added to */
    double seconds;     /* out: added to */
    /* The curve's end there, asked with core_dev set (the core join's
     * round or a later one): where no later join would find a row
     * (src/cluster/curve_later.c; found where later is given or at most
     * one component is open), finished = 1 and instead of comp and
     * bound, take gets the sorted arrays in host memory valid during its
     * call: the forest's nf edges (the earlier rounds' too) by ascending
     * weight, CURVE_END_WEIGHTS their weights (double) and then
     * CURVE_END_ENDS their ends (uint64_t, a << 32 | b); then
     * CURVE_END_CORE and CURVE_END_REACH the n core distances and
     * reachabilities (double) ascending; forest unwritten. core_dev,
     * reach_dev: n on the merging's device (reach_dev NULL: reach_host's
     * n, copied up for the end); part: NULL (one part) or n (host), the
     * core join's parts. fresh: every row its own component (the core
     * join's round), comp not read. */
    const double *core_dev, *reach_dev, *reach_host;
    const uint32_t *part;
    int fresh;
    /* With core_dev set and later (n, host) given, where the end was not
     * made: the rows the next join queries (curve_later_rows's, in its
     * order) into later, nlater of them and then the largest open
     * component's nbig, later_done = 1; bound then unwritten. */
    uint32_t *later;
    size_t nlater, nbig;
    int later_done; /* out */
    void (*take)(void *ctx, int what, const void *v, size_t m);
    void *take_ctx;
    int finished; /* out */
} curve_merge;

/* One Boruvka join of the curve with its pairs consumed where they are
 * computed (kern_curve_round). */
typedef struct curve_round_io {
    size_t n;             /* the curve's rows (the dataset's) */
    const double *core2;  /* n */
    const uint32_t *comp; /* n: each row's component */
    const uint32_t *at;   /* NULL, or the run's n rows to the curve's */
    double max2;
    double *reach2;     /* NULL, or n */
    curve_list *list;   /* n */
    curve_merge *merge; /* NULL, or the merging after the join */
} curve_round_io;

/* The curve's core distances (and with list its first round) from the
 * join at max (kern_curve_core). */
typedef struct curve_core_io {
    size_t k, K; /* 1 <= k <= K < n; K = k without list, else <= CURVE_CORE_MAX_K */
    double max2;
    double *core2;
    curve_list *list;    /* NULL, or n */
    double *reach2, *kb; /* with list: n each */
    /* NULL, or n: where the run cut the rows into groups (the cluster
     * cut), each row's group; else left as it was */
    uint32_t *part;
    /* with list: NULL, or the first round's merging there (kb its
     * bounds); where it ran (merge->done), list and kb are left unwritten */
    curve_merge *merge;
} curve_core_io;

/* One Boruvka round of HDBSCAN*'s tree beyond the curve's forest, with
 * every pair consumed where it is computed (kern_mst_round): for the
 * components that search (never skip), each one's lightest
 * mutual-reachability edge to another component in the curve's order
 * (w = max(core2[a], core2[b], d2) in FP64's direct form, then a, b),
 * exactly; or, where the components are few, every component's edge
 * towards skip in the rest of the tree. Either way every edge handed out
 * is a tree edge. */
typedef struct mst_round_io {
    size_t n;             /* the dataset's rows */
    const double *core2;  /* n: squared core distances */
    const uint32_t *comp; /* n: each row's component (its root, a row) */
    uint32_t skip;        /* a component not scanned (the largest), or UINT32_MAX */
    /* n (out, by root): w INFINITY where none; other rows' undefined.
     * NULL: a probe (hdbscan_mst_offered): the engine takes the round (0)
     * or declines it, and computes nothing. */
    curve_edge *best;
    /* out: rows the pass's estimate left undecided, decided in FP64 (the
     * pairs, in a round that completes the tree); the pass's and the FP64
     * stage's seconds */
    size_t rows_fp64;
    double pass_s, fp64_s;
} mst_round_io;

/* DBSCAN's passes with their pairs consumed where they are computed
 * (kern_dbscan, and exact's FP64 grid): core (n, out) the core flags;
 * either root (n, out: a core row's smallest core row in its component, a
 * non-core row's smallest such root among its core neighbours,
 * 0xffffffff when none) or, where labels came numbered (numbered = 1),
 * labels (n, out: src/cluster/dbscan.h's labels). */
typedef struct dbscan_dev_io {
    size_t minpts;
    uint8_t *core;
    uint32_t *root;
    int32_t *labels;
    int numbered;   /* out */
    size_t ncore;   /* out */
    double core_s;  /* out: the core pass's seconds */
    uint64_t pairs; /* out: the eps-join's pairs, self included */
} dbscan_dev_io;

/* The radius-neighbours graph built where a PAIRS run's pairs are
 * (kern_graph_run; libtcjoin's tcj_graph_rows): every pair (i, j) the run
 * lists, the self-pairs only with include_self, as row i's entry j. Out:
 * indptr (n + 1, host) the rows' offsets, and kept, the entries sorted by
 * (i, j) on the device with their d2, until kern_graph_copy or
 * kern_graph_free. */
struct kern_graph;
typedef struct graph_dev_io {
    int include_self;
    int64_t *indptr;
    struct kern_graph *kept; /* out */
} graph_dev_io;

#ifdef __cplusplus
}
#endif

#endif
