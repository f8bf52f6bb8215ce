/* The tile cut (kernels.h, kern_tiles_run): the rows in a k-d order, the
 * FP64 bounding box of each block of KERN_STREAM_ALIGN rows, and at a
 * threshold the pairs of blocks whose boxes are within it; one engine run
 * over the rows in that order joins only those tiles.
 *
 * Why a k-d order and not a space-filling curve: a block's box is what
 * prunes, and a median split along the widest dimension of each node
 * (at a whole block) gives every block the same number of rows and boxes
 * about as wide in every dimension; a Morton order's blocks can straddle
 * its jumps, and one straddling block's box spans half the data. Measured
 * (H200, docs/BENCHMARKS.md, exact at S = 64 on 10^6 rows): uniform d = 8
 * keeps 36% of the block pairs (2.7x the whole pass), d = 4 1.5% (40x),
 * 64 Gaussian clusters at d = 4 to 16 1–2.4% (23–46x); uniform d = 16
 * keeps all of them, and auto's estimate leaves such a run whole.
 *
 * Host code over kern_rows_f64, deterministic (the split points and the
 * traversal depend on the rows alone); the build's top levels split over
 * threads, each on its own rows and nodes. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_stream.h"
#include "kernels.h"

#define TILE_B KERN_STREAM_ALIGN
#define TILE_THREAD_DEPTH 3 /* the top 3 levels' left halves on threads: 8 at once */

/* A tree node: blocks [b0, b1); l, r its children (-1: a leaf, one
 * block). A subtree of m blocks holds 2m - 1 nodes, numbered in preorder,
 * so a node's children are known before they are built. */
typedef struct tile_node {
    uint32_t b0, b1;
    int64_t l, r;
} tile_node;

/* A k-d tree over rows in blocks of B: its nodes and their boxes. */
typedef struct tile_tree {
    size_t B, T, d;  /* rows a block, blocks, dimension */
    tile_node *node; /* 2T - 1 */
    double *lo, *hi; /* (2T - 1) x d: each node's box */
} tile_tree;

static void tile_tree_free(tile_tree *t)
{
    free(t->node);
    free(t->lo);
    free(t->hi);
    memset(t, 0, sizeof *t);
}

static int tile_tree_alloc(tile_tree *t, size_t B, size_t rows, size_t d)
{
    t->B = B;
    t->T = (rows + B - 1) / B;
    t->d = d;
    t->node = malloc((2 * t->T - 1) * sizeof *t->node);
    t->lo = malloc((2 * t->T - 1) * d * sizeof(double));
    t->hi = malloc((2 * t->T - 1) * d * sizeof(double));
    return t->node && t->lo && t->hi;
}

static struct {
    stream_data_id ds; /* the dataset the plan is of */
    int done, ok;      /* ok 0: a value not finite (no cut) */
    /* the plan */
    size_t T, npad;  /* blocks, run rows (n padded to whole blocks) */
    uint32_t *rows;  /* npad: the dataset's rows in k-d order, then KERN_ROW_PAD */
    uint8_t *origin; /* npad: 0, or KERN_ORIGIN_NONE for padding */
    double *o;       /* d: the run's centre, as the last run had it */
    int planned;     /* the plan is built (else at most the estimate) */
    tile_tree t;     /* the rows' tree, blocks of TILE_B */
    /* auto's estimate (tile_estimate): a tree over every TILE_SUB-th row
     * in blocks of TILE_B / TILE_SUB rows, and its last answer */
    tile_tree e;
    int e_done;
    double e_lim2, e_work;
    size_t clu[2]; /* the layout's one cluster: [0, npad) */
    /* the last list */
    uint32_t *blk;
    size_t nblk, cap;
    double lim2;
    int listed; /* blk holds the list at lim2 (0: none, or it overflowed) */
} g;

static void tile_free(void)
{
    free(g.rows);
    free(g.origin);
    tile_tree_free(&g.t);
    tile_tree_free(&g.e);
    free(g.o);
    free(g.blk);
    memset(&g, 0, sizeof g);
}

static int tile_same(const kern_join_args *a)
{
    return g.done && stream_data_is(&g.ds, a);
}

/* ---- the build: a k-d order over an FP64 copy of the rows ---- */

