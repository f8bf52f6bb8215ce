/* The FASTED kernel on Hopper's own path (sm_90a): the same scheduler and
 * epilogue as the mma.sync kernel, with the block tile's products on
 * wgmma.mma_async (m64n256, FP32 accumulate, both operands K-major in
 * shared memory with the 128-byte swizzle) and the tiles brought in by the
 * bulk tensor copy engine (TMA). Templated on the number format F (its
 * wgmma instruction); instantiated by the format instance files.
 *
 * One block of three warpgroups per SM, persistent over the work queue:
 * warpgroup 0 is the producer (one thread takes work items and issues the
 * copies of each 128-byte k slice into a 4-stage ring guarded by
 * mbarriers); warpgroups 1 and 2 are consumers, each computing 64 rows x
 * 256 columns of the 128x256 block tile and running the epilogue on its
 * accumulators (per warp, MT = 1 x NT = 32 m16n8 fragments). A 2-deep ring
 * of work-item slots lets the producer fetch the next tile while the
 * consumers finish the epilogue of this one, and the consumers take turns
 * issuing their products where a tile fits the ring (ping-pong: one's
 * epilogue under the other's wgmma; the kernel's `turns`). Symmetric runs
 * walk 256x256 super tiles of the upper triangle (the square grid
 * fasted_tile_of expects), two 128-row block tiles each.
 *
 * Rows are addressed in 16-bit units and each wgmma consumes 32 bytes of k
 * whatever the format, so the copies, descriptors and ring are the same
 * for every format. The widening formats (F::widen: 8-bit codes multiplied
 * as FP16) have a kernel of their own, kernels/fasted_wg_ue8.cuh, which
 * shares this file's scheduler, tiling and descriptors. */
#ifndef TCJ_FASTED_WGMMA_CUH
#define TCJ_FASTED_WGMMA_CUH

#include <cuda.h> /* CUtensorMap types only: the driver entry point is looked up at run time */
#include <cuda_runtime.h>

#include "fasted_epilogue.cuh"
#include "fasted_format.cuh"
#include "fasted_int.cuh"
#include "fasted_sched.cuh"
#include "ptx.cuh"

#define FASTED_WG_BM 128 /* block tile rows (query points): 2 consumer warpgroups of 64 */
#define FASTED_WG_BN 256 /* block tile columns (candidates): one m64n256 per 32-byte k step */
#define FASTED_WG_THREADS 384
#define WG_BK 64           /* 16-bit units per k slice: 128-byte rows, the swizzle's width */
#define WG_STAGES 4        /* shared-memory stages */
#define WG_CONSUMERS 256   /* threads of the two consumer warpgroups */
#define WG_BAR_CONSUMERS 1 /* named barrier id (0 is __syncthreads) */
#define WG_BAR_TURN 2      /* + consumer warpgroup: its turn to issue (promotion) */

/* The wgmma kernel's dynamic shared memory from its 1024-aligned base (the
 * swizzle atoms' alignment): WG_STAGES stages of one k slice (128 bytes a
 * row) of the block's A rows (consumer warpgroup cw's 64 at a + cw *
 * A_BYTES / 2) and of its B columns, then the histogram (HIST: nbins + 1
 * edges, then the counters). Its size plus the alignment slack is the
 * launch's dynamic shared memory (FASTED_WG_SMEM); the kernel addresses it
 * in the shared window (uint32_t), as TMA and the descriptors take it. */
struct fasted_wg_smem {
    struct stage {
        uint16_t a[FASTED_WG_BM * WG_BK];
        uint16_t b[FASTED_WG_BN * WG_BK];
    } ring[WG_STAGES];
    static constexpr int A_BYTES = (int)sizeof(((stage *)0)->a);
    static constexpr int STAGE_BYTES = (int)sizeof(stage);
    static constexpr int RING_BYTES = WG_STAGES * STAGE_BYTES;
    /* Stage s's A rows of consumer warpgroup cw, its B columns. */
    __device__ static uint32_t a(uint32_t base, int s, int cw)
    {
        return base + s * STAGE_BYTES + cw * (A_BYTES / 2);
    }
    __device__ static uint32_t b(uint32_t base, int s)
    {
        return base + s * STAGE_BYTES + A_BYTES;
    }
};

