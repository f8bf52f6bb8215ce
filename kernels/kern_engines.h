/* The engines' entry points, each a kern_join_fn or taking one: FASTED,
 * fp64, ted, ted-index, exact and its FP64 grid; the passes over their
 * PAIRS runs whose pairs the device consumes (DBSCAN, its curve's rounds,
 * core distances and merging, HDBSCAN*'s tree, the radius graph, with
 * their io types from cluster_types.h); and the k-distances (the FP64
 * grid's, the brute force's, FASTED's). */
#ifndef TCJ_KERN_ENGINES_H
#define TCJ_KERN_ENGINES_H

#include <stddef.h>
#include <stdint.h>

#include "cluster_types.h"
#include "kern_args.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FASTED in the args' format. */
int kern_fasted_run(const kern_join_args *a, kern_join_result *r);
/* Exact FP64 on CUDA cores, direct (a-b)^2 form, no FMA contraction. */
int kern_fp64_run(const kern_join_args *a, kern_join_result *r);
/* TED-Join brute force on FP64 tensor cores (paper form or redesigned). */
int kern_ted_run(const kern_join_args *a, kern_join_result *r);
/* TED-Join with the grid index over the first index_k dimensions. */
int kern_ted_index_run(const kern_join_args *a, kern_join_result *r);
/* exact's FP64 grid path (src/engine_exact.c chooses it for low d and a
 * large band): kern_fp64_run's arithmetic over the candidates of
 * ted-index's grid index, on the rows as given (no centring, no scale,
 * symmetric ignored as fp64 ignores it): fp64's results in every mode.
 * Refuses data that are not finite (KERN_EINVAL). */
int kern_fp64_grid_run(const kern_join_args *a, kern_join_result *r);
/* The FP64 grid at d <= 3 counts a query's own sub-cell (every pair in
 * one is within eps) without distances where it holds this many rows or
 * more (kern_join_result.skipped): at S = 32 on uniform data a sub-cell
 * holds about one row, and splitting the candidate ranges around a few
 * rows costs more than their distances. */
#define KERN_GRID_OWN_MIN 8
/* DBSCAN's three passes on the FP64 grid path, one device (the first of
 * a's list), every row a query (q0 = 0, q1 = n), at a->eps: core (n, out)
 * = at least minpts rows within eps, itself included (no per-point count
 * leaves the device); labels (n, out): src/cluster/dbscan.h's labels, numbered on
 * the device (the components of the eps-graph's core-core edges numbered
 * 0, 1, ... in order of each one's smallest core row; a non-core row the
 * smallest number among its core neighbours', -1 when it has none);
 * *pairs the eps-join's pairs (self included), *core_s the core pass's
 * seconds; r->pairs the unions called: core-core pairs (i < j) within
 * eps found while their rows were not yet known to share a component.
 * kernels/epi_cluster.cuh. */
int kern_fp64_grid_dbscan(const kern_join_args *a, uint64_t minpts, uint8_t *core, int32_t *labels,
                          unsigned long long *pairs, double *core_s, kern_join_result *r);
/* The k-distance over the FP64 grid on one device (the first of a's list;
 * kernels/grid_kdist.cu): out[q - q0] for query rows [q0, q1) = the k-th
 * smallest d2 to another row, kern_fp64_run's arithmetic (cpu's values
 * exactly); passes at radius r0, 2 r0, ... (r0 > 0: a guess; narrowed
 * where the cells are far denser). 1 <= k <= 256, k <= n - 1. */
int kern_fp64_grid_kdist(const kern_join_args *a, int k, double r0, double *out,
                         kern_join_result *r);
/* The k-distance by brute force in FP64 on one device (the first of a's
 * list; kernels/fp64_kdist.cu): out[q - q0] as kern_fp64_grid_kdist's,
 * every query row against every row. For small work: exact's auto takes
 * it where (q1 - q0) n d is at most KERN_KDIST_BRUTE_WORK, where the
 * tensor-core passes' and the grid's fixed costs exceed the products. 1 <= k <= 256, k <= n - 1. */
