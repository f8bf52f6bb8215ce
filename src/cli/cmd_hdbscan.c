/* hdbscan [min_cluster_size=M] [min_samples=K] [method=eom|leaf]
 * [epsilon=E] [single] [engine=NAME] [out=FILE] [probs=FILE]
 * [scores=FILE]: HDBSCAN* (src/cluster/hdbscan.h), no eps needed: its
 * clusters, noise, the largest clusters with their stabilities, time by
 * step and red flags; labels, membership probabilities and GLOSH outlier
 * scores to files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbscan.h"
#include "dbscan_out.h"
#include "err.h"
#include "hdbscan.h"
#include "mem.h"
#include "ofile.h"
#include "out.h"
#include "runner.h"
#include "store.h"

#define HDBSCAN_DEFAULT_MCS 5 /* scikit-learn's min_cluster_size default */
#define HDBSCAN_TOP 10
#define HDBSCAN_CONDENSED_KEPT 255 /* the record's clusters of the condensed tree */

/* The three output files, checked before the work, made after it. */
typedef struct hd_files {
    const char *path[3];
    ofile *of[3];
} hd_files;

static const char *const hd_file_opts[3] = {"out", "probs", "scores"};

static int hd_open(session *s, int argc, char **argv, int force, hd_files *f)
{
    memset(f, 0, sizeof *f);
    for (int k = 0; k < 3; k++) {
        f->path[k] = cmd_opt(argc, argv, hd_file_opts[k]);
        int rc = f->path[k] ? ofile_open_late(f->path[k], force, s->db ? store_path(s->db) : NULL,
                                              &f->of[k])
                            : 0;
        if (rc) {
            for (int j = 0; j < k; j++)
                ofile_abort(f->of[j]);
            return rc == TCJ_ECANCEL ? err_cancelled("hdbscan") : rc;
        }
    }
    return 0;
}

static int hd_write(hd_files *f, const hdbscan_tree *t)
{
    const void *col[3] = {t->labels, t->prob, t->score};
    static const char *const name[3] = {"label", "probability", "outlier_score"};
    int rc = 0;
    for (int k = 0; k < 3; k++) {
        if (!f->of[k])
            continue;
        if (rc)
            ofile_abort(f->of[k]);
        else
            rc = cluster_write_column(f->of[k], f->path[k], col[k], t->n, k > 0, name[k]);
        f->of[k] = NULL;
    }
    return rc == TCJ_ECANCEL ? err_cancelled("hdbscan") : rc;
}

static void hd_abort(hd_files *f)
{
    for (int k = 0; k < 3; k++)
        ofile_abort(f->of[k]);
}

static int hd_parse(const session *s, int argc, char **argv, hdbscan_spec *h)
{
    int rc;
    const char *v;
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "hdbscan: no dataset loaded (use load or gen)");
    h->min_cluster_size = HDBSCAN_DEFAULT_MCS;
    if ((v = cmd_opt(argc, argv, "min_cluster_size")) &&
        (rc = cmd_parse_size(v, "hdbscan: min_cluster_size", &h->min_cluster_size)))
        return rc;
    if ((v = cmd_opt(argc, argv, "min_samples")) &&
        (rc = cmd_parse_size(v, "hdbscan: min_samples", &h->min_samples)))
        return rc;
    if ((v = cmd_opt(argc, argv, "min_samples")) && h->min_samples == 0)
        return err_set(TCJ_EINVAL, "hdbscan: min_samples must be at least 1 (it counts the point "
                                   "itself), got 0");
    h->method = HDBSCAN_EOM;
    if ((v = cmd_opt(argc, argv, "method"))) {
        if (strcmp(v, "leaf") == 0)
            h->method = HDBSCAN_LEAF;
        else if (strcmp(v, "eom") != 0)
            return err_set(TCJ_EINVAL, "hdbscan: method must be eom or leaf, got '%s'", v);
    }
    if ((v = cmd_opt(argc, argv, "epsilon"))) {
        if ((rc = cmd_parse_double(v, "hdbscan: epsilon", &h->epsilon)))
            return rc;
        if (!(h->epsilon >= 0) || !isfinite(h->epsilon))
            return err_set(TCJ_EINVAL, "hdbscan: epsilon must be a distance >= 0, got '%s'", v);
    }
    return 0;
}

/* engine=NAME, else the ground truth with a k-distance (exact on a GPU,
 * cpu otherwise). */
