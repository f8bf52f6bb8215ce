/* A dataset's values in FP64 for every element type the kernels read
 * (KERN_X_*): each value widened exactly, a pair's squared distance in
 * fp64's direct form and the rows' norms as a FASTED pass converts them.
 * The FP64 stages of exact (exact_refine.cuh), of HDBSCAN*'s rounds
 * (kern_mst.cu) and of exact's k-distance (fasted_kdist_exact.cu). */
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

/* Row i's squared distance to row j in fp64's direct form, dimension
 * order, no contraction (the cpu engine's and the host's hm_d2, bit for
 * bit); stops once the partial sum passes lim (it only grows) and
 * returns it then. */
template <class T>
__device__ __forceinline__ double f64_direct_d2(const T *x, size_t d, uint32_t i, uint32_t j,
                                                double lim)
{
    const T *a = x + (size_t)i * d, *b = x + (size_t)j * d;
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double u = __dsub_rn(exact_w(a[k]), exact_w(b[k]));
        s = __dadd_rn(s, __dmul_rn(u, u));
        if ((k & 3) == 3 && s > lim)
            return s;
    }
    return s;
}

/* Each row's norm as a FASTED pass converts it (centred, scaled: the
 * norms exact_bound_delta takes), and the largest as a key into *nmax
 * (non-negative doubles order as their bits). */
template <class T>
__global__ void f64_norm_kernel(const T *x, size_t n, size_t d, const double *center, double sc,
                                double *nx, unsigned long long *nmax)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        double s = 0;
        for (size_t k = 0; k < d; k++) {
            const double v = exact_w(x[i * d + k]) - (center ? center[k] : 0.0);
            s += v * v;
        }
        const double r = sqrt(s) * sc;
        nx[i] = r;
        atomicMax(nmax, (unsigned long long)__double_as_longlong(r));
    }
}

#endif
