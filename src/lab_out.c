#include "lab_out.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "out.h"

/* Appends one cell; strings that must outlive the call are copied to buf. */
typedef struct cell_list {
    lab_cell *c;
    size_t n, max;
    char *buf;
    size_t size, used;
} cell_list;

static lab_cell *cell_add(cell_list *l, const char *name, char type)
{
    static lab_cell spare;
    lab_cell *c = l->n < l->max ? &l->c[l->n++] : &spare;
    memset(c, 0, sizeof *c);
    c->name = name;
    c->type = type;
    return c;
}

static void cell_str(cell_list *l, const char *name, const char *s)
{
    cell_add(l, name, 's')->s = s;
}

static void cell_int(cell_list *l, const char *name, int64_t v)
{
    cell_add(l, name, 'i')->i = v;
}

/* An id: null when there is none (not made, or not stored). */
static void cell_id(cell_list *l, const char *name, int64_t v)
{
    if (v > 0)
        cell_int(l, name, v);
    else
        cell_add(l, name, 'z');
}

static void cell_num(cell_list *l, const char *name, double v)
{
    cell_add(l, name, 'n')->d = v;
}

/* A copy of text in the caller's buffer (NULL when it does not fit). */
static const char *cell_keep(cell_list *l, const char *text)
{
    size_t n = strlen(text) + 1;
    if (l->used + n > l->size)
        return NULL;
    char *p = l->buf + l->used;
    memcpy(p, text, n);
    l->used += n;
    return p;
}

void lab_sentence(const lab_result *r, char *buf, size_t size)
{
    char mo[40];
    out_fmt_double(mo, sizeof mo, r->min_overlap);
    if (r->chosen >= 0) {
        const lab_row *w = &r->row[r->chosen];
        char speed[64] = "";
        if (r->baseline_row >= 0 && r->baseline_row != r->chosen && isfinite(w->speedup))
            snprintf(speed, sizeof speed, ", %.2fx %s's speed", w->speedup, r->baseline);
        snprintf(buf, size, "The fastest format with overlap >= %s is %s (%s): kernel %.4f s%s.",
                 mo, w->format, w->engine, w->kernel_s, speed);
    } else if (r->closest >= 0) {
        const lab_row *w = &r->row[r->closest];
        snprintf(buf, size, "No format reaches overlap >= %s; the closest is %s (%s) at %.6f.", mo,
                 w->format, w->engine, w->side.overlap);
    } else {
        snprintf(buf, size, "No format ran, so none reaches overlap >= %s.", mo);
    }
}

