/* A dataset's value as FP64, exactly, for every element type the
 * kernels read (KERN_X_*): the FP64 stages of exact (exact_refine.cuh)
 * and of HDBSCAN*'s rounds (kern_mst.cu). */
#ifndef TCJ_F64_WIDEN_CUH
#define TCJ_F64_WIDEN_CUH

#include <stdint.h>

#include <cuda_fp16.h>

__device__ __forceinline__ double exact_w(double v)
{
    return v;
}
__device__ __forceinline__ double exact_w(float v)
{
    return (double)v;
}
__device__ __forceinline__ double exact_w(__half v)
{
    return (double)__half2float(v);
}
__device__ __forceinline__ double exact_w(uint8_t v)
{
    return (double)v;
}

#endif
