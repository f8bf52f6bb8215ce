/* GPU tests of the device-memory budget (`set gpu-mem`, engine_opts.gpu_mem):
 * for every GPU engine, a run capped so tightly that its pair buffer and
 * staging buffers must shrink gives exactly the uncapped run's results —
 * the same pair set with bit-identical distances, per-point counts,
 * histogram and count — says that it shrank, and stays within the cap;
 * a cap that not even the smallest chunks of a streamed run fit under
 * (g_stream.c tests a cap below the dataset that they fit) is refused
 * with one line and the next run goes on. The reference is the engine's own uncapped run:
 * the cap changes batching only, never arithmetic, so equality is exact.
 * Skipped without a CUDA device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static dataset g_ds;
static double g_eps;

/* The clustered set (exact_sets.h): about 150 pairs a point. */
static void data(void)
{
    if (!((double *)g_ds.v))
        set_clustered(12000, 64, 7, &g_ds, &g_eps);
}

typedef struct capped {
    int rc;
    uint64_t count;
    uint64_t *counts;
    uint64_t hist[32], below;
    join_outcome p; /* the pairs only: jo_put's collection */
    join_result res[4];
} capped;

static void capped_free(capped *o)
{
    free(o->counts);
    jo_free(&o->p);
    memset(o, 0, sizeof *o);
}

/* Every mode of engine e with the given cap. */
static int run_capped(const engine *e, size_t cap, capped *o)
{
    engine_opts opts;
    engine_opts_default(&opts);
    opts.gpu_mem = cap;
    opts.int8_scale = 1; /* int8 quantizes the generated reals */
    opts.shift = 1;      /* the unsigned formats move the (signed) data by its minima */
    memset(o, 0, sizeof *o);
    o->counts = xcalloc(g_ds.n, sizeof *o->counts);
    double edges[33];
    for (int b = 0; b <= 32; b++)
        edges[b] = g_eps * g_eps * b / 32;
    for (int m = 0; m < 4; m++) {
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &g_ds;
        s.eps = g_eps;
        s.q0 = 0;
        s.q1 = g_ds.n;
        s.mode = (join_mode)m;
        s.opts = &opts;
        s.counts = o->counts;
        s.sink.put = jo_put;
        s.sink.ctx = &o->p;
        s.hist_edges = edges;
        s.hist_nbins = 32;
        s.hist = o->hist;
        s.hist_below = &o->below;
        int rc = engine_run(e, &s, &o->res[m]);
        if (rc)
            return o->rc = rc;
        if (m == JOIN_COUNT)
            o->count = o->res[m].pairs;
    }
    return 0;
}

/* Bytes of the dataset as each engine keeps it on the device (a lower
 * bound of what a run holds): FASTED formats rows of 128-byte k slices
 * padded to whole 256-row tiles, the FP64 engines n x d doubles. */
static size_t engine_dataset_bytes(const engine *e)
{
    if (e->format) {
        size_t per = 128 / (size_t)e->format->elem_bytes;
        size_t row = (g_ds.d + per - 1) / per * per * (size_t)e->format->elem_bytes;
        /* exact also holds the FP64 rows for its refinement */
        return ((g_ds.n + 255) / 256 * 256 + 256) * (row + 4) +
               (e->exact ? g_ds.n * g_ds.d * 8 : 0);
    }
    return g_ds.n * g_ds.d * 8;
}

