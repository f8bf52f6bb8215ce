/* DBSCAN for every eps at once (src/cluster/dbscan_curve.h): the core distances
 * (from the join at max on the device where the engine can, else from its
 * k-distance: core_distances), then Boruvka rounds over the pairs of the
 * join at max: on the device where the engine has a curve_round (the
 * same lists built there: src/engine_gpu_curve.c), else through the sink
 * below. The sink may be called from several threads (the CPU driver
 * serialises its calls today; others need not): it updates the lists
 * below under a mutex, held once per batch, and splits a large batch's
 * work by point over the cores (src/pair_par.h: the same lists).
 *
 * Each join leaves every point its DIST_LIST cheapest edges that leave its
 * component (src/dist.h: DIST_LIST slots a point, O(n)), and after it
 * every component whose cheapest outgoing edge those lists prove is
 * merged, as often as they prove one. A point's edges that are not in its
 * full list are heavier than the list's heaviest (the total order), or
 * were inside its component already; a component's cheapest outgoing edge
 * is proved when it is lighter than the heaviest list edge of each member
 * whose list has no edge leaving it. Adding any component's cheapest
 * outgoing edge keeps the forest the one minimum forest (the cut property;
 * the order is total), so the curve is the same as with a join a round;
 * the joins fall from one a halving of the components (and one to find
 * none left) to those the lists cannot decide: at 10^5 x 16, S = 64, five
 * joins became two on the 2-core build machine. A later join queries only
 * the rows of the components left open (later_rows), and none runs where
 * no two are.
 *
 * Under several ranks (src/dist.h) each rank's sink sees its share of the
 * pairs; the reachabilities (by minimum) and the lists (merged), O(n), are
 * reduced after each join, so every rank takes the same steps. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan_curve.h"
#include "curve_knn.h"
#include "dataset_order.h"
#include "dist.h"
#include "err.h"
#include "kdist.h"
#include "kern_sort.h"
#include "kernels.h"
#include "mem.h"
#include "pair_par.h"
#include "par.h"
#include "sort_f64.h"

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

typedef dist_edge cv_edge; /* a < b */

/* Edges compare by (w, a, b) (dist_edge_before): a total order, so
 * Boruvka's cheapest edges never close a cycle. */

typedef struct cv_round {
    pthread_mutex_t mu;
    size_t n;
    const double *core2;
    double max2;
    const uint32_t *comp; /* each point's component (its root) this round */
    double *reach2;       /* first round only: NULL after */
    dist_list *list;      /* point p's cheapest edges leaving its component */
} cv_round;

/* The batch's work for the points in [lo, hi) (src/pair_par.h): the
 * query row's reachability, and each endpoint's list, in batch order. */
static void round_range(void *vctx, const pair_batch *b, size_t lo, size_t hi)
{
    cv_round *r = vctx;
    for (size_t k = 0; k < b->k; k++) {
        const uint32_t i = b->i[k], j = b->j[k];
        const int in_i = i >= lo && i < hi, in_j = j >= lo && j < hi;
        if (!(in_i || in_j) || i == j)
            continue;
        double d2 = b->d2[k], cj = r->core2[j], ci = r->core2[i];
        if (in_i && r->reach2) {
            double v = cj > d2 ? cj : d2;
            if (v < r->reach2[i])
                r->reach2[i] = v;
        }
        double w = ci > cj ? ci : cj;
        if (d2 > w)
            w = d2;
        if (!(w <= r->max2))
            continue;
        if (r->comp[i] == r->comp[j])
            continue;
        const cv_edge e = {w, i < j ? i : j, i < j ? j : i};
        if (in_i)
            dist_list_put(&r->list[i], &e);
        if (in_j)
            dist_list_put(&r->list[j], &e);
    }
}

