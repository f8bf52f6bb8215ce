/* HDBSCAN*'s tree (src/cluster/hdbscan_tree.h). Each step follows
 * scikit-learn's `HDBSCAN` (sklearn/cluster/_hdbscan: make_single_linkage,
 * _condense_tree, _compute_stability, _get_clusters, _do_labelling,
 * get_probabilities) so that labels, their numbering and probabilities
 * compare; where its order of visits decides a value (breadth-first
 * condensing, the rows' order in the stability sums and in the
 * probabilities' maxima) the same order is kept. GLOSH follows the
 * `hdbscan` library's outlier_scores. */
#include "hdbscan_tree.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"
#include "par.h"

#define HT_NONE UINT32_MAX

/* The condensed tree's rows, in the order condensing emits them. */
typedef struct ht_rows {
    uint32_t *parent; /* cluster label (n, n+1, ...) */
    uint32_t *child;  /* a point (< n) or a cluster label */
    double *lambda;
    size_t *size;
    size_t m, cap;
} ht_rows;

static void ht_emit(ht_rows *r, uint32_t parent, uint32_t child, double lambda, size_t size)
{
    r->parent[r->m] = parent;
    r->child[r->m] = child;
    r->lambda[r->m] = lambda;
    r->size[r->m] = size;
    r->m++;
}

/* A point's union-find entry, one cache line's quarter: its parent, and
 * at a root the component's points and its hierarchy node. */
typedef struct ht_uf {
    uint32_t up, cnt, node, pad;
} ht_uf;

static uint32_t ht_find(ht_uf *u, uint32_t x)
{
    while (u[x].up != x) {
        u[x].up = u[u[x].up].up;
        x = u[x].up;
    }
    return x;
}

/* How far ahead the union-find prefetches its edges' ends: its finds are
 * chains of cache misses over arrays far larger than the caches. */
#define HT_AHEAD 16

/* The single-linkage hierarchy (merge k is node n + k, its children
 * left[k] and right[k] of sl[k] and sr[k] points) from the edges in
 * order, each edge oriented away from point 0: left[k] holds the end
 * nearer point 0, the order in which scikit-learn's Prim, grown from
 * point 0, records an edge (the point already in its tree first), from
 * which its cluster numbering follows. Fails where the edges are not a
 * spanning tree.
 *
 * Three passes over the merges, no adjacency lists: a union-find over
 * the points (union by size, path halving; each root holds its
 * component's node) gives merge k its two children, A holding edge
 * (a, b)'s end a; top-down, each node's points take consecutive
 * positions (A's first); and top-down from the root, entered at point 0,
 * each node is entered at one point e: the path from 0 meets merge k's
 * edge at a where e lies in A (A's positions) and enters B at b, else
 * at b, entering A at a. */
