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

/* PTX ISA 9.7.14.5.14, mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32:
 * the f16 instruction's shape and fragment layout with BF16 inputs. */
__device__ __forceinline__ void mma_sync_m16n8k16_f32_bf16(float (&d)[4], const uint32_t (&a)[4],
                                                           const uint32_t (&b)[2])
{
    static_assert(sizeof(d) == 16 && sizeof(a) == 16 && sizeof(b) == 8, "m16n8k16 fragments");
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* PTX ISA 9.7.14.5.14, mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32:
 * a 16x8 TF32 A fragment (4 regs), an 8x8 B fragment (2 regs). Byte for
 * byte its fragments are those of m16n8k16 with 16-bit inputs: lane l holds
 * the 32-bit word (l%4) of 16-byte chunk c of row l/4 (+8), so one ldmatrix
 * layout serves both (see frag_ab_row / frag_ab_word). */
__device__ __forceinline__ void mma_sync_m16n8k8_f32_tf32(float (&d)[4], const uint32_t (&a)[4],
                                                          const uint32_t (&b)[2])
{
    static_assert(sizeof(d) == 16 && sizeof(a) == 16 && sizeof(b) == 8, "m16n8k8 fragments");
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* PTX ISA 9.7.14.5.14, mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2}
 * (sm_89 and later): 16x32 FP8 A (4 regs of 4 values), 32x8 B (2 regs),
 * FP32 accumulate. Its fragments hold the same bytes as m16n8k16's (32
 * bytes of k). Compiled to nothing below sm_89, where no format that uses
 * it is offered (kern_cc_has_fp8_mma). */
#define TCJ_MMA_FP8(fn, ty)                                                                        \
    __device__ __forceinline__ void fn(float(&d)[4], const uint32_t(&a)[4], const uint32_t(&b)[2]) \
    {                                                                                              \
        TCJ_MMA_FP8_ASM(ty)                                                                        \
    }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define TCJ_MMA_FP8_ASM(ty)                                                                        \
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32." ty "." ty ".f32 "                        \
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                         \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                  \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
#define TCJ_MMA_FP8_ASM(ty) __trap();
#endif
TCJ_MMA_FP8(mma_sync_m16n8k32_f32_e4m3, "e4m3")
TCJ_MMA_FP8(mma_sync_m16n8k32_f32_e5m2, "e5m2")

/* PTX ISA 9.7.14.5.14, mma.sync.aligned.m16n8k32.row.col.s32.{u8,s8}.s32
 * (sm_80 and later): 16x32 8-bit integer A (4 regs of 4 values), 32x8 B
 * (2 regs), S32 accumulate (exact: the callers keep every sum within S32).
 * The fragments hold the same bytes as m16n8k16's. */
#define TCJ_MMA_INT8(fn, ty)                                                                       \
    __device__ __forceinline__ void fn(unsigned(&d)[4], const uint32_t(&a)[4],                     \
                                       const uint32_t(&b)[2])                                      \
    {                                                                                              \
        asm volatile("mma.sync.aligned.m16n8k32.row.col.s32." ty "." ty ".s32 "                    \
                     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                     \
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])                              \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
    }
TCJ_MMA_INT8(mma_sync_m16n8k32_s32_u8, "u8")
TCJ_MMA_INT8(mma_sync_m16n8k32_s32_s8, "s8")

/* Fragment ownership (PTX ISA 9.7.14.5.8, "Matrix Fragments for mma.m16n8k*").
 * Every mma.sync shape used here multiplies 32 bytes of k per instruction,
 * and its fragments are laid out alike in bytes:
 *  - C/D (FP32, m16n8): element e (0..3) of a lane sits at row
 *    frag_c_row(lane, e) and column frag_c_col(lane, e) of the 16x8 tile;
 *  - A (16 rows) and B (8 rows of the candidate side, k contiguous):
 *    register r of a lane holds the 32-bit word frag_ab_word(lane) of the
 *    16-byte chunk r/2 (A: r>>1, B: r) of row frag_ab_row(lane) (+8 for A's
 *    odd registers).
 * A wgmma m64nN FP32 accumulator is, per warp of the warpgroup, rows
 * 16*warp.. of the same m16n8 layout repeated over N/8 column blocks:
 * d[4*nb + e] is element e of column block nb (wgmma_c_row0). */
