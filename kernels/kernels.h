/* The C interface to everything in kernels/. Host code includes only this
 * header; kernels/ includes no host header but this one. Every function
 * returns 0 or a negative KERN_E* code and leaves a message in
 * kern_error(); a CUDA error fails the call, never the process.
 * It is an umbrella over one header per concern, in dependency order:
 *   kern_base.h     errors, the trace, devices (one, several, features),
 *                   the pair callback and the output modes
 *   kern_formats.h  FASTED's switches, formats and kernel choice
 *   kern_args.h     one run: kern_join_args, kern_join_result, the row
 *                   helpers, kern_join_fn and the streamed runs
 *   kern_engines.h  the engines' entry points, the passes over their pairs
 *                   on the device, the k-distances
 *   kern_cuts.h     subset runs, the cluster cut, the tile cut
 *   kern_ladder.h   the teaching ladder and the cuBLAS yardstick
 * and exact_bound.h (exact's error bound) and cluster_types.h (the
 * clustering layer's io types). */
#ifndef TCJ_KERNELS_H
#define TCJ_KERNELS_H

#include "cluster_types.h"
#include "exact_bound.h"
#include "kern_base.h"
#include "kern_formats.h"
#include "kern_args.h"
#include "kern_engines.h"
#include "kern_cuts.h"
#include "kern_ladder.h"

#endif
