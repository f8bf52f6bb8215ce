/* HDBSCAN*'s tree beyond the curve's forest (src/cluster/hdbscan_mst.h).
 *
 * The host's rounds search a k-d tree of every point (src/kd_tree.h: its
 * leaves in FP64 groups for the SIMD kernels), each node's least core
 * distance and, a round, its component where all its points share one. A
 * round: the components but the largest each find their lightest edge out
 * (any component's lightest edge out is a tree edge: the cut property, the
 * order total). First each point tries its nearest (hdbscan_knn, where
 * they were kept), which lowers its component's bound (an atomic minimum
 * shared by its batches); where the bound is then below the last of them,
 * every lighter edge of the point is among them and it searches nothing.
 * The rest search in batches of up to KD_TREE_BATCH points of one
 * component in the tree's order, which walk the tree together: a node is
 * left whole where all its points are in the batch's own component, where
 * its least core distance or, for each point, its box's gap weighs more
 * than the component's bound; a point leaves the batch once its own core
 * distance does (an edge weighs at least its ends' core distances). */
#include "hdbscan_mst.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_join.h"
#include "cpu_simd.h"
#include "curve_knn.h"
#include "curve_merging.h"
#include "engine.h"
#include "err.h"
#include "kd_tree.h"
#include "kernels.h"
#include "mem.h"
#include "par.h"

/* An edge's key: (squared weight, smaller end, larger end). */
typedef struct hm_key {
    double w2;
    uint32_t lo, hi;
} hm_key;

static int hm_less(const hm_key *x, const hm_key *y)
{
    return x->w2 < y->w2 ||
           (x->w2 == y->w2 && (x->lo < y->lo || (x->lo == y->lo && x->hi < y->hi)));
}

static int hm_cmp_edge(const void *x, const void *y)
{
    const hm_key *a = x, *b = y;
    return hm_less(a, b) ? -1 : hm_less(b, a);
}

