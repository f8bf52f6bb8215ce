/* DBSCAN's curve: each point's K nearest and the first round's lists
 * from them (src/cluster/curve_knn.h). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "curve_knn.h"
#include "err.h"
#include "knn_lists.h"
#include "mem.h"
#include "pair_par.h"
#include "par.h"

size_t curve_knn_room(size_t n)
{
    /* 12 bytes an entry on the host (and as much again on a device):
     * within a quarter of what this process can get */
    const uint64_t avail = mem_available();
    if (avail == UINT64_MAX || n == 0 || (uint64_t)n * CURVE_CORE_MAX_K * 12 <= avail / 4)
        return CURVE_CORE_MAX_K;
    return (size_t)(avail / 4 / 12 / n);
}

int curve_knn_alloc(curve_knn *nn, size_t n, size_t K)
{
    memset(nn, 0, sizeof *nn);
    const char *what = "dbscan curve", *why = "each point's K nearest";
    nn->d2 = mem_alloc(what, why, n * K, sizeof *nn->d2, 0);
    nn->row = nn->d2 ? mem_alloc(what, why, n * K, sizeof *nn->row, 0) : NULL;
    if (!nn->row) {
        curve_knn_free(nn);
        return TCJ_ENOMEM;
    }
    nn->n = n;
    nn->K = K;
    par_zero(nn->d2, n * K * sizeof *nn->d2);
    par_zero(nn->row, n * K * sizeof *nn->row);
    return 0;
}

void curve_knn_free(curve_knn *nn)
{
    free(nn->d2);
    free(nn->row);
    memset(nn, 0, sizeof *nn);
}

/* (d, r) before (e, s) by (d2, row): a total order, so the K kept are the
 * same whatever order the pairs come in. */
static int kn_before(double d, uint32_t r, double e, uint32_t s)
{
    return d < e || (d == e && r < s);
}

typedef struct kn_sink {
    pthread_mutex_t mu;
    curve_knn *nn;
    uint32_t *len;
} kn_sink;

/* (d, j) into point p's max-heap of its K least, j once. */
static void kn_put(kn_sink *s, uint32_t p, double d, uint32_t j)
{
    const size_t K = s->nn->K;
    double *hd = s->nn->d2 + (size_t)p * K;
    uint32_t *hj = s->nn->row + (size_t)p * K;
    const uint32_t m = s->len[p];
    if (m == K && !kn_before(d, j, hd[0], hj[0]))
        return;
    for (uint32_t t = 0; t < m; t++)
        if (hj[t] == j)
            return; /* the pair's other order, or a second launch */
    size_t t;
    if (m < K) {
        t = m;
        while (t > 0 && kn_before(hd[(t - 1) / 2], hj[(t - 1) / 2], d, j)) {
            hd[t] = hd[(t - 1) / 2];
            hj[t] = hj[(t - 1) / 2];
            t = (t - 1) / 2;
        }
        s->len[p] = m + 1;
    } else {
        t = 0;
        for (;;) { /* the new root sifted down */
            size_t c = 2 * t + 1;
            if (c >= K)
                break;
            if (c + 1 < K && kn_before(hd[c], hj[c], hd[c + 1], hj[c + 1]))
                c++;
            if (!kn_before(d, j, hd[c], hj[c]))
                break;
            hd[t] = hd[c];
            hj[t] = hj[c];
            t = c;
        }
    }
    hd[t] = d;
    hj[t] = j;
}

/* The batch's pairs for the points in [lo, hi) (src/pair_par.h). */
static void kn_range(void *ctx, const pair_batch *b, size_t lo, size_t hi)
{
    kn_sink *s = ctx;
    for (size_t k = 0; k < b->k; k++) {
        const uint32_t i = b->i[k], j = b->j[k];
        if (i == j)
            continue;
        if (i >= lo && i < hi)
            kn_put(s, i, b->d2[k], j);
        if (j >= lo && j < hi)
            kn_put(s, j, b->d2[k], i);
    }
}

static int kn_batch(void *ctx, const pair_batch *b)
{
    kn_sink *s = ctx;
    pthread_mutex_lock(&s->mu);
    pair_par(b, s->nn->n, kn_range, s);
    pthread_mutex_unlock(&s->mu);
    return 0;
}

typedef struct kn_out {
    kn_sink *s;
    size_t k;
    double *core;
} kn_out;

/* Each heap sorted ascending in place (insertion: K <= CURVE_CORE_MAX_K), the
 * slots past its count padded; core = the k-th. */
static void kn_sort(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    kn_out *o = ctx;
    const size_t K = o->s->nn->K;
    for (size_t p = a; p < b; p++) {
        double *d = o->s->nn->d2 + p * K;
        uint32_t *r = o->s->nn->row + p * K;
        const size_t m = o->s->len[p];
        for (size_t u = 1; u < m; u++) {
            const double x = d[u];
            const uint32_t y = r[u];
            size_t v = u;
            while (v > 0 && kn_before(x, y, d[v - 1], r[v - 1])) {
                d[v] = d[v - 1];
                r[v] = r[v - 1];
                v--;
            }
            d[v] = x;
            r[v] = y;
        }
        for (size_t u = m; u < K; u++) {
            d[u] = INFINITY;
            r[u] = UINT32_MAX;
        }
        o->core[p] = m >= o->k ? d[o->k - 1] : INFINITY;
    }
}

int curve_knn_join(const engine *e, const join_spec *js, size_t k, double *core, curve_knn *nn)
{
    const size_t n = js->ds->n;
    if (nn->K < k || k == 0 || nn->n != n || n > UINT32_MAX)
        return err_set(TCJ_EINVAL, "dbscan curve: bad nearest-row join (k %zu, K %zu)", k, nn->K);
    kn_sink s = {.nn = nn,
                 .len = mem_alloc("dbscan curve", "each point's K nearest", n, sizeof *s.len, 1)};
    if (!s.len)
        return TCJ_ENOMEM;
    pthread_mutex_init(&s.mu, NULL);
    join_spec j = *js;
    j.sink = (pair_sink){kn_batch, &s};
    join_result jr;
    memset(&jr, 0, sizeof jr);
    int rc = engine_run(e, &j, &jr);
    if (!rc) {
        kn_out o = {&s, k, core};
        int nt;
        par_for(n, 4 * nn->K, kn_sort, &o, &nt);
    }
    pthread_mutex_destroy(&s.mu);
    free(s.len);
    return rc;
}

typedef struct kn_lists {
    const curve_knn *nn;
    const double *core2;
    double max2;
    double *reach2, *kb;
    curve_list *list;
} kn_lists;

static void kn_lists_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    kn_lists *x = ctx;
    const size_t K = x->nn->K;
    for (size_t p = a; p < b; p++)
        knn_point_list((uint32_t)p, x->nn->d2 + p * K, x->nn->row + p * K, K, x->core2, x->max2,
                       (curve_list *)&x->list[p], &x->reach2[p], &x->kb[p]);
}

void curve_knn_lists(const curve_knn *nn, const double *core2, double max2, double *reach2,
                     curve_list *list, double *kb)
{
    kn_lists x = {nn, core2, max2, reach2, kb, list};
    int nt;
    par_for(nn->n, 8 * nn->K, kn_lists_range, &x, &nt);
}
