/* FASTED on Hopper's own path (sm_90a): the same join and fused epilogue as
 * fasted_kernel.cuh, with the block tile's products on wgmma.mma_async
 * (m64n256k16, FP16 in, FP32 accumulate, both operands K-major in shared
 * memory with the 128-byte swizzle) instead of mma.sync, and the tiles
 * brought in by the bulk tensor copy engine (TMA) instead of cp.async.
 *
 * One block of three warpgroups per SM, persistent over the same work
 * queue: warpgroup 0 is the producer (one thread takes work items and
 * issues the copies of each 64-wide k slice into a 4-stage ring guarded by
 * mbarriers); warpgroups 1 and 2 are consumers, each computing 64 rows x
 * 256 columns of the 128x256 block tile and running the epilogue on its
 * accumulators. A 2-deep ring of work-item slots lets the producer fetch
 * the next tile while the consumers finish the epilogue of this one.
 *
 * The wgmma accumulator of a warp is the m16n8 layout of mma.sync with 32
 * n8 blocks, so the epilogue is the mma.sync kernel's with MT = 1, NT = 32.
 * Symmetric runs walk 256x256 super tiles of the upper triangle (the square
 * grid fasted_tile_of expects), two 128-row block tiles each; elements on
 * or below the diagonal get their weight per element. */
#include <cuda.h> /* CUtensorMap types only: the driver entry point is looked up at run time */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <string.h>

#include "fasted_kernel.cuh"
#include "fasted_wgmma.cuh"

#define WG_BK 64    /* halves per k slice: 128-byte rows, the swizzle's width */
#define WG_STAGES 4 /* shared-memory stages */
#define WG_A_BYTES (FASTED_WG_BM * WG_BK * 2)
#define WG_B_BYTES (FASTED_WG_BN * WG_BK * 2)
#define WG_STAGE_BYTES (WG_A_BYTES + WG_B_BYTES)
#define WG_CONSUMERS 256   /* threads of the two consumer warpgroups */
#define WG_BAR_CONSUMERS 1 /* named barrier id (0 is __syncthreads) */

/* Block tile of work item t: origin row0 (query row) and col0. */
__device__ __forceinline__ bool fasted_wg_tile(const fasted_params &p, unsigned long long t,
                                               unsigned &row0, unsigned &col0)
{
    unsigned bi, bj;
    if (p.sym) {
        if (!fasted_tile_of(p, t >> 1, bi, bj))
            return false;
        row0 = bi * 2 * FASTED_WG_BM + (unsigned)(t & 1) * FASTED_WG_BM;
        col0 = bj * FASTED_WG_BN;
        return row0 < p.q1;
    }
    if (!fasted_tile_of(p, t, bi, bj))
        return false;
    row0 = p.q0 + bi * FASTED_WG_BM;
    col0 = bj * FASTED_WG_BN;
    return true;
}

/* Shared-memory matrix descriptor (PTX ISA, wgmma "Matrix Descriptor") of
 * a K-major tile whose rows are 128 bytes, 128-byte swizzle, 8-row atoms
 * 1024 bytes apart (stride byte offset), base 1024-aligned. Advancing the
 * start address by 32 bytes moves one k16 step along the row. */
__device__ __forceinline__ uint64_t fasted_wg_desc(uint32_t addr)
{
    return (uint64_t)((addr & 0x3ffffu) >> 4) | (uint64_t)1 << 16 | (uint64_t)(1024 >> 4) << 32 |
           (uint64_t)1 << 62;
}

