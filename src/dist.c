/* The hooks' pointer and the per-rank file names (src/dist.h). */
#include "dist.h"

#include <stdio.h>
#include <string.h>

const dist_ops *dist;

static char dist_path[4096];

size_t dist_chunk(size_t left, size_t total, int ranks)
{
    size_t r = ranks > 0 ? (size_t)ranks : 1;
    size_t floor = total / (64 * r);
    if (floor < 1)
        floor = 1;
    size_t c = left / (2 * r);
    if (c < floor)
        c = floor;
    return c < left ? c : left;
}

const char *dist_rank_path(const char *path)
{
    if (!dist || dist->nranks < 2)
        return path;
    snprintf(dist_path, sizeof dist_path, "%s.%d", path, dist->rank);
    return dist_path;
}

int dist_own_file(const char *path)
{
    return !dist || dist->rank == 0 || strcmp(path, dist_path) == 0;
}

void dist_list_put(dist_list *l, const dist_edge *e)
{
    dist_edge *h = l->e;
    for (uint32_t k = 0; k < l->len; k++)
        if (h[k].a == e->a && h[k].b == e->b)
            return;
    uint32_t k;
    if (l->len < DIST_LIST) {
        k = l->len++;
        while (k > 0 && dist_edge_before(&h[(k - 1) / 2], e)) {
            h[k] = h[(k - 1) / 2];
            k = (k - 1) / 2;
        }
        h[k] = *e;
        return;
    }
    if (!dist_edge_before(e, &h[0]))
        return;
    k = 0;
    for (;;) { /* the new top sifted down */
        uint32_t c = 2 * k + 1;
        if (c >= DIST_LIST)
            break;
        if (c + 1 < DIST_LIST && dist_edge_before(&h[c], &h[c + 1]))
            c++;
        if (!dist_edge_before(e, &h[c]))
            break;
        h[k] = h[c];
        k = c;
    }
    h[k] = *e;
}

void dist_list_merge(const dist_list *in, dist_list *out)
{
    for (uint32_t k = 0; k < in->len && k < DIST_LIST; k++)
        dist_list_put(out, &in->e[k]);
}
