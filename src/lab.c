#include "lab.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static const char *const status_names[] = {
    [LAB_OK] = "ok",
    [LAB_REFUSED] = "refused",
    [LAB_UNAVAILABLE] = "unavailable",
    [LAB_FAILED] = "failed",
};

const char *lab_status_name(lab_status st)
{
    return st >= LAB_OK && st <= LAB_FAILED ? status_names[st] : "failed";
}

lab_status lab_status_parse(const char *name)
{
    for (int k = LAB_OK; k <= LAB_FAILED; k++)
        if (name && strcmp(name, status_names[k]) == 0)
            return (lab_status)k;
    return LAB_FAILED;
}

/* The metrics a lab row keeps, by the name engines record them under. */
static const struct {
    const char *name;
    size_t off;
} lab_metrics[] = {
    {"centred", offsetof(lab_row, centred)},
    {"scale_log2", offsetof(lab_row, scale_log2)},
    {"shifted", offsetof(lab_row, shifted)},
    {"underflow_values", offsetof(lab_row, underflow_values)},
    {"inexact", offsetof(lab_row, inexact)},
    {"tflops_paper", offsetof(lab_row, tflops_paper)},
};

void lab_row_set_metric(lab_row *row, const char *name, double value)
{
    for (size_t k = 0; k < sizeof lab_metrics / sizeof lab_metrics[0]; k++)
        if (strcmp(lab_metrics[k].name, name) == 0)
            *(double *)((char *)row + lab_metrics[k].off) = value;
}

void lab_row_metrics(lab_row *row, const join_result *res)
{
    for (int k = 0; k < res->nmetric; k++)
        lab_row_set_metric(row, res->metric[k].name, res->metric[k].value);
}

void lab_row_init(lab_row *row)
{
    memset(row, 0, sizeof *row);
    row->status = LAB_OK;
    row->kernel_s = row->seconds = NAN;
    row->centred = row->scale_log2 = row->shifted = NAN;
    row->underflow_values = row->inexact = row->tflops_paper = NAN;
    row->tflops = row->speedup = NAN;
    row->err_mean_rel = row->err_std_rel = row->err_max_rel = NAN;
}

size_t lab_format_names(const char **names, size_t max)
{
    size_t n = 0;
    for (const engine *const *e = engine_table; *e; e++) {
        if (!(*e)->lab)
            continue;
        int seen = 0;
        for (size_t k = 0; k < n; k++)
            seen |= strcmp(names[k], (*e)->lab) == 0;
        if (!seen && n < max)
            names[n++] = (*e)->lab;
    }
    return n;
}

const char *lab_baseline_format(void)
{
    const engine *best = NULL;
    for (const engine *const *e = engine_table; *e; e++)
        if ((*e)->lab &&
            (!best || (*e)->rank[ENGINE_ROLE_DEFAULT] > best->rank[ENGINE_ROLE_DEFAULT]))
            best = *e;
    return best ? best->lab : NULL;
}

const engine *lab_reference(const engine_opts *o, int cpu_only)
{
    if (!cpu_only)
        return engine_best(ENGINE_ROLE_TRUTH, o);
    const engine *cpu[64];
    size_t n = 0;
    for (const engine *const *e = engine_table; *e && n < 63; e++)
        if (!(*e)->gpu)
            cpu[n++] = *e;
    cpu[n] = NULL;
    return engine_best_of(cpu, ENGINE_ROLE_TRUTH, o);
}

/* The first row of format fmt that is (gpu 1) or is not (gpu 0) a GPU row. */
static const engine *lab_row_of(const char *fmt, int gpu)
{
    for (const engine *const *e = engine_table; *e; e++)
        if ((*e)->lab && strcmp((*e)->lab, fmt) == 0 && !(*e)->gpu == !gpu)
            return *e;
    return NULL;
}