#define KERN_KDIST_BRUTE_WORK 17179869184.0 /* 2^34 */
int kern_fp64_kdist_brute(const kern_join_args *a, int k, double *out, kern_join_result *r);
/* DBSCAN's three passes on the device as fn's PAIRS runs (fn: a
 * kern_join_fn that drives its PAIRS through kern_drive: kern_fasted_run,
 * kern_exact_run, kern_exact_clusters_*), the pairs consumed there
 * (pair_dev): the eps-graph of the same row's PAIRS run, a's options and
 * transforms, every row a query, on a's device or over its device list.
 * Core flags from the counted pairs (self included, >= minpts); the
 * union-find of core-core pairs; a non-core row's core neighbours kept in
 * minpts - 2 slots where they fit, else a border pass. Out: io->core (n),
 * io->ncore, io->root (cluster_types.h's dbscan_dev_io; labels unused,
 * numbered 0), io->core_s, io->pairs, and rcore (the core pass: its run,
 * pairs the PERPOINT sum), r the union and border passes (pairs: the
 * union pass's listed pairs). KERN_ENOMEM when the dataset does not fit a
 * device (no streamed form: the caller falls back to the generic passes).
 * kernels/kern_dbscan.cu. */
int kern_dbscan(kern_join_fn fn, const kern_join_args *a, dbscan_dev_io *io,
                kern_join_result *rcore, kern_join_result *r);
/* The merging after a curve join where its lists are (src/cluster/
 * curve_merging.c, curve_merging_run: the same passes, the same results), given on a round's io
 * (curve_round_io.merge, curve_core_io.merge): the lists stay on the first
 * device and are merged there, io->list left unwritten (done = 1); where
 * the merging's state (106 bytes a row) does not fit, done = 0 and the
 * lists come back as without it. kern_curve_merge_run takes the lists
 * (and kb: NULL, or the K nearest's bounds) in the current device's memory.
 * kernels/kern_curve_merge.cu. */
int kern_curve_merge_run(size_t n, curve_list *list, const double *kb, curve_merge *m);
/* The rows a later join of DBSCAN's curve queries, found on the current
 * device as the merging there finds them (kernels/kern_curve_later.cu,
 * kcl_rows) from host arrays: curve_later_rows's (src/cluster/curve_later.h)
 * rows into rows (n, uint32), *m of them and then the largest open
 * component's *mb. For the tests; 0 or an error code. */
int kern_curve_later_rows(size_t n, const double *core, const uint32_t *comp,
                          const curve_edge *bound, const uint32_t *part, uint32_t *rows, size_t *m,
                          size_t *mb);
/* One Boruvka join of DBSCAN's curve (src/cluster/dbscan_curve.c) with its pairs
 * consumed on the device (pair_dev), over fn's PAIRS run at a->eps on a's
 * device or device list (fn as kern_dbscan's). Each pair (i, j), i != j,
 * after the layout's rows (run->rows) and then `at` are applied: where
 * reach2 is set, reach2[i] = min(reach2[i], max(core2[j], d2)); its edge
 * w = max(core2[i], core2[j], d2), when w <= max2 and comp[i] != comp[j],
 * offered to both ends' lists: each list holds the CURVE_LIST least
 * edges it was offered by (w, a, b), a < b, each once, as a max-heap
 * (e[0] the heaviest), whatever order the pairs come in: the host sink's
 * lists (src/cluster/curve_list.c, curve_list_put) exactly. list (n, out) is written
 * whole; reach2 (n) in and out; where io->merge made the curve's end
 * (finished), neither: its take had the sorted arrays. Several devices: each keeps its own,
 * merged on the first. KERN_ENOMEM when the state or the dataset does not
 * fit a device (the caller takes the host sink). kernels/kern_curve.cu. */
int kern_curve_round(kern_join_fn fn, const kern_join_args *a, const curve_round_io *io,
                     kern_join_result *r);
/* One Boruvka round of HDBSCAN*'s tree beyond the curve's forest
 * (src/cluster/hdbscan_mst.c), on a's device (a list's first): for the
 * components that search (at least half of those but io->skip, the
 * smallest first), each one's lightest mutual-reachability edge to
 * another, exactly (FP64's direct form; edges by (w, a, b)), into
 * io->best by root (INFINITY for the others). FASTED's pass in a's format
 * and transforms with the masked nearest-neighbour epilogue estimates each
 * row's; exact's error bound screens the rows, the rest are decided in
 * FP64 on the device. Where the components are few, the rest of the tree
 * at once instead: each component's edge towards io->skip in it
 * (kernels/kern_mst.cu, ms_pair_round). a: every row (q0 0, q1 n), no
 * layout.
 * KERN_ENOMEM where the state or the dataset does not fit, or the data's
 * type is none the device reads (the caller takes the host's round). */
