/* kernels/tile_sched.h and tile_sched.c: each scheduler type's work items
 * against the tiles they must cover, enumerated directly (a grid's every
 * tile, the triangle's bj >= bi, a layout's or a cut's rectangles by
 * their bounds): every tile once, none outside, the queue's length, and
 * the Figure 4 order's squares. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tile_sched.h"

/* Hits per tile of a T x U grid from items [0, items) of a mapping;
 * returns how many items named no tile. */
typedef int (*ts_map)(const void *s, unsigned long long t, unsigned *bi, unsigned *bj);

static int map_square(const void *s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    return ts_square_tile(*(const ts_square *)s, t, bi, bj);
}

static int map_tri(const void *s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    return ts_tri_tile(*(const ts_tri *)s, t, bi, bj);
}

static int map_table(const void *s, unsigned long long t, unsigned *bi, unsigned *bj)
{
    return ts_table_tile(*(const ts_table *)s, t, bi, bj);
}

/* Items [0, items) of a mapping into hit[] (T x U); *none: items naming
 * no tile, *outside: tiles named outside the grid. */
static void hits(ts_map f, const void *s, unsigned long long items, unsigned T, unsigned U,
                 int *hit, unsigned long long *none, unsigned long long *outside)
{
    *none = *outside = 0;
    memset(hit, 0, (size_t)T * U * sizeof *hit);
    for (unsigned long long t = 0; t < items; t++) {
        unsigned bi = ~0u, bj = ~0u;
        if (!f(s, t, &bi, &bj))
            ++*none;
        else if (bi >= T || bj >= U)
            ++*outside;
        else
            hit[(size_t)bi * U + bj]++;
    }
}

/* Under the Figure 4 order, the items of one group (TS_GROUP^2 of them)
 * that name tiles stay in one TS_GROUP x TS_GROUP square. */
static void check_squares(ts_map f, const void *s, unsigned long long items)
{
    const unsigned long long G2 = TS_GROUP * TS_GROUP;
    CHECK(items % G2 == 0);
    for (unsigned long long g = 0; g < items; g += G2) {
        unsigned r0 = ~0u, c0 = ~0u;
        for (unsigned long long t = g; t < g + G2; t++) {
            unsigned bi, bj;
            if (!f(s, t, &bi, &bj))
                continue;
            if (r0 == ~0u) {
                r0 = bi / TS_GROUP;
                c0 = bj / TS_GROUP;
            }
            CHECK_MSG(bi / TS_GROUP == r0 && bj / TS_GROUP == c0,
                      "item %llu: tile (%u, %u) leaves square (%u, %u)", t, bi, bj, r0, c0);
        }
    }
}

TEST(square_every_tile_once)
{
    const unsigned sizes[] = {1, 2, 7, 8, 9, 16, 17, 33};
    for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (size_t b = 0; b < sizeof sizes / sizeof *sizes; b++)
            for (int order = 0; order <= 1; order++) {
                const unsigned T = sizes[a], U = sizes[b];
                const ts_square s = {T, U, order};
                int *hit = malloc((size_t)T * U * sizeof *hit);
                const unsigned long long items = ts_square_items(s);
                unsigned long long none, outside;
                hits(map_square, &s, items, T, U, hit, &none, &outside);
                CHECK_EQ_INT((long long)outside, 0);
                for (size_t k = 0; k < (size_t)T * U; k++)
                    CHECK_MSG(hit[k] == 1, "%ux%u order %d: tile %zu taken %d times", T, U, order,
                              k, hit[k]);
                CHECK_EQ_INT((long long)(items - none), (long long)T * U);
                if (!order)
                    CHECK_EQ_INT((long long)none, 0);
                else
                    check_squares(map_square, &s, items);
                free(hit);
            }
}

TEST(triangle_every_upper_tile_once)
{
    for (unsigned T = 1; T <= 41; T++)
        for (int order = 0; order <= 1; order++) {
            const ts_tri s = {T, order};
            int *hit = malloc((size_t)T * T * sizeof *hit);
            const unsigned long long items = ts_tri_items(s);
            unsigned long long none, outside;
            hits(map_tri, &s, items, T, T, hit, &none, &outside);
            CHECK_EQ_INT((long long)outside, 0);
            for (unsigned i = 0; i < T; i++)
                for (unsigned j = 0; j < T; j++)
                    CHECK_MSG(hit[(size_t)i * T + j] == (j >= i),
                              "T %u order %d: tile (%u, %u) taken %d times", T, order, i, j,
                              hit[(size_t)i * T + j]);
            CHECK_EQ_INT((long long)(items - none), (long long)T * (T + 1) / 2);
            if (!order)
                CHECK_EQ_INT((long long)none, 0);
            else
                check_squares(map_tri, &s, items);
            free(hit);
        }
}

/* Far into a large triangle, where the row comes from a double's square
 * root: item s decodes to the row whose range holds it (row r's items are
 * [r*m - r(r-1)/2, that + m - r)), checked by the integer bounds. */
