/* ladder: the teaching ladder (docs/TEACHING.md). The ε-join in COUNT mode
 * built up one idea a rung, from a CUDA-core loop (kernels/ladder/r01) to
 * FASTED's Hopper kernel, on one generated dataset whose every value and
 * every dot product is exact in every format (gen ints), so each rung's
 * count must equal the exact reference's before its time is shown. Per
 * rung: kernel time, TFLOPS, % of cuBLAS of its dtype measured in the same
 * ladder, the profiler's evidence (a second, profiled run), the SM clock
 * and power NVML saw, and derived against profiled utilisation. Without a
 * GPU: the stored ladders of docs/TEACHING.md, marked not measured here,
 * and every rung's source, why and diff. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "center.h"
#include "cmd.h"
#include "cupti_prof.h"
#include "dataset.h"
#include "err.h"
#include "kernels.h"
#include "ladder.h"
#include "out.h"
#include "runner.h"
#include "store.h"

#define LADDER_N 16384
#define LADDER_D 1024
/* the share of the n^2 pairs the default eps keeps: a count that checks
 * far more than the self-pairs, and near-eps pairs on both sides */
#define LADDER_SELECT 1e-3

/* rungs=A-B,C,...: a set of rung ids (bit k for rung k). */
static int ladder_parse_rungs(const char *v, unsigned *set)
{
    *set = 0;
    const int max = kern_ladder_count();
    for (const char *p = v; *p;) {
        char *e;
        long a = strtol(p, &e, 10), b = a;
        if (e == p)
            goto bad;
        if (*e == '-') {
            const char *q = e + 1;
            b = strtol(q, &e, 10);
            if (e == q)
                goto bad;
        }
        if (a < 1 || b > max || a > b)
            goto bad;
        for (long k = a; k <= b; k++)
            *set |= 1u << k;
        if (*e == ',')
            e++;
        else if (*e)
            goto bad;
        p = e;
    }
    if (*set)
        return 0;
bad:
    return err_set(TCJ_EINVAL, "rungs: expected rung numbers 1 to %d as A-B,C,... got '%s'",
                   kern_ladder_count(), v);
}

/* The default eps: the LADDER_SELECT quantile of d2 over a fixed sample
 * of pairs, rounded down to an integer plus a half (d2 of integer data is
 * an integer, so no pair lies exactly at eps). */
static double ladder_default_eps(const dataset *ds)
{
    enum { SAMPLE = 20000 };
    double *d2 = malloc(SAMPLE * sizeof *d2), *a = malloc(2 * ds->d * sizeof *a);
    if (!d2 || !a) {
        free(d2);
        free(a);
        return sqrt((double)ds->d);
    }
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int k = 0; k < SAMPLE; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const size_t i = (size_t)(x % ds->n);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const size_t j = (size_t)(x % ds->n);
        dataset_rows_f64(ds, i, 1, a);
        dataset_rows_f64(ds, j, 1, a + ds->d);
        double s = 0;
        for (size_t c = 0; c < ds->d; c++)
            s += (a[c] - a[ds->d + c]) * (a[c] - a[ds->d + c]);
        d2[k] = s;
    }
    /* the k-th smallest by a partial selection sort: k is 20 */
    const int kth = (int)(SAMPLE * LADDER_SELECT);
    for (int k = 0; k <= kth; k++)
        for (int j = k + 1; j < SAMPLE; j++)
            if (d2[j] < d2[k]) {
                double t = d2[k];
                d2[k] = d2[j];
                d2[j] = t;
            }
    const double e2 = floor(d2[kth]) + 0.5;
    free(d2);
    free(a);
    return sqrt(e2);
}

/* One COUNT run of e with the session's options o, stored; with pr, under
 * the profiler (runner_profile_run: its counters stored with it). 0 or its
 * code. */
