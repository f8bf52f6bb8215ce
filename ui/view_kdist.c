/* The k-distance part of the view model: a "kdist" record (src/cli/cmd_kdist.c)
 * into the curve and knee the k-distance panel draws. */
#include <math.h>
#include <stdio.h>

#include "json_mini.h"
#include "layout.h"
#include "view.h"

int ui_view_take_kdist(ui_view *v, const json *r)
{
    const json *pts = json_get(r, "points");
    const json *rk = pts ? json_get(pts, "rank") : NULL, *ds = pts ? json_get(pts, "dist") : NULL;
    size_t m = rk && ds ? json_len(rk) : 0;
    if (ds && json_len(ds) < m)
        m = json_len(ds);
    /* Up to 1024 points arrive; keep an even subset that fits, both ends
     * included. */
    size_t keep = m < UI_MAX_CURVE ? m : UI_MAX_CURVE;
    v->nkdist = 0;
    for (size_t j = 0; j < keep; j++) {
        size_t i = keep > 1 ? (j * (m - 1) + (keep - 1) / 2) / (keep - 1) : 0;
        double x = json_at(rk, i)->num, y = json_at(ds, i)->num;
        if (isnan(x) || isnan(y))
            continue;
        v->kdist_rank[v->nkdist] = x;
        v->kdist_dist[v->nkdist] = y;
        v->nkdist++;
    }
    v->kdist_k = (int)json_num(r, "k");
    v->kdist_n = json_num(r, "n");
    v->kdist_knee_rank = json_num(r, "knee_rank");
    v->kdist_knee_dist = json_num(r, "knee_dist");
    v->kdist_eps = json_num(r, "eps");
    v->kdist_have_knee = !isnan(v->kdist_knee_dist);
    snprintf(v->kdist_engine, sizeof v->kdist_engine, "%s", json_str(r, "engine", "?"));
    snprintf(v->kdist_dataset, sizeof v->kdist_dataset, "%s", json_str(r, "dataset", ""));
    return UI_KDIST;
}