static int ht_hierarchy(size_t n, const uint64_t *ab, uint32_t *left, uint32_t *right, uint32_t *sl,
                        uint32_t *sr)
{
    const size_t m = n - 1;
    ht_uf *u = xmalloc(n * sizeof *u);
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        u[i] = (ht_uf){(uint32_t)i, 1, (uint32_t)i, 0};
    for (size_t k = 0; k < m; k++) {
        if (k + HT_AHEAD < m) {
            const uint64_t f = ab[k + HT_AHEAD];
            if ((f >> 32) < n && (uint32_t)f < n) {
                __builtin_prefetch(&u[f >> 32]);
                __builtin_prefetch(&u[(uint32_t)f]);
            }
        }
        const uint64_t a = ab[k] >> 32, b = (uint32_t)ab[k];
        if (a >= n || b >= n || a == b) {
            rc = err_set(TCJ_EINVAL, "hdbscan: tree edge %zu joins %llu and %llu of %zu points", k,
                         (unsigned long long)a, (unsigned long long)b, n);
            break;
        }
        uint32_t ra = ht_find(u, (uint32_t)a), rb = ht_find(u, (uint32_t)b);
        if (ra == rb) {
            rc = err_set(TCJ_EINVAL,
                         "hdbscan: tree edge %zu joins %llu and %llu, already joined: the %zu "
                         "edges are not a spanning tree of %zu points",
                         k, (unsigned long long)a, (unsigned long long)b, m, n);
            break;
        }
        left[k] = u[ra].node;
        right[k] = u[rb].node;
        sl[k] = u[ra].cnt;
        sr[k] = u[rb].cnt;
        if (u[ra].cnt < u[rb].cnt) {
            const uint32_t t = ra;
            ra = rb;
            rb = t;
        }
        u[rb].up = ra;
        u[ra].cnt += u[rb].cnt;
        u[ra].node = (uint32_t)(n + k);
    }
    free(u);
    if (rc)
        return rc;
    /* positions: start[k] the first of node n + k's, pos[i] point i's */
    uint32_t *start = xmalloc(m * sizeof *start), *pos = xmalloc(n * sizeof *pos);
    start[m - 1] = 0;
    for (size_t k = m; k-- > 0;) {
        const uint32_t s = start[k], A = left[k], B = right[k];
        if (A < n)
            pos[A] = s;
        else
            start[A - n] = s;
        if (B < n)
            pos[B] = s + sl[k];
        else
            start[B - n] = s + sl[k];
    }
    /* entries: node n + k is entered at point entry[k] */
    uint32_t *entry = xmalloc(m * sizeof *entry);
    entry[m - 1] = 0;
    for (size_t k = m; k-- > 0;) {
        const uint32_t e = entry[k], A = left[k], B = right[k];
        const uint32_t a = (uint32_t)(ab[k] >> 32), b = (uint32_t)ab[k];
        uint32_t ea = a, eb = e;
        if (pos[e] < start[k] + sl[k]) {
            ea = e;
            eb = b;
        } else {
            const uint32_t t = sl[k];
            left[k] = B;
            right[k] = A;
            sl[k] = sr[k];
            sr[k] = t;
        }
        if (A >= n)
            entry[A - n] = ea;
        if (B >= n)
            entry[B - n] = eb;
    }
    free(entry);
    free(pos);
    free(start);
    return 0;
}

/* The points of the hierarchy's subtree under node x, breadth first (the
 * order scikit-learn lists them in: as the queue takes them, so as they
 * are found, which is where they are emitted; the queue holds the
 * merges alone). */
static void ht_fall(size_t n, const uint32_t *left, const uint32_t *right, uint32_t x,
                    uint32_t *queue, ht_rows *r, uint32_t parent, double lambda)
{
    if (x < n) {
        ht_emit(r, parent, x, lambda, 1);
        return;
    }
    size_t head = 0, tail = 0;
    queue[tail++] = x;
    while (head < tail) {
        const uint32_t v = queue[head++];
        const uint32_t c[2] = {left[v - n], right[v - n]};
        for (int s = 0; s < 2; s++) {
            if (c[s] < n)
                ht_emit(r, parent, c[s], lambda, 1);
            else
                queue[tail++] = c[s];
        }
    }
}

/* The condensed tree from the single-linkage hierarchy (left, right,
 * dist, the children's points sl, sr of merge k = node n + k), breadth first from the root, as
 * scikit-learn's walk over every node skipping those already fallen:
 * the queue holds only the merges that do not fall (a subtree left out
 * of a breadth-first order leaves the rest in the same order). */
