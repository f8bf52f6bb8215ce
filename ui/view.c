/* The view model fed from records and log text; see view.h. Field names
 * follow the records the commands emit (src/cli/runner.c and the cmd_*.c);
 * a few alternatives are accepted where commands differ in shape. */
#include "view.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json_mini.h"
#include "layout.h"

void ui_view_init(ui_view *v)
{
    memset(v, 0, sizeof *v);
    v->n = v->d = NAN;
}

void ui_view_free(ui_view *v)
{
    for (int k = 0; k < UI_LOG_LINES; k++)
        free(v->log[k]);
    memset(v, 0, sizeof *v);
}

static void copy(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

double ui_metric_get(const ui_metric *m, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (strcmp(m[k].name, name) == 0)
            return m[k].value;
    return NAN;
}

/* First number among alternative keys. */
static double num_any(const json *o, const char *k1, const char *k2)
{
    double x = json_num(o, k1);
    return isnan(x) && k2 ? json_num(o, k2) : x;
}

static int is_counter(const char *name)
{
    /* NVML summaries go to the clocks panel, the rest is looked at as a
     * possible counter. */
    return !(strncmp(name, "sm_clock_mhz", 12) == 0 || strncmp(name, "power_w", 7) == 0 ||
             strncmp(name, "temp_c", 6) == 0 || strncmp(name, "throttle", 8) == 0 ||
             strncmp(name, "mem_clock_mhz", 13) == 0 || strncmp(name, "nvml", 4) == 0);
}

static int take_metrics(ui_view *v, const json *rec, const char *engine, int64_t run_id)
{
    const json *m = json_get(rec, "counters");
    if (!m)
        m = json_get(rec, "metrics"); /* before docs/JSON.md's one name */
    if (!m || m->type != JSON_OBJ)
        return -1;
    int nclk = 0, ncnt = 0;
    ui_metric clk[16], cnt[UI_MAX_COUNTERS];
    for (const json *c = m->child; c; c = c->next) {
        if (!c->key)
            continue;
        double val = c->type == JSON_NUM ? c->num : NAN;
        if (!is_counter(c->key)) {
            if (nclk < 16) {
                copy(clk[nclk].name, sizeof clk[nclk].name, c->key);
                clk[nclk++].value = val;
            }
        } else if (strstr(c->key, "__") && ncnt < UI_MAX_COUNTERS) {
            /* Hardware counters carry ncu's unit__counter names; other
             * engine metrics (threads, ...) are not counters. */
            copy(cnt[ncnt].name, sizeof cnt[ncnt].name, c->key);
            cnt[ncnt++].value = val;
        }
    }
    int got = -1;
    if (nclk) {
        memcpy(v->clk, clk, sizeof clk[0] * (size_t)nclk);
        v->nclk = nclk;
        copy(v->clk_engine, sizeof v->clk_engine, engine);
        v->clk_run = run_id;
        got = UI_CLOCKS;
    }
    if (ncnt) {
        memcpy(v->cnt, cnt, sizeof cnt[0] * (size_t)ncnt);
        v->ncnt = ncnt;
        copy(v->cnt_engine, sizeof v->cnt_engine, engine);
        v->cnt_run = run_id;
        v->cnt_note[0] = '\0';
        got = UI_COUNTERS;
    }
    return got;
}

void ui_view_add_run(ui_view *v, const ui_run_row *row)
{
    int k = v->nruns;
    while (k > 0 && v->runs[k - 1].id > row->id)
        k--;
    if (k > 0 && v->runs[k - 1].id == row->id && row->id != 0) {
        ui_run_row *o = &v->runs[k - 1];
        double tf = o->tflops;
        *o = *row;
        if (isnan(o->tflops))
            o->tflops = tf;
        v->version++;
        return;
    }
    if (v->nruns == UI_MAX_RUNS) {
        if (k == 0)
            return; /* older than everything kept */
        memmove(v->runs, v->runs + 1, sizeof v->runs[0] * (UI_MAX_RUNS - 1));
        v->nruns--;
        k--;
    }
    memmove(v->runs + k + 1, v->runs + k, sizeof v->runs[0] * (size_t)(v->nruns - k));
    v->runs[k] = *row;
    v->nruns++;
    v->version++;
}

static int take_run(ui_view *v, const json *r)
{
    ui_run_row row;
    memset(&row, 0, sizeof row);
    row.id = (int64_t)json_num(r, "run_id");
    copy(row.engine, sizeof row.engine, json_str(r, "engine", "?"));
    copy(row.dataset, sizeof row.dataset, json_str(r, "dataset", ""));
    row.eps = json_num(r, "eps");
    row.sel = json_num(r, "selectivity");
    row.time_s = json_num(r, "time_s");
    row.tflops = json_num(r, "tflops");
    double p = json_num(r, "pairs");
    row.pairs = isnan(p) ? 0 : (uint64_t)p;
    row.failed = json_get(r, "error") != NULL && json_get(r, "error")->type == JSON_STR;
    ui_view_add_run(v, &row);
    int got = take_metrics(v, r, row.engine, row.id);
    return got >= 0 ? got : UI_RUNS;
}

static void take_bins(ui_view *v, const json *r)
{
    const json *h = json_get(r, "hist");
    if (!h)
        h = json_get(r, "histogram");
    if (!h)
        h = json_get(r, "bins");
    v->nbins = 0;
    if (h && h->type == JSON_ARR) {
        for (size_t k = 0; k < json_len(h) && v->nbins < UI_MAX_BINS; k++) {
            const json *b = json_at(h, k);
            v->bin_lo[v->nbins] = json_num(b, "lo");
            v->bin_hi[v->nbins] = json_num(b, "hi");
            v->bin_count[v->nbins] = num_any(b, "count", "n");
            v->nbins++;
        }
        return;
    }
    const json *lo = json_get(h ? h : r, h ? "lo" : "bin_lo");
    const json *hi = json_get(h ? h : r, h ? "hi" : "bin_hi");
    const json *ct = json_get(h ? h : r, h ? "count" : "bin_count");
    size_t n = json_len(ct);
    for (size_t k = 0; k < n && k < UI_MAX_BINS; k++) {
        const json *a = json_at(lo, k), *b = json_at(hi, k), *c = json_at(ct, k);
        v->bin_lo[k] = a ? a->num : NAN;
        v->bin_hi[k] = b ? b->num : NAN;
        v->bin_count[k] = c ? c->num : 0;
        v->nbins = k + 1;
    }
}

static int take_compare(ui_view *v, const json *r)
{
    v->have_cmp = 1;
    const json *a = json_get(r, "a"), *b = json_get(r, "b");
    copy(v->cmp_a, sizeof v->cmp_a,
         json_str(r, "engine_a", json_str(a, "engine", json_str(r, "a", "A"))));
    copy(v->cmp_b, sizeof v->cmp_b,
         json_str(r, "engine_b", json_str(b, "engine", json_str(r, "b", "B"))));
    /* docs/JSON.md: each side's accuracy against the reference is nested
     * in the side; older flat records carry A's at the top. */
    const json *acc = json_get(a, "accuracy");
    if (!acc || acc->type != JSON_OBJ)
        acc = r;
    const json *bacc = json_get(b, "accuracy");
    if (!bacc || bacc->type != JSON_OBJ)
        bacc = json_get(r, "b_accuracy");
    v->cmp_eps = json_num(r, "eps");
    v->overlap = json_num(acc, "overlap");
    copy(v->cmp_dataset, sizeof v->cmp_dataset, json_str(r, "dataset", v->ds_name));
    v->err_mean = json_num(acc, "err_mean");
    v->err_std = json_num(acc, "err_std");
    v->err_min = json_num(acc, "err_min");
    v->err_max = json_num(acc, "err_max");
    v->only_a = acc == r ? json_num(r, "only_a") : json_num(acc, "only_engine");
    v->only_b = acc == r ? json_num(r, "only_b") : json_num(acc, "only_ref");
    v->both = json_num(acc, "both");
    v->time_a = a ? json_num(a, "time_s") : json_num(r, "time_a");
    v->time_b = b ? json_num(b, "time_s") : json_num(r, "time_b");
    const json *ref = json_get(r, "ref");
    copy(v->cmp_ref, sizeof v->cmp_ref,
         ref && ref->type == JSON_OBJ ? json_str(ref, "engine", v->cmp_b)
                                      : json_str(r, "ref", v->cmp_b));
    v->b_overlap = bacc ? json_num(bacc, "overlap") : NAN;
    v->b_only_engine = bacc ? json_num(bacc, "only_engine") : NAN;
    v->b_only_ref = bacc ? json_num(bacc, "only_ref") : NAN;
    take_bins(v, acc);
    return UI_COMPARE;
}

static void curve_point(ui_view *v, double eps, double sel)
{
    if (v->ncurve < UI_MAX_CURVE && !isnan(eps) && !isnan(sel)) {
        v->curve_eps[v->ncurve] = eps;
        v->curve_sel[v->ncurve] = sel;
        v->ncurve++;
    }
}

static int take_curve(ui_view *v, const json *r)
{
    v->ncurve = 0;
    copy(v->curve_dataset, sizeof v->curve_dataset, json_str(r, "dataset", v->ds_name));
    const json *pts = json_get(r, "points");
    if (pts) {
        for (size_t k = 0; k < json_len(pts); k++) {
            const json *p = json_at(pts, k);
            curve_point(v, json_num(p, "eps"), num_any(p, "selectivity", "s"));
        }
    } else {
        const json *e = json_get(r, "eps"), *s = json_get(r, "selectivity");
        for (size_t k = 0; k < json_len(e) && k < json_len(s); k++)
            curve_point(v, json_at(e, k)->num, json_at(s, k)->num);
    }
    /* The curve is plotted against ascending eps. */
    for (size_t i = 1; i < v->ncurve; i++)
        for (size_t j = i; j > 0 && v->curve_eps[j - 1] > v->curve_eps[j]; j--) {
            double t = v->curve_eps[j];
            v->curve_eps[j] = v->curve_eps[j - 1], v->curve_eps[j - 1] = t;
            t = v->curve_sel[j];
            v->curve_sel[j] = v->curve_sel[j - 1], v->curve_sel[j - 1] = t;
        }
    return UI_CURVE;
}

static void sweep_one(ui_view *v, const json *r)
{
    if (v->nsweep >= 32)
        memmove(v->sweep_target, v->sweep_target + 1, 31 * sizeof(double)),
            memmove(v->sweep_eps, v->sweep_eps + 1, 31 * sizeof(double)),
            memmove(v->sweep_sel, v->sweep_sel + 1, 31 * sizeof(double)), v->nsweep = 31;
    v->sweep_target[v->nsweep] = json_num(r, "target");
    v->sweep_eps[v->nsweep] = json_num(r, "eps");
    v->sweep_sel[v->nsweep] = num_any(r, "selectivity", "reached");
    v->nsweep++;
}

static int take_sweep(ui_view *v, const json *r)
{
    const char *ds = json_str(r, "dataset", v->ds_name);
    if (strcmp(ds, v->curve_dataset) != 0) {
        /* marks from another dataset would sit on the wrong curve */
        v->ncurve = v->nsweep = 0;
        copy(v->curve_dataset, sizeof v->curve_dataset, ds);
    }
    const json *res = json_get(r, "results");
    if (res && res->type == JSON_ARR)
        for (size_t k = 0; k < json_len(res); k++)
            sweep_one(v, json_at(res, k));
    else
        sweep_one(v, r);
    return UI_CURVE;
}

static int take_profile(ui_view *v, const json *r)
{
    const char *eng = json_str(r, "engine", "?");
    int64_t id = (int64_t)json_num(r, "run_id");
    int got = take_metrics(v, r, eng, id);
    const json *c = json_get(r, "counters");
    if (c && c->type == JSON_OBJ) {
        v->ncnt = 0;
        for (const json *m = c->child; m && v->ncnt < UI_MAX_COUNTERS; m = m->next) {
            copy(v->cnt[v->ncnt].name, sizeof v->cnt[0].name, m->key);
            v->cnt[v->ncnt++].value = m->type == JSON_NUM ? m->num : NAN;
        }
    } else if (got != UI_COUNTERS) {
        v->ncnt = 0;
    }
    copy(v->cnt_engine, sizeof v->cnt_engine, eng);
    v->cnt_run = id;
    copy(v->cnt_note, sizeof v->cnt_note, json_str(r, "reason", ""));
    return UI_COUNTERS;
}

/* The panels that show results for one dataset start empty again. */
static void view_clear_results(ui_view *v)
{
    v->have_cmp = 0;
    v->nbins = 0;
    v->cmp_dataset[0] = '\0';
    v->ncurve = v->nsweep = v->nkdist = v->nlab = 0;
    v->nladder = v->ladder_newer = 0;
    v->nclu = 0;
    v->clu_newer = v->clu_have_run = v->clu_ntop = 0;
    v->hd_show = v->hd_nodes = 0;
    v->clu_dataset[0] = '\0';
    v->curve_dataset[0] = v->kdist_dataset[0] = v->lab_dataset[0] = '\0';
    v->ncnt = 0;
    v->cnt_engine[0] = v->cnt_note[0] = '\0';
    v->cnt_run = 0;
}

int ui_view_no_error(const ui_view *v)
{
    return v->have_cmp && v->err_min == 0 && v->err_max == 0;
}

int ui_view_record(ui_view *v, const char *text)
{
    json *r = json_parse(text);
    if (!r)
        return -1;
    const char *type = json_str(r, "type", "");
    int got = -1;
    if (strcmp(type, "dataset") == 0 || strcmp(type, "info") == 0) {
        int info = type[0] == 'i';
        const char *name = json_str(r, "dataset", json_str(r, "name", ""));
        const char *hash = json_str(r, "dataset_hash", json_str(r, "hash", ""));
        if (!info) {
            v->have_info = 0;
            v->vmin = v->vmax = v->absmax = v->fp16_over = v->fp16_under = v->dups = NAN;
            /* Another dataset: results shown for the old one no longer
             * describe what the next command works on. */
            if (strcmp(name, v->ds_name) != 0 || strcmp(hash, v->ds_hash) != 0)
                view_clear_results(v);
            copy(v->ds_hash, sizeof v->ds_hash, hash);
        }
        v->have_ds = 1;
        copy(v->ds_name, sizeof v->ds_name, name);
        copy(v->ds_format, sizeof v->ds_format,
             json_str(r, "dataset_format", json_str(r, "format", "")));
        v->n = json_num(r, "n");
        v->d = json_num(r, "d");
        if (info) {
            v->have_info = 1;
            v->vmin = json_num(r, "min");
            v->vmax = json_num(r, "max");
            v->absmax = json_num(r, "absmax");
            v->fp16_over = json_num(r, "fp16_overflow");
            v->fp16_under = json_num(r, "fp16_underflow");
            v->dups = json_num(r, "duplicates");
        }
        got = UI_DATASET;
    } else if (strcmp(type, "run") == 0) {
        got = take_run(v, r);
    } else if (strcmp(type, "compare") == 0) {
        got = take_compare(v, r);
    } else if (strcmp(type, "curve") == 0) {
        got = take_curve(v, r);
    } else if (strcmp(type, "sweep") == 0) {
        got = take_sweep(v, r);
    } else if (strcmp(type, "profile") == 0) {
        got = take_profile(v, r);
    } else if (strcmp(type, "kdist") == 0) {
        got = ui_view_take_kdist(v, r);
        v->clu_newer = 0;
    } else if (strcmp(type, "dbscan") == 0 || strcmp(type, "dbscan_curve") == 0) {
        got = ui_view_take_clusters(v, r, type[6] == '_');
    } else if (strcmp(type, "hdbscan") == 0) {
        got = ui_view_take_hdbscan(v, r);
    } else if (strcmp(type, "lab_format") == 0 || strcmp(type, "lab") == 0) {
        got = ui_view_take_lab(v, r, type[3] == '\0');
        v->ladder_newer = 0;
    } else if (strcmp(type, "ladder") == 0) {
        got = ui_view_take_ladder(v, r);
    }
    json_free(r);
    if (got >= 0)
        v->version++;
    return got;
}

static void log_push(ui_view *v, const char *s, size_t n, int err)
{
    int k = (v->log_head + v->log_n) % UI_LOG_LINES;
    if (v->log_n == UI_LOG_LINES) {
        k = v->log_head;
        v->log_head = (v->log_head + 1) % UI_LOG_LINES;
    } else {
        v->log_n++;
    }
    free(v->log[k]);
    v->log[k] = xmalloc(n + 1);
    memcpy(v->log[k], s, n);
    v->log[k][n] = '\0';
    v->log_err[k] = err;
}

void ui_view_log(ui_view *v, const char *text, int err)
{
    /* Each call starts a new line when the previous ended with a newline;
     * the writer sends whole lines in practice, so partial lines are
     * simply completed by the next chunk being appended. */
    const char *p = text;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        int k = (v->log_head + v->log_n - 1) % UI_LOG_LINES;
        size_t old;
        if (v->log_n && v->log[k] && (old = strlen(v->log[k])) && v->log[k][old - 1] == '\x01') {
            /* continue an open line (marked by a trailing \x01) */
            v->log[k] = xrealloc(v->log[k], old + n + 1);
            memcpy(v->log[k] + old - 1, p, n);
            v->log[k][old - 1 + n] = '\0';
        } else {
            log_push(v, p, n, err);
        }
        if (!nl) {
            size_t cur = strlen(v->log[(v->log_head + v->log_n - 1) % UI_LOG_LINES]);
            char **line = &v->log[(v->log_head + v->log_n - 1) % UI_LOG_LINES];
            *line = xrealloc(*line, cur + 2);
            (*line)[cur] = '\x01';
            (*line)[cur + 1] = '\0';
            break;
        }
        p = nl + 1;
    }
    v->version++;
}

const char *ui_view_log_line(const ui_view *v, int k, int *err)
{
    int i = (v->log_head + k) % UI_LOG_LINES;
    if (err)
        *err = v->log_err[i];
    return v->log[i] ? v->log[i] : "";
}
