/* The eps at which a join holds a squared distance: what the k-distance's
 * knee (src/cluster/kdist.c), its refinement's joins
 * (src/cluster/kdist_refine.c) and the curve's picks all need, kept below
 * both k-distance modules so that kdist_run can call the refinement. */
#ifndef TCJ_KDIST_EPS_H
#define TCJ_KDIST_EPS_H

/* The smallest double e >= 0 with e*e >= d2 in FP64 (the join's test is
 * d2 <= eps*eps). */
double kdist_eps_for(double d2);

#endif
