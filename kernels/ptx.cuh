/* One-instruction wrappers for the PTX that kernels/ uses. Each is named after
 * the instruction and cites its section of the PTX ISA (CUDA 13.0 edition);
 * kernels never write asm themselves. Fragment layouts are the ISA's. */
#ifndef TCJ_PTX_CUH
#define TCJ_PTX_CUH

#include <stdint.h>

/* PTX ISA 9.7.14.5.14, "Multiply-and-Accumulate Instruction: mma",
 * mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32: d = a * b + d for a
 * 16x16 FP16 A fragment (4 regs of half2), a 16x8 FP16 B fragment (2 regs)
 * and a 16x8 FP32 accumulator (4 floats per thread). */
__device__ __forceinline__ void mma_sync_m16n8k16_f32_f16(float (&d)[4], const uint32_t (&a)[4],
                                                          const uint32_t (&b)[2])
{
    static_assert(sizeof(d) == 16 && sizeof(a) == 16 && sizeof(b) == 8, "m16n8k16 fragments");
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* PTX ISA 9.7.14.5.15, "Warp-level matrix load instruction: ldmatrix",
 * ldmatrix.sync.aligned.m8n8.x4.shared.b16: four 8x8 b16 matrices; lanes
 * 8m..8m+7 give the row addresses (16-byte aligned) of matrix m. */
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t smem_addr)
{
    static_assert(sizeof(r) == 16, "x4 loads four registers");
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr));
}

/* PTX ISA 9.7.9.25.3.1, "Data Movement and Conversion Instructions:
 * cp.async": cp.async.cg.shared.global, 16 bytes, bypassing L1 and the
 * registers. Both addresses 16-byte aligned. */
__device__ __forceinline__ void cp_async_cg_16(uint32_t smem_addr, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem));
}

/* PTX ISA 9.7.9.25.3.2, "cp.async.commit_group". */
__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

/* PTX ISA 9.7.9.25.3.3, "cp.async.wait_group N": wait until at most N of
 * this thread's committed groups are still pending. */
template <int N> __device__ __forceinline__ void cp_async_wait_group()
{
    static_assert(N >= 0 && N < 8, "wait_group takes a small constant");
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/* Shared-window address of a generic pointer (cvta.to.shared, PTX ISA
 * 9.7.9.17), as ldmatrix and cp.async take it. */
__device__ __forceinline__ uint32_t smem_u32(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

#endif
