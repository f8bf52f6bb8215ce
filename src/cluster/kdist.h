/* k-distance: the distance of every point to its K-th nearest other point
 * (self excluded), computed by an engine (engine.kdist, contract in
 * engine.h), sorted into a curve of at most KDIST_MAX_POINTS quantile
 * points, and the curve's knee found by Kneedle on the ranks from the
 * median to the 90th percentile (docs/CLUSTERING.md says why):
 *   V. Satopää, J. Albrecht, D. Irwin, B. Raghavan, "Finding a 'Kneedle'
 *   in a Haystack: Detecting Knee Points in System Behavior", ICDCS
 *   Workshops 2011.
 * A point whose eps reaches its K-distance has K other points within eps,
 * K+1 counting itself: DBSCAN's minPts and scikit-learn's min_samples
 * (both count the point itself) are K+1. Library code: nothing here prints. */
#ifndef TCJ_KDIST_H
#define TCJ_KDIST_H

#include <stddef.h>

#include "engine.h"
#include "kdist_eps.h" /* kdist_eps_for, the eps of a k-distance */

/* Points kept of a curve (quantiles of the sorted k-distances). */
#define KDIST_MAX_POINTS 1024
/* Kneedle's sensitivity S (the paper's and the kneed library's default). */
#define KDIST_KNEEDLE_S 1.0
/* The ranks, as fractions of n-1, between which the knee is sought. */
#define KDIST_KNEE_LO 0.5
#define KDIST_KNEE_HI 0.9

typedef struct kdist_curve {
    size_t n; /* points of the dataset measured */
    int k;
    size_t npts;
    size_t rank[KDIST_MAX_POINTS]; /* 0-based rank in ascending k-distance */
    double dist[KDIST_MAX_POINTS]; /* the k-distance at that rank */
    /* The knee, sought among the ranks from the median to the 90th
     * percentile (the whole curve where fewer than 3 points lie there):
     * Kneedle's, else the point farthest below the chord, knee_method
     * saying which; none where that part is flat, straight or concave. */
    int have_knee;
    size_t knee_point;       /* index into rank[] and dist[] */
    const char *knee_method; /* "kneedle", "farthest below the chord", or "none" */
    double knee_d2;          /* squared k-distance at the knee, as computed */
    double eps;              /* the smallest eps with eps*eps >= knee_d2: the join at eps
                                finds the knee point's K-th neighbour */
} kdist_curve;

/* Check the spec (dataset, rows, 1 <= k <= KDIST_MAX_K, k <= n-1, an
 * engine with a kdist entry), then run it timed: res->seconds and
 * precision as engine_run fills them. An entry that returns
 * ENGINE_ESTIMATE (exact off its grid) has its estimates made exact by
 * the engine's joins (kdist_refine): res then holds the estimate's phases,
 * the refinement's record, and the estimate's kernel seconds and metrics
 * added. TCJ_EINVAL / TCJ_EUNSUP with one line otherwise. */
int kdist_run(const engine *e, const kdist_spec *spec, join_result *res);

/* Sort d2[0..n) ascending (in place) and build the curve with its knee.
 * n >= 1. Sought there, the knee's eps leaves fewer than half the points
 * non-core (so under half noise) and about a tenth of them or more. */
void kdist_curve_build(double *d2, size_t n, int k, kdist_curve *c);

/* Kneedle on a convex increasing curve (x ascending): the index of the
 * knee, or -1 when Kneedle declares none (fewer than 3 points, a flat or
 * straight curve). The first knee met scanning from the large-x end, as
 * the kneed library does for convex increasing curves, and only below the
 * chord (D > 0; kneed would also take a maximum at or above it); s:
 * sensitivity. */
long kdist_kneedle(const double *x, const double *y, size_t n, double s);

#endif
