/* The FASTED join kernel (the FASTED paper, section 3), one template whose
 * parameters are the teaching switches. Included only by the instantiation
 * files fasted_v*.cu, each compiled on its own. */
#ifndef TCJ_FASTED_KERNEL_CUH
#define TCJ_FASTED_KERNEL_CUH

#include "fasted_int.cuh"
#include "kernels.h"
#include "ptx.cuh"

#define FASTED_FULL_MASK 0xffffffffu

/* Row r, column c of an m x m upper triangle (c >= r) numbered row by row:
 * row r starts at r*m - r*(r-1)/2. */
__device__ __forceinline__ unsigned long long fasted_tri_start(long long r, long long m)
{
    return (unsigned long long)(r * m - r * (r - 1) / 2);
}

__device__ __forceinline__ void fasted_tri_index(unsigned long long s, unsigned m, unsigned &r,
                                                 unsigned &c)
{
    double mm = 2.0 * m + 1.0;
    long long rr = (long long)floor((mm - sqrt(mm * mm - 8.0 * (double)s)) * 0.5);
    if (rr < 0)
        rr = 0;
    while (rr > 0 && fasted_tri_start(rr, m) > s)
        rr--;
    while (rr + 1 < (long long)m && fasted_tri_start(rr + 1, m) <= s)
        rr++;
    r = (unsigned)rr;
    c = (unsigned)(rr + (long long)(s - fasted_tri_start(rr, m)));
}

/* Work item -> block tile (bi down, bj across). With order on, consecutive
 * items walk an 8x8 square of tiles (Figure 4) so the blocks running at one
 * time share A and B rows in L2. Returns false for items outside the grid
 * (edge squares, tiles below the diagonal). */
__device__ __forceinline__ bool fasted_tile_of(const fasted_params &p, unsigned long long t,
                                               unsigned &bi, unsigned &bj)
{
    if (p.order) {
        const unsigned G = FASTED_GROUP;
        unsigned long long sq = t / (G * G);
        unsigned r = (unsigned)(t % (G * G)), sr, sc;
        if (p.sym) {
            fasted_tri_index(sq, (p.T + G - 1) / G, sr, sc);
        } else {
            unsigned SC = (p.U + G - 1) / G;
            sr = (unsigned)(sq / SC);
            sc = (unsigned)(sq % SC);
        }
        bi = sr * G + r / G;
        bj = sc * G + r % G;
    } else if (p.sym) {
        fasted_tri_index(t, p.T, bi, bj);
    } else {
        bi = (unsigned)(t / p.U);
        bj = (unsigned)(t % p.U);
    }
    return bi < p.T && bj < p.U && (!p.sym || bj >= bi);
}

/* Shared-memory index (in 16-byte chunks) of chunk ch of row r: eq. 2 of
 * the paper, chunk XOR (row mod 8), so the 8 rows one ldmatrix phase reads
 * land in 8 different bank groups. */
/* Take the next work item from the queue (one thread): items to redo from
 * an earlier launch come first, then fresh tiles. Returns 0 when the queue
 * is empty or the pair buffer filled (the item is then handed back in the
 * redo list). A fresh tile gets every part of it to compute (all_parts). */
__device__ __forceinline__ int fasted_take_item(const fasted_params &p, unsigned long long items,
                                                unsigned all_parts, unsigned long long &tile,
                                                unsigned &mask)
{
    const unsigned long long w = atomicAdd(&p.ctl->queue, 1ull);
    tile = 0;
    mask = all_parts;
    if (w >= items)
        return 0;
    if (w < p.nredo_in) {
        tile = p.redo_in[w].tile;
        mask = p.redo_in[w].mask;
    } else {
        tile = p.t_base + (w - p.nredo_in);
    }
    if (*(volatile unsigned *)&p.ctl->full) {
        /* The pair buffer filled: hand the item back, stop. */
        unsigned k = atomicAdd(&p.ctl->nredo, 1u);
        p.redo_out[k].tile = tile;
        p.redo_out[k].mask = mask;
        return 0;
    }
    return 1;
}

/* One pair-buffer reservation per warp: an inclusive scan of the lanes'
 * counts gives each lane its offset and lane 0 takes the warp's slots with
 * one atomic. Returns the lane's first slot, or -1 when the buffer is full:
 * then the buffer's valid end is marked and the warp's bit set in *fail, so
 * the host drains the buffer and the tile is done again. */
