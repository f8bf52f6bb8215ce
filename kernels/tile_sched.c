/* A listed set's tiles (kernels/tile_sched.h, ts_table_fill): a cluster
 * layout's diagonal blocks or the tile cut's block pairs as the block
 * tiles a kernel takes one work item each. */
#include "tile_sched.h"

#include <stdlib.h>

/* Rows [i0, i1) against columns [j0, j1): its tiles, row by row, the
 * upper triangle of a diagonal block when tri. Counts only where out is
 * NULL. */
static size_t ts_rect(const ts_layout *l, size_t i0, size_t i1, size_t j0, size_t j1, uint32_t *out)
{
    const size_t r0 = i0 / l->ur, r1 = i1 / l->ur, c0 = j0 / l->uc, c1 = j1 / l->uc;
    const int tri = l->tri && i0 == j0;
    size_t k = 0;
    for (size_t r = r0; r < r1; r++)
        for (size_t c = tri ? c0 + (r - r0) : c0; c < c1; c++, k++)
            if (out) {
                out[2 * k] = (uint32_t)r;
                out[2 * k + 1] = (uint32_t)c;
            }
    return k;
}

/* Every rectangle's tiles after one another: counted (out NULL) or
 * written. */
static size_t ts_walk(const ts_layout *l, uint32_t *out)
{
    size_t k = 0;
    if (l->nblk) {
        const size_t B = l->B;
        for (size_t t = 0; t < l->nblk; t++)
            k += ts_rect(l, l->blk[2 * t] * B, (l->blk[2 * t] + 1) * B, l->blk[2 * t + 1] * B,
                         (l->blk[2 * t + 1] + 1) * B, out ? out + 2 * k : NULL);
    } else {
        for (int c = 0; c < l->nclu; c++)
            k += ts_rect(l, l->clu[c], l->clu[c + 1], l->clu[c], l->clu[c + 1],
                         out ? out + 2 * k : NULL);
    }
    return k;
}

int ts_table_fill(const ts_layout *l, uint32_t **tab, size_t *n)
{
    *n = ts_walk(l, NULL);
    *tab = malloc((*n ? *n : 1) * 2 * sizeof(uint32_t));
    if (!*tab)
        return -1;
    ts_walk(l, *tab);
    return 0;
}
