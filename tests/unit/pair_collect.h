/* Test helper: a pair sink that keeps every pair with its distance, and
 * the (i, j) order to sort them by. Shared by t_engine_emul and the
 * element-type tests (same_types.h). */
#ifndef TCJ_T_PAIR_COLLECT_H
#define TCJ_T_PAIR_COLLECT_H

#include <stdint.h>
#include <stdlib.h>

#include "engine.h"

typedef struct pair_rec {
    uint32_t i, j;
    double d2;
} pair_rec;

typedef struct collect {
    pair_rec *p;
    size_t len, cap;
} collect;

static int collect_put(void *ctx, const pair_batch *b)
{
    collect *c = ctx;
    if (c->len + b->k > c->cap) {
        c->cap = (c->len + b->k) * 2;
        c->p = realloc(c->p, c->cap * sizeof *c->p);
    }
    for (size_t k = 0; k < b->k; k++)
        c->p[c->len++] = (pair_rec){b->i[k], b->j[k], b->d2[k]};
    return 0;
}

static int by_ij(const void *x, const void *y)
{
    const pair_rec *a = x, *b = y;
    return a->i != b->i ? (a->i > b->i) - (a->i < b->i) : (a->j > b->j) - (a->j < b->j);
}

#endif