__device__ __forceinline__ long long fasted_reserve_pairs(const fasted_params &p, unsigned cnt,
                                                          int lane, int warp, unsigned *fail)
{
    unsigned x = cnt;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(FASTED_FULL_MASK, x, o);
        if (lane >= o)
            x += y;
    }
    const unsigned total = __shfl_sync(FASTED_FULL_MASK, x, 31);
    unsigned long long b = 0;
    if (lane == 0 && total)
        b = atomicAdd(&p.ctl->pos, (unsigned long long)total);
    b = __shfl_sync(FASTED_FULL_MASK, b, 0);
    if (total && b + total > p.cap) {
        if (lane == 0) {
            atomicMin(&p.ctl->valid_end, b);
            atomicExch(&p.ctl->full, 1u);
            atomicOr(fail, 1u << warp);
        }
        return -1;
    }
    return (long long)(b + (x - cnt));
}

template <bool SWZ> __device__ __forceinline__ int fasted_swz(int r, int ch)
{
    return SWZ ? (ch ^ (r & 7)) : ch;
}

__device__ __forceinline__ uint32_t fasted_ld32(const __half *p)
{
    return __ldg((const unsigned int *)p);
}

template <int WM, int WN, int STAGES, int MINB, bool SMEM, bool ASYNC, bool SWZ, bool ALIGN,
          bool PAIRS>
