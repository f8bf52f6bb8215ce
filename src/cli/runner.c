/* Shared plumbing of the commands that run engines. */
#include "runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "cupti_prof.h"
#include "dbscan.h"
#include "dist.h"
#include "err.h"
#include "out.h"
#include "settings.h"
#include "store.h"

const engine *runner_default_engine(const engine_opts *o)
{
    return engine_best(ENGINE_ROLE_DEFAULT, o);
}

const engine *runner_reference_engine(const engine_opts *o)
{
    return engine_best(ENGINE_ROLE_TRUTH, o);
}

int runner_engine_opt(const engine_opts *o, const char *name, const engine **out)
{
    int rc;
    if (!name)
        *out = runner_default_engine(o);
    else if ((rc = runner_find_engine(name, out)))
        return rc;
    return engine_available(*out, o);
}

int runner_find_engine(const char *name, const engine **out)
{
    const engine *e = engine_find(name);
    if (e) {
        *out = e;
        return 0;
    }
    char names[256] = "";
    size_t k = 0;
    const engine *near = NULL;
    int best = 3; /* two edits at most: a typo, not another engine */
    for (const engine *const *t = engine_table; *t && k < sizeof names; t++) {
        k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? " " : "", (*t)->name);
        int dist = cmd_edit_distance(name, (*t)->name);
        if (dist < best) {
            best = dist;
            near = *t;
        }
    }
    if (near)
        return err_set(TCJ_EINVAL, "unknown engine '%s'; did you mean %s? (one of: %s)", name,
                       near->name, names);
    return err_set(TCJ_EINVAL, "unknown engine '%s' (one of: %s)", name, names);
}

/* Forwarded from the engine's thread of control to the front end; poll
 * lets the dashboard read a cancel key. */
void runner_on_progress(void *ctx, double frac)
{
    runner_progress *pg = ctx;
    if (!pg->s->ui)
        return;
    if (pg->s->ui->progress)
        pg->s->ui->progress(pg->s->ui_ctx, pg->what, frac);
    if (pg->s->ui->poll)
        pg->s->ui->poll(pg->s->ui_ctx);
}

int runner_spec(session *s, const engine *e, join_spec *spec, runner_progress *pg)
{
    memset(spec, 0, sizeof *spec);
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (!s->have_eps)
        return err_set(TCJ_EINVAL, "no eps set (use eps VALUE)");
    spec->ds = &s->ds;
    spec->eps = s->eps;
    spec->q0 = 0;
    spec->q1 = s->ds.n;
    spec->mode = JOIN_COUNT;
    spec->opts = &s->eopt;
    spec->cancel = &s->cancel;
    pg->s = s;
    snprintf(pg->what, sizeof pg->what, "%s", e->name);
    spec->progress = runner_on_progress;
    spec->progress_ctx = pg;
    return 0;
}

int runner_rows(const char *v, size_t n, join_spec *spec)
{
    char *end;
    const char *colon = strchr(v, ':');
    if (!colon)
        goto bad;
    unsigned long long a = 0, b = n;
    if (colon != v) {
        a = strtoull(v, &end, 10);
        if (end != colon || *v == '-')
            goto bad;
    }
    if (colon[1]) {
        b = strtoull(colon + 1, &end, 10);
        if (*end || colon[1] == '-')
            goto bad;
    }
    if (a >= b || b > n)
        return err_set(TCJ_EINVAL, "rows: need Q0 < Q1 <= %zu, got '%s'", n, v);
    spec->q0 = (size_t)a;
    spec->q1 = (size_t)b;
    return 0;
bad:
    return err_set(TCJ_EINVAL, "rows: expected Q0:Q1 (row numbers, Q1 exclusive), got '%s'", v);
}

/* Over the pairs examined: nq*n (the paper's count) unless an index
 * pruned, when 2*nq*n*d would count pairs that never ran. */
