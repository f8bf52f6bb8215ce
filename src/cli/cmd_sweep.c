/* sweep S[,S...]: the ε that gives each target selectivity on the current
 * dataset with an engine, in few passes (src/sweep.h), each search and its
 * steps stored; `use` makes the last ε found current. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "cmd.h"
#include "err.h"
#include "out.h"
#include "runner.h"
#include "sweep.h"

#define SWEEP_MAX_TARGETS 64

/* Steps go to the log as they are made. */
typedef struct step_ctx {
    session *s;
    int64_t sweep_id;
} step_ctx;

static int store_step(void *vctx, const sweep_step *st)
{
    step_ctx *c = vctx;
    if (c->s->db && c->sweep_id > 0 &&
        store_sweep_step(c->s->db, c->sweep_id, st->step, st->method, st->eps, st->selectivity,
                         st->pairs, st->seconds))
        cmd_store_failed();
    return 0;
}

/* The search's outcome in the log (nothing without a log or a sweep row). */
static void store_end(const step_ctx *c, const sweep_result *r, const char *note)
{
    if (c->s->db && c->sweep_id > 0 &&
        store_sweep_end(c->s->db, c->sweep_id, r->eps, r->selectivity, r->passes, r->seconds, note))
        cmd_store_failed();
}

static const char *status_name(sweep_status st)
{
    return st == SWEEP_OK ? "ok" : st == SWEEP_UNREACHABLE ? "unreachable" : "unresolved";
}

