/* GPU tests of a dataset larger than the device (kern_stream_run, issue
 * 13's "the candidate side streamed in chunks"). The device is made small
 * with `set gpu-mem` (engine_opts.gpu_mem) at half of what the engine
 * keeps of the dataset, so the whole run cannot hold it: every GPU engine
 * that streams then runs in row chunks and gives exactly its own
 * unstreamed run's results in every mode (count, per-point counts, the
 * pair set with bit-identical distances, histogram), says how it cut the
 * rows, and holds no more than the cap. The reference is the engine's own
 * whole run: a pair's arithmetic does not depend on which tile or chunk
 * holds it, so equality is exact; exact and fp64 are also fp64's. The
 * engines whose index covers every row (ted-index, exact's grid path) are
 * cut in slabs instead, on a 3-D scan. Skipped without a CUDA device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exact_path.h"
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static dataset g_ds;
static double g_eps;

/* 40000 clustered points in 128 dimensions, about 12 neighbours a point:
 * the dataset dominates what a run holds, so half of it leaves a chunk
 * pair room and the whole no room. */
static void data(void)
{
    if (!g_ds.v) {
        double e150;
        set_clustered(40000, 128, 5, &g_ds, &e150);
        g_eps = eps_for(&g_ds, 12);
    }
}

/* What engine e keeps of the dataset on the device (a lower bound of a
 * run's memory): as g_memcap.c counts it. */
static size_t engine_bytes(const engine *e)
{
    if (e->format) {
        size_t per = 128 / (size_t)e->format->elem_bytes;
        size_t row = (g_ds.d + per - 1) / per * per * (size_t)e->format->elem_bytes;
        return ((g_ds.n + 255) / 256 * 256 + 256) * (row + 4) +
               (e->exact ? g_ds.n * g_ds.d * dataset_dtype(&g_ds)->bytes : 0);
    }
    return g_ds.n * g_ds.d * 8;
}

static join_outcome run_cap(const engine *e, size_t cap)
{
    engine_opts o;
    engine_opts_default(&o);
    o.gpu_mem = cap;
    o.int8_scale = 1; /* int8 quantizes the generated reals */
    o.shift = 1;      /* the unsigned formats move the (signed) data by its minima */
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = g_eps * g_eps * b / 16;
    return jo_run_as(e, &g_ds, g_eps, 0, g_ds.n, &o, edges, 16);
}

TEST(streamed_equals_whole_every_engine)
{
    need_gpu();
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        /* ted-index is cut in slabs along one dimension: 128 of them leave
         * no slab a small reach (its own test is on a 3-D scan, below). */
        if (!e->kjoin || engine_available(e, NULL) != 0 || !strcmp(e->name, "ted-index"))
            continue;
        join_outcome whole = run_cap(e, 0);
        CHECK_MSG(whole.rc == 0, "%s whole: %s", e->name, err_msg());
        CHECK_MSG(jo_metric(&whole, "stream_chunks") < 0, "%s: the whole run was streamed",
                  e->name);
        const size_t cap = engine_bytes(e) / 2;
        join_outcome part = run_cap(e, cap);
        CHECK_MSG(part.rc == 0, "%s under %zu bytes: %s", e->name, cap, err_msg());
        const double chunks = jo_metric(&part, "stream_chunks");
        CHECK_MSG(chunks >= 3, "%s: %g chunks", e->name, chunks);
        CHECK_MSG(jr_metric(&part.perpoint_res, "stream_chunks") == chunks,
                  "%s: per-point run cut differently", e->name);
        CHECK_MSG(jo_metric(&part, "device_mem_peak") <= (double)cap,
                  "%s held %g bytes under a cap of %zu", e->name,
                  jo_metric(&part, "device_mem_peak"), cap);
        char why[256];
        /* Not only the self-pairs (the 8-bit formats find fewer pairs
         * than fasted's 4 a point at this eps, but more than n). */
        CHECK_MSG(whole.count > (strcmp(e->name, "fasted") ? 1 : 4) * g_ds.n, "%s: only %llu pairs",
                  e->name, (unsigned long long)whole.count);
        CHECK_MSG(jo_same(&whole, &part, g_ds.n, why, sizeof why), "%s streamed vs whole: %s",
                  e->name, why);
        printf("# %s: %llu pairs; under %.1f MB: %g chunks of %g rows, %g runs, peak %.1f MB\n",
               e->name, (unsigned long long)whole.count, cap / 1e6, chunks,
               jo_metric(&part, "stream_chunk_rows"), jo_metric(&part, "stream_runs"),
               jo_metric(&part, "device_mem_peak") / 1e6);
        jo_free(&whole);
        jo_free(&part);
        ran++;
    }
    CHECK_MSG(ran > 0, "no GPU engine could run");
}