__device__ __forceinline__ int frag_c_row(int lane, int e)
{
    return (lane >> 2) + 8 * (e >> 1);
}
__device__ __forceinline__ int frag_c_col(int lane, int e)
{
    return 2 * (lane & 3) + (e & 1);
}
__device__ __forceinline__ int frag_ab_row(int lane)
{
    return lane >> 2;
}
__device__ __forceinline__ int frag_ab_word(int lane)
{
    return lane & 3;
}
/* First row of warp w's slice of a warpgroup's m64 accumulator. */
__device__ __forceinline__ int wgmma_c_row0(int warp_in_group)
{
    return 16 * warp_in_group;
}
/* ldmatrix .x4 addressing: lanes 8m..8m+7 give the rows of matrix m. For an
 * A tile (16 rows x 32 bytes) matrices are (rows 0-7, chunk 0), (rows 8-15,
 * chunk 0), (rows 0-7, chunk 1), (rows 8-15, chunk 1), i.e. the A fragment's
 * registers; for two B tiles (16 candidate rows x 32 bytes) they are (rows
 * 0-7, chunk 0), (rows 0-7, chunk 1), (rows 8-15, chunk 0), (rows 8-15,
 * chunk 1), i.e. b[0], b[1] of n8 blocks 0 and 1. Row and 16-byte chunk
 * (0 or 1 within the k step) that a lane addresses: */
__device__ __forceinline__ int ldsm_a_row(int lane)
{
    return lane & 15;
}
__device__ __forceinline__ int ldsm_a_chunk(int lane)
{
    return lane >> 4;
}
__device__ __forceinline__ int ldsm_b_row(int lane)
{
    return ((lane >> 4) << 3) + (lane & 7);
}
__device__ __forceinline__ int ldsm_b_chunk(int lane)
{
    return (lane >> 3) & 1;
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

/* PTX ISA, "Data Movement and Conversion Instructions: st", st.release.gpu
 * (8, "Memory Consistency Model": release at GPU scope): a 64-bit store to
 * global memory that every write before it precedes, for a reader that
 * loads it with ld_acquire_gpu_u64. */
__device__ __forceinline__ void st_release_gpu_u64(void *p, unsigned long long v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* PTX ISA, "Data Movement and Conversion Instructions: ld", ld.acquire.gpu:
 * a 64-bit load from global memory that every access after it follows. */
__device__ __forceinline__ unsigned long long ld_acquire_gpu_u64(const void *p)
{
    unsigned long long v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* PTX ISA 9.7.9.25.3.1, "Data Movement and Conversion Instructions:
 * cp.async": cp.async.cg.shared.global, 16 bytes, bypassing L1 and the
 * registers. Both addresses 16-byte aligned. */
__device__ __forceinline__ void cp_async_cg_16(uint32_t smem_addr, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem));
}

/* The same from a generic pointer to shared memory (kernels/ted.cu's
 * double tiles). */
__device__ __forceinline__ void cp_async_cg_16(void *smem_dst, const void *gmem)
{
    cp_async_cg_16((uint32_t)__cvta_generic_to_shared(smem_dst), gmem);
}

/* The same through L1 (cp.async.ca): rows that several copies read
 * (exact's refinement, kernels/exact_refine.cuh) hit there. */
__device__ __forceinline__ void cp_async_ca_16(uint32_t smem_addr, const void *gmem)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(smem_addr), "l"(gmem));
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

/* PTX ISA 9.7.3.9, "Floating Point Instructions: set":
 * set.leu.u32.f32: all ones when x <= u or either is NaN, else 0 (the
 * unordered compare keeps the mask free of a clamp; see fasted_format.cuh). */
__device__ __forceinline__ unsigned set_leu_u32_f32(float x, float u)
{
    unsigned m;
    asm("set.leu.u32.f32 %0, %1, %2;" : "=r"(m) : "f"(x), "f"(u));
    return m;
}

/* ---- Hopper (sm_90 / sm_90a): mbarrier, bulk tensor copy, wgmma ----
 * Used only inside the sm_90a guard of fasted_wgmma.cuh. */

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

/* PTX ISA, "cp.async.bulk" (sm_90): bytes (a multiple of 16) from global
 * memory to shared memory, both 16-byte aligned, completing as tx bytes on
 * the mbarrier. */
