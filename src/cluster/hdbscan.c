/* HDBSCAN* on the curve's forest (src/cluster/hdbscan.h). */
#include "hdbscan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dbscan_curve.h"
#include "hdbscan_mst.h"
#include "kdist.h"
#include "sort_f64.h"
#include "sweep.h"
#include "err.h"
#include "kernels.h"
#include "mem.h"

/* The curve's maximum: the HD_FOREST_QUANTILE core distance, where the
 * forest spans the dense parts, but no more than the eps of selectivity
 * HD_FOREST_S (HD_FOREST_S_DEVICE where the engine consumes the pairs on
 * its device: pairs cost it little there, and the host's rounds much;
 * HD_FOREST_S_ROUNDS where it takes the rounds too, each a pass over the
 * rows that search whatever the forest leaves, so that the curve's pairs
 * beyond that cost more than the rounds they spare: docs/BENCHMARKS.md,
 * "HDBSCAN*") by
 * the data's sample (src/sweep.h: some 2M distances), so that its join's
 * pairs stay about that many a point where a background's core distances
 * lie far above the clusters' (uncapped, a tenth of the points uniform
 * around blobs make the curve nearly all of an HDBSCAN's time at
 * 3 x 10^4 x 16);
 * the host's rounds (src/cluster/hdbscan_mst.h) join the
 * rest. Above 0 (the curve needs a positive maximum: duplicates' pairs
 * are at 0). */
#define HD_FOREST_QUANTILE 0.97
#define HD_FOREST_S 256.0
#define HD_FOREST_S_DEVICE 8192.0
#define HD_FOREST_S_ROUNDS 512.0

static double hd_forest_max(const dataset *ds, const double *core2, size_t n, double s_cap)
{
    double *v = xmalloc(n * sizeof *v);
    memcpy(v, core2, n * sizeof *v);
    sort_f64(v, n);
    double m = sqrt(v[(size_t)(HD_FOREST_QUANTILE * (double)(n - 1))]);
    free(v);
    sweep_sample smp;
    if ((double)n > 2 * s_cap && sweep_sample_build(ds, 0, &smp) == 0) {
        const double cap = sweep_sample_eps(&smp, s_cap);
        sweep_sample_free(&smp);
        if (cap > 0 && isfinite(cap) && cap < m)
            m = cap;
    }
    err_clear();
    return m > 0 ? m : 1e-300;
}

void hdbscan_result_free(hdbscan_result *r)
{
    hdbscan_tree_free(&r->tree);
    memset(r, 0, sizeof *r);
}

