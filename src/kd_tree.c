/* A k-d tree for the host's exact searches (src/kd_tree.h). */
#include "kd_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"
#include "par.h"

/* Rows at positions i and j of xp (d values each) and their perm entries
 * trade places. */
static void kd_swap_rows(double *xp, uint32_t *perm, size_t d, size_t i, size_t j)
{
    for (size_t k = 0; k < d; k++) {
        const double v = xp[i * d + k];
        xp[i * d + k] = xp[j * d + k];
        xp[j * d + k] = v;
    }
    const uint32_t r = perm[i];
    perm[i] = perm[j];
    perm[j] = r;
}

/* Whether position i comes before position j in (coordinate w, row)
 * order: the keys are distinct (the row breaks ties). */
static int kd_before(const double *xp, const uint32_t *perm, size_t d, size_t w, size_t i, size_t j)
{
    const double a = xp[i * d + w], b = xp[j * d + w];
    return a < b || (a == b && perm[i] < perm[j]);
}

/* Positions [a, b) of xp and perm reordered so that the k least in
 * (coordinate w, row) order come first (a < k < b): quickselect moving
 * whole rows, so that every pass reads memory in order (a sort of keys
 * with a gather of rows after it is slower, most of its time in cache
 * misses); past 64 rounds insertion by selection
 * finishes the range. */
static void kd_select(double *xp, uint32_t *perm, size_t d, size_t w, size_t a, size_t b, size_t k)
{
    size_t lo = a, hi = b; /* the k-th least lies in [lo, hi) */
    for (int round = 0; hi - lo > 1; round++) {
        if (round == 64) { /* selection sort of what is left: rare */
            for (size_t i = lo; i < hi; i++) {
                size_t m = i;
                for (size_t j = i + 1; j < hi; j++)
                    if (kd_before(xp, perm, d, w, j, m))
                        m = j;
                kd_swap_rows(xp, perm, d, i, m);
            }
            return;
        }
        /* the median of three as pivot, moved to hi - 1 */
        const size_t m = lo + (hi - lo) / 2;
        if (kd_before(xp, perm, d, w, m, lo))
            kd_swap_rows(xp, perm, d, m, lo);
        if (kd_before(xp, perm, d, w, hi - 1, lo))
            kd_swap_rows(xp, perm, d, hi - 1, lo);
        if (kd_before(xp, perm, d, w, m, hi - 1))
            kd_swap_rows(xp, perm, d, m, hi - 1);
        size_t at = lo;
        for (size_t i = lo; i + 1 < hi; i++)
            if (kd_before(xp, perm, d, w, i, hi - 1))
                kd_swap_rows(xp, perm, d, i, at++);
        kd_swap_rows(xp, perm, d, at, hi - 1); /* the pivot: every row before it is less */
        if (at == k)
            return;
        if (at < k)
            lo = at + 1;
        else
            hi = at;
    }
}