static int hd_engine(const session *s, const char *name, const engine **out)
{
    if (name)
        return runner_engine_opt(&s->eopt, name, out);
    const engine *e = engine_kdist_pick(runner_reference_engine(&s->eopt), &s->eopt);
    if (!e)
        return err_set(TCJ_EUNSUP, "hdbscan: no exact engine with a k-distance can run here");
    *out = e;
    return engine_available(e, &s->eopt);
}

static void hd_print(const session *s, const engine *e, const hdbscan_spec *h,
                     const hdbscan_result *r, const size_t *top, size_t ntop, int64_t id)
{
    const hdbscan_tree *t = &r->tree;
    const double n = t->n ? (double)t->n : 1;
    out_printf("hdbscan %lld: min_cluster_size %zu, min_samples %zu, %s%s%s on %s (n=%zu "
               "d=%zu), engine %s\n",
               (long long)id, h->min_cluster_size, r->min_samples,
               h->method == HDBSCAN_LEAF ? "leaf" : "eom",
               h->allow_single ? ", single cluster allowed" : "",
               h->epsilon > 0 ? ", epsilon set" : "", s->ds.name, s->ds.n, s->ds.d, e->name);
    out_printf("  clusters %zu, noise %zu (%.1f%%); spanning tree weight %.10g\n", t->nclusters,
               r->noise, 100.0 * (double)r->noise / n, t->weight);
    if (ntop) {
        out_printf("  largest clusters (label: points, stability, appears at distance):\n");
        for (size_t k = 0; k < ntop; k++) {
            const size_t c = top[k];
            const double lb = t->lambda_birth[c];
            out_printf("    %zu: %zu, %.6g, %s%.6g\n", c, t->sizes[c], t->stability[c],
                       lb > 0 ? "" : "root ", lb > 0 ? 1.0 / lb : INFINITY);
        }
    }
    char rest[96] = "";
    if (r->device_rounds)
        snprintf(rest, sizeof rest, "%d round%s on the device (%zu rows decided in FP64), ",
                 r->device_rounds, r->device_rounds == 1 ? "" : "s", r->rows_fp64);
    if (r->nearest)
        out_printf("  time %.3f s: spanning tree %.3f s (core distances and each point's %zu "
                   "nearest on a k-d tree %.3f s; %d Boruvka round%s on the host over it "
                   "%.3f s), hierarchy and selection %.3f s\n",
                   r->seconds, r->tree_seconds, r->nearest, r->core_seconds, r->host_rounds,
                   r->host_rounds == 1 ? "" : "s", r->complete_seconds, r->select_seconds);
    else
        out_printf("  time %.3f s: spanning tree %.3f s (core distances %.3f s; forest to "
                   "distance %.6g %.3f s, %zu edges, %d Boruvka join%s%s; the rest %.3f s, %s%d "
                   "round%s on the host), hierarchy and selection %.3f s\n",
                   r->seconds, r->tree_seconds, r->core_seconds, r->max, r->forest_seconds,
                   r->forest_edges, r->rounds, r->rounds == 1 ? "" : "s",
                   r->rounds_device ? ", pairs kept on the device" : "", r->complete_seconds, rest,
                   r->host_rounds, r->host_rounds == 1 ? "" : "s", r->select_seconds);
    if (t->nclusters == 0)
        out_printf("  red flag: every point is noise: no group of %zu points stands out%s%s%s\n",
                   h->min_cluster_size, h->min_cluster_size > 2 || !h->allow_single ? "; try " : "",
                   h->min_cluster_size > 2 ? "a smaller min_cluster_size" : "",
                   h->allow_single           ? ""
                   : h->min_cluster_size > 2 ? " or single"
                                             : "single");
    else if ((double)r->noise > 0.5 * n)
        out_printf("  red flag: %.0f%% of the points are noise; a smaller min_samples keeps "
                   "more of them\n",
                   100.0 * (double)r->noise / n);
    if (t->nclusters && (double)t->sizes[top[0]] > 0.9 * n && t->nclusters > 1)
        out_printf("  red flag: one cluster holds %.0f%% of the points\n",
                   100.0 * (double)t->sizes[top[0]] / n);
}

/* What the record of one clustering is made of (hd_members). */
typedef struct hd_view {
    const session *s;
    const engine *e;
    const hdbscan_spec *h;
    const hdbscan_result *r;
    const size_t *top;
    size_t ntop;
    const hd_files *f;
} hd_view;