int hdbscan_run(const engine *e, const hdbscan_spec *spec, hdbscan_result *r)
{
    memset(r, 0, sizeof *r);
    const dataset *ds = spec->ds;
    if (!ds || ds->n == 0)
        return err_set(TCJ_EINVAL, "hdbscan: no dataset loaded (use load or gen)");
    const size_t n = ds->n;
    if (spec->min_cluster_size < 2)
        return err_set(TCJ_EINVAL, "hdbscan: min_cluster_size must be at least 2, got %zu",
                       spec->min_cluster_size);
    const size_t ms = spec->min_samples ? spec->min_samples : spec->min_cluster_size;
    const size_t ms_max = n < KDIST_MAX_K + 1 ? n : KDIST_MAX_K + 1;
    if (ms < 1 || ms > ms_max)
        return err_set(TCJ_EINVAL, "hdbscan: min_samples must be 1 to %zu (the points%s), got %zu",
                       ms_max, n < KDIST_MAX_K + 1 ? "" : " or the largest k-distance", ms);
    if (!(spec->epsilon >= 0) || !isfinite(spec->epsilon))
        return err_set(TCJ_EINVAL, "hdbscan: epsilon must be a finite distance >= 0");
    r->min_samples = ms;
    const double t0 = engine_now();
    const hdbscan_params hp = {spec->min_cluster_size, spec->method, spec->epsilon,
                               spec->allow_single};
    int rc;
    if (n == 1) {
        rc = hdbscan_tree_build(1, NULL, NULL, &hp, &r->tree);
        r->noise = 1;
        r->seconds = engine_now() - t0;
        return rc;
    }
    /* a NaN or an infinity has no distance to order */
    size_t bad;
    dataset_nonfinite(ds, NULL, &bad); /* no cancel: it cannot fail */
    if (bad < n * ds->d)
        return err_set(TCJ_EINVAL, "hdbscan: the data holds values that are not finite");
    /* the core distances: the engine's k-distance (min_samples counts the
     * point itself); where that is cpu's FP64 on the host, at d up to
     * KD_TREE_KDIST_MAX_D (above it boxes rarely prune, and the blocked
     * brute force is faster), from the k-d tree the host's rounds then
     * search, with each point's nearest */
    double *core2 = mem_alloc("hdbscan", "the core distances", n, sizeof *core2, 0);
    if (!core2)
        return TCJ_ENOMEM;
    hdbscan_knn hk = {0};
    if (ms > 1 && !e->gpu && e->exact && !e->consume && ds->d <= KD_TREE_KDIST_MAX_D) {
        if ((rc = hdbscan_knn_make(ds, spec->opts, ms, spec->cancel, core2, &hk))) {
            free(core2);
            return rc;
        }
    } else if (ms > 1) {
        kdist_spec ks = {.ds = ds,
                         .q0 = 0,
                         .q1 = n,
                         .k = (int)(ms - 1),
                         .opts = spec->opts,
                         .out = core2,
                         .cancel = spec->cancel};
        join_result kr;
        if ((rc = kdist_run(e, &ks, &kr))) {
            free(core2);
            return rc;
        }
    } else
        memset(core2, 0, n * sizeof *core2);
    const double t_core = engine_now();
    r->core_seconds = t_core - t0;
    dbscan_curve c;
    memset(&c, 0, sizeof c);
    if (hk.tree.n) {
        /* the host's tree: the rounds start from single points, each
         * point's nearest deciding most of the first rounds' edges with no
         * search (the curve's forest would cost its joins for them) */
        r->nearest = hk.kl;
        snprintf(c.precision, sizeof c.precision, "%s", e->precision);
    } else {
        const double s_cap = !e->consume                              ? HD_FOREST_S
                             : hdbscan_mst_offered(e, spec->opts, ds) ? HD_FOREST_S_ROUNDS
                                                                      : HD_FOREST_S_DEVICE;
        r->max = hd_forest_max(ds, core2, n, s_cap);
        dbscan_curve_spec cs = {.ds = ds,
                                .minpts = ms,
                                .max = r->max,
                                .keep_ends = 1,
                                .opts = spec->opts,
                                .cancel = spec->cancel,
                                .progress = spec->progress,
                                .progress_ctx = spec->progress_ctx};
        if ((rc = dbscan_curve_run(e, &cs, &c))) {
            free(core2);
            return rc;
        }
    }
    kern_trace_mark("hdbscan: forest");
    const double t_forest = engine_now();
    r->forest_seconds = t_forest - t_core;
    r->rounds = c.rounds;
    r->rounds_device = c.rounds_device;
    r->forest_edges = c.nedge;
    snprintf(r->precision, sizeof r->precision, "%s", c.precision);
    double *w2 = NULL;
    uint64_t *ab = NULL;
    hdbscan_mst_stats st;
    rc = hdbscan_mst_complete(e, spec->opts, ds, core2, c.nedge, c.edge2, c.edge_ab,
                              hk.tree.n ? &hk : NULL, spec->cancel, &w2, &ab, &st);
    hdbscan_knn_free(&hk);
    r->host_rounds = st.host_rounds;
    r->device_rounds = st.device_rounds;
    r->rows_fp64 = st.rows_fp64;
    dbscan_curve_free(&c);
    free(core2);
    if (rc)
        return rc;
    kern_trace_mark("hdbscan: tree");
    r->complete_seconds = engine_now() - t_forest;
    r->tree_seconds = engine_now() - t0;
    /* distances, as scikit-learn's tree holds them: the square roots of
     * the engine's squared distances (a low precision's may fall below 0
     * for near duplicates: 0 there) */
    for (size_t k = 0; k + 1 < n; k++)
        w2[k] = w2[k] > 0 ? sqrt(w2[k]) : 0.0;
    const double t1 = engine_now();
    rc = hdbscan_tree_build(n, w2, ab, &hp, &r->tree);
    free(w2);
    free(ab);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        r->noise += r->tree.labels[i] < 0;
    kern_trace_mark("hdbscan: labels");
    r->select_seconds = engine_now() - t1;
    r->seconds = engine_now() - t0;
    return 0;
}
