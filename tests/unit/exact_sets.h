/* Test sets and the every-mode comparison shared by tests/unit/t_exact.c
 * (cpu-exact against cpu) and tests/gpu/g_exact.c (exact against fp64):
 * adversarial generated sets (pairs exactly at eps on an integer lattice,
 * duplicated points, a large common offset, values near FP16's largest,
 * integer ties, clusters) and the shared datasets, and one run of an
 * engine in all four modes (join_outcome.h compares two exactly). */
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
#include "join_outcome.h"
#include "widen.h"

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
    ds.v = xcalloc(n * d, sizeof(double));
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
        ((double *)ds.v)[2 * i] = (double)(i % L);
        ((double *)ds.v)[2 * i + 1] = (double)(i / L);
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
                ((double *)ds.v)[(i * 3 + c) * 12 + k] = v;
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
        ((double *)ds.v)[k] = 1e4 + 0.5 * rng_unit();
    finish(&ds);
    return ds;
}

/* Values near 65504, FP16's largest finite value. */
static inline dataset set_nearmax(void)
{
    dataset ds = make("nearmax", 1000, 4);
    rng_state = 13;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 65504.0 - 4000.0 * rng_unit();
    finish(&ds);
    return ds;
}

/* Small integers in 8 dimensions: many ties. */
static inline dataset set_ints(void)
{
    dataset ds = make("ints", 2000, 8);
    rng_state = 14;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = floor(6.0 * rng_unit());
    finish(&ds);
    return ds;
}

/* Gaussian-ish reals, 64 dimensions. */
static inline dataset set_gauss(void)
{
    gen_opts g = {.kind = "gauss", .n = 2500, .d = 64, .seed = 3}; /* f64: the enum's 0 */
    dataset ds = {0};
    if (gen_opts_set(&g, "clusters", "8") != 0 || dataset_generate(&g, &ds) != 0)
        abort();
    return ds;
}

/* Clustered data (16 Gaussian clusters, sigma 0.05), so that pairs are
 * plenty; *eps the mean distance to the 150th nearest of the first 8
 * rows, in FP64 (about 150 pairs a point: a rough selectivity is all the
 * GPU tests that use it need, to fill small pair buffers many times). */
static inline void set_clustered(size_t n, size_t d, uint64_t seed, dataset *ds, double *eps)
{
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.kind = "gauss";
    g.n = n;
    g.d = d;
    g.seed = seed; /* gauss's defaults: 16 clusters, sigma 0.05 */
    if (dataset_generate(&g, ds) != 0) {
        fprintf(stderr, "generate: %s\n", err_msg());
        abort();
    }
    double *d2 = xmalloc(n * sizeof *d2), acc = 0;
    for (int q = 0; q < 8; q++) {
        for (size_t j = 0; j < n; j++) {
            d2[j] = t_d2(ds, (size_t)q, j);
        }
        /* partial selection: the 150th smallest */
        for (int t = 0; t <= 150; t++) {
            size_t m = (size_t)t;
            for (size_t j = (size_t)t + 1; j < n; j++)
                if (d2[j] < d2[m])
                    m = j;
            double x = d2[t];
            d2[t] = d2[m];
            d2[m] = x;
        }
        acc += sqrt(d2[150]);
    }
    *eps = acc / 8;
    free(d2);
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
    return t_d2(ds, i, j);
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

/* ---- every mode of an engine (join_outcome.h) ---- */

/* Engine `name` with opts in every mode, HIST over 16 bins up to eps^2;
 * small: 1000-pair batches (many drains and refills), else opts' batch. */
static inline join_outcome exact_run(const char *name, const dataset *ds, double eps,
                                     const engine_opts *opts, int small)
{
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = eps * eps * b / 16; /* edge 16 is eps^2 itself */
    const engine *e = engine_find(name);
    return small ? jo_run(e, ds, eps, 0, ds->n, opts, edges, 16)
                 : jo_run_as(e, ds, eps, 0, ds->n, opts, edges, 16);
}

/* The same with the default options (two CPU threads). */
static inline join_outcome exact_run_default(const char *name, const dataset *ds, double eps)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.threads = 2;
    return exact_run(name, ds, eps, &opts, 0);
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
/* Values up to 2e5 either side of 0, beyond FP16's range; centring would
 * not shrink them (the mean is near 0), so the engines scale instead. */
static inline dataset set_wide(void)
{
    dataset ds = make("wide", 600, 5);
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 2e5 * (2.0 * rng_unit() - 1.0);
    finish(&ds);
    return ds;
}

static inline dataset set_huge(void)
{
    dataset ds = make("huge", 10, 3);
    for (size_t k = 0; k < 30; k++)
        ((double *)ds.v)[k] = (double)k;
    ((double *)ds.v)[7] = 70000;
    finish(&ds);
    return ds;
}

/* A value FP16 cannot hold at any scale: set_huge with an Inf. */
static inline dataset set_inf(void)
{
    dataset ds = set_huge();
    free(ds.name);
    ds.name = xstrdup("inf");
    ((double *)ds.v)[7] = INFINITY;
    finish(&ds);
    return ds;
}

/* The power of two the exact engines scale ds by when it is beyond FP16
 * (centred by m when m): the largest k <= 0 with max |v| 2^k <= 65504. */
static inline int exact_want_scale_m(const dataset *ds, const double *m)
{
    double vmax = 0;
    for (size_t i = 0; i < ds->n * ds->d; i++)
        vmax = fmax(vmax, fabs(m ? dataset_value(ds, i) - m[i % ds->d] : dataset_value(ds, i)));
    int k = 0;
    while (ldexp(vmax, k) > 65504.0)
        k--;
    return k;
}

/* The same for the values as loaded. */
static inline int exact_want_scale(const dataset *ds)
{
    return exact_want_scale_m(ds, NULL);
}

#endif