static uint32_t ht_condense(size_t n, const uint32_t *left, const uint32_t *right,
                            const double *dist, const uint32_t *sl, const uint32_t *sr, size_t mcs,
                            ht_rows *r)
{
    const size_t m = n - 1;
    uint32_t *order = xmalloc(m * sizeof *order), *queue = xmalloc(m * sizeof *queue);
    uint32_t *relabel = xmalloc(m * sizeof *relabel);
    size_t head = 0, tail = 0;
    order[tail++] = (uint32_t)(m - 1);
    uint32_t next = (uint32_t)n + 1;
    relabel[m - 1] = (uint32_t)n;
    while (head < tail) {
        const uint32_t k = order[head++];
        const uint32_t a = left[k], b = right[k];
        const double d = dist[k];
        const double lambda = d > 0 ? 1.0 / d : INFINITY;
        const size_t ca = sl[k], cb = sr[k];
        const uint32_t me = relabel[k];
        /* a child of at least mcs points is a merge (mcs >= 2) */
        if (ca >= mcs && cb >= mcs) {
            relabel[a - n] = next++;
            ht_emit(r, me, relabel[a - n], lambda, ca);
            relabel[b - n] = next++;
            ht_emit(r, me, relabel[b - n], lambda, cb);
            order[tail++] = a - (uint32_t)n;
            order[tail++] = b - (uint32_t)n;
        } else if (ca < mcs && cb < mcs) {
            ht_fall(n, left, right, a, queue, r, me, lambda);
            ht_fall(n, left, right, b, queue, r, me, lambda);
        } else if (ca < mcs) {
            relabel[b - n] = me;
            ht_fall(n, left, right, a, queue, r, me, lambda);
            order[tail++] = b - (uint32_t)n;
        } else {
            relabel[a - n] = me;
            ht_fall(n, left, right, b, queue, r, me, lambda);
            order[tail++] = a - (uint32_t)n;
        }
    }
    free(order);
    free(queue);
    free(relabel);
    return next; /* one past the last cluster label */
}

/* The clusters' tree (labels minus n; 0 the root): parent, birth lambda,
 * first and second child (HT_NONE: none; a cluster splits in two or not
 * at all). */
typedef struct ht_clusters {
    size_t nc;
    uint32_t *par, *c0, *c1;
    double *birth, *stab;
} ht_clusters;

/* flag[v] = val for every cluster below c (not c itself). */
static void ht_below(const ht_clusters *k, uint32_t c, uint8_t *flag, uint8_t val, uint32_t *stack)
{
    size_t top = 0;
    if (k->c0[c] != HT_NONE) {
        stack[top++] = k->c0[c];
        stack[top++] = k->c1[c];
    }
    while (top) {
        const uint32_t v = stack[--top];
        flag[v] = val;
        if (k->c0[v] != HT_NONE) {
            stack[top++] = k->c0[v];
            stack[top++] = k->c1[v];
        }
    }
}

/* scikit-learn's traverse_upwards: from a leaf born below epsilon, the
 * nearest ancestor born above it (the root's children stop at themselves,
 * or at the root with allow_single). */
static uint32_t ht_upwards(const ht_clusters *k, double eps, uint32_t leaf, int allow_single)
{
    for (;;) {
        const uint32_t parent = k->par[leaf];
        if (parent == 0)
            return allow_single ? 0 : leaf;
        if (1.0 / k->birth[parent] > eps)
            return parent;
        leaf = parent;
    }
}

/* scikit-learn's epsilon_search over the clusters flagged in cand (in
 * ascending order of label: scikit-learn visits a Python set, whose order
 * among labels differs only where two choices nest): sel gets the choice. */
static void ht_epsilon_search(const ht_clusters *k, const uint8_t *cand, double eps,
                              int allow_single, uint8_t *sel, uint32_t *stack)
{
    uint8_t *processed = xcalloc(k->nc, 1);
    memset(sel, 0, k->nc);
    for (uint32_t c = 0; c < k->nc; c++) {
        if (!cand[c])
            continue;
        if (1.0 / k->birth[c] < eps) {
            if (processed[c])
                continue;
            const uint32_t e = ht_upwards(k, eps, c, allow_single);
            sel[e] = 1;
            ht_below(k, e, processed, 1, stack);
        } else
            sel[c] = 1;
    }
    free(processed);
}

/* The selection (scikit-learn's _get_clusters): sel[c] for the chosen
 * clusters. */