__device__ __forceinline__ void cp_async_bulk_global_to_shared(uint32_t dst, const void *src,
                                                               unsigned bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
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
__device__ __forceinline__ void reg_fence(unsigned &x)
{
    asm volatile("" : "+r"(x)::"memory");
}

/* Named barrier (PTX ISA, "bar.sync id, count"): only the
 * warps that take part (count threads, a multiple of 32) wait. */
__device__ __forceinline__ void bar_sync(int id, int count)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* Arrive at named barrier id without waiting for it to complete. */
__device__ __forceinline__ void bar_arrive(int id, int count)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* The 128 FP32 accumulator operands of a wgmma m64n256 (%0..%127) and
 * their constraints, shared by the per-format wrappers below. */
#define TCJ_WGMMA_D128                                                                             \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                      \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                             \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                             \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63,"                             \
    "%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,"                             \
    "%80,%81,%82,%83,%84,%85,%86,%87,%88,%89,%90,%91,%92,%93,%94,%95,"                             \
    "%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"                 \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127}"
#define TCJ_WGMMA_D8(k)                                                                            \
    "+f"(d[k]), "+f"(d[k + 1]), "+f"(d[k + 2]), "+f"(d[k + 3]), "+f"(d[k + 4]), "+f"(d[k + 5]),    \
        "+f"(d[k + 6]), "+f"(d[k + 7])
#define TCJ_WGMMA_C128                                                                             \
    TCJ_WGMMA_D8(0), TCJ_WGMMA_D8(8), TCJ_WGMMA_D8(16), TCJ_WGMMA_D8(24), TCJ_WGMMA_D8(32),        \
        TCJ_WGMMA_D8(40), TCJ_WGMMA_D8(48), TCJ_WGMMA_D8(56), TCJ_WGMMA_D8(64), TCJ_WGMMA_D8(72),  \
        TCJ_WGMMA_D8(80), TCJ_WGMMA_D8(88), TCJ_WGMMA_D8(96), TCJ_WGMMA_D8(104),                   \
        TCJ_WGMMA_D8(112), TCJ_WGMMA_D8(120)

/* PTX ISA, "wgmma.mma_async" (sm_90a):
 * wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 with both operands
 * K-major in shared memory, given by matrix descriptors. The warpgroup's
 * 64x256 FP32 accumulator is 128 floats per thread, in the ISA's D
 * fragment layout (see frag_c_row / wgmma_c_row0). scale_d 0 ignores d.
 * The setp only turns the integer into the instruction's predicate
 * operand. Each instruction consumes 32 bytes of k (16 halves). */
