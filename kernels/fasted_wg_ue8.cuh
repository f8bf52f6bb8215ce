/* The wgmma kernel of the widening formats (F::widen: ue5m3, ue4m4,
 * kernels/fmt_ue8.cu): 8-bit codes on the device, multiplied as FP16 on
 * Hopper's tensor cores with FP32 accumulation. The block, tile scheduler,
 * work-item slots and epilogue are the FP16 kernel's (fasted_wgmma.cuh);
 * what differs is how the operands reach the tensor cores, chosen to keep
 * shared-memory traffic at FP16's: widening both operands in shared
 * memory, the traffic limits the kernel; then the widening warps' load
 * latency does, see ue8_wg_widen_b (measured: docs/history/
 * BENCHMARKS-2026-11.md, "ue5m3/ue4m4 within 1.1x of fasted").
 *
 *  - A (the 128 query rows) never enters shared memory: each consumer
 *    thread loads its fragment's codes straight from global memory (16
 *    bytes of one row and of the row 8 below per 64-value k slice, two
 *    slices ahead of use), widens them in registers and runs wgmma with A
 *    from registers (wgmma_mma_async_m64n256k16_f32_f16_rs).
 *  - B (the 256 candidate rows) comes in as codes through the copy engine
 *    (a staging ring of wg_stages8 16 KB slices); producer warps 1-3 widen
 *    each once into the FP16 ring (wg_stages 32 KB slices, the 128-byte
 *    swizzle wgmma's descriptors expect), which both consumer warpgroups
 *    read.
 *
 * Per k slice of a 128x256 tile that is 16 KB of codes written by the copy
 * engine, 16 KB read and 32 KB written by the widening warps and 64 KB of
 * B read by wgmma: 128 KB, as for FP16 (48 KB of copies, 80 KB of wgmma
 * reads), where widening both operands in shared memory moved 176 KB.
 *
 * The k order. A thread's 16 codes of a row in a slice are one 16-byte
 * load only if the slice's 64 values are permuted: code q (0..15) of
 * 16-byte chunk t (0..3) of a row's slice is multiplied as FP16 value
 *   L = 16 (q / 4) + 2 t + (q % 2) + 8 ((q / 2) % 2)
 * of the slice, so lane l's chunk t = l % 4 holds, word by word, its A
 * fragment of the four k16 steps (word kk: codes 0,1 -> a[0] or a[1],
 * codes 2,3 -> a[2] or a[3]). The widening warps write B in the same
 * order, so every product pairs the same coordinate of both points and
 * the dot product is unchanged (its summation order is the tensor core's
 * business; tests/gpu/g_ue8.c's bands allow any order). */
#ifndef TCJ_FASTED_WG_UE8_CUH
#define TCJ_FASTED_WG_UE8_CUH

#include "fasted_wgmma.cuh"
#include "ptx.cuh"

/* Registers of the producer warpgroup (the consumers get what is left of
 * the 64K: 128 x 56 + 256 x 224 = 64512) and loads in flight per widening
 * thread (6 x 4 registers). */
#define UE8_WG_PRODUCER_REGS 56
#define UE8_WG_CONSUMER_REGS 224
#define UE8_WG_WIDEN_BATCH 6

/* The kernel's dynamic shared memory for format F from its 1024-aligned
 * base (the swizzle atoms' alignment): F::wg_stages FP16 B slices (256
 * rows of 128 bytes, wgmma's operand), then F::wg_stages8 slices of their
 * codes (256 rows of 64 bytes, as the copy engine brings them), then the
 * histogram. Addressed in the shared window (uint32_t, TMA and the
 * descriptors) and generically (the widening warps). */
template <class F> struct ue8_wg_smem {
    static constexpr int STAGES = F::wg_stages, STAGES8 = F::wg_stages8;
    uint16_t b16[STAGES][FASTED_WG_BN * WG_BK];
    uint8_t b8[STAGES8][FASTED_WG_BN * WG_BK];
    static constexpr int B16_BYTES = FASTED_WG_BN * WG_BK * 2;
    static constexpr int B8_BYTES = FASTED_WG_BN * WG_BK;
    static constexpr int B8_OFF = STAGES * B16_BYTES; /* offsetof(b8) */
    static constexpr size_t BYTES = (size_t)STAGES * B16_BYTES + (size_t)STAGES8 * B8_BYTES;
};
/* The kernel's dynamic shared memory without the histogram. */
#define UE8_WG_SMEM_OF(F) (ue8_wg_smem<F>::BYTES + sizeof(fasted_wg_slots) + 1024)

