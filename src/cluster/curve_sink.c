/* The curve's host sink (src/cluster/curve_sink.h). It may be called from
 * several threads (the CPU driver serialises its calls today; others need
 * not): it updates the lists under a mutex, held once per batch, and
 * splits a large batch's work by point over the cores (src/pair_par.h:
 * the same lists). */
#include "curve_sink.h"

#include <stdlib.h>
#include <string.h>

#include "curve_list.h"
#include "err.h"
#include "pair_par.h"
#include "par.h"

typedef curve_edge cv_edge; /* a < b */

/* The batch's work for the points in [lo, hi) (src/pair_par.h): the
 * query row's reachability, and each endpoint's list, in batch order. */
static void round_range(void *vctx, const pair_batch *b, size_t lo, size_t hi)
{
    curve_sink *r = vctx;
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
            curve_list_put(&r->list[i], &e);
        if (in_j)
            curve_list_put(&r->list[j], &e);
    }
}

static int round_put(void *vctx, const pair_batch *b)
{
    curve_sink *r = vctx;
    pthread_mutex_lock(&r->mu);
    pair_par(b, r->n, round_range, r);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

/* A later join's pairs over a reordered copy's rows: each index back to
 * its row (at), then round_range as above. */
static int order_put(void *vctx, const pair_batch *b)
{
    curve_sink *r = vctx;
    pthread_mutex_lock(&r->mu);
    if (b->k > r->cap) {
        r->cap = b->k;
        r->i = xrealloc(r->i, r->cap * sizeof *r->i);
        r->j = xrealloc(r->j, r->cap * sizeof *r->j);
    }
    for (size_t k = 0; k < b->k; k++) {
        r->i[k] = r->at[b->i[k]];
        r->j[k] = r->at[b->j[k]];
    }
    const pair_batch t = {b->k, r->i, r->j, b->d2};
    pair_par(&t, r->n, round_range, r);
    pthread_mutex_unlock(&r->mu);
    return 0;
}

void curve_sink_init(curve_sink *r, size_t n, const double *core2, double max2,
                     const uint32_t *comp, double *reach2, curve_list *list)
{
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    r->n = n;
    r->core2 = core2;
    r->max2 = max2;
    r->comp = comp;
    r->reach2 = reach2;
    r->list = list;
}

void curve_sink_free(curve_sink *r)
{
    pthread_mutex_destroy(&r->mu);
    free(r->i);
    free(r->j);
    r->i = r->j = NULL;
    r->cap = 0;
}

pair_sink curve_sink_pairs(curve_sink *r, const uint32_t *at)
{
    r->at = at;
    return at ? (pair_sink){order_put, r} : (pair_sink){round_put, r};
}

static void list_clear(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    curve_list *l = ctx;
    for (size_t p = a; p < b; p++)
        l[p].len = 0;
}

void curve_sink_clear(curve_list *list, size_t n)
{
    int nt;
    par_for(n, 16, list_clear, list, &nt);
}