size_t lab_cells(const lab_result *r, int row, lab_cell *out, char *buf, size_t size)
{
    cell_list l = {.c = out, .max = LAB_MAX_CELLS, .buf = buf, .size = size};
    if (row < 0) {
        char text[512];
        cell_id(&l, "lab_id", r->lab_id);
        cell_str(&l, "dataset", r->dataset);
        cell_int(&l, "n", (int64_t)r->n);
        cell_int(&l, "d", (int64_t)r->d);
        cell_num(&l, "eps", r->eps);
        cell_str(&l, "ref_engine", r->ref_engine);
        cell_id(&l, "run_ref", r->ref_run_id);
        cell_int(&l, "ref_pairs", (int64_t)r->ref_pairs);
        cell_num(&l, "min_overlap", r->min_overlap);
        cell_str(&l, "baseline", r->baseline[0] ? r->baseline : NULL);
        cell_str(&l, "chosen", r->chosen >= 0 ? r->row[r->chosen].format : NULL);
        cell_str(&l, "chosen_engine", r->chosen >= 0 ? r->row[r->chosen].engine : NULL);
        cell_str(&l, "closest",
                 r->chosen < 0 && r->closest >= 0 ? r->row[r->closest].format : NULL);
        cell_str(&l, "runner_up",
                 r->repeats > 0 && r->runner_up >= 0 ? r->row[r->runner_up].format : NULL);
        cell_int(&l, "timing_repeats", r->repeats);
        if (r->repeats > 0 && r->runner_up >= 0)
            cell_int(&l, "within_noise", r->within_noise);
        else
            cell_add(&l, "within_noise", 'z');
        lab_sentence(r, text, sizeof text);
        cell_str(&l, "message", cell_keep(&l, text));
        return l.n;
    }
    const lab_row *w = &r->row[row];
    int ok = w->status == LAB_OK;
    char tr[128];
    lab_transforms(w, tr, sizeof tr);
    cell_str(&l, "format", w->format);
    cell_int(&l, "bits", w->bits);
    cell_str(&l, "engine", w->engine);
    cell_str(&l, "status", lab_status_name(w->status));
    cell_str(&l, "reason", ok ? NULL : w->reason);
    cell_id(&l, "run_id", w->run_id);
    cell_id(&l, "comparison_id", w->comparison_id);
    cell_str(&l, "transforms", strcmp(tr, "-") ? cell_keep(&l, tr) : NULL);
    cell_num(&l, "centred", w->centred);
    cell_num(&l, "scale_log2", w->scale_log2);
    cell_num(&l, "shifted", w->shifted);
    cell_num(&l, "underflow_values", w->underflow_values);
    cell_num(&l, "inexact", w->inexact);
    if (ok)
        cell_int(&l, "pairs", (int64_t)w->pairs);
    else
        cell_add(&l, "pairs", 'z');
    const cmp_side *sd = &w->side;
    cell_num(&l, "overlap", ok ? sd->overlap : NAN);
    if (ok) {
        cell_int(&l, "both", (int64_t)sd->both);
        cell_int(&l, "only_engine", (int64_t)sd->only_engine);
        cell_int(&l, "only_ref", (int64_t)sd->only_ref);
    } else {
        cell_add(&l, "both", 'z');
        cell_add(&l, "only_engine", 'z');
        cell_add(&l, "only_ref", 'z');
    }
    cell_num(&l, "err_mean", ok ? sd->err_mean : NAN);
    cell_num(&l, "err_std", ok ? sd->err_std : NAN);
    cell_num(&l, "err_min", ok ? sd->err_min : NAN);
    cell_num(&l, "err_max", ok ? sd->err_max : NAN);
    cell_num(&l, "err_mean_rel", w->err_mean_rel);
    cell_num(&l, "err_std_rel", w->err_std_rel);
    cell_num(&l, "err_max_rel", w->err_max_rel);
    cell_num(&l, "only_engine_rel_max", ok ? sd->only_engine_rel_max : NAN);
    cell_num(&l, "only_ref_rel_max", ok ? sd->only_ref_rel_max : NAN);
    cell_num(&l, "kernel_s", ok ? w->kernel_s : NAN);
    cell_num(&l, "time_s", ok ? w->seconds : NAN);
    cell_num(&l, "tflops", w->tflops);
    cell_num(&l, "speedup", w->speedup);
    return l.n;
}

void lab_cells_json(json_w *w, const lab_cell *c, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        switch (c[k].type) {
        case 's':
            json_w_str(w, c[k].name, c[k].s);
            break;
        case 'i':
            json_w_int(w, c[k].name, c[k].i);
            break;
        case 'n':
            json_w_dbl(w, c[k].name, c[k].d);
            break;
        default:
            json_w_null(w, c[k].name);
        }
    }
}

void lab_records(const lab_result *r)
{
    lab_cell c[LAB_MAX_CELLS];
    char buf[1024];
    for (int k = 0; k < r->nrow; k++) {
        out_rec *rec = out_rec_begin("lab_format");
        json_w *w = out_rec_json(rec);
        if (r->lab_id > 0)
            json_w_int(w, "lab_id", r->lab_id);
        else
            json_w_null(w, "lab_id");
        lab_cells_json(w, c, lab_cells(r, k, c, buf, sizeof buf));
        out_rec_end(rec);
    }
    out_rec *rec = out_rec_begin("lab");
    lab_cells_json(out_rec_json(rec), c, lab_cells(r, -1, c, buf, sizeof buf));
    out_rec_end(rec);
}

/* A number cell of the table: fmt, or "-" when v is not finite. */
static const char *num(char *b, size_t n, const char *fmt, double v)
{
    if (isfinite(v))
        snprintf(b, n, fmt, v);
    else
        snprintf(b, n, "-");
    return b;
}