void runner_tflops(const join_spec *spec, const join_result *res, double *padded, double *unpadded)
{
    double nq = (double)(spec->q1 - spec->q0), n = (double)spec->ds->n;
    double t = res->kernel_seconds > 0 ? res->kernel_seconds : res->seconds;
    size_t dp = res->d_padded ? res->d_padded : spec->ds->d;
    int pruned;
    const double ex = engine_pairs_examined(res, nq, n, &pruned);
    *padded = engine_tflops(ex, 1, (double)dp, t);
    *unpadded = engine_tflops(ex, 1, (double)spec->ds->d, t);
}

/* The run's record; opts (the settings' text) is the caller's buffer. */
static void run_rec(session *s, const engine *e, const join_spec *spec, const join_result *res,
                    int rc, const char *error, const char *opts, store_run_rec *r)
{
    memset(r, 0, sizeof *r);
    r->session_id = s->session_id;
    r->dataset_id = s->dataset_id;
    r->command_id = s->command_id;
    r->engine = e->name;
    r->precision = res->precision[0] ? res->precision : e->precision;
    r->mode = settings_mode_name(spec->mode);
    r->options = opts;
    r->variant = res->variant;
    r->device = res->device;
    r->eps = spec->eps;
    r->q0 = spec->q0;
    r->q1 = spec->q1;
    r->n = spec->ds->n;
    r->d = spec->ds->d;
    r->d_padded = res->d_padded ? res->d_padded : spec->ds->d;
    r->dtype = dataset_dtype(spec->ds)->name;
    r->status = rc;
    r->error = rc ? error : NULL;
    r->res = res;
    if (!rc) {
        r->selectivity = engine_selectivity(res->pairs, spec->q1 - spec->q0);
        runner_tflops(spec, res, &r->tflops_padded, &r->tflops_unpadded);
    }
}

int64_t runner_store(session *s, const engine *e, const join_spec *spec, const join_result *res,
                     int rc, const char *error)
{
    if (!s->db)
        return 0;
    char opts[512];
    settings_describe(s, e, opts, sizeof opts);
    store_run_rec r;
    run_rec(s, e, spec, res, rc, error, opts, &r);
    int64_t id = store_run(s->db, &r);
    if (id < 0)
        cmd_store_failed();
    else if (dist && dist->store_run) /* tcjoin-mpi: the ranks' shares */
        dist->store_run(s->db, id, res);
    return id > 0 ? id : 0;
}

int64_t runner_store_dbscan(session *s, const engine *e, dbscan_view *v)
{
    memset(v->run_id, 0, sizeof v->run_id);
    v->id = 0;
    if (!s->db)
        return 0;
    const dbscan_result *res = v->res;
    char opts[512];
    settings_describe(s, e, opts, sizeof opts);
    join_spec js[DBSCAN_NPASS];
    store_run_rec rr[DBSCAN_NPASS];
    int64_t run_id[DBSCAN_NPASS];
    store_dbscan_rec r = {.session_id = s->session_id,
                          .dataset_id = s->dataset_id,
                          .command_id = s->command_id,
                          .view = v,
                          .run_id = run_id};
    for (int k = 0; k < DBSCAN_NPASS; k++) {
        if (!res->ran[k])
            continue;
        js[k] = (join_spec){.ds = &s->ds,
                            .eps = s->eps,
                            .q0 = 0,
                            .q1 = s->ds.n,
                            .mode = res->pass_mode[k],
                            .opts = &s->eopt};
        run_rec(s, e, &js[k], &res->pass[k], 0, NULL, opts, &rr[k]);
        r.pass[k] = &rr[k];
    }
    int64_t id = store_dbscan(s->db, &r);
    if (id < 0) {
        cmd_store_failed();
        return 0;
    }
    memcpy(v->run_id, run_id, sizeof run_id);
    v->id = id;
    for (int k = 0; k < DBSCAN_NPASS; k++)
        if (run_id[k] > 0 && dist && dist->store_run) /* tcjoin-mpi: the ranks' shares */
            dist->store_run(s->db, run_id[k], &res->pass[k]);
    return id;
}