static int ladder_one(session *s, const engine *e, const engine_opts *o, cupti_prof_result *pr,
                      join_result *res, int64_t *id)
{
    session tmp = *s;
    tmp.eopt = *o;
    join_spec sp;
    runner_progress pg;
    int rc = runner_spec(&tmp, e, &sp, &pg);
    if (rc)
        return rc;
    if (pr) {
        char msg[512];
        rc = runner_profile_run(&tmp, e, &sp, 0, pr, res, id, msg, sizeof msg);
    } else {
        rc = engine_run(e, &sp, res);
        *id = runner_store(&tmp, e, &sp, res, rc, rc ? err_msg() : NULL);
        if (*id > 0)
            tmp.last_run_id = *id;
    }
    s->last_run_id = tmp.last_run_id;
    return rc;
}

/* The rung's engine options: the session's, with what the rung fixes. */
static void ladder_opts(const session *s, const kern_ladder_rung *g, engine_opts *o)
{
    *o = s->eopt;
    o->ladder_rung = g->engine ? 0 : g->id;
    o->symmetric = 1; /* FASTED's rungs: the symmetric half, as rung 10 */
    o->fasted_off = 0;
    o->center = CENTER_OFF; /* the data are exact as they are */
    o->int8_scale = 0;
    o->shift = 0;
    o->fp8_acc_fast = 0;
    o->devices = 0;
    o->devices_all = 0;
}

static void ladder_row_init(ladder_row *r, const kern_ladder_rung *g)
{
    memset(r, 0, sizeof *r);
    r->rung = g->id;
    snprintf(r->name, sizeof r->name, "%s", g->name);
    snprintf(r->unit, sizeof r->unit, "%s", g->unit);
    snprintf(r->blas, sizeof r->blas, "%s", g->blas);
    double *nan_fields[] = {&r->kernel_s, &r->tflops,     &r->blas_tflops, &r->pct_blas,
                            &r->speedup,  &r->tensor_pct, &r->fma_pct,     &r->conflicts_pct,
                            &r->dram_pct, &r->smem_pct,   &r->l2_hit_pct,  &r->occupancy_pct,
                            &r->sm_mhz,   &r->power_w,    &r->peak_max,    &r->peak_run};
    for (size_t k = 0; k < sizeof nan_fields / sizeof nan_fields[0]; k++)
        *nan_fields[k] = NAN;
}

/* Check, time and profile rung g into row r. Returns nonzero only when
 * the ladder should stop (cancel). */
