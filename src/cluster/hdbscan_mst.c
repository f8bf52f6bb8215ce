/* HDBSCAN*'s tree beyond the curve's forest (src/cluster/hdbscan_mst.h).
 *
 * A k-d tree over every point (leaves of at most HM_LEAF points, each
 * node cut at the median of its box's widest side; each node's box and
 * least core distance), built once. A round: the components but the
 * largest each find their lightest edge out (any component's lightest
 * edge out is a tree edge: the cut property, the order total). Each
 * point of such a component walks the tree nearer child first, leaving a
 * node whole where all its points are in the point's own component (each
 * node's component, refreshed a round), where its least core distance or
 * its box's gap already weighs more than the component's best so far. A
 * component's points go in ascending order of core distance (an edge
 * weighs at least its ends' core distances: once the component's best is
 * below a point's, the rest are left), in chunks of HM_CHUNK points on
 * every core, largest components first; a component's best weight so far
 * is shared by its chunks (an atomic minimum). */
#include "hdbscan_mst.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "err.h"
#include "kernels.h"
#include "mem.h"
#include "par.h"
#include "sort_f64.h"

#define HM_LEAF 32
#define HM_CHUNK 128

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

/* A value and a row or group: sorted by value, then by index. */
typedef struct hm_cand {
    double v;
    uint32_t g;
} hm_cand;

static int hm_cmp_cand(const void *x, const void *y)
{
    const hm_cand *a = x, *b = y;
    return a->v < b->v ? -1 : a->v > b->v ? 1 : (a->g > b->g) - (a->g < b->g);
}

/* A chunk of a component's query points: qord[p0 .. p1). */
typedef struct hm_item {
    uint32_t c; /* the component (its root) */
    size_t p0, p1;
} hm_item;

/* The k-d tree: node t holds perm[beg[t] .. end[t]); its children are
 * nodes kid[t] and kid[t] + 1 (kid[t] 0: a leaf). */
typedef struct hm_tree {
    size_t nn;
    uint32_t *perm;
    size_t *beg, *end;
    uint32_t *kid;
    double *lo, *hi; /* each node's box (d values) */
    double *minc;    /* each node's least core distance */
    uint32_t *ncomp; /* each node's component where all its points share one, else HM_MIXED */
    size_t depth;
} hm_tree;

#define HM_MIXED UINT32_MAX

typedef struct hm_round {
    const dataset *ds;
    const double *x64; /* FP64 rows (f64 data, or the copy), else NULL */
    const float *x32;  /* f32 rows */
    const double *core2;
    const uint32_t *comp; /* each point's component */
    const hm_tree *tr;
    const uint32_t *qord; /* the scanned components' points, each's by core distance */
    const hm_item *item;
    size_t nitem, next; /* next: taken atomically */
    uint64_t *cbest;    /* each component's best squared weight so far (the bits, by root) */
    hm_key *ibest;      /* each item's lightest edge out */
    double shrink;      /* a box bound's safety factor (hm_prune) */
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

static const double *hm_row(const dataset *ds, const double *x64, const float *x32, uint32_t i,
                            double *buf)
{
    const size_t d = ds->d;
    if (!x32)
        return x64 + (size_t)i * d;
    for (size_t k = 0; k < d; k++)
        buf[k] = (double)x32[(size_t)i * d + k];
    return buf;
}

/* d2 of row xi and row j, FP64 direct form in dimension order (cpu's);
 * stops once the partial sum exceeds lim (non-negative terms: the sum
 * only grows) and returns it then. */
static double hm_d2(const hm_round *r, const double *xi, uint32_t j, double lim)
{
    const size_t d = r->ds->d;
    double s = 0;
    if (r->x32) {
        const float *xj = r->x32 + (size_t)j * d;
        for (size_t k = 0; k < d; k++) {
            const double u = xi[k] - (double)xj[k];
            s = s + u * u;
            if ((k & 3) == 3 && s > lim)
                return s;
        }
    } else {
        const double *xj = r->x64 + (size_t)j * d;
        for (size_t k = 0; k < d; k++) {
            const double u = xi[k] - xj[k];
            s = s + u * u;
            if ((k & 3) == 3 && s > lim)
                return s;
        }
    }
    return s;
}

/* The squared gap between point x and a box. */
static double hm_gap2(const double *x, const double *lo, const double *hi, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double g = lo[k] > x[k] ? lo[k] - x[k] : x[k] > hi[k] ? x[k] - hi[k] : 0;
        s = s + g * g;
    }
    return s;
}

