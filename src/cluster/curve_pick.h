/* Plateaus of a DBSCAN curve (src/cluster/dbscan_curve.h) and the eps `dbscan
 * curve use` picks. A plateau is a range of eps over which the cluster
 * count holds; noise only falls as eps grows, so over a plateau it runs
 * from its value at lo down to its value just below hi. The pick weighs
 * noise: among eps with less than half the points noise, the widest
 * range with two or more clusters, and says why it chose what it did.
 * Library code: nothing here prints. */
#ifndef TCJ_CURVE_PICK_H
#define TCJ_CURVE_PICK_H

#include <stddef.h>

#include "dbscan_curve.h"

/* [lo, hi) (hi = max for the last, included), merged where neighbours
 * have the same count; noise_lo / noise_hi: noise points at lo and at the
 * largest eps of the range. */
typedef struct dbscan_plateau {
    double lo, hi;
    size_t clusters;
    size_t noise_lo, noise_hi;
} dbscan_plateau;

/* The plateaus with clusters >= 1, the widest (hi - lo) first, at most
 * cap of them into out, *count how many. 0, or TCJ_ENOMEM with one line. */
int dbscan_curve_plateaus(const dbscan_curve *c, dbscan_plateau *out, size_t cap, size_t *count);

/* Why a pick was made. */
typedef enum curve_pick_why {
    CURVE_PICK_CLUSTERS, /* the widest range with 2+ clusters and under half noise */
    CURVE_PICK_ONE,      /* no eps up to max has both: the widest under half noise (one cluster) */
    CURVE_PICK_NOISY,    /* at every eps up to max at least half the points are noise: none */
    CURVE_PICK_EMPTY,    /* no eps up to max gives a cluster: none */
} curve_pick_why;

typedef struct curve_pick {
    curve_pick_why why;
    double eps;             /* the middle of [lo, hi); 0 for NOISY and EMPTY */
    double lo, hi;          /* the range weighed: the plateau from where noise falls under half */
    dbscan_plateau plateau; /* the whole plateau it lies in */
    size_t clusters, noise; /* at eps */
    double half;            /* the smallest eps with under half the points noise (0: none) */
} curve_pick;

/* The pick. 0, or TCJ_ENOMEM with one line. */
int dbscan_curve_pick(const dbscan_curve *c, curve_pick *p);

/* One line saying what was picked and why (no trailing newline). */
void dbscan_curve_pick_text(const dbscan_curve *c, const curve_pick *p, char *buf, size_t size);

#endif