static int round_put(void *vctx, const pair_batch *b)
{
    cv_round *r = vctx;
    pthread_mutex_lock(&r->mu);
    pair_par(b, r->n, round_range, r);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* A later join's pairs over the rows reordered (later_rows): each index
 * back to its row (at), then round_range as above. */
typedef struct cv_order {
    cv_round *r;
    const size_t *at;
    uint32_t *i, *j;
    size_t cap;
} cv_order;

static int order_put(void *vctx, const pair_batch *b)
{
    cv_order *o = vctx;
    pthread_mutex_lock(&o->r->mu);
    if (b->k > o->cap) {
        o->cap = b->k;
        o->i = xrealloc(o->i, o->cap * sizeof *o->i);
        o->j = xrealloc(o->j, o->cap * sizeof *o->j);
    }
    for (size_t k = 0; k < b->k; k++) {
        o->i[k] = (uint32_t)o->at[b->i[k]];
        o->j[k] = (uint32_t)o->at[b->j[k]];
    }
    const pair_batch t = {b->k, o->i, o->j, b->d2};
    pair_par(&t, o->r->n, round_range, o->r);
    pthread_mutex_unlock(&o->r->mu);
    return 0;
}

/* later_rows's loops but the sizes' on the cores (par_for's fixed
 * ranges, so the rows come in ascending order, as on one thread): five
 * loops over 10^6 rows took 30-37 ms on one core of the H200 host. */
typedef struct cv_later {
    const uint32_t *comp, *part;
    const cv_edge *bound;
    const double *core;
    uint32_t *first, big;
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

static void later_count(void *ctx, int t, size_t a, size_t b)
{
    cv_later *x = ctx;
    size_t m = 0;
    for (size_t i = a; i < b; i++)
        m += x->open[x->comp[i]] && x->comp[i] != x->big;
    x->at[t] = m;
}

static void later_fill(void *ctx, int t, size_t a, size_t b)
{
    cv_later *x = ctx;
    size_t m = x->at[t];
    for (size_t i = a; i < b; i++)
        if (x->open[x->comp[i]] && x->comp[i] != x->big)
            x->rows[m++] = i;
}

/* The rows a later join must query, into rows (their count returned):
 * the members of the components still open (merge_listed: a member's
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
static size_t later_rows(const uint32_t *comp, const cv_edge *bound, const double *core,
                         const uint32_t *part, size_t n, size_t *rows)
{
    /* every loop weighs PAR_WEIGHT_RANDOM (the components' bounds read at
     * random: the first took 0.3-0.4 ms over 60,000 rows on one core of
     * the H200 host); later_count and later_fill split alike (offsets) */
    cv_later x = {.comp = comp, .part = part, .bound = bound, .core = core, .rows = rows};
    x.first = xmalloc(n * sizeof *x.first);
    x.mixed = xcalloc(n, 1);
    memset(x.first, 0xff, n * sizeof *x.first);
    int nt;
    par_for(n, PAR_WEIGHT_RANDOM, later_parts, &x, &nt);
    /* No part holds two open components: none is left open (a cut's
     * clusters, each its own part): the passes below spared (0.5 ms at
     * 60,000 points on the H200 host). */
    if (!x.any) {
        free(x.first);
        free(x.mixed);
        return 0;
    }
    uint32_t *size = xcalloc(n, sizeof *size);
    x.open = xcalloc(n, 1);
    par_for(n, PAR_WEIGHT_RANDOM, later_open, &x, &nt);
    /* the largest open component: the first to reach the greatest size
     * in row order (one thread) */
    size_t big = n;
    for (size_t i = 0; i < n; i++)
        if (x.open[comp[i]] && ++size[comp[i]] > (big < n ? size[big] : 0))
            big = comp[i];
    x.big = big < n ? (uint32_t)big : UINT32_MAX;
    par_for(n, PAR_WEIGHT_RANDOM, later_count, &x, &nt);
    const size_t m = par_offsets(x.at, nt);
    par_for(n, PAR_WEIGHT_RANDOM, later_fill, &x, &nt);
    free(size);
    free(x.first);
    free(x.mixed);
    free(x.open);
    return m;
}

/* Each root v's edge best[v] (w = INFINITY: none; roots[0..nr)) into the
 * forest where it joins two components, on the cores: the number added.
 * comp holds every row's root as the pass began. The edges are the
 * components' lightest out (proved), so they make no cycle but the one of
 * two components that chose one edge (the total order: each chose its
 * lightest), taken once, by the lesser root; so each link below finds two
 * roots apart, and a compare-and-swap of the greater root's parent to the
 * lesser (both found again after a lost race) keeps every root its
 * component's least row, as the one thread did. Then (links_stat) each
 * root linked passes its stat to its new root, under a lock of the new
 * root's stripe, and marks it changed (chg). One thread did this in
 * 70-92 ms of the H200 host's 150-180 ms merging at 10^6 points (the
 * first pass's 10^6 roots, a find a root). */
typedef struct cv_links {
    uint32_t *parent;
    const uint32_t *comp, *roots;
    const cv_edge *best;
    cv_edge *stat, *forest;
    uint8_t *chg;
    size_t at[PAR_MAX_THREADS]; /* each range's first forest slot */
} cv_links;

#define CV_STRIPES 4096
static uint8_t cv_stripe[CV_STRIPES];

/* x's root, halving the path on the way: a pointer moved to a grandparent
 * is still an ancestor whatever links race with it (a root's parent,
 * itself, is never moved here) */
static uint32_t links_find(uint32_t *p, uint32_t x)
{
    for (;;) {
        const uint32_t y = __atomic_load_n(&p[x], __ATOMIC_RELAXED);
        if (y == x)
            return x;
        const uint32_t z = __atomic_load_n(&p[y], __ATOMIC_RELAXED);
        if (z != y)
            __atomic_store_n(&p[x], z, __ATOMIC_RELAXED);
        x = z;
    }
}

/* Whether root v's edge joins the forest (it has one; not the other
 * root's too where that root is the lesser), and the root it leads to. */
static int links_takes(const cv_links *l, uint32_t v, uint32_t *u)
{
    const cv_edge *e = &l->best[v];
    if (e->w == INFINITY)
        return 0;
    *u = l->comp[e->a] == v ? l->comp[e->b] : l->comp[e->a];
    const cv_edge *f = &l->best[*u];
    return !(*u < v && f->a == e->a && f->b == e->b);
}

static void links_count(void *ctx, int t, size_t a, size_t b)
{
    cv_links *l = ctx;
    size_t m = 0;
    uint32_t u;
    for (size_t k = a; k < b; k++)
        m += (size_t)links_takes(l, l->roots[k], &u);
    l->at[t] = m;
}

static void links_range(void *ctx, int t, size_t a, size_t b)
{
    cv_links *l = ctx;
    size_t at = l->at[t];
    for (size_t k = a; k < b; k++) {
        const uint32_t v = l->roots[k];
        uint32_t u;
        if (!links_takes(l, v, &u))
            continue;
        for (;;) {
            uint32_t ra = links_find(l->parent, v), rb = links_find(l->parent, u);
            if (ra > rb) {
                const uint32_t x = ra;
                ra = rb;
                rb = x;
            }
            uint32_t want = rb;
            if (__atomic_compare_exchange_n(&l->parent[rb], &want, ra, 0, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
                break;
        }
        l->forest[at++] = l->best[v];
    }
}

static void links_stat(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    cv_links *l = ctx;
    for (size_t k = a; k < b; k++) {
        const uint32_t v = l->roots[k];
        if (l->parent[v] == v)
            continue;
        const uint32_t r = links_find(l->parent, v);
        uint8_t *lock = &cv_stripe[r % CV_STRIPES];
        while (__atomic_test_and_set(lock, __ATOMIC_ACQUIRE))
            ;
        if (dist_edge_before(&l->stat[v], &l->stat[r]))
            l->stat[r] = l->stat[v];
        l->chg[r] = 1;
        __atomic_clear(lock, __ATOMIC_RELEASE);
    }
}

/* The edges counted by range first, so each range writes its own slots
 * (one counter for all the cores cost more than the links). */
static size_t merge_best(uint32_t *parent, const uint32_t *comp, const cv_edge *best,
                         const uint32_t *roots, size_t nr, cv_edge *stat, uint8_t *chg,
                         cv_edge *forest, size_t *nf)
{
    cv_links l = {parent, comp, roots, best, stat, forest, chg, {0}};
    int nt;
    par_for(nr, 8, links_count, &l, &nt);
    size_t added = 0;
    for (int t = 0; t < nt; t++) {
        const size_t m = l.at[t];
        l.at[t] = *nf + added;
        added += m;
    }
    if (added == 0)
        return 0;
    par_for(nr, 8, links_range, &l, &nt);
    par_for(nr, 8, links_stat, &l, &nt);
    *nf += added;
    return added;
}

/* The merging after each join (merge_listed): the points whose list may
 * still hold an edge out of their component (active), the components'
 * roots, and each root's lightest heaviest-list-edge among the members
 * whose full list is all inside (stat). A list that is all inside stays so
 * (components only grow), so such a point leaves the active set for good
 * and its bound joins stat. A component that took no other in the last
 * pass has the same members, and each member's edges lead out exactly as
 * before (an edge turns inward only when its ends' components join), so
 * its lightest edge out (cand) is the last pass's: a pass scans the active
 * members of the components that changed (chg) and visits the roots.
 * Scanning every list each pass took most of half a second at 10^6
 * points: some 200,000 of 300,000 points keep an edge out of components
 * that wait for the next join, pass after pass. */
typedef struct cv_merge {
    uint32_t *act, *roots;
    size_t nact, nroots;
    cv_edge *stat, *cand;
    uint8_t *chg;
    /* a pass's scan, by active index (scan_range): what it found, the
     * point's root, and the edge (its lightest out, or its bound) */
    uint8_t *kind;
    uint32_t *root;
    cv_edge *res;
    /* each point's list in ascending order from the join on (list_sort),
     * and how many of its first edges are inside its component: they stay
     * so (components only grow), so a scan starts past them and stops at
     * the first edge out, its lightest: one component read a point where
     * reading all eight took most of the merging (10^6 points, random
     * reads) */
    uint8_t *cur;
    size_t passes, scanned; /* the trace's */
    double seconds, s_init, s_scan, s_reduce, s_best;
} cv_merge;

/* The bytes a point of dbscan_curve_run's arrays: core, reach, kb, part,
 * list, parent, comp, best, forest, bound, later, at and the merging's. */
#define CV_POINT_BYTES                                                                             \
    (3 * sizeof(double) + 3 * sizeof(uint32_t) + sizeof(dist_list) + 3 * sizeof(cv_edge) +         \
     2 * sizeof(size_t) + 3 * sizeof(uint32_t) + 3 * sizeof(cv_edge) + 3)

/* Each row's root into comp without writing parent (the cores share it),
 * then parent flattened to it: the scan reads one comp a point. */
typedef struct cv_flat {
    uint32_t *parent, *comp;
} cv_flat;

static void flat_find(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    cv_flat *f = ctx;
    for (size_t v = a; v < b; v++) {
        uint32_t x = (uint32_t)v;
        while (f->parent[x] != x)
            x = f->parent[x];
        f->comp[v] = x;
    }
}

static void flat_set(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    cv_flat *f = ctx;
    memcpy(f->parent + a, f->comp + a, (b - a) * sizeof *f->parent);
}

static void flatten(uint32_t *parent, uint32_t *comp, size_t n)
{
    cv_flat f = {parent, comp};
    int nt;
    par_for(n, 4, flat_find, &f, &nt);
    par_for(n, 4, flat_set, &f, &nt);
}

enum { SCAN_KEEP, SCAN_OUT, SCAN_INSIDE };

/* A new join's lists (merge_listed): each list of [a, b) in ascending
 * (w, a, b) order (a join leaves a max-heap), its cursor at its first
 * edge (cv_merge.cur); each point active, no bound yet. */
typedef struct cv_lsort {
    dist_list *list;
    cv_merge *m;
} cv_lsort;

static void list_clear(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    dist_list *l = ctx;
    for (size_t p = a; p < b; p++)
        l[p].len = 0;
}

static void list_sort(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const cv_lsort *x = ctx;
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t p = a; p < b; p++) {
        x->m->act[p] = (uint32_t)p;
        x->m->stat[p] = none;
        x->m->chg[p] = 1;
        dist_list *l = &x->list[p];
        for (uint32_t k = 1; k < l->len; k++) {
            const cv_edge e = l->e[k];
            uint32_t j = k;
            for (; j > 0 && dist_edge_before(&e, &l->e[j - 1]); j--)
                l->e[j] = l->e[j - 1];
            l->e[j] = e;
        }
        x->m->cur[p] = 0;
    }
}

/* A pass's scan of the active points in [a, b) (their roots in comp,
 * read only): a point of a component that did not change keeps what the
 * last pass found (SCAN_KEEP); else its lightest list edge out
 * (SCAN_OUT: the first past the edges inside, its cursor moved past
 * them), or, its list all inside, its bound (SCAN_INSIDE: p's next edge
 * out, unknown, is heavier than a full list's heaviest (the last) and,
 * for lists from the K nearest (kb), not lighter than kb[p]: below any
 * edge of weight kb[p] is {kb[p], 0, 0}). Each index (and point) written
 * by one thread; the reduction by root follows on one (merge_listed). */
typedef struct cv_scan {
    const cv_round *r;
    const double *kb;
    const uint32_t *comp;
    cv_merge *m;
} cv_scan;

static void scan_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const cv_scan *x = ctx;
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    cv_merge *m = x->m;
    for (size_t i = a; i < b; i++) {
        const uint32_t p = m->act[i], rp = x->comp[p];
        m->root[i] = rp;
        if (!m->chg[rp]) {
            m->kind[i] = SCAN_KEEP;
            continue;
        }
        const dist_list *l = &x->r->list[p];
        uint32_t c = m->cur[p];
        for (; c < l->len; c++) {
            const uint32_t q = l->e[c].a == p ? l->e[c].b : l->e[c].a;
            if (x->comp[q] != rp)
                break;
        }
        m->cur[p] = (uint8_t)c;
        if (c < l->len) {
            m->kind[i] = SCAN_OUT;
            m->res[i] = l->e[c];
            continue;
        }
        cv_edge pb = l->len == DIST_LIST ? l->e[DIST_LIST - 1] : none;
        if (x->kb && x->kb[p] != INFINITY && x->kb[p] <= pb.w)
            pb = (cv_edge){x->kb[p], 0, 0};
        m->kind[i] = SCAN_INSIDE;
        m->res[i] = pb;
    }
}

/* Each root's bound and proved edge (best; none where the next join must
 * decide: open) for the roots of [a, b), its changed mark cleared. */
typedef struct cv_roots {
    cv_merge *m;
    cv_edge *bound, *best;
    size_t open[PAR_MAX_THREADS];
} cv_roots;

static void roots_range(void *ctx, int t, size_t a, size_t b)
{
    cv_roots *x = ctx;
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t k = a; k < b; k++) {
        const uint32_t v = x->m->roots[k];
        x->m->chg[v] = 0;
        x->bound[v] = x->m->stat[v];
        x->best[v] = x->m->cand[v];
        if (x->bound[v].w != INFINITY && !dist_edge_before(&x->best[v], &x->bound[v])) {
            x->best[v] = none;
            x->open[t]++;
        }
    }
}