typedef struct tile_build {
    double *W;     /* n x d: the rows, permuted with idx */
    uint32_t *idx; /* n: dataset row of each (NULL: not kept) */
    size_t n, d;
    tile_tree *t; /* the tree being built */
} tile_build;

static void tile_swap(const tile_build *b, size_t i, size_t j)
{
    const size_t d = b->d;
    double *x = b->W + i * d, *y = b->W + j * d;
    for (size_t k = 0; k < d; k++) {
        const double t = x[k];
        x[k] = y[k];
        y[k] = t;
    }
    if (b->idx) {
        const uint32_t t = b->idx[i];
        b->idx[i] = b->idx[j];
        b->idx[j] = t;
    }
}

/* Rows [lo, hi) reordered so that those before k are at most those from
 * k on in dimension dim (Hoare's selection, the pivot a median of three
 * moved to lo: both sides of every partition non-empty, duplicates split
 * evenly). */
static void tile_select(const tile_build *b, size_t lo, size_t hi, size_t k, int dim)
{
    const size_t d = b->d;
#define V(i) (b->W[(i)*d + (size_t)dim])
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2, last = hi - 1;
        /* the median of V(lo), V(mid), V(last) to lo */
        size_t m = mid;
        if ((V(lo) <= V(mid)) == (V(mid) <= V(last)))
            m = mid;
        else if ((V(mid) <= V(lo)) == (V(lo) <= V(last)))
            m = lo;
        else
            m = last;
        if (m != lo)
            tile_swap(b, lo, m);
        const double p = V(lo);
        size_t i = lo - 1, j = hi;
        for (;;) {
            do
                i++;
            while (V(i) < p);
            do
                j--;
            while (V(j) > p);
            if (i >= j)
                break;
            tile_swap(b, i, j);
        }
        /* [lo, j] <= p <= [j + 1, hi), lo <= j < hi - 1 */
        if (k <= j)
            hi = j + 1;
        else
            lo = j + 1;
    }
#undef V
}

typedef struct tile_job {
    const tile_build *b;
    int64_t id;
    uint32_t b0, b1;
    int depth;
} tile_job;

static void *tile_build_node(void *arg)
{
    const tile_job *j = arg;
    const tile_build *b = j->b;
    tile_tree *t = b->t;
    const size_t d = b->d, B = t->B, r0 = (size_t)j->b0 * B;
    const size_t r1 = (size_t)j->b1 * B < b->n ? (size_t)j->b1 * B : b->n;
    tile_node *nd = &t->node[j->id];
    nd->b0 = j->b0;
    nd->b1 = j->b1;
    /* The box of the node's rows (the partition below only reorders
     * them); a larger node splits along its widest dimension at a whole
     * block. */
    double *lo = t->lo + j->id * d, *hi = t->hi + j->id * d;
    for (size_t k = 0; k < d; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t i = r0; i < r1; i++)
        for (size_t k = 0; k < d; k++) {
            const double v = b->W[i * d + k];
            lo[k] = v < lo[k] ? v : lo[k];
            hi[k] = v > hi[k] ? v : hi[k];
        }
    if (j->b1 - j->b0 == 1) {
        nd->l = nd->r = -1;
        return NULL;
    }
    int dim = 0;
    for (size_t k = 1; k < d; k++)
        if (hi[k] - lo[k] > hi[dim] - lo[dim])
            dim = (int)k;
    const uint32_t bm = j->b0 + (j->b1 - j->b0) / 2;
    tile_select(b, r0, r1, (size_t)bm * B, dim);
    nd->l = j->id + 1;
    nd->r = j->id + 2 * (int64_t)(bm - j->b0);
    tile_job L = {b, nd->l, j->b0, bm, j->depth + 1}, R = {b, nd->r, bm, j->b1, j->depth + 1};
    pthread_t th;
    const int spawn =
        j->depth < TILE_THREAD_DEPTH && pthread_create(&th, NULL, tile_build_node, &L) == 0;
    if (!spawn)
        tile_build_node(&L);
    tile_build_node(&R);
    if (spawn)
        pthread_join(th, NULL);
    return NULL;
}

/* Plans built (the k-d order over every row), for the tests: auto's
 * estimate must spare the ones that would not pay. */
static size_t g_plans;