static const char *id_cell(char *b, size_t n, int64_t id)
{
    if (id > 0)
        snprintf(b, n, "%lld", (long long)id);
    else
        snprintf(b, n, "-");
    return b;
}

void lab_print(const lab_result *r)
{
    char eps[40], id[32], vs[40];
    out_fmt_double(eps, sizeof eps, r->eps);
    id_cell(id, sizeof id, r->lab_id);
    out_printf("lab %s: %d format%s on %s (n=%zu d=%zu) eps=%s, each judged against %s (run %s: "
               "%llu pairs)\n",
               id, r->nrow, r->nrow == 1 ? "" : "s", r->dataset, r->n, r->d, eps, r->ref_engine,
               id_cell(vs, sizeof vs, r->ref_run_id), (unsigned long long)r->ref_pairs);
    snprintf(vs, sizeof vs, "vs %s", r->baseline[0] ? r->baseline : "-");
    out_printf("  %-9s %4s %-12s %5s %5s %-14s %9s %9s %8s %8s %9s %9s %9s  %-9s %-8s %s\n",
               "format", "bits", "engine", "run", "cmp", "applied", "pairs", "overlap", "only-fmt",
               "only-ref", "err mean", "err std", "err max", "kernel", "TFLOPS", vs);
    for (int k = 0; k < r->nrow; k++) {
        const lab_row *w = &r->row[k];
        char run[24], cmp[24], tr[128];
        out_printf("  %-9s %4d %-12s %5s %5s ", w->format, w->bits, w->engine,
                   id_cell(run, sizeof run, w->run_id), id_cell(cmp, sizeof cmp, w->comparison_id));
        if (w->status != LAB_OK) {
            out_printf("%s: %s\n", lab_status_name(w->status), w->reason);
            continue;
        }
        char a[32], b[32], c[32], t[32], f[32], x[32];
        lab_transforms(w, tr, sizeof tr);
        out_printf(
            "%-14s %9llu %9.6f %8llu %8llu %9s %9s %9s  %-9s %-8s %s\n", tr,
            (unsigned long long)w->pairs, w->side.overlap, (unsigned long long)w->side.only_engine,
            (unsigned long long)w->side.only_ref, num(a, sizeof a, "%.3g", w->err_mean_rel),
            num(b, sizeof b, "%.3g", w->err_std_rel), num(c, sizeof c, "%.3g", w->err_max_rel),
            num(t, sizeof t, "%.4f s", w->kernel_s), num(f, sizeof f, "%.4f", w->tflops),
            num(x, sizeof x, "%.2fx", w->speedup));
    }
    char sentence[512];
    out_printf("  (err: dist_format - dist_%s over the pairs both found, relative to eps; max the "
               "largest |err|. vs %s: its kernel time over the format's)\n",
               r->ref_engine, r->baseline[0] ? r->baseline : "-");
    lab_sentence(r, sentence, sizeof sentence);
    out_printf("  %s\n", sentence);
    if (r->repeats > 0 && r->chosen >= 0 && r->runner_up >= 0) {
        const lab_row *a = &r->row[r->chosen], *b = &r->row[r->runner_up];
        if (r->within_noise)
            out_printf("  timing: %s and %s are within timing noise (%d runs each: %.4f-%.4f s and "
                       "%.4f-%.4f s); %s is named as the earlier in the table, either will do\n",
                       a->format, b->format, r->repeats, r->rep_lo[0], r->rep_hi[0], r->rep_lo[1],
                       r->rep_hi[1], a->format);
        else
            out_printf("  timing: %s is faster than %s in all %d runs each (%.4f-%.4f s against "
                       "%.4f-%.4f s)\n",
                       a->format, b->format, r->repeats, r->rep_lo[0], r->rep_hi[0], r->rep_lo[1],
                       r->rep_hi[1]);
    }
    if (r->seconds > 0)
        out_printf("  (time %.2f s: the reference's run %.2f s, the formats' runs %.2f s, the pair "
                   "pass %.2f s, of which %.2f s in the engines and %.2f s sorting and judging)\n",
                   r->seconds, r->ref_seconds, r->runs_seconds, r->pass_seconds,
                   r->pass_engine_seconds, r->pass_seconds - r->pass_engine_seconds);
}