TEST(exact_streamed_is_fp64)
{
    need_gpu();
    data();
    const engine *x = engine_find("exact"), *f = engine_find("fp64");
    if (engine_available(x, NULL) != 0)
        t_skip("skipped: exact cannot run here");
    join_outcome ref = run_cap(f, 0);
    join_outcome part = run_cap(x, engine_bytes(x) / 2);
    char why[256];
    CHECK_MSG(jo_metric(&part, "stream_chunks") >= 3, "exact was not streamed");
    CHECK_MSG(jo_same(&ref, &part, g_ds.n, why, sizeof why), "exact streamed vs fp64: %s", why);
    jo_free(&ref);
    jo_free(&part);
}

/* The grid engines take no cross run (their index covers every row):
 * they are cut in slabs of the rows sorted along the widest dimension,
 * each run a slab's rows as queries and the rows within reach as
 * candidates. On the kitti scan at eps 0.12 m (80 m deep: a slab's reach
 * is a sliver of it), under half of what the engine uploads of the rows:
 * every mode equals the engine's own whole run, and exact's grid path
 * stays fp64's. */
static join_outcome run_grid(const char *name, const dataset *ds, double eps, size_t cap)
{
    engine_opts o;
    engine_opts_default(&o);
    o.gpu_mem = cap;
    o.exact_path = EXACT_PATH_GRID;
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = eps * eps * b / 16;
    return jo_run_as(engine_find(name), ds, eps, 0, ds->n, &o, edges, 16);
}

TEST(grid_engines_streamed_in_slabs_equal_their_whole_run)
{
    need_gpu();
    dataset ds;
    CHECK_MSG(load_shared("kitti_000000_xyzr.f32", 0, &ds) == 0, "%s", err_msg());
    const double eps = 0.12;
    join_outcome ref = run_grid("fp64", &ds, eps, 0);
    CHECK_MSG(ref.rc == 0, "fp64: %s", err_msg());
    const char *names[2] = {"ted-index", "exact"};
    for (int t = 0; t < 2 && ref.rc == 0; t++) {
        const engine *e = engine_find(names[t]);
        if (!e || engine_available(e, NULL) != 0)
            continue;
        join_outcome whole = run_grid(names[t], &ds, eps, 0);
        CHECK_MSG(whole.rc == 0, "%s whole: %s", names[t], err_msg());
        /* Half of the rows as the engine uploads them (FP64, d padded to
         * 4 at most): the whole run cannot hold its rows and index. */
        const size_t cap = ds.n * 4 * sizeof(double) / 2;
        join_outcome part = run_grid(names[t], &ds, eps, cap);
        CHECK_MSG(part.rc == 0, "%s under %zu bytes: %s", names[t], cap, err_msg());
        if (whole.rc || part.rc) {
            jo_free(&whole);
            jo_free(&part);
            continue;
        }
        const double chunks = jo_metric(&part, "stream_chunks");
        CHECK_MSG(chunks >= 2 && jo_metric(&part, "stream_slab_dim") >= 0, "%s: %g slabs, dim %g",
                  names[t], chunks, jo_metric(&part, "stream_slab_dim"));
        CHECK_MSG(jo_metric(&part, "stream_runs") == chunks, "%s: %g runs for %g slabs", names[t],
                  jo_metric(&part, "stream_runs"), chunks);
        CHECK_MSG(jo_metric(&part, "device_mem_peak") <= (double)cap,
                  "%s held %g bytes under a cap of %zu", names[t],
                  jo_metric(&part, "device_mem_peak"), cap);
        char why[256];
        CHECK_MSG(jo_same(&whole, &part, ds.n, why, sizeof why), "%s slabs vs whole: %s", names[t],
                  why);
        if (!strcmp(names[t], "exact"))
            CHECK_MSG(jo_same(&ref, &part, ds.n, why, sizeof why), "exact slabs vs fp64: %s", why);
        printf("# %s: %llu pairs; under %.1f MB: %g slabs of %g rows along dim %g, %g halo rows,"
               " peak %.1f MB\n",
               names[t], (unsigned long long)whole.count, cap / 1e6, chunks,
               jo_metric(&part, "stream_chunk_rows"), jo_metric(&part, "stream_slab_dim"),
               jo_metric(&part, "stream_halo_rows"), jo_metric(&part, "device_mem_peak") / 1e6);
        jo_free(&whole);
        jo_free(&part);
    }
    jo_free(&ref);
    dataset_free(&ds);
}