void runner_rec_fields(out_rec *r, session *s, const engine *e, const join_spec *spec,
                       const join_result *res, int64_t run_id)
{
    double tp, tu;
    runner_tflops(spec, res, &tp, &tu);
    out_rec_int(r, "run_id", run_id);
    out_rec_str(r, "engine", e->name);
    out_rec_str(r, "precision", res->precision);
    out_rec_str(r, "dataset", spec->ds->name);
    out_rec_str(r, "dtype", dataset_dtype(spec->ds)->name);
    out_rec_int(r, "n", (int64_t)spec->ds->n);
    out_rec_int(r, "d", (int64_t)spec->ds->d);
    out_rec_int(r, "d_padded", (int64_t)(res->d_padded ? res->d_padded : spec->ds->d));
    out_rec_dbl(r, "eps", spec->eps);
    out_rec_int(r, "q0", (int64_t)spec->q0);
    out_rec_int(r, "q1", (int64_t)spec->q1);
    out_rec_str(r, "mode", settings_mode_name(spec->mode));
    out_rec_int(r, "pairs", (int64_t)res->pairs);
    out_rec_dbl(r, "selectivity", engine_selectivity(res->pairs, spec->q1 - spec->q0));
    out_rec_dbl(r, "time_s", res->seconds);
    out_rec_dbl(r, "kernel_s", res->kernel_seconds);
    runner_rec_phases(r, res);
    out_rec_dbl(r, "tflops", tp);
    out_rec_dbl(r, "tflops_unpadded", tu);
    out_rec_str(r, "tflops_quoted", "padded");
    int pruned;
    out_rec_dbl(
        r, "pairs_examined",
        engine_pairs_examined(res, (double)(spec->q1 - spec->q0), (double)spec->ds->n, &pruned));
    out_rec_bool(r, "pruned", pruned);
    out_rec_str(r, "variant", res->variant);
    runner_rec_counters(r, res);
}

void runner_rec_phases(out_rec *r, const join_result *res)
{
    out_rec_obj(r, "phases");
    for (int k = 0; k < res->nphase; k++)
        out_rec_dbl(r, res->phase[k].name, res->phase[k].seconds);
    out_rec_close(r);
}

void runner_rec_counters(out_rec *r, const join_result *res)
{
    /* Named "counters" as in show and export (docs/JSON.md). */
    if (!res->nmetric)
        return;
    out_rec_obj(r, "counters");
    for (int k = 0; k < res->nmetric; k++)
        out_rec_dbl(r, res->metric[k].name, res->metric[k].value);
    out_rec_close(r);
    out_rec_obj(r, "counter_units");
    for (int k = 0; k < res->nmetric; k++)
        out_rec_str(r, res->metric[k].name, res->metric[k].unit[0] ? res->metric[k].unit : NULL);
    out_rec_close(r);
}

void runner_report(session *s, const engine *e, const join_spec *spec, const join_result *res,
                   int64_t run_id)
{
    runner_report_ext(s, e, spec, res, run_id, NULL, NULL);
}