/* After a join: the components whose cheapest outgoing edge the lists
 * prove (right after the join, every component that has one), merged,
 * again while any is. Returns the number of components that may still
 * have an outgoing edge the lists cannot name (open: cv_more), 0 when
 * none has one. bound[v]: the lightest heaviest-list-edge among v's
 * members whose full list has no edge leaving v. On return comp holds
 * every row's root, bound every root's. */
static size_t merge_listed(const cv_round *r, const double *kb, uint32_t *parent, uint32_t *comp,
                           cv_edge *best, cv_edge *bound, size_t n, cv_edge *forest, size_t *nf,
                           cv_merge *m)
{
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    const double t0 = engine_now();
    /* A new join's lists: every point active again, no bound yet; comp is
     * current here (its roots are the components'). */
    cv_lsort ls = {r->list, m};
    int nt;
    par_for(n, 64, list_sort, &ls, &nt);
    m->nact = n;
    m->nroots = 0;
    for (size_t v = 0; v < n; v++)
        if (comp[v] == v)
            m->roots[m->nroots++] = (uint32_t)v;
    m->s_init += engine_now() - t0;
    cv_edge *cand = m->cand;
    for (int pass = 0;; pass++, m->passes++) {
        m->scanned += m->nact;
        for (size_t t = 0; t < m->nroots; t++)
            if (m->chg[m->roots[t]])
                cand[m->roots[t]] = none;
        /* every row's root (comp), then the active points scanned on the
         * cores and reduced by root here, in index order */
        if (pass)
            flatten(parent, comp, n);
        cv_scan sc = {r, kb, comp, m};
        const double ts = engine_now();
        par_for(m->nact, 16, scan_range, &sc, &nt);
        const double tr = engine_now();
        m->s_scan += tr - ts;
        size_t keep = 0; /* on one thread: by owner on 16 took longer (28-35 ms) */
        for (size_t t = 0; t < m->nact; t++) {
            const uint32_t rp = m->root[t];
            if (m->kind[t] == SCAN_INSIDE) { /* all inside: for good */
                if (dist_edge_before(&m->res[t], &m->stat[rp]))
                    m->stat[rp] = m->res[t];
                continue;
            }
            if (m->kind[t] == SCAN_OUT && dist_edge_before(&m->res[t], &cand[rp]))
                cand[rp] = m->res[t];
            m->act[keep++] = m->act[t];
        }
        m->nact = keep;
        const double tb = engine_now();
        m->s_reduce += tb - tr;
        cv_roots rs = {m, bound, best, {0}};
        par_for(m->nroots, 8, roots_range, &rs, &nt);
        size_t open = 0;
        for (int t = 0; t < nt; t++)
            open += rs.open[t];
        const size_t added =
            merge_best(parent, comp, best, m->roots, m->nroots, m->stat, m->chg, forest, nf);
        m->s_best += engine_now() - tb;
        if (added == 0) {
            flatten(parent, comp, n);
            m->seconds += engine_now() - t0;
            return open;
        }
        size_t nr = 0;
        for (size_t t = 0; t < m->nroots; t++)
            if (parent[m->roots[t]] == m->roots[t])
                m->roots[nr++] = m->roots[t];
        m->nroots = nr;
    }
}

