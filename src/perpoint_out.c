#include "perpoint_out.h"

#include <stdio.h>

#include "out.h"

void perpoint_json(json_w *w, const perpoint_summary *p)
{
    json_w_obj(w, "perpoint");
    json_w_uint(w, "min", p->min);
    json_w_uint(w, "p10", p->p10);
    json_w_uint(w, "median", p->median);
    json_w_uint(w, "p90", p->p90);
    json_w_uint(w, "max", p->max);
    json_w_dbl(w, "mean", p->mean);
    if (p->minpts) {
        json_w_uint(w, "minpts", p->minpts);
        json_w_uint(w, "core", p->core);
        json_w_uint(w, "noise", p->noise);
    }
    /* "histogram", as the bins of compare's accuracy: one name for a list
     * of {lo, hi, count}. */
    json_w_arr(w, "histogram");
    for (int b = 0; b < p->nbins; b++) {
        json_w_obj(w, NULL);
        json_w_uint(w, "lo", p->bin[b].lo);
        json_w_uint(w, "hi", p->bin[b].hi);
        json_w_uint(w, "count", p->bin[b].count);
        json_w_close(w);
    }
    json_w_close(w);
    json_w_close(w);
}

void perpoint_print(const perpoint_summary *p)
{
    out_printf("  neighbours per point (self excluded; mean %.4f = S): min %llu, p10 %llu, "
               "median %llu, p90 %llu, max %llu\n",
               p->mean, (unsigned long long)p->min, (unsigned long long)p->p10,
               (unsigned long long)p->median, (unsigned long long)p->p90,
               (unsigned long long)p->max);
    uint64_t top = 1;
    for (int b = 0; b < p->nbins; b++)
        top = p->bin[b].count > top ? p->bin[b].count : top;
    out_printf("  %23s  %10s\n", "neighbours", "points");
    for (int b = 0; b < p->nbins; b++) {
        char range[48];
        if (p->bin[b].lo == p->bin[b].hi)
            snprintf(range, sizeof range, "%llu", (unsigned long long)p->bin[b].lo);
        else
            snprintf(range, sizeof range, "%llu-%llu", (unsigned long long)p->bin[b].lo,
                     (unsigned long long)p->bin[b].hi);
        int w = (int)((40 * p->bin[b].count + top - 1) / top);
        out_printf("  %23s  %10llu %.*s\n", range, (unsigned long long)p->bin[b].count, w,
                   "########################################");
    }
    if (p->minpts) {
        double n = (double)p->npoints;
        out_printf("  minpts %llu (self included, as DBSCAN counts): %llu core points (%.1f%%), "
                   "%llu noise candidates (%.1f%%: noise or border points)\n",
                   (unsigned long long)p->minpts, (unsigned long long)p->core,
                   100.0 * (double)p->core / n, (unsigned long long)p->noise,
                   100.0 * (double)p->noise / n);
    }
}