void runner_report_ext(session *s, const engine *e, const join_spec *spec, const join_result *res,
                       int64_t run_id, void (*extra)(out_rec *r, void *ctx), void *ctx)
{
    size_t nq = spec->q1 - spec->q0;
    double tp, tu;
    runner_tflops(spec, res, &tp, &tu);
    char eps[40];
    out_fmt_double(eps, sizeof eps, spec->eps);
    out_printf("run %lld: %s on %s (n=%zu d=%zu) eps=%s", (long long)run_id, e->name,
               spec->ds->name, spec->ds->n, spec->ds->d, eps);
    if (spec->q0 != 0 || spec->q1 != spec->ds->n)
        out_printf(" rows %zu:%zu", spec->q0, spec->q1);
    out_printf("\n  pairs %llu, selectivity %.4f\n", (unsigned long long)res->pairs,
               engine_selectivity(res->pairs, nq));
    out_printf("  time %.4f s:", res->seconds);
    for (int k = 0; k < res->nphase; k++)
        out_printf(" %s %.4f s", res->phase[k].name, res->phase[k].seconds);
    int pruned;
    const double ex = engine_pairs_examined(res, (double)nq, (double)spec->ds->n, &pruned);
    const double t = res->kernel_seconds > 0 ? res->kernel_seconds : res->seconds;
    if (pruned)
        out_printf("\n  index pruned: %.4g pairs examined (%.3g%% of nq*n), %.4g pairs/s; "
                   "%.4g TFLOPS over them (2*examined*d/kernel time)\n",
                   ex, 100.0 * ex / ((double)nq * (double)spec->ds->n), t > 0 ? ex / t : 0.0, tu);
    else
        out_printf("\n  %.4g TFLOPS derived (2*nq*n*d_padded/kernel time, d_padded=%zu; "
                   "unpadded %.4g)\n",
                   tp, res->d_padded ? res->d_padded : spec->ds->d, tu);
    out_rec *r = out_rec_begin("run");
    runner_rec_fields(r, s, e, spec, res, run_id);
    if (extra)
        extra(r, ctx);
    out_rec_end(r);
}

/* One COUNT run of e on spec with counters requested; stores it (with the
 * counters by metric name) and fills pr, res and the run id. Returns the
 * run's error code (msg holds its text). */
int runner_profile_run(session *s, const engine *e, join_spec *spec, int sol,
                       struct cupti_prof_result *pr, join_result *res, int64_t *id, char *msg,
                       size_t msg_size)
{
    cupti_prof_request(sol, pr);
    int rc = engine_run(e, spec, res);
    snprintf(msg, msg_size, "%s", rc ? err_msg() : "");
    int launched = cupti_prof_finish();
    if (!e->gpu) {
        pr->status = TCJ_EUNSUP;
        snprintf(pr->reason, sizeof pr->reason, "%s runs on the CPU: no GPU kernel to count",
                 e->name);
    } else if (!launched && rc) {
        pr->status = rc;
        snprintf(pr->reason, sizeof pr->reason, "%.250s", msg);
    } else if (!launched) {
        pr->status = TCJ_EUNSUP;
        snprintf(pr->reason, sizeof pr->reason,
                 "%s did not bracket its kernel for profiling (cupti_prof_launch)", e->name);
    }
    if (!rc && pr->status == 0)
        for (int k = 0; k < pr->n; k++) {
            const cupti_metric_def *d = cupti_metric_find(pr->name[k]);
            join_result_metric(res, pr->name[k], pr->value[k], d ? d->unit : "");
        }
    *id = runner_store(s, e, spec, res, rc, rc ? msg : NULL);
    if (*id)
        s->last_run_id = *id;
    return rc;
}

int64_t runner_record_store(session *s, const char *type, runner_members_fn members, void *ctx)
{
    if (!s->db)
        return 0;
    out_rec *r = out_rec_begin(type);
    members(ctx, r);
    char *json = out_rec_take(r);
    const store_record_rec rec = {.session_id = s->session_id,
                                  .command_id = s->command_id,
                                  .dataset_id = s->dataset_id,
                                  .type = type,
                                  .json = json};
    int64_t id = store_record_put(s->db, &rec);
    free(json);
    if (id < 0) {
        out_printf("warning: the %s was not stored: %s\n", type, err_msg());
        err_clear();
        id = 0;
    }
    return id;
}

void runner_record_emit(const char *type, int64_t id, runner_members_fn members, void *ctx)
{
    out_rec *r = out_rec_begin(type);
    char key[64];
    snprintf(key, sizeof key, "%s_id", type);
    out_rec_int(r, key, id);
    members(ctx, r);
    out_rec_end(r);
}
