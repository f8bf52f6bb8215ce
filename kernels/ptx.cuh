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

/* ---- Hopper (sm_90 / sm_90a): mbarrier, bulk tensor copy, wgmma ----
 * Used only by fasted_wgmma.cu inside its sm_90a guard. */

/* PTX ISA, "mbarrier.init": expected arrival count. */
__device__ __forceinline__ void mbarrier_init(uint32_t bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}

/* PTX ISA, "mbarrier.arrive" (release, CTA scope). */
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

/* PTX ISA, "mbarrier.arrive.expect_tx": arrive and add tx
 * bytes the bulk copies must complete before the phase ends. */
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* PTX ISA, "mbarrier.try_wait.parity" (acquire, CTA scope):
 * 1 once the phase of the given parity has completed. */
__device__ __forceinline__ int mbarrier_try_wait_parity(uint32_t bar, unsigned parity)
{
    uint32_t ok;
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(ok)
                 : "r"(bar), "r"(parity)
                 : "memory");
    return (int)ok;
}

/* PTX ISA, "cp.async.bulk.tensor" (sm_90): a 2-D box of the
 * tensor map at (c0 innermost, c1) to shared memory, completing as tx bytes
 * on the mbarrier. Out-of-range elements are filled with zeros. */
__device__ __forceinline__ void cp_async_bulk_tensor_2d_global_to_shared(uint32_t dst,
                                                                         const void *tmap,
                                                                         uint32_t bar, int c0,
                                                                         int c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
                 "l"(tmap), "r"(bar), "r"(c0), "r"(c1)
                 : "memory");
}

/* PTX ISA, "fence.mbarrier_init.release.cluster":
 * makes mbarrier.init visible to the async proxy (the copy engine). */
__device__ __forceinline__ void fence_mbarrier_init_release_cluster()
{
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* PTX ISA, "fence.proxy.async.shared::cta": orders this thread's
 * generic-proxy shared-memory accesses with the async proxy's. */
__device__ __forceinline__ void fence_proxy_async_shared_cta()
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* PTX ISA, "setmaxnreg" (sm_90a): the warpgroup's register
 * budget per thread, down (a producer) or up (the consumers). */
template <int N> __device__ __forceinline__ void setmaxnreg_dec()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg range");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N> __device__ __forceinline__ void setmaxnreg_inc()
{
    static_assert(N % 8 == 0 && N >= 24 && N <= 256, "setmaxnreg range");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/* PTX ISA, "wgmma.fence": orders register accesses of the
 * accumulator before the wgmma.mma_async that follows. */
__device__ __forceinline__ void wgmma_fence()
{
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

/* PTX ISA, "wgmma.commit_group". */
__device__ __forceinline__ void wgmma_commit_group()
{
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/* PTX ISA, "wgmma.wait_group N": at most N committed groups
 * still pending. Follow it with reg_fence on the accumulator so the
 * compiler reads those registers only after the wait. */
template <int N> __device__ __forceinline__ void wgmma_wait_group()
{
    static_assert(N >= 0 && N < 8, "wait_group takes a small constant");
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* No instruction: pins a register to this point of the program. The
 * compiler cannot see that wgmma.mma_async writes its accumulator
 * asynchronously; fencing each register after wgmma.wait_group (and
 * before the first wgmma) keeps its reads and writes on the right side. */
__device__ __forceinline__ void reg_fence(float &x)
{
    asm volatile("" : "+f"(x)::"memory");
}

/* Named barrier (PTX ISA, "bar.sync id, count"): only the
 * warps that take part (count threads, a multiple of 32) wait. */
__device__ __forceinline__ void bar_sync(int id, int count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* PTX ISA, "wgmma.mma_async" (sm_90a):
 * wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 with both operands
 * K-major in shared memory, given by matrix descriptors. The warpgroup's
 * 64x256 FP32 accumulator is 128 floats per thread, in the ISA's D
 * fragment layout: thread t of warp w holds rows 16w + t/4 (+8) and
 * columns 8j + 2(t%4) (+1) in d[4j..4j+3]. scale_d 0 ignores d. The setp
 * only turns the integer into the instruction's predicate operand. */
__device__ __forceinline__ void wgmma_mma_async_m64n256k16_f32_f16(float (&d)[128], uint64_t desc_a,
                                                                   uint64_t desc_b, int scale_d)
{
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"
        "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"
        "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"
        "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"
        "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"
        "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"
        "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"
        "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
        ", %128, %129, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
          "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
          "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
          "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
          "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]),
          "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
          "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]),
          "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]),
          "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]),
          "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
          "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]),
          "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]),
          "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]),
          "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]),
          "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]),
          "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

#endif
