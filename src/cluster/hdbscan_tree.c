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

/* Each edge oriented away from point 0 (cur[k] the end nearer 0): the
 * order scikit-learn's Prim, grown from point 0, records an edge in (the
 * point already in its tree first). Fails where the edges are not a
 * spanning tree. */
static int ht_orient(size_t n, const uint64_t *ab, uint32_t *cur, uint32_t *nxt)
{
    const size_t m = n - 1;
    uint32_t *off = xcalloc(n + 1, sizeof *off), *adj = xmalloc(2 * m * sizeof *adj);
    uint32_t *queue = xmalloc(n * sizeof *queue);
    uint8_t *seen = xcalloc(n, 1);
    int rc = 0;
    for (size_t k = 0; k < m && rc == 0; k++) {
        const uint64_t a = ab[k] >> 32, b = (uint32_t)ab[k];
        if (a >= n || b >= n || a == b)
            rc = err_set(TCJ_EINVAL, "hdbscan: tree edge %zu joins %llu and %llu of %zu points", k,
                         (unsigned long long)a, (unsigned long long)b, n);
        else {
            off[a + 1]++;
            off[b + 1]++;
        }
    }
    if (rc == 0) {
        for (size_t i = 0; i < n; i++)
            off[i + 1] += off[i];
        uint32_t *fill = xmalloc(n * sizeof *fill);
        memcpy(fill, off, n * sizeof *fill);
        for (size_t k = 0; k < m; k++) {
            adj[fill[ab[k] >> 32]++] = (uint32_t)k;
            adj[fill[(uint32_t)ab[k]]++] = (uint32_t)k;
        }
        free(fill);
        size_t head = 0, tail = 0;
        queue[tail++] = 0;
        seen[0] = 1;
        while (head < tail) {
            const uint32_t u = queue[head++];
            for (uint32_t t = off[u]; t < off[u + 1]; t++) {
                const uint32_t k = adj[t];
                const uint32_t a = (uint32_t)(ab[k] >> 32), b = (uint32_t)ab[k];
                const uint32_t v = a == u ? b : a;
                if (seen[v])
                    continue;
                seen[v] = 1;
                cur[k] = u;
                nxt[k] = v;
                queue[tail++] = v;
            }
        }
        if (tail != n)
            rc = err_set(TCJ_EINVAL,
                         "hdbscan: the %zu edges reach %zu of %zu points: not a spanning tree", m,
                         tail, n);
    }
    free(off);
    free(adj);
    free(queue);
    free(seen);
    return rc;
}

