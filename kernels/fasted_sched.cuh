/* The FASTED tile scheduler, shared by the mma.sync and wgmma kernels: how
 * work items map to block tiles (the scheduler types of
 * kernels/tile_sched.h), the persistent blocks' work-item taker and the warp
 * pair-buffer reservation with its hand-back of undone work. */
#ifndef TCJ_FASTED_SCHED_CUH
#define TCJ_FASTED_SCHED_CUH

#include "fasted_int.cuh"
#include "tile_sched.h"

#define FASTED_FULL_MASK 0xffffffffu

/* The tile grid is the upper triangle: a symmetric run that is not a
 * cross run (whose tiles are all off the diagonal, fasted_int.cuh). */
__host__ __device__ __forceinline__ bool fasted_tri(const fasted_params &p)
{
    return p.sym && !p.c0;
}

/* Work item -> block tile (bi down, bj across) by the run's scheduler
 * type (kernels/tile_sched.h): a cluster layout's or the tile cut's
 * table, the symmetric triangle or the square grid, in Figure 4's 8x8
 * squares where order is on. Returns false for items naming no tile. */
__device__ __forceinline__ bool fasted_tile_of(const fasted_params &p, unsigned long long t,
                                               unsigned &bi, unsigned &bj)
{
    if (p.tiles.tab) /* a listed set: its table's order */
        return ts_table_tile(p.tiles, t, &bi, &bj);
    if (fasted_tri(p))
        return ts_tri_tile(ts_tri{p.T, p.order}, t, &bi, &bj);
    return ts_square_tile(ts_square{p.T, p.U, p.order}, t, &bi, &bj);
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