static int kd_cmp_double(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Where to cut positions [a, b) along w, and the rows moved to each side:
 * large ranges in one pass around the median of a sample of 255 (the
 * cut then at the pass's split rounded to a whole group, which moves a
 * few rows of equal standing), unless the split lands outside the middle
 * three quarters (ties, skew), where, as in small ranges, quickselect
 * puts the exact median at mid. */
static size_t kd_cut(double *xp, uint32_t *perm, size_t d, size_t w, size_t a, size_t b, size_t mid)
{
    enum { SAMPLE = 255 };
    const size_t n = b - a;
    if (n >= 64 * SAMPLE) {
        double v[SAMPLE];
        for (size_t i = 0; i < SAMPLE; i++)
            v[i] = xp[(a + (2 * i + 1) * n / (2 * SAMPLE)) * d + w];
        qsort(v, SAMPLE, sizeof *v, kd_cmp_double);
        const double piv = v[SAMPLE / 2];
        size_t i = a, j = b; /* [a, i) below piv, [j, b) not */
        while (i < j) {
            if (xp[i * d + w] < piv)
                i++;
            else
                kd_swap_rows(xp, perm, d, i, --j);
        }
        const size_t cut = a + (i - a + CPU_GROUP / 2) / CPU_GROUP * CPU_GROUP;
        if (cut >= a + n / 8 && cut + n / 8 <= b)
            return cut;
    }
    kd_select(xp, perm, d, w, a, b, mid);
    return mid;
}

/* Positions [a, b)'s box into lo and hi (d values each) and, where the
 * range is more than a leaf, its rows cut in two: 1 and *mid, the cut;
 * else 0. */
static int kd_split(const kd_tree *t, double *xp, size_t a, size_t b, double *lo, double *hi,
                    size_t *mid)
{
    const size_t d = t->d;
    for (size_t k = 0; k < d; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (size_t p = a; p < b; p++) {
        const double *x = xp + p * d;
        for (size_t k = 0; k < d; k++) {
            lo[k] = x[k] < lo[k] ? x[k] : lo[k];
            hi[k] = x[k] > hi[k] ? x[k] : hi[k];
        }
    }
    if (b - a <= KD_TREE_LEAF)
        return 0;
    size_t w = 0;
    for (size_t k = 1; k < d; k++)
        if (hi[k] - lo[k] > hi[w] - lo[w])
            w = k;
    /* the cut at the median rounded up to whole groups: every leaf but
     * the last of the tree fills its groups (no padding lanes) */
    *mid = a + ((b - a) / 2 + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    /* the rows below the cut on one side, the rest on the other (any cut
     * is right: the boxes are the rows'); every row the same (hi == lo):
     * cut where they lie, so that no leaf holds more than KD_TREE_LEAF */
    if (d && hi[w] > lo[w])
        *mid = kd_cut(xp, t->perm, d, w, a, b, *mid);
    return 1;
}

/* Node t over positions [a, b) at depth dep, and its subtree (children
 * after their parent, a pair at kid, kid + 1). xp: the rows in FP64 at
 * their positions. */
static void kd_build(kd_tree *t, double *xp, uint32_t node, size_t a, size_t b, size_t dep)
{
    const size_t d = t->d;
    t->beg[node] = (uint32_t)a;
    t->end[node] = (uint32_t)b;
    t->kid[node] = 0;
    t->depth = dep > t->depth ? dep : t->depth;
    size_t mid;
    if (!kd_split(t, xp, a, b, t->lo + (size_t)node * d, t->hi + (size_t)node * d, &mid))
        return;
    const uint32_t kid = (uint32_t)t->nn;
    t->nn += 2;
    t->kid[node] = kid;
    kd_build(t, xp, kid, a, mid, dep + 1);
    kd_build(t, xp, kid + 1, mid, b, dep + 1);
}

/* The tree's top levels cut on the cores, then the subtrees below them
 * each built on one (kd_build), then numbered as kd_build numbers one
 * tree: the same cuts (a range's cut depends on its rows alone), so the
 * same tree, node for node, on any machine. On one core a build at
 * 10^7 x 3 is slow. */
typedef struct kd_top {
    size_t a, b, dep, mid;
    int cut; /* the node is cut in the top levels (kids at the next) */
    int sub; /* the subtree below it built apart (its index in kd_par.sub) */
    int kid; /* the left child's index among the top nodes */
} kd_top;

typedef struct kd_par {
    kd_tree *t;
    double *xp;
    kd_top *top;       /* every top node, level after level */
    double *tlo, *thi; /* their boxes */
    size_t lv0, lv1;   /* the level in hand: top[lv0, lv1) */
    kd_tree *sub;      /* the subtrees: nodes numbered from their root, 0 */
    size_t *subtop;    /* each subtree's top node */
    size_t nsub;
    int nt; /* threads of the call in hand */
} kd_par;

/* Top node k's box, and its cut where it is cut (kd_split, as kd_build). */
static void kd_top_cut(kd_par *p, size_t k)
{
    kd_top *x = p->top + k;
    const size_t d = p->t->d;
    x->cut = kd_split(p->t, p->xp, x->a, x->b, p->tlo + k * d, p->thi + k * d, &x->mid);
}

static void kd_top_level(void *ctx, int th)
{
    kd_par *p = ctx;
    for (size_t k = p->lv0 + (size_t)th; k < p->lv1; k += (size_t)p->nt)
        kd_top_cut(p, k);
}

/* Subtree s as kd_build makes it, its nodes its own. */
static void kd_sub_build(void *ctx, int th)
{
    kd_par *p = ctx;
    for (size_t s = (size_t)th; s < p->nsub; s += (size_t)p->nt) {
        kd_tree *u = p->sub + s;
        const kd_top *x = p->top + p->subtop[s];
        u->nn = 1;
        kd_build(u, p->xp, 0, x->a, x->b, x->dep);
    }
}

/* Global node g for top node k and everything under it, numbered as
 * kd_build numbers them (a node's kid pair taken as it is cut, before its
 * children's). */
static void kd_top_place(kd_par *p, size_t k, uint32_t g)
{
    kd_tree *t = p->t;
    const kd_top *x = p->top + k;
    const size_t d = t->d;
    if (x->sub >= 0) {
        const kd_tree *u = p->sub + x->sub;
        const uint32_t c = (uint32_t)t->nn; /* its node q > 0 becomes c + q - 1 */
        for (size_t q = 0; q < u->nn; q++) {
            const uint32_t G = q ? c + (uint32_t)q - 1 : g;
            t->beg[G] = u->beg[q];
            t->end[G] = u->end[q];
            t->kid[G] = u->kid[q] ? c + u->kid[q] - 1 : 0;
            memcpy(t->lo + (size_t)G * d, u->lo + q * d, d * sizeof *t->lo);
            memcpy(t->hi + (size_t)G * d, u->hi + q * d, d * sizeof *t->hi);
        }
        t->nn += u->nn - 1;
        t->depth = u->depth > t->depth ? u->depth : t->depth;
        return;
    }
    t->beg[g] = (uint32_t)x->a;
    t->end[g] = (uint32_t)x->b;
    t->kid[g] = 0;
    memcpy(t->lo + (size_t)g * d, p->tlo + k * d, d * sizeof *t->lo);
    memcpy(t->hi + (size_t)g * d, p->thi + k * d, d * sizeof *t->hi);
    t->depth = x->dep > t->depth ? x->dep : t->depth;
    if (!x->cut)
        return;
    const uint32_t kid = (uint32_t)t->nn;
    t->nn += 2;
    t->kid[g] = kid;
    kd_top_place(p, (size_t)x->kid, kid);
    kd_top_place(p, (size_t)x->kid + 1, kid + 1);
}

/* The nodes of the tree over xp's n rows, the top `levels` cut on the
 * cores (0: kd_build alone). */
static void kd_build_all(kd_tree *t, double *xp, size_t n, int levels)
{
    if (levels <= 0) {
        kd_build(t, xp, 0, 0, n, 0);
        return;
    }
    const size_t d = t->d, dd = d ? d : 1, mtop = ((size_t)2 << levels) - 1;
    kd_par p = {.t = t, .xp = xp};
    p.top = xcalloc(mtop, sizeof *p.top);
    p.tlo = xmalloc(mtop * dd * sizeof *p.tlo);
    p.thi = xmalloc(mtop * dd * sizeof *p.thi);
    p.sub = xcalloc((size_t)1 << levels, sizeof *p.sub);
    p.subtop = xcalloc((size_t)1 << levels, sizeof *p.subtop);
    size_t ntop = 1;
    p.top[0] = (kd_top){.a = 0, .b = n, .sub = -1};
    for (int l = 0; l <= levels; l++) {
        p.lv0 = p.lv1;
        p.lv1 = ntop;
        if (l == levels) { /* below here: the subtrees */
            for (size_t k = p.lv0; k < p.lv1; k++) {
                kd_tree *u = p.sub + p.nsub;
                const size_t m = p.top[k].b - p.top[k].a, cap = 4 * m / KD_TREE_LEAF + 3;
                *u = (kd_tree){.d = d, .perm = t->perm};
                p.subtop[p.nsub] = k;
                u->beg = xmalloc(cap * sizeof *u->beg);
                u->end = xmalloc(cap * sizeof *u->end);
                u->kid = xmalloc(cap * sizeof *u->kid);
                u->lo = xmalloc(cap * dd * sizeof *u->lo);
                u->hi = xmalloc(cap * dd * sizeof *u->hi);
                p.top[k].sub = (int)p.nsub++;
            }
            break;
        }
        p.nt = (int)(p.lv1 - p.lv0 < PAR_MAX_THREADS ? p.lv1 - p.lv0 : PAR_MAX_THREADS);
        par_threads(p.nt, kd_top_level, &p);
        for (size_t k = p.lv0; k < p.lv1; k++)
            if (p.top[k].cut) {
                p.top[k].kid = (int)ntop;
                p.top[ntop++] = (kd_top){
                    .a = p.top[k].a, .b = p.top[k].mid, .dep = p.top[k].dep + 1, .sub = -1};
                p.top[ntop++] = (kd_top){
                    .a = p.top[k].mid, .b = p.top[k].b, .dep = p.top[k].dep + 1, .sub = -1};
            }
    }
    p.nt = (int)(p.nsub < PAR_MAX_THREADS ? p.nsub : PAR_MAX_THREADS);
    if (p.nt > 0)
        par_threads(p.nt, kd_sub_build, &p);
    t->nn = 1;
    kd_top_place(&p, 0, 0);
    for (size_t s = 0; s < p.nsub; s++) {
        free(p.sub[s].beg);
        free(p.sub[s].end);
        free(p.sub[s].kid);
        free(p.sub[s].lo);
        free(p.sub[s].hi);
    }
    free(p.sub);
    free(p.subtop);
    free(p.top);
    free(p.tlo);
    free(p.thi);
}

int kd_tree_build(const dataset *ds, const cpu_simd_ops *ops, kd_tree *t)
{
    /* a level on the cores from 2^15 rows, up to four from 2^18: subtrees
     * of 16,384 rows and more (a build of that size is work enough for a
     * thread) */
    int levels = 0;
    while (levels < 4 && ds->n >> (levels + 1) >= ((size_t)1 << 14))
        levels++;
    if (par_cores() < 2)
        levels = 0;
    return kd_tree_build_levels(ds, ops, t, levels);
}

/* The row-wise steps around the cuts on the cores: the rows to FP64,
 * the leaves' rows into their groups, each row's position. */
typedef struct kd_rows {
    const dataset *ds;
    kd_tree *t;
    double *rows;
} kd_rows;

static void kd_rows_f64(void *ctx, int th, size_t a, size_t b)
{
    (void)th;
    kd_rows *x = ctx;
    const size_t dd = x->ds->d ? x->ds->d : 1;
    dataset_rows_f64(x->ds, a, b - a, x->rows + a * dd);
}

static void kd_rows_groups(void *ctx, int th, size_t a, size_t b)
{
    (void)th;
    kd_rows *x = ctx;
    kd_tree *t = x->t;
    const size_t d = t->d;
    for (size_t node = a; node < b; node++) {
        if (t->kid[node])
            continue;
        double *g = t->gx + t->grp[node] * d * CPU_GROUP;
        for (size_t p = t->beg[node]; p < t->end[node]; p++) {
            const size_t lane = p - t->beg[node];
            const double *v = x->rows + p * d;
            for (size_t k = 0; k < d; k++)
                g[(lane / CPU_GROUP) * d * CPU_GROUP + k * CPU_GROUP + lane % CPU_GROUP] = v[k];
        }
    }
}

static void kd_rows_pos(void *ctx, int th, size_t a, size_t b)
{
    (void)th;
    kd_tree *t = ((kd_rows *)ctx)->t;
    for (size_t p = a; p < b; p++)
        t->pos[t->perm[p]] = (uint32_t)p;
}

int kd_tree_build_levels(const dataset *ds, const cpu_simd_ops *ops, kd_tree *t, int levels)
{
    memset(t, 0, sizeof *t);
    const size_t n = ds->n, d = ds->d, dd = d ? d : 1;
    t->n = n;
    t->d = d;
    t->ops = ops;
    t->shrink = 1.0 - 2.0 * ((double)d + 4) * 0x1p-53;
    /* nodes: every leaf but the last holds a whole number of groups (at
     * least CPU_GROUP rows); groups: each leaf rounds up to a group */
    const size_t cap = 4 * n / KD_TREE_LEAF + 3;
    /* (a cut off the median keeps the left side whole groups, so the
     * count holds) */
    const size_t gcap = n / CPU_GROUP + cap + 1;
    const char *name = ds->name ? ds->name : "dataset";
    /* (subtrees built apart hold their nodes twice for a moment) */
    if (mem_check(name, "a k-d tree's rows", gcap * CPU_GROUP, dd * sizeof(double),
                  (uint64_t)n * (dd * sizeof(double) + 8) +
                      (uint64_t)cap * (2 * dd * sizeof(double) + 20) * (levels > 0 ? 2 : 1)))
        return TCJ_ENOMEM;
    /* the rows in FP64 at their positions, moved with perm as nodes are cut */
    double *rows = xmalloc(n * dd * sizeof *rows);
    kd_rows kr = {ds, t, rows};
    int nt;
    par_for(n, dd, kd_rows_f64, &kr, &nt);
    t->perm = xmalloc(n * sizeof *t->perm);
    t->pos = xmalloc(n * sizeof *t->pos);
    t->beg = xmalloc(cap * sizeof *t->beg);
    t->end = xmalloc(cap * sizeof *t->end);
    t->kid = xmalloc(cap * sizeof *t->kid);
    t->grp = xmalloc(cap * sizeof *t->grp);
    t->lo = xmalloc(cap * dd * sizeof *t->lo);
    t->hi = xmalloc(cap * dd * sizeof *t->hi);
    for (size_t i = 0; i < n; i++)
        t->perm[i] = (uint32_t)i;
    t->nn = 1;
    if (n)
        kd_build_all(t, rows, n, levels);
    size_t ng = 0;
    for (size_t node = 0; node < t->nn; node++)
        if (!t->kid[node]) {
            t->grp[node] = ng;
            ng += (t->end[node] - t->beg[node] + CPU_GROUP - 1) / CPU_GROUP;
        }
    /* the kernels load whole vectors: 64-byte aligned (a group is a
     * multiple of 128 bytes) */
    const size_t gbytes = (ng ? ng : 1) * CPU_GROUP * dd * sizeof *t->gx;
    t->gx = aligned_alloc(64, gbytes);
    if (!t->gx) {
        free(rows);
        kd_tree_free(t);
        return err_set(TCJ_ENOMEM, "%s: no memory for a k-d tree's rows (%zu bytes)", name, gbytes);
    }
    par_zero(t->gx, gbytes);
    /* a node's weight: its share of the rows (some KD_TREE_LEAF / 2 a node) */
    par_for(t->nn, KD_TREE_LEAF / 2 * dd, kd_rows_groups, &kr, &nt);
    par_for(n, PAR_WEIGHT_RANDOM, kd_rows_pos, &kr, &nt);
    free(rows);
    return 0;
}

void kd_tree_free(kd_tree *t)
{
    free(t->perm);
    free(t->pos);
    free(t->beg);
    free(t->end);
    free(t->kid);
    free(t->grp);
    free(t->lo);
    free(t->hi);
    free(t->gx);
    memset(t, 0, sizeof *t);
}

double kd_tree_gap2(const kd_tree *t, uint32_t node, const double *x)
{
    const size_t d = t->d;
    return t->ops->gap2(x, t->lo + (size_t)node * d, t->hi + (size_t)node * d, d);
}

void kd_tree_rows(const kd_tree *t, uint32_t p0, uint32_t p1, double *x)
{
    const size_t d = t->d;
    uint32_t node = 0;
    for (uint32_t p = p0; p < p1; p++) {
        if (p == p0 || p >= t->end[node]) { /* the leaf holding position p */
            node = 0;
            while (t->kid[node])
                node = p < t->end[t->kid[node]] ? t->kid[node] : t->kid[node] + 1;
        }
        const size_t lane = p - t->beg[node];
        const double *g =
            t->gx + (t->grp[node] + lane / CPU_GROUP) * d * CPU_GROUP + lane % CPU_GROUP;
        for (size_t k = 0; k < d; k++)
            x[(size_t)(p - p0) * d + k] = g[k * CPU_GROUP];
    }
}

void kd_tree_batch(const kd_tree *t, const uint32_t *pos, size_t m, double *x, double *xt,
                   double *mid)
{
    const size_t d = t->d;
    for (size_t r = 0; r < m; r++) {
        kd_tree_rows(t, pos[r], pos[r] + 1, x + r * d);
        for (size_t k = 0; k < d; k++)
            xt[k * KD_TREE_BATCH + r] = x[r * d + k];
    }
    for (size_t k = 0; k < d; k++) {
        double v = 0;
        for (size_t r = 0; r < m; r++)
            v += x[r * d + k];
        mid[k] = v / (double)m;
    }
}

uint32_t kd_tree_live(const kd_tree *t, uint32_t node, const double *xt, uint32_t mask,
                      const double *lim)
{
    const size_t d = t->d;
    return t->ops->box_live(xt, KD_TREE_BATCH, mask, t->lo + (size_t)node * d,
                            t->hi + (size_t)node * d, d, lim, t->shrink);
}

void kd_tree_leaf_rows(const kd_tree *t, uint32_t node, const double *x, uint32_t mask,
                       const double *lim, double *a, double *out)
{
    const size_t d = t->d, nr_max = t->ops->f64_rows;
    const double *g = t->gx + t->grp[node] * d * CPU_GROUP;
    const size_t nc = t->end[node] - t->beg[node];
    while (mask) {
        int rows[CPU_SIMD_MAX_ROWS];
        size_t nr = 0;
        double l = 0;
        for (; mask && nr < nr_max; mask &= mask - 1) {
            const int r = __builtin_ctz(mask);
            rows[nr] = r;
            memcpy(a + nr * d, x + (size_t)r * d, d * sizeof *a);
            l = lim[r] > l ? lim[r] : l;
            nr++;
        }
        double o[CPU_SIMD_MAX_ROWS * KD_TREE_OSTRIDE];
        t->ops->f64(a, nr, d, g, nc, l, nr == 1 ? out + (size_t)rows[0] * KD_TREE_OSTRIDE : o,
                    KD_TREE_OSTRIDE, NULL);
        if (nr > 1)
            for (size_t q = 0; q < nr; q++)
                memcpy(out + (size_t)rows[q] * KD_TREE_OSTRIDE, o + q * KD_TREE_OSTRIDE,
                       nc * sizeof *o);
    }
}

typedef struct kd_knn_job {
    const kd_tree *t;
    const uint32_t *qpos; /* the query rows' positions, ascending */
    size_t nq, next;      /* next: taken atomically */
    size_t q0;
    int k;
    double *out;
    size_t kl;    /* nearest kept a row (0: none) */
    uint32_t *nb; /* kl a row: their rows */
    double *nd2;  /* and squared distances */
    const volatile int *cancel;
    uint64_t examined;
} kd_knn_job;

/* A candidate of a row's nearest: (d2, row), ordered by d2, then row. */
typedef struct kd_near {
    double d2;
    uint32_t row;
} kd_near;

static int kd_near_less(kd_near a, kd_near b)
{
    return a.d2 < b.d2 || (a.d2 == b.d2 && a.row < b.row);
}

/* A max-heap of n candidates (the greatest at h[0]) gains v (room for
 * n + 1). */
static void kd_heap_push(kd_near *h, size_t n, kd_near v)
{
    size_t i = n;
    while (i > 0) {
        const size_t up = (i - 1) / 2;
        if (!kd_near_less(h[up], v))
            break;
        h[i] = h[up];
        i = up;
    }
    h[i] = v;
}

/* A full heap of n candidates: its top replaced by v (v less than it). */
static void kd_heap_replace(kd_near *h, size_t n, kd_near v)
{
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && kd_near_less(h[c], h[c + 1]))
            c++;
        if (!kd_near_less(v, h[c]))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static int kd_cmp_near(const void *x, const void *y)
{
    const kd_near *a = x, *b = y;
    return kd_near_less(*a, *b) ? -1 : kd_near_less(*b, *a);
}

struct kd_tree_walk_visit {
    uint32_t node, mask; /* a node, and the batch's rows still walking */
};

void kd_tree_walk_new(const kd_tree *t, kd_tree_walk_state *s)
{
    const size_t dd = t->d ? t->d : 1;
    s->stack = xmalloc((2 * t->depth + 4) * sizeof *s->stack);
    s->x = xmalloc(KD_TREE_BATCH * dd * sizeof *s->x);
    s->xt = xcalloc(KD_TREE_BATCH * dd, sizeof *s->xt);
    s->lim = xmalloc(KD_TREE_BATCH * sizeof *s->lim);
    s->mid = xmalloc(dd * sizeof *s->mid);
    s->a = xmalloc(CPU_SIMD_MAX_ROWS * dd * sizeof *s->a);
    s->out = xmalloc(KD_TREE_BATCH * KD_TREE_OSTRIDE * sizeof *s->out);
}

void kd_tree_walk_free(kd_tree_walk_state *s)
{
    free(s->stack);
    free(s->x);
    free(s->xt);
    free(s->lim);
    free(s->mid);
    free(s->a);
    free(s->out);
    memset(s, 0, sizeof *s);
}

void kd_tree_walk(const kd_tree *t, kd_tree_walk_state *s, uint32_t mask, const kd_tree_walker *w)
{
    size_t top = 0;
    s->stack[top++] = (struct kd_tree_walk_visit){0, mask};
    while (top) {
        const struct kd_tree_walk_visit v = s->stack[--top];
        const uint32_t node = v.node;
        uint32_t live = w->enter(w->ctx, node, v.mask, s->lim);
        if (live && node)
            live = kd_tree_live(t, node, s->xt, live, s->lim);
        if (!live)
            continue;
        if (t->kid[node]) { /* the nearer child (to the batch's mean) on top */
            const uint32_t a = t->kid[node], b = a + 1;
            const int near_a = kd_tree_gap2(t, a, s->mid) <= kd_tree_gap2(t, b, s->mid);
            s->stack[top++] = (struct kd_tree_walk_visit){near_a ? b : a, live};
            s->stack[top++] = (struct kd_tree_walk_visit){near_a ? a : b, live};
            continue;
        }
        kd_tree_leaf_rows(t, node, s->x, live, s->lim, s->a, s->out);
        w->leaf(w->ctx, node, live, s->out);
    }
}

/* A k-nearest batch: its positions, heaps and the distances computed. */
typedef struct kd_knn_batch {
    const kd_tree *t;
    const uint32_t *qp;
    size_t kk;
    kd_near *h; /* kk a row */
    size_t *len;
    double *lim; /* the walk's: each row's k-th so far */
    uint64_t examined;
} kd_knn_batch;

static uint32_t kd_knn_enter(void *ctx, uint32_t node, uint32_t mask, double *lim)
{
    (void)ctx;
    (void)node;
    (void)lim; /* kept by kd_knn_leaf */
    return mask;
}

/* A leaf's distances into each row's heap: full, the heap takes only what
 * is not above its top (one compare a candidate; NaN fails it). */
static void kd_knn_leaf(void *ctx, uint32_t node, uint32_t mask, const double *out)
{
    kd_knn_batch *kb = ctx;
    const kd_tree *t = kb->t;
    const size_t kk = kb->kk;
    const uint32_t b = t->beg[node], e = t->end[node];
    for (uint32_t mm = mask; mm; mm &= mm - 1) {
        const int r = __builtin_ctz(mm);
        const double *o = out + (size_t)r * KD_TREE_OSTRIDE;
        kd_near *h = kb->h + (size_t)r * kk;
        size_t n = kb->len[r];
        kb->examined += e - b;
        double top = n == kk ? h[0].d2 : INFINITY;
        for (uint32_t p = b; p < e; p++) {
            if (!(o[p - b] <= top) || p == kb->qp[r])
                continue;
            const kd_near c = {o[p - b], t->perm[p]};
            if (n < kk) {
                kd_heap_push(h, n++, c);
                top = n == kk ? h[0].d2 : INFINITY;
            } else if (kd_near_less(c, h[0])) {
                kd_heap_replace(h, kk, c);
                top = h[0].d2;
            }
        }
        kb->len[r] = n;
        kb->lim[r] = top;
    }
}

static void kd_knn_worker(void *ctx, int ti)
{
    (void)ti;
    kd_knn_job *j = ctx;
    const kd_tree *t = j->t;
    const size_t kk = j->kl > (size_t)j->k ? j->kl : (size_t)j->k;
    kd_tree_walk_state s;
    kd_tree_walk_new(t, &s);
    kd_knn_batch kb = {.t = t,
                       .kk = kk,
                       .h = xmalloc(KD_TREE_BATCH * (kk + 1) * sizeof *kb.h),
                       .len = xmalloc(KD_TREE_BATCH * sizeof *kb.len),
                       .lim = s.lim};
    const kd_tree_walker w = {kd_knn_enter, kd_knn_leaf, &kb};
    for (;;) {
        if (j->cancel && *j->cancel)
            break;
        const size_t a = __atomic_fetch_add(&j->next, KD_TREE_BATCH, __ATOMIC_RELAXED);
        if (a >= j->nq)
            break;
        const size_t m = a + KD_TREE_BATCH < j->nq ? KD_TREE_BATCH : j->nq - a;
        kb.qp = j->qpos + a;
        kd_tree_batch(t, kb.qp, m, s.x, s.xt, s.mid);
        for (size_t r = 0; r < m; r++) {
            kb.len[r] = 0;
            s.lim[r] = INFINITY;
        }
        kd_tree_walk(t, &s, m == 32 ? UINT32_MAX : (1u << m) - 1, &w);
        for (size_t r = 0; r < m; r++) {
            const size_t at = t->perm[kb.qp[r]] - j->q0, len = kb.len[r];
            kd_near *h = kb.h + r * kk;
            qsort(h, len, sizeof *h, kd_cmp_near);
            j->out[at] = len >= (size_t)j->k ? h[j->k - 1].d2 : INFINITY;
            for (size_t q = 0; q < j->kl; q++) {
                j->nb[at * j->kl + q] = q < len ? h[q].row : UINT32_MAX;
                j->nd2[at * j->kl + q] = q < len ? h[q].d2 : INFINITY;
            }
        }
    }
    __atomic_fetch_add(&j->examined, kb.examined, __ATOMIC_RELAXED);
    free(kb.h);
    free(kb.len);
    kd_tree_walk_free(&s);
}

int kd_tree_knn(const kd_tree *t, const uint32_t *rows, size_t nrows, size_t q0, int k, double *out,
                size_t kl, uint32_t *nb, double *nd2, int nthr, const volatile int *cancel,
                uint64_t *examined)
{
    /* the query rows in the tree's order: neighbours search one after
     * another over the same nodes while they sit in cache */
    uint32_t *qpos = xmalloc((t->n ? t->n : 1) * sizeof *qpos);
    size_t nq = 0;
    if (rows) {
        uint8_t *want = xcalloc(t->n ? t->n : 1, 1);
        for (size_t i = 0; i < nrows; i++)
            want[t->pos[rows[i]]] = 1;
        for (size_t p = 0; p < t->n; p++)
            if (want[p])
                qpos[nq++] = (uint32_t)p;
        free(want);
    } else {
        for (size_t p = 0; p < t->n; p++)
            qpos[nq++] = (uint32_t)p;
    }
    kd_knn_job j = {.t = t,
                    .qpos = qpos,
                    .nq = nq,
                    .q0 = q0,
                    .k = k,
                    .out = out,
                    .kl = kl,
                    .nb = nb,
                    .nd2 = nd2,
                    .cancel = cancel};
    const size_t chunks = (nq + KD_TREE_BATCH - 1) / KD_TREE_BATCH;
    if (nthr > PAR_MAX_THREADS)
        nthr = PAR_MAX_THREADS;
    if ((size_t)nthr > chunks)
        nthr = chunks ? (int)chunks : 1;
    if (nthr < 1)
        nthr = 1;
    par_threads(nthr, kd_knn_worker, &j);
    free(qpos);
    if (examined)
        *examined = j.examined;
    if (cancel && *cancel)
        return err_set(TCJ_ECANCEL, ERR_CANCELLED);
    return 0;
}