template <bool PAIRS>
__global__ void __launch_bounds__(FASTED_WG_THREADS, 1)
    fasted_wg_kernel(const __grid_constant__ CUtensorMap tmap, const fasted_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    extern __shared__ __align__(1024) unsigned char wg_smem[];
    __shared__ __align__(8) uint64_t full_bar[WG_STAGES], empty_bar[WG_STAGES];
    __shared__ __align__(8) uint64_t tfull_bar[2], tempty_bar[2];
    __shared__ unsigned long long s_tile[2];
    __shared__ unsigned s_mask[2], s_fail[2];
    __shared__ int s_state[2];

    /* Stages start on a 1024-byte boundary, as the swizzle atoms must. */
    const uint32_t raw = smem_u32(wg_smem);
    const uint32_t sbase = (raw + 1023u) & ~1023u;
    float *s_edges = (float *)(wg_smem + (sbase - raw) + WG_STAGES * WG_STAGE_BYTES);
    unsigned *s_hist = (unsigned *)(s_edges + p.nbins + 1);
    const unsigned long long items = p.nredo_in + (p.t_end - p.t_base);
    const int KT = p.dp / WG_BK;

    if (threadIdx.x == 0) {
        for (int s = 0; s < WG_STAGES; s++) {
            mbarrier_init(smem_u32(&full_bar[s]), 1);
            mbarrier_init(smem_u32(&empty_bar[s]), WG_CONSUMERS);
        }
        for (int k = 0; k < 2; k++) {
            mbarrier_init(smem_u32(&tfull_bar[k]), 1);
            mbarrier_init(smem_u32(&tempty_bar[k]), WG_CONSUMERS);
        }
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
            const int slot = it & 1;
            while (!mbarrier_try_wait_parity(smem_u32(&tempty_bar[slot]), ((it >> 1) & 1) ^ 1))
                ;
            unsigned long long tile;
            unsigned mask;
            const int state = fasted_take_item(p, items, 0xffu, tile, mask);
            s_tile[slot] = tile;
            s_mask[slot] = mask;
            s_state[slot] = state;
            s_fail[slot] = 0;
            mbarrier_arrive(smem_u32(&tfull_bar[slot]));
            if (!state)
                break;
            unsigned row0, col0;
            if (!fasted_wg_tile(p, tile, row0, col0))
                continue;
            for (int kt = 0; kt < KT; kt++, kiter++) {
                const int s = (int)(kiter % WG_STAGES);
                const unsigned ph = (unsigned)(kiter / WG_STAGES) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&empty_bar[s]), ph ^ 1))
                    ;
                const uint32_t fb = smem_u32(&full_bar[s]);
                const uint32_t sa = sbase + s * WG_STAGE_BYTES, sb = sa + WG_A_BYTES;
                mbarrier_arrive_expect_tx(fb, WG_STAGE_BYTES);
                cp_async_bulk_tensor_2d_global_to_shared(sa, &tmap, fb, kt * WG_BK, (int)row0);
                cp_async_bulk_tensor_2d_global_to_shared(sb, &tmap, fb, kt * WG_BK, (int)col0);
                cp_async_bulk_tensor_2d_global_to_shared(sb + WG_A_BYTES, &tmap, fb, kt * WG_BK,
                                                         (int)col0 + FASTED_WG_BM);
            }
        }
        return;
    }

    /* Consumers. */
    setmaxnreg_inc<232>();
    const int ct = threadIdx.x - 128; /* 0..255 */
    const int cw = ct >> 7;           /* consumer warpgroup: rows 64*cw.. of the tile */
    const int warp = ct >> 5, lane = ct & 31;
    if (p.mode == KFASTED_HIST) {
        for (int k = ct; k <= p.nbins; k += WG_CONSUMERS) {
            s_edges[k] = p.edges[k];
            s_hist[k] = 0;
        }
    }
    bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);

    float acc[128];
    unsigned long long kiter = 0;
    for (unsigned it = 0;; it++) {
        const int slot = it & 1;
        while (!mbarrier_try_wait_parity(smem_u32(&tfull_bar[slot]), (it >> 1) & 1))
            ;
        if (!s_state[slot])
            break;
        const unsigned long long tile = s_tile[slot];
        const unsigned mask = s_mask[slot];
        unsigned row0, col0;
        if (fasted_wg_tile(p, tile, row0, col0)) {
#pragma unroll
            for (int k = 0; k < 128; k++) {
                acc[k] = 0.0f;
                reg_fence(acc[k]);
            }
            /* Keep one wgmma group in flight: a stage is released once the
             * group after it has been issued and the group reading it is
             * done. */
            for (int kt = 0; kt < KT; kt++, kiter++) {
                const int s = (int)(kiter % WG_STAGES);
                const unsigned ph = (unsigned)(kiter / WG_STAGES) & 1u;
                while (!mbarrier_try_wait_parity(smem_u32(&full_bar[s]), ph))
                    ;
                const uint32_t sa = sbase + s * WG_STAGE_BYTES + cw * (WG_A_BYTES / 2);
                const uint32_t sb = sbase + s * WG_STAGE_BYTES + WG_A_BYTES;
                const uint64_t da = fasted_wg_desc(sa), db = fasted_wg_desc(sb);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < WG_BK / 16; kk++)
                    wgmma_mma_async_m64n256k16_f32_f16(acc, da + 2 * kk, db + 2 * kk, 1);
                wgmma_commit_group();
                wgmma_wait_group<1>();
#pragma unroll
                for (int k = 0; k < 128; k++)
                    reg_fence(acc[k]);
                if (kt > 0)
                    mbarrier_arrive(smem_u32(&empty_bar[(kiter - 1) % WG_STAGES]));
            }
            wgmma_wait_group<0>();
#pragma unroll
            for (int k = 0; k < 128; k++)
                reg_fence(acc[k]);
            mbarrier_arrive(smem_u32(&empty_bar[(kiter - 1) % WG_STAGES]));

            /* Fused epilogue, as in fasted_kernel.cuh: d2 = RN(RN(s_i + s_j)
             * - 2a), clamped at 0, exactly 0 on the diagonal, compared with
             * eps^2. Weight 2 above the diagonal of a symmetric join (both
             * orders), 1 on it, 0 below; 1 without symmetry; 0 for padding. */
            const unsigned gi0 = row0 + cw * 64 + (warp & 3) * 16 + (lane >> 2);
            const unsigned gj0 = col0 + 2 * (lane & 3);
            const float eps2 = p.eps2;
            auto weight = [&](unsigned i, unsigned j, float a, float si, float sjv,
                              float &d2) -> int {
                d2 = __fmaf_rn(-2.0f, a, __fadd_rn(si, sjv));
                d2 = fmaxf(d2, 0.0f);
                if (i == j)
                    d2 = 0.0f;
                if (i >= p.q1 || j >= p.n || !(d2 <= eps2))
                    return 0;
                if (p.sym)
                    return i < j ? 2 : (i == j ? 1 : 0);
                return 1;
            };
            const float si[2] = {p.s[gi0], p.s[gi0 + 8]};

            if (!PAIRS && p.mode == KFASTED_COUNT) {
                unsigned cnt = 0;
#pragma unroll
                for (int nt = 0; nt < 32; nt++) {
                    const float2 sj = __ldg((const float2 *)(p.s + gj0 + nt * 8));
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        float d2;
                        cnt +=
                            weight(gi0 + h * 8, gj0 + nt * 8, acc[nt * 4 + h * 2], si[h], sj.x, d2);
                        cnt += weight(gi0 + h * 8, gj0 + nt * 8 + 1, acc[nt * 4 + h * 2 + 1], si[h],
                                      sj.y, d2);
                    }
                }
                cnt = __reduce_add_sync(FASTED_FULL_MASK, cnt);
                if (lane == 0 && cnt)
                    atomicAdd(&p.ctl->count, (unsigned long long)cnt);
            } else if (!PAIRS && p.mode == KFASTED_PERPOINT) {
                /* Rows: the 4 lanes of a quad share a row; columns: the 8
                 * lanes with the same lane%4 share a column, reduced per n8
                 * block so no column counters stay live. */
                unsigned v[2] = {0, 0};
#pragma unroll
                for (int nt = 0; nt < 32; nt++) {
                    const float2 sj = __ldg((const float2 *)(p.s + gj0 + nt * 8));
                    unsigned c[2] = {0, 0};
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            float d2;
                            const int w =
                                weight(gi0 + h * 8, gj0 + nt * 8 + e, acc[nt * 4 + h * 2 + e],
                                       si[h], e ? sj.y : sj.x, d2);
                            v[h] += w ? 1 : 0;
                            c[e] += w == 2 ? 1 : 0;
                        }
                    if (p.sym) {
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            unsigned x = c[e];
                            x += __shfl_xor_sync(FASTED_FULL_MASK, x, 4);
                            x += __shfl_xor_sync(FASTED_FULL_MASK, x, 8);
                            x += __shfl_xor_sync(FASTED_FULL_MASK, x, 16);
                            if (lane < 4 && x)
                                atomicAdd(&p.counts[gj0 + nt * 8 + e], x);
                        }
                    }
                }
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    unsigned x = v[h];
                    x += __shfl_xor_sync(FASTED_FULL_MASK, x, 1);
                    x += __shfl_xor_sync(FASTED_FULL_MASK, x, 2);
                    if ((lane & 3) == 0 && x)
                        atomicAdd(&p.counts[gi0 + h * 8 - p.q0], x);
                }
            } else if (PAIRS) {
                if (mask & (1u << warp)) {
                    /* Pass 1 turns the accumulators into d2 in place and
                     * keeps one hit bit per element. */
                    unsigned cnt = 0, hits[4] = {0, 0, 0, 0};
#pragma unroll
                    for (int nt = 0; nt < 32; nt++) {
                        const float2 sj = __ldg((const float2 *)(p.s + gj0 + nt * 8));
#pragma unroll
                        for (int h = 0; h < 2; h++)
#pragma unroll
                            for (int e = 0; e < 2; e++) {
                                const int bit = nt * 4 + h * 2 + e;
                                float d2;
                                const int w = weight(gi0 + h * 8, gj0 + nt * 8 + e, acc[bit], si[h],
                                                     e ? sj.y : sj.x, d2);
                                acc[bit] = d2;
                                cnt += w;
                                hits[bit / 32] |= (w ? 1u : 0u) << (bit % 32);
                            }
                    }
                    const long long o0 = fasted_reserve_pairs(p, cnt, lane, warp, &s_fail[slot]);
                    if (o0 >= 0 && cnt) {
                        unsigned long long o = (unsigned long long)o0;
#pragma unroll
                        for (int bit = 0; bit < 128; bit++) {
                            if (!(hits[bit / 32] >> (bit % 32) & 1u))
                                continue;
                            const unsigned i = gi0 + ((bit >> 1) & 1) * 8;
                            const unsigned j = gj0 + (bit >> 2) * 8 + (bit & 1);
                            const float d2 = acc[bit];
                            p.pi[o] = i;
                            p.pj[o] = j;
                            p.pd[o] = d2;
                            o++;
                            if (i != j && p.sym) {
                                p.pi[o] = j;
                                p.pj[o] = i;
                                p.pd[o] = d2;
                                o++;
                            }
                        }
                    }
                }
            } else {
#pragma unroll
                for (int nt = 0; nt < 32; nt++) {
                    const float2 sj = __ldg((const float2 *)(p.s + gj0 + nt * 8));
#pragma unroll
                    for (int h = 0; h < 2; h++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            float d2;
                            const int w =
                                weight(gi0 + h * 8, gj0 + nt * 8 + e, acc[nt * 4 + h * 2 + e],
                                       si[h], e ? sj.y : sj.x, d2);
                            if (!w)
                                continue;
                            /* slot k: smallest k with d2 <= edges[k] */
                            int lo = 0, hi = p.nbins;
                            while (lo < hi) {
                                const int mid = (lo + hi) >> 1;
                                if (d2 <= s_edges[mid])
                                    hi = mid;
                                else
                                    lo = mid + 1;
                            }
                            atomicAdd(&s_hist[lo], (unsigned)w);
                        }
                }
            }
        }
        /* Both consumer warpgroups are done with the slot: record warps
         * whose pairs did not fit, then hand the slot back. Every consumer
         * thread arrives itself, so each one's reads of the slot are
         * released to the producer that rewrites it. */
        bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);
        if (ct == 0 && s_fail[slot]) {
            unsigned k = atomicAdd(&p.ctl->nredo, 1u);
            p.redo_out[k].tile = tile;
            p.redo_out[k].mask = s_fail[slot];
        }
        mbarrier_arrive(smem_u32(&tempty_bar[slot]));
    }
    if (p.mode == KFASTED_HIST) {
        bar_sync(WG_BAR_CONSUMERS, WG_CONSUMERS);
        for (int k = ct; k <= p.nbins; k += WG_CONSUMERS)
            if (s_hist[k])
                atomicAdd(&p.hist[k], (unsigned long long)s_hist[k]);
    }
