/* The runs that cut a join's rows before an engine runs them, each over
 * any kern_join_fn that honours a layout: the subset runs (a run over
 * some of the rows), the cluster cut and the tile cut, with exact's
 * entries over the cuts. Pure host code behind them (kernels/
 * kern_subset.c, kern_cluster.c, kern_stream_clu.c, kern_tiles.c). */
#ifndef TCJ_KERN_CUTS_H
#define TCJ_KERN_CUTS_H

#include <stddef.h>
#include <stdint.h>

#include "kern_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Subset runs (kernels/kern_subset.c) ----
 * A run over the rows a->sub (kern_join_args.sub) as a layout of one
 * group: the query rows first, then the others, each part padded to whole
 * blocks of KERN_STREAM_ALIGN rows, and only the block pairs with a query
 * block joined (the tile cut's list), so no pair of two other rows is
 * computed. Its one origin is the run's centre (zeros where it has none),
 * so each row is converted as an ordinary run converts it, and its
 * padding rows are marked as a layout's are (KERN_ORIGIN_NONE). On one device the layout views the
 * dataset's rows (base_n): the engine gathers them on the device from its copy of the whole
 * dataset, which stays resident for the next run, and a run costs its
 * kernels and a few launches of host work whatever its rows. fn must
 * honour a layout and its tile list (exact's pass). Pure host code. */
typedef struct kern_subset_layout {
    uint32_t *rows;     /* n entries: dataset rows, KERN_ROW_PAD for padding */
    uint8_t *origin_of; /* n entries: 0, KERN_ORIGIN_NONE for padding */
    double *zero;       /* d zeros: the one origin where the run has no centre */
    size_t n;           /* run rows: whole blocks */
    size_t qb;          /* blocks of query rows */
    uint32_t *blk;      /* nblk pairs (I, J), I <= J, I < qb */
    size_t nblk;
    uint64_t hash; /* the rows' content hash, mixed with the dataset's */
} kern_subset_layout;
int kern_subset_layout_make(const kern_join_args *a, kern_subset_layout *L);
void kern_subset_layout_free(kern_subset_layout *L);
int kern_subset_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r);
/* ---- The cluster cut (kernels/kern_cluster.c, the plan; kernels/
 * kern_stream_clu.c, the run) ----
 * Rows far from one origin make FP16's error, and so exact's band, large;
 * rows in clusters are near their own cluster's centre. The cut clusters
 * the rows (k-means on a sample, every row then to its nearest centre, in
 * FP64), groups the clusters that are not proved farther apart than eps
 * (centres farther apart than eps and both radii: by the triangle
 * inequality no pair of theirs is within eps, with a margin for the
 * engine's FP64 d2, a pair FP64 puts in being within eps (1 + (d + 2)
 * 2^-53) of each other), and runs fn once over a layout of the groups
 * (kern_join_args.rows, origins, clu): each group's members padded to
 * whole tiles and centred on the group's origin, only pairs within a group
 * joined; fn must honour the layout (exact's pass does). The values are
 * scaled down by a power of two where the centred values pass FP16's
 * range (as exact scales its data). Counts, per-point counts, histograms
 * and pairs are the whole run's, rows renumbered to the dataset's; r says
 * how the rows were cut (clusters: the groups, cluster_work). The
 * clustering depends on the rows only, the layout on its groups; both are
 * kept across runs of one dataset. Only an ordinary symmetric run is cut
 * (q0 = 0, q1 = n, no cross run, clusters of min_rows rows, all values
 * finite, at least two groups), and with force 0 only where the run joins at most
 * KERN_CLU_KEEP of the n^2 pairs; else fn runs the whole as asked. Pure
 * host code: a CPU build and the unit tests run it over any fn that keeps
 * the layout's contract. */
#define KERN_CLU_MIN_ROWS 2048 /* a group's tiles fill an H200 (docs/ACCURACY.md) */
#define KERN_CLU_KEEP 0.5
int kern_cluster_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r, int force,
                     size_t min_rows);
/* exact over the cluster cut: `set exact-path clusters` (force) and auto
 * beyond the grid's reach (where the run joins at most half the pairs). */
int kern_exact_clusters_run(const kern_join_args *a, kern_join_result *r);
int kern_exact_clusters_auto_run(const kern_join_args *a, kern_join_result *r);
/* After a run that r says was cut (r->clusters > 0; the last run, one at
 * a time): each of the dataset's n rows' group into part. No pair of rows
 * in two groups is within the run's eps (the groups are proved apart), so
 * the groups bound where the run's edges go (the curve's closed
 * components, src/cluster/dbscan_curve.c). 0, or KERN_EINVAL where no layout of n
 * rows is held. */
int kern_cluster_parts(size_t n, uint32_t *part);
/* ---- The tile cut (kernels/kern_tiles.c) ----
 * Where the rows spread over a few dimensions against eps (d from 4 to
 * 16, the LiDAR and simulation data), most blocks of rows that lie
 * together are far from most others: the cut orders the rows by a k-d
 * tree (each node split at a whole block of KERN_STREAM_ALIGN rows, along
 * its widest dimension), takes each block's FP64 bounding box, and at the
 * run's threshold lists the pairs of blocks whose boxes are within it (a
 * traversal of the tree's node pairs, a pair pruned when its boxes are
 * farther apart than the threshold with a margin of 2^-40 relative, far
 * beyond an FP64 d2's (d + 2) 2^-53), and runs fn once over the rows in
 * that order (kern_join_args.rows, one cluster centred as the run was,
 * blk): only the listed tiles are joined. Results are the whole run's,
 * rows renumbered to the dataset's; r says how (tile_blocks, tile_work).
 * The order depends on the rows only and is kept across runs of one
 * dataset (an FP64 copy of the rows while it is built; then 4 bytes a row
 * and two boxes a block), the list on the threshold too (the last one
 * kept). Only an ordinary symmetric run is cut (as the cluster cut, all
 * values finite, at least KERN_TILE_MIN_ROWS rows, a list of at most
 * KERN_TILE_MAX_PAIRS block pairs), and with force 0 only where it joins * at most KERN_TILE_KEEP
 * of the block pairs; else other runs the whole. Before it builds the order, force 0 estimates that
 * share on the tree of every 16th row (blocks of 16 rows hold a plan's block's share of the data):
 * an estimate above KERN_TILE_KEEP runs other without the plan. */
#define KERN_TILE_MIN_ROWS (4 * KERN_STREAM_ALIGN)
#define KERN_TILE_KEEP 0.6
#define KERN_TILE_MAX_PAIRS ((size_t)1 << 26) /* 512 MB of list */
#define KERN_TILE_MAX_D 16                    /* auto tries the cut up to here */
int kern_tiles_run(kern_join_fn fn, kern_join_fn other, const kern_join_args *a,
                   kern_join_result *r, int force);
/* Plans the tile cut has built since the program started (tests). */
size_t kern_tiles_plans_for_tests(void);
/* exact over the tile cut: `set exact-path tiles` (force); and exact's
 * auto beyond the grid: the tile cut where d <= KERN_TILE_MAX_D and it
 * pays, else the cluster cut's rule (kern_exact_clusters_auto_run). */
int kern_exact_tiles_run(const kern_join_args *a, kern_join_result *r);
int kern_exact_auto_run(const kern_join_args *a, kern_join_result *r);

#ifdef __cplusplus
}
#endif

#endif