static uint32_t ht_find(uint32_t *up, uint32_t x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

/* The points of the hierarchy's subtree under node x, breadth first (the
 * order scikit-learn lists them in), each node of it marked ignored. */
static void ht_fall(size_t n, const uint32_t *left, const uint32_t *right, uint32_t x,
                    uint32_t *queue, uint8_t *ignore, ht_rows *r, uint32_t parent, double lambda)
{
    size_t head = 0, tail = 0;
    queue[tail++] = x;
    while (head < tail) {
        const uint32_t v = queue[head++];
        ignore[v] = 1;
        if (v < n)
            ht_emit(r, parent, v, lambda, 1);
        else {
            queue[tail++] = left[v - n];
            queue[tail++] = right[v - n];
        }
    }
}

/* The condensed tree from the single-linkage hierarchy (left, right,
 * dist, size of merge k = node n + k), breadth first from the root. */
static uint32_t ht_condense(size_t n, const uint32_t *left, const uint32_t *right,
                            const double *dist, const size_t *size, size_t mcs, ht_rows *r)
{
    const size_t nodes = 2 * n - 1;
    uint32_t *order = xmalloc(nodes * sizeof *order), *queue = xmalloc(nodes * sizeof *queue);
    uint32_t *relabel = xmalloc(nodes * sizeof *relabel);
    uint8_t *ignore = xcalloc(nodes, 1);
    size_t head = 0, tail = 0;
    const uint32_t root = (uint32_t)(nodes - 1);
    order[tail++] = root;
    while (head < tail) {
        const uint32_t v = order[head++];
        if (v >= n) {
            order[tail++] = left[v - n];
            order[tail++] = right[v - n];
        }
    }
    uint32_t next = (uint32_t)n + 1;
    relabel[root] = (uint32_t)n;
    for (size_t t = 0; t < nodes; t++) {
        const uint32_t v = order[t];
        if (ignore[v] || v < n)
            continue;
        const uint32_t a = left[v - n], b = right[v - n];
        const double d = dist[v - n];
        const double lambda = d > 0 ? 1.0 / d : INFINITY;
        const size_t ca = a >= n ? size[a - n] : 1, cb = b >= n ? size[b - n] : 1;
        const uint32_t me = relabel[v];
        if (ca >= mcs && cb >= mcs) {
            relabel[a] = next++;
            ht_emit(r, me, relabel[a], lambda, ca);
            relabel[b] = next++;
            ht_emit(r, me, relabel[b], lambda, cb);
        } else if (ca < mcs && cb < mcs) {
            ht_fall(n, left, right, a, queue, ignore, r, me, lambda);
            ht_fall(n, left, right, b, queue, ignore, r, me, lambda);
        } else if (ca < mcs) {
            relabel[b] = me;
            ht_fall(n, left, right, a, queue, ignore, r, me, lambda);
        } else {
            relabel[a] = me;
            ht_fall(n, left, right, b, queue, ignore, r, me, lambda);
        }
    }
    free(order);
    free(queue);
    free(relabel);
    free(ignore);
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
    t->sizes = xcalloc(nsel ? nsel : 1, sizeof *t->sizes);
    for (size_t q = 0; q < r->m; q++) {
        const uint32_t x = r->child[q];
        if (x >= n)
            continue;
        const uint32_t c = r->parent[q] - (uint32_t)n;
        const double lam = r->lambda[q];
        int32_t lab = -1;
        const uint32_t a = up[c];
        if (a != HT_NONE && a != 0)
            lab = num[a];
        else if (a == 0 && root_only && lam >= root_thr)
            lab = num[0];
        t->labels[x] = lab;
        if (lab >= 0) {
            const double m = death[of[lab]];
            t->prob[x] = m == 0.0 || isinf(lam) ? 1.0 : fmin(lam, m) / m;
            t->sizes[lab]++;
        } else
            t->prob[x] = 0.0;
        /* the library's (g - lambda) / g, whose limit 1 is taken where g
         * is infinite (duplicates below the point's cluster), not NaN */
        const double g = glosh[c];
        t->score[x] = g == 0.0 || !isfinite(lam) ? 0.0 : isinf(g) ? 1.0 : (g - lam) / g;
    }
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
    uint32_t *cur = xmalloc(m * sizeof *cur), *nxt = xmalloc(m * sizeof *nxt);
    int rc = ht_orient(n, ab, cur, nxt);
    if (rc) {
        free(cur);
        free(nxt);
        hdbscan_tree_free(t);
        return rc;
    }
    /* the single-linkage hierarchy: merge k is node n + k */
    uint32_t *up = xmalloc((2 * n - 1) * sizeof *up);
    size_t *cnt = xmalloc((2 * n - 1) * sizeof *cnt);
    for (size_t i = 0; i < 2 * n - 1; i++) {
        up[i] = (uint32_t)i;
        cnt[i] = 1;
    }
    uint32_t *left = xmalloc(m * sizeof *left), *right = xmalloc(m * sizeof *right);
    size_t *size = xmalloc(m * sizeof *size);
    double weight = 0;
    for (size_t k = 0; k < m; k++) {
        const uint32_t a = ht_find(up, cur[k]), b = ht_find(up, nxt[k]);
        const uint32_t node = (uint32_t)(n + k);
        left[k] = a;
        right[k] = b;
        size[k] = cnt[node] = cnt[a] + cnt[b];
        up[a] = up[b] = node;
        weight += w[k];
    }
    t->weight = weight;
    free(cur);
    free(nxt);
    free(up);
    free(cnt);
    ht_rows r = {0};
    r.cap = 3 * n;
    r.parent = xmalloc(r.cap * sizeof *r.parent);
    r.child = xmalloc(r.cap * sizeof *r.child);
    r.lambda = xmalloc(r.cap * sizeof *r.lambda);
    r.size = xmalloc(r.cap * sizeof *r.size);
    const uint32_t end = ht_condense(n, left, right, w, size, p->min_cluster_size, &r);
    free(left);
    free(right);
    free(size);
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
