/* The curve's merging on the host after each join (src/cluster/
 * curve_merging.h); the device's (kernels/kern_curve_merge.cu) makes the
 * same passes with the same results. */
#include "curve_merging.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "err.h"
#include "par.h"

typedef curve_edge cv_edge; /* a < b */

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
 * root's stripe, and marks it changed (chg). On one thread this is about
 * half the merging at 10^6 points (the first pass's 10^6 roots, a find a
 * root). */
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
        if (curve_edge_before(&l->stat[v], &l->stat[r]))
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

void curve_flatten(uint32_t *parent, uint32_t *comp, size_t n)
{
    cv_flat f = {parent, comp};
    int nt;
    par_for(n, 4, flat_find, &f, &nt);
    par_for(n, 4, flat_set, &f, &nt);
}

enum { SCAN_KEEP, SCAN_OUT, SCAN_INSIDE };

/* A new join's lists (curve_merging_run): each list of [a, b) in ascending
 * (w, a, b) order (a join leaves a max-heap), its cursor at its first
 * edge (curve_merging.cur); each point active, no bound yet. */
typedef struct cv_lsort {
    curve_list *list;
    curve_merging *m;
} cv_lsort;

static void list_sort(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const cv_lsort *x = ctx;
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t p = a; p < b; p++) {
        x->m->act[p] = (uint32_t)p;
        x->m->stat[p] = none;
        x->m->chg[p] = 1;
        curve_list *l = &x->list[p];
        for (uint32_t k = 1; k < l->len; k++) {
            const cv_edge e = l->e[k];
            uint32_t j = k;
            for (; j > 0 && curve_edge_before(&e, &l->e[j - 1]); j--)
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
 * by one thread; the reduction by root follows on one (curve_merging_run). */
typedef struct cv_scan {
    const curve_list *list;
    const double *kb;
    const uint32_t *comp;
    curve_merging *m;
} cv_scan;

static void scan_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const cv_scan *x = ctx;
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    curve_merging *m = x->m;
    for (size_t i = a; i < b; i++) {
        const uint32_t p = m->act[i], rp = x->comp[p];
        m->root[i] = rp;
        if (!m->chg[rp]) {
            m->kind[i] = SCAN_KEEP;
            continue;
        }
        const curve_list *l = &x->list[p];
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
        cv_edge pb = l->len == CURVE_LIST ? l->e[CURVE_LIST - 1] : none;
        if (x->kb && x->kb[p] != INFINITY && x->kb[p] <= pb.w)
            pb = (cv_edge){x->kb[p], 0, 0};
        m->kind[i] = SCAN_INSIDE;
        m->res[i] = pb;
    }
}

/* Each root's bound and proved edge (best; none where the next join must
 * decide: open) for the roots of [a, b), its changed mark cleared. */
typedef struct cv_roots {
    curve_merging *m;
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
        if (x->bound[v].w != INFINITY && !curve_edge_before(&x->best[v], &x->bound[v])) {
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
size_t curve_merging_run(curve_merging *m, curve_list *list, const double *kb, uint32_t *parent,
                         uint32_t *comp, cv_edge *best, cv_edge *bound, size_t n, cv_edge *forest,
                         size_t *nf)
{
    const cv_edge none = {INFINITY, UINT32_MAX, UINT32_MAX};
    const double t0 = engine_now();
    /* A new join's lists: every point active again, no bound yet; comp is
     * current here (its roots are the components'). */
    cv_lsort ls = {list, m};
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
            curve_flatten(parent, comp, n);
        cv_scan sc = {list, kb, comp, m};
        const double ts = engine_now();
        par_for(m->nact, 16, scan_range, &sc, &nt);
        const double tr = engine_now();
        m->s_scan += tr - ts;
        size_t keep = 0; /* on one thread: by owner on 16 is slower */
        for (size_t t = 0; t < m->nact; t++) {
            const uint32_t rp = m->root[t];
            if (m->kind[t] == SCAN_INSIDE) { /* all inside: for good */
                if (curve_edge_before(&m->res[t], &m->stat[rp]))
                    m->stat[rp] = m->res[t];
                continue;
            }
            if (m->kind[t] == SCAN_OUT && curve_edge_before(&m->res[t], &cand[rp]))
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
            curve_flatten(parent, comp, n);
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

void curve_merging_alloc(curve_merging *m, size_t n)
{
    *m = (curve_merging){.act = xmalloc(n * sizeof *m->act),
                         .roots = xmalloc(n * sizeof *m->roots),
                         .stat = xmalloc(n * sizeof *m->stat),
                         .cand = xmalloc(n * sizeof *m->cand),
                         .chg = xmalloc(n ? n : 1),
                         .kind = xmalloc(n ? n : 1),
                         .root = xmalloc(n * sizeof *m->root),
                         .res = xmalloc(n * sizeof *m->res),
                         .cur = xmalloc(n ? n : 1)};
}

void curve_merging_free(curve_merging *m)
{
    free(m->act);
    free(m->roots);
    free(m->stat);
    free(m->cand);
    free(m->chg);
    free(m->kind);
    free(m->root);
    free(m->res);
    free(m->cur);
    memset(m, 0, sizeof *m);
}