/* The work items' slots, shared by the wgmma kernels (this one and
 * fasted_wg_ue8.cuh), in dynamic shared memory after the ring. Thread 0
 * of the producer takes an item (fasted_take_item), works out its block
 * tile once for the block (fasted_wg_tile: the triangle's index, the
 * grouping's divisions) and stages the s_j of the tile's columns for the
 * epilogue (epi_sj_staged), with one bulk copy that lands before the slot
 * is full; the consumer warps read the slot and compute nothing for it. A
 * slot is empty again once every consumer thread is done with it
 * (fasted_wg_slot_done). Four slots let the producer take an item (a
 * global atomic) and stage its s_j while the consumers are two tiles or
 * more behind; with two it could take an item only once the tile two back
 * was done, which at d = 128 left the consumers waiting on the loads that
 * follow the take. */
#define FASTED_WG_SLOTS 4
enum { FASTED_WG_END = 0, FASTED_WG_TILE = 1, FASTED_WG_NONE = 2 };
struct fasted_wg_slots {
    float sj[FASTED_WG_SLOTS][FASTED_WG_BN]; /* the tile's s_j, columns col0.. (16-byte aligned) */
    uint64_t full[FASTED_WG_SLOTS], empty[FASTED_WG_SLOTS];
    unsigned long long tile[FASTED_WG_SLOTS];
    unsigned mask[FASTED_WG_SLOTS], fail[FASTED_WG_SLOTS];
    unsigned row0[FASTED_WG_SLOTS], col0[FASTED_WG_SLOTS];
    int state[FASTED_WG_SLOTS]; /* FASTED_WG_END: no more items; _TILE: a block tile; _NONE: an
                                   item without one */
};

/* Dynamic shared memory of the kernel without the histogram: the ring, the
 * slots and 1024 bytes to align the ring, as the swizzle atoms must be. */
#define FASTED_WG_SMEM (sizeof(fasted_wg_smem) + sizeof(fasted_wg_slots) + 1024)

/* The widening formats' kernel (kernels/fasted_wg_ue8.cuh): producer
 * warps 1-3 widen the candidates' codes. */
#define WG_WIDENERS 96

/* 1 when the wgmma kernel can run on device dev: compute capability
 * exactly 9.0, the sm_90a code is what the driver loaded, and the driver
 * exports cuTensorMapEncodeTiled. Probed once per device. */
int fasted_wg_usable(int dev);

/* Set p->T and p->U for the wgmma tiling: symmetric runs walk 256x256
 * super tiles of the upper triangle, two 128-row block tiles each. */
void fasted_wg_grid(fasted_params *p, size_t nq, size_t n);

/* Work items for the block-tile grid of p (p->T, p->U set by
 * fasted_wg_grid). */
unsigned long long fasted_wg_items(const fasted_params *p);

/* One persistent launch of func (a fasted_wg_kernel instance) over p's
 * work items; X has n_alloc rows of p->ld 16-bit units (widen: of 8-bit
 * codes, described to the copy engine as bytes). Returns the launch's CUDA
 * status. The caller has set func's dynamic shared memory
 * (cudaFuncSetAttribute) for smem. */
cudaError_t fasted_wg_launch(const void *func, const fasted_params *p, size_t n_alloc, int widen,
                             int grid, size_t smem, cudaStream_t st);

/* Block tile of work item t: origin row0 (query row) and col0. */
__device__ __forceinline__ bool fasted_wg_tile(const fasted_params &p, unsigned long long t,
                                               unsigned &row0, unsigned &col0)
{
    unsigned bi, bj;
    if (fasted_tri(p)) {
        if (!fasted_tile_of(p, t >> 1, bi, bj))
            return false;
        row0 = bi * 2 * FASTED_WG_BM + (unsigned)(t & 1) * FASTED_WG_BM;
        col0 = bj * FASTED_WG_BN;
        return row0 < p.q1;
    }
    if (!fasted_tile_of(p, t, bi, bj))
        return false;
    row0 = p.q0 + (p.rowmap ? p.rowmap[bi] : bi) * FASTED_WG_BM;
    col0 = p.c0 + bj * FASTED_WG_BN * (1 + p.cskip);
    return true;
}

/* Shared-memory matrix descriptor (PTX ISA, wgmma "Matrix Descriptor") of
 * a K-major tile whose rows are 128 bytes, 128-byte swizzle, 8-row atoms
 * 1024 bytes apart (stride byte offset), base 1024-aligned. Advancing the
 * start address by 32 bytes moves one k step along the row. */
__device__ __forceinline__ uint64_t fasted_wg_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3ffffu) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

