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
#include "kern_util.cuh" /* kern_fail */

/* The device's capabilities as fasted_run reads them; false where a query
 * fails (its error cleared: the caller's own queries report it). */
static bool ekp_caps(int device, kern_caps *caps)
{
    int major = 0, minor = 0, optin = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
            cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    *caps = {major * 10 + minor, fasted_wg_usable(device), (size_t)optin};
    return true;
}

const kern_format *exact_kern_pass(const kern_join_args *a, bool *promoted)
{
    *promoted = false;
    const kern_format *fmt = a->format ? a->format : &kern_fmt_fp16;
    if (fmt != &kern_fmt_fp16 || a->off || a->d <= 2 * KERN_FP16X_PROMOTE_VALUES)
        return fmt;
    kern_caps caps;
    if (!ekp_caps(a->device, &caps))
        return fmt;
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

int exact_kern_tiles(const kern_join_args *a, const kern_format *fmt, size_t *bm, size_t *bn,
                     bool *wg)
{
    kern_caps caps;
    if (!ekp_caps(a->device, &caps))
        return kern_fail(KERN_ENODEV, "no CUDA device %d", a->device);
    fasted_choice ch;
    const int rc = fasted_choose(a->off, KJOIN_COUNT, fmt, &caps, 0, &ch);
    if (rc)
        return kern_fail(rc, "%s", ch.why);
    *wg = ch.kind == FASTED_KIND_WGMMA;
    *bm = *wg ? (size_t)FASTED_WG_BM : (size_t)ch.v->bm;
    *bn = *wg ? (size_t)FASTED_WG_BN : (size_t)ch.v->bn;
    return 0;
}
