/* `exact`: the FP64 pair set at tensor-core speed. FASTED's FP16 pass keeps
 * every pair the error bound (kernels/exact_bound.h, docs/ACCURACY.md) says
 * could be within eps, and the GPU computes each of those again with the
 * fp64 engine's arithmetic: fp64's count, per-point counts, histogram and
 * pair set with FP64 distances. On a GPU it is the ground truth compare and
 * sweep use by default. Data beyond FP16's range are scaled down by a
 * power of two first. Where the band would be most of the work (low d,
 * large coordinates against eps: a LiDAR scan), it joins in FP64 over a
 * grid index instead (`set exact-path`, exact_path_choose); where the rows
 * fall in clusters far apart against eps, it joins each group of near
 * clusters alone, centred on its own origin, in one pass over a layout of
 * the groups (kern_cluster_run); where the rows spread over a few
 * dimensions (d 4 to 16), it joins only the pairs of row blocks whose
 * bounding boxes are within eps, the rows in a k-d order (kern_tiles_run):
 * fp64's results every way; the run records metric `path` (0 pass, 1 grid,
 * 2 clusters, 3 tiles), the grid's variant names "fp64 grid" and the tile
 * cut's ends in "tiles". */
#include <math.h>
#include <string.h>

#include "center_exact.h"
#include "engine.h"
#include "exact_kdist_grid.h"
#include "exact_path.h"
#include "exact_predict.h"
#include "fmt_fit.h"
#include "kernels.h"

KERN_FORMAT_DECL(fp16);

/* The clustering layer's pairs consumed on the device
 * (src/engine_exact_consume.c). */
int exact_consume(const join_spec *spec, pair_consumer *c, join_result *res);

/* FP16 as the exact pass sees it: values beyond 65504 (after centring) are
 * scaled down by the power of two that brings the largest under it; never
 * up. Exact in FP64, so the bound keeps its relative terms (kernels/exact.cu
 * takes it in the scaled units); the run records scale_log2. */
static const fmt_fit_format exact_fp16 = {
    .name = "fp16", .max = EXACT_FP16_MAX, .min_sub = 0x1p-24, .scaled = 1};

/* The grid path as a row engine_gpu_run_fmt runs: kern_fp64_grid_run on
 * the rows as loaded (no format, no centring, no scale); the records keep
 * exact's name and label. */
static const engine exact_grid_row = {
    .name = "exact",
    .precision = "fp16-32+fp64",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .kjoin = kern_fp64_grid_run,
};

const engine *exact_grid_engine(void)
{
    return &exact_grid_row;
}

int exact_grid_path(const dataset *ds, double eps, const engine_opts *o, double *band)
{
    exact_prediction p;
    const int predict = exact_path_needs_prediction(o->exact_path, ds->d);
    if (predict)
        exact_predict_cached(ds, eps, EXACT_PATH_ROWS, EXACT_PATH_COLS, &p);
    if (band)
        *band = predict ? p.band_fraction : -1;
    return exact_path_choose(o->exact_path, ds->d, predict ? &p : NULL);
}

/* Whether the run was cut by clusters or by tiles (their metrics,
 * src/engine_gpu_result.c). */
static int exact_clustered(const join_result *res)
{
    return join_result_metric_value(res, "clusters") > 0; /* NAN: no */
}

static int exact_tiled(const join_result *res)
{
    return join_result_metric_value(res, "tile_blocks") > 0;
}

double exact_pass_scale(const dataset *ds, const engine_opts *o, double eps)
{
    fmt_fit fit;
    fmt_fit_engine(ds, center_pick_exact(ds, o->center, eps), &exact_fp16, &fit);
    return fit.scale < 0 ? ldexp(1.0, fit.scale) : 0;
}

engine_kjoin_fn exact_pass_fn(const engine_opts *o)
{
    switch (o->exact_path) {
    case EXACT_PATH_PASS:
        return kern_exact_run;
    case EXACT_PATH_CLUSTERS:
        return kern_exact_clusters_run;
    case EXACT_PATH_TILES:
        return kern_exact_tiles_run;
    default:
        return kern_exact_auto_run;
    }
}

static int exact_run(const join_spec *s, join_result *res)
{
    engine_opts def;
    const engine_opts *o = engine_opts_or_default(s->opts, &def);
    double band;
    kern_trace_mark("exact run: start");
    const int grid = exact_grid_path(s->ds, join_spec_eps(s), o, &band);
    kern_trace_mark("exact run: grid path");
    int rc;
    if (grid) {
        join_spec g = *s;
        g.engine = &exact_grid_row;
        rc = engine_gpu_run_fmt(&g, res, NULL, 0);
        join_result_metric(res, "centred", 0, "");
        join_result_metric(res, "scale_log2", 0, "");
    } else {
        const double sc = exact_pass_scale(s->ds, o, join_spec_eps(s));
        kern_trace_mark("exact run: scale");
        const int k = sc ? ilogb(sc) : 0;
        /* The pass whole (the row's own entry), or over the cluster or the
         * tile cut: forced, or where auto finds it pays (kern_cluster_run,
         * kern_tiles_run). */
        engine row = *s->engine;
        join_spec c = *s;
        row.kjoin = exact_pass_fn(o);
        c.engine = &row;
        rc = engine_gpu_run_fmt(&c, res, s->engine->format, sc);
        kern_trace_mark("exact run: gpu run");
        /* A cluster cut scales each run itself (kern_cluster_run). */
        if (!exact_clustered(res))
            join_result_metric(res, "scale_log2", k, "");
    }
    join_result_metric(res, "path",
                       grid                   ? 1
                       : exact_clustered(res) ? 2
                       : exact_tiled(res)     ? 3
                                              : 0,
                       "");
    if (band >= 0)
        join_result_metric(res, "band_predicted", band, "");
    return rc;
}

const engine engine_exact = {
    .name = "exact",
    .precision = "fp16-32+fp64",
    .summary = "FASTED's FP16 pass bounded by its error, its band screened in FP32 and "
               "decided in FP64: fp64's results (the GPU ground truth)",
    .gpu = 1,
    .dist = ENGINE_DIST_FP64,
    .exact = 1,
    .in_bits = 53,
    .rank = {[ENGINE_ROLE_TRUTH] = 3},
    .run = exact_run,
    .kjoin = kern_exact_run,
    .format = KERN_FORMAT(fp16),
    .centers = 1,
    .kdist = exact_kdist,
    .consume = exact_consume,
};
