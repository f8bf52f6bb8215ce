/* The summary of a per-point join (JOIN_PERPOINT): how many neighbours the
 * points have, and with DBSCAN's minPts how many are core points. Pure:
 * nothing here prints or touches the store. */
#ifndef TCJ_PERPOINT_H
#define TCJ_PERPOINT_H

#include <stddef.h>
#include <stdint.h>

/* Bins of the histogram: bin 0 holds 0 neighbours, bin b >= 1 holds
 * [2^(b-1), 2^b - 1]: neighbour counts are heavy-tailed (a few points in
 * dense regions have orders of magnitude more), which equal-width bins
 * would squeeze into one bar. 65 covers every uint64. */
#define PERPOINT_MAX_BINS 65

typedef struct perpoint_bin {
    uint64_t lo, hi; /* neighbours, both inclusive */
    uint64_t count;  /* points */
} perpoint_bin;

typedef struct perpoint_summary {
    size_t npoints;
    /* Neighbours per point, self excluded (their mean is the selectivity
     * S), as nearest-rank quantiles: the p-quantile is the value at rank
     * ceil(p * npoints) of the sorted counts (rank 1 for p = 0). */
    uint64_t min, p10, median, p90, max;
    double mean;
    /* bins from the one holding min to the one holding max */
    perpoint_bin bin[PERPOINT_MAX_BINS];
    int nbins;
    /* minpts > 0: core points have at least minpts neighbours counting
     * themselves (DBSCAN's and scikit-learn's min_samples' convention);
     * the rest are noise candidates (noise or border points: telling them
     * apart needs the pairs). */
    uint64_t minpts, core, noise;
} perpoint_summary;

/* counts[i]: neighbours of point i, self included (join_spec's PERPOINT
 * counts). minpts 0: no core count. Returns 0, or TCJ_EINVAL when n is 0
 * or a count is 0 (every point is its own neighbour). */
int perpoint_summarize(const uint64_t *counts, size_t n, uint64_t minpts, perpoint_summary *out);

/* The bin holding a neighbour count. */
int perpoint_bin_of(uint64_t neighbours);

#endif