static void hd_members(void *ctx, out_rec *o)
{
    const hd_view *v = ctx;
    const session *s = v->s;
    const engine *e = v->e;
    const hdbscan_spec *h = v->h;
    const hdbscan_result *r = v->r;
    const size_t *top = v->top;
    const size_t ntop = v->ntop;
    const hd_files *f = v->f;
    const hdbscan_tree *t = &r->tree;
    out_rec_str(o, "engine", e->name);
    out_rec_str(o, "precision", r->precision);
    out_rec_str(o, "dataset", s->ds.name);
    out_rec_int(o, "n", (int64_t)s->ds.n);
    out_rec_int(o, "d", (int64_t)s->ds.d);
    out_rec_int(o, "min_cluster_size", (int64_t)h->min_cluster_size);
    out_rec_int(o, "min_samples", (int64_t)r->min_samples);
    out_rec_str(o, "method", h->method == HDBSCAN_LEAF ? "leaf" : "eom");
    out_rec_dbl(o, "epsilon", h->epsilon);
    out_rec_bool(o, "single", h->allow_single);
    out_rec_int(o, "clusters", (int64_t)t->nclusters);
    out_rec_int(o, "noise", (int64_t)r->noise);
    out_rec_dbl(o, "tree_weight", t->weight);
    out_rec_dbl(o, "time_s", r->seconds);
    out_rec_dbl(o, "tree_s", r->tree_seconds);
    out_rec_dbl(o, "core_s", r->core_seconds);
    out_rec_dbl(o, "forest_s", r->forest_seconds);
    out_rec_dbl(o, "rest_s", r->complete_seconds);
    out_rec_dbl(o, "forest_max", r->max);
    out_rec_int(o, "forest_edges", (int64_t)r->forest_edges);
    out_rec_int(o, "nearest", (int64_t)r->nearest);
    out_rec_int(o, "host_rounds", r->host_rounds);
    out_rec_int(o, "device_rounds", r->device_rounds);
    out_rec_int(o, "rows_fp64", (int64_t)r->rows_fp64);
    out_rec_dbl(o, "select_s", r->select_seconds);
    out_rec_int(o, "rounds", r->rounds);
    out_rec_int(o, "rounds_device", r->rounds_device);
    for (int k = 0; k < 3; k++)
        if (f->path[k])
            out_rec_str(o, hd_file_opts[k], f->path[k]);
    out_rec_arr(o, "largest");
    for (size_t k = 0; k < ntop; k++) {
        out_rec_obj(o, NULL);
        out_rec_int(o, "label", (int64_t)top[k]);
        out_rec_int(o, "size", (int64_t)t->sizes[top[k]]);
        out_rec_dbl(o, "stability", t->stability[top[k]]);
        out_rec_dbl(o, "lambda_birth", t->lambda_birth[top[k]]);
        out_rec_close(o);
    }
    out_rec_close(o);
    /* the condensed tree's first clusters in their numbering (parents
     * before children): the dashboard's icicle */
    out_rec_arr(o, "condensed");
    int32_t num = t->ncond && t->selected[0]; /* the root chosen is cluster 0 */
    for (size_t c = 1; c < t->ncond && c <= HDBSCAN_CONDENSED_KEPT; c++) {
        const hdbscan_node *nd = &t->nodes[c - 1];
        out_rec_obj(o, NULL);
        out_rec_int(o, "parent", nd->parent);
        out_rec_dbl(o, "lambda", nd->lambda);
        out_rec_int(o, "size", (int64_t)nd->size);
        out_rec_int(o, "label", t->selected[c] ? num : -1);
        out_rec_close(o);
        num += t->selected[c] != 0;
    }
    out_rec_close(o);
    out_rec_bool(o, "root_chosen", t->ncond && t->selected[0]);
}

/* The largest clusters' labels, by size descending (ties: lower label). */
static size_t hd_top(const hdbscan_tree *t, size_t *top)
{
    size_t m = 0;
    for (size_t c = 0; c < t->nclusters; c++) {
        size_t k = m < HDBSCAN_TOP ? m++ : HDBSCAN_TOP;
        if (k == HDBSCAN_TOP) {
            if (t->sizes[c] <= t->sizes[top[HDBSCAN_TOP - 1]])
                continue;
            k = HDBSCAN_TOP - 1;
        }
        while (k > 0 && t->sizes[top[k - 1]] < t->sizes[c]) {
            top[k] = top[k - 1];
            k--;
        }
        top[k] = c;
    }
    return m;
}