/* A widening thread's share (t = 0..95) of one B slice: 256 rows of 64
 * codes at src (row-major, as the copy engine lays them) to FP16 at dst
 * in the permuted k order above and the 128-byte swizzle (16-byte chunk c
 * of row r at chunk c ^ (r & 7)). Thread t reads chunk t % 4 of rows
 * t / 4 + 24 i (i = 0..10, rows < 256): one 16-byte load, whose word kk
 * becomes the 4-byte words t % 4 of FP16 chunks 2 kk (codes 0,1) and
 * 2 kk + 1 (codes 2,3). 24 i is 0 mod 8, so every row of a thread has the
 * same swizzle; a warp's stores of one word cover 8 rows x 4 words in 32
 * distinct banks. The loads go out UE8_WG_WIDEN_BATCH at a time: one at a
 * time, each waited for before its stores (what the compiler makes of a
 * plain loop at the producers' register budget), the widening warps were
 * the kernel's bottleneck (ncu: their time went to shared-memory load
 * latency, the consumers' to waiting for widened slices). */
template <class F>
__device__ __forceinline__ void ue8_wg_widen_b(const unsigned char *src, unsigned char *dst, int t)
{
    constexpr int N = 11, NB = UE8_WG_WIDEN_BATCH;
    static_assert(FASTED_WG_BN * 4 <= N * WG_WIDENERS && FASTED_WG_BN * 4 > (N - 1) * WG_WIDENERS &&
                      WG_WIDENERS % 32 == 0,
                  "11 rows a thread, the last one for some threads only");
    const int r0 = t >> 2, j = t & 3, sw = r0 & 7;
    const bool has_last = r0 + 24 * (N - 1) < FASTED_WG_BN;
    const unsigned char *s = src + r0 * 64 + j * 16;
    unsigned char *d = dst + r0 * 128 + j * 4;
#pragma unroll
    for (int i0 = 0; i0 < N; i0 += NB) {
        uint4 v[NB];
#pragma unroll
        for (int b = 0; b < NB; b++)
            if (i0 + b < N - 1 || (i0 + b == N - 1 && has_last))
                v[b] = *(const uint4 *)(s + (i0 + b) * 24 * 64);
#pragma unroll
        for (int b = 0; b < NB; b++) {
            if (!(i0 + b < N - 1 || (i0 + b == N - 1 && has_last)))
                continue;
            const uint32_t w[4] = {v[b].x, v[b].y, v[b].z, v[b].w};
            unsigned char *dr = d + (i0 + b) * 24 * 128;
#pragma unroll
            for (int kk = 0; kk < 4; kk++) {
                uint32_t lo, hi;
                F::widen4(w[kk], lo, hi);
                *(uint32_t *)(dr + (((2 * kk) ^ sw) << 4)) = lo;
                *(uint32_t *)(dr + (((2 * kk + 1) ^ sw) << 4)) = hi;
            }
        }
    }
}

/* Step kk (0..3) of a 64-value k slice: the A codes' word kk (w0: row g
 * of the warp's 16, w8: row g + 8) widened into the step's fragment and
 * multiplied with the FP16 B slice at descriptor db, one wgmma group.
 * The widening comes before wgmma.fence: an instruction that writes a
 * wgmma's A registers inside its group serializes the wgmmas (ptxas
 * C7513), and so does a group of a whole slice (four fragments in flight
 * and four being widened do not fit beside the accumulators: C7513 too). */
template <class F>
__device__ __forceinline__ void ue8_wg_step(float (&d)[128], uint32_t w0, uint32_t w8, uint64_t db)
{
    uint32_t a[4];
    F::widen4(w0, a[0], a[2]);
    F::widen4(w8, a[1], a[3]);
    wgmma_fence();
    wgmma_mma_async_m64n256k16_f32_f16_rs(d, a, db, 1);
    wgmma_commit_group();
}