TEST(capped_runs_equal_uncapped_every_engine)
{
    need_gpu();
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!e->kjoin || engine_available(e, NULL) != 0)
            continue;
        ran++;
        capped a, b;
        int rc = run_capped(e, 0, &a);
        CHECK_MSG(rc == 0, "%s uncapped: %s", e->name, err_msg());
        /* The dataset plus 6 MB: the default pair buffer (4M pairs, 48-64
         * MB) and FASTED's staging (64 MB) cannot fit; the pairs (about
         * 1.8M) then need several drains. */
        size_t cap = engine_dataset_bytes(e) + ((size_t)6 << 20);
        rc = run_capped(e, cap, &b);
        CHECK_MSG(rc == 0, "%s capped at %zu: %s", e->name, cap, err_msg());
        CHECK_MSG(a.p.npairs > ((size_t)1 << 20),
                  "%s: only %zu pairs; the test needs more than the "
                  "capped buffer holds",
                  e->name, a.p.npairs);
        CHECK_MSG(jr_metric(&a.res[JOIN_PAIRS], "buffers_shrunk") == 0, "%s shrank uncapped",
                  e->name);
        CHECK_MSG(jr_metric(&b.res[JOIN_PAIRS], "buffers_shrunk") == 1, "%s: capped did not shrink",
                  e->name);
        CHECK_MSG(jr_metric(&b.res[JOIN_PAIRS], "pair_buffer") <
                      jr_metric(&a.res[JOIN_PAIRS], "pair_buffer"),
                  "%s: pair buffer %g capped vs %g", e->name,
                  jr_metric(&b.res[JOIN_PAIRS], "pair_buffer"),
                  jr_metric(&a.res[JOIN_PAIRS], "pair_buffer"));
        for (int m = 0; m < 4; m++)
            CHECK_MSG(jr_metric(&b.res[m], "device_mem_peak") <= (double)cap,
                      "%s mode %d held %g bytes under a cap of %zu", e->name, m,
                      jr_metric(&b.res[m], "device_mem_peak"), cap);
        CHECK_MSG(b.res[JOIN_PAIRS].pairs == a.res[JOIN_PAIRS].pairs, "%s pairs %llu vs %llu",
                  e->name, (unsigned long long)b.res[JOIN_PAIRS].pairs,
                  (unsigned long long)a.res[JOIN_PAIRS].pairs);
        CHECK_EQ_INT(b.count, a.count);
        CHECK_EQ_INT(a.p.npairs, a.count);
        CHECK_EQ_INT(b.p.npairs, a.p.npairs);
        CHECK_MSG(memcmp(a.counts, b.counts, g_ds.n * sizeof *a.counts) == 0,
                  "%s: per-point counts differ", e->name);
        CHECK_MSG(memcmp(a.hist, b.hist, sizeof a.hist) == 0 && a.below == b.below,
                  "%s: histograms differ", e->name);
        qsort(a.p.pairs, a.p.npairs, sizeof *a.p.pairs, jo_by_ij);
        qsort(b.p.pairs, b.p.npairs, sizeof *b.p.pairs, jo_by_ij);
        size_t bad = 0;
        for (size_t k = 0; k < a.p.npairs; k++)
            bad += a.p.pairs[k].i != b.p.pairs[k].i || a.p.pairs[k].j != b.p.pairs[k].j ||
                   memcmp(&a.p.pairs[k].d2, &b.p.pairs[k].d2, sizeof(double)) != 0;
        CHECK_MSG(bad == 0, "%s: %zu pairs differ in index or d2 bits", e->name, bad);
        printf("# %s: %zu pairs; capped at %.1f MB: pair buffer %.0f pairs, %.0f launches, "
               "peak %.1f MB\n",
               e->name, a.p.npairs, cap / 1e6, jr_metric(&b.res[JOIN_PAIRS], "pair_buffer"),
               jr_metric(&b.res[JOIN_PAIRS], "launches"),
               jr_metric(&b.res[JOIN_PAIRS], "device_mem_peak") / 1e6);
        capped_free(&a);
        capped_free(&b);
    }
    CHECK_MSG(ran > 0, "no GPU engine could run");
}

TEST(cap_below_any_chunk_is_refused_and_the_next_run_goes_on)
{
    need_gpu();
    data();
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!e->kjoin || engine_available(e, NULL) != 0)
            continue;
        capped o;
        /* 64 KB: 512 rows of 64 FP16 values and nothing else, under any
         * engine's smallest pair buffer (32K pairs). */
        size_t cap = (size_t)64 << 10;
        int rc = run_capped(e, cap, &o);
        CHECK_MSG(rc == TCJ_ENOMEM, "%s under %zu bytes: rc %d (%s)", e->name, cap, rc, err_msg());
        CHECK_MSG(strstr(err_msg(), "gpu-mem") && strstr(err_msg(), e->name) &&
                      !strchr(err_msg(), '\n'),
                  "%s: the refusal should be one line naming the engine and gpu-mem: %s", e->name,
                  err_msg());
        capped_free(&o);
        rc = run_capped(e, 0, &o);
        CHECK_MSG(rc == 0 && o.count > 0, "%s after a refusal: %s", e->name, err_msg());
        capped_free(&o);
    }
}
