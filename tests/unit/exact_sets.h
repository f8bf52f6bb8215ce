/* Test sets and the every-mode comparison shared by tests/unit/t_exact.c
 * (cpu-exact against cpu) and tests/gpu/g_exact.c (exact against fp64):
 * adversarial generated sets (pairs exactly at eps on an integer lattice,
 * duplicated points, a large common offset, values near FP16's largest,
 * integer ties, clusters) and the shared datasets; one run of an engine in
 * all four modes, and whether two such runs agree exactly. */
#ifndef TCJ_EXACT_SETS_H
#define TCJ_EXACT_SETS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"

static uint64_t rng_state;
static inline double rng_unit(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1p-53;
}

static inline dataset make(const char *name, size_t n, size_t d)
{
    dataset ds = {0};
    ds.name = xstrdup(name);
    ds.n = n;
    ds.d = d;
    ds.x = xcalloc(n * d, sizeof *ds.x);
    return ds;
}

static inline void finish(dataset *ds)
{
    ds->hash = dataset_hash(ds);
}

/* ---- the sets ---- */

/* Integer lattice 0..L-1 in 2-D: many pairs exactly at eps = 1, 2, sqrt 2. */
static inline dataset set_lattice(void)
{
    const size_t L = 40;
    dataset ds = make("lattice", L * L, 2);
    for (size_t i = 0; i < L * L; i++) {
        ds.x[2 * i] = (double)(i % L);
        ds.x[2 * i + 1] = (double)(i / L);
    }
    finish(&ds);
    return ds;
}

/* Each of 500 points three times. */
static inline dataset set_dups(void)
{
    dataset ds = make("dups", 1500, 12);
    rng_state = 11;
    for (size_t i = 0; i < 500; i++)
        for (size_t k = 0; k < 12; k++) {
            double v = rng_unit();
            for (int c = 0; c < 3; c++)
                ds.x[(i * 3 + c) * 12 + k] = v;
        }
    finish(&ds);
    return ds;
}

/* 1e4 plus a spread of 0.5: FP16's spacing at 1e4 is 8. */
static inline dataset set_offset(void)
{
    dataset ds = make("offset", 1200, 6);
    rng_state = 12;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ds.x[k] = 1e4 + 0.5 * rng_unit();
    finish(&ds);
    return ds;
}

/* Values near 65504, FP16's largest finite value. */
static inline dataset set_nearmax(void)
{
    dataset ds = make("nearmax", 1000, 4);
    rng_state = 13;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ds.x[k] = 65504.0 - 4000.0 * rng_unit();
    finish(&ds);
    return ds;
}

/* Small integers in 8 dimensions: many ties. */
static inline dataset set_ints(void)
{
    dataset ds = make("ints", 2000, 8);
    rng_state = 14;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ds.x[k] = floor(6.0 * rng_unit());
    finish(&ds);
    return ds;
}

/* Gaussian-ish reals, 64 dimensions. */
static inline dataset set_gauss(void)
{
    gen_opts g = {.kind = "gauss", .n = 2500, .d = 64, .seed = 3, .clusters = 8, .sigma = 0.05};
    dataset ds = {0};
    if (dataset_generate(&g, &ds) != 0)
        abort();
    return ds;
}

static inline int load_shared(const char *file, size_t limit, dataset *ds)
{
    load_opts o;
    load_opts_init(&o);
    o.limit = limit;
    if (strstr(file, ".f32"))
        o.dim = 4; /* the kitti scan: x, y, z, reflectance */
    if (strstr(file, "letter"))
        o.cols = "-0"; /* the class letter */
    memset(ds, 0, sizeof *ds);
    return dataset_load(t_dataset(file), &o, ds);
}

/* ---- eps for about `sel` neighbours a point, from a sample ---- */
static inline int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double exact_d2(const dataset *ds, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = ds->x[i * ds->d + k] - ds->x[j * ds->d + k];
        s += u * u;
    }
    return s;
}

static inline double eps_for(const dataset *ds, double sel)
{
    size_t m = 3000, k = 0;
    double *v = xmalloc(m * sizeof *v);
    rng_state = 99;
    for (; k < m; k++) {
        size_t i = (size_t)(rng_unit() * ds->n), j = (size_t)(rng_unit() * ds->n);
        v[k] = exact_d2(ds, i, j);
    }
    qsort(v, m, sizeof *v, cmp_dbl);
    size_t at = (size_t)(sel / (double)ds->n * (double)m);
    double e = sqrt(v[at < m ? at : m - 1]);
    free(v);
    return e > 0 ? e : 1.0;
}

/* ---- 2. every mode against cpu ---- */

typedef struct pairs {
    size_t n, cap;
    uint64_t *ij;
    double *d2;
} pairs;

static inline int put(void *ctx, const pair_batch *b)
{
    pairs *p = ctx;
    if (p->n + b->k > p->cap) {
        p->cap = (p->n + b->k) * 2;
        p->ij = xrealloc(p->ij, p->cap * sizeof *p->ij);
        p->d2 = xrealloc(p->d2, p->cap * sizeof *p->d2);
    }
    for (size_t k = 0; k < b->k; k++) {
        p->ij[p->n] = (uint64_t)b->i[k] << 32 | b->j[k];
        p->d2[p->n++] = b->d2[k];
    }
    return 0;
}

typedef struct rec {
    uint64_t ij;
    double d2;
} rec;

static inline int cmp_rec(const void *a, const void *b)
{
    uint64_t x = ((const rec *)a)->ij, y = ((const rec *)b)->ij;
    return x < y ? -1 : x > y;
}