template <class F, bool PAIRS>
__global__ void __launch_bounds__(FASTED_WG_THREADS, 1)
    fasted_wg_ue8_kernel(const __grid_constant__ CUtensorMap tmap, const fasted_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    typedef ue8_wg_smem<F> L;
    static_assert(sizeof(L) == L::BYTES, "the layout has no padding");
    constexpr int STAGES = L::STAGES, S8 = L::STAGES8;
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    __shared__ __align__(8) uint64_t full_bar[STAGES], empty_bar[STAGES];
    __shared__ __align__(8) uint64_t full8_bar[S8], empty8_bar[S8];
    __shared__ int s_end8[S8];

    const uint32_t raw = smem_u32(wg_smem);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    unsigned char *ring = wg_smem + (sbase - raw);
    const uint32_t sbase8 = sbase + L::B8_OFF;
    fasted_wg_slots &S = *(fasted_wg_slots *)(ring + L::BYTES);
    float *s_edges = (float *)(&S + 1);
    unsigned *s_hist = (unsigned *)(s_edges + p.nbins + 1);
    const unsigned long long items = p.nredo_in + (p.t_end - p.t_base);
    /* k slices of 64 codes: a row of p.ld 16-bit units holds 2 p.ld. */
    const int KT = p.ld / (WG_BK / 2);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbarrier_init(smem_u32(&full_bar[s]), WG_WIDENERS);
            mbarrier_init(smem_u32(&empty_bar[s]), WG_CONSUMERS);
        }
        for (int s = 0; s < S8; s++) {
            mbarrier_init(smem_u32(&full8_bar[s]), 1);
            mbarrier_init(smem_u32(&empty8_bar[s]), WG_WIDENERS);
        }
        fasted_wg_slots_init(S);
        fence_mbarrier_init_release_cluster();
    }
    __syncthreads();

    if (threadIdx.x < 128) {
        /* Producer. */
        setmaxnreg_dec<UE8_WG_PRODUCER_REGS>();
        if (threadIdx.x >= 32) {
            /* Widening warps: each staged B slice into the next FP16 stage,
             * in the order the copies were issued, until the end mark. */
            const int t = threadIdx.x - 32;
            for (unsigned long long kiter = 0;; kiter++) {
                const int s8 = (int)(kiter % S8);
                const int s = (int)(kiter % STAGES);
                while (!mbarrier_try_wait_parity(smem_u32(&full8_bar[s8]),
                                                 (unsigned)(kiter / S8) & 1u))
                    ;
                if (s_end8[s8])
                    break;
                while (!mbarrier_try_wait_parity(smem_u32(&empty_bar[s]),
                                                 ((unsigned)(kiter / STAGES) & 1u) ^ 1u))
                    ;
                ue8_wg_widen_b<F>(ring + L::B8_OFF + s8 * L::B8_BYTES, ring + s * L::B16_BYTES, t);
                /* The FP16 writes (generic proxy) before wgmma (async
                 * proxy) reads them. */
                fence_proxy_async_shared_cta();
                mbarrier_arrive(smem_u32(&full_bar[s]));
                mbarrier_arrive(smem_u32(&empty8_bar[s8]));
            }
            return;
        }
        if (threadIdx.x != 0)
            return;
        /* Thread 0: takes work items and copies each tile's B codes. */
        unsigned long long kiter = 0;
        for (unsigned it = 0;; it++) {
            unsigned row0, col0;
            const int state = fasted_wg_publish(S, p, items, it, row0, col0);
            if (state == FASTED_WG_END) {
                /* The end mark, in the next staging slot. */
                const int s8 = (int)(kiter % S8);
                while (!mbarrier_try_wait_parity(smem_u32(&empty8_bar[s8]),
                                                 ((unsigned)(kiter / S8) & 1u) ^ 1u))
                    ;
                s_end8[s8] = 1;
                mbarrier_arrive(smem_u32(&full8_bar[s8]));
                break;
            }
            if (state != FASTED_WG_TILE)
                continue;
            for (int kt = 0; kt < KT; kt++, kiter++) {
                const int s8 = (int)(kiter % S8);
                const unsigned ph = (unsigned)(kiter / S8) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&empty8_bar[s8]), ph ^ 1))
                    ;
                const uint32_t fb = smem_u32(&full8_bar[s8]);
                const uint32_t sb = sbase8 + s8 * L::B8_BYTES;
                const int kx = kt * WG_BK; /* in bytes: 64 codes a slice */
                s_end8[s8] = 0;
                mbarrier_arrive_expect_tx(fb, L::B8_BYTES);
                cp_async_bulk_tensor_2d_global_to_shared(sb, &tmap, fb, kx, (int)col0);
                cp_async_bulk_tensor_2d_global_to_shared(sb + FASTED_WG_BM * 64, &tmap, fb, kx,
                                                         (int)col0 + FASTED_WG_BM);
            }
        }
        return;
    }

    /* Consumers. */
    setmaxnreg_inc<UE8_WG_CONSUMER_REGS>();
    const int ct = threadIdx.x - 128; /* 0..255 */
    const int cw = ct >> 7;           /* consumer warpgroup: rows 64*cw.. of the tile */
    const int warp = ct >> 5;
    const int lane = ct & 31;
    if (p.mode == KJOIN_HIST) {
        for (int k = ct; k <= p.nbins; k += WG_CONSUMERS) {
            s_edges[k] = p.edges[k];
            s_hist[k] = 0;
        }
    }
    bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);

    /* This thread's A rows: g = lane / 4 of its warp's 16 and g + 8; its
     * 16 codes of a slice start at byte 16 (lane % 4). Rows below n_alloc
     * (the tile's 128 rows are allocated: fasted.cu pads n). */
    const size_t rowb = (size_t)p.ld * 2;
    const unsigned arow = cw * 64 + wgmma_c_row0(warp & 3) + (lane >> 2);
    typedef typename F::acc A;
    A acc[1][FASTED_WG_BN / 8][4];
    A(&d)[128] = reinterpret_cast<A(&)[128]>(acc);
    unsigned long long kiter = 0;
    for (unsigned it = 0;; it++) {
        const int slot = it % FASTED_WG_SLOTS;
        unsigned row0, col0;
        const int state = fasted_wg_next(S, it, row0, col0);
        if (state == FASTED_WG_END)
            break;
        if (state == FASTED_WG_TILE) {
            const unsigned char *a0 =
                (const unsigned char *)p.X + (row0 + arow) * rowb + (lane & 3) * 16;
            const unsigned char *a8 = a0 + 8 * rowb;
#pragma unroll
            for (int k = 0; k < 128; k++) {
                d[k] = 0;
                reg_fence(d[k]);
            }
            /* The codes of slice kt are in c0/c8[kt & 1], loaded when
             * slice kt - 2 was widened. One k16 group in flight: a stage is
             * released once the first group of the next slice has been
             * issued and the last one reading it is done. */
            uint4 c0[2], c8[2];
            c0[0] = __ldg((const uint4 *)a0);
            c8[0] = __ldg((const uint4 *)a8);
            if (KT > 1) {
                c0[1] = __ldg((const uint4 *)(a0 + 64));
                c8[1] = __ldg((const uint4 *)(a8 + 64));
            }
            auto slice = [&](int kt, uint4 &n0, uint4 &n8) {
                const int s = (int)(kiter % STAGES);
                const unsigned ph = (unsigned)(kiter / STAGES) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&full_bar[s]), ph))
                    ;
                const uint64_t db = fasted_wg_desc(sbase + s * L::B16_BYTES);
                const uint32_t w0[4] = {n0.x, n0.y, n0.z, n0.w}, w8[4] = {n8.x, n8.y, n8.z, n8.w};
