/* A GPU run's kern_join_result as a join_result (src/engine_gpu_int.h):
 * what the join and the k-distance record alike, and what only a join
 * has. Metric order is the order runs are stored and shown in. */
#include <stdio.h>

#include "engine_gpu_int.h"
#include "err.h"

void engine_gpu_timing(const kern_join_result *r, const dataset *ds, const char *tail,
                       join_result *res)
{
    res->kernel_seconds = r->t_kernel;
    res->d_padded = r->d_padded ? r->d_padded : ds->d;
    join_result_phase(res, "h2d", r->t_h2d);
    if (r->convert_name)
        join_result_phase(res, r->convert_name, r->t_convert);
    if (r->prep_name)
        join_result_phase(res, r->prep_name, r->t_prep);
    join_result_phase(res, "kernel", r->t_kernel);
    join_result_phase(res, "d2h", r->t_d2h);
    if (tail)
        join_result_phase(res, tail, r->t_sink);
    snprintf(res->device, sizeof res->device, "%s", r->device_name);
}

/* A run over a device list (`set devices`): how many, and each one's
 * share as counters named after its ordinal (the run record's columns
 * stay as they are). */
static void gpu_shares(const kern_join_result *r, join_result *res)
{
    if (r->ndevices <= 0)
        return;
    join_result_metric(res, "devices", r->ndevices, "");
    for (int t = 0; t < r->ndevices && t < KERN_MAX_DEVICES; t++) {
        const kern_device_share *d = &r->share[t];
        char name[64];
        snprintf(name, sizeof name, "dev%d_items", d->device);
        join_result_metric(res, name, (double)d->items, "items");
        snprintf(name, sizeof name, "dev%d_kernel_s", d->device);
        join_result_metric(res, name, d->t_kernel, "s");
        snprintf(name, sizeof name, "dev%d_pairs", d->device);
        join_result_metric(res, name, (double)d->pairs, "pairs");
    }
}

/* The dataset did not fit the device: how a run (a join or a
 * k-distance) was streamed. */
static void gpu_stream_metrics(const kern_join_result *r, join_result *res)
{
    if (!r->chunks)
        return;
    join_result_metric(res, "stream_chunks", r->chunks, "");
    join_result_metric(res, "stream_chunk_rows", (double)r->chunk_rows, "rows");
    join_result_metric(res, "stream_runs", (double)r->chunk_runs, "");
    if (r->slabs) {
        /* Cut in slabs of the rows sorted along one dimension (an engine
         * whose grid index covers every row). */
        join_result_metric(res, "stream_slab_dim", r->slab_dim, "");
        join_result_metric(res, "stream_halo_rows", (double)r->halo_rows, "rows");
    }
}

/* Cut by clusters (exact's cluster path, kern_cluster_run): the groups
 * joined and the share of the n^2 ordered pairs the run joined, which
 * are the pairs it examined (the record's pairs_examined, pruned). For
 * exact's k-distance in the cluster order: the clusters, and the share
 * of its first pass's tile items it ran. */
static void gpu_cluster_metrics(const kern_join_args *a, const kern_join_result *r,
                                join_result *res)
{
    if (!r->clusters)
        return;
    join_result_metric(res, "clusters", r->clusters, "");
    join_result_metric(res, "cluster_work", r->cluster_work, "");
    join_result_metric(res, "pairs_examined", r->cluster_work * (double)a->n * (double)a->n,
                       "pairs");
}

/* Cut by tiles (exact's tile path, kern_tiles_run): the row blocks and
 * the share of their pairs the run joined; the pairs examined are that
 * share of the n^2 ordered pairs. */
static void gpu_tile_metrics(const kern_join_args *a, const kern_join_result *r, join_result *res)
{
    if (!r->tile_blocks)
        return;
    join_result_metric(res, "tile_blocks", (double)r->tile_blocks, "");
    join_result_metric(res, "tile_work", r->tile_work, "");
    join_result_metric(res, "pairs_examined", r->tile_work * (double)a->n * (double)a->n, "pairs");
}

/* A pruning path's candidates (exact's FP64 grid: the distances it
 * computed), the run's pairs_examined (pruned). */
static void gpu_grid_metrics(const kern_join_result *r, join_result *res)
{
    if (r->examined || r->skipped)
        join_result_metric(res, "pairs_examined", (double)r->examined, "pairs");
    if (r->skipped)
        join_result_metric(res, "pairs_skipped", (double)r->skipped, "pairs");
}