static int parse_targets(const char *word, double *t, int *nt)
{
    char *copy = xstrdup(word), *save = NULL;
    int rc = 0;
    *nt = 0;
    for (char *p = strtok_r(copy, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (*nt == SWEEP_MAX_TARGETS) {
            rc = err_set(TCJ_EINVAL, "sweep: at most %d targets at once", SWEEP_MAX_TARGETS);
            break;
        }
        if ((rc = cmd_parse_double(p, "sweep: target selectivity", &t[*nt])))
            break;
        (*nt)++;
    }
    free(copy);
    if (!rc && *nt == 0)
        rc = err_set(TCJ_EINVAL, "sweep: expected target selectivities, e.g. sweep 64,128");
    return rc;
}

static void describe_unreachable(const sweep_result *r, char *buf, size_t size)
{
    if (r->have_below)
        snprintf(buf, size,
                 "S=%g unreachable: the count jumps over it at one distance, from S=%.6g "
                 "(eps %.9g) to S=%.6g (eps %.9g)",
                 r->target, r->below_s, r->below_eps, r->above_s, r->above_eps);
    else
        snprintf(buf, size,
                 "S=%g unreachable: coincident points alone give S=%.6g at every eps below "
                 "the smallest nonzero distance",
                 r->target, r->above_s);
}

static void describe_unresolved(const sweep_result *r, char *buf, size_t size)
{
    snprintf(buf, size,
             "S=%g not within tolerance after %d passes: closest S=%.6g (eps %.9g) and "
             "S=%.6g (eps %.9g)",
             r->target, r->passes, r->below_s, r->below_eps, r->above_s, r->above_eps);
}

/* Which side of the target the chosen eps lies on. */
static const char *sweep_side_taken(const sweep_result *r)
{
    return r->selectivity < r->target ? "below" : "above";
}

/* A target not reached is a warning, not an error: one record for --json. */
static void warn_rec(const char *note, const char *side, const sweep_result *r)
{
    out_rec *w = out_rec_begin("warning");
    out_rec_str(w, "command", "sweep");
    out_rec_str(w, "message", note);
    out_rec_dbl(w, "target", r->target);
    out_rec_str(w, "taken", side);
    out_rec_dbl(w, "eps", r->eps);
    out_rec_dbl(w, "selectivity", r->selectivity);
    out_rec_end(w);
}

static int sweep_run(session *s, int argc, char **argv)
{
    const cmd *self = cmd_find("sweep");
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    int use = np == 2 && strcmp(pos[1], "use") == 0;
    if (np < 1 || np > 2 || (np == 2 && !use))
        return err_set(TCJ_EINVAL, "Usage: %s", self ? self->usage : "sweep S[,S...]");

    /* Everything is checked before anything is stored. */
    double targets[SWEEP_MAX_TARGETS];
    int nt = 0, rc;
    if ((rc = parse_targets(pos[0], targets, &nt)))
        return rc;
    const dataset *ds = s->have_ds ? &s->ds : NULL;
    for (int k = 0; k < nt; k++)
        if ((rc = sweep_validate(ds, targets[k])))
            return rc;
    sweep_opts o;
    sweep_opts_default(&o);
    const char *v;
    if ((v = cmd_opt(argc, argv, "tol"))) {
        double pct;
        if ((rc = cmd_parse_double(v, "sweep: tol (percent)", &pct)))
            return rc;
        if (!(pct > 0 && pct < 100))
            return err_set(TCJ_EINVAL, "sweep: tol is a percentage in (0, 100), got '%s'", v);
        o.tol = pct / 100;
    }
    int bisect = 0;
    if ((v = cmd_opt(argc, argv, "method"))) {
        if (strcmp(v, "bisect") == 0)
            bisect = 1;
        else if (strcmp(v, "hist") != 0)
            return err_set(TCJ_EINVAL, "sweep: method is hist or bisect, got '%s'", v);
    }
    /* Unnamed, the engine is the reference itself: exact, and no check
     * run after (and on low-d data exact's grid, where the default row
     * would join every pair). */
    const engine *e;
    const engine *ref = runner_reference_engine(&s->eopt);
    const char *ename = cmd_opt(argc, argv, "engine");
    if ((rc = runner_engine_opt(&s->eopt, ename ? ename : ref ? ref->name : NULL, &e)))
        return rc;

    sweep_sample smp;
    if ((rc = sweep_sample_build(ds, 0, &smp)))
        return rc;
    o.eng = e;
    o.eopt = &s->eopt;
    o.cancel = &s->cancel;
    runner_progress pg = {.s = s, .what = "sweep"};
    o.progress = runner_on_progress;
    o.progress_ctx = &pg;
    step_ctx sc = {s, 0};
    o.on_step = store_step;
    o.step_ctx = &sc;

    out_printf("sweep on %s (n=%zu d=%zu), engine %s, %s, tol %g%%; sample %zu x %zu rows in "
               "%.3f s\n",
               ds->name ? ds->name : "dataset", ds->n, ds->d, e->name,
               bisect ? "bisection (a COUNT pass per step)" : "histogram passes", o.tol * 100,
               smp.m, smp.c, smp.seconds);
    out_printf("  reference: %s%s\n", ref ? ref->name : "none",
               ref == e ? " (the same engine: no extra run)"
                        : " (one COUNT run per target, not a pass)");
    out_printf("  %10s  %-17s %-12s %6s %9s  %-12s %s\n", "target S", "eps", "S reached", "passes",
               "time", "ref S", "status");
    int nbad = 0;
    const char *last_side = NULL;
    double last_eps = 0;
    int last_ok = 0;
    for (int k = 0; k < nt; k++) {
        /* The estimate comes before the pass, so a long pass has a number
         * to look at while it runs. */
        char estbuf[40];
        snprintf(estbuf, sizeof estbuf, "%.6g", sweep_sample_eps(&smp, targets[k]));
        out_printf("  %10g  %-17s (the sample's estimate; passes follow)\n", targets[k], estbuf);
        if (s->ui && s->ui->refresh)
            s->ui->refresh(s->ui_ctx);
        sweep_result r;
        sc.sweep_id = s->db ? store_sweep_begin(s->db, s->session_id, s->dataset_id, e->name,
                                                bisect ? "bisect" : "hist", targets[k], o.tol)
                            : 0;
        if (sc.sweep_id < 0)
            cmd_store_failed();
        rc = bisect ? sweep_bisect(ds, &smp, targets[k], &o, &r)
                    : sweep_solve(ds, &smp, targets[k], &o, &r);
        char note[512] = "";
        if (rc) {
            /* a cancel is not an error; the steps made are in the log */
            if (rc == TCJ_ECANCEL)
                err_cancelled_note(s->db ? ERR_NOTE_KEPT : NULL, "sweep");
            snprintf(note, sizeof note, "%s%s", rc == TCJ_ECANCEL ? "" : "error: ", err_msg());
            store_end(&sc, &r, note);
            sweep_sample_free(&smp);
            return rc;
        }
        if (r.status == SWEEP_UNREACHABLE)
            describe_unreachable(&r, note, sizeof note);
        else if (r.status == SWEEP_UNRESOLVED)
            describe_unresolved(&r, note, sizeof note);

        /* The reference's S at the ε found: one extra COUNT run, apart. */
        double ref_s = r.selectivity, ref_t = 0;
        const char *ref_name = ref ? ref->name : "none";
        if (ref && ref != e && r.eps > 0) {
            join_spec spec;
            memset(&spec, 0, sizeof spec);
            spec.ds = ds;
            spec.eps = r.eps;
            spec.q1 = ds->n;
            spec.mode = JOIN_COUNT;
            spec.opts = &s->eopt;
            spec.cancel = &s->cancel;
            join_result res;
            if ((rc = engine_run(ref, &spec, &res))) {
                if (rc == TCJ_ECANCEL)
                    err_cancelled_note(s->db ? ERR_NOTE_KEPT : NULL, "sweep");
                store_end(&sc, &r, rc == TCJ_ECANCEL ? err_msg() : "reference run failed");
                sweep_sample_free(&smp);
                return rc;
            }
            ref_s = engine_selectivity(res.pairs, ds->n);
            ref_t = res.seconds;
        }
        store_end(&sc, &r, note[0] ? note : NULL);

        char epsbuf[40];
        snprintf(epsbuf, sizeof epsbuf, "%.12g", r.eps);
        out_printf("  %10g  %-17s %-12.6g %6d %7.3f s  %-12.6g %s\n", targets[k], epsbuf,
                   r.selectivity, r.passes, r.seconds, ref_s, status_name(r.status));
        const char *side = NULL;
        if (note[0]) {
            side = sweep_side_taken(&r);
            out_printf("    warning: %s; closest reachable: eps %.9g (%s the target), S=%.6g\n",
                       note, r.eps, side, r.selectivity);
            warn_rec(note, side, &r);
            nbad++;
        }

        out_rec *rec = out_rec_begin("sweep");
        out_rec_int(rec, "sweep_id", sc.sweep_id > 0 ? sc.sweep_id : 0);
        out_rec_str(rec, "engine", e->name);
        out_rec_str(rec, "method", bisect ? "bisect" : "hist");
        out_rec_str(rec, "dataset", ds->name);
        out_rec_int(rec, "n", (int64_t)ds->n);
        out_rec_dbl(rec, "target", targets[k]);
        out_rec_dbl(rec, "tolerance", o.tol);
        out_rec_str(rec, "status", status_name(r.status));
        out_rec_dbl(rec, "eps", r.eps);
        out_rec_dbl(rec, "selectivity", r.selectivity);
        out_rec_int(rec, "pairs", (int64_t)r.pairs);
        out_rec_int(rec, "passes", r.passes);
        out_rec_dbl(rec, "time_s", r.seconds);
        out_rec_dbl(rec, "sample_time_s", smp.seconds);
        out_rec_dbl(rec, "est_eps", r.est_eps);
        out_rec_str(rec, "ref_engine", ref_name);
        out_rec_dbl(rec, "ref_selectivity", ref_s);
        out_rec_dbl(rec, "ref_time_s", ref_t);
        if (r.status != SWEEP_OK) {
            if (r.have_below) {
                out_rec_dbl(rec, "below_eps", r.below_eps);
                out_rec_dbl(rec, "below_selectivity", r.below_s);
            }
            if (r.have_above) {
                out_rec_dbl(rec, "above_eps", r.above_eps);
                out_rec_dbl(rec, "above_selectivity", r.above_s);
            }
            out_rec_str(rec, "note", note);
            out_rec_str(rec, "taken", side);
        }
        out_rec_end(rec);
        last_eps = r.eps;
        last_ok = r.status == SWEEP_OK;
        last_side = side;
    }
    sweep_sample_free(&smp);

    /* An unreachable or unresolved target still ends with a usable eps:
     * the closest one reachable, named as such, never a dead end. */
    if (use && last_eps > 0) {
        s->eps = last_eps;
        s->have_eps = 1;
        char num[40];
        out_fmt_double(num, sizeof num, last_eps);
        if (last_ok)
            out_printf("eps %s (from the sweep)\n", num);
        else
            out_printf("eps %s (from the sweep: the closest reachable, %s the target)\n", num,
                       last_side);
        out_rec *rec = out_rec_begin("eps");
        out_rec_dbl(rec, "eps", last_eps);
        out_rec_end(rec);
    } else if (use) {
        out_printf("warning: the sweep found no eps > 0 to use; eps unchanged\n");
    }
    if (nbad)
        out_printf("%d target%s not reached within tolerance: see the warnings above\n", nbad,
                   nbad > 1 ? "s" : "");
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static const char *const sweep_options[] = {"engine", "tol", "method", NULL};

const cmd cmd_sweep = {
    .name = "sweep",
    .usage = "sweep S[,S...] [use] [engine=NAME] [tol=PCT] [method=hist|bisect]",
    .summary = "find eps for target selectivities, in few passes",
    .help = "For each target selectivity S (mean neighbours per point, self excluded) find the\n"
            "eps that gives it on the current dataset with the engine (default: the\n"
            "reference, exact on a GPU, else cpu). A sample of rows (exact FP64 distances on\n"
            "the CPU) estimates eps and a bracket (where the target's rank holds few sample\n"
            "values, from a larger rank scaled down by the data's dimension); one\n"
            "histogram pass of the engine gives S at ~1000 edges\n"
            "over the bracket; at most one refining pass splits the bin holding the target.\n"
            "A bracket that missed is widened (a pass). The search stops within tol percent\n"
            "of S (default 0.5), or says the target is unreachable when the count jumps over\n"
            "it at one distance (ties, common on integer data), with the closest S on both\n"
            "sides. That is a warning, not an error: the closest reachable eps is kept (and\n"
            "with use made current), and the warning says which side it took and its S.\n"
            "The sample's estimate of eps is printed before the passes.\n"
            "Printed per target: eps, S reached, passes over the data, time, and S at that\n"
            "eps from the reference (exact on a GPU, else cpu; one extra COUNT run, not\n"
            "counted as a pass, where the engine is another). The eps found is for that\n"
            "engine's arithmetic.\n"
            "  use            make the (last) eps found the current eps\n"
            "  engine=NAME    engine for the passes (default: the reference engine, exact on a\n"
            "                 GPU, else cpu, so no check run follows)\n"
            "  tol=PCT        tolerance in percent of S (default 0.5)\n"
            "  method=bisect  the baseline instead: bisection with a COUNT join per step\n"
            "Every search and each of its steps is stored (sweeps, sweep_steps).",
    .min_args = 1,
    .max_args = -1,
    .options = sweep_options,
    .run = sweep_run,
};