typedef struct outcome {
    uint64_t count, below, hist[16];
    uint64_t *counts;
    rec *pairs;
    size_t npairs;
    double band;
} outcome;

/* Engine `name` with opts in all four modes into o. */
static inline int run_all_opts(const char *name, const dataset *ds, double eps,
                               const engine_opts *eo, outcome *o)
{
    const engine *e = engine_find(name);
    engine_opts opts = *eo;
    memset(o, 0, sizeof *o);
    o->counts = xcalloc(ds->n, sizeof *o->counts);
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = eps * eps * b / 16; /* edge 16 is eps^2 itself */
    pairs p = {0};
    for (int m = 0; m < 4; m++) {
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = ds;
        s.eps = eps;
        s.q0 = 0;
        s.q1 = ds->n;
        s.mode = (join_mode)m;
        s.opts = &opts;
        s.counts = o->counts;
        s.sink.put = put;
        s.sink.ctx = &p;
        s.hist_edges = edges;
        s.hist_nbins = 16;
        s.hist = o->hist;
        s.hist_below = &o->below;
        join_result res;
        int rc = engine_run(e, &s, &res);
        if (rc)
            return rc;
        if (m == JOIN_COUNT)
            o->count = res.pairs;
        for (int k = 0; m == JOIN_COUNT && k < res.nmetric; k++)
            if (strcmp(res.metric[k].name, "band_pairs") == 0)
                o->band = res.metric[k].value;
    }
    o->pairs = xmalloc((p.n + 1) * sizeof *o->pairs);
    for (size_t k = 0; k < p.n; k++)
        o->pairs[k] = (rec){p.ij[k], p.d2[k]};
    o->npairs = p.n;
    qsort(o->pairs, p.n, sizeof *o->pairs, cmp_rec);
    free(p.ij);
    free(p.d2);
    return 0;
}

static inline int run_all(const char *name, const dataset *ds, double eps, outcome *o)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.threads = 2;
    return run_all_opts(name, ds, eps, &opts, o);
}

static inline void outcome_free(outcome *o)
{
    free(o->counts);
    free(o->pairs);
}

/* 0 when equal; else a line saying what differs. */
static inline const char *same(const dataset *ds, const outcome *a, const outcome *b)
{
    if (a->count != b->count)
        return "count";
    if (memcmp(a->counts, b->counts, ds->n * sizeof *a->counts))
        return "per-point counts";
    if (a->below != b->below || memcmp(a->hist, b->hist, sizeof a->hist))
        return "histogram";
    if (a->npairs != b->npairs)
        return "number of pairs";
    for (size_t k = 0; k < a->npairs; k++)
        if (a->pairs[k].ij != b->pairs[k].ij ||
            memcmp(&a->pairs[k].d2, &b->pairs[k].d2, sizeof(double)))
            return "pair set or FP64 distances";
    return NULL;
}

/* ---- the sets, each handed to a check ---- */
typedef void (*exact_check_fn)(const char *what, dataset *ds, double eps);

/* Every adversarial set at its eps values (pairs exactly at eps where
 * the set has them). */
static inline void exact_each_adversarial(exact_check_fn check)
{
    dataset ds = set_lattice();
    check("lattice 1", &ds, 1.0);
    check("lattice r2", &ds, sqrt(2.0));
    check("lattice 2", &ds, 2.0);
    dataset_free(&ds);
    ds = set_dups();
    check("dups", &ds, eps_for(&ds, 20));
    dataset_free(&ds);
    ds = set_offset();
    check("offset", &ds, eps_for(&ds, 30));
    dataset_free(&ds);
    ds = set_nearmax();
    check("nearmax", &ds, eps_for(&ds, 30));
    dataset_free(&ds);
    ds = set_ints();
    check("ints", &ds, 2.0);
    check("ints r3", &ds, sqrt(3.0));
    dataset_free(&ds);
    ds = set_gauss();
    check("gauss", &ds, eps_for(&ds, 40));
    dataset_free(&ds);
}

/* Every shared dataset at S = 10 and 100 (olivetti and the kitti scan at
 * 10); small: the first few thousand rows (the CPU), else whole (the kitti
 * scan's first 30000). 0, or the dataset that did not load (err_msg). */
static inline const char *exact_each_shared(exact_check_fn check, int small)
{
    static const struct {
        const char *file;
        size_t small, whole;
        double sel;
    } sets[] = {
        {"htru2.csv", 3000, 0, 10},
        {"htru2.csv", 3000, 0, 100},
        {"letter.csv", 3000, 0, 10},
        {"letter.csv", 3000, 0, 100},
        {"sift5k.fvecs", 2000, 0, 10},
        {"sift5k.fvecs", 2000, 0, 100},
        {"olivetti_400x4096_u8.npy", 0, 0, 10},
        {"kitti_000000_xyzr.f32", 4000, 30000, 10},
    };
    for (size_t i = 0; i < sizeof sets / sizeof *sets; i++) {
        dataset ds;
        if (load_shared(sets[i].file, small ? sets[i].small : sets[i].whole, &ds) != 0)
            return sets[i].file;
        check(sets[i].file, &ds, eps_for(&ds, sets[i].sel));
        dataset_free(&ds);
    }
    return NULL;
}

/* Ten 3-D points, one coordinate beyond FP16's largest (70000). */
static inline dataset set_huge(void)
{
    dataset ds = make("huge", 10, 3);
    for (size_t k = 0; k < 30; k++)
        ds.x[k] = (double)k;
    ds.x[7] = 70000;
    finish(&ds);
    return ds;
}

#endif