/* Whether another join is needed after a merging that left open
 * components open: two or more. An edge that leaves an open component
 * ends in another open one (a closed component has no edge out, and one
 * with a known edge out would have been merged), so a lone open
 * component has none: later_rows would find no rows (it leaves the
 * largest out) after passes over every row. */
static int cv_more(size_t open)
{
    return open > 1;
}

/* After a merging done where the join's lists were (curve_merge_io):
 * comp and bound are its, parent flattened to comp, the forest grown; its
 * return is merge_listed's. */
static size_t merged_there(const curve_merge_io *cm, uint32_t *parent, size_t n, size_t *nf,
                           dbscan_curve *c)
{
    memcpy(parent, cm->comp, n * sizeof *parent);
    *nf = cm->nf;
    c->merges_device++;
    return cm->open;
}

/* One join at max: on the device where the engine can (its
 * curve_round: the pairs consumed there into the same lists), else
 * through the sink above. */
static int round_join(const engine *e, const join_spec *js, const curve_round_io *io,
                      int *on_device)
{
    join_result jr;
    memset(&jr, 0, sizeof jr);
    *on_device = 0;
    if (e->curve_round) {
        join_spec d = *js;
        d.engine = e;
        const int rc = e->curve_round(&d, io, &jr);
        if (rc != ENGINE_DECLINED) {
            *on_device = rc == 0;
            return rc;
        }
    }
    if (io->merge)
        io->merge->done = io->merge->finished = 0;
    /* the sink's lists start empty (the device's are written whole) */
    int nt;
    par_for(io->n, 16, list_clear, io->list, &nt);
    return engine_run(e, js, &jr);
}