__device__ __forceinline__ void wgmma_mma_async_m64n256k16_f32_f16(float (&d)[128], uint64_t desc_a,
                                                                   uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " TCJ_WGMMA_D128
                 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : TCJ_WGMMA_C128
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* PTX ISA, "wgmma.mma_async" (sm_90a), .bf16 inputs: as above. */
__device__ __forceinline__ void
wgmma_mma_async_m64n256k16_f32_bf16(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " TCJ_WGMMA_D128
                 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                 : TCJ_WGMMA_C128
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* PTX ISA, "wgmma.mma_async" (sm_90a), .tf32 inputs: m64n256k8, K-major
 * operands only (no transpose immediates); 8 TF32 values = 32 bytes of k
 * per instruction, the same bytes as the 16-bit shapes. */
__device__ __forceinline__ void wgmma_mma_async_m64n256k8_f32_tf32(float (&d)[128], uint64_t desc_a,
                                                                   uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " TCJ_WGMMA_D128
                 ", %128, %129, p, 1, 1;\n}\n"
                 : TCJ_WGMMA_C128
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

/* PTX ISA, "wgmma.mma_async" (sm_90a), .e4m3 / .e5m2 inputs: m64n256k32,
 * K-major operands only (FP8 has no transpose immediates); 32 FP8 values =
 * 32 bytes of k per instruction, the same bytes as the 16-bit shapes. One
 * wrapper per input type. */
#define TCJ_WGMMA_FP8(fn, ty)                                                                      \
    __device__ __forceinline__ void fn(float(&d)[128], uint64_t desc_a, uint64_t desc_b,           \
                                       int scale_d)                                                \
    {                                                                                              \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                 \
                     "wgmma.mma_async.sync.aligned.m64n256k32.f32." ty "." ty " " TCJ_WGMMA_D128   \
                     ", %128, %129, p, 1, 1;\n}\n"                                                 \
                     : TCJ_WGMMA_C128                                                              \
                     : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                    \
    }
TCJ_WGMMA_FP8(wgmma_mma_async_m64n256k32_f32_e4m3, "e4m3")
TCJ_WGMMA_FP8(wgmma_mma_async_m64n256k32_f32_e5m2, "e5m2")

/* The 64 FP32 accumulator operands of a wgmma m64n128 (%0..%63). */
#define TCJ_WGMMA_D64                                                                              \
    "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                      \
    "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                             \
    "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                             \
    "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}"
#define TCJ_WGMMA_C64                                                                              \
    TCJ_WGMMA_D8(0), TCJ_WGMMA_D8(8), TCJ_WGMMA_D8(16), TCJ_WGMMA_D8(24), TCJ_WGMMA_D8(32),        \
        TCJ_WGMMA_D8(40), TCJ_WGMMA_D8(48), TCJ_WGMMA_D8(56)

/* PTX ISA, "wgmma.mma_async" (sm_90a), .e4m3 / .e5m2 inputs at m64n128k32:
 * half the columns of the shape above, 64 accumulator floats per thread in
 * the same D fragment layout (column blocks 0..15). The FP8 kernel's
 * promotion to FP32 accumulates each k chunk here. */
#define TCJ_WGMMA_FP8_N128(fn, ty)                                                                 \
    __device__ __forceinline__ void fn(float(&d)[64], uint64_t desc_a, uint64_t desc_b,            \
                                       int scale_d)                                                \
    {                                                                                              \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                  \
                     "wgmma.mma_async.sync.aligned.m64n128k32.f32." ty "." ty " " TCJ_WGMMA_D64    \
                     ", %64, %65, p, 1, 1;\n}\n"                                                   \
                     : TCJ_WGMMA_C64                                                               \
                     : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                    \
    }
TCJ_WGMMA_FP8_N128(wgmma_mma_async_m64n128k32_f32_e4m3, "e4m3")
TCJ_WGMMA_FP8_N128(wgmma_mma_async_m64n128k32_f32_e5m2, "e5m2")

/* PTX ISA, "wgmma.mma_async" (sm_90a), .f16 inputs at m64n128k16: half
 * the columns of m64n256k16, 64 accumulator floats per thread in the same
 * D fragment layout; K-major A and B (no transposes). */
__device__ __forceinline__ void wgmma_mma_async_m64n128k16_f32_f16(float (&d)[64], uint64_t desc_a,
                                                                   uint64_t desc_b, int scale_d)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " TCJ_WGMMA_D64
                 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : TCJ_WGMMA_C64
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}

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

/* The 128 S32 accumulator operands' constraints (integer wgmma). */
#define TCJ_WGMMA_R8(k)                                                                            \
    "+r"(d[k]), "+r"(d[k + 1]), "+r"(d[k + 2]), "+r"(d[k + 3]), "+r"(d[k + 4]), "+r"(d[k + 5]),    \
        "+r"(d[k + 6]), "+r"(d[k + 7])
#define TCJ_WGMMA_R128                                                                             \
    TCJ_WGMMA_R8(0), TCJ_WGMMA_R8(8), TCJ_WGMMA_R8(16), TCJ_WGMMA_R8(24), TCJ_WGMMA_R8(32),        \
        TCJ_WGMMA_R8(40), TCJ_WGMMA_R8(48), TCJ_WGMMA_R8(56), TCJ_WGMMA_R8(64), TCJ_WGMMA_R8(72),  \
        TCJ_WGMMA_R8(80), TCJ_WGMMA_R8(88), TCJ_WGMMA_R8(96), TCJ_WGMMA_R8(104),                   \
        TCJ_WGMMA_R8(112), TCJ_WGMMA_R8(120)

/* PTX ISA, "wgmma.mma_async" (sm_90a), integer inputs:
 * wgmma.mma_async.sync.aligned.m64n256k32.s32.{u8,s8}: K-major operands,
 * S32 accumulator, no scale or transpose immediates; 32 bytes of k. One
 * wrapper per input type. */
#define TCJ_WGMMA_INT8(fn, ty)                                                                     \
    __device__ __forceinline__ void fn(unsigned(&d)[128], uint64_t desc_a, uint64_t desc_b,        \
                                       int scale_d)                                                \
    {                                                                                              \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                 \
                     "wgmma.mma_async.sync.aligned.m64n256k32.s32." ty "." ty " " TCJ_WGMMA_D128   \
                     ", %128, %129, p;\n}\n"                                                       \
                     : TCJ_WGMMA_R128                                                              \
                     : "l"(desc_a), "l"(desc_b), "r"(scale_d));                                    \
    }
TCJ_WGMMA_INT8(wgmma_mma_async_m64n256k32_s32_u8, "u8")
TCJ_WGMMA_INT8(wgmma_mma_async_m64n256k32_s32_s8, "s8")

#endif
