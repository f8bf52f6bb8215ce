/* The k-distance driver shared by the CPU engines: the same query-block by
 * candidate-block loop and row function (cpu_kernel) as cpu_join, but each
 * query row keeps a max-heap of its k smallest squared distances instead
 * of counting pairs. The heap's top is the short-circuit limit handed to
 * the row function, so a candidate is dropped as soon as its partial sum
 * passes the k-th best so far. Memory: k doubles per query row of a block
 * in flight, per thread; never the pair set. */
#ifndef TCJ_CPU_KDIST_H
#define TCJ_CPU_KDIST_H

#include "cpu_join.h"

/* Fill spec->out per the contract in engine.h with kernel k (its eps2 and
 * edges are not used); fills kernel_seconds, the "compute" phase, device
 * and variant. Returns 0 or TCJ_ECANCEL. */
int cpu_kdist_run(const kdist_spec *spec, const cpu_kernel *k, join_result *res);

#endif