typedef struct cv_progress {
    const dbscan_curve_spec *spec;
    double lo, span;
} cv_progress;

static void cv_prog(void *ctx, double frac)
{
    cv_progress *p = ctx;
    if (p->spec->progress)
        p->spec->progress(p->spec->progress_ctx, p->lo + p->span * frac);
}

/* The forest's weights and ends in their sorted order (final_sorts),
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
 * weights is free, replay_edges records a weight's result after all its
 * edges) into *w, their edges' ends (a << 32 | b) into *ab, the core
 * distances and the reachabilities in place; on the engine's device where
 * it has one (kernels/kern_sort.h: the same values and order, the three
 * in one pass), else, or where that fails, on the cores (src/sort_f64.c:
 * the three took 45-48 ms on the H200 host's 16 cores at 10^6 points).
 * The gather on the cores. */
static void final_sorts(int dev, const cv_edge *e, size_t m, double *core, double *reach, size_t n,
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
 * first point's activation (replay_first: core2 ascending; at core2[0]
 * the largest is 1, no later activation changes it, and no edge is
 * lighter than its ends' core distances), so that the edges can be
 * replayed before the core distances are back (the curve's end on the
 * device hands the forest first). A weight's records after all its
 * edges; big_at[0] is the activation's place. The host's one thread: the
 * joined sizes need the edges in order (on the H200 host, 44,510 edges of
 * the MNIST-like set: 0.8 ms with every activation replayed and parents
 * and sizes in two arrays, 0.3 ms so, from 16-byte edges the gather had
 * just written; from the device's copy 0.53 ms over 16-byte edges, 0.37
 * over the ends apart from the weights: the 8-byte ends and the nodes
 * stay in the core's cache together). */
static void replay_edges(dbscan_curve *c, const uint64_t *ab)
{
    const size_t n = c->n, ne = c->nedge;
    const double *w = c->edge2;
    c->big_at = xmalloc((ne + 2) * sizeof *c->big_at);
    c->big = xmalloc((ne + 2) * sizeof *c->big);
    c->big_at[0] = -INFINITY; /* replay_first's */
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

static void replay_first(dbscan_curve *c, const double *core2)
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

/* The curve's end on the device (curve_merge_io.take): the forest's
 * weights kept, its ends replayed while the device sorts the rest, the
 * sorted core distances and reachabilities copied to where the curve
 * keeps them. */
typedef struct cv_end {
    dbscan_curve *c;
    double *core, *reach;
} cv_end;

static void end_take(void *ctx, int what, const void *v, size_t m)
{
    cv_end *x = ctx;
    switch (what) {
    case CURVE_END_WEIGHTS:
        x->c->nedge = m;
        x->c->edge2 = xmalloc((m ? m : 1) * sizeof *x->c->edge2);
        memcpy(x->c->edge2, v, m * sizeof *x->c->edge2);
        break;
    case CURVE_END_ENDS:
        replay_edges(x->c, v);
        kern_trace_mark("curve end: replay");
        break;
    default:
        memcpy(what == CURVE_END_CORE ? x->core : x->reach, v, m * sizeof(double));
    }
}

/* The core distances (squared) into core[0..n), each above max^2 made
 * +inf: such a point is core at no eps the curve covers, and every use of
 * a core distance compares it with some eps^2 <= max^2. Below max^2 a
 * point's minPts-1 nearest others are all pairs of the join at max, so
 * they come from that join, which keeps each point's K nearest too (nn,
 * src/cluster/curve_knn.h: the forest's first round then needs no join):
 * - where the engine can (its curve_round, one process), its pairs
 *   consumed on the device (kern_curve_core): one PAIRS run, against
 *   exact's k-distance over every pair (an FP16 top-k pass of about three
 *   COUNT joins and two dozen FP64 joins: 3.1-3.4 s against a 0.41 s
 *   COUNT at 10^6 x 128, S = 64, on an H200);
 * - else through a host sink (curve_knn_join; TCJOIN_CURVE_CORE=join
 *   takes it where the device could).
 * The values are the join's own d2, so the curve's core points at eps are
 * exactly its dbscan's. Several ranks, TCJOIN_CURVE_CORE=kdist, and a K
 * that does not fit (curve_knn_width 0) take the engine's k-distance,
 * which gives the same values where they are at most max^2 (src/cluster/kdist.h),
 * and no nn (nn->K = 0). TCJOIN_CURVE_SINK=1 keeps the first round a
 * join of its own (no nn): the core distances from the device where it
 * can, else from the k-distance. */
static int core_distances(const engine *e, const dbscan_curve_spec *spec, int ranks, double *core,
                          dist_list *list, double *reach, double *kb, uint32_t *part,
                          curve_merge_io *merge, dbscan_curve *c)
{
    const dataset *ds = spec->ds;
    const size_t n = ds->n, k = spec->minpts - 1;
    cv_progress pg = {spec, 0, 0.2};
    const char *how = getenv("TCJOIN_CURVE_CORE"), *sink = getenv("TCJOIN_CURVE_SINK");
    const int by_kdist = how && strcmp(how, "kdist") == 0, by_sink = how && !strcmp(how, "join");
    /* TCJOIN_CURVE_SINK=1 (every round's lists through the host sink:
     * tests compare the routes) keeps the first round a join too. */
    const size_t K = ranks || by_kdist || (sink && !strcmp(sink, "1")) ? 0 : curve_knn_width(k, n);
    curve_knn nn = {0};
    join_spec js = {.ds = ds,
                    .engine = e,
                    .eps = spec->max,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = spec->opts,
                    .inner = 1,
                    .cancel = spec->cancel,
                    .progress = cv_prog,
                    .progress_ctx = &pg};
    int rc = ENGINE_DECLINED;
    size_t got = 0; /* the K the lists came from */
    if (e->curve_round && !ranks && !by_kdist && !by_sink) {
        /* with K, the first round's lists built on the device too (only
         * they come back: 152 bytes a point, not 12 K) */
        const curve_round_io io = {.n = n,
                                   .max2 = c->max2,
                                   .reach2 = reach,
                                   .list = list,
                                   .core_k = k,
                                   .core_out = core,
                                   .knn_k = K,
                                   .knn_kb = kb,
                                   .part = part,
                                   .merge = K ? merge : NULL};
        join_result jr;
        memset(&jr, 0, sizeof jr);
        rc = e->curve_round(&js, &io, &jr);
        c->core_device = rc == 0;
        kern_trace_mark("curve core: device round");
        if (rc == 0 && jr.precision[0])
            snprintf(c->precision, sizeof c->precision, "%s", jr.precision);
        if (rc == 0)
            got = K;
    }
    /* the K nearest are a shortcut: where they do not fit, the k-distance */
    if (rc == ENGINE_DECLINED && K && curve_knn_alloc(&nn, n, K) == 0) {
        if ((rc = curve_knn_join(e, &js, k, core, &nn)) == 0)
            got = K;
        else
            curve_knn_free(&nn);
    }
    if (rc == ENGINE_DECLINED) {
        kdist_spec ks = {.ds = ds,
                         .q0 = 0,
                         .q1 = n,
                         .k = (int)k,
                         .opts = spec->opts,
                         .out = core,
                         .cancel = spec->cancel,
                         .progress = cv_prog,
                         .progress_ctx = &pg};
        join_result kr;
        rc = kdist_run(e, &ks, &kr);
        if (!rc && kr.precision[0])
            snprintf(c->precision, sizeof c->precision, "%s", kr.precision);
    }
    if (rc)
        return rc;
    if (!c->core_device) /* the device's come capped (kern_curve_core) */
        for (size_t i = 0; i < n; i++)
            if (!(core[i] <= c->max2))
                core[i] = INFINITY;
    kern_trace_mark("curve core: capped");
    if (nn.K) { /* the host's route: the lists from its K nearest */
        curve_knn_lists(&nn, core, c->max2, reach, list, kb);
        curve_knn_free(&nn);
    }
    c->knn = got;
    return 0;
}

int dbscan_curve_run(const engine *e, const dbscan_curve_spec *spec, dbscan_curve *c)
{
    memset(c, 0, sizeof *c);
    const dataset *ds = spec->ds;
    if (!ds || ds->n == 0)
        return err_set(TCJ_EINVAL, "dbscan curve: no dataset loaded (use load or gen)");
    if (!(spec->max > 0) || !isfinite(spec->max))
        return err_set(TCJ_EINVAL, "dbscan curve: max must be a positive number");
    if (spec->minpts < 1 || spec->minpts > ds->n || spec->minpts > KDIST_MAX_K + 1)
        return err_set(TCJ_EINVAL, "dbscan curve: minpts must be 1 to %zu, got %zu",
                       ds->n < KDIST_MAX_K + 1 ? ds->n : (size_t)KDIST_MAX_K + 1, spec->minpts);
    if (ds->n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "dbscan curve: at most %u points", UINT32_MAX);
    if (spec->minpts > 1 && !e->kdist)
        return err_set(TCJ_EUNSUP,
                       "dbscan curve: engine %s has no k-distance computation (use cpu)", e->name);
    const size_t n = ds->n;
    kern_trace_mark("curve: start");
    double t0 = engine_now();
    c->n = n;
    c->minpts = spec->minpts;
    c->max = spec->max;
    c->max2 = spec->max * spec->max;
    snprintf(c->precision, sizeof c->precision, "%s", e->precision);

    /* What n sizes here, 299 bytes a point with the rounds' state below
     * (docs/CLUSTERING.md), checked as one (src/mem.h); the K nearest
     * come on top, sized to what is left (curve_knn_width). */
    if (mem_check("dbscan curve", "its per-point arrays", n, CV_POINT_BYTES, 0))
        return TCJ_ENOMEM;
    /* Core distances: the (minPts-1)-th nearest other point; 0 for
     * minPts = 1 (every point is core at any eps). */
    double *core = xcalloc(n, sizeof *core), *reach = xmalloc(n * sizeof *reach);
    double *kb = xmalloc(n * sizeof *kb); /* each point's D_p (src/cluster/curve_knn.h) */
    /* the core join's parts (later_rows): one unless it cut the rows */
    uint32_t *part = xcalloc(n ? n : 1, sizeof *part);
    /* 136 bytes a point: its pages faulted in on every core (par_zero),
     * not one at a time by the first writer; where the merging runs on the
     * device the lists stay there and these are never touched */
    dist_list *list = xmalloc(n * sizeof *list);
    const int ranks = dist && dist->nranks > 1 && dist->merge_lists && dist->min_f64;
    const char *mv = getenv("TCJOIN_CURVE_MERGE");
    const int dev_merge = !ranks && !(mv && !strcmp(mv, "host")) && e->curve_round;
    if (!dev_merge)
        par_zero(list, n * sizeof *list);
    /* parent, best, later, at and the merging's arrays (mg) wait until
     * the K nearest are gone (core_distances): 99 bytes a point less of
     * address space at the peak */
    uint32_t *parent = NULL, *comp = xmalloc(n * sizeof *comp);
    cv_edge *best = NULL;
    cv_edge *forest = xmalloc((n ? n : 1) * sizeof *forest);
    cv_edge *bound = xmalloc(n * sizeof *bound);
    for (size_t i = 0; i < n; i++)
        comp[i] = (uint32_t)i;
    /* What a device's copies fill, its pages faulted in on every core first
     * where they are fresh (src/par.h: a copy into fresh pages pays a
     * fault a page on one thread; the core join's 24 MB of results and the
     * merging's bounds and edges took some 20 ms of it at 10^6 points). */
    if (e->gpu) {
        void *const fill[] = {core, reach, kb, part, bound, forest};
        const size_t bytes[] = {n * sizeof *core, n * sizeof *reach, n * sizeof *kb,
                                n * sizeof *part, n * sizeof *bound, n * sizeof *forest};
        par_fault_in(fill, bytes, 6);
    }
    /* the merging after a device join, where its lists are (merge_listed's
     * results; TCJOIN_CURVE_MERGE=host: on the host, as tests compare) */
    cv_end end = {c, core, reach};
    curve_merge_io cm = {
        .comp = comp, .bound = bound, .forest = forest, .take = end_take, .take_ctx = &end};
    /* the rounds' state (made here: an error below frees it all at done) */
    double t1 = 0, tr_mark = 0, tr_rows = 0, tr_join = 0; /* the rounds' times */
    size_t nf = 0;                                        /* the forest's edges */
    cv_merge mg = {0};
    cv_round r;
    pthread_mutex_init(&r.mu, NULL);
    r.n = n;
    r.core2 = core;
    r.max2 = c->max2;
    r.comp = comp;
    r.reach2 = reach;
    r.list = list;
    /* later_rows's rows; the copy's rows (dataset_order_first) */
    size_t *later = NULL, *at = NULL;
    kern_trace_mark("curve: arrays");
    int rc = spec->minpts > 1 ? core_distances(e, spec, ranks, core, list, reach, kb, part,
                                               dev_merge ? &cm : NULL, c)
                              : 0;
    c->kdist_seconds = engine_now() - t0;
    if (rc)
        goto done;
    parent = xmalloc(n * sizeof *parent);
    best = xmalloc(n * sizeof *best);
    later = xmalloc(n * sizeof *later);
    at = xmalloc(n * sizeof *at);
    mg = (cv_merge){.act = xmalloc(n * sizeof *mg.act),
                    .roots = xmalloc(n * sizeof *mg.roots),
                    .stat = xmalloc(n * sizeof *mg.stat),
                    .cand = xmalloc(n * sizeof *mg.cand),
                    .chg = xmalloc(n),
                    .kind = xmalloc(n ? n : 1),
                    .root = xmalloc(n * sizeof *mg.root),
                    .res = xmalloc(n * sizeof *mg.res),
                    .cur = xmalloc(n ? n : 1)};

    /* Boruvka rounds. */
    t1 = tr_mark = engine_now();
    /* The curve ended on the device with its first round (no later join
     * left; kern_curve_tail.cuh): core, reach and the forest sorted. */
    if (cm.finished) {
        nf = cm.nf;
        c->merges_device++;
        c->end_device = 1;
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        parent[i] = (uint32_t)i;
        if (!c->knn) /* else the first round's, from the K nearest */
            reach[i] = core[i];
    }
    int cut = 0; /* the core join's parts: more than one */
    for (size_t i = 0; i < n && !cut; i++)
        cut = part[i] != 0;
    /* The first round from the K nearest where the core join kept them
     * (core_distances left the lists, reachabilities and bounds kb): no
     * join (src/cluster/curve_knn.h). */
    if (c->knn) {
        r.reach2 = NULL;
        const int more =
            cv_more(cm.done ? merged_there(&cm, parent, n, &nf, c)
                            : merge_listed(&r, kb, parent, comp, best, bound, n, forest, &nf, &mg));
        tr_mark = engine_now();
        kern_trace_mark("curve: first merge taken");
        if (!more)
            goto done;
    }
    for (;;) {
        /* comp is current here: every point its own at first, then as
         * merge_listed's last pass (which merged nothing) left it. */
        /* Rounds halve the components that still have an outgoing edge:
         * progress by round up to log2 n. */
        double lg = log2((double)n + 1) + 1;
        cv_progress pg = {spec, 0.2 + 0.8 * c->rounds / lg, 0.8 / lg};
        if (pg.lo > 0.95)
            pg.lo = 0.95, pg.span = 0;
        join_spec js = {.ds = ds,
                        .eps = spec->max,
                        .q0 = 0,
                        .q1 = n,
                        .mode = JOIN_PAIRS,
                        .opts = spec->opts,
                        .sink = {round_put, &r},
                        .sink_rank_share = ranks,
                        .inner = 1,
                        .cancel = spec->cancel,
                        .progress = cv_prog,
                        .progress_ctx = &pg};
        /* After the first join, only the rows of the open components but
         * the largest (later_rows), through a copy of the dataset with
         * them first where they are at most half the rows. */
        dataset g;
        cv_order ord = {&r, at, NULL, NULL, 0};
        int reordered = 0;
        if (c->rounds > 0 || c->knn) {
            const size_t m = later_rows(comp, bound, core, part, n, later);
            kern_trace_mark("curve: later rows");
            if (getenv("TCJOIN_DBSCAN_TRACE"))
                fprintf(stderr, "dbscan curve trace: join %d over %zu of %zu rows\n", c->rounds + 1,
                        m, n);
            if (m == 0)
                break;
            /* Where the core join was cut (parts), a whole join is cut
             * too and costs about its COUNT over the cut (0.12 s on gauss
             * 10^6 x 128): a join of fewer rows is not (0.7 s for 241,878
             * rows, and 0.3 s to copy them first). */
            if (!cut && 2 * m <= n && dataset_order_first(ds, later, m, &g, at) == 0) {
                reordered = 1;
                js.ds = &g;
                js.q1 = m;
                js.sink = (pair_sink){order_put, &ord};
            }
            err_clear();
        }
        const curve_round_io io = {.n = n,
                                   .core2 = core,
                                   .comp = comp,
                                   .at = reordered ? at : NULL,
                                   .max2 = c->max2,
                                   .reach2 = r.reach2,
                                   .list = r.list,
                                   .merge = dev_merge ? &cm : NULL};
        cm.nf = nf; /* done: set by the round (round_join, the engine's curve_round) */
        int on_device;
        double tj = engine_now();
        tr_rows += tj - tr_mark;
        rc = round_join(e, &js, &io, &on_device);
        tr_join += engine_now() - tj;
        if (reordered)
            dataset_order_free(&g);
        free(ord.i);
        free(ord.j);
        if (rc)
            break;
        if (ranks &&
            ((r.reach2 && (rc = dist->min_f64(reach, n))) || (rc = dist->merge_lists(r.list, n))))
            break;
        c->rounds++;
        c->rounds_device += on_device;
        r.reach2 = NULL;
        /* The join's own round and as many more as the lists prove. */
        const int more = cv_more(
            cm.done ? merged_there(&cm, parent, n, &nf, c)
                    : merge_listed(&r, NULL, parent, comp, best, bound, n, forest, &nf, &mg));
        tr_mark = engine_now();
        if (!more)
            break;
    }
done:
    pthread_mutex_destroy(&r.mu);
    free(later);
    free(at);
    free(r.list);
    free(kb);
    free(part);
    free(mg.act);
    free(mg.roots);
    free(mg.stat);
    free(mg.cand);
    free(mg.chg);
    free(mg.kind);
    free(mg.root);
    free(mg.res);
    free(mg.cur);
    free(bound);
    free(parent);
    free(comp);
    free(best);
    if (rc) {
        free(core);
        free(forest);
        free(reach);
        dbscan_curve_free(c); /* what the curve's end took */
        return rc;
    }
    kern_trace_mark("curve: rounds' state freed");
    const double tt = engine_now();
    /* one after another, each on the device or on every core (on three
     * threads, one a sort, they took 73-117 ms on the H200 host); made
     * already where the curve ended on the device */
    uint64_t *ab = NULL;
    if (!c->end_device) {
        engine_opts od;
        const int dev = e->gpu && kern_device_count() > 0
                            ? engine_opts_or_default(spec->opts, &od)->device
                            : -1;
        final_sorts(dev, forest, nf, core, reach, n, &c->edge2, &ab);
        c->nedge = nf;
    }
    const double ts = engine_now();
    if (!c->end_device) /* else end_take's */
        replay_edges(c, ab);
    free(ab);
    replay_first(c, core);
    kern_trace_mark("curve: replay");
    const double tp = engine_now();
    free(forest);
    c->core2 = core;
    c->reach2 = reach;
    c->forest_seconds = engine_now() - t1;
    /* TCJOIN_DBSCAN_TRACE=1: where the forest's time went (benchmarks). */
    if (getenv("TCJOIN_DBSCAN_TRACE"))
        fprintf(stderr,
                "dbscan curve trace (ms): first lists from the %zu nearest, set-up and "
                "later rows %.1f, joins %.1f, merges %.1f (%zu passes, %zu points scanned; "
                "lists sorted %.1f, scans %.1f, reductions %.1f, links %.1f), sorts %.1f, "
                "replay %.1f; on the device %d merges (%zu passes, %.1f ms)%s\n",
                c->knn, tr_rows * 1e3, tr_join * 1e3, mg.seconds * 1e3, mg.passes, mg.scanned,
                mg.s_init * 1e3, mg.s_scan * 1e3, mg.s_reduce * 1e3, mg.s_best * 1e3,
                (ts - tt) * 1e3, (tp - ts) * 1e3, c->merges_device, cm.passes, cm.seconds * 1e3,
                c->end_device ? ", the end there" : "");
    c->seconds = engine_now() - t0;
    return 0;
}

void dbscan_curve_free(dbscan_curve *c)
{
    free(c->core2);
    free(c->reach2);
    free(c->edge2);
    free(c->big_at);
    free(c->big);
    memset(c, 0, sizeof *c);
}

/* Values of v[0..m), ascending, that are <= x. */
static size_t count_le(const double *v, size_t m, double x)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void dbscan_curve_at(const dbscan_curve *c, double eps, size_t *clusters, size_t *core,
                     size_t *noise, size_t *largest)
{
    double e2 = eps * eps;
    if (e2 > c->max2)
        e2 = c->max2;
    size_t nc = count_le(c->core2, c->n, e2);
    if (core)
        *core = nc;
    if (clusters)
        *clusters = nc - count_le(c->edge2, c->nedge, e2);
    if (noise)
        *noise = c->n - count_le(c->reach2, c->n, e2);
    if (largest) {
        size_t k = count_le(c->big_at, c->nbig, e2);
        *largest = k ? c->big[k - 1] : 0;
    }
}