static void ht_select(ht_clusters *k, const hdbscan_params *p, uint8_t *sel)
{
    const size_t nc = k->nc;
    uint32_t *stack = xmalloc((nc + 2) * sizeof *stack);
    /* the clusters considered: all but the root, which only allow_single
     * adds */
    uint8_t *is = xmalloc(nc);
    memset(is, 1, nc);
    is[0] = (uint8_t)(p->allow_single != 0);
    if (p->method == HDBSCAN_EOM) {
        /* children before parents: descending labels */
        for (size_t t = nc; t-- > 0;) {
            if (t == 0 && !p->allow_single)
                break;
            const uint32_t c = (uint32_t)t;
            const double sub = k->c0[c] == HT_NONE ? 0.0 : k->stab[k->c0[c]] + k->stab[k->c1[c]];
            if (sub > k->stab[c]) {
                is[c] = 0;
                k->stab[c] = sub;
            } else
                ht_below(k, c, is, 0, stack);
        }
        if (p->epsilon != 0.0 && nc > 1) {
            size_t chosen = 0;
            for (size_t c = 0; c < nc; c++)
                chosen += is[c];
            if (chosen == 1 && is[0])
                is[0] = (uint8_t)(p->allow_single != 0);
            else {
                uint8_t *cand = xmalloc(nc);
                memcpy(cand, is, nc);
                ht_epsilon_search(k, cand, p->epsilon, p->allow_single, is, stack);
                free(cand);
                if (!p->allow_single)
                    is[0] = 0; /* the root is not among the clusters considered */
            }
        }
        memcpy(sel, is, nc);
    } else {
        uint8_t *leaf = xcalloc(nc, 1);
        if (nc > 1)
            for (size_t c = 1; c < nc; c++)
                leaf[c] = k->c0[c] == HT_NONE;
        if (p->epsilon != 0.0)
            ht_epsilon_search(k, leaf, p->epsilon, p->allow_single, sel, stack);
        else
            memcpy(sel, leaf, nc);
        if (!p->allow_single)
            sel[0] = 0;
        free(leaf);
    }
    free(is);
    free(stack);
}

void hdbscan_tree_free(hdbscan_tree *t)
{
    free(t->labels);
    free(t->prob);
    free(t->score);
    free(t->sizes);
    free(t->stability);
    free(t->lambda_birth);
    free(t->nodes);
    free(t->selected);
    memset(t, 0, sizeof *t);
}

/* What each point's row gives it: its label, probability and score. */
typedef struct ht_points {
    size_t n;
    const ht_rows *r;
    const int32_t *num;  /* a cluster's number, -1 where not selected */
    const uint32_t *of;  /* a number's cluster */
    const uint32_t *up;  /* a cluster's nearest selected ancestor or itself */
    const double *death; /* the probabilities' maxima */
    const double *glosh; /* the largest lambda under a cluster */
    int root_only;       /* the root alone selected */
    double root_thr;     /* then the least lambda labelled */
    hdbscan_tree *t;
} ht_points;

/* Rows [a, b): each point is one row's child, so ranges write apart. */
static void ht_points_range(void *ctx, int th, size_t a, size_t b)
{
    (void)th;
    const ht_points *j = ctx;
    const size_t n = j->n;
    hdbscan_tree *t = j->t;
    for (size_t q = a; q < b; q++) {
        const uint32_t x = j->r->child[q];
        if (x >= n)
            continue;
        const uint32_t c = j->r->parent[q] - (uint32_t)n;
        const double lam = j->r->lambda[q];
        int32_t lab = -1;
        const uint32_t up = j->up[c];
        if (up != HT_NONE && up != 0)
            lab = j->num[up];
        else if (up == 0 && j->root_only && lam >= j->root_thr)
            lab = j->num[0];
        t->labels[x] = lab;
        if (lab >= 0) {
            const double m = j->death[j->of[lab]];
            t->prob[x] = m == 0.0 || isinf(lam) ? 1.0 : fmin(lam, m) / m;
        } else
            t->prob[x] = 0.0;
        /* the library's (g - lambda) / g, whose limit 1 is taken where g
         * is infinite (duplicates below the point's cluster), not NaN */
        const double g = j->glosh[c];
        t->score[x] = g == 0.0 || !isfinite(lam) ? 0.0 : isinf(g) ? 1.0 : (g - lam) / g;
    }
}

