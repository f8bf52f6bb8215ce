/* wgmma with its A operand in registers (the "RS" form), for the
 * widening formats' kernel (fasted_wg_ue8.cuh): the consumer warps widen
 * A's 8-bit codes in registers, so A never passes through shared memory.
 * One instruction, as in ptx.cuh (whose accumulator operand lists it
 * reuses). */
#ifndef TCJ_PTX_WGMMA_RS_CUH
#define TCJ_PTX_WGMMA_RS_CUH

#include <stdint.h>

#include "ptx.cuh"

/* PTX ISA, "wgmma.mma_async" (sm_90a), register A:
 * wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 d, {a0..a3}, b-desc,
 * scale-d, imm-scale-a, imm-scale-b, imm-trans-b. A is the warpgroup's
 * 64x16 FP16 tile, warp w of the group holding rows 16w..16w+15 as the
 * m16n8k16 A fragment (PTX ISA, "Register Fragments and Shared Memory
 * Matrix Layouts", wgmma .f16 A): a[0] row l/4, k 2(l%4)+{0,1}; a[1] row
 * l/4+8, the same k; a[2], a[3] those rows at k+8 (l the lane). B and the
 * accumulator as in wgmma_mma_async_m64n256k16_f32_f16. The registers of
 * a are read asynchronously: they must not change before the
 * wgmma.wait_group that retires this instruction (ptxas keeps them). */
__device__ __forceinline__ void wgmma_mma_async_m64n256k16_f32_f16_rs(float (&d)[128],
                                                                      const uint32_t (&a)[4],
                                                                      uint64_t desc_b, int scale_d)
{
    static_assert(sizeof(d) == 512 && sizeof(a) == 16, "m64n256k16 fragments");
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " TCJ_WGMMA_D128
                 ", {%128,%129,%130,%131}, %132, p, 1, 1, 0;\n}\n"
                 : TCJ_WGMMA_C128
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));
#else
    __trap();
#endif
}

#endif