static int ladder_rung(session *s, const kern_ladder_rung *g, const kern_device *dv, uint64_t ref,
                       int profile, ladder_row *r)
{
    char why[256];
    if (kern_ladder_check(g, dv, why, sizeof why)) {
        r->status = LADDER_NOT_RUN;
        snprintf(r->note, sizeof r->note, "%.190s", why);
        return 0;
    }
    const engine *e = engine_find(g->engine ? g->engine : "ladder");
    engine_opts o;
    ladder_opts(s, g, &o);
    if (!e || engine_available(e, &o)) {
        r->status = LADDER_NOT_RUN;
        snprintf(r->note, sizeof r->note, "%s", e ? err_msg() : "no such engine in this build");
        err_clear();
        return 0;
    }
    out_printf("  rung %d %s ...\n", g->id, g->name);
    join_result *res = malloc(sizeof *res);
    if (!res)
        return err_set(TCJ_ENOMEM, "ladder: out of memory");
    int64_t id = 0;
    int rc = ladder_one(s, e, &o, NULL, res, &id);
    if (rc) {
        free(res);
        if (rc == TCJ_ECANCEL)
            return rc;
        r->status = LADDER_FAILED;
        snprintf(r->note, sizeof r->note, "%s", err_msg());
        err_clear();
        return 0;
    }
    r->run_id = id;
    r->pairs = res->pairs;
    if (res->pairs != ref) {
        r->status = LADDER_WRONG;
        free(res);
        return 0;
    }
    r->status = LADDER_OK;
    r->kernel_s = res->kernel_seconds;
    const double n = (double)s->ds.n;
    r->tflops =
        res->kernel_seconds > 0 ? 2 * n * n * (double)s->ds.d / res->kernel_seconds / 1e12 : NAN;
    r->sm_mhz = join_result_metric_value(res, "sm_clock_mhz.mean");
    r->power_w = join_result_metric_value(res, "power_w.mean");
    if (profile) {
        /* a second run for the counters: the profiler replays the kernel,
         * so its time is not the rung's */
        cupti_prof_result *pr = malloc(sizeof *pr);
        if (!pr) {
            free(res);
            return err_set(TCJ_ENOMEM, "ladder: out of memory");
        }
        int64_t pid = 0;
        rc = ladder_one(s, e, &o, pr, res, &pid);
        if (rc == TCJ_ECANCEL) {
            free(pr);
            free(res);
            return rc;
        }
        err_clear();
        if (!rc && pr->status == 0) {
            for (int k = 0; k < pr->n; k++) {
                const char *m = pr->name[k];
                const double x = pr->value[k];
                if (!strncmp(m, "sm__pipe_tensor_op_hmma", 23) ||
                    (!strncmp(m, "sm__pipe_tensor_op_imma", 23) && !strcmp(g->blas, "int8")))
                    r->tensor_pct = isnan(r->tensor_pct) ? x : fmax(r->tensor_pct, x);
                else if (!strncmp(m, "sm__pipe_fma", 12))
                    r->fma_pct = x;
                else if (!strcmp(m, "derived__smem_bank_conflicts_pct"))
                    r->conflicts_pct = x;
                else if (!strncmp(m, "dram__throughput", 16))
                    r->dram_pct = x;
                else if (!strncmp(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct", 50))
                    r->smem_pct = x;
                else if (!strncmp(m, "lts__t_sector_hit_rate", 22))
                    r->l2_hit_pct = x;
                else if (!strncmp(m, "sm__warps_active", 16))
                    r->occupancy_pct = x;
            }
        } else if (!rc) {
            snprintf(r->note, sizeof r->note, "no counters: %.180s", pr->reason);
        }
        free(pr);
    }
    free(res);
    return 0;
}

/* The exact count: the first available of exact, fp64, cpu. */
static int ladder_reference(session *s, ladder_view *v)
{
    static const char *const refs[] = {"exact", "fp64", "cpu", NULL};
    for (int k = 0; refs[k]; k++) {
        const engine *e = engine_find(refs[k]);
        engine_opts o = s->eopt;
        o.devices = 0;
        o.devices_all = 0;
        if (!e || engine_available(e, &o)) {
            err_clear();
            continue;
        }
        join_result *res = malloc(sizeof *res);
        if (!res)
            return err_set(TCJ_ENOMEM, "ladder: out of memory");
        int64_t id;
        int rc = ladder_one(s, e, &o, NULL, res, &id);
        v->ref_pairs = res->pairs;
        free(res);
        if (rc)
            return rc;
        snprintf(v->ref_engine, sizeof v->ref_engine, "%s", e->name);
        return 0;
    }
    return err_set(TCJ_EUNSUP, "ladder: no exact engine can run here");
}

/* Print the stored ladders (docs/TEACHING.md, embedded at build time). */
static void ladder_print_stored(const char *why)
{
    out_printf("NOT MEASURED HERE (%s): the stored ladders of docs/TEACHING.md follow.\n", why);
    const char *doc = ladder_src_find("docs/TEACHING.md");
    const char *a = doc ? strstr(doc, "<!-- ladder-stored begin -->") : NULL;
    const char *b = a ? strstr(a, "<!-- ladder-stored end -->") : NULL;
    if (!b) {
        out_printf("(this build has no stored ladder)\n");
        return;
    }
    /* the section as it reads in the doc, less its code fences */
    for (const char *p = strchr(a, '\n') + 1; p < b;) {
        const char *e = memchr(p, '\n', (size_t)(b - p));
        const int len = (int)((e ? e : b) - p);
        if (strncmp(p, "```", 3) != 0)
            out_printf("%.*s\n", len, p);
        p += len + 1;
    }
}

static void emit_out(void *ctx, const char *line)
{
    (void)ctx;
    out_printf("%s\n", line);
}

static int ladder_rung_arg(const char *v, const kern_ladder_rung **g)
{
    char *e;
    long id = strtol(v, &e, 10);
    if (e == v || *e || !(*g = kern_ladder_find((int)id)))
        return err_set(TCJ_EINVAL, "ladder: no rung '%s' (1 to %d; ladder list)", v,
                       kern_ladder_count());
    return 0;
}

/* ladder list | why N | source N | diff N: from the embedded sources. */
static int ladder_text(const char *what, const char *arg)
{
    const kern_ladder_rung *g = NULL;
    int rc;
    if (!strcmp(what, "list")) {
        out_printf("%-4s %-13s %-9s %-13s %-6s %s\n", "rung", "name", "unit", "tile", "stages",
                   "idea");
        for (const kern_ladder_rung *r = kern_ladder_rungs; r->id; r++) {
            char tile[32], st[8] = "-";
            if (r->bk)
                snprintf(tile, sizeof tile, "%dx%dx%d", r->bm, r->bn, r->bk);
            else
                snprintf(tile, sizeof tile, "%dx%d", r->bm, r->bn);
            if (r->stages)
                snprintf(st, sizeof st, "%d", r->stages);
            out_printf("%-4d %-13s %-9s %-13s %-6s %s\n", r->id, r->name, r->unit, tile, st,
                       r->idea);
        }
        return 0;
    }
    if (!arg)
        return err_set(TCJ_EINVAL, "Usage: ladder %s N", what);
    if ((rc = ladder_rung_arg(arg, &g)))
        return rc;
    if (!strcmp(what, "why")) {
        char *w = ladder_why(g->id);
        out_printf("rung %d %s (%s): %s\n\n%s", g->id, g->name, g->file, g->idea,
                   w ? w : "(no comment in the source)\n");
        free(w);
        return 0;
    }
    const char *text = ladder_src_find(g->file);
    if (!text)
        return err_set(TCJ_EUNSUP, "ladder: this build has no source of %s", g->file);
    if (!strcmp(what, "source")) {
        out_printf("// %s\n%s", g->file, text);
        return 0;
    }
    /* diff: an own rung against the one before; the format rungs against
     * the FP16 format instance (the same kernel, another format) */
    const kern_ladder_rung *p = kern_ladder_find(g->prev);
    const char *fa = NULL, *fb = NULL;
    if (!p) {
        out_printf("rung %d %s is the first rung: nothing before it (ladder source %d)\n", g->id,
                   g->name, g->id);
        return 0;
    }
    if (g->engine && p->engine) {
        fa = "kernels/fmt_fp16.cu";
        fb = !strcmp(g->blas, "int8") ? "kernels/fmt_int8.cu" : "kernels/fmt_fp8.cu";
    } else if (g->engine) {
        out_printf("rung %d %s is FASTED's own kernel (%s, engine %s), not a small step from "
                   "rung %d:\nwhat it adds is %s.\nladder why %d has its design; ladder source %d "
                   "the whole file.\n",
                   g->id, g->name, g->file, g->engine, p->id, g->idea, g->id, g->id);
        return 0;
    } else {
        fa = p->file;
        fb = g->file;
    }
    const char *ta = ladder_src_find(fa), *tb = ladder_src_find(fb);
    if (!ta || !tb)
        return err_set(TCJ_EUNSUP, "ladder: this build has no source of %s", ta ? fb : fa);
    out_printf("rung %d %s against rung %d %s: %s\n", g->id, g->name, p->id, p->name, g->idea);
    int ch = ladder_diff(ta, tb, fa, fb, emit_out, NULL);
    if (ch < 0)
        return err_set(TCJ_ENOMEM, "ladder diff: the files are too long to compare");
    if (ch == 0)
        out_printf("(the files are the same)\n");
    return 0;
}

/* ladder show [ID]: a stored ladder (the latest by default) as it was
 * printed, and its record (the dashboard's ladder panel). */
static int ladder_show(session *s, const char *arg)
{
    int64_t id = 0;
    if (arg) {
        char *e;
        long long x = strtoll(arg, &e, 10);
        if (e == arg || *e || x < 1)
            return err_set(TCJ_EINVAL, "ladder show: expected a ladder id (1, 2, ...), got '%s'",
                           arg);
        id = x;
    }
    if (!s->db)
        return err_set(TCJ_EUNSUP, "ladder show: no session log (--db)");
    ladder_view *lv = malloc(sizeof *lv);
    if (!lv)
        return err_set(TCJ_ENOMEM, "ladder: out of memory");
    int rc = store_ladder_get(s->db, id, lv);
    if (!rc) {
        out_printf("ladder %lld: %s, %s n=%zu d=%zu eps=%g, reference %s %llu pairs\n",
                   (long long)lv->id, lv->device, lv->dataset, lv->n, lv->d, lv->eps,
                   lv->ref_engine, (unsigned long long)lv->ref_pairs);
        ladder_print(lv);
        out_rec *rec = out_rec_begin("ladder");
        ladder_json(out_rec_json(rec), lv);
        out_rec_end(rec);
        if (s->ui && s->ui->refresh)
            s->ui->refresh(s->ui_ctx);
    }
    free(lv);
    return rc;
}

static int ladder_run(session *s, int argc, char **argv)
{
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    if (np >= 1 && !strcmp(pos[0], "show") && np <= 2)
        return ladder_show(s, np == 2 ? pos[1] : NULL);
    static const char *const words[] = {"list", "why", "source", "diff", NULL};
    for (int k = 0; np >= 1 && words[k]; k++)
        if (!strcmp(pos[0], words[k]) && np <= 2 && (k == 0) == (np == 1))
            return ladder_text(pos[0], np == 2 ? pos[1] : NULL);
    if (np > 1 || (np == 1 && strcmp(pos[0], "stored")))
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("ladder")->usage);
    if (np == 1) {
        ladder_print_stored("ladder stored");
        return 0;
    }
    size_t n = LADDER_N, d = LADDER_D;
    double eps = 0;
    unsigned set = 0;
    int profile = 1, rc;
    const char *v;
    if ((v = cmd_opt(argc, argv, "n")) && (rc = cmd_parse_size(v, "n", &n)))
        return rc;
    if ((v = cmd_opt(argc, argv, "d")) && (rc = cmd_parse_size(v, "d", &d)))
        return rc;
    if ((v = cmd_opt(argc, argv, "eps")) && (rc = cmd_parse_double(v, "eps", &eps)))
        return rc;
    if ((v = cmd_opt(argc, argv, "rungs")) && (rc = ladder_parse_rungs(v, &set)))
        return rc;
    if ((v = cmd_opt(argc, argv, "profile"))) {
        if (strcmp(v, "on") && strcmp(v, "off"))
            return err_set(TCJ_EINVAL, "profile: expected on or off, got '%s'", v);
        profile = !strcmp(v, "on");
    }
    if (!set)
        set = ((1u << kern_ladder_count()) - 1) << 1;
    if (n < 2 || d < 1 || n > (size_t)1 << 31 || d >= (size_t)1 << 19)
        return err_set(TCJ_EINVAL, "ladder: need 2 <= n <= 2^31 and 1 <= d < 2^19 (the dot "
                                   "products of the ints data stay exact in FP32)");
    if (cmd_opt(argc, argv, "eps") && !(eps > 0))
        return err_set(TCJ_EINVAL, "ladder: eps must be positive");
    /* Every rung validated before any launch: a bad tile is one line. */
    kern_device dv;
    const int dev = s->eopt.device;
    if (kern_device_count() == 0 || kern_device_info(dev, &dv)) {
        char why[300];
        snprintf(why, sizeof why, "%s", kern_error());
        for (const kern_ladder_rung *g = kern_ladder_rungs; g->id; g++)
            if ((set >> g->id & 1) && kern_ladder_check(g, NULL, why, sizeof why))
                return err_set(TCJ_EINVAL, "%s", why);
        ladder_print_stored(why);
        return 0;
    }
    if ((rc = cmd_gen_current(s, "ints", n, d)))
        return rc == TCJ_ECANCEL ? err_cancelled("ladder") : rc;
    /* the ladder's eps becomes current with its dataset, so `run ENGINE`
     * after it joins what the rungs joined */
    s->eps = eps > 0 ? eps : ladder_default_eps(&s->ds);
    s->have_eps = 1;
    ladder_view *lv = calloc(1, sizeof *lv);
    if (!lv)
        return err_set(TCJ_ENOMEM, "ladder: out of memory");
    snprintf(lv->device, sizeof lv->device, "%.80s (sm_%d%d, %d SMs)", dv.name, dv.major, dv.minor,
             dv.sms);
    snprintf(lv->dataset, sizeof lv->dataset, "%s", s->ds.name);
    lv->n = s->ds.n;
    lv->d = s->ds.d;
    lv->eps = s->eps;
    out_printf("ladder: %s, %s n=%zu d=%zu eps=%g (eps^2 = %g: no pair at eps), COUNT\n",
               lv->device, lv->dataset, lv->n, lv->d, lv->eps, lv->eps * lv->eps);
    if ((rc = ladder_reference(s, lv)))
        goto done;
    out_printf("  reference: %s, %llu pairs (self-pairs included)\n", lv->ref_engine,
               (unsigned long long)lv->ref_pairs);
    /* cuBLAS of each dtype the rungs compare against, in this ladder */
    const char *dts[] = {"fp32", "fp16", "fp8", "int8"};
    double blas[4] = {NAN, NAN, NAN, NAN};
    for (int k = 0; k < 4; k++) {
        int want = 0;
        for (const kern_ladder_rung *g = kern_ladder_rungs; g->id; g++)
            want |= (set >> g->id & 1) && !strcmp(g->blas, dts[k]);
        double t = 0;
        if (!want)
            continue;
        if (kern_cublas_gemm(dev, dts[k], lv->n, lv->d, 3, &t) == 0 && t > 0) {
            blas[k] = 2.0 * (double)lv->n * (double)lv->n * (double)lv->d / t / 1e12;
            out_printf("  cuBLAS %s X*X^T: %.3f ms, %.2f TFLOPS\n", dts[k], t * 1e3, blas[k]);
        } else {
            out_printf("  cuBLAS %s: %s\n", dts[k], kern_error());
        }
    }
    if (profile && cupti_prof_available()) {
        out_printf("  counters: none (%s); profile=off skips them\n", err_msg());
        err_clear();
        profile = 0;
    }
    for (const kern_ladder_rung *g = kern_ladder_rungs; g->id && !rc; g++) {
        if (!(set >> g->id & 1) || lv->nrows >= LADDER_MAX_RUNGS)
            continue;
        ladder_row *r = &lv->row[lv->nrows++];
        ladder_row_init(r, g);
        for (int k = 0; k < 4; k++)
            if (!strcmp(g->blas, dts[k]))
                r->blas_tflops = blas[k];
        rc = ladder_rung(s, g, &dv, lv->ref_pairs, profile, r);
        if (!rc && s->cancel)
            rc = TCJ_ECANCEL;
    }
    if (rc)
        goto done;
    ladder_derive(lv, dv.major * 10 + dv.minor, dv.sms, dv.clock_khz / 1e3);
    if (s->db) {
        int64_t id = store_ladder(s->db, s->session_id, s->dataset_id, s->command_id, lv);
        if (id < 0)
            cmd_store_failed();
        else
            lv->id = id;
    }
    out_printf("\nladder %lld: %s\n", (long long)lv->id, lv->device);
    ladder_print(lv);
    out_printf(
        "TFLOPS: 2*n*n*d over kernel time for every rung (the symmetric ones do about half\n"
        "the work in that time); %% cuBLAS: against cuBLAS's full X*X^T of the rung's dtype\n"
        "above. pk@max / pk@run: the work done as %% of the unit's peak at the GPU's max\n"
        "clock (%.0f MHz) and at the mean clock NVML saw; the profiler's pipe %% is near\n"
        "pk@run when the clock, not the kernel, explains the gap to peak (the FASTED\n"
        "paper's 49%% derived against 64%% tensor-pipe at a throttled 1.12 GHz).\n",
        dv.clock_khz / 1e3);
    out_rec *rec = out_rec_begin("ladder");
    ladder_json(out_rec_json(rec), lv);
    out_rec_end(rec);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
done:
    free(lv);
    if (rc == TCJ_ECANCEL) /* a rung's run or the reference's */
        rc = err_cancelled_note(s->db ? ERR_NOTE_KEPT : NULL, "ladder");
    return rc;
}

static const char *const ladder_options[] = {"n", "d", "eps", "rungs", "profile", NULL};
/* Only a ladder that runs takes options; the words that show text take none. */
static const cmd_form ladder_forms[] = {
    {"stored", NULL}, {"list", NULL}, {"show", NULL},         {"why", NULL},
    {"source", NULL}, {"diff", NULL}, {NULL, ladder_options},
};

const cmd cmd_ladder = {
    .name = "ladder",
    .usage = "ladder [stored|list|show [ID]|why N|source N|diff N] [n=N] [d=D] [eps=E] "
             "[rungs=A-B,C] [profile=on|off]",
    .summary = "the teaching ladder: the ε-join from a CUDA-core loop to FASTED, one idea a rung",
    .help = "Run the ε-join (COUNT) one rung at a time, each rung a small kernel file under\n"
            "kernels/ladder/ that adds one idea to the one before (ladder list), up to\n"
            "FASTED's Hopper kernel and its FP8 and INT8 forms. The data: gen ints (n=16384,\n"
            "d=1024, seed 1: integers in {-4..4}, exact in every format), eps at the 1e-3\n"
            "quantile of the pair distances (an integer plus a half: no pair at eps); both\n"
            "become current. Each rung's count must equal the exact\n"
            "reference's before its time is shown (WRONG otherwise). Per rung: kernel\n"
            "time, TFLOPS (2*n*n*d / time), % of cuBLAS's X*X^T of its dtype measured in\n"
            "the same ladder, speedup over the rung before, the profiler's evidence from a\n"
            "second run (tensor or FMA pipe, bank conflicts, DRAM and shared-memory\n"
            "throughput, L2 hit rate, achieved occupancy), the SM clock and power NVML saw,\n"
            "and the work as % of peak at the max and at the measured clock. Every tile\n"
            "is checked before any launch. Runs and the ladder are stored (export ladder).\n"
            "  n=N d=D        another shape of the ints data\n"
            "  eps=E          another radius\n"
            "  rungs=A-B,C    only these rungs\n"
            "  profile=off    no counters (no second run)\n"
            "  stored         the stored H100 and H200 ladders (docs/TEACHING.md)\n"
            "  list           the rungs, their tiles and ideas\n"
            "  show [ID]      a stored ladder (the latest) again, and in the dashboard\n"
            "  why N          rung N's reason, from its source\n"
            "  source N       rung N's kernel file\n"
            "  diff N         rung N's change against the rung before, from the sources\n"
            "Without a GPU, ladder prints the stored ladders, marked as not measured here.",
    .min_args = 0,
    .max_args = 6,
    .options = ladder_options,
    .forms = ladder_forms,
    .run = ladder_run,
};
