/* The teaching ladder part of the view model: the "ladder" record (src/
 * ladder.c's ladder_json) into one bar per rung. The ladder panel takes
 * the precision lab's place while the ladder is the newer result (a lab
 * record clears it): both answer "what does each kernel or format cost". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_mini.h"
#include "layout.h"
#include "view.h"

int ui_view_take_ladder(ui_view *v, const json *r)
{
    double id = json_num(r, "ladder_id");
    v->ladder_id = isnan(id) ? 0 : (int64_t)id;
    snprintf(v->ladder_device, sizeof v->ladder_device, "%s", json_str(r, "device", ""));
    v->ladder_n = json_num(r, "n");
    v->ladder_d = json_num(r, "d");
    v->nladder = 0;
    const json *rungs = json_get(r, "rungs");
    for (size_t k = 0; rungs && k < json_len(rungs) && v->nladder < UI_MAX_LADDER; k++) {
        const json *g = json_at(rungs, k);
        struct ui_ladder_bar *b = &v->ladder[v->nladder++];
        b->rung = (int)json_num(g, "rung");
        snprintf(b->name, sizeof b->name, "%s", json_str(g, "name", "?"));
        snprintf(b->status, sizeof b->status, "%s", json_str(g, "status", "?"));
        snprintf(b->blas, sizeof b->blas, "%s", json_str(g, "cublas_dtype", ""));
        b->pct = json_num(g, "pct_cublas");
        b->tflops = json_num(g, "tflops");
    }
    v->ladder_newer = 1;
    return UI_LAB;
}
