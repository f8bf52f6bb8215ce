/* The rows a later join of DBSCAN's curve must query
 * (src/cluster/curve_later.h). */
#include "curve_later.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernels.h"
#include "par.h"

typedef curve_edge cv_edge; /* a < b */

/* curve_later_rows's loops but the sizes' on the cores (par_for's fixed
 * ranges, so the rows come in ascending order, as on one thread): five
 * loops of random reads, slow on one core at 10^6 rows. */
typedef struct cv_later {
    const uint32_t *comp, *part;
    const cv_edge *bound;
    const double *core;
    uint32_t *first, big;
    int pick_big; /* later_count, later_fill: the largest's rows, not the others' */
    uint8_t *mixed, *open;
    int any; /* some part holds two open components */
    size_t *rows;
    size_t at[PAR_MAX_THREADS];
} cv_later;

/* Row i core within max and its component open by its lists. */
static inline int later_in(const cv_later *x, size_t i)
{
    return x->core[i] != INFINITY && x->bound[x->comp[i]].w != INFINITY;
}

/* The parts holding rows of two open components (mixed): the first
 * component a part meets taken by compare-and-swap, any other marks it. */
static void later_parts(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    cv_later *x = ctx;
    for (size_t i = a; i < b; i++) {
        if (!later_in(x, i))
            continue;
        const uint32_t p = x->part[i], r = x->comp[i];
        uint32_t f = __atomic_load_n(&x->first[p], __ATOMIC_RELAXED);
        if (f == UINT32_MAX) {
            if (__atomic_compare_exchange_n(&x->first[p], &f, r, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                continue;
        }
        if (f != r && !__atomic_load_n(&x->mixed[p], __ATOMIC_RELAXED)) {
            __atomic_store_n(&x->mixed[p], 1, __ATOMIC_RELAXED);
            __atomic_store_n(&x->any, 1, __ATOMIC_RELAXED);
        }
    }
}

static void later_open(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    cv_later *x = ctx;
    for (size_t i = a; i < b; i++)
        if (later_in(x, i) && x->mixed[x->part[i]] &&
            !__atomic_load_n(&x->open[x->comp[i]], __ATOMIC_RELAXED))
            __atomic_store_n(&x->open[x->comp[i]], 1, __ATOMIC_RELAXED);
}

static inline int later_picked(const cv_later *x, size_t i)
{
    return x->open[x->comp[i]] && (x->comp[i] == x->big) == x->pick_big;
}

static void later_count(void *ctx, int t, size_t a, size_t b)
{
    cv_later *x = ctx;
    size_t m = 0;
    for (size_t i = a; i < b; i++)
        m += later_picked(x, i);
    x->at[t] = m;
}

static void later_fill(void *ctx, int t, size_t a, size_t b)
{
    cv_later *x = ctx;
    size_t m = x->at[t];
    for (size_t i = a; i < b; i++)
        if (later_picked(x, i))
            x->rows[m++] = i;
}

/* curve_later_rows on the calling thread, its loops fused: on small sets
 * the cores' seven loops cost more in wake-ups (src/par.c) than their
 * work. The
 * same rows in the same order: the same rules, in row order. */
static size_t later_rows_one(cv_later *x, size_t n, size_t *rows, size_t *nbig)
{
    const uint32_t *comp = x->comp;
    for (size_t i = 0; i < n; i++) { /* the parts that meet two open components */
        if (!later_in(x, i))
            continue;
        const uint32_t p = x->part[i];
        if (x->first[p] == UINT32_MAX)
            x->first[p] = comp[i];
        else if (x->first[p] != comp[i])
            x->mixed[p] = 1, x->any = 1;
    }
    if (!x->any)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (later_in(x, i) && x->mixed[x->part[i]])
            x->open[comp[i]] = 1;
    /* the largest open component: the first to reach the greatest size
     * in row order; the open rows */
    uint32_t *size = x->first; /* reused: the parts' first components are done */
    memset(size, 0, n * sizeof *size);
    size_t big = n, all = 0;
    for (size_t i = 0; i < n; i++)
        if (x->open[comp[i]]) {
            all++;
            if (++size[comp[i]] > (big < n ? size[big] : 0))
                big = comp[i];
        }
    const size_t nb = big < n ? size[big] : 0, m = all - nb;
    if (m == 0)
        return 0;
    size_t a = 0, b = m;
    for (size_t i = 0; i < n; i++)
        if (x->open[comp[i]])
            rows[comp[i] == big ? b++ : a++] = i;
    *nbig = nb;
    return m;
}

/* Rows up to which curve_later_rows runs on the calling thread
 * (later_rows_one): about where its four loops over the rows cost what
 * the cores' seven wake-ups do. */
#define LATER_ONE_MAX ((size_t)1 << 16)

/* The rows a later join must query, into rows (their count returned):
 * the members of the components still open (curve_merging_run: a member's
 * full list all inside, bound[root] set) but the largest of them. Every
 * edge that leaves an open component ends in another open one (one with
 * a known edge out would have been merged), so these rows meet every
 * edge that leaves any of them; none: no component has an edge left.
 * At 10^6 x 128 the join after the first was a whole join at max that
 * mostly found nothing.
 *
 * A component open by its lists is closed too when, in each part (part[i],
 * the core join's: src/engine.h) it meets, every point core within max is
 * in it or in a component closed already: an edge of weight at most max
 * joins two such points (w >= both core distances) of one part, and a
 * closed component has no edge out, so none ends there either. With
 * exact's cluster cut the clusters of a clustered set close so where
 * their members' lists (each point's 64 nearest) could not prove it: the
 * join that proved it on gauss 10^6 x 128 queried 664,106 rows. An edge
 * out of an open component ends in an open one whose part holds both,
 * which is then open too, so the largest may still be left out. */
size_t curve_later_rows(const uint32_t *comp, const cv_edge *bound, const double *core,
                        const uint32_t *part, size_t n, size_t *rows, size_t *nbig)
{
    *nbig = 0;
    /* every loop weighs PAR_WEIGHT_RANDOM (the components' bounds read at
     * random); later_count and later_fill split alike (offsets) */
    cv_later x = {.comp = comp, .part = part, .bound = bound, .core = core, .rows = rows};
    x.first = xmalloc(n * sizeof *x.first);
    x.mixed = xcalloc(n, 1);
    memset(x.first, 0xff, n * sizeof *x.first);
    if (n <= LATER_ONE_MAX) {
        x.open = xcalloc(n, 1);
        const size_t m = later_rows_one(&x, n, rows, nbig);
        kern_trace_mark("later rows: one thread");
        free(x.first);
        free(x.mixed);
        free(x.open);
        return m;
    }
    int nt;
    kern_trace_mark("later rows: arrays");
    par_for(n, PAR_WEIGHT_RANDOM, later_parts, &x, &nt);
    kern_trace_mark("later rows: parts");
    /* No part holds two open components: none is left open (a cut's
     * clusters, each its own part): the passes below spared, each a walk
     * over every row. */
    if (!x.any) {
        free(x.first);
        free(x.mixed);
        return 0;
    }
    uint32_t *size = xcalloc(n, sizeof *size);
    x.open = xcalloc(n, 1);
    par_for(n, PAR_WEIGHT_RANDOM, later_open, &x, &nt);
    kern_trace_mark("later rows: open");
    /* the largest open component: the first to reach the greatest size
     * in row order (one thread) */
    size_t big = n;
    for (size_t i = 0; i < n; i++)
        if (x.open[comp[i]] && ++size[comp[i]] > (big < n ? size[big] : 0))
            big = comp[i];
    x.big = big < n ? (uint32_t)big : UINT32_MAX;
    kern_trace_mark("later rows: largest");
    par_for(n, PAR_WEIGHT_RANDOM, later_count, &x, &nt);
    const size_t m = par_offsets(x.at, nt);
    par_for(n, PAR_WEIGHT_RANDOM, later_fill, &x, &nt);
    if (m > 0 && x.big != UINT32_MAX) { /* then the largest's rows */
        x.pick_big = 1;
        x.rows = rows + m;
        par_for(n, PAR_WEIGHT_RANDOM, later_count, &x, &nt);
        *nbig = par_offsets(x.at, nt);
        par_for(n, PAR_WEIGHT_RANDOM, later_fill, &x, &nt);
    }
    free(size);
    free(x.first);
    free(x.mixed);
    free(x.open);
    return m;
}