/* Thread 0: the slots' barriers (full: the producer's one arrival and the
 * s_j copy's bytes; empty: every consumer thread). */
__device__ __forceinline__ void fasted_wg_slots_init(fasted_wg_slots &S)
{
    for (int k = 0; k < FASTED_WG_SLOTS; k++) {
        mbarrier_init(smem_u32(&S.full[k]), 1);
        mbarrier_init(smem_u32(&S.empty[k]), WG_CONSUMERS);
    }
}

/* The producer's thread: fill slot it % FASTED_WG_SLOTS with the next
 * work item once the consumers are done with its last one. Returns the
 * item's state; on FASTED_WG_TILE, row0 and col0 are its block tile's
 * origin. */
__device__ __forceinline__ int fasted_wg_publish(fasted_wg_slots &S, const fasted_params &p,
                                                 unsigned long long items, unsigned it,
                                                 unsigned &row0, unsigned &col0)
{
    const int slot = it % FASTED_WG_SLOTS;
    const unsigned ph = (it / FASTED_WG_SLOTS) & 1u;
    while (!mbarrier_try_wait_parity(smem_u32(&S.empty[slot]), ph ^ 1))
        ;
    unsigned long long tile;
    unsigned mask;
    int state = fasted_take_item(p, items, 0xffu, tile, mask);
    row0 = col0 = 0;
    if (state && !fasted_wg_tile(p, tile, row0, col0))
        state = FASTED_WG_NONE;
    S.tile[slot] = tile;
    S.mask[slot] = mask;
    S.fail[slot] = 0;
    S.state[slot] = state;
    S.row0[slot] = row0;
    S.col0[slot] = col0;
    const uint32_t fb = smem_u32(&S.full[slot]);
    const float *src = p.s + col0; /* p.s holds every padded column */
    if (state == FASTED_WG_TILE && ((uintptr_t)src & 15) == 0) {
        mbarrier_arrive_expect_tx(fb, sizeof(S.sj[0]));
        cp_async_bulk_global_to_shared(smem_u32(S.sj[slot]), src, sizeof(S.sj[0]), fb);
        return state;
    }
    if (state == FASTED_WG_TILE) {
        /* A column origin off the copy's 16-byte grain (no layout the
         * program makes has one): the thread copies them, and orders its
         * writes before the copy engine's next ones to the slot. */
        for (int c = 0; c < FASTED_WG_BN; c++)
            S.sj[slot][c] = __ldg(src + c);
        fence_proxy_async_shared_cta();
    }
    mbarrier_arrive(fb);
    return state;
}

/* A consumer thread: wait for slot it % FASTED_WG_SLOTS and read its
 * item. Returns its state; on FASTED_WG_TILE, row0 and col0 are its block
 * tile's origin. */
__device__ __forceinline__ int fasted_wg_next(fasted_wg_slots &S, unsigned it, unsigned &row0,
                                              unsigned &col0)
{
    const int slot = it % FASTED_WG_SLOTS;
    while (!mbarrier_try_wait_parity(smem_u32(&S.full[slot]), (it / FASTED_WG_SLOTS) & 1u))
        ;
    row0 = S.row0[slot];
    col0 = S.col0[slot];
    return S.state[slot];
}

/* FP32 promotion (formats with F::promote = P, 1 or 2): a chunk of n <= P
 * k slices (WG_BK 16-bit units each, 128 FP8 values) of a consumer
 * warpgroup's 64x256 tile, summed in the tensor core and then added into
 * d in FP32. Hopper's FP8 wgmma keeps only ~13 significand bits of its
 * running sum, so the span it sums is bounded at P slices; FP32 adds
 * (round to nearest) carry the sum across chunks, as cuBLASLt without
 * fast accumulation and DeepGEMM do. A second 128-register accumulator
 * does not fit beside d (232 registers), so the two 128-column halves
 * take turns in one m64n128 accumulator t (64 registers, d's column
 * blocks 16h..16h+15 in the same fragment layout). Waiting for each half
 * empties this warpgroup's wgmma pipe; the other consumer warpgroup's
 * wgmmas keep the tensor cores busy meanwhile, if they were issued after
 * this one's: left alone, both warpgroups issue at once, their halves
 * finish together and both pipes drain at once. With fasted_turns<F> the two
 * take turns (ping-pong): warpgroup cw issues a half only after the other
 * has issued its previous one (named barriers WG_BAR_TURN + cw), and its
 * wait and adds overlap the other's products. Slice i of the chunk is in
 * the ring stage whose A (this warpgroup's rows) starts at sa[i] and B at
 * sb[i]. */
