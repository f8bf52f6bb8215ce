/* exact's tensor-core kernels as handles for the FASTED driver
 * (kernels/exact_kern.cuh says what each is). kernels/ only. */
#ifndef TCJ_EXACT_KERN_H
#define TCJ_EXACT_KERN_H

#include "kernels.h"

#ifdef __cplusplus
extern "C" {
#endif
extern const kern_format exact_kern_band;          /* COUNT, d <= 256 */
extern const kern_format exact_kern_promoted_band; /* COUNT, large d */
extern const kern_format exact_kern_promoted;      /* the other modes, large d */
#ifdef __cplusplus
}

#include "exact_bound.h"

/* The kernels exact's other passes (the k-distance's, HDBSCAN*'s rounds)
 * run in, for a's rows (kernels/exact_kern_pass.cu): exact_kern_promoted
 * above d = 2 KERN_FP16X_PROMOTE_VALUES where the device runs it on
 * wgmma, *promoted then set; else a's own format (exact's fp16). */
const kern_format *exact_kern_pass(const kern_join_args *a, bool *promoted);
/* The bound of such a pass: exact_bound_init_promoted's when promoted. */
void exact_kern_bound(size_t d, bool promoted, exact_bound *b);
/* The row and column tiles of the kernel fasted_run runs for a
 * non-symmetric COUNT pass of a in fmt (*wg: wgmma's), for the work items
 * a pass lists (fasted_params.tiles). 0 or an error (message left). */
int exact_kern_tiles(const kern_join_args *a, const kern_format *fmt, size_t *bm, size_t *bn,
                     bool *wg);
#endif

#endif