/* Whether a squared gap g2 (as computed) proves every pair across it
 * farther than lim as hm_d2 computes them: in exact arithmetic the gap is
 * at most each pair's distance; each side errs by at most gamma_{d+4}
 * (unit 2^-53) relative, which shrink (1 - 2 gamma) takes off. */
static int hm_prune(const hm_round *r, double g2, double lim)
{
    return g2 * r->shrink > lim;
}

/* One item: its points' lightest edge to a point of another component. */
static hm_key hm_chunk(hm_round *r, const hm_item *it, uint32_t *stack, double *buf)
{
    const size_t d = r->ds->d;
    const hm_tree *tr = r->tr;
    const uint32_t c = it->c;
    uint64_t *cb = &r->cbest[c];
    hm_key best = {INFINITY, UINT32_MAX, UINT32_MAX};
    for (size_t p = it->p0; p < it->p1; p++) {
        const uint32_t i = r->qord[p];
        const double ci = r->core2[i];
        double lim = hm_val(__atomic_load_n(cb, __ATOMIC_RELAXED));
        lim = best.w2 < lim ? best.w2 : lim;
        if (ci > lim)
            break; /* the chunk's later points weigh more still */
        const double *xi = hm_row(r->ds, r->x64, r->x32, i, buf);
        size_t top = 0;
        stack[top++] = 0;
        while (top) {
            const uint32_t t = stack[--top];
            if (tr->ncomp[t] == c || tr->minc[t] > lim ||
                hm_prune(r, hm_gap2(xi, tr->lo + t * d, tr->hi + t * d, d), lim))
                continue;
            if (tr->kid[t]) { /* the nearer child on top */
                const uint32_t a = tr->kid[t], b = a + 1;
                const double ga = hm_gap2(xi, tr->lo + a * d, tr->hi + a * d, d);
                const double gb = hm_gap2(xi, tr->lo + b * d, tr->hi + b * d, d);
                stack[top++] = ga <= gb ? b : a;
                stack[top++] = ga <= gb ? a : b;
                continue;
            }
            for (size_t q = tr->beg[t]; q < tr->end[t]; q++) {
                const uint32_t j = tr->perm[q];
                const double cj = r->core2[j];
                if (cj > lim || r->comp[j] == c)
                    continue;
                double w2 = hm_d2(r, xi, j, lim);
                if (w2 > lim)
                    continue;
                w2 = w2 > ci ? w2 : ci;
                w2 = w2 > cj ? w2 : cj;
                const hm_key k = {w2, i < j ? i : j, i < j ? j : i};
                if (hm_less(&k, &best)) {
                    best = k;
                    hm_lower(cb, w2);
                    lim = w2 < lim ? w2 : lim;
                }
            }
        }
    }
    return best;
}

static void hm_worker(void *ctx, int t)
{
    (void)t;
    hm_round *r = ctx;
    const size_t d = r->ds->d ? r->ds->d : 1;
    uint32_t *stack = xmalloc((2 * r->tr->depth + 4) * sizeof *stack);
    double *buf = xmalloc(d * sizeof *buf);
    for (;;) {
        if (r->cancel && *r->cancel)
            break;
        const size_t q = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        if (q >= r->nitem)
            break;
        r->ibest[q] = hm_chunk(r, &r->item[q], stack, buf);
    }
    free(stack);
    free(buf);
}

/* Node t over perm[a .. b) at depth dep, and its subtree (preorder:
 * children after their parent, a pair at kid, kid + 1). */