template <class F>
__device__ __forceinline__ void
    fasted_wg_promote(typename F::acc (&d)[128], const uint32_t (&sa)[F::promote ? F::promote : 1],
                      const uint32_t (&sb)[F::promote ? F::promote : 1], int n, int cw)
{
    if constexpr (F::promote) {
        float t[64];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            /* This warpgroup's turn: the other has issued its last half. */
            if (fasted_turns<F>::value)
                bar_sync(WG_BAR_TURN + cw, WG_CONSUMERS);
            /* The adds below read t: they finish before wgmma rewrites it. */
            wgmma_fence();
#pragma unroll
            for (int i = 0; i < F::promote; i++) {
                if (i < n) {
                    const uint64_t da = fasted_wg_desc(sa[i]);
                    const uint64_t db = fasted_wg_desc(sb[i] + h * (FASTED_WG_BN / 2 * 128));
#pragma unroll
                    for (int kk = 0; kk < WG_BK / 16; kk++)
                        F::wgmma_half(t, da + 2 * kk, db + 2 * kk,
                                      i + kk > 0); /* the chunk's first step starts t at 0 */
                }
            }
            wgmma_commit_group();
            if (fasted_turns<F>::value)
                bar_arrive(WG_BAR_TURN + (cw ^ 1), WG_CONSUMERS); /* the other's turn */
            wgmma_wait_group<0>();
#pragma unroll
            for (int k = 0; k < 64; k++) {
                reg_fence(t[k]);
                d[64 * h + k] = __fadd_rn(d[64 * h + k], t[k]);
            }
        }
    }
}

/* A consumer warpgroup's end of a block tile, shared with the widening
 * formats' kernel (fasted_wg_ue8.cuh): wait for its last wgmma group,
 * release the last stage, and run the epilogue on the accumulators of
 * rows row0 + 64 cw.. (warp: the consumer warp 0..7); STAGES: the
 * ring's stages. */
template <class F, bool PAIRS, int STAGES>
__device__ __forceinline__ void
fasted_wg_finish_tile(const fasted_params &p, typename F::acc (&acc)[1][FASTED_WG_BN / 8][4],
                      uint64_t *empty_bar, unsigned long long kiter, unsigned row0, unsigned col0,
                      int cw, int warp, unsigned mask, unsigned *fail, float *s_edges,
                      unsigned *s_hist, const float *sjs)
{
    typename F::acc(&d)[128] = reinterpret_cast<typename F::acc(&)[128]>(acc);
    fasted_epi w = {row0 + cw * 64 + wgmma_c_row0(warp & 3),
                    col0,
                    fasted_tri(p) && col0 < row0 + FASTED_WG_BM,
                    warp,
                    mask,
                    fail,
                    s_edges,
                    s_hist,
                    (col0 - p.c0) / (FASTED_WG_BN * (1 + p.cskip)),
                    {-1.0f, -1.0f},
                    {p.eps2, p.eps2},
                    sjs};
    /* Before the wait: its loads overlap the last wgmma group. */
    fasted_band_rows<F, PAIRS>(p, w);
    wgmma_wait_group<0>();
#pragma unroll
    for (int k = 0; k < 128; k++)
        reg_fence(d[k]);
    mbarrier_arrive(smem_u32(&empty_bar[(kiter - 1) % STAGES]));
    fasted_epilogue<F, 1, FASTED_WG_BN / 8, PAIRS>(p, acc, w);
}

/* A consumer warp is done with work slot `slot`. PAIRS: the last of the
 * eight warps hands back the tile with the bits of the warps whose pairs
 * did not fit: each warp adds 1 << 16 to the slot's word after its lanes
 * set their bits there (fasted_reserve_pairs, ordered by __syncwarp), so
 * the add that returns a count of 7 returns every warp's bits: no warp
 * waits for another (a barrier here held every warp of the tile to the
 * slowest: docs/ACCURACY.md, "The pass's own cost"). COUNT, PERPOINT and
 * HIST have nothing to hand back. The k-distance's passes keep the
 * barrier, which measured faster there (docs/BENCHMARKS.md). The
 * __syncwarp in every mode reconverges the warp before the next tile's
 * wgmma: without it ptxas serializes the promoting kernels' wgmma
 * (advisory C7520). Every consumer thread then arrives itself, so each
 * one's reads of the slot are released to the producer that rewrites it. */