static uint32_t hm_find(uint32_t *up, uint32_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

/* A batch of a component's query points: qord[p0 .. p1), at most
 * KD_TREE_BATCH. */
typedef struct hm_item {
    uint32_t c; /* the component (its root) */
    size_t p0, p1;
} hm_item;

#define HM_MIXED UINT32_MAX

typedef struct hm_round {
    const double *core2;
    const uint32_t *comp; /* each point's component */
    const kd_tree *tr;
    const double *tcore;   /* core2 by tree position */
    const uint32_t *tcomp; /* comp by tree position */
    const double *minc;    /* each node's least core distance */
    const uint32_t *ncomp; /* each node's component where all its points share one, else HM_MIXED */
    const hdbscan_knn *hk; /* each point's nearest (NULL: none kept) */
    const uint32_t *qord;  /* the scanned components' points, each's in the tree's order */
    const hm_item *item;
    size_t nitem, next; /* next: taken atomically */
    uint64_t *cbest;    /* each component's best squared weight so far (the bits, by root) */
    hm_key *ibest;      /* each item's lightest edge out */
    int phase;          /* 0: each point's nearest; 1: the tree */
    uint64_t searched;  /* points that searched the tree (the rest: their nearest sufficed) */
    const volatile int *cancel;
} hm_round;

static uint64_t hm_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

static double hm_val(uint64_t u)
{
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Non-negative doubles order as their bits: an atomic minimum. */
static void hm_lower(uint64_t *p, double w2)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    const uint64_t want = hm_bits(w2);
    while (want < cur &&
           !__atomic_compare_exchange_n(p, &cur, want, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* Edge (i, j) of squared distance d2 against the best so far: kept
 * where its key is less (the component's bound lowered with it). */
static void hm_offer(uint32_t i, uint32_t j, double ci, double cj, double d2, hm_key *best,
                     uint64_t *cb, double *lim)
{
    double w2 = d2 > ci ? d2 : ci;
    w2 = w2 > cj ? w2 : cj;
    const hm_key k = {w2, i < j ? i : j, i < j ? j : i};
    if (hm_less(&k, best)) {
        *best = k;
        hm_lower(cb, w2);
        *lim = w2 < *lim ? w2 : *lim;
    }
}

/* Whether point i's nearest hold every edge of it up to lim: all points
 * nearer than the last of them are among them. */
static int hm_listed(const hm_round *r, uint32_t i, double lim)
{
    const size_t kl = r->hk ? r->hk->kl : 0;
    return kl && r->hk->nb[(size_t)i * kl + kl - 1] != UINT32_MAX &&
           lim < r->hk->nd2[(size_t)i * kl + kl - 1];
}

/* One batch's edges to its points' nearest in other components. */
static hm_key hm_seed(hm_round *r, const hm_item *it)
{
    const uint32_t c = it->c;
    uint64_t *cb = &r->cbest[c];
    const size_t kl = r->hk->kl;
    hm_key best = {INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t p = it->p0; p < it->p1; p++) {
        const uint32_t i = r->qord[p];
        const double ci = r->core2[i];
        double lim = hm_val(__atomic_load_n(cb, __ATOMIC_RELAXED));
        lim = best.w2 < lim ? best.w2 : lim;
        if (ci > lim)
            continue;
        const uint32_t *nb = r->hk->nb + (size_t)i * kl;
        const double *nd2 = r->hk->nd2 + (size_t)i * kl;
        for (size_t q = 0; q < kl && nb[q] != UINT32_MAX && nd2[q] <= lim; q++)
            if (r->comp[nb[q]] != c)
                hm_offer(i, nb[q], ci, r->core2[nb[q]], nd2[q], &best, cb, &lim);
    }
    return best;
}

/* One batch's search: its points, their core distances, the component,
 * the best edge out so far. */
typedef struct hm_search_batch {
    hm_round *r;
    uint32_t c;
    uint64_t *cb;
    uint32_t row[KD_TREE_BATCH], pos[KD_TREE_BATCH];
    double ci[KD_TREE_BATCH];
    hm_key best;
    double lim; /* min(the component's bound, best) as last read */
} hm_search_batch;

/* A node: left where all its points are in the batch's component or its
 * least core distance weighs more than the bound; a point leaves once its
 * own core distance does (its edges weigh more). */
static uint32_t hm_enter(void *ctx, uint32_t node, uint32_t mask, double *lim)
{
    hm_search_batch *sb = ctx;
    const hm_round *r = sb->r;
    double l = hm_val(__atomic_load_n(sb->cb, __ATOMIC_RELAXED));
    l = sb->best.w2 < l ? sb->best.w2 : l;
    sb->lim = l;
    if (r->ncomp[node] == sb->c || r->minc[node] > l)
        return 0;
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        const int q = __builtin_ctz(mm);
        lim[q] = l;
        if (sb->ci[q] > l)
            mask &= ~(1u << q);
    }
    return mask;
}

/* A leaf's points of other components within the bound: edges offered. */
static void hm_leaf(void *ctx, uint32_t node, uint32_t mask, const double *out)
{
    hm_search_batch *sb = ctx;
    const hm_round *r = sb->r;
    const kd_tree *tr = r->tr;
    const uint32_t b = tr->beg[node], e = tr->end[node];
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        const int q = __builtin_ctz(mm);
        const double *o = out + (size_t)q * KD_TREE_OSTRIDE;
        for (uint32_t p = b; p < e; p++) {
            if (!(o[p - b] <= sb->lim) || r->tcore[p] > sb->lim || r->tcomp[p] == sb->c)
                continue;
            hm_offer(sb->row[q], tr->perm[p], sb->ci[q], r->tcore[p], o[p - b], &sb->best, sb->cb,
                     &sb->lim);
        }
    }
}

/* One batch's search of the tree, from best (its nearest's edges). */
static hm_key hm_search(hm_round *r, const hm_item *it, hm_key best, kd_tree_walk_state *s)
{
    const kd_tree *tr = r->tr;
    hm_search_batch sb = {.r = r, .c = it->c, .cb = &r->cbest[it->c], .best = best};
    double lim = hm_val(__atomic_load_n(sb.cb, __ATOMIC_RELAXED));
    lim = best.w2 < lim ? best.w2 : lim;
    uint32_t mask = 0;
    size_t m = 0;
    for (size_t p = it->p0; p < it->p1; p++) {
        const uint32_t i = r->qord[p];
        if (r->core2[i] > lim || hm_listed(r, i, lim))
            continue;
        sb.row[m] = i;
        sb.pos[m] = tr->pos[i];
        sb.ci[m] = r->core2[i];
        mask |= 1u << m;
        m++;
    }
    if (!m)
        return best;
    __atomic_fetch_add(&r->searched, m, __ATOMIC_RELAXED);
    kd_tree_batch(tr, sb.pos, m, s->x, s->xt, s->mid);
    const kd_tree_walker w = {hm_enter, hm_leaf, &sb};
    kd_tree_walk(tr, s, mask, &w);
    return sb.best;
}

static void hm_worker(void *ctx, int t)
{
    (void)t;
    hm_round *r = ctx;
    kd_tree_walk_state s = {0};
    if (r->phase)
        kd_tree_walk_new(r->tr, &s);
    for (;;) {
        if (r->cancel && *r->cancel)
            break;
        const size_t q = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        if (q >= r->nitem)
            break;
        if (r->phase == 0)
            r->ibest[q] = hm_seed(r, &r->item[q]);
        else
            r->ibest[q] = hm_search(r, &r->item[q], r->ibest[q], &s);
    }
    if (r->phase)
        kd_tree_walk_free(&s);
}

/* A gather into the tree's order on the cores: out[q] = in[perm[q]], in
 * and out of 4 or 8 bytes (a random read a point: 10^7 of them cost
 * some 0.1 s on one core). */
typedef struct hm_gather {
    const uint32_t *perm;
    const void *in;
    void *out;
    size_t size;
} hm_gather;

static void hm_gather_range(void *ctx, int th, size_t a, size_t b)
{
    (void)th;
    const hm_gather *g = ctx;
    if (g->size == 8)
        for (size_t q = a; q < b; q++)
            ((double *)g->out)[q] = ((const double *)g->in)[g->perm[q]];
    else
        for (size_t q = a; q < b; q++)
            ((uint32_t *)g->out)[q] = ((const uint32_t *)g->in)[g->perm[q]];
}

static void hm_gather_perm(const uint32_t *perm, const void *in, void *out, size_t size, size_t n)
{
    hm_gather g = {perm, in, out, size};
    int nt;
    par_for(n, PAR_WEIGHT_RANDOM, hm_gather_range, &g, &nt);
}

static void hm_unite(uint32_t *up, uint32_t *sz, uint32_t ra, uint32_t rb)
{
    if (sz[ra] < sz[rb]) {
        up[ra] = rb;
        sz[rb] += sz[ra];
    } else {
        up[rb] = ra;
        sz[ra] += sz[rb];
    }
}

int hdbscan_knn_make(const dataset *ds, const struct engine_opts *opts, size_t ms,
                     const volatile int *cancel, double *core2, hdbscan_knn *hk)
{
    memset(hk, 0, sizeof *hk);
    const size_t n = ds->n;
    int rc = kd_tree_build(ds, cpu_simd_get(opts ? opts->cpu_simd : CPU_SIMD_AUTO), &hk->tree);
    if (rc)
        return rc;
    /* two beyond the core distance's rank, where 12 bytes each fit (as
     * the curve's nearest, curve_knn_room) */
    size_t kl = ms < n - 1 ? ms : n - 1;
    if (kl > curve_knn_room(n))
        kl = 0;
    if (kl) {
        hk->nb = mem_alloc("hdbscan", "each point's nearest", n * kl, sizeof *hk->nb, 0);
        hk->nd2 = hk->nb ? mem_alloc("hdbscan", "each point's nearest", n * kl, sizeof *hk->nd2, 0)
                         : NULL;
        if (!hk->nd2) {
            free(hk->nb);
            hk->nb = NULL;
            kl = 0;
            err_clear();
        }
    }
    hk->kl = kl;
    rc = kd_tree_knn(&hk->tree, NULL, n, 0, (int)(ms - 1), core2, kl, hk->nb, hk->nd2,
                     cpu_join_threads(opts), cancel, NULL);
    if (rc)
        hdbscan_knn_free(hk);
    return rc;
}

void hdbscan_knn_free(hdbscan_knn *hk)
{
    kd_tree_free(&hk->tree);
    free(hk->nb);
    free(hk->nd2);
    memset(hk, 0, sizeof *hk);
}

/* One round on the engine (PAIRS_MST_ROUND): each scanned component's
 * lightest edge out into pick (*np of them). ENGINE_DECLINED: the
 * host's round instead. */
static int hm_device_round(const engine *e, const engine_opts *opts, const dataset *ds,
                           const double *core2, const uint32_t *comp, uint32_t big,
                           const volatile int *cancel, curve_edge *best, hm_key *pick, size_t *np,
                           hdbscan_mst_stats *st)
{
    const size_t n = ds->n;
    mst_round_io io = {.n = n, .core2 = core2, .comp = comp, .skip = big, .best = best};
    join_spec js = {.ds = ds,
                    .engine = e,
                    .eps = INFINITY,
                    .q0 = 0,
                    .q1 = n,
                    .mode = JOIN_PAIRS,
                    .opts = opts,
                    .inner = 1,
                    .cancel = cancel};
    pair_consumer pc = {.use = PAIRS_MST_ROUND, .mst = &io};
    join_result jr;
    memset(&jr, 0, sizeof jr);
    const int rc = e->consume(&js, &pc, &jr);
    if (rc)
        return rc;
    *np = 0;
    for (size_t c = 0; c < n; c++)
        if (comp[c] == c && c != big && best[c].w < INFINITY)
            pick[(*np)++] = (hm_key){best[c].w, best[c].a, best[c].b};
    st->device_rounds++;
    st->rows_fp64 += io.rows_fp64;
    return 0;
}

int hdbscan_mst_offered(const engine *e, const engine_opts *opts, const dataset *ds)
{
    if (!e || !e->consume || ds->n < 2)
        return 0;
    mst_round_io io = {.n = ds->n, .skip = UINT32_MAX}; /* best NULL: the probe */
    join_spec js = {.ds = ds,
                    .engine = e,
                    .eps = INFINITY,
                    .q0 = 0,
                    .q1 = ds->n,
                    .mode = JOIN_PAIRS,
                    .opts = opts,
                    .inner = 1};
    pair_consumer pc = {.use = PAIRS_MST_ROUND, .mst = &io};
    join_result jr;
    memset(&jr, 0, sizeof jr);
    const int rc = e->consume(&js, &pc, &jr);
    err_clear();
    return rc == 0;
}

int hdbscan_mst_complete(const engine *eng, const engine_opts *opts, const dataset *ds,
                         const double *core2, size_t nf, const double *fw2, const uint64_t *fab,
                         const hdbscan_knn *hk, const volatile int *cancel, double **w2_out,
                         uint64_t **ab_out, hdbscan_mst_stats *st)
{
    const size_t n = ds->n;
    memset(st, 0, sizeof *st);
    hm_key *e = xmalloc((n ? n : 1) * sizeof *e);
    size_t ne = 0;
    uint32_t *up = xmalloc(n * sizeof *up), *sz = xmalloc(n * sizeof *sz);
    for (size_t i = 0; i < n; i++) {
        up[i] = (uint32_t)i;
        sz[i] = 1;
    }
    for (size_t k = 0; k < nf; k++) {
        /* the finds are chains of cache misses: the ends of edges ahead
         * fetched while this one's are walked */
        if (k + 16 < nf) {
            __builtin_prefetch(&up[(uint32_t)(fab[k + 16] >> 32)]);
            __builtin_prefetch(&up[(uint32_t)fab[k + 16]]);
        }
        const uint32_t a = (uint32_t)(fab[k] >> 32), b = (uint32_t)fab[k];
        const uint32_t ra = hm_find(up, a), rb = hm_find(up, b);
        if (ra == rb)
            continue; /* not a forest: the caller's check on n - 1 edges says so */
        e[ne++] = (hm_key){fw2[k], a < b ? a : b, a < b ? b : a};
        hm_unite(up, sz, ra, rb);
    }
    kern_trace_mark("hdbscan rounds: forest united");
    hm_round r = {.core2 = core2, .hk = hk && hk->kl ? hk : NULL, .cancel = cancel};
    int rc = 0;
    kd_tree own = {0};
    const kd_tree *tr = NULL;
    double *tcore = NULL, *minc = NULL;
    uint32_t *tcomp = NULL, *ncomp = NULL;
    uint32_t *comp = NULL, *qord = NULL, *fill = NULL;
    size_t *cbeg = NULL;
    hm_item *item = NULL;
    hm_key *ibest = NULL, *pick = NULL;
    uint64_t *cbest = NULL;
    curve_edge *dbest = NULL;
    int device = eng && eng->consume;
    if (ne + 1 < n) {
        comp = xmalloc(n * sizeof *comp);
        pick = xmalloc(n * sizeof *pick);
        if (device)
            dbest = xmalloc(n * sizeof *dbest);
    }
    while (ne + 1 < n && rc == 0) {
        const double t_round = engine_now();
        /* components; the largest is not scanned */
        size_t nc = 0, big = SIZE_MAX;
        curve_flatten(up, comp, n); /* up flattened too */
        for (size_t i = 0; i < n; i++) {
            if (comp[i] == i) {
                if (big == SIZE_MAX || sz[i] > sz[big])
                    big = i;
                nc++;
            }
        }
        size_t np = 0;
        int nt = 0;
        double t_scan = engine_now();
        kern_trace_mark("hdbscan round: components");
        if (device) {
            rc = hm_device_round(eng, opts, ds, core2, comp, (uint32_t)big, cancel, dbest, pick,
                                 &np, st);
            if (rc == ENGINE_DECLINED) { /* the host's rounds from here on */
                device = 0;
                rc = 0;
            } else if (rc) {
                break;
            } else {
                if (kern_trace_on())
                    fprintf(stderr,
                            "hdbscan device round %d: %zu components, the largest %u of %zu "
                            "points; %.3f s\n",
                            st->device_rounds, nc, sz[big], n, engine_now() - t_round);
                goto unite;
            }
        }
        kern_trace_mark("hdbscan round: on the host");
        if (!tr) { /* the host's first round: its tree and scratch */
            if (hk && hk->tree.n == n) {
                tr = &hk->tree;
            } else {
                if ((rc = kd_tree_build(ds, cpu_simd_get(opts ? opts->cpu_simd : CPU_SIMD_AUTO),
                                        &own)))
                    break;
                tr = &own;
            }
            kern_trace_mark("hdbscan round: k-d tree");
            tcore = xmalloc(n * sizeof *tcore);
            tcomp = xmalloc(n * sizeof *tcomp);
            minc = xmalloc(tr->nn * sizeof *minc);
            ncomp = xmalloc(tr->nn * sizeof *ncomp);
            hm_gather_perm(tr->perm, core2, tcore, sizeof *tcore, n);
            /* each node's least core distance (children after their
             * parents: from the last node back) */
            for (size_t t = tr->nn; t-- > 0;) {
                double mc = INFINITY;
                if (tr->kid[t])
                    mc = fmin(minc[tr->kid[t]], minc[tr->kid[t] + 1]);
                else
                    for (size_t q = tr->beg[t]; q < tr->end[t]; q++)
                        mc = tcore[q] < mc ? tcore[q] : mc;
                minc[t] = mc;
            }
            qord = xmalloc(n * sizeof *qord);
            fill = xmalloc(n * sizeof *fill);
            cbeg = xmalloc((n + 1) * sizeof *cbeg);
            item = xmalloc((n + 1) * sizeof *item);
            ibest = xmalloc((n + 1) * sizeof *ibest);
            cbest = xmalloc(n * sizeof *cbest);
            kern_trace_mark("hdbscan round: the tree's core distances");
        }
        hm_gather_perm(tr->perm, comp, tcomp, sizeof *tcomp, n);
        /* each node's component where its points share one */
        for (size_t t = tr->nn; t-- > 0;) {
            if (tr->kid[t]) {
                const uint32_t a = ncomp[tr->kid[t]], b = ncomp[tr->kid[t] + 1];
                ncomp[t] = a == b ? a : HM_MIXED;
                continue;
            }
            uint32_t c = tcomp[tr->beg[t]];
            for (size_t q = tr->beg[t] + 1; q < tr->end[t] && c != HM_MIXED; q++)
                if (tcomp[q] != c)
                    c = HM_MIXED;
            ncomp[t] = c;
        }
        /* the scanned components' points, each component's in the tree's
         * order, largest components first: fill[root] its next slot */
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (comp[i] == i && i != big)
                pick[m++] = (hm_key){-(double)sz[i], (uint32_t)i, 0};
        qsort(pick, m, sizeof *pick, hm_cmp_edge);
        size_t at = 0;
        for (size_t k = 0; k < m; k++) {
            cbeg[k] = at;
            fill[pick[k].lo] = (uint32_t)at;
            at += sz[pick[k].lo];
            cbest[pick[k].lo] = hm_bits(INFINITY);
        }
        cbeg[m] = at;
        for (size_t t = 0; t < n; t++) {
            const uint32_t i = tr->perm[t];
            if (comp[i] != big)
                qord[fill[comp[i]]++] = i;
        }
        size_t ni = 0;
        for (size_t k = 0; k < m; k++)
            for (size_t p = cbeg[k]; p < cbeg[k + 1]; p += KD_TREE_BATCH)
                item[ni++] =
                    (hm_item){pick[k].lo, p,
                              p + KD_TREE_BATCH < cbeg[k + 1] ? p + KD_TREE_BATCH : cbeg[k + 1]};
        kern_trace_mark("hdbscan round: components in the tree, items");
        r.comp = comp;
        r.tr = tr;
        r.tcore = tcore;
        r.tcomp = tcomp;
        r.minc = minc;
        r.ncomp = ncomp;
        r.searched = 0;
        r.qord = qord;
        r.item = item;
        r.nitem = ni;
        r.next = 0;
        r.cbest = cbest;
        r.ibest = ibest;
        nt = cpu_join_threads(opts); /* `set threads` */
        nt = nt > PAR_MAX_THREADS ? PAR_MAX_THREADS : nt;
        if ((size_t)nt > ni)
            nt = (int)ni;
        t_scan = engine_now();
        for (int ph = r.hk ? 0 : 1; ph < 2; ph++) {
            if (ph == 1 && !r.hk)
                for (size_t q = 0; q < ni; q++)
                    ibest[q] = (hm_key){INFINITY, UINT32_MAX, UINT32_MAX};
            r.phase = ph;
            r.next = 0;
            par_threads(nt, hm_worker, &r);
        }
        if (cancel && *cancel) {
            rc = err_set(TCJ_ECANCEL, ERR_CANCELLED);
            break;
        }
        /* each component's lightest edge out (its items'), united in key
         * order */
        for (size_t t = 0; t < ni;) {
            hm_key bk = ibest[t];
            const uint32_t c = item[t].c;
            for (t++; t < ni && item[t].c == c; t++)
                if (hm_less(&ibest[t], &bk))
                    bk = ibest[t];
            if (bk.lo != UINT32_MAX)
                pick[np++] = bk;
        }
        /* TCJOIN_TRACE=1: each round's components and seconds (benchmarks) */
        if (kern_trace_on())
            fprintf(stderr,
                    "hdbscan host round %d: %zu components, the largest %u of %zu points; "
                    "set-up %.3f s, scan %.3f s on %d threads; %llu of its points searched "
                    "the tree\n",
                    st->host_rounds + 1, nc, sz[big], n, t_scan - t_round, engine_now() - t_scan,
                    nt, (unsigned long long)r.searched);
        st->host_rounds++;
    unite:
        if (np == 0) { /* no finite edge out */
            rc =
                err_set(TCJ_EINVAL, "hdbscan: %zu components have no finite edge between them", nc);
            break;
        }
        qsort(pick, np, sizeof *pick, hm_cmp_edge);
        for (size_t k = 0; k < np; k++) {
            const uint32_t ra = hm_find(up, pick[k].lo), rb = hm_find(up, pick[k].hi);
            if (ra == rb)
                continue; /* two components' same edge */
            e[ne++] = pick[k];
            hm_unite(up, sz, ra, rb);
        }
    }
    kd_tree_free(&own);
    free(tcore);
    free(tcomp);
    free(minc);
    free(ncomp);
    free(comp);
    free(qord);
    free(fill);
    free(cbeg);
    free(item);
    free(ibest);
    free(cbest);
    free(pick);
    free(dbest);
    free(up);
    free(sz);
    if (rc) {
        free(e);
        return rc;
    }
    /* the edges in key order (keys are distinct: one edge a pair): the
     * forest's come in ascending weight (the curve's), so only each run of
     * equal weights among them and the rounds' few edges are sorted (a
     * sort of all 10^7 took a second), then the two merged */
    size_t pre = ne ? 1 : 0;
    while (pre < ne && !(e[pre].w2 < e[pre - 1].w2))
        pre++;
    for (size_t i = 0, j; i < pre; i = j) {
        for (j = i + 1; j < pre && e[j].w2 == e[i].w2;)
            j++;
        if (j - i > 1)
            qsort(e + i, j - i, sizeof *e, hm_cmp_edge);
    }
    qsort(e + pre, ne - pre, sizeof *e, hm_cmp_edge);
    double *w2 = xmalloc((ne ? ne : 1) * sizeof *w2);
    uint64_t *ab = xmalloc((ne ? ne : 1) * sizeof *ab);
    for (size_t k = 0, i = 0, j = pre; k < ne; k++) {
        const hm_key *x = j == ne || (i < pre && hm_less(&e[i], &e[j])) ? &e[i++] : &e[j++];
        w2[k] = x->w2;
        ab[k] = (uint64_t)x->lo << 32 | x->hi;
    }
    free(e);
    *w2_out = w2;
    *ab_out = ab;
    return 0;
}