/* exact's pass: what its band sent to the FP64 refinement. */
static void gpu_exact_metrics(const kern_join_result *r, join_result *res)
{
    const kern_exact_counts *e = &r->ex;
    join_result_metric(res, "refined_pairs", (double)e->refined, "pairs");
    join_result_metric(res, "refined_fraction",
                       r->pairs ? (double)e->refined / (double)r->pairs : 0, "");
    join_result_metric(res, "band_pairs", (double)e->band, "pairs");
    join_result_metric(res, "listed_pairs", (double)e->listed, "pairs");
    join_result_metric(res, "band_fraction", r->pairs ? (double)e->band / (double)r->pairs : 0, "");
    join_result_metric(res, "sequential_pairs", (double)e->sequential, "pairs");
    join_result_metric(res, "refine_kernel", e->t_refine, "s");
}

/* Derived TFLOPS (padded d): the paper's count for the work done; a
 * symmetric run does about half the tiles, a cluster cut its share. */
static void gpu_tflops(const kern_join_args *a, const kern_join_result *r, join_result *res)
{
    const double nq = (double)(a->q1 - a->q0), n = (double)a->n;
    const double work = (r->symmetric ? 0.5 : 1.0) * (r->clusters ? r->cluster_work : 1.0) *
                        (r->tile_blocks ? r->tile_work : 1.0);
    const double paper = engine_tflops(nq, n, (double)r->d_padded, r->t_kernel);
    join_result_metric(res, "tflops_padded", work * paper, "TFLOPS");
    join_result_metric(res, "tflops_paper", paper, "TFLOPS");
}

void engine_gpu_metrics(const engine *e, const kern_join_args *a, const kern_join_result *r,
                        const gpu_xform *x, int join, join_result *res)
{
    const int tc = e->format != NULL;
    /* What the engine converted or built was already on the device (the
     * tensor-core formats' dataset, the grid engines' index; 0 for the
     * engines that keep nothing). */
    join_result_metric(res, "cache_hit", r->cache_hit, "");
    if (e->centers)
        join_result_metric(res, "centred", r->centred, "");
    if (e->shifts)
        join_result_metric(res, "shifted", x->shifted, "");
    join_result_metric(res, "launches", (double)r->launches, "");
    if (join)
        join_result_metric(res, "buffer_refills", (double)r->refills, "");
    join_result_metric(res, "device_mem_peak", (double)r->mem_peak, "B");
    if (join) {
        join_result_metric(res, "buffers_shrunk", r->shrunk, "");
        if (a->mode == KJOIN_PAIRS)
            join_result_metric(res, "pair_buffer", (double)r->pair_cap, "pairs");
        if (tc && e->exact)
            gpu_exact_metrics(r, res);
    }
    gpu_shares(r, res);
    gpu_stream_metrics(r, res);
    if (join) {
        gpu_cluster_metrics(a, r, res);
        gpu_tile_metrics(a, r, res);
        gpu_grid_metrics(r, res);
        if (tc && !r->examined && !r->skipped) /* the paper's count is the tensor cores' */
            gpu_tflops(a, r, res);
    } else {
        gpu_cluster_metrics(a, r, res); /* exact's k-distance in the cluster order */
    }
    if (x->scaled) {
        join_result_metric(res, "scale_log2", x->fit.scale, "");
        join_result_metric(res, "underflow_values", (double)x->fit.underflow, "");
    }
}

int engine_gpu_error(const char *name, int rc)
{
    switch (rc) {
    case KERN_OK:
        return 0;
    case KERN_ESINK:
        return err_set(TCJ_EIO, "%s: the pair sink stopped the run", name);
    case KERN_ECANCEL:
        return err_set(TCJ_ECANCEL, ERR_CANCELLED);
    case KERN_ENODEV:
        return err_set(TCJ_ENODEV, "%s: %s", name, kern_error());
    case KERN_EINVAL:
        return err_set(TCJ_EINVAL, "%s: %s", name, kern_error());
    case KERN_ENOMEM:
        return err_set(TCJ_ENOMEM, "%s: %s", name, kern_error());
    default:
        return err_set(TCJ_EGPU, "%s: %s", name, kern_error());
    }
}
