/* profile ENGINE [sol]: one COUNT-mode run with hardware counters for its
 * main kernel (CUPTI range profiler, src/cupti_prof.h), stored by metric
 * name with the run and printed as a Speed Of Light style table. Without
 * counters the run still happens and the reason is shown. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cupti_prof.h"
#include "devices.h"
#include "err.h"
#include "kernels.h"
#include "out.h"
#include "paper_tables.h"
#include "runner.h"
#include "teach.h"

static void print_counters(const cupti_prof_result *pr, int64_t run_id, const char *engine)
{
    out_printf("  counters of run %lld (%s, %d replay passes):\n", (long long)run_id, engine,
               pr->passes);
    for (int k = 0; k < pr->n; k++) {
        const cupti_metric_def *d = cupti_metric_find(pr->name[k]);
        const char *label = d ? d->label : pr->name[k];
        double v = pr->value[k];
        if (d && d->pct) {
            char bar[32];
            int w = 20;
            int full = isnan(v) ? 0 : (int)lround((v < 0 ? 0 : v > 100 ? 100 : v) / 100.0 * w);
            for (int i = 0; i < w; i++)
                bar[i] = i < full ? '#' : '.';
            bar[w] = '\0';
            out_printf("    %-22s [%s] %6.2f %%  %s\n", label, bar, v, pr->name[k]);
        } else {
            out_printf("    %-22s %14.6g %-5s  %s\n", label, v, d ? d->unit : "", pr->name[k]);
        }
    }
}

/* device: the ordinal profiled over a `set devices` list, -1 otherwise. */
static void emit_record(const cupti_prof_result *pr, const engine *e, int64_t run_id, int sol,
                        int ran, int device)
{
    out_rec *r = out_rec_begin("profile");
    out_rec_int(r, "run_id", run_id);
    out_rec_str(r, "engine", e->name);
    if (device >= 0)
        out_rec_int(r, "device", device);
    out_rec_bool(r, "sol", sol);
    out_rec_bool(r, "ran", ran);
    out_rec_bool(r, "counters_ok", pr->status == 0);
    out_rec_str(r, "reason", pr->status ? pr->reason : NULL);
    out_rec_int(r, "replay_passes", pr->passes);
    out_rec_obj(r, "counters");
    for (int k = 0; pr->status == 0 && k < pr->n; k++)
        out_rec_dbl(r, pr->name[k], pr->value[k]);
    out_rec_close(r);
    out_rec_end(r);
}

/* ---- profile table6: the FASTED paper's Table 6 ---- */

#define T6_N 100000
#define T6_EPS 1.0 /* COUNT: the counters barely depend on it */

static double t6_metric(const cupti_prof_result *pr, const char *name)
{
    for (int k = 0; k < pr->n; k++)
        if (strcmp(pr->name[k], name) == 0)
            return pr->value[k];
    return NAN;
}