/* What the record of one comparison is made of (hd_cmp_members). */
typedef struct hd_cmp_view {
    const session *s;
    const engine *const *e;
    const hdbscan_spec *h;
    int with_dbscan;
    size_t minpts;
    const size_t *clusters, *noise;
    const dbscan_cmp *c;
} hd_cmp_view;

static void hd_cmp_members(void *ctx, out_rec *o)
{
    const hd_cmp_view *v = ctx;
    out_rec_str(o, "dataset", v->s->ds.name);
    out_rec_int(o, "n", (int64_t)v->s->ds.n);
    out_rec_str(o, "a_engine", v->e[0]->name);
    out_rec_str(o, "b", v->with_dbscan ? "dbscan" : "hdbscan");
    out_rec_str(o, "b_engine", v->e[1]->name);
    out_rec_int(o, "min_cluster_size", (int64_t)v->h->min_cluster_size);
    if (v->with_dbscan) {
        out_rec_dbl(o, "eps", v->s->eps);
        out_rec_int(o, "minpts", (int64_t)v->minpts);
    }
    out_rec_int(o, "a_clusters", (int64_t)v->clusters[0]);
    out_rec_int(o, "b_clusters", (int64_t)v->clusters[1]);
    out_rec_int(o, "a_noise", (int64_t)v->noise[0]);
    out_rec_int(o, "b_noise", (int64_t)v->noise[1]);
    out_rec_dbl(o, "ari", v->c->ari);
    out_rec_int(o, "changed", (int64_t)v->c->changed);
    out_rec_int(o, "noise_gained", (int64_t)v->c->noise_gained);
    out_rec_int(o, "noise_lost", (int64_t)v->c->noise_lost);
}

/* hdbscan compare A B | hdbscan compare dbscan [minpts=M]: two
 * clusterings of the session's dataset, each HDBSCAN* on an engine, or
 * HDBSCAN* (engine=, default the ground truth) against DBSCAN at the
 * current eps on the same engine (minpts default: min_samples): the
 * adjusted Rand index, the points whose label changes after matching
 * clusters, noise gained and lost (src/cluster/dbscan.h's dbscan_compare). */