int kern_mst_round(const kern_join_args *a, mst_round_io *io, kern_join_result *r);
/* The radius-neighbours graph of fn's PAIRS run at a->eps over every row
 * (q0 = 0, q1 = n), its pairs kept on a's device (pair_dev; graph_dev_io,
 * kernels/cluster_types.h): row i's entries the pairs (i, j) the run
 * lists, (i, i) only with io->include_self, each with the d2 the run's
 * pair_fn would get. Out: io->indptr, and io->kept holding the entries in
 * (i, j) order on the device (32 bytes an entry while it sorts, 16 after)
 * until kern_graph_copy writes indices (indptr[n] columns) and, where
 * dist is set, the distances (d2 > 0 ? sqrt(d2) : 0) into host memory,
 * or kern_graph_free. KERN_ENOMEM where the entries do not fit the
 * device, or the run would be over several devices or processes (the
 * caller's host route then). kernels/kern_graph.cu. */
struct kern_graph;
int kern_graph_run(kern_join_fn fn, const kern_join_args *a, graph_dev_io *io, kern_join_result *r);
int kern_graph_copy(struct kern_graph *g, int32_t *indices, double *dist);
uint64_t kern_graph_entries(const struct kern_graph *g); /* indptr[n] */
void kern_graph_free(struct kern_graph *g);              /* NULL: nothing */
/* The core distances of DBSCAN's curve (src/cluster/dbscan_curve.c) from fn's
 * PAIRS run at a->eps (the curve's max) over every row (q0 = 0, q1 = n),
 * its pairs consumed on the device (pair_dev) on a's device or device
 * list: each pair (i, j), i != j, after the layout's rows, offers d2 to
 * row i and to row j; each row keeps the K least d2 offered by distinct
 * rows j (each row counted once, however often its pair comes). Out:
 * core2[i] (a->n) the k-th least (k <= K), +inf where fewer than k rows
 * were offered or above max2; where list is set, from row i's K kept
 * (d2, j) the curve's first round (kernels/knn_lists.h): list[i],
 * reach2[i], kb[i] (with merge, its curve's end there: merge->finished). Several devices: each
 * keeps its own sets, merged on the first. KERN_ENOMEM when the state (12K + 16 bytes a row; 12K +
 * 152 more on the first device with list) does not fit a device (the caller's host route then).
 * kernels/kern_curve_core.cu. */
int kern_curve_core(kern_join_fn fn, const kern_join_args *a, const curve_core_io *io,
                    kern_join_result *r);
/* exact: FASTED (fp16) candidates at eps^2 + the bound, each computed again
 * in FP64 as kern_fp64_run computes it: fp64's results in every mode. */
int kern_exact_run(const kern_join_args *a, kern_join_result *r);

/* k-distance in FASTED's arithmetic and the args' format: out[q - q0] =
 * the k-th smallest d2(q, j) over all rows j != q, for the query rows
 * [q0, q1), as the join's epilogue computes d2 (widened to double). Uses
 * x, n, d, hash, q0, q1, symmetric, device, format, off, mem_cap,
 * batch_pairs, cancel and progress of a, and devices/ndevices (the query
 * rows in blocks from one queue, as kern_join_args says); r gets the summed
 * timings of its passes (over a device list: each device's, the longest
 * kept, and its share) (kernels/fasted_kdist.cu). A dataset larger than
 * the device (or mem_cap) is streamed (kern_stream_kdist). */
int kern_fasted_kdist(const kern_join_args *a, int k, double *out, kern_join_result *r);

/* Pass A's bounds of kern_fasted_kdist from host arrays, on the current
 * device: for each of rows rows of nchunk chunk minima (non-negative or
 * +inf), u2 the k-th smallest and (u2w not NULL) u2w the k2-th, with the
 * minima held in registers (regs) or read from memory each step. For the
 * tests; 0 or an error code. */
int kern_kd_bounds(const float *mins, size_t rows, unsigned nchunk, int k, int k2, float *u2,
                   float *u2w, int regs);

#ifdef __cplusplus
}
#endif

#endif