#endif
}

/* Writes 1 where the driver loaded the sm_90a code, 0 elsewhere. */
__global__ void fasted_wg_probe(int *out)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

typedef CUresult (*fasted_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static fasted_encode_fn fasted_wg_encoder(void)
{
    static fasted_encode_fn fn = NULL;
    static int looked = 0;
    if (!looked) {
        looked = 1;
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (fasted_encode_fn)f;
        cudaGetLastError();
    }
    return fn;
}

int fasted_wg_usable(int dev)
{
    static signed char known[64];
    static bool init = false;
    if (!init) {
        memset(known, -1, sizeof known);
        init = true;
    }
    if (dev < 0 || dev >= 64)
        return 0;
    if (known[dev] >= 0)
        return known[dev];
    int ok = 0, major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
        major == 9 && minor == 0 && fasted_wg_encoder()) {
        int *d = NULL, h = 0;
        if (cudaMalloc(&d, sizeof(int)) == cudaSuccess) {
            fasted_wg_probe<<<1, 1>>>(d);
            if (cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess && h == 1)
                ok = 1;
            cudaFree(d);
        }
    }
    cudaGetLastError();
    known[dev] = (signed char)ok;
    return ok;
}

size_t fasted_wg_smem(int nbins)
{
    return (size_t)WG_STAGES * WG_STAGE_BYTES + 1024 + (nbins ? (size_t)(nbins + 1) * 8 : 0);
}