/* The dataset the plan and the estimate are of: a fresh one drops both. */
static void tile_dataset(const kern_join_args *a)
{
    if (tile_same(a))
        return;
    tile_free();
    g.ds = stream_data_of(a);
    g.done = 1;
    g.ok = 1;
}

/* The plan of a's rows (after tile_dataset): g.ok 0 when a value is not
 * finite. 0 or KERN_ENOMEM. */
static int tile_plan(const kern_join_args *a)
{
    if (g.planned || !g.ok)
        return 0;
    const size_t n = a->n, d = a->d, T = (n + TILE_B - 1) / TILE_B;
    tile_build b = {malloc(n * d * sizeof(double)), malloc(n * sizeof(uint32_t)), n, d, &g.t};
    g.rows = malloc(T * TILE_B * sizeof *g.rows);
    g.origin = malloc(T * TILE_B);
    g.o = calloc(d, sizeof(double));
    if (!b.W || !b.idx || !g.rows || !g.origin || !g.o || !tile_tree_alloc(&g.t, TILE_B, n, d)) {
        free(b.W);
        free(b.idx);
        tile_free();
        return kern_fail_msg(KERN_ENOMEM, "out of host memory for the tile cut's order");
    }
    kern_rows_f64(a, 0, n, b.W);
    int ok = 1;
    for (size_t i = 0; i < n * d && ok; i++)
        ok = isfinite(b.W[i]);
    if (ok) {
        for (size_t i = 0; i < n; i++)
            b.idx[i] = (uint32_t)i;
        tile_job root = {&b, 0, 0, (uint32_t)T, 0};
        tile_build_node(&root);
        g.T = T;
        g.npad = T * TILE_B;
        memcpy(g.rows, b.idx, n * sizeof *g.rows);
        memset(g.origin, 0, n);
        for (size_t v = n; v < g.npad; v++) {
            g.rows[v] = KERN_ROW_PAD;
            g.origin[v] = KERN_ORIGIN_NONE;
        }
        g.clu[0] = 0;
        g.clu[1] = g.npad;
    }
    free(b.W);
    free(b.idx);
    g.ok = ok;
    g.planned = ok;
    g_plans++;
    return 0;
}

size_t kern_tiles_plans_for_tests(void)
{
    return g_plans;
}

/* The squared gap beyond which a pair of boxes is left out at lim2: an
 * FP64 d2 the engine keeps is within (d + 2) 2^-53 of the true one, and
 * the boxes' gaps are exact differences of the rows' values up to one
 * rounding each: 2^-40 is far beyond both. */
static double tile_thr(double lim2)
{
    return lim2 * (1 + 0x1p-40);
}

/* ---- auto's estimate: is the list worth building? ----
 * The plan costs an FP64 copy of the rows and a k-d build over them (spent
 * for nothing on uniform 10^6 x 16, where the list then holds every
 * block pair and the cut is not taken). auto first builds the tree of every
 * TILE_SUB-th row in blocks of TILE_B / TILE_SUB rows: each of its blocks
 * holds the share of the data a plan's block holds, so its boxes are about
 * the plan's (a little smaller: fewer rows span less of their region, so
 * the estimate errs low, towards building the plan, whose list then
 * decides exactly). The share of
 * block pairs within the threshold is counted for TILE_EST_BLOCKS blocks
 * spread over the tree, each against the whole tree (pruned by its nodes'
 * boxes). A sixteenth of the rows' work, kept per dataset. */
#define TILE_SUB 16
#define TILE_EST_BLOCKS 256

static double tile_gap2(const tile_tree *t, int64_t p, int64_t q);

/* Blocks of t within thr of leaf p, below node q. */
static size_t tile_count_near(const tile_tree *t, double thr, int64_t p, int64_t q)
{
    if (tile_gap2(t, p, q) > thr)
        return 0;
    const tile_node *Q = &t->node[q];
    if (Q->l < 0)
        return 1;
    return tile_count_near(t, thr, p, Q->l) + tile_count_near(t, thr, p, Q->r);
}

/* The estimated share of the block pairs within lim2 (after tile_dataset),
 * into *work; 2 when there is no estimate (values not finite: no cut). 0
 * or KERN_ENOMEM. */
