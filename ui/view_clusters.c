/* The clusters part of the view model: a "dbscan_curve" record (the
 * clusters for every eps, the eps it was drawn at, the widest plateau), a
 * "dbscan" record (one clustering's counts and largest clusters) and an
 * "hdbscan" record (its condensed tree's first clusters), drawn
 * by ui/panel_clusters.c in the k-distance panel's place: both answer
 * "which eps for DBSCAN", and the newer result is shown. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_mini.h"
#include "layout.h"
#include "view.h"

int ui_view_take_clusters(ui_view *v, const json *r, int curve)
{
    v->hd_show = 0;
    snprintf(v->clu_dataset, sizeof v->clu_dataset, "%s", json_str(r, "dataset", ""));
    snprintf(v->clu_engine, sizeof v->clu_engine, "%s", json_str(r, "engine", "?"));
    v->clu_minpts = json_num(r, "minpts");
    v->clu_n = json_num(r, "n");
    v->clu_newer = 1;
    if (!curve) {
        v->clu_have_run = 1;
        v->clu_eps = json_num(r, "eps");
        v->clu_clusters = json_num(r, "clusters");
        v->clu_core = json_num(r, "core");
        v->clu_border = json_num(r, "border");
        v->clu_noise = json_num(r, "noise");
        const json *lg = json_get(r, "largest");
        size_t m = lg ? json_len(lg) : 0;
        v->clu_ntop = 0;
        for (size_t k = 0; k < m && k < UI_CLU_TOP; k++)
            v->clu_top[v->clu_ntop++] = json_at(lg, k)->num;
        const json *fl = json_get(r, "flags");
        size_t nf = fl ? json_len(fl) : 0, len = 0;
        v->clu_flags[0] = '\0';
        for (size_t k = 0; k < nf && len < sizeof v->clu_flags; k++) {
            const json *f = json_at(fl, k);
            len += (size_t)snprintf(v->clu_flags + len, sizeof v->clu_flags - len, "%s%s",
                                    k ? ", " : "", f && f->str ? f->str : "?");
        }
        /* A clustering at another eps or minPts than the curve's leaves the
         * curve's mark where the curve put it. */
        return UI_KDIST;
    }
    const json *pts = json_get(r, "points");
    size_t m = pts ? json_len(pts) : 0;
    size_t keep = m < UI_MAX_CURVE ? m : UI_MAX_CURVE;
    v->nclu = 0;
    for (size_t j = 0; j < keep; j++) {
        size_t i = keep > 1 ? (j * (m - 1) + (keep - 1) / 2) / (keep - 1) : 0;
        const json *p = json_at(pts, i);
        double x = json_num(p, "eps"), y = json_num(p, "clusters");
        if (isnan(x) || isnan(y))
            continue;
        v->clu_x[v->nclu] = x;
        v->clu_y[v->nclu] = y;
        v->nclu++;
    }
    v->clu_max = json_num(r, "max");
    v->clu_mark_eps = json_num(r, "eps");
    v->clu_mark_n = NAN;
    /* the count at the marked eps: the last point at or below it */
    for (size_t k = 0; k < v->nclu && !isnan(v->clu_mark_eps); k++)
        if (v->clu_x[k] <= v->clu_mark_eps)
            v->clu_mark_n = v->clu_y[k];
    const json *pl = json_get(r, "plateaus");
    const json *w = pl && json_len(pl) ? json_at(pl, 0) : NULL;
    v->clu_plateau_lo = w ? json_num(w, "lo") : NAN;
    v->clu_plateau_hi = w ? json_num(w, "hi") : NAN;
    v->clu_plateau_n = w ? json_num(w, "clusters") : NAN;
    return UI_KDIST;
}

int ui_view_take_hdbscan(ui_view *v, const json *r)
{
    snprintf(v->clu_dataset, sizeof v->clu_dataset, "%s", json_str(r, "dataset", ""));
    snprintf(v->clu_engine, sizeof v->clu_engine, "%s", json_str(r, "engine", "?"));
    v->clu_n = json_num(r, "n");
    v->clu_minpts = json_num(r, "min_samples");
    v->hd_mcs = json_num(r, "min_cluster_size");
    v->hd_clusters = json_num(r, "clusters");
    v->hd_noise = json_num(r, "noise");
    v->clu_newer = 1;
    v->hd_show = 1;
    v->hd_parent[0] = -1;
    v->hd_lambda[0] = 0;
    v->hd_size[0] = v->clu_n;
    const json *rc = json_get(r, "root_chosen");
    v->hd_label[0] = rc && rc->num != 0 ? 0 : -1;
    const json *cn = json_get(r, "condensed");
    const size_t m = cn ? json_len(cn) : 0;
    int k = 1;
    for (size_t j = 0; j < m && k < UI_HD_NODES; j++) {
        const json *e = json_at(cn, j);
        const double p = json_num(e, "parent");
        /* parents first: a node whose parent is not kept ends the tree */
        if (!(p >= 0) || p >= k)
            break;
        v->hd_parent[k] = (int)p;
        v->hd_lambda[k] = json_num(e, "lambda");
        v->hd_size[k] = json_num(e, "size");
        const double l = json_num(e, "label");
        v->hd_label[k] = l >= 0 ? (int)l : -1;
        k++;
    }
    v->hd_nodes = k;
    return UI_KDIST;
}