/* Labels, probabilities, scores and the summary from the condensed rows. */
static void ht_label(size_t n, const ht_rows *r, ht_clusters *k, const uint8_t *sel,
                     const hdbscan_params *p, hdbscan_tree *t)
{
    const size_t nc = k->nc;
    /* cluster numbers in ascending order of label */
    int32_t *num = xmalloc(nc * sizeof *num);
    uint32_t *of = xmalloc((nc ? nc : 1) * sizeof *of);
    size_t nsel = 0;
    for (size_t c = 0; c < nc; c++) {
        num[c] = sel[c] ? (int32_t)nsel : -1;
        if (sel[c])
            of[nsel++] = (uint32_t)c;
    }
    /* each cluster's nearest chosen ancestor or itself (parents have
     * smaller labels than their children) */
    uint32_t *up = xmalloc(nc * sizeof *up);
    for (size_t c = 0; c < nc; c++)
        up[c] = sel[c] ? (uint32_t)c : c ? up[k->par[c]] : HT_NONE;
    /* the root alone, chosen with allow_single: only points at least as
     * dense as the densest of its direct rows (or above 1/epsilon) */
    double root_thr = 0;
    const int root_only = nsel == 1 && sel[0] && p->allow_single;
    if (root_only) {
        if (p->epsilon != 0.0)
            root_thr = 1.0 / p->epsilon;
        else {
            root_thr = -INFINITY;
            for (size_t q = 0; q < r->m; q++)
                if (r->parent[q] == n && r->lambda[q] > root_thr)
                    root_thr = r->lambda[q];
        }
    }
    /* scikit-learn's maxima for the probabilities: each parent's largest
     * lambda over its last run of consecutive rows */
    double *death = xcalloc(nc ? nc : 1, sizeof *death);
    if (r->m) {
        uint32_t cur = r->parent[0];
        double mx = r->lambda[0];
        for (size_t q = 1; q < r->m; q++) {
            if (r->parent[q] == cur)
                mx = fmax(mx, r->lambda[q]);
            else {
                death[cur - n] = mx;
                cur = r->parent[q];
                mx = r->lambda[q];
            }
        }
        death[cur - n] = mx;
    }
    /* GLOSH's: the largest lambda under each cluster, its descendants' too */
    double *glosh = xcalloc(nc ? nc : 1, sizeof *glosh);
    for (size_t q = 0; q < r->m; q++)
        glosh[r->parent[q] - n] = fmax(glosh[r->parent[q] - n], r->lambda[q]);
    for (size_t q = r->m; q-- > 0;)
        if (r->child[q] >= n && glosh[r->child[q] - n] > glosh[r->parent[q] - n])
            glosh[r->parent[q] - n] = glosh[r->child[q] - n];
    t->nclusters = nsel;
    ht_points job = {n, r, num, of, up, death, glosh, root_only, root_thr, t};
    int nt = 1;
    par_for(r->m, PAR_WEIGHT_RANDOM, ht_points_range, &job, &nt);
    t->sizes = xcalloc(nsel ? nsel : 1, sizeof *t->sizes);
    for (size_t i = 0; i < n; i++)
        if (t->labels[i] >= 0)
            t->sizes[t->labels[i]]++;
    t->stability = xmalloc((nsel ? nsel : 1) * sizeof *t->stability);
    t->lambda_birth = xmalloc((nsel ? nsel : 1) * sizeof *t->lambda_birth);
    for (size_t s = 0; s < nsel; s++) {
        t->stability[s] = k->stab[of[s]];
        t->lambda_birth[s] = k->birth[of[s]];
    }
    free(num);
    free(of);
    free(up);
    free(death);
    free(glosh);
}