static int tile_estimate(const kern_join_args *a, double lim2, double *work)
{
    if (g.e_done && g.e_lim2 == lim2) {
        *work = g.e_work;
        return 0;
    }
    const size_t d = a->d, m = (a->n + TILE_SUB - 1) / TILE_SUB, B = TILE_B / TILE_SUB;
    if (!g.e.node) {
        tile_build b = {malloc(m * d * sizeof(double)), NULL, m, d, &g.e};
        if (!b.W || !tile_tree_alloc(&g.e, B, m, d)) {
            free(b.W);
            tile_tree_free(&g.e);
            return kern_fail_msg(KERN_ENOMEM, "out of host memory for the tile cut's estimate");
        }
        for (size_t i = 0; i < m; i++)
            kern_rows_f64(a, i * TILE_SUB, 1, b.W + i * d);
        int ok = 1;
        for (size_t i = 0; i < m * d && ok; i++)
            ok = isfinite(b.W[i]);
        if (ok) {
            tile_job root = {&b, 0, 0, (uint32_t)g.e.T, 0};
            tile_build_node(&root);
        }
        free(b.W);
        g.ok = ok;
    }
    double w = 2;
    if (g.ok) {
        const double thr = tile_thr(lim2);
        const size_t T = g.e.T, S = T < TILE_EST_BLOCKS ? T : TILE_EST_BLOCKS;
        size_t near = 0;
        for (size_t s = 0; s < S; s++) {
            /* block s T / S: its leaf, down from the root */
            const uint32_t blk = (uint32_t)(s * T / S);
            int64_t p = 0;
            while (g.e.node[p].l >= 0)
                p = blk < g.e.node[g.e.node[p].l].b1 ? g.e.node[p].l : g.e.node[p].r;
            near += tile_count_near(&g.e, thr, p, 0);
        }
        w = (double)near / ((double)S * (double)T);
    }
    g.e_done = 1;
    g.e_lim2 = lim2;
    g.e_work = w;
    *work = w;
    return 0;
}

/* ---- the list: the tree's node pairs, pruned by their boxes ----
 * The node pairs that survive the top levels become tasks (at least
 * TILE_TASKS of them where the tree has them), walked on threads each
 * into its own list, and the lists joined in task order: the same list
 * as one walk would make, whatever the threads. */

#define TILE_TASKS 256
#define TILE_THREADS 16

typedef struct tile_walk {
    double thr;     /* prune a pair of boxes farther apart than this (squared) */
    size_t cap;     /* the most pairs all lists may hold together */
    size_t *total;  /* pairs listed by every walk (atomic) */
    int *over;      /* a walk found more than cap (atomic flag) */
    uint32_t *out;  /* this walk's pairs */
    size_t n, room; /* ... held, and allocated */
    int oom;
} tile_walk;

static double tile_gap2(const tile_tree *t, int64_t p, int64_t q)
{
    const size_t d = t->d;
    const double *pl = t->lo + p * d, *ph = t->hi + p * d, *ql = t->lo + q * d, *qh = t->hi + q * d;
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double t = ql[k] > ph[k] ? ql[k] - ph[k] : pl[k] > qh[k] ? pl[k] - qh[k] : 0;
        s += t * t;
    }
    return s;
}

static void tile_emit(tile_walk *w, uint32_t i, uint32_t j)
{
    if (__atomic_add_fetch(w->total, 1, __ATOMIC_RELAXED) > w->cap) {
        __atomic_store_n(w->over, 1, __ATOMIC_RELAXED);
        return;
    }
    if (w->n == w->room) {
        const size_t room = w->room ? 2 * w->room : 1024;
        uint32_t *o = realloc(w->out, room * 2 * sizeof *o);
        if (!o) {
            w->oom = 1;
            __atomic_store_n(w->over, 1, __ATOMIC_RELAXED);
            return;
        }
        w->out = o;
        w->room = room;
    }
    w->out[2 * w->n] = i;
    w->out[2 * w->n + 1] = j;
    w->n++;
}

/* The children of the node pair (p, q) worth visiting, into c (at most
 * 4 pairs); 0 when (p, q) is a pair of blocks. Node p's blocks all come
 * before q's, or p == q; so do the children's. */