int lab_pick_rows(const engine_opts *o, const char *const *names, size_t nnames, int cpu_only,
                  lab_pick *out, size_t max, size_t *n)
{
    const char *fmts[LAB_MAX_FORMATS];
    size_t nf = lab_format_names(fmts, LAB_MAX_FORMATS);
    *n = 0;
    for (size_t k = 0; k < nnames; k++) {
        int known = 0;
        for (size_t f = 0; f < nf; f++)
            known |= strcmp(names[k], fmts[f]) == 0;
        if (known)
            continue;
        char list[256] = "";
        size_t len = 0;
        for (size_t f = 0; f < nf && len < sizeof list; f++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", f ? " " : "", fmts[f]);
        return err_set(TCJ_EINVAL, "unknown format '%s' (the formats: %s)", names[k], list);
    }
    /* On a GPU machine the lab times the GPU kernels: a format with only
     * a CPU emulation would take minutes where the others take
     * milliseconds, so it runs only when named (or with cpu). */
    int gpu_here = 0;
    for (size_t f = 0; f < nf && !cpu_only; f++) {
        const engine *g = lab_row_of(fmts[f], 1);
        gpu_here |= g && engine_available(g, o) == 0;
    }
    for (size_t f = 0; f < nf && *n < max; f++) {
        int wanted = nnames == 0;
        for (size_t k = 0; k < nnames; k++)
            wanted |= strcmp(names[k], fmts[f]) == 0;
        if (!wanted)
            continue;
        const engine *gpu = lab_row_of(fmts[f], 1), *cpu = lab_row_of(fmts[f], 0);
        lab_pick *p = &out[(*n)++];
        memset(p, 0, sizeof *p);
        if (!cpu_only && gpu && engine_available(gpu, o) == 0) {
            p->e = gpu;
        } else if (cpu && !gpu && gpu_here && nnames == 0) {
            p->e = cpu;
            p->avail_rc =
                err_set(TCJ_ENODEV, "no GPU kernel yet: `precisions %s` runs %s (on the CPU, slow)",
                        fmts[f], cpu->name);
            snprintf(p->why, sizeof p->why, "%s", err_msg());
        } else if (cpu && (p->avail_rc = engine_available(cpu, o)) == 0) {
            p->e = cpu;
        } else if (cpu) {
            p->e = cpu;
            snprintf(p->why, sizeof p->why, "%s", err_msg());
        } else {
            /* Only a GPU row, and it cannot run here (or cpu was asked). */
            p->e = gpu;
            p->avail_rc = cpu_only ? err_set(TCJ_ENODEV, "%s has no CPU emulation", fmts[f])
                                   : engine_available(gpu, o);
            if (!p->avail_rc)
                p->avail_rc = err_set(TCJ_ENODEV, "%s cannot run here", gpu->name);
            snprintf(p->why, sizeof p->why, "%s", err_msg());
        }
    }
    err_clear();
    return 0;
}

/* Progress of one step of the lab mapped onto its share of the whole. */
typedef struct lab_prog {
    const lab_spec *s;
    double lo, span;
    char what[96];
} lab_prog;

static void lab_prog_fn(void *ctx, double f)
{
    lab_prog *p = ctx;
    p->s->progress(p->s->progress_ctx, p->lo + p->span * f, p->what);
}

static lab_status lab_status_of(int rc)
{
    if (rc == TCJ_EINVAL || rc == TCJ_EUNSUP)
        return LAB_REFUSED;
    return rc == TCJ_ENODEV ? LAB_UNAVAILABLE : LAB_FAILED;
}

static void lab_count_spec(const lab_spec *s, join_spec *js, lab_prog *pg)
{
    memset(js, 0, sizeof *js);
    js->ds = s->ds;
    js->eps = s->eps;
    js->q0 = 0;
    js->q1 = s->ds->n;
    js->mode = JOIN_COUNT;
    js->opts = s->opts;
    js->cancel = s->cancel;
    if (s->progress) {
        js->progress = lab_prog_fn;
        js->progress_ctx = pg;
    }
}

/* One format through the lab: its row, its COUNT run, whether it is in
 * the pair pass still. */
typedef struct lab_slot {
    const lab_pick *p;
    lab_row *row;
    join_result run;
    int live;
} lab_slot;

/* The row is final: hand it to the caller. A refusal is the row's, not
 * the lab's, so its message goes once the caller has it. */
static int lab_done(const lab_spec *s, lab_result *r, lab_slot *sl, const cmp_result *cr)
{
    sl->live = 0;
    int rc = s->on_row ? s->on_row(s->ctx, r, sl->row, sl->p->e, cr) : 0;
    if (!rc)
        err_clear();
    return rc;
}

/* The row's failure as its status and one line. */
static void lab_fail(lab_row *row, int rc)
{
    row->status = lab_status_of(rc);
    snprintf(row->reason, sizeof row->reason, "%s", err_msg());
}

/* A new row for the slot's format and its timed COUNT run (stored at
 * once through on_run); a row that cannot run is final here. */
static int lab_count(const lab_spec *s, lab_result *r, lab_slot *sl, double at)
{
    const lab_pick *p = sl->p;
    lab_prog one = {.s = s, .lo = at, .span = 0}, *pg = &one;
    lab_row *row = sl->row = &r->row[r->nrow++];
    lab_row_init(row);
    snprintf(row->format, sizeof row->format, "%s", p->e->lab ? p->e->lab : p->e->name);
    row->bits = p->e->lab_bits;
    snprintf(row->engine, sizeof row->engine, "%s", p->e->name);
    snprintf(pg->what, sizeof pg->what, "precisions %s (%s)", row->format, row->engine);
    if (p->avail_rc) {
        row->status = LAB_UNAVAILABLE;
        snprintf(row->reason, sizeof row->reason, "%s", p->why);
        return lab_done(s, r, sl, NULL);
    }
    join_spec js;
    lab_count_spec(s, &js, pg);
    int64_t id = 0;
    int run_rc = s->reuse ? s->reuse(s->ctx, p->e, &sl->run, &id) : 0;
    if (run_rc < 0)
        return run_rc;
    row->reused = run_rc == 1;
    if (row->reused) {
        row->run_id = id;
        run_rc = 0;
    } else {
        const double t0 = engine_now();
        run_rc = engine_run(p->e, &js, &sl->run);
        r->runs_seconds += engine_now() - t0;
    }
    if (run_rc == TCJ_ECANCEL)
        return run_rc;
    join_result *run = &sl->run;
    row->pairs = run->pairs;
    row->seconds = run->seconds;
    row->kernel_s = run->kernel_seconds > 0 ? run->kernel_seconds : run->seconds;
    row->d_padded = run->d_padded ? run->d_padded : s->ds->d;
    lab_row_metrics(row, run);
    if (run_rc)
        lab_fail(row, run_rc);
    int rc = s->on_run && !row->reused ? s->on_run(s->ctx, r, row, p->e, run, run_rc) : 0;
    if (rc)
        return rc;
    if (run_rc)
        return lab_done(s, r, sl, NULL);
    sl->live = 1;
    return 0;
}

/* The kernel time of one more COUNT run of e, into *t. */
static int lab_time_once(const lab_spec *s, const engine *e, double *t)
{
    join_spec js;
    lab_prog pg = {.s = s, .lo = 1, .span = 0};
    snprintf(pg.what, sizeof pg.what, "precisions: timing %s again", e->name);
    lab_count_spec(s, &js, &pg);
    join_result *res = xcalloc(1, sizeof *res);
    int rc = engine_run(e, &js, res);
    *t = res->kernel_seconds > 0 ? res->kernel_seconds : res->seconds;
    free(res);
    return rc;
}

/* One timing is not a verdict on a loaded machine: the chosen row and the
 * next fastest that reaches min_overlap run LAB_REPEATS times in all, and
 * the ranges decide (lab_result says how). */
static int lab_repeat(const lab_spec *s, lab_result *r, const lab_slot *sl, size_t nslot)
{
    r->runner_up = -1;
    if (r->chosen < 0)
        return 0;
    for (int k = 0; k < r->nrow; k++) {
        const lab_row *w = &r->row[k];
        if (k == r->chosen || w->status != LAB_OK || !(w->side.overlap >= r->min_overlap))
            continue;
        if (r->runner_up < 0 || w->kernel_s < r->row[r->runner_up].kernel_s)
            r->runner_up = k;
    }
    if (r->runner_up < 0)
        return 0;
    const int who[2] = {r->chosen, r->runner_up};
    double med[2];
    for (int j = 0; j < 2; j++) {
        const engine *e = NULL;
        for (size_t k = 0; k < nslot; k++)
            if (sl[k].row == &r->row[who[j]])
                e = sl[k].p->e;
        if (!e)
            return 0;
        double t[LAB_REPEATS];
        t[0] = r->row[who[j]].kernel_s;
        for (int k = 1; k < LAB_REPEATS; k++) {
            int rc = lab_time_once(s, e, &t[k]);
            if (rc)
                return rc == TCJ_ECANCEL ? rc : 0; /* the single timing stands */
        }
        for (int a = 1; a < LAB_REPEATS; a++) /* sort, for the median */
            for (int b = a; b > 0 && t[b] < t[b - 1]; b--) {
                double x = t[b];
                t[b] = t[b - 1];
                t[b - 1] = x;
            }
        r->rep_lo[j] = t[0];
        r->rep_hi[j] = t[LAB_REPEATS - 1];
        med[j] = t[LAB_REPEATS / 2];
    }
    r->repeats = LAB_REPEATS;
    r->within_noise = r->rep_lo[0] <= r->rep_hi[1] && r->rep_lo[1] <= r->rep_hi[0];
    int pick = r->within_noise ? (who[0] < who[1] ? 0 : 1) : (med[0] <= med[1] ? 0 : 1);
    if (pick == 1) {
        r->chosen = who[1];
        r->runner_up = who[0];
        double lo = r->rep_lo[0], hi = r->rep_hi[0];
        r->rep_lo[0] = r->rep_lo[1], r->rep_hi[0] = r->rep_hi[1];
        r->rep_lo[1] = lo, r->rep_hi[1] = hi;
    }
    return 0;
}

int lab_run(const lab_spec *s, lab_result *r)
{
    const double t_lab = engine_now();
    memset(r, 0, sizeof *r);
    r->chosen = r->closest = r->baseline_row = r->runner_up = -1;
    r->min_overlap = s->min_overlap;
    r->eps = s->eps;
    if (!s->ds || s->ds->n == 0)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (!s->ref)
        return err_set(TCJ_EINVAL, "no reference engine can run here");
    snprintf(r->dataset, sizeof r->dataset, "%s", s->ds->name ? s->ds->name : "");
    r->n = s->ds->n;
    r->d = s->ds->d;
    snprintf(r->ref_engine, sizeof r->ref_engine, "%s", s->ref->name);
    const char *base = lab_baseline_format();
    snprintf(r->baseline, sizeof r->baseline, "%s", base ? base : "");

    /* The reference's timed run: a tenth of the progress. */
    lab_prog pg = {.s = s, .lo = 0, .span = 0.1};
    snprintf(pg.what, sizeof pg.what, "precisions: reference %s", s->ref->name);
    const size_t nrows = s->nrows < LAB_MAX_FORMATS ? s->nrows : LAB_MAX_FORMATS;
    join_result *ref = xcalloc(1, sizeof *ref);
    lab_slot *sl = xcalloc(nrows ? nrows : 1, sizeof *sl);
    join_spec js;
    lab_count_spec(s, &js, &pg);
    const double t0 = engine_now();
    int rc = 0;
    if (s->ref_reused) {
        *ref = *s->ref_reused;
        r->ref_run_id = s->ref_reused_id;
    } else {
        rc = engine_run(s->ref, &js, ref);
    }
    r->ref_seconds = engine_now() - t0;
    if (!rc) {
        r->ref_pairs = ref->pairs;
        r->ref_kernel_s = ref->kernel_seconds > 0 ? ref->kernel_seconds : ref->seconds;
        if (s->on_ref)
            rc = s->on_ref(s->ctx, r, ref);
    }

    /* One pair pass for every format: per block of rows the reference's
     * pairs once, then each format's (its COUNT run first, in the first
     * block). With one block, the usual case, each row is final as soon
     * as its engine ran. */
    cmp_spec cs;
    memset(&cs, 0, sizeof cs);
    cs.b = s->ref;
    cs.ds = s->ds;
    cs.eps = s->eps;
    cs.opts = s->opts;
    cs.block_pairs = s->block_pairs;
    cs.cancel = s->cancel;
    pg.lo = 0.1;
    pg.span = 0.9;
    if (s->progress) {
        cs.progress = lab_prog_fn;
        cs.progress_ctx = &pg;
    }
    cmp_pass *m = rc ? NULL : cmp_pass_new(&cs, ref->pairs, nrows);
    size_t r0 = 0, r1 = 0;
    int brc = 0;
    for (int first = 1; !rc && (brc = cmp_pass_block(m, &r0, &r1)) == 1; first = 0) {
        for (size_t k = 0; !rc && k < nrows; k++) {
            lab_slot *w = &sl[k];
            if (first) {
                w->p = &s->rows[k];
                /* Its COUNT run's progress stays where the pass is. */
                double at =
                    0.1 + 0.9 * ((double)k / (double)nrows) * ((double)r1 / (double)s->ds->n);
                if ((rc = lab_count(s, r, w, at)))
                    break;
            }
            if (!w->live)
                continue;
            snprintf(pg.what, sizeof pg.what, "precisions %s (%s): pairs", w->row->format,
                     w->row->engine);
            int prc = cmp_pass_side(m, k, w->p->e);
            if (prc == TCJ_ECANCEL) {
                rc = prc;
            } else if (prc) {
                lab_fail(w->row, prc);
                rc = lab_done(s, r, w, NULL);
            } else if (r1 == s->ds->n) {
                cmp_result *cr = xcalloc(1, sizeof *cr);
                cmp_pass_result(m, k, cr);
                cr->engine_a = w->p->e->name;
                cr->engine_b = s->ref->name;
                cr->eps = s->eps;
                cr->run_a = w->run;
                cr->run_b = *ref;
                w->row->side = cr->side;
                rc = lab_done(s, r, w, cr);
                free(cr);
            }
        }
    }
    if (!rc && brc < 0) {
        /* The reference's pair pass failed: no row can be judged. Rows
         * waiting for it are kept as failed, and the lab fails. */
        rc = brc;
        char why[200];
        snprintf(why, sizeof why, "the reference's pair pass failed: %s", err_msg());
        for (size_t k = 0; k < nrows; k++)
            if (sl[k].live) {
                sl[k].row->status = LAB_FAILED;
                snprintf(sl[k].row->reason, sizeof sl[k].row->reason, "%s", why);
                sl[k].live = 0;
                if (s->on_row)
                    s->on_row(s->ctx, r, sl[k].row, sl[k].p->e, NULL);
            }
        err_set(rc, "%s", why);
    }
    if (m)
        cmp_pass_times(m, &r->pass_seconds, &r->pass_engine_seconds);
    cmp_pass_free(m);
    free(ref);
    lab_derive(r);
    lab_choose(r);
    if (!rc)
        rc = lab_repeat(s, r, sl, nrows);
    free(sl);
    r->seconds = engine_now() - t_lab;
    if (!rc && s->progress)
        s->progress(s->progress_ctx, 1.0, "precisions");
    return rc;
}

void lab_derive(lab_result *r)
{
    r->baseline_row = -1;
    for (int k = 0; k < r->nrow; k++)
        if (r->baseline[0] && r->row[k].status == LAB_OK &&
            strcmp(r->row[k].format, r->baseline) == 0)
            r->baseline_row = k;
    for (int k = 0; k < r->nrow; k++) {
        lab_row *w = &r->row[k];
        w->tflops = w->speedup = NAN;
        w->err_mean_rel = w->err_std_rel = w->err_max_rel = NAN;
        if (w->status != LAB_OK)
            continue;
        size_t dp = w->d_padded ? w->d_padded : r->d;
        w->tflops = isnan(w->tflops_paper)
                        ? engine_tflops((double)r->n, (double)r->n, (double)dp, w->kernel_s)
                        : w->tflops_paper;
        if (r->baseline_row >= 0 && w->kernel_s > 0)
            w->speedup = r->row[r->baseline_row].kernel_s / w->kernel_s;
        if (r->eps > 0) {
            w->err_mean_rel = w->side.err_mean / r->eps;
            w->err_std_rel = w->side.err_std / r->eps;
            w->err_max_rel = fmax(fabs(w->side.err_min), fabs(w->side.err_max)) / r->eps;
        }
    }
}

void lab_choose(lab_result *r)
{
    r->chosen = r->closest = -1;
    for (int k = 0; k < r->nrow; k++) {
        const lab_row *w = &r->row[k];
        if (w->status != LAB_OK)
            continue;
        if (w->side.overlap >= r->min_overlap &&
            (r->chosen < 0 || w->kernel_s < r->row[r->chosen].kernel_s))
            r->chosen = k;
        if (r->closest < 0 || w->side.overlap > r->row[r->closest].side.overlap)
            r->closest = k;
    }
}

void lab_transforms(const lab_row *row, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
#define LAB_PART(...)                                                                              \
    do {                                                                                           \
        if (len < size)                                                                            \
            len += (size_t)snprintf(buf + len, size - len, "%s", len ? ", " : "");                 \
        if (len < size)                                                                            \
            len += (size_t)snprintf(buf + len, size - len, __VA_ARGS__);                           \
    } while (0)
    if (row->centred == 1)
        LAB_PART("centred");
    if (isfinite(row->scale_log2) && row->scale_log2 != 0)
        LAB_PART("2^%g", row->scale_log2);
    if (row->shifted == 1)
        LAB_PART("shifted");
    if (row->underflow_values > 0)
        LAB_PART("underflow %.0f", row->underflow_values);
    if (row->inexact > 0)
        LAB_PART("inexact %.0f", row->inexact);
#undef LAB_PART
    if (!len)
        snprintf(buf, size, "-");
}