static int hd_compare(session *s, int argc, char **argv, char **pos, int np, const hdbscan_spec *h)
{
    const int with_dbscan = np == 2 && strcmp(pos[1], "dbscan") == 0;
    if (!with_dbscan && np != 3)
        return err_set(TCJ_EINVAL, "Usage: hdbscan compare A B | hdbscan compare dbscan "
                                   "[minpts=M] [engine=NAME] (and hdbscan's options)");
    const engine *e[2];
    int rc;
    if (with_dbscan) {
        if (!s->have_eps)
            return err_set(
                TCJ_EINVAL,
                "hdbscan compare dbscan: eps is not set (eps VALUE, sweep or kdist K use)");
        if ((rc = hd_engine(s, cmd_opt(argc, argv, "engine"), &e[0])))
            return rc;
        e[1] = e[0];
    } else if ((rc = runner_engine_opt(&s->eopt, pos[1], &e[0])) ||
               (rc = runner_engine_opt(&s->eopt, pos[2], &e[1])))
        return rc;
    const size_t n = s->ds.n;
    int32_t *lab[2] = {NULL, NULL};
    size_t clusters[2] = {0, 0}, noise[2] = {0, 0};
    size_t minpts = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        if (k == 1 && with_dbscan) {
            const char *v = cmd_opt(argc, argv, "minpts");
            minpts = h->min_samples ? h->min_samples : h->min_cluster_size;
            if (v && (rc = cmd_parse_size(v, "hdbscan compare dbscan: minpts", &minpts)))
                break;
            if (minpts < 1 || minpts > n) {
                rc = err_set(TCJ_EINVAL, "hdbscan compare dbscan: minpts must be 1 to n = %zu", n);
                break;
            }
            lab[1] = mem_alloc("hdbscan", "the labels", n, sizeof *lab[1], 0);
            if (!lab[1]) {
                rc = TCJ_ENOMEM;
                break;
            }
            dbscan_spec ds = {.ds = &s->ds,
                              .eps = s->eps,
                              .minpts = minpts,
                              .opts = &s->eopt,
                              .labels = lab[1],
                              .cancel = &s->cancel};
            dbscan_result *dr = xmalloc(sizeof *dr);
            rc = dbscan_run(e[1], &ds, dr);
            clusters[1] = dr->clusters;
            noise[1] = dr->noise;
            free(dr);
            break;
        }
        hdbscan_result *r = xmalloc(sizeof *r);
        if ((rc = hdbscan_run(e[k], h, r)) == 0) {
            lab[k] = r->tree.labels;
            r->tree.labels = NULL; /* kept: the result freed */
            clusters[k] = r->tree.nclusters;
            noise[k] = r->noise;
            hdbscan_result_free(r);
        }
        free(r);
    }
    if (rc == 0) {
        dbscan_cmp c;
        dbscan_compare(lab[0], NULL, lab[1], NULL, n, &c);
        char b[64];
        if (with_dbscan)
            snprintf(b, sizeof b, "dbscan at eps %g, minpts %zu", s->eps, minpts);
        else
            snprintf(b, sizeof b, "hdbscan on %s", e[1]->name);
        out_printf("hdbscan compare on %s (n=%zu d=%zu): A hdbscan on %s (min_cluster_size "
                   "%zu), B %s\n",
                   s->ds.name, n, s->ds.d, e[0]->name, h->min_cluster_size, b);
        out_printf("  clusters A %zu, B %zu; noise A %zu, B %zu\n", clusters[0], clusters[1],
                   noise[0], noise[1]);
        out_printf("  adjusted Rand index %.6f (noise points as singletons); %zu labels change "
                   "after matching clusters; noise gained %zu, lost %zu (B against A)\n",
                   c.ari, c.changed, c.noise_gained, c.noise_lost);
        hd_cmp_view cv = {s, e, h, with_dbscan, minpts, clusters, noise, &c};
        const int64_t id = runner_record_store(s, "hdbscan_compare", hd_cmp_members, &cv);
        if (id > 0)
            out_printf("  stored as hdbscan_compare %lld\n", (long long)id);
        runner_record_emit("hdbscan_compare", id, hd_cmp_members, &cv);
    }
    free(lab[0]);
    free(lab[1]);
    return rc == TCJ_ECANCEL ? err_cancelled("hdbscan compare") : rc;
}

static int hdbscan_cmd(session *s, int argc, char **argv)
{
    const int force = cmd_take_flag(&argc, argv, "force");
    runner_progress pg = {.s = s, .what = "hdbscan"};
    hdbscan_spec h = {.ds = &s->ds,
                      .allow_single = cmd_take_flag(&argc, argv, "single"),
                      .opts = &s->eopt,
                      .cancel = &s->cancel,
                      .progress = runner_on_progress,
                      .progress_ctx = &pg};
    const engine *e;
    hd_files f;
    int rc;
    char *pos[4];
    const int np = cmd_positional(argc, argv, pos, 4);
    if (np > 0) {
        if (strcmp(pos[0], "compare") != 0)
            return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("hdbscan")->usage);
        return (rc = hd_parse(s, argc, argv, &h)) ? rc : hd_compare(s, argc, argv, pos, np, &h);
    }
    if ((rc = hd_parse(s, argc, argv, &h)) ||
        (rc = hd_engine(s, cmd_opt(argc, argv, "engine"), &e)) ||
        (rc = hd_open(s, argc, argv, force, &f)))
        return rc;
    hdbscan_result *r = xmalloc(sizeof *r);
    if ((rc = hdbscan_run(e, &h, r))) {
        hd_abort(&f);
        free(r);
        return rc == TCJ_ECANCEL ? err_cancelled("hdbscan %s", e->name) : rc;
    }
    if ((rc = hd_write(&f, &r->tree)) == 0) {
        size_t top[HDBSCAN_TOP];
        const size_t ntop = hd_top(&r->tree, top);
        hd_view v = {s, e, &h, r, top, ntop, &f};
        const int64_t id = runner_record_store(s, "hdbscan", hd_members, &v);
        hd_print(s, e, &h, r, top, ntop, id);
        runner_record_emit("hdbscan", id, hd_members, &v);
        session_put(s, "labels", r->tree.labels, SESSION_I32, s->ds.n);
        session_put(s, "probabilities", r->tree.prob, SESSION_F64, s->ds.n);
        session_put(s, "outlier_scores", r->tree.score, SESSION_F64, s->ds.n);
    }
    hdbscan_result_free(r);
    free(r);
    if (rc == 0 && s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return rc;
}