static int tile_split(int64_t p, int64_t q, int64_t c[4][2])
{
    const tile_node *P = &g.t.node[p], *Q = &g.t.node[q];
    if (P->l < 0 && Q->l < 0)
        return 0;
    if (p == q) {
        c[0][0] = P->l, c[0][1] = P->l;
        c[1][0] = P->l, c[1][1] = P->r;
        c[2][0] = P->r, c[2][1] = P->r;
        return 3;
    }
    if (Q->l < 0 || (P->l >= 0 && P->b1 - P->b0 >= Q->b1 - Q->b0)) {
        c[0][0] = P->l, c[0][1] = q;
        c[1][0] = P->r, c[1][1] = q;
    } else {
        c[0][0] = p, c[0][1] = Q->l;
        c[1][0] = p, c[1][1] = Q->r;
    }
    return 2;
}

static int tile_near(double thr, int64_t p, int64_t q)
{
    return p == q || tile_gap2(&g.t, p, q) <= thr;
}

static void tile_pairs(tile_walk *w, int64_t p, int64_t q)
{
    if (__atomic_load_n(w->over, __ATOMIC_RELAXED) || !tile_near(w->thr, p, q))
        return;
    int64_t c[4][2];
    const int m = tile_split(p, q, c);
    if (!m) {
        tile_emit(w, g.t.node[p].b0, g.t.node[q].b0);
        return;
    }
    for (int k = 0; k < m; k++)
        tile_pairs(w, c[k][0], c[k][1]);
}

typedef struct tile_tasks {
    int64_t (*pq)[2];
    tile_walk *w;
    size_t n, next;
} tile_tasks;

static void *tile_worker(void *arg)
{
    tile_tasks *t = arg;
    for (;;) {
        const size_t k = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
        if (k >= t->n)
            return NULL;
        tile_pairs(&t->w[k], t->pq[k][0], t->pq[k][1]);
    }
}

/* The list at lim2 into g.blk (g.listed 0: more than cap pairs). 0 or
 * KERN_ENOMEM. */
static int tile_list(double lim2, size_t cap)
{
    if (g.listed && g.lim2 == lim2)
        return 0;
    g.listed = 0;
    g.nblk = 0;
    const double thr = tile_thr(lim2);
    size_t total = 0;
    int over = 0, rc = 0; /* The tasks: node pairs near enough, split level by level (a pair of
                           * blocks is a task of its own) while fewer than TILE_TASKS: a level
                           * makes at most three of each, so 3 TILE_TASKS hold the last. */
    size_t nt = 1, room = 3 * TILE_TASKS;
    int64_t(*pq)[2] = malloc(room * sizeof *pq), (*nx)[2] = malloc(room * sizeof *nx);
    tile_walk *w = NULL;
    if (!pq || !nx) {
        rc = KERN_ENOMEM;
        goto out;
    }
    pq[0][0] = pq[0][1] = 0;
    for (int grew = 1; nt < TILE_TASKS && grew;) {
        size_t m = 0;
        grew = 0;
        for (size_t k = 0; k < nt; k++) {
            int64_t c[4][2];
            const int s = tile_split(pq[k][0], pq[k][1], c);
            if (!s) {
                nx[m][0] = pq[k][0], nx[m][1] = pq[k][1], m++;
                continue;
            }
            for (int t = 0; t < s; t++)
                if (tile_near(thr, c[t][0], c[t][1]))
                    nx[m][0] = c[t][0], nx[m][1] = c[t][1], m++;
            grew = 1;
        }
        int64_t(*t)[2] = pq;
        pq = nx;
        nx = t;
        nt = m;
    }
    w = calloc(nt ? nt : 1, sizeof *w);
    if (!w) {
        rc = KERN_ENOMEM;
        goto out;
    }
    for (size_t k = 0; k < nt; k++)
        w[k] = (tile_walk){.thr = thr, .cap = cap, .total = &total, .over = &over};
    tile_tasks tk = {pq, w, nt, 0};
    pthread_t th[TILE_THREADS];
    int started = 0;
    for (; started < TILE_THREADS - 1 && (size_t)started + 1 < nt; started++)
        if (pthread_create(&th[started], NULL, tile_worker, &tk))
            break;
    tile_worker(&tk);
    for (int k = 0; k < started; k++)
        pthread_join(th[k], NULL);
    for (size_t k = 0; k < nt; k++)
        if (w[k].oom)
            rc = KERN_ENOMEM;
    if (!rc && !over) {
        if (g.cap < total) {
            free(g.blk);
            g.blk = malloc((total ? total : 1) * 2 * sizeof *g.blk);
            g.cap = g.blk ? total : 0;
            if (!g.blk)
                rc = KERN_ENOMEM;
        }
        for (size_t k = 0; !rc && k < nt; k++) {
            memcpy(g.blk + 2 * g.nblk, w[k].out, w[k].n * 2 * sizeof *g.blk);
            g.nblk += w[k].n;
        }
        g.listed = !rc;
        g.lim2 = lim2;
    }
out:
    for (size_t k = 0; w && k < nt; k++)
        free(w[k].out);
    free(w);
    free(pq);
    free(nx);
    if (rc)
        return kern_fail_msg(KERN_ENOMEM, "out of host memory for the tile cut's list");
    return 0;
}