static void hm_build(hm_tree *tr, const dataset *ds, const double *x64, const float *x32,
                     const double *core2, uint32_t t, size_t a, size_t b, size_t dep, hm_cand *tmp,
                     double *buf)
{
    const size_t d = ds->d;
    double *lo = tr->lo + (size_t)t * d, *hi = tr->hi + (size_t)t * d;
    tr->beg[t] = a;
    tr->end[t] = b;
    tr->kid[t] = 0;
    tr->depth = dep > tr->depth ? dep : tr->depth;
    double mc = INFINITY;
    for (size_t k = 0; k < d; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t p = a; p < b; p++) {
        const double *x = hm_row(ds, x64, x32, tr->perm[p], buf);
        for (size_t k = 0; k < d; k++) {
            lo[k] = x[k] < lo[k] ? x[k] : lo[k];
            hi[k] = x[k] > hi[k] ? x[k] : hi[k];
        }
        mc = core2[tr->perm[p]] < mc ? core2[tr->perm[p]] : mc;
    }
    tr->minc[t] = mc;
    if (b - a <= HM_LEAF || d == 0)
        return;
    size_t w = 0;
    for (size_t k = 1; k < d; k++)
        if (hi[k] - lo[k] > hi[w] - lo[w])
            w = k;
    if (!(hi[w] > lo[w]))
        return; /* every point the same: a leaf */
    for (size_t p = a; p < b; p++)
        tmp[p - a] = (hm_cand){hm_row(ds, x64, x32, tr->perm[p], buf)[w], tr->perm[p]};
    qsort(tmp, b - a, sizeof *tmp, hm_cmp_cand);
    for (size_t p = a; p < b; p++)
        tr->perm[p] = tmp[p - a].g;
    const size_t mid = a + (b - a) / 2;
    const uint32_t kid = (uint32_t)tr->nn;
    tr->nn += 2;
    tr->kid[t] = kid;
    hm_build(tr, ds, x64, x32, core2, kid, a, mid, dep + 1, tmp, buf);
    hm_build(tr, ds, x64, x32, core2, kid + 1, mid, b, dep + 1, tmp, buf);
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

/* The k-d tree over every point, for the host's rounds: at most
 * 2 n / (HM_LEAF / 2) + 1 nodes (a cut node's halves hold at least
 * HM_LEAF / 2 points). */
static void hm_tree_make(hm_tree *tr, const hm_round *r, const double *core2)
{
    const size_t n = r->ds->n, dd = r->ds->d ? r->ds->d : 1;
    const size_t cap = 4 * n / HM_LEAF + 3;
    tr->perm = xmalloc(n * sizeof *tr->perm);
    tr->beg = xmalloc(cap * sizeof *tr->beg);
    tr->end = xmalloc(cap * sizeof *tr->end);
    tr->kid = xmalloc(cap * sizeof *tr->kid);
    tr->lo = xmalloc(cap * dd * sizeof *tr->lo);
    tr->hi = xmalloc(cap * dd * sizeof *tr->hi);
    tr->minc = xmalloc(cap * sizeof *tr->minc);
    tr->ncomp = xmalloc(cap * sizeof *tr->ncomp);
    double *buf = xmalloc(dd * sizeof *buf);
    hm_cand *tmp = xmalloc(n * sizeof *tmp);
    for (size_t i = 0; i < n; i++)
        tr->perm[i] = (uint32_t)i;
    tr->nn = 1;
    hm_build(tr, r->ds, r->x64, r->x32, core2, 0, 0, n, 0, tmp, buf);
    free(tmp);
    free(buf);
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

int hdbscan_mst_complete(const engine *eng, const engine_opts *opts, const dataset *ds,
                         const double *core2, size_t nf, const double *fw2, const uint64_t *fab,
                         const volatile int *cancel, double **w2_out, uint64_t **ab_out,
                         hdbscan_mst_stats *st)
{
    const size_t n = ds->n, d = ds->d, dd = d ? d : 1;
    memset(st, 0, sizeof *st);
    hm_key *e = xmalloc((n ? n : 1) * sizeof *e);
    size_t ne = 0;
    uint32_t *up = xmalloc(n * sizeof *up), *sz = xmalloc(n * sizeof *sz);
    for (size_t i = 0; i < n; i++) {
        up[i] = (uint32_t)i;
        sz[i] = 1;
    }
    for (size_t k = 0; k < nf; k++) {
        const uint32_t a = (uint32_t)(fab[k] >> 32), b = (uint32_t)fab[k];
        const uint32_t ra = hm_find(up, a), rb = hm_find(up, b);
        if (ra == rb)
            continue; /* not a forest: the caller's check on n - 1 edges says so */
        e[ne++] = (hm_key){fw2[k], a < b ? a : b, a < b ? b : a};
        hm_unite(up, sz, ra, rb);
    }
    /* rows as the scan reads them */
    hm_round r = {.ds = ds, .core2 = core2, .cancel = cancel};
    r.shrink = 1.0 - 2.0 * ((double)d + 4) * 0x1p-53;
    double *copy = NULL;
    int rc = 0;
    hm_tree tr = {0};
    uint32_t *comp = NULL, *qord = NULL, *fill = NULL, *byc = NULL;
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
        for (size_t i = 0; i < n; i++) {
            comp[i] = hm_find(up, (uint32_t)i);
            if (comp[i] == i) {
                if (big == SIZE_MAX || sz[i] > sz[big])
                    big = i;
                nc++;
            }
        }
        size_t np = 0;
        int nt = 0;
        double t_scan = engine_now();
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
        if (!tr.perm) { /* the host's first round: its rows, tree and scratch */
            if (ds->type == DTYPE_F64)
                r.x64 = ds->v;
            else if (ds->type == DTYPE_F32)
                r.x32 = ds->v;
            else {
                copy = mem_alloc("hdbscan", "an FP64 copy of the dataset", n * dd, sizeof *copy, 0);
                if (!copy) {
                    rc = TCJ_ENOMEM;
                    break;
                }
                dataset_rows_f64(ds, 0, n, copy);
                r.x64 = copy;
            }
            hm_tree_make(&tr, &r, core2);
            qord = xmalloc(n * sizeof *qord);
            fill = xmalloc(n * sizeof *fill);
            cbeg = xmalloc((n + 1) * sizeof *cbeg);
            item = xmalloc((n + 1) * sizeof *item);
            ibest = xmalloc((n + 1) * sizeof *ibest);
            cbest = xmalloc(n * sizeof *cbest);
            /* the points by core distance (then index: the sort is stable), once */
            byc = xmalloc(n * sizeof *byc);
            sort_f64_order(core2, n, byc);
        }
        /* each node's component where its points share one (children
         * after their parents: from the last node back) */
        for (size_t t = tr.nn; t-- > 0;) {
            if (tr.kid[t]) {
                const uint32_t a = tr.ncomp[tr.kid[t]], b = tr.ncomp[tr.kid[t] + 1];
                tr.ncomp[t] = a == b ? a : HM_MIXED;
                continue;
            }
            uint32_t c = comp[tr.perm[tr.beg[t]]];
            for (size_t q = tr.beg[t] + 1; q < tr.end[t] && c != HM_MIXED; q++)
                if (comp[tr.perm[q]] != c)
                    c = HM_MIXED;
            tr.ncomp[t] = c;
        }
        /* the scanned components' points, each component's by core
         * distance, largest components first: fill[root] its next slot */
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
            const uint32_t i = byc[t];
            if (comp[i] != big)
                qord[fill[comp[i]]++] = i;
        }
        size_t ni = 0;
        for (size_t k = 0; k < m; k++)
            for (size_t p = cbeg[k]; p < cbeg[k + 1]; p += HM_CHUNK)
                item[ni++] = (hm_item){pick[k].lo, p,
                                       p + HM_CHUNK < cbeg[k + 1] ? p + HM_CHUNK : cbeg[k + 1]};
        r.comp = comp;
        r.tr = &tr;
        r.qord = qord;
        r.item = item;
        r.nitem = ni;
        r.next = 0;
        r.cbest = cbest;
        r.ibest = ibest;
        const long cores = par_cores();
        nt = cores < 1 ? 1 : cores > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)cores;
        if ((size_t)nt > ni)
            nt = (int)ni;
        t_scan = engine_now();
        par_threads(nt, hm_worker, &r);
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
                    "set-up %.3f s, scan %.3f s on %d threads\n",
                    st->host_rounds + 1, nc, sz[big], n, t_scan - t_round, engine_now() - t_scan,
                    nt);
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
    free(tr.perm);
    free(tr.beg);
    free(tr.end);
    free(tr.kid);
    free(tr.lo);
    free(tr.hi);
    free(tr.minc);
    free(tr.ncomp);
    free(comp);
    free(byc);
    free(qord);
    free(fill);
    free(cbeg);
    free(item);
    free(ibest);
    free(cbest);
    free(pick);
    free(dbest);
    free(copy);
    free(up);
    free(sz);
    if (rc) {
        free(e);
        return rc;
    }
    qsort(e, ne, sizeof *e, hm_cmp_edge);
    double *w2 = xmalloc((ne ? ne : 1) * sizeof *w2);
    uint64_t *ab = xmalloc((ne ? ne : 1) * sizeof *ab);
    for (size_t k = 0; k < ne; k++) {
        w2[k] = e[k].w2;
        ab[k] = (uint64_t)e[k].lo << 32 | e[k].hi;
    }
    free(e);
    *w2_out = w2;
    *ab_out = ab;
    return 0;
}