static int profile_table6(session *s, int argc, char **argv)
{
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    int stored = np == 2 && strcmp(pos[1], "stored") == 0;
    if (np > 2 || (np == 2 && !stored))
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("profile")->usage);
    size_t n = T6_N;
    const char *v;
    int rc;
    if ((v = cmd_opt(argc, argv, "n")) &&
        (rc = cmd_parse_count(v, "profile table6: n", 2, SIZE_MAX, &n)))
        return rc;
    if (stored) {
        teach_print_t6_stored(&teach_bench_doc, "profile table6 stored");
        return 0;
    }
    const engine *eng[2];
    for (int k = 0; k < 2; k++) {
        eng[k] = engine_find(paper_t6_engine[k]);
        if (!eng[k] || engine_available(eng[k], &s->eopt)) {
            char why[256];
            snprintf(why, sizeof why, "%s", eng[k] ? err_msg() : "engine missing from this build");
            err_clear();
            teach_print_t6_stored(&teach_bench_doc, why);
            return 0;
        }
    }
    teach_t6_cells c;
    teach_t6_init(&c);
    const double keep_eps = s->eps;
    const int keep_have = s->have_eps;
    rc = 0;
    for (int di = 0; di < 3 && !rc && !s->cancel; di++) {
        char an[32], ad[32];
        snprintf(an, sizeof an, "n=%zu", n);
        snprintf(ad, sizeof ad, "d=%d", paper_t6_d[di]);
        char *gv[] = {"uniform", an, ad, "seed=1", NULL};
        if ((rc = cmd_find("gen")->run(s, 4, gv)))
            break;
        for (int ei = 0; ei < 2 && !s->cancel; ei++) {
            const int col = ei * 3 + di;
            join_spec spec;
            runner_progress pg;
            s->eps = T6_EPS;
            s->have_eps = 1;
            rc = runner_spec(s, eng[ei], &spec, &pg);
            s->eps = keep_eps;
            s->have_eps = keep_have;
            if (rc)
                break;
            engine_opts eo = s->eopt;
            eo.symmetric = 0; /* the paper's kernels compute every tile */
            /* One GPU, as the paper measured: a `set devices` list gives
             * its first device (CUPTI profiles one device at a time). */
            int ord[KERN_MAX_DEVICES];
            if (devices_listed(&eo) && devices_resolve(&eo, ord) > 0) {
                eo.device = ord[0];
                eo.devices = 0;
                eo.devices_all = 0;
            }
            session tmp = *s;
            tmp.eopt = eo;
            spec.opts = &tmp.eopt;
            static cupti_prof_result pr;
            join_result res;
            char msg[1024];
            int64_t id;
            int r1 = runner_profile_run(&tmp, eng[ei], &spec, 0, &pr, &res, &id, msg, sizeof msg);
            s->last_run_id = tmp.last_run_id;
            c.run[col] = id;
            if (r1 == TCJ_ECANCEL) {
                rc = r1;
                break;
            }
            if (r1) {
                snprintf(c.note[col], sizeof c.note[col], "run %lld failed: %.120s", (long long)id,
                         msg);
                continue;
            }
            if (pr.status) {
                snprintf(c.note[col], sizeof c.note[col], "run %lld: counters N/A: %.110s",
                         (long long)id, pr.reason);
                continue;
            }
            for (int m = 0; paper_t6[m].label; m++) {
                const char *name = ei ? paper_t6[m].metric_ted : paper_t6[m].metric_fasted;
                c.v[m][col] = t6_metric(&pr, name) * paper_t6[m].scale;
            }
            snprintf(c.note[col], sizeof c.note[col], "run %lld, %s", (long long)id,
                     res.variant[0] ? res.variant : eng[ei]->name);
        }
    }
    /* a cancel inside the gen or a run says what was cancelled: the table */
    if (rc == TCJ_ECANCEL || (rc == 0 && s->cancel))
        rc = err_cancelled_note(s->db ? ERR_NOTE_KEPT : NULL, "profile table6");
    if (rc)
        return rc;
    char title[256];
    snprintf(title, sizeof title,
             "profile table6: uniform n=%zu, symmetric off, COUNT, eps=%g (the paper's Table 6 "
             "metric set)",
             n, T6_EPS);
    teach_print_t6(&c, title, 1);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

/* profile over a `set devices` list. CUPTI's range profiler counts the
 * kernels of one device's context per session, and a spread run launches
 * from a thread per device with a share that changes from pass to pass, so
 * replayed passes would not count the same work. Each listed device in turn
 * runs the whole COUNT join alone with counters instead: one stored run and
 * one table per device, each comparable with a one-device profile. */
