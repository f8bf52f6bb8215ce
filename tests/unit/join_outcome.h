/* Everything one run of an engine produces in each output mode, and a
 * comparison that names the first difference (t_cpu_simd, t_cpu_grid,
 * t_exact, g_exact). Static functions: each test binary gets its
 * own copy. */
#ifndef TCJ_JOIN_OUTCOME_H
#define TCJ_JOIN_OUTCOME_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine.h"
#include "err.h"

typedef struct jo_pair {
    uint32_t i, j;
    double d2;
} jo_pair;

/* One run per mode over rows [q0, q1). */
typedef struct join_outcome {
    uint64_t count;
    uint64_t *perpoint; /* q1-q0 */
    jo_pair *pairs;     /* sorted by (i, j) */
    size_t npairs, cap;
    uint64_t *hist, below;
    size_t nb;
    char variant[96];
    join_result first;        /* the COUNT run's result: metrics, variant */
    join_result perpoint_res; /* the PERPOINT run's */
    int rc;
} join_outcome;

static inline int jo_put(void *ctx, const pair_batch *b)
{
    join_outcome *o = ctx;
    if (o->npairs + b->k > o->cap) {
        o->cap = (o->npairs + b->k) * 2;
        o->pairs = realloc(o->pairs, o->cap * sizeof *o->pairs);
    }
    for (size_t k = 0; k < b->k; k++)
        o->pairs[o->npairs++] = (jo_pair){b->i[k], b->j[k], b->d2[k]};
    return 0;
}

static inline int jo_by_ij(const void *x, const void *y)
{
    const jo_pair *a = x, *b = y;
    if (a->i != b->i)
        return a->i < b->i ? -1 : 1;
    return (a->j > b->j) - (a->j < b->j);
}

/* Run e on ds with opts (their batch size as given) in every mode; HIST
 * over nb bins with edges (squared distances, nb+1 values). */
static inline join_outcome jo_run_as(const engine *e, const dataset *ds, double eps, size_t q0,
                                     size_t q1, const engine_opts *opts, const double *edges,
                                     size_t nb)
{
    join_outcome o;
    memset(&o, 0, sizeof o);
    engine_opts eo = *opts;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = q0;
    s.q1 = q1;
    s.opts = &eo;
    join_result r;

    s.mode = JOIN_COUNT;
    if ((o.rc = engine_run(e, &s, &r)))
        return o;
    o.count = r.pairs;
    o.first = r;
    snprintf(o.variant, sizeof o.variant, "%s", r.variant);

    s.mode = JOIN_PERPOINT;
    o.perpoint = calloc(q1 - q0 + 1, sizeof *o.perpoint);
    s.counts = o.perpoint;
    if ((o.rc = engine_run(e, &s, &r)))
        return o;
    o.perpoint_res = r;

    s.mode = JOIN_PAIRS;
    s.sink = (pair_sink){jo_put, &o};
    if ((o.rc = engine_run(e, &s, &r)))
        return o;
    qsort(o.pairs, o.npairs, sizeof *o.pairs, jo_by_ij);

    if (edges) {
        s.mode = JOIN_HIST;
        o.nb = nb;
        o.hist = calloc(nb, sizeof *o.hist);
        s.hist_edges = edges;
        s.hist_nbins = nb;
        s.hist = o.hist;
        s.hist_below = &o.below;
        o.rc = engine_run(e, &s, &r);
    }
    return o;
}

/* jo_run_as with small batches, so the sink path flushes often. */
static inline join_outcome jo_run(const engine *e, const dataset *ds, double eps, size_t q0,
                                  size_t q1, const engine_opts *opts, const double *edges,
                                  size_t nb)
{
    engine_opts eo = *opts;
    eo.batch_pairs = 1000;
    return jo_run_as(e, ds, eps, q0, q1, &eo, edges, nb);
}

/* A metric of a result (-1 when it has none). */
static inline double jr_metric(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (strcmp(r->metric[k].name, name) == 0)
            return r->metric[k].value;
    return -1;
}

/* A metric of the COUNT run (-1 when it has none). */
static inline double jo_metric(const join_outcome *o, const char *name)
{
    for (int k = 0; k < o->first.nmetric; k++)
        if (strcmp(o->first.metric[k].name, name) == 0)
            return o->first.metric[k].value;
    return -1;
}

static inline void jo_free(join_outcome *o)
{
    free(o->perpoint);
    free(o->pairs);
    free(o->hist);
    memset(o, 0, sizeof *o);
}

/* 1 when a and b hold the same results (d2 compared bit for bit); else 0
 * with the first difference in why. */
static inline int jo_same(const join_outcome *a, const join_outcome *b, size_t nq, char *why,
                          size_t size)
{
    if (a->rc || b->rc)
        return snprintf(why, size, "run failed: %d / %d", a->rc, b->rc), 0;
    if (a->count != b->count)
        return snprintf(why, size, "count %llu vs %llu", (unsigned long long)a->count,
                        (unsigned long long)b->count),
               0;
    for (size_t q = 0; q < nq; q++)
        if (a->perpoint[q] != b->perpoint[q])
            return snprintf(why, size, "perpoint[%zu] %llu vs %llu", q,
                            (unsigned long long)a->perpoint[q], (unsigned long long)b->perpoint[q]),
                   0;
    if (a->npairs != b->npairs || a->npairs != a->count)
        return snprintf(why, size, "pairs %zu vs %zu (count %llu)", a->npairs, b->npairs,
                        (unsigned long long)a->count),
               0;
    for (size_t p = 0; p < a->npairs; p++)
        if (a->pairs[p].i != b->pairs[p].i || a->pairs[p].j != b->pairs[p].j ||
            memcmp(&a->pairs[p].d2, &b->pairs[p].d2, sizeof(double)) != 0)
            return snprintf(why, size, "pair %zu: (%u,%u,%.17g) vs (%u,%u,%.17g)", p, a->pairs[p].i,
                            a->pairs[p].j, a->pairs[p].d2, b->pairs[p].i, b->pairs[p].j,
                            b->pairs[p].d2),
                   0;
    if (a->nb != b->nb || a->below != b->below)
        return snprintf(why, size, "hist below %llu vs %llu", (unsigned long long)a->below,
                        (unsigned long long)b->below),
               0;
    for (size_t k = 0; k < a->nb; k++)
        if (a->hist[k] != b->hist[k])
            return snprintf(why, size, "hist[%zu] %llu vs %llu", k, (unsigned long long)a->hist[k],
                            (unsigned long long)b->hist[k]),
                   0;
    return 1;
}

#endif