/* ---- the run ---- */

/* h mixed with the bits of v (stream_hash's mixer), the value's place k. */
static uint64_t tile_mix(uint64_t h, double v, size_t k)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    return stream_hash(h, (size_t)bits, k, 0);
}
int kern_tiles_run(kern_join_fn fn, kern_join_fn other, const kern_join_args *a,
                   kern_join_result *r, int force)
{
    if (!a->symmetric || a->c0 || a->q0 != 0 || a->q1 != a->n || a->rows || a->nclu || a->sub ||
        a->n < KERN_TILE_MIN_ROWS || a->n > (size_t)UINT32_MAX - TILE_B)
        return other(a, r);
    const double lim2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    tile_dataset(a);
    int rc = 0;
    double est = 0;
    /* auto: the plan only where the estimate says the list may pay */
    if (!force && !g.planned && (rc = tile_estimate(a, lim2, &est)))
        return rc;
    if (!g.ok || est > KERN_TILE_KEEP)
        return other(a, r);
    if ((rc = tile_plan(a)))
        return rc;
    if (!g.ok)
        return other(a, r);
    const double total = (double)g.T * (double)(g.T + 1) / 2;
    size_t cap = force ? (size_t)total : (size_t)(KERN_TILE_KEEP * total);
    cap = cap < KERN_TILE_MAX_PAIRS ? cap : KERN_TILE_MAX_PAIRS;
    if ((rc = tile_list(lim2, cap ? cap : 1)))
        return rc;
    if (!g.listed || g.nblk > cap) /* (a list kept from a forced run may be longer) */
        return other(a, r);
    const size_t d = a->d;
    for (size_t k = 0; k < d; k++)
        g.o[k] = a->center ? a->center[k] : 0;
    kern_join_args s = *a;
    s.n = g.npad;
    s.center = NULL;
    s.rows = g.rows;
    s.origins = g.o;
    s.origin_of = g.origin;
    s.clu = g.clu;
    s.nclu = 1;
    s.blk = g.blk;
    s.nblk = g.nblk;
    /* The device caches know a run by its hash: the order, and the centre
     * and scale its values were converted with. */
    uint64_t h = stream_hash(a->hash ^ 0x711e5c0711e5c07ull, g.T, g.npad, 0);
    for (size_t k = 0; k < d; k++)
        h = tile_mix(h, g.o[k], k);
    s.hash = tile_mix(h, a->scale, d);
    rc = stream_layout(fn, a, &s, "the tile cut", r);
    /* The run's variant says the pass was cut (exact's path metric too). */
    const size_t vl = strlen(r->variant);
    snprintf(r->variant + vl, sizeof r->variant - vl, "%stiles", vl ? " " : "");
    r->tile_blocks = g.T;
    r->tile_work = (double)g.nblk / total;
    return rc;
}

int kern_exact_tiles_run(const kern_join_args *a, kern_join_result *r)
{
    return kern_tiles_run(kern_exact_run, kern_exact_run, a, r, 1);
}

int kern_exact_auto_run(const kern_join_args *a, kern_join_result *r)
{
    if (a->d <= KERN_TILE_MAX_D)
        return kern_tiles_run(kern_exact_run, kern_exact_clusters_auto_run, a, r, 0);
    return kern_exact_clusters_auto_run(a, r);
}