void fasted_wg_grid(fasted_params *p, size_t nq, size_t n)
{
    if (p->sym) {
        p->T = p->U = (unsigned)((n + 2 * FASTED_WG_BM - 1) / (2 * FASTED_WG_BM));
    } else {
        p->T = (unsigned)((nq + FASTED_WG_BM - 1) / FASTED_WG_BM);
        p->U = (unsigned)((n + FASTED_WG_BN - 1) / FASTED_WG_BN);
    }
}

unsigned long long fasted_wg_items(const fasted_params *p)
{
    return p->sym ? 2 * fasted_tiles_total(p->T, p->U, 1, p->order)
                  : fasted_tiles_total(p->T, p->U, 0, p->order);
}

cudaError_t fasted_wg_launch(const fasted_params *p, int pairs, size_t n_alloc, int grid,
                             size_t smem, cudaStream_t st)
{
    static CUtensorMap map;
    static const void *map_x = NULL;
    static size_t map_dp = 0, map_rows = 0;
    if (map_x != p->X || map_dp != (size_t)p->dp || map_rows != n_alloc) {
        fasted_encode_fn enc = fasted_wg_encoder();
        if (!enc)
            return cudaErrorNotSupported;
        /* Rows of dp halves; 64x128 boxes (128-byte rows, the swizzle's
         * width); the B tile takes two boxes. */
        cuuint64_t dims[2] = {(cuuint64_t)p->dp, (cuuint64_t)n_alloc};
        cuuint64_t strides[1] = {(cuuint64_t)p->dp * 2};
        cuuint32_t box[2] = {WG_BK, FASTED_WG_BM};
        cuuint32_t estr[2] = {1, 1};
        if (enc(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, (void *)p->X, dims, strides, box, estr,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
            map_x = NULL;
            return cudaErrorInvalidValue;
        }
        map_x = p->X;
        map_dp = (size_t)p->dp;
        map_rows = n_alloc;
    }
    const void *func =
        pairs ? (const void *)fasted_wg_kernel<true> : (const void *)fasted_wg_kernel<false>;
    cudaError_t e =
        cudaFuncSetAttribute(func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (e != cudaSuccess)
        return e;
    if (pairs)
        fasted_wg_kernel<true><<<grid, FASTED_WG_THREADS, smem, st>>>(map, *p);
    else
        fasted_wg_kernel<false><<<grid, FASTED_WG_THREADS, smem, st>>>(map, *p);
    return cudaGetLastError();
}