TEST(triangle_index_exact_at_scale)
{
    const unsigned ms[] = {3u << 20, 4000037u, 0xffffffu};
    for (size_t a = 0; a < sizeof ms / sizeof *ms; a++) {
        const unsigned long long m = ms[a], total = m * (m + 1) / 2;
        unsigned long long x = 0x9e3779b97f4a7c15ull;
        for (int k = 0; k < 20000; k++) {
            unsigned long long s;
            if (k < 64)
                s = k < 32 ? (unsigned long long)k : total - 1 - (unsigned long long)(k - 32);
            else {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                s = x % total;
            }
            unsigned r, c;
            ts_tri_index(s, (unsigned)m, &r, &c);
            const unsigned long long lo =
                (unsigned long long)r * m - (unsigned long long)r * (r - 1ull) / 2;
            CHECK_MSG(r < m && s >= lo && s < lo + (m - r), "m %llu: item %llu -> row %u", m, s, r);
            CHECK_MSG(c == r + (s - lo) && c < m, "m %llu: item %llu -> (%u, %u)", m, s, r, c);
        }
    }
}

/* A layout's table: tile (r, c) of ur x uc is listed once when it lies in
 * a listed rectangle (upper triangle c >= r of a diagonal one where tri,
 * ur == uc), and never otherwise; ts_table_tile gives the table back and
 * names no tile past its end. */
static void check_table(const ts_layout *l, size_t rows,
                        int (*inside)(const ts_layout *, size_t, size_t))
{
    uint32_t *tab;
    size_t n;
    CHECK_EQ_INT(ts_table_fill(l, &tab, &n), 0);
    const unsigned T = (unsigned)(rows / l->ur), U = (unsigned)(rows / l->uc);
    int *hit = malloc((size_t)T * U * sizeof *hit);
    const ts_table s = {tab, n};
    CHECK_EQ_INT((long long)ts_table_items(s), (long long)n);
    unsigned long long none, outside;
    hits(map_table, &s, n, T, U, hit, &none, &outside);
    CHECK_EQ_INT((long long)(none + outside), 0);
    size_t want = 0;
    for (unsigned r = 0; r < T; r++)
        for (unsigned c = 0; c < U; c++) {
            const int in = inside(l, r, c);
            want += (size_t)in;
            CHECK_MSG(hit[(size_t)r * U + c] == in, "tile (%u, %u) taken %d times, want %d", r, c,
                      hit[(size_t)r * U + c], in);
        }
    CHECK_EQ_INT((long long)n, (long long)want);
    unsigned bi, bj;
    CHECK(!ts_table_tile(s, n, &bi, &bj));
    free(hit);
    free(tab);
}

static int in_clusters(const ts_layout *l, size_t r, size_t c)
{
    const size_t i = r * l->ur, j = c * l->uc;
    for (int k = 0; k < l->nclu; k++)
        if (i >= l->clu[k] && i < l->clu[k + 1] && j >= l->clu[k] && j < l->clu[k + 1])
            return !l->tri || c >= r;
    return 0;
}

static int in_cut(const ts_layout *l, size_t r, size_t c)
{
    const size_t I = r * l->ur / l->B, J = c * l->uc / l->B;
    for (size_t t = 0; t < l->nblk; t++)
        if (l->blk[2 * t] == I && l->blk[2 * t + 1] == J)
            return !l->tri || I != J || c >= r;
    return 0;
}

TEST(layout_tiles_each_cluster_block)
{
    /* clusters of 1 to 5 blocks of 256 rows, 24 blocks in all */
    size_t clu[32];
    int nclu = 0;
    clu[0] = 0;
    unsigned long long x = 12345;
    while (clu[nclu] < 24 * 256) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        size_t b = 1 + (size_t)(x >> 33) % 5;
        if (clu[nclu] + b * 256 > 24 * 256)
            b = 24 - clu[nclu] / 256;
        clu[nclu + 1] = clu[nclu] + b * 256;
        nclu++;
    }
    /* mma.sync's tiles, wgmma's (and its symmetric halves' 256 rows) */
    const size_t shapes[][3] = {
        {128, 128, 1}, {128, 128, 0}, {64, 128, 0}, {256, 256, 1}, {128, 256, 0}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const ts_layout l = {shapes[k][0], shapes[k][1], (int)shapes[k][2], clu, nclu, NULL, 0,
                             256};
        check_table(&l, 24 * 256, in_clusters);
    }
}

TEST(cut_tiles_each_listed_block_pair)
{
    /* a cut over 20 blocks of 256 rows: every pair I <= J kept with
     * probability 1/3, the diagonal always */
    enum { NB = 20 };
    uint32_t blk[2 * NB * NB];
    size_t nblk = 0;
    unsigned long long x = 777;
    for (uint32_t I = 0; I < NB; I++)
        for (uint32_t J = I; J < NB; J++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            if (I == J || (x >> 33) % 3 == 0) {
                blk[2 * nblk] = I;
                blk[2 * nblk + 1] = J;
                nblk++;
            }
        }
    const size_t clu[2] = {0, NB * 256};
    const size_t shapes[][3] = {
        {128, 128, 1}, {64, 128, 0}, {256, 256, 1}, {256, 256, 0}, {128, 256, 0}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const ts_layout l = {shapes[k][0], shapes[k][1], (int)shapes[k][2], clu, 1, blk, nblk, 256};
        check_table(&l, NB * 256, in_cut);
    }
}