__global__ void __launch_bounds__(FASTED_THREADS, MINB) fasted_kernel(const fasted_params p)
{
    constexpr int BM = 2 * WM, BN = 2 * WN, BK = FASTED_BK;
    constexpr int MT = WM / 16, NT = WN / 8;
    constexpr size_t STAGE_HALVES = (size_t)(BM + BN) * BK;
    constexpr size_t HIST_OFF = (SMEM ? STAGES * STAGE_HALVES * 2 : 0) + 128;
    static_assert(WM % 16 == 0 && WN % 16 == 0, "warp tile is whole m16 / n16 steps");

    extern __shared__ __align__(128) unsigned char fasted_smem[];
    __half *sbuf = (__half *)(fasted_smem + (ALIGN ? 0 : 16));
    float *s_edges = (float *)(fasted_smem + HIST_OFF);
    unsigned *s_hist = (unsigned *)(s_edges + p.nbins + 1);
    __shared__ unsigned long long s_tile;
    __shared__ unsigned s_mask, s_fail[2];
    __shared__ int s_state;

    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wr0 = (warp >> 1) * WM, wc0 = (warp & 1) * WN;
    const int KT = p.dp / BK;
    const unsigned long long items = p.nredo_in + (p.t_end - p.t_base);

    if (p.mode == KFASTED_HIST) {
        for (int k = threadIdx.x; k <= p.nbins; k += FASTED_THREADS) {
            s_edges[k] = p.edges[k];
            s_hist[k] = 0;
        }
    }

    /* s_fail alternates by iteration parity: it is read after the closing
     * barrier of one tile while thread 0 already resets the next one's. */
    for (int it = 0;; it ^= 1) {
        if (threadIdx.x == 0) {
            unsigned long long tile;
            unsigned mask;
            const int state = fasted_take_item(p, items, 0xfu, tile, mask);
            s_tile = tile;
            s_mask = mask;
            s_state = state;
            s_fail[it] = 0;
        }
        __syncthreads();
        if (!s_state)
            break;
        const unsigned long long tile = s_tile;
        const unsigned mask = s_mask;
        unsigned bi, bj;
        if (fasted_tile_of(p, tile, bi, bj)) {
            const unsigned row0 = p.q0 + bi * BM, col0 = bj * BN;
            float acc[MT][NT][4];
#pragma unroll
            for (int mt = 0; mt < MT; mt++)
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        acc[mt][nt][e] = 0.f;

            if (SMEM) {
                auto load_stage = [&](int st, int kt) {
                    __half *sA = sbuf + st * STAGE_HALVES, *sB = sA + BM * BK;
                    const __half *ga = p.X + (size_t)row0 * p.dp + kt * BK;
                    const __half *gb = p.X + (size_t)col0 * p.dp + kt * BK;
#pragma unroll
                    for (int c = threadIdx.x; c < (BM + BN) * 8; c += FASTED_THREADS) {
                        const bool isA = c < BM * 8;
                        const int cc = isA ? c : c - BM * 8;
                        const int r = cc >> 3, ch = cc & 7;
                        __half *dst = (isA ? sA : sB) + r * BK + fasted_swz<SWZ>(r, ch) * 8;
                        const __half *src = (isA ? ga : gb) + (size_t)r * p.dp + ch * 8;
                        if (ASYNC)
                            cp_async_cg_16(smem_u32(dst), src);
                        else
                            *(uint4 *)dst = __ldg((const uint4 *)src);
                    }
                };
                /* Per-lane ldmatrix offsets (halves) within a warp's 16-row
                 * group, one per k16 step: the rows a lane addresses are
                 * congruent to lane mod 8 in every group, so the swizzle
                 * term is fixed per lane and kk, computed once per tile. */
                int a_off[BK / 16], b_off[BK / 16];
#pragma unroll
                for (int kk = 0; kk < BK / 16; kk++) {
                    a_off[kk] =
                        (lane & 15) * BK + fasted_swz<SWZ>(lane & 7, kk * 2 + (lane >> 4)) * 8;
                    b_off[kk] = (((lane >> 4) << 3) + (lane & 7)) * BK +
                                fasted_swz<SWZ>(lane & 7, kk * 2 + ((lane >> 3) & 1)) * 8;
                }
                auto compute_stage = [&](int st) {
                    const uint32_t sA = smem_u32(sbuf + st * STAGE_HALVES + wr0 * BK);
                    const uint32_t sB = smem_u32(sbuf + st * STAGE_HALVES + BM * BK + wc0 * BK);
#pragma unroll
                    for (int kk = 0; kk < BK / 16; kk++) {
                        uint32_t af[MT][4], bf[NT][2];
#pragma unroll
                        for (int mt = 0; mt < MT; mt++)
                            ldmatrix_x4(af[mt], sA + (mt * 16 * BK + a_off[kk]) * 2);
#pragma unroll
                        for (int np = 0; np < NT / 2; np++) {
                            uint32_t t[4];
                            ldmatrix_x4(t, sB + (np * 16 * BK + b_off[kk]) * 2);
                            bf[2 * np][0] = t[0];
                            bf[2 * np][1] = t[1];
                            bf[2 * np + 1][0] = t[2];
                            bf[2 * np + 1][1] = t[3];
                        }
#pragma unroll
                        for (int mt = 0; mt < MT; mt++)
#pragma unroll
                            for (int nt = 0; nt < NT; nt++)
                                mma_sync_m16n8k16_f32_f16(acc[mt][nt], af[mt], bf[nt]);
                    }
                };
                if (STAGES >= 2) {
                    /* STAGES-1 slices in flight; one barrier per slice both
                     * publishes slice kt and frees the stage read at kt-1,
                     * which the copy issued next overwrites. */
#pragma unroll
                    for (int st = 0; st < STAGES - 1; st++) {
                        if (st < KT)
                            load_stage(st, st);
                        if (ASYNC)
                            cp_async_commit();
                    }
                    for (int kt = 0; kt < KT; kt++) {
                        if (ASYNC)
                            cp_async_wait_group<(STAGES >= 2 ? STAGES - 2 : 0)>();
                        __syncthreads();
                        if (kt + STAGES - 1 < KT)
                            load_stage((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
                        if (ASYNC)
                            cp_async_commit();
                        compute_stage(kt % STAGES);
                    }
                    __syncthreads();
                } else {
                    for (int kt = 0; kt < KT; kt++) {
                        load_stage(0, kt);
                        if (ASYNC) {
                            cp_async_commit();
                            cp_async_wait_group<0>();
                        }
                        __syncthreads();
                        compute_stage(0);
                        __syncthreads();
                    }
                }
            } else {
                /* No block buffer: each warp loads its fragments from global
                 * memory in the mma layout (row lane/4, k pair 2*(lane%4)). */
                const __half *ga = p.X + (size_t)(row0 + wr0) * p.dp;
                const __half *gb = p.X + (size_t)(col0 + wc0) * p.dp;
                for (int k = 0; k < p.dp; k += 16) {
                    uint32_t af[MT][4], bf[NT][2];
                    const int kq = k + 2 * (lane & 3);
#pragma unroll
                    for (int mt = 0; mt < MT; mt++) {
                        const __half *q = ga + (size_t)(mt * 16 + (lane >> 2)) * p.dp + kq;
                        af[mt][0] = fasted_ld32(q);
                        af[mt][1] = fasted_ld32(q + 8 * (size_t)p.dp);
                        af[mt][2] = fasted_ld32(q + 8);
                        af[mt][3] = fasted_ld32(q + 8 * (size_t)p.dp + 8);
                    }
#pragma unroll
                    for (int nt = 0; nt < NT; nt++) {
                        const __half *q = gb + (size_t)(nt * 8 + (lane >> 2)) * p.dp + kq;
                        bf[nt][0] = fasted_ld32(q);
                        bf[nt][1] = fasted_ld32(q + 8);
                    }
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
                            mma_sync_m16n8k16_f32_f16(acc[mt][nt], af[mt], bf[nt]);
                }
            }

            /* Fused epilogue: d2 = RN(RN(s_i + s_j) - 2a) (2a is exact),
             * clamped at 0, exactly 0 on the diagonal; compared with eps^2
             * in registers. Weight 2 for off-diagonal pairs of a symmetric
             * join (both orders), 1 otherwise, 0 for padding and for the
             * lower half of a diagonal tile. */
            const bool diag = p.sym && bi == bj;
            const unsigned gi0 = row0 + wr0 + (lane >> 2), gj0 = col0 + wc0 + 2 * (lane & 3);
            float sj[NT][2];
#pragma unroll
            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                for (int e = 0; e < 2; e++)
                    sj[nt][e] = p.s[gj0 + nt * 8 + e];
            const float eps2 = p.eps2;
            auto weight = [&](unsigned i, unsigned j, float a, float si, float sjv,
                              float &d2) -> int {
                d2 = __fmaf_rn(-2.0f, a, __fadd_rn(si, sjv));
                d2 = fmaxf(d2, 0.0f);
                if (i == j)
                    d2 = 0.0f;
                if (i >= p.q1 || j >= p.n || !(d2 <= eps2))
                    return 0;
                if (diag)
                    return i < j ? 2 : (i == j ? 1 : 0);
                return p.sym ? 2 : 1;
            };
            /* f(i, j, w, d2) for each accumulator this thread holds. */
            auto each = [&](auto f) {
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const unsigned i = gi0 + mt * 16 + h * 8;
                        const float si = p.s[i];
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int e = 0; e < 2; e++) {
                                const unsigned j = gj0 + nt * 8 + e;
                                float d2;
                                const int w =
                                    weight(i, j, acc[mt][nt][h * 2 + e], si, sj[nt][e], d2);
                                f(i, j, w, d2);
                            }
                    }
            };

            if (!PAIRS && p.mode == KFASTED_COUNT) {
                unsigned cnt = 0;
                each([&](unsigned, unsigned, int w, float) { cnt += w; });
                cnt = __reduce_add_sync(FASTED_FULL_MASK, cnt);
                if (lane == 0 && cnt)
                    atomicAdd(&p.ctl->count, (unsigned long long)cnt);
            } else if (!PAIRS && p.mode == KFASTED_PERPOINT) {
                unsigned cc[NT][2];
#pragma unroll
                for (int nt = 0; nt < NT; nt++)
                    cc[nt][0] = cc[nt][1] = 0;
                    /* Rows: the 4 lanes of a quad share a row; columns: the 8
                     * lanes with the same lane%4 share a column. */
#pragma unroll
                for (int mt = 0; mt < MT; mt++)
#pragma unroll
                    for (int h = 0; h < 2; h++) {
                        const unsigned i = gi0 + mt * 16 + h * 8;
                        const float si = p.s[i];
                        unsigned v = 0;
#pragma unroll
                        for (int nt = 0; nt < NT; nt++)
#pragma unroll
                            for (int e = 0; e < 2; e++) {
                                float d2;
                                const int w = weight(i, gj0 + nt * 8 + e, acc[mt][nt][h * 2 + e],
                                                     si, sj[nt][e], d2);
                                v += w ? 1 : 0;
                                cc[nt][e] += w == 2 ? 1 : 0;
                            }
                        v += __shfl_xor_sync(FASTED_FULL_MASK, v, 1);
                        v += __shfl_xor_sync(FASTED_FULL_MASK, v, 2);
                        if ((lane & 3) == 0 && v)
                            atomicAdd(&p.counts[i - p.q0], v);
                    }
                if (p.sym) {
#pragma unroll
                    for (int nt = 0; nt < NT; nt++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            unsigned v = cc[nt][e];
                            v += __shfl_xor_sync(FASTED_FULL_MASK, v, 4);
                            v += __shfl_xor_sync(FASTED_FULL_MASK, v, 8);
                            v += __shfl_xor_sync(FASTED_FULL_MASK, v, 16);
                            if (lane < 4 && v)
                                atomicAdd(&p.counts[gj0 + nt * 8 + e], v);
                        }
                }
            } else if (PAIRS) {
                if (mask & (1u << warp)) {
                    /* Pass 1 turns the accumulators into d2 in place and keeps
                     * one hit bit per element, so pass 2 holds no second
                     * copy of the tile in registers. */
                    unsigned cnt = 0, hits[MT * 2 * NT * 2 / 32];
#pragma unroll
                    for (int k = 0; k < MT * 2 * NT * 2 / 32; k++)
                        hits[k] = 0;
#pragma unroll
                    for (int mt = 0; mt < MT; mt++)
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            const unsigned i = gi0 + mt * 16 + h * 8;
                            const float si = p.s[i];
#pragma unroll
                            for (int nt = 0; nt < NT; nt++)
#pragma unroll
                                for (int e = 0; e < 2; e++) {
                                    const int bit = ((mt * 2 + h) * NT + nt) * 2 + e;
                                    float d2;
                                    const int w = weight(i, gj0 + nt * 8 + e,
                                                         acc[mt][nt][h * 2 + e], si, sj[nt][e], d2);
                                    acc[mt][nt][h * 2 + e] = d2;
                                    cnt += w;
                                    hits[bit / 32] |= (w ? 1u : 0u) << (bit % 32);
                                }
                        }
                    const long long o0 = fasted_reserve_pairs(p, cnt, lane, warp, &s_fail[it]);
                    if (o0 >= 0 && cnt) {
                        unsigned long long o = (unsigned long long)o0;
#pragma unroll
                        for (int mt = 0; mt < MT; mt++)
#pragma unroll
                            for (int h = 0; h < 2; h++)
#pragma unroll
                                for (int nt = 0; nt < NT; nt++)
#pragma unroll
                                    for (int e = 0; e < 2; e++) {
                                        const int bit = ((mt * 2 + h) * NT + nt) * 2 + e;
                                        if (!(hits[bit / 32] >> (bit % 32) & 1u))
                                            continue;
                                        const unsigned i = gi0 + mt * 16 + h * 8;
                                        const unsigned j = gj0 + nt * 8 + e;
                                        const float d2 = acc[mt][nt][h * 2 + e];
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
                each([&](unsigned, unsigned, int w, float d2) {
                    if (!w)
                        return;
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
                });
            }
        }
        __syncthreads();
        if (threadIdx.x == 0 && s_fail[it]) {
            unsigned k = atomicAdd(&p.ctl->nredo, 1u);
            p.redo_out[k].tile = tile;
            p.redo_out[k].mask = s_fail[it];
        }
    }
    if (p.mode == KFASTED_HIST) {
        __syncthreads();
        for (int k = threadIdx.x; k <= p.nbins; k += FASTED_THREADS)
            if (s_hist[k])
                atomicAdd(&p.hist[k], (unsigned long long)s_hist[k]);
    }
}

/* Fill the table entry of one instantiation. */
template <int WM, int WN, int STAGES, int MINB, bool SMEM, bool ASYNC, bool SWZ, bool ALIGN>
static void fasted_kinfo_fill(fasted_kinfo *k)
{
    k->func = (const void *)fasted_kernel<WM, WN, STAGES, MINB, SMEM, ASYNC, SWZ, ALIGN, false>;
    k->func_pairs =
        (const void *)fasted_kernel<WM, WN, STAGES, MINB, SMEM, ASYNC, SWZ, ALIGN, true>;
    k->bm = 2 * WM;
    k->bn = 2 * WN;
    k->minb = MINB;
    k->smem = (SMEM ? (size_t)STAGES * (2 * WM + 2 * WN) * FASTED_BK * 2 : 0) + 128;
}

#endif