static const char *const hdbscan_compare_options[] = {
    "min_cluster_size", "min_samples", "method", "epsilon", "engine", "minpts", NULL,
};
static const char *const hdbscan_run_options[] = {
    "min_cluster_size", "min_samples", "method", "epsilon", "engine", "out", "probs",
    "scores",           NULL,
};

static const char *const hdbscan_options[] = {
    "min_cluster_size", "min_samples", "method", "epsilon", "engine", "out", "probs",
    "scores",           "minpts",      NULL,
};
static const char *const hdbscan_stored[] = {"hdbscan", "hdbscan_compare", NULL};
static const cmd_form hdbscan_forms[] = {
    {"compare", hdbscan_compare_options},
    {NULL, hdbscan_run_options},
};

const cmd cmd_hdbscan = {
    .name = "hdbscan",
    .usage = "hdbscan [compare A B|compare dbscan] [min_cluster_size=M] [min_samples=K] "
             "[method=eom|leaf] [epsilon=E] [single] [engine=NAME] [out=FILE] [probs=FILE] "
             "[scores=FILE] [minpts=M] [force]",
    .summary = "HDBSCAN* clusters of varying density, no eps needed (exact, any engine)",
    .help = "HDBSCAN* with scikit-learn's definitions (its HDBSCAN, so labels compare): the\n"
            "core distance of a point is the distance to its K-th nearest point, itself\n"
            "included; the minimum spanning tree of the mutual-reachability distances\n"
            "max(core a, core b, d(a, b)) over all points gives the single-linkage\n"
            "hierarchy, condensed with M (groups under M points fall out as noise), and\n"
            "the clusters are chosen by excess of mass (eom) or as its leaves (leaf).\n"
            "The tree: on cpu and cpu-exact at d <= 32 a k-d tree gives the core distances\n"
            "and each point's K nearest, and Boruvka rounds over it on the host's cores\n"
            "join the points, most of the first rounds' edges read from the nearest.\n"
            "Otherwise the engine's k-distance gives the core distances, DBSCAN's curve's\n"
            "forest (dbscan curve) the tree's edges up to the 97th-percentile core\n"
            "distance or the eps of selectivity 256 (8192 on a GPU), the smaller, and\n"
            "Boruvka rounds (on the device for exact, else on the host's cores over a\n"
            "k-d tree, FP64) the rest. Ties of equal weights are broken by the edges'\n"
            "ends.\n"
            "Prints clusters, noise, the largest clusters with their stability and the\n"
            "distance at which each appears, time by step and red flags.\n"
            "  min_cluster_size=M  the smallest cluster (default 5, at least 2)\n"
            "  min_samples=K       points, itself included, for the core distance\n"
            "                      (default M, at most 257)\n"
            "  method=eom|leaf     excess of mass (default) or the condensed tree's leaves\n"
            "  epsilon=E           clusters split below distance E are merged\n"
            "                      (scikit-learn's cluster_selection_epsilon)\n"
            "  single              the root may be the one cluster (allow_single_cluster)\n"
            "  engine=NAME         whose distances (default: the ground truth, exact on a\n"
            "                      GPU, cpu otherwise); needs a k-distance when K > 1 (cpu\n"
            "                      and cpu-exact at d <= 32: the k-d tree's)\n"
            "  out=FILE            labels, int32 (-1 noise): .npy, .csv, else raw\n"
            "  probs=FILE          membership strengths, float64 in [0, 1]: likewise\n"
            "  scores=FILE         GLOSH outlier scores, float64 in [0, 1]: likewise\n"
            "  force               replace existing files\n"
            "hdbscan compare A B: HDBSCAN* on engines A and B; hdbscan compare dbscan\n"
            "[minpts=M]: HDBSCAN* against DBSCAN at the current eps on the same engine\n"
            "(minpts default: min_samples): the adjusted Rand index (noise points as\n"
            "singletons), the points whose label changes after matching clusters, noise\n"
            "gained and lost; record type hdbscan_compare.",
    .min_args = 0,
    .max_args = 12,
    .options = hdbscan_options,
    .forms = hdbscan_forms,
    .run = hdbscan_cmd,
    .stored = hdbscan_stored,
};
