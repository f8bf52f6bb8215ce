/* One-instruction wrappers for the FP64 tensor-core PTX used by
 * kernels/ted*.cu (their async copies use ptx.cuh's cp.async wrappers).
 * Fragment ownership follows the PTX ISA, section "Matrix Fragments for
 * mma.m8n8k4 / mma.m16n8k{4,8,16} with .f64": lane = 4*g + t (g = lane/4,
 * t = lane%4); see f64_frag_* below. */
#ifndef TCJ_PTX_F64_CUH
#define TCJ_PTX_F64_CUH

#include <cuda_runtime.h>

#include "ptx.cuh"

/* FP64 mma exists on sm_80 (m8n8k4) and sm_90+ (all shapes); sm_86/89 have
 * no FP64 tensor cores, so the body is compiled out there and the host
 * refuses those devices before launching. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ == 800 || __CUDA_ARCH__ >= 900)
#define F64_HAS_DMMA 1
#else
#define F64_HAS_DMMA 0
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define F64_HAS_DMMA_SM90 1
#else
#define F64_HAS_DMMA_SM90 0
#endif

/* Fragment ownership of the FP64 shapes: lane = 4*g + t; the row group g
 * and the thread-in-group t index every fragment below. */
__device__ __forceinline__ int f64_frag_g(int lane)
{
    return lane >> 2;
}
__device__ __forceinline__ int f64_frag_t(int lane)
{
    return lane & 3;
}

/* mma.sync.aligned.m8n8k4.row.col.f64: d = a*b + c.
 * a: A[g][t]; b: B[t][g]; c[i]: C[g][2t+i]. */
__device__ __forceinline__ void mma_m8n8k4_f64(double (&d)[2], double a, double b,
                                               const double (&c)[2])
{
#if F64_HAS_DMMA
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};\n"
                 : "=d"(d[0]), "=d"(d[1])
                 : "d"(a), "d"(b), "d"(c[0]), "d"(c[1]));
#else
    __trap();
#endif
}

/* mma.sync.aligned.m16n8k16.row.col.f64 (sm_90): d = a*b + c.
 * a[i]: A[g + 8*(i%2)][t + 4*(i/2)]; b[i]: B[t + 4*i][g];
 * c[i]: C[g + 8*(i/2)][2t + i%2]. */
__device__ __forceinline__ void mma_m16n8k16_f64(double (&d)[4], const double (&a)[8],
                                                 const double (&b)[4], const double (&c)[4])
{
#if F64_HAS_DMMA_SM90
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, "
                 "{%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%16,%17,%18,%19};\n"
                 : "=d"(d[0]), "=d"(d[1]), "=d"(d[2]), "=d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]),
                   "d"(a[7]), "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]), "d"(c[0]), "d"(c[1]),
                   "d"(c[2]), "d"(c[3]));
#else
    __trap();
#endif
}

#endif
