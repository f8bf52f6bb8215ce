/* DBSCAN on the ε-join, scikit-learn's definitions (docs/CLUSTERING.md):
 * minPts counts the point itself; a point is core when at least minPts
 * points (itself included) are within ε; clusters are the connected
 * components of core points under the ε-graph, numbered 0, 1, ... in the
 * order of each component's smallest core index; a non-core point with a
 * core neighbour is a border point and takes the smallest cluster number
 * among its core neighbours; every other point is noise (label -1).
 *
 * The generic path runs on any engine through engine_run, with O(n)
 * memory and no neighbour lists: pass 1 per-point counts (core flags),
 * pass 2 the pairs streamed into a lock-free union-find over core-core
 * edges (union by smaller index: a root is its component's smallest core
 * index, so clusters are numbered by a prefix sum over roots), pass 3 the
 * pairs again, keeping for each non-core row the smallest cluster number
 * of its core neighbours. Where the engine can consume the pairs where
 * it computes them (engine.consume: the passes on the device, no pair
 * crossing to the host) dbscan_run asks for that first (dbscan_device).
 * Library code: nothing here prints. */
#ifndef TCJ_DBSCAN_H
#define TCJ_DBSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "engine.h"

/* The passes a result times (the generic path's; a device path may fill
 * only some). */
enum { DBSCAN_PASS_CORE, DBSCAN_PASS_UNION, DBSCAN_PASS_BORDER, DBSCAN_NPASS };
extern const char *const dbscan_pass_names[DBSCAN_NPASS]; /* "core", "union", "border" */

/* Largest clusters a result keeps (the sizes of all are in the
 * histogram). */
#define DBSCAN_TOP 10
/* Histogram of cluster sizes: bin b holds sizes in [2^b, 2^(b+1)). */
#define DBSCAN_SIZE_BINS 33

typedef struct dbscan_spec {
    const struct engine *engine; /* set by dbscan_run */
    const dataset *ds;
    double eps;
    size_t minpts; /* 1 <= minpts <= n */
    const engine_opts *opts;
    int32_t *labels; /* n entries, written: cluster number or -1 (noise) */
    uint8_t *core;   /* n entries or NULL: 1 for core points */
    const volatile int *cancel;
    void (*progress)(void *ctx, double frac); /* over all passes */
    void *progress_ctx;
} dbscan_spec;

typedef struct dbscan_result {
    size_t n, clusters, core, border, noise;
    double seconds;                    /* end to end, set by dbscan_run */
    double pass_seconds[DBSCAN_NPASS]; /* each pass end to end (its join and its epilogue) */
    /* The joins each pass ran (ran[k] 0: skipped, e.g. no core point makes
     * passes 2 and 3 unnecessary); their modes are PERPOINT, PAIRS, PAIRS. */
    int ran[DBSCAN_NPASS];
    join_result pass[DBSCAN_NPASS];
    join_mode pass_mode[DBSCAN_NPASS];
    uint64_t pairs; /* pairs of the ε-join (pass 1), self-pairs included */
    char precision[32];
    /* Cluster sizes (border points included): the largest, descending, and
     * how many clusters have a size in each power-of-two bin. */
    size_t ntop;
    size_t top[DBSCAN_TOP];
    size_t size_hist[DBSCAN_SIZE_BINS];
} dbscan_result;

/* Check the spec (dataset, eps >= 0 and finite, 1 <= minpts <= n, labels),
 * then run dbscan_device, else (declined) dbscan_generic; fill the
 * counts, sizes and seconds. TCJ_EINVAL with one line for bad input; the
 * engine's error otherwise (TCJ_ECANCEL when cancelled). */
int dbscan_run(const engine *e, dbscan_spec *spec, dbscan_result *res);
/* The passes with the pairs consumed where e computes them
 * (engine.consume; src/cluster/dbscan_device.c), spec->engine set: labels,
 * core and the result's passes as dbscan_generic fills them, on e's own
 * eps-graph. ENGINE_DECLINED (res cleared) where e cannot here. */
int dbscan_device(const engine *e, const dbscan_spec *spec, dbscan_result *res);
/* Tests only: the most pairs the generic path keeps from its core pass
 * (0: its default, 2^25); more, and passes 2 and 3 join again. */
void dbscan_keep_max_for_tests(size_t pairs);
/* The generic path through engine_run (spec->engine set): one PAIRS join
 * whose pairs it keeps where the eps-graph fits its room (the union and
 * border passes then need no join), else the three passes. Fills labels,
 * core and the result's passes; dbscan_run fills the rest. */
int dbscan_generic(const dbscan_spec *spec, dbscan_result *res);
/* Labels from roots: root[i] for a core row its component's smallest core
 * index, for another row the smallest root among its core neighbours or
 * a value >= n when it has none (noise, -1); clusters numbered in the
 * order of their roots. */
void dbscan_number(const uint8_t *core, const uint32_t *root, size_t n, int32_t *lab);

/* Counts (core from core[] when given, else not filled), border, noise,
 * clusters, the top sizes and the size histogram from labels. */
void dbscan_summarize(const int32_t *labels, const uint8_t *core, size_t n, dbscan_result *res);

/* Red flags of a result and their advice: src/cluster/dbscan_advice.h. */

/* Comparing two clusterings of the same points (labels -1 = noise): the
 * adjusted Rand index (Hubert and Arabie 1985) over the partition that
 * makes each noise point its own singleton, the points whose label differs
 * after matching B's clusters to A's (each A cluster to the B cluster it
 * shares most points with, greedily by overlap, one to one), and the noise
 * points gained and lost (core likewise when both core arrays are given).
 * O(n + clusters) memory plus a hash of the label pairs. */
typedef struct dbscan_cmp {
    size_t n;
    double ari;
    size_t changed;                  /* labels that differ after matching */
    size_t noise_gained, noise_lost; /* noise in B not A, in A not B */
    size_t core_gained, core_lost;   /* likewise (0 without core arrays) */
    int have_core;
} dbscan_cmp;
void dbscan_compare(const int32_t *a, const uint8_t *core_a, const int32_t *b,
                    const uint8_t *core_b, size_t n, dbscan_cmp *out);

#endif