template <bool PAIRS>
__device__ __forceinline__ void fasted_wg_slot_done(const fasted_params &p, int ct,
                                                    unsigned long long tile, unsigned *fail,
                                                    uint64_t *tempty)
{
    __syncwarp();
    if constexpr (PAIRS) {
        if ((ct & 31) == 0) {
            const unsigned old = atomicAdd(fail, 1u << 16);
            if (old >> 16 == WG_CONSUMERS / 32 - 1)
                fasted_hand_back(p, tile, old & 0xffffu);
        }
    } else if (p.mode >= FASTED_KD_MIN) {
        bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);
    }
    mbarrier_arrive(smem_u32(tempty));
}

/* The block's histogram into the run's, once the consumers are done. */
__device__ __forceinline__ void fasted_wg_hist_flush(const fasted_params &p, int ct,
                                                     const unsigned *s_hist)
{
    if (p.mode != KJOIN_HIST)
        return;
    bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);
    for (int k = ct; k <= p.nbins; k += WG_CONSUMERS)
        if (s_hist[k])
            atomicAdd(&p.hist[k], (unsigned long long)s_hist[k]);
}

template <class F, bool PAIRS>
__global__ void __launch_bounds__(FASTED_WG_THREADS, 1)
    fasted_wg_kernel(const __grid_constant__ CUtensorMap tmap, const fasted_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    __shared__ __align__(8) uint64_t full_bar[WG_STAGES], empty_bar[WG_STAGES];

    /* Stages start on a 1024-byte boundary, as the swizzle atoms must. */
    const uint32_t raw = smem_u32(wg_smem);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    static_assert(!F::widen, "the widening formats run fasted_wg_ue8_kernel");
    constexpr int STAGES = WG_STAGES;
    typedef fasted_wg_smem L;
    fasted_wg_slots &S = *(fasted_wg_slots *)(wg_smem + (sbase - raw) + (size_t)L::RING_BYTES);
    float *s_edges = (float *)(&S + 1);
    unsigned *s_hist = (unsigned *)(s_edges + p.nbins + 1);
    const unsigned long long items = p.nredo_in + (p.t_end - p.t_base);
    const int KT = p.ld / WG_BK; /* k slices of 128 bytes */

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            mbarrier_init(smem_u32(&full_bar[s]), 1);
            mbarrier_init(smem_u32(&empty_bar[s]), WG_CONSUMERS);
        }
        fasted_wg_slots_init(S);
        fence_mbarrier_init_release_cluster();
    }
    __syncthreads();

    if (threadIdx.x < 128) {
        /* Producer. */
        setmaxnreg_dec<40>();
        if (threadIdx.x != 0)
            return;
        unsigned long long kiter = 0;
        for (unsigned it = 0;; it++) {
            unsigned row0, col0;
            const int state = fasted_wg_publish(S, p, items, it, row0, col0);
            if (state == FASTED_WG_END)
                break;
            if (state != FASTED_WG_TILE)
                continue;
            for (int kt = 0; kt < KT; kt++, kiter++) {
                const int s = (int)(kiter % WG_STAGES);
                const unsigned ph = (unsigned)(kiter / WG_STAGES) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&empty_bar[s]), ph ^ 1))
                    ;
                const uint32_t fb = smem_u32(&full_bar[s]);
                const uint32_t sa = L::a(sbase, s, 0), sb = sa + L::A_BYTES;
                mbarrier_arrive_expect_tx(fb, L::STAGE_BYTES);
                /* A's 128 rows, then B's 256 as two boxes of 128 */
                cp_async_bulk_tensor_2d_global_to_shared(sa, &tmap, fb, kt * WG_BK, (int)row0);
                cp_async_bulk_tensor_2d_global_to_shared(sb, &tmap, fb, kt * WG_BK, (int)col0);
                cp_async_bulk_tensor_2d_global_to_shared(sb + L::A_BYTES, &tmap, fb, kt * WG_BK,
                                                         (int)col0 + FASTED_WG_BM);
            }
        }
        return;
    }

    /* Consumers. */
    setmaxnreg_inc<232>();
    const int ct = threadIdx.x - 128; /* 0..255 */
    const int cw = ct >> 7;           /* consumer warpgroup: rows 64*cw.. of the tile */
    const int warp = ct >> 5;
    if (p.mode == KJOIN_HIST) {
        for (int k = ct; k <= p.nbins; k += WG_CONSUMERS) {
            s_edges[k] = p.edges[k];
            s_hist[k] = 0;
        }
    }
    bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);
    /* Turns (ping-pong): the two consumer warpgroups issue their products
     * one after the other, warpgroup 0 first, so one's epilogue (or
     * promotion's adds) runs under the other's wgmma. Promotion takes
     * turns a half chunk at a time where fasted_turns says so
     * (fasted_wg_promote); the other formats a whole tile at a time, in
     * the join's modes, where a tile's k slices fit the ring (KT <=
     * STAGES: warpgroup 0 issues all of a tile before warpgroup 1 frees
     * its first stage; docs/BENCHMARKS.md has what it saves); exact's
     * band epilogue and the k-distance's passes, whose tiles end at a
     * barrier, keep issuing at once. Each warpgroup issues as many turns as the other (the same
     * tiles, the same slices), so after the loop one turn of warpgroup 0
     * is left pending: it is taken there, so no barrier is left half
     * arrived at exit. */
    const bool turns = F::promote
                           ? fasted_turns<F>::value
                           : !fasted_band<F>::value && p.mode < FASTED_KD_MIN && KT <= STAGES;
    if (turns && cw == 1)
        bar_arrive(WG_BAR_TURN + 0, WG_CONSUMERS);

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
#pragma unroll
            for (int k = 0; k < 128; k++) {
                d[k] = 0;
                reg_fence(d[k]);
            }
            /* Keep one wgmma group in flight: a stage is released once the
             * group after it has been issued and the group reading it is
             * done. */
            for (int kt = 0; kt < KT; kt++, kiter++) {
                const int s = (int)(kiter % STAGES);
                const unsigned ph = (unsigned)(kiter / STAGES) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&full_bar[s]), ph))
                    ;
                const uint32_t sa = L::a(sbase, s, cw), sb = L::b(sbase, s);
                const uint64_t da = fasted_wg_desc(sa), db = fasted_wg_desc(sb);
                if (F::promote) {
                    /* A chunk ends at every P-th slice and at the last; its
                     * earlier slice (P = 2) is the stage before this one,
                     * released only by this iteration's release below. */
                    constexpr int P = F::promote ? F::promote : 1;
                    const int i = kt % P, n = kt == KT - 1 ? i + 1 : P;
                    if (i == n - 1) {
                        uint32_t csa[P], csb[P];
#pragma unroll
                        for (int j = 0; j < P; j++) {
                            const int sj = (int)((kiter + WG_STAGES - i + j) % WG_STAGES);
                            csa[j] = L::a(sbase, sj, cw);
                            csb[j] = L::b(sbase, sj);
                        }
                        fasted_wg_promote<F>(d, csa, csb, n, cw);
                    }
                } else {
                    /* Turns: this warpgroup issues the tile's products once
                     * the other has issued its tile's, and lets the other
                     * go on once its own last slice is issued; the tensor
                     * cores then run one warpgroup's products while the
                     * other runs its epilogue. */
                    if (turns && kt == 0)
                        bar_sync(WG_BAR_TURN + cw, WG_CONSUMERS);
                    wgmma_fence();
#pragma unroll
                    for (int kk = 0; kk < WG_BK / 16; kk++)
                        F::wgmma(d, da + 2 * kk, db + 2 * kk);
                    wgmma_commit_group();
                    if (turns && kt == KT - 1)
                        bar_arrive(WG_BAR_TURN + (cw ^ 1), WG_CONSUMERS);
                    wgmma_wait_group<1>();
                }
#pragma unroll
                for (int k = 0; k < 128; k++)
                    reg_fence(d[k]);
                if (kt > 0)
                    mbarrier_arrive(smem_u32(&empty_bar[(kiter - 1) % STAGES]));
            }
            fasted_wg_finish_tile<F, PAIRS, STAGES>(p, acc, empty_bar, kiter, row0, col0, cw, warp,
                                                    S.mask[slot], &S.fail[slot], s_edges, s_hist,
                                                    S.sj[slot]);
        }
        fasted_wg_slot_done<PAIRS>(p, ct, S.tile[slot], &S.fail[slot], &S.empty[slot]);
    }
    if (turns && cw == 0)
        bar_sync(WG_BAR_TURN + 0, WG_CONSUMERS);
    fasted_wg_hist_flush(p, ct, s_hist);
#endif
}

#endif
