#include "dataset_order.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"
#include "par.h"

/* The copy's rows [a, b) from their source rows, on one of par_for's
 * threads: the fresh buffer's pages are faulted in and filled by all the
 * cores at once, where one core would take each page's fault in turn. */
typedef struct order_copy {
    char *v;
    const char *from;
    const uint32_t *src;
    size_t rb;
} order_copy;

static void order_copy_rows(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const order_copy *c = ctx;
    for (size_t k = a; k < b; k++)
        memcpy(c->v + k * c->rb, c->from + c->src[k] * c->rb, c->rb);
}

int dataset_order_first(const dataset *ds, const size_t *first, size_t m, dataset *g, uint32_t *at)
{
    memset(g, 0, sizeof *g);
    if (ds->n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "the reordered rows: %zu rows do not fit 32-bit row numbers",
                       ds->n);
    const size_t n = ds->n, rb = ds->d * dataset_dtype(ds)->bytes;
    uint8_t *listed = mem_alloc("the reordered rows", "their marks", n, 1, 1);
    /* each copy row's source row: at where the caller wants them */
    uint32_t *src = at;
    if (listed && !src)
        src = mem_alloc("the reordered rows", "their order", n, sizeof *src, 0);
    char *v = src ? mem_alloc("the reordered rows", "a copy of the dataset", n, rb, 0) : NULL;
    if (!v) {
        if (src != at)
            free(src);
        free(listed);
        return TCJ_ENOMEM;
    }
    /* Its hash: the dataset's, with the rows put first and their order
     * (the others follow in theirs). */
    uint64_t h = (ds->hash ^ 0x6f726465725f6669ULL) * 0x100000001b3ULL;
    h = (h ^ m) * 0x100000001b3ULL;
    for (size_t k = 0; k < m; k++) {
        src[k] = (uint32_t)first[k];
        listed[first[k]] = 1;
        h = (h ^ first[k]) * 0x100000001b3ULL;
    }
    size_t k = m;
    for (size_t i = 0; i < n; i++)
        if (!listed[i])
            src[k++] = (uint32_t)i;
    free(listed);
    order_copy c = {v, ds->v, src, rb};
    int nt;
    par_for(n, rb, order_copy_rows, &c, &nt);
    if (src != at)
        free(src);
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