static int profile_devices(session *s, const engine *e, const join_spec *spec, int sol,
                           const int *ord, int nd)
{
    char list[160];
    devices_describe(&s->eopt, list, sizeof list);
    out_printf("profile %s over set devices %s: counters come per device (CUPTI profiles one "
               "device at a time), so each device runs the whole join alone, in turn\n",
               e->name, list);
    for (int k = 0; k < nd; k++) {
        if (s->cancel)
            return err_cancelled_note(s->db && k ? ERR_NOTE_KEPT : NULL, "profile %s", e->name);
        session tmp = *s;
        tmp.eopt.devices = 0;
        tmp.eopt.devices_all = 0;
        tmp.eopt.device = ord[k];
        join_spec one = *spec;
        one.opts = &tmp.eopt;
        static cupti_prof_result pr;
        join_result res;
        char msg[1024];
        int64_t id;
        int rc = runner_profile_run(&tmp, e, &one, sol, &pr, &res, &id, msg, sizeof msg);
        s->last_run_id = tmp.last_run_id;
        if (rc) {
            emit_record(&pr, e, id, sol, 0, ord[k]);
            if (rc == TCJ_ECANCEL)
                return err_cancelled_note(s->db && k ? ERR_NOTE_KEPT : NULL, "profile %s", e->name);
            return err_set(rc, "device %d: %s", ord[k], msg);
        }
        out_printf("device %d:\n", ord[k]);
        runner_report(&tmp, e, &one, &res, id);
        if (pr.status == 0)
            print_counters(&pr, id, e->name);
        else
            out_printf("  counters: N/A: %s\n", pr.reason);
        emit_record(&pr, e, id, sol, 1, ord[k]);
    }
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static int profile_run(session *s, int argc, char **argv)
{
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    if (np >= 1 && strcmp(pos[0], "table6") == 0)
        return profile_table6(s, argc, argv);
    if (np < 1 || np > 2 || (np == 2 && strcmp(pos[1], "sol") != 0))
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("profile")->usage);
    int sol = np == 2;
    const engine *e;
    int rc;
    if ((rc = runner_find_engine(pos[0], &e)))
        return rc;
    join_spec spec;
    runner_progress pg;
    if ((rc = runner_spec(s, e, &spec, &pg)))
        return rc;
    int ord[KERN_MAX_DEVICES];
    const int nd = e->gpu && devices_listed(&s->eopt) ? devices_resolve(&s->eopt, ord) : 0;
    if (nd > 0)
        return profile_devices(s, e, &spec, sol, ord, nd);

    static cupti_prof_result pr;
    join_result res;
    char msg[1024];
    int64_t id;
    rc = runner_profile_run(s, e, &spec, sol, &pr, &res, &id, msg, sizeof msg);
    if (rc) {
        emit_record(&pr, e, id, sol, 0, -1);
        if (rc == TCJ_ECANCEL)
            return err_cancelled("profile %s", e->name);
        return err_set(rc, "%s", msg);
    }
    runner_report(s, e, &spec, &res, id);
    if (pr.status == 0)
        print_counters(&pr, id, e->name);
    else
        out_printf("  counters: N/A: %s\n", pr.reason);
    emit_record(&pr, e, id, sol, 1, -1);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static const char *const profile_options[] = {"n", NULL};
static const cmd_form profile_forms[] = {{"table6", profile_options}, {NULL, NULL}};

const cmd cmd_profile = {
    .name = "profile",
    .usage = "profile ENGINE [sol] | profile table6 [stored] [n=N]",
    .summary = "run with hardware counters (CUPTI) for the engine's main kernel",
    .help = "Run ENGINE once in count mode on the current dataset and eps with the\n"
            "CUPTI range profiler collecting, for its main kernel launch, the FASTED\n"
            "paper's Table 6 set: DRAM throughput %, shared-memory throughput %,\n"
            "shared-memory bank conflicts % (conflicts over wavefronts), L2 hit rate %,\n"
            "tensor pipe utilization FP16 and FP64 %, and the SM clock.\n"
            "  sol    also ncu's Speed Of Light header (SM, memory, L1, L2 throughput %,\n"
            "         duration, cycles, DRAM clock)\n"
            "The kernel is replayed once per counter pass, so the run's timings include\n"
            "the passes. Counters are stored by metric name with the run. Without them\n"
            "(no GPU, no libcupti, insufficient privileges, another profiler such as\n"
            "ncu attached, unsupported chip) the run still happens and the reason is\n"
            "printed.\n"
            "Over a set devices list each listed device in turn runs the whole join alone\n"
            "with counters (CUPTI's range profiler measures one device at a time, and a\n"
            "spread run's shares change from pass to pass): one stored run and one counter\n"
            "table per device, each labelled with its ordinal (JSON: device).\n"
            "profile table6 measures that set for fasted and ted on generated uniform data\n"
            "at d = 128, 256 and 4096 (|D| = 100000, symmetric off; each dataset becomes the\n"
            "current one in turn, each run is stored) and prints it in the paper's layout,\n"
            "the paper's value in brackets ('—' where this build lacks it; 'oos' for\n"
            "TED-Join at d=4096, which the paper could not run: out of shared memory).\n"
            "  n=N      another |D|\n"
            "  stored   print the stored table (docs/BENCHMARKS.md) beside the paper's\n"
            "Without a GPU, profile table6 prints the stored table, marked as not measured\n"
            "here. Over a set devices list, table6 runs on the first listed device.",
    .min_args = 1,
    .max_args = 3,
    .options = profile_options,
    .forms = profile_forms,
    .run = profile_run,
};
