/* The kernels of exact's passes other than its join (exact_kern.h,
 * exact_kern_pass): the k-distance's (fasted_kdist.cu) and HDBSCAN*'s
 * rounds (kern_mst.cu) run FASTED's kernel modes on exact's FP16 rows and
 * bound their estimates as exact's join bounds its own. Above d = 2
 * KERN_FP16X_PROMOTE_VALUES the join promotes (exact_kern.cuh); so do
 * they, where the device runs the promoting kernel (wgmma), and take the
 * promoted bound (exact_bound_init_promoted). */
#include <cuda_runtime.h>

#include "exact_bound.h"
#include "exact_kern.h"
#include "fasted_wgmma.cuh"

const kern_format *exact_kern_pass(const kern_join_args *a, bool *promoted)
{
    *promoted = false;
    const kern_format *fmt = a->format ? a->format : &kern_fmt_fp16;
    if (fmt != &kern_fmt_fp16 || a->off || a->d <= 2 * KERN_FP16X_PROMOTE_VALUES)
        return fmt;
    int major = 0, minor = 0, optin = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, a->device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, a->device) !=
            cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, a->device) !=
            cudaSuccess) {
        (void)cudaGetLastError(); /* the caller's own queries report it */
        return fmt;
    }
    const kern_caps caps = {major * 10 + minor, fasted_wg_usable(a->device), (size_t)optin};
    fasted_choice ch;
    if (fasted_choose(a->off, KJOIN_COUNT, &exact_kern_promoted, &caps, 0, &ch) != 0 ||
        ch.kind != FASTED_KIND_WGMMA)
        return fmt;
    *promoted = true;
    return &exact_kern_promoted;
}

void exact_kern_bound(size_t d, bool promoted, exact_bound *b)
{
    if (promoted)
        exact_bound_init_promoted(b, d, KERN_FP16X_PROMOTE_VALUES);
    else
        exact_bound_init(b, d);
}
