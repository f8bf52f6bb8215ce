/* Tile schedulers: how a persistent kernel's work items map to block
 * tiles. Pure C, included by the tensor-core kernels (each work item a
 * tile the kernel's blocks take from one queue) and by the host, which
 * sizes the queue and tests the orders (tests/unit/t_tile_sched.c).
 *
 * Three types with one interface, TYPE_items (the queue's length) and
 * TYPE_tile (item t's tile: bi down, bj across; 0 for an item that names
 * no tile, which the kernel skips):
 *   ts_square  a T x U grid, every tile (a join of rows against columns);
 *   ts_tri     the upper triangle bj >= bi of a T x T grid (the symmetric
 *              join: each pair of blocks once);
 *   ts_table   a listed set of tiles (a cluster layout's diagonal blocks,
 *              the tile cut's block pairs), built on the host by
 *              ts_table_fill (kernels/tile_sched.c).
 * With order on, the square and the triangle walk their tiles in
 * TS_GROUP x TS_GROUP squares (the FASTED paper's Figure 4), so the
 * blocks running at one time share A and B rows in L2; the squares at the
 * grid's far edges are then partly empty (items naming no tile). */
#ifndef TCJ_TILE_SCHED_H
#define TCJ_TILE_SCHED_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define TS_HD __host__ __device__ __forceinline__
#else
#define TS_HD static inline
#endif

#define TS_GROUP 8 /* the Figure 4 order's squares: 8 x 8 tiles */

typedef struct ts_square {
    unsigned T, U;
    int order;
} ts_square;

typedef struct ts_tri {
    unsigned T;
    int order;
} ts_tri;

/* tab[2t], tab[2t + 1]: item t's tile (on the device read as one uint2) */
typedef struct ts_table {
    const uint32_t *tab;
    unsigned long long n;
} ts_table;

/* Row r of an m x m upper triangle numbered row by row starts at item
 * r*m - r*(r-1)/2. */
TS_HD unsigned long long ts_tri_start(long long r, long long m)
{
    return (unsigned long long)(r * m - r * (r - 1) / 2);
}

/* Item s of an m x m upper triangle: its row from the quadratic's root,
 * then stepped to the exact row (the root is a double, s up to 2^64). */
TS_HD void ts_tri_index(unsigned long long s, unsigned m, unsigned *r, unsigned *c)
{
    const double mm = 2.0 * m + 1.0;
    long long rr = (long long)floor((mm - sqrt(mm * mm - 8.0 * (double)s)) * 0.5);
    if (rr < 0)
        rr = 0;
    while (rr > 0 && ts_tri_start(rr, m) > s)
        rr--;
    while (rr + 1 < (long long)m && ts_tri_start(rr + 1, m) <= s)
        rr++;
    *r = (unsigned)rr;
    *c = (unsigned)(rr + (long long)(s - ts_tri_start(rr, m)));
}

/* Item t within its group square: tile (sr, sc) of the grid of squares
 * -> the tile. */
TS_HD void ts_in_square(unsigned long long t, unsigned sr, unsigned sc, unsigned *bi, unsigned *bj)
{
    const unsigned r = (unsigned)(t % (TS_GROUP * TS_GROUP));
    *bi = sr * TS_GROUP + r / TS_GROUP;
    *bj = sc * TS_GROUP + r % TS_GROUP;
}

TS_HD unsigned long long ts_square_items(ts_square s)
{
    if (s.order) {
        const unsigned long long SR = (s.T + TS_GROUP - 1) / TS_GROUP,
                                 SC = (s.U + TS_GROUP - 1) / TS_GROUP;
        return SR * SC * TS_GROUP * TS_GROUP;
    }
    return (unsigned long long)s.T * s.U;
}

TS_HD int ts_square_tile(ts_square s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    if (s.order) { /* [order] */
        const unsigned long long sq = t / (TS_GROUP * TS_GROUP);
        const unsigned SC = (s.U + TS_GROUP - 1) / TS_GROUP;
        ts_in_square(t, (unsigned)(sq / SC), (unsigned)(sq % SC), bi, bj);
    } else {
        *bi = (unsigned)(t / s.U);
        *bj = (unsigned)(t % s.U);
    }
    return *bi < s.T && *bj < s.U;
}

TS_HD unsigned long long ts_tri_items(ts_tri s)
{
    if (s.order) {
        const unsigned long long S = (s.T + TS_GROUP - 1) / TS_GROUP;
        return S * (S + 1) / 2 * TS_GROUP * TS_GROUP;
    }
    return (unsigned long long)s.T * (s.T + 1) / 2;
}

TS_HD int ts_tri_tile(ts_tri s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    if (s.order) { /* [order] */
        unsigned sr, sc;
        ts_tri_index(t / (TS_GROUP * TS_GROUP), (s.T + TS_GROUP - 1) / TS_GROUP, &sr, &sc);
        ts_in_square(t, sr, sc, bi, bj);
    } else {
        ts_tri_index(t, s.T, bi, bj);
    }
    return *bi < s.T && *bj < s.T && *bj >= *bi;
}

TS_HD unsigned long long ts_table_items(ts_table s)
{
    return s.n;
}

TS_HD int ts_table_tile(ts_table s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    if (t >= s.n)
        return 0;
#ifdef __CUDA_ARCH__
    const uint2 b = ((const uint2 *)s.tab)[t]; /* one 8-byte load */
    *bi = b.x;
    *bj = b.y;
#else
    *bi = s.tab[2 * t];
    *bj = s.tab[2 * t + 1];
#endif
    return 1;
}

/* A listed set's tiles, on the host: block tiles of ur rows by uc
 * columns, taken row by row within each rectangle, over the rectangles in
 * the order given, the upper triangle of a diagonal one (i0 == j0) when
 * tri. Either nclu clusters (rows clu[c] to clu[c + 1], every one a
 * diagonal block) or, where nblk > 0, the tile cut's block pairs blk[2t] <=
 * blk[2t + 1] of B rows each. Every bound a multiple of ur and of uc (B
 * and the cluster bounds are). */
typedef struct ts_layout {
    size_t ur, uc;
    int tri;
    const size_t *clu;
    int nclu;
    const uint32_t *blk;
    size_t nblk, B;
} ts_layout;

/* Its tiles into *tab (malloc'd, 2 entries a tile; the caller frees it)
 * and their number into *n. 0, or -1 out of memory. */
#ifdef __cplusplus
extern "C" {
#endif
int ts_table_fill(const ts_layout *l, uint32_t **tab, size_t *n);
#ifdef __cplusplus
}
#endif

#endif
