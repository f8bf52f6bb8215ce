/* The curve's end (src/cluster/curve_end.h): its sorts and the replay of
 * its forest. */
#include "curve_end.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kern_sort.h"
#include "kernels.h"
#include "par.h"
#include "sort_f64.h"

typedef curve_edge cv_edge; /* a < b */

/* The replay's union-find (one thread): a node's parent + 1 (0: a root)
 * and at a root its size - 1, side by side (one cache line a visit), so
 * that calloc's zeros are every point a root of one. */
typedef struct uf_node {
    uint32_t up, more;
} uf_node;

static uint32_t uf_root(uf_node *u, uint32_t x)
{
    while (u[x].up) {
        const uint32_t p = u[x].up - 1;
        if (u[p].up)
            u[x].up = u[p].up; /* halving: x to its grandparent */
        x = p;
    }
    return x;
}

/* The forest's weights and ends in their sorted order (curve_end_sorts),
 * gathered on the cores. */
typedef struct cv_gather {
    const cv_edge *e;
    const uint32_t *ord;
    double *w;
    uint64_t *ab;
} cv_gather;

static void gather_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const cv_gather *g = ctx;
    for (size_t k = a; k < b; k++) {
        const cv_edge *x = &g->e[g->ord[k]];
        g->w[k] = x->w;
        g->ab[k] = (uint64_t)x->a << 32 | x->b;
    }
}

/* The final sorts: the forest's weights (ascending: the order among equal
 * weights is free, curve_end_replay records a weight's result after all its
 * edges) into *w, their edges' ends (a << 32 | b) into *ab, the core
 * distances and the reachabilities in place; on the engine's device where
 * it has one (kernels/kern_sort.h: the same values and order, the three
 * in one pass), else, or where that fails, on the cores (src/sort_f64.c,
 * slower than the device at 10^6 points: kernels/kern_sort.cu).
 * The gather on the cores. */
void curve_end_sorts(int dev, const cv_edge *e, size_t m, double *core, double *reach, size_t n,
                     double **w_out, uint64_t **ab_out)
{
    double *w = xmalloc((m ? m : 1) * sizeof *w);
    uint32_t *ord = xmalloc((m ? m : 1) * sizeof *ord);
    for (size_t k = 0; k < m; k++)
        w[k] = e[k].w;
    const kern_sort_job jobs[3] = {{w, m, ord}, {core, n, NULL}, {reach, n, NULL}};
    kern_trace_mark("curve sorts: weights");
    if (dev < 0 || kern_sort_f64(dev, jobs, 3) != 0) {
        sort_f64_order(w, m, ord);
        sort_f64(core, n);
        sort_f64(reach, n);
    }
    err_clear();
    kern_trace_mark("curve sorts: sorted");
    double *ws = xmalloc((m ? m : 1) * sizeof *ws);
    uint64_t *ab = xmalloc((m ? m : 1) * sizeof *ab);
    cv_gather g = {e, ord, ws, ab};
    int nt;
    par_for(m, 4, gather_range, &g, &nt);
    free(ord);
    free(w);
    *w_out = ws;
    *ab_out = ab;
    kern_trace_mark("curve sorts: gathered");
}

/* The largest core component as eps grows: the forest's edges in
 * ascending weight (ends ab, a << 32 | b; weights c->edge2), then the
 * first point's activation (curve_end_first: core2 ascending; at core2[0]
 * the largest is 1, no later activation changes it, and no edge is
 * lighter than its ends' core distances), so that the edges can be
 * replayed before the core distances are back (the curve's end on the
 * device hands the forest first). A weight's records after all its
 * edges; big_at[0] is the activation's place. The host's one thread: the
 * joined sizes need the edges in order. A row's parent and size share a
 * node and no activation is replayed, less than half the time of two
 * arrays and every activation replayed (the MNIST-like set's 44,510
 * edges); the ends are read apart from the weights, faster than 16-byte
 * edges from the device's copy: the 8-byte ends and the nodes stay in the
 * core's cache together. */
void curve_end_replay(dbscan_curve *c, const uint64_t *ab)
{
    const size_t n = c->n, ne = c->nedge;
    const double *w = c->edge2;
    c->big_at = xmalloc((ne + 2) * sizeof *c->big_at);
    c->big = xmalloc((ne + 2) * sizeof *c->big);
    c->big_at[0] = -INFINITY; /* curve_end_first's */
    c->big[0] = 1;
    c->nbig = 1;
    if (n == 0 || ne == 0)
        return;
    uf_node *u = xcalloc(n, sizeof *u);
    size_t best = 1;
    for (size_t k = 0; k < ne; k++) {
        if (k + 16 < ne) { /* the ends some edges ahead on their way (a random read each) */
            __builtin_prefetch(&u[ab[k + 16] >> 32], 1);
            __builtin_prefetch(&u[(uint32_t)ab[k + 16]], 1);
        }
        uint32_t ra = uf_root(u, (uint32_t)(ab[k] >> 32)), rb = uf_root(u, (uint32_t)ab[k]);
        if (ra == rb)
            continue;
        if (u[ra].more < u[rb].more) { /* by size: only sizes are asked */
            const uint32_t t = ra;
            ra = rb;
            rb = t;
        }
        u[rb].up = ra + 1;
        u[ra].more += u[rb].more + 1;
        if ((size_t)u[ra].more + 1 > best) {
            best = (size_t)u[ra].more + 1;
            if (c->big_at[c->nbig - 1] == w[k])
                c->big[c->nbig - 1] = best;
            else {
                c->big_at[c->nbig] = w[k];
                c->big[c->nbig++] = best;
            }
        }
    }
    free(u);
}

void curve_end_first(dbscan_curve *c, const double *core2)
{
    if (c->n == 0 || !(core2[0] <= c->max2)) {
        c->nbig = 0; /* no point core within max, so no edge */
        return;
    }
    c->big_at[0] = core2[0];
    if (c->nbig > 1 && c->big_at[1] == core2[0]) { /* an edge at the activation's weight */
        c->nbig--;
        memmove(c->big_at, c->big_at + 1, c->nbig * sizeof *c->big_at);
        memmove(c->big, c->big + 1, c->nbig * sizeof *c->big);
    }
}

void curve_end_take(void *ctx, int what, const void *v, size_t m)
{
    curve_end *x = ctx;
    switch (what) {
    case CURVE_END_WEIGHTS:
        x->c->nedge = m;
        x->c->edge2 = xmalloc((m ? m : 1) * sizeof *x->c->edge2);
        memcpy(x->c->edge2, v, m * sizeof *x->c->edge2);
        break;
    case CURVE_END_ENDS:
        if (x->keep_ends) {
            x->c->edge_ab = xmalloc((m ? m : 1) * sizeof *x->c->edge_ab);
            memcpy(x->c->edge_ab, v, m * sizeof *x->c->edge_ab);
        }
        curve_end_replay(x->c, v);
        kern_trace_mark("curve end: replay");
        break;
    default:
        memcpy(what == CURVE_END_CORE ? x->core : x->reach, v, m * sizeof(double));
    }
}
