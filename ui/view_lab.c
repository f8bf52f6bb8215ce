/* The precision lab part of the view model: "lab_format" records (one per
 * format, src/lab_out.c) into the points the lab panel plots, and the
 * "lab" record that closes them (dataset, eps, reference, the choice). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_mini.h"
#include "layout.h"
#include "view.h"

int ui_view_take_lab(ui_view *v, const json *r, int summary)
{
    double id = json_num(r, "lab_id");
    int64_t lab = isnan(id) ? 0 : (int64_t)id;
    /* Points of another lab (or of the same lab shown again) start anew. */
    if (!summary && (v->lab_done || lab != v->lab_id)) {
        v->nlab = 0;
        v->lab_done = 0;
    }
    v->lab_id = lab;
    if (summary) {
        v->lab_done = 1;
        snprintf(v->lab_dataset, sizeof v->lab_dataset, "%s", json_str(r, "dataset", ""));
        snprintf(v->lab_ref, sizeof v->lab_ref, "%s", json_str(r, "ref_engine", ""));
        snprintf(v->lab_chosen, sizeof v->lab_chosen, "%s", json_str(r, "chosen", ""));
        snprintf(v->lab_closest, sizeof v->lab_closest, "%s", json_str(r, "closest", ""));
        v->lab_eps = json_num(r, "eps");
        v->lab_min_overlap = json_num(r, "min_overlap");
        return UI_LAB;
    }
    if (v->nlab >= UI_MAX_LAB)
        return UI_LAB;
    struct ui_lab_point *p = &v->lab[v->nlab++];
    snprintf(p->format, sizeof p->format, "%s", json_str(r, "format", "?"));
    snprintf(p->engine, sizeof p->engine, "%s", json_str(r, "engine", "?"));
    snprintf(p->status, sizeof p->status, "%s", json_str(r, "status", "?"));
    p->kernel_s = json_num(r, "kernel_s");
    p->overlap = json_num(r, "overlap");
    return UI_LAB;
}
