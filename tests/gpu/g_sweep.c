/* ε search with the GPU engines: a sweep with each reaches the targets in
 * at most 3 passes, its ε gives the same count in that engine's COUNT mode,
 * and each engine's histogram adds up to its count at every edge. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

#include "engine.h"
#include "err.h"
#include "kernels.h"
#include "sweep.h"

static uint64_t rng_state;
static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * 0x1p-53;
}

static void make(dataset *ds, size_t n, size_t d, uint64_t seed)
{
    memset(ds, 0, sizeof *ds);
    ds->n = n;
    ds->d = d;
    ds->v = xmalloc(n * d * sizeof(double));
    rng_state = seed;
    for (size_t i = 0; i < n * d; i++)
        ((double *)ds->v)[i] = (double)((i / d) % 7) * 0.1 + 0.2 * rnd();
}

static const engine *gpu_engine(const char *name)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
    const engine *e = engine_find(name);
    if (!e)
        t_skip("skipped: engine not built");
    return e;
}

static uint64_t count_at(const engine *e, const dataset *ds, double eps)
{
    engine_opts eo;
    engine_opts_default(&eo);
    join_spec c;
    memset(&c, 0, sizeof c);
    c.ds = ds;
    c.q1 = ds->n;
    c.eps = eps;
    c.opts = &eo;
    join_result res;
    if (engine_run(e, &c, &res)) {
        printf("# %s: %s\n", e->name, err_msg());
        return UINT64_MAX;
    }
    return res.pairs;
}

static void sweep_engine(const char *name)
{
    const engine *e = gpu_engine(name);
    dataset ds;
    make(&ds, 6000, 32, 3);
    sweep_sample smp;
    CHECK(sweep_sample_build(&ds, 0, &smp) == 0);
    sweep_opts o;
    sweep_opts_default(&o);
    o.eng = e;
    const double targets[] = {1, 8, 64, 256, 1000};
    for (int k = 0; k < 5; k++) {
        sweep_result r;
        int rc = sweep_solve(&ds, &smp, targets[k], &o, &r);
        CHECK_MSG(rc == 0, "%s S=%g: %s", name, targets[k], err_msg());
        printf("# %s S=%g: status %d eps %.9g S %.6g passes %d %.3f s\n", name, targets[k],
               (int)r.status, r.eps, r.selectivity, r.passes, r.seconds);
        CHECK_EQ_INT(r.status, SWEEP_OK);
        CHECK(r.passes <= 3);
        CHECK(fabs(r.selectivity - targets[k]) <= o.tol * targets[k]);
        CHECK_EQ_INT(count_at(e, &ds, r.eps), r.pairs);
    }
    sweep_sample_free(&smp);
    free(ds.v);
}

static void hist_vs_count(const char *name)
{
    const engine *e = gpu_engine(name);
    dataset ds;
    make(&ds, 3000, 16, 8);
    double eps[17], edges[17];
    for (int k = 0; k < 17; k++) {
        eps[k] = 0.1 + 0.03 * k;
        edges[k] = eps[k] * eps[k];
    }
    uint64_t hist[16], below = 0;
    engine_opts eo;
    engine_opts_default(&eo);
    join_spec sp;
    memset(&sp, 0, sizeof sp);
    sp.ds = &ds;
    sp.q1 = ds.n;
    sp.mode = JOIN_HIST;
    sp.opts = &eo;
    sp.hist_edges = edges;
    sp.hist_nbins = 16;
    sp.hist = hist;
    sp.hist_below = &below;
    join_result res;
    CHECK_MSG(engine_run(e, &sp, &res) == 0, "%s: %s", name, err_msg());
    uint64_t cum = below;
    for (int k = 0; k < 17; k++) {
        if (k > 0)
            cum += hist[k - 1];
        uint64_t c = count_at(e, &ds, eps[k]);
        CHECK_MSG(c == cum, "%s edge %d: count %llu, histogram %llu", name, k,
                  (unsigned long long)c, (unsigned long long)cum);
    }
    free(ds.v);
}

TEST(sweep_fasted)
{
    sweep_engine("fasted");
}

TEST(sweep_fp64)
{
    sweep_engine("fp64");
}

TEST(sweep_ted)
{
    sweep_engine("ted");
}

TEST(hist_fasted)
{
    hist_vs_count("fasted");
}

TEST(hist_fp64)
{
    hist_vs_count("fp64");
}

TEST(hist_ted)
{
    hist_vs_count("ted");
}
