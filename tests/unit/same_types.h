/* The same values held in several element types (u8, f16, f32, f64):
 * every engine's results on each copy, compared with the f64 copy's (used
 * by tests/unit/t_hostmem.c for the CPU engines and tests/gpu/g_hostmem.c
 * for the GPU ones). */
#ifndef TCJ_T_SAME_TYPES_H
#define TCJ_T_SAME_TYPES_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "pair_collect.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"

/* Integer values in [0, 255] (every type holds them) or, with frac, values
 * on a 2^-10 grid in [0, 1) (f16, f32 and f64 hold them). */
static double *values(size_t n, size_t d, int frac, uint64_t seed)
{
    double *x = malloc(n * d * sizeof *x);
    uint64_t z = seed;
    for (size_t k = 0; k < n * d; k++) {
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        const unsigned u = (unsigned)(z >> 54); /* 0 .. 1023 */
        x[k] = frac ? (double)u / 1024.0 : (double)(u % 256);
    }
    return x;
}

/* One engine's results on ds: rc, pairs of COUNT, per-point counts and the
 * sorted pair list with distances. */
typedef struct outcome {
    int rc;
    uint64_t pairs;
    uint64_t *counts;
    collect c;
} outcome;

static void run_all(const engine *e, const dataset *ds, double eps, outcome *o)
{
    memset(o, 0, sizeof *o);
    join_spec s = {.ds = ds, .eps = eps, .q0 = 0, .q1 = ds->n, .mode = JOIN_COUNT};
    join_result r;
    o->rc = engine_run(e, &s, &r);
    if (o->rc)
        return;
    o->pairs = r.pairs;
    o->counts = calloc(ds->n, sizeof *o->counts);
    s.mode = JOIN_PERPOINT;
    s.counts = o->counts;
    if ((o->rc = engine_run(e, &s, &r)))
        return;
    s.mode = JOIN_PAIRS;
    s.counts = NULL;
    s.sink = (pair_sink){collect_put, &o->c};
    if ((o->rc = engine_run(e, &s, &r)))
        return;
    qsort(o->c.p, o->c.len, sizeof *o->c.p, by_ij);
}

static void outcome_free(outcome *o)
{
    free(o->counts);
    free(o->c.p);
}

/* Every CPU engine (gpu 0) or every GPU engine (gpu 1) available here on
 * copies of x held in each type of types_mask (bits by dtype_id):
 * identical return code, pair count, per-point counts and pair list
 * (distances bit for bit) to the f64 copy's. */
static void same_everywhere(const double *x, size_t n, size_t d, double eps, int types_mask,
                            int gpu)
{
    dataset ds[DTYPE_COUNT];
    memset(ds, 0, sizeof ds);
    for (int t = 0; t < DTYPE_COUNT; t++)
        if (types_mask & (1 << t))
            dataset_set_f64(&ds[t], x, n, d, (dtype_id)t);
    int engines = 0;
    for (int k = 0; engine_table[k]; k++) {
        const engine *e = engine_table[k];
        if (e->gpu != gpu || engine_available(e, NULL)) {
            err_clear();
            continue;
        }
        engines++;
        outcome ref;
        run_all(e, &ds[DTYPE_F64], eps, &ref);
        /* Not a vacuous comparison: points have neighbours besides themselves. */
        if (e->exact && !ref.rc)
            CHECK_MSG(ref.pairs >= 2 * n, "%s: only %llu pairs at eps %g", e->name,
                      (unsigned long long)ref.pairs, eps);
        for (int t = 1; t < DTYPE_COUNT; t++) {
            if (!(types_mask & (1 << t)))
                continue;
            outcome o;
            run_all(e, &ds[t], eps, &o);
            const char *tn = dtype_get((dtype_id)t)->name;
            CHECK_MSG(o.rc == ref.rc, "%s on %s: rc %d, on f64 %d", e->name, tn, o.rc, ref.rc);
            if (!ref.rc) {
                CHECK_MSG(o.pairs == ref.pairs, "%s on %s: %llu pairs, on f64 %llu", e->name, tn,
                          (unsigned long long)o.pairs, (unsigned long long)ref.pairs);
                CHECK_MSG(!memcmp(o.counts, ref.counts, n * sizeof *o.counts),
                          "%s on %s: per-point counts differ", e->name, tn);
                CHECK_MSG(o.c.len == ref.c.len && !memcmp(o.c.p, ref.c.p, o.c.len * sizeof *o.c.p),
                          "%s on %s: pair lists differ (%zu against %zu pairs)", e->name, tn,
                          o.c.len, ref.c.len);
            }
            outcome_free(&o);
        }
        outcome_free(&ref);
    }
    if (!gpu)
        CHECK(engines >= 8); /* cpu, cpu-exact and the emulations */
    else if (!engines)
        t_skip("no GPU engine available here");
    for (int t = 0; t < DTYPE_COUNT; t++)
        dataset_free(&ds[t]);
}

#endif
