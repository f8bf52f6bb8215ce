#include "dataset_order.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"

int dataset_order_first(const dataset *ds, const size_t *first, size_t m, dataset *g, uint32_t *at)
{
    memset(g, 0, sizeof *g);
    if (at && ds->n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "the reordered rows: %zu rows do not fit 32-bit row numbers",
                       ds->n);
    const size_t n = ds->n, rb = ds->d * dataset_dtype(ds)->bytes;
    uint8_t *listed = mem_alloc("the reordered rows", "their marks", n, 1, 1);
    char *v = listed ? mem_alloc("the reordered rows", "a copy of the dataset", n, rb, 0) : NULL;
    if (!v) {
        free(listed);
        return TCJ_ENOMEM;
    }
    const char *from = ds->v;
    /* Its hash: the dataset's, with the rows put first and their order
     * (the others follow in theirs). */
    uint64_t h = (ds->hash ^ 0x6f726465725f6669ULL) * 0x100000001b3ULL;
    h = (h ^ m) * 0x100000001b3ULL;
    for (size_t k = 0; k < m; k++) {
        memcpy(v + k * rb, from + first[k] * rb, rb);
        listed[first[k]] = 1;
        if (at)
            at[k] = (uint32_t)first[k];
        h = (h ^ first[k]) * 0x100000001b3ULL;
    }
    size_t k = m;
    for (size_t i = 0; i < n; i++) {
        if (listed[i])
            continue;
        memcpy(v + k * rb, from + i * rb, rb);
        if (at)
            at[k] = (uint32_t)i;
        k++;
    }
    free(listed);
    g->name = ds->name;
    g->path = ds->path;
    g->format = ds->format;
    g->n = n;
    g->d = ds->d;
    g->type = ds->type;
    g->v = v;
    g->hash = h;
    g->set_hash = dataset_set_hash(ds);
    return 0;
}

void dataset_order_free(dataset *g)
{
    free(g->v);
    memset(g, 0, sizeof *g);
}
