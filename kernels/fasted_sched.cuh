/* The FASTED tile scheduler, shared by the mma.sync and wgmma kernels: how
 * work items map to block tiles (Figure 4's 8x8 squares, the symmetric
 * upper triangle), the persistent blocks' work-item taker and the warp
 * pair-buffer reservation with its hand-back of undone work. */
#ifndef TCJ_FASTED_SCHED_CUH
#define TCJ_FASTED_SCHED_CUH

#include "fasted_int.cuh"

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

/* The tile grid is the upper triangle: a symmetric run that is not a
 * cross run (whose tiles are all off the diagonal, fasted_int.cuh). */
__host__ __device__ __forceinline__ bool fasted_tri(const fasted_params &p)
{
    return p.sym && !p.c0;
}

/* Work item -> block tile (bi down, bj across). With order on, consecutive
 * items walk an 8x8 square of tiles (Figure 4) so the blocks running at one
 * time share A and B rows in L2. Returns false for items outside the grid
 * (edge squares, tiles below the diagonal). */
__device__ __forceinline__ bool fasted_tile_of(const fasted_params &p, unsigned long long t,
                                               unsigned &bi, unsigned &bj)
{
    if (p.clu_tile) { /* a cluster layout: the table */
        if (t >= p.clu_items)
            return false;
        const uint2 b = p.clu_tile[t];
        bi = b.x;
        bj = b.y;
        return true;
    }
    if (p.order) { /* [order] */
        const unsigned G = FASTED_GROUP;
        unsigned long long sq = t / (G * G);
        unsigned r = (unsigned)(t % (G * G)), sr, sc;
        if (fasted_tri(p)) {
            fasted_tri_index(sq, (p.T + G - 1) / G, sr, sc);
        } else {
            unsigned SC = (p.U + G - 1) / G;
            sr = (unsigned)(sq / SC);
            sc = (unsigned)(sq % SC);
        }
        bi = sr * G + r / G;
        bj = sc * G + r % G;
    } else if (fasted_tri(p)) {
        fasted_tri_index(t, p.T, bi, bj);
    } else {
        bi = (unsigned)(t / p.U);
        bj = (unsigned)(t % p.U);
    }
    return bi < p.T && bj < p.U && (!fasted_tri(p) || bj >= bi);
}

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

/* Record the warps of a tile whose pairs did not fit (one thread, after
 * the tile's closing barrier), so the tile is done again for them. */
__device__ __forceinline__ void fasted_hand_back(const fasted_params &p, unsigned long long tile,
                                                 unsigned failed)
{
    if (failed) {
        unsigned k = atomicAdd(&p.ctl->nredo, 1u);
        p.redo_out[k].tile = tile;
        p.redo_out[k].mask = failed;
    }
}

/* One pair-buffer reservation per warp: an inclusive scan of the lanes'
 * counts gives each lane its offset and lane 0 takes the warp's slots with
 * one atomic. Returns the lane's first slot, or -1 when the buffer is full:
 * then the buffer's valid end is marked and the warp's bit set in *fail, so
 * the host drains the buffer and the tile is done again. A warp with
 * nothing to list (most of them in exact's COUNT, which lists only its
 * band) takes no slot and skips the scan: one vote instead of some 15
 * instructions a warp and tile. */
__device__ __forceinline__ long long fasted_reserve_pairs(const fasted_params &p, unsigned cnt,
                                                          int lane, int warp, unsigned *fail)
{
    if (!__any_sync(FASTED_FULL_MASK, cnt != 0))
        return 0;
    unsigned x = cnt;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned y = __shfl_up_sync(FASTED_FULL_MASK, x, o);
        if (lane >= o)
            x += y;
    }
    const unsigned total = __shfl_sync(FASTED_FULL_MASK, x, 31);
    /* total > 0 after the vote (at most 32 x 2 x 128, no wrap). */
    unsigned long long b = 0;
    if (lane == 0)
        b = atomicAdd(&p.ctl->pos, (unsigned long long)total);
    b = __shfl_sync(FASTED_FULL_MASK, b, 0);
    if (b + total > p.cap) {
        if (lane == 0) {
            atomicMin(&p.ctl->valid_end, b);
            atomicExch(&p.ctl->full, 1u);
            atomicOr(fail, 1u << warp);
        }
        return -1;
    }
    return (long long)(b + (x - cnt));
}

#endif
