/* A thread's K smallest of the values offered to it, for the FP64
 * k-distances (kernels/grid_kdist.cu, kernels/fp64_kdist.cu): in
 * registers to K = 64 (kd_top_reg), a max-heap in local memory beyond
 * (kd_top_heap, K up to 256). add(s) takes s below kth() only. */
#ifndef TCJ_KD_TOP_CUH
#define TCJ_KD_TOP_CUH

#include <math.h>

/* A row's K smallest, K <= KM <= 64: an ascending array in registers
 * whose first KM - K slots are fixed at -inf, so the K-th is always the
 * last (no index known only at run time); an insertion is branch-free
 * over constant indices. */
template <int KM> struct kd_top_reg {
    double a[KM];
    int K;
    __device__ __forceinline__ void init(int k)
    {
        K = k;
#pragma unroll
        for (int i = 0; i < KM; i++)
            a[i] = i < KM - k ? -INFINITY : INFINITY;
    }
    __device__ __forceinline__ double kth() const
    {
        return a[KM - 1];
    }
    /* s below kth(): the KM smallest of a and s */
    __device__ __forceinline__ void add(double s)
    {
#pragma unroll
        for (int i = KM - 1; i > 0; i--)
            a[i] = fmin(a[i], fmax(s, a[i - 1]));
        a[0] = fmin(a[0], s);
    }
    /* the K values (+inf for those not offered) to p[0..K) */
    __device__ __forceinline__ void store(double *p) const
    {
#pragma unroll
        for (int i = 0; i < KM; i++)
            if (i >= KM - K)
                p[i - (KM - K)] = a[i];
    }
};

/* K up to KDIST_MAX_K (256): a max-heap of the K smallest in local
 * memory, the K-th at its root (log K a replacement; a sorted array of
 * 256 would not fit the registers and spill on every insertion). */
struct kd_top_heap {
    double h[256];
    int n, K;
    __device__ __forceinline__ void init(int k)
    {
        n = 0;
        K = k;
    }
    __device__ __forceinline__ double kth() const
    {
        return n < K ? INFINITY : h[0];
    }
    __device__ __forceinline__ void add(double s)
    {
        int i;
        if (n < K) { /* sift up */
            i = n++;
            while (i > 0 && h[(i - 1) / 2] < s) {
                h[i] = h[(i - 1) / 2];
                i = (i - 1) / 2;
            }
        } else { /* replace the root, sift down */
            i = 0;
            for (;;) {
                int c = 2 * i + 1;
                if (c >= n)
                    break;
                if (c + 1 < n && h[c + 1] > h[c])
                    c++;
                if (!(h[c] > s))
                    break;
                h[i] = h[c];
                i = c;
            }
        }
        h[i] = s;
    }
    __device__ __forceinline__ void store(double *p) const
    {
        for (int i = 0; i < K; i++)
            p[i] = i < n ? h[i] : INFINITY;
    }
};

#endif