#pragma unroll
                for (int kk = 0; kk < 4; kk++) {
                    ue8_wg_step<F>(d, w0[kk], w8[kk], db + 2 * kk);
                    wgmma_wait_group<1>();
#pragma unroll
                    for (int k = 0; k < 128; k++)
                        reg_fence(d[k]);
                    /* The previous slice's last step is done: its stage
                     * can be refilled. */
                    if (kk == 0 && kt > 0)
                        mbarrier_arrive(smem_u32(&empty_bar[(kiter - 1) % STAGES]));
                }
                /* The codes are widened: their registers take slice kt + 2. */
                if (kt + 2 < KT) {
                    n0 = __ldg((const uint4 *)(a0 + (kt + 2) * 64));
                    n8 = __ldg((const uint4 *)(a8 + (kt + 2) * 64));
                }
                kiter++;
            };
            for (int kt = 0; kt < KT; kt += 2) {
                slice(kt, c0[0], c8[0]);
                if (kt + 1 < KT)
                    slice(kt + 1, c0[1], c8[1]);
            }
            fasted_wg_finish_tile<F, PAIRS, STAGES>(p, acc, empty_bar, kiter, row0, col0, cw, warp,
                                                    S.mask[slot], &S.fail[slot], s_edges, s_hist,
                                                    S.sj[slot]);
        }
        fasted_wg_slot_done<PAIRS>(p, ct, S.tile[slot], &S.fail[slot], &S.empty[slot]);
    }
    fasted_wg_hist_flush(p, ct, s_hist);
#endif
}

#endif
