/* The rows a later join of DBSCAN's curve must query, on the device where
 * a merging left the components (kernels/kern_curve_later.cu, called by
 * kern_curve_merge.cu): src/cluster/curve_later.c's curve_later_rows, the
 * same rows in the same order, with no component or bound crossing to the
 * host for it. On the host its four loops over the rows (each a random
 * read of a bound and a branch on it) cost more a round at 20,000 rows
 * than a round's join. */
#ifndef TCJ_KERN_CURVE_LATER_CUH
#define TCJ_KERN_CURVE_LATER_CUH

#include <stddef.h>
#include <stdint.h>

#include "kernels.h"

struct kcl_in {
    size_t n;
    const double *core;      /* n: core distances (squared, +inf above max) */
    const uint32_t *comp;    /* n: each row's root, flattened */
    const curve_edge *bound; /* n: each root's bound (w +inf: closed) */
    const uint32_t *part;    /* NULL (one part), or n (host): the core join's parts */
};

/* curve_later_rows over in: the open components' rows but the largest's
 * into rows[0, *m) ascending, then the largest's *mb rows ascending (*m 0:
 * no later join, *mb 0 too); rows (host) has room for n. 0 or an error
 * code (KERN_ENOMEM: no room on the device; the caller's rows then). */
int kcl_rows(const kcl_in *in, uint32_t *rows, size_t *m, size_t *mb);

#endif
