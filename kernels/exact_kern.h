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
#endif

#endif