int hdbscan_tree_build(size_t n, const double *w, const uint64_t *ab, const hdbscan_params *p,
                       hdbscan_tree *t)
{
    memset(t, 0, sizeof *t);
    if (n == 0 || n > UINT32_MAX / 2)
        return err_set(TCJ_EINVAL, "hdbscan: %zu points (1 to %u)", n, UINT32_MAX / 2);
    if (p->min_cluster_size < 2)
        return err_set(TCJ_EINVAL, "hdbscan: min_cluster_size must be at least 2, got %zu",
                       p->min_cluster_size);
    t->n = n;
    t->labels = xmalloc(n * sizeof *t->labels);
    t->prob = xcalloc(n, sizeof *t->prob);
    t->score = xcalloc(n, sizeof *t->score);
    t->selected = xcalloc(1, 1);
    t->ncond = 1;
    if (n == 1) { /* no edge, no split: the point is noise */
        t->labels[0] = -1;
        t->sizes = xcalloc(1, sizeof *t->sizes);
        t->stability = xcalloc(1, sizeof *t->stability);
        t->lambda_birth = xcalloc(1, sizeof *t->lambda_birth);
        return 0;
    }
    const size_t m = n - 1;
    uint32_t *left = xmalloc(m * sizeof *left), *right = xmalloc(m * sizeof *right);
    uint32_t *sl = xmalloc(m * sizeof *sl), *sr = xmalloc(m * sizeof *sr);
    int rc = ht_hierarchy(n, ab, left, right, sl, sr);
    if (rc) {
        free(left);
        free(right);
        free(sl);
        free(sr);
        hdbscan_tree_free(t);
        return rc;
    }
    double weight = 0;
    for (size_t k = 0; k < m; k++)
        weight += w[k];
    t->weight = weight;
    ht_rows r = {0};
    r.cap = 3 * n;
    r.parent = xmalloc(r.cap * sizeof *r.parent);
    r.child = xmalloc(r.cap * sizeof *r.child);
    r.lambda = xmalloc(r.cap * sizeof *r.lambda);
    r.size = xmalloc(r.cap * sizeof *r.size);
    const uint32_t end = ht_condense(n, left, right, w, sl, sr, p->min_cluster_size, &r);
    free(left);
    free(right);
    free(sl);
    free(sr);
    /* the clusters, their births and stabilities (rows in their order) */
    ht_clusters k = {.nc = end - n};
    const size_t nc = k.nc;
    k.par = xmalloc(nc * sizeof *k.par);
    k.c0 = xmalloc(nc * sizeof *k.c0);
    k.c1 = xmalloc(nc * sizeof *k.c1);
    k.birth = xcalloc(nc, sizeof *k.birth);
    k.stab = xcalloc(nc, sizeof *k.stab);
    for (size_t c = 0; c < nc; c++)
        k.par[c] = k.c0[c] = k.c1[c] = HT_NONE;
    t->nodes = xmalloc((nc ? nc : 1) * sizeof *t->nodes);
    for (size_t q = 0; q < r.m; q++) {
        if (r.child[q] < n)
            continue;
        const uint32_t c = r.child[q] - (uint32_t)n, pc = r.parent[q] - (uint32_t)n;
        k.par[c] = pc;
        k.birth[c] = r.lambda[q];
        if (k.c0[pc] == HT_NONE)
            k.c0[pc] = c;
        else
            k.c1[pc] = c;
        t->nodes[c - 1] = (hdbscan_node){pc, c, r.lambda[q], r.size[q]};
    }
    for (size_t q = 0; q < r.m; q++) {
        const uint32_t pc = r.parent[q] - (uint32_t)n;
        k.stab[pc] += (r.lambda[q] - k.birth[pc]) * (double)r.size[q];
    }
    free(t->selected);
    t->selected = xcalloc(nc, 1);
    t->ncond = nc;
    ht_select(&k, p, t->selected);
    ht_label(n, &r, &k, t->selected, p, t);
    free(r.parent);
    free(r.child);
    free(r.lambda);
    free(r.size);
    free(k.par);
    free(k.c0);
    free(k.c1);
    free(k.birth);
    free(k.stab);
    return 0;
}
