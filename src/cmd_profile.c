/* profile ENGINE [sol]: one COUNT-mode run with hardware counters for its
 * main kernel (CUPTI range profiler, src/cupti_prof.h), stored by metric
 * name with the run and printed as a Speed Of Light style table. Without
 * counters the run still happens and the reason is shown. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "cupti_prof.h"
#include "err.h"
#include "out.h"
#include "runner.h"

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

static void emit_record(const cupti_prof_result *pr, const engine *e, int64_t run_id, int sol,
                        int ran)
{
    out_rec *r = out_rec_begin("profile");
    out_rec_int(r, "run_id", run_id);
    out_rec_str(r, "engine", e->name);
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

static int profile_run(session *s, int argc, char **argv)
{
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
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

    static cupti_prof_result pr;
    cupti_prof_request(sol, &pr);
    join_result res;
    rc = engine_run(e, &spec, &res);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", rc ? err_msg() : "");
    int launched = cupti_prof_finish();
    if (!e->gpu) {
        pr.status = TCJ_EUNSUP;
        snprintf(pr.reason, sizeof pr.reason, "%s runs on the CPU: no GPU kernel to count",
                 e->name);
    } else if (!launched && rc) {
        pr.status = rc;
        snprintf(pr.reason, sizeof pr.reason, "%.250s", msg);
    } else if (!launched) {
        pr.status = TCJ_EUNSUP;
        snprintf(pr.reason, sizeof pr.reason,
                 "%s did not bracket its kernel for profiling (cupti_prof_launch)", e->name);
    }
    if (!rc && pr.status == 0)
        for (int k = 0; k < pr.n; k++) {
            const cupti_metric_def *d = cupti_metric_find(pr.name[k]);
            join_result_metric(&res, pr.name[k], pr.value[k], d ? d->unit : "");
        }

    int64_t id = runner_store(s, e, &spec, &res, rc, rc ? msg : NULL);
    if (id)
        s->last_run_id = id;
    if (rc) {
        emit_record(&pr, e, id, sol, 0);
        if (rc == TCJ_ECANCEL)
            return err_set(rc, "profile %s cancelled", e->name);
        return err_set(rc, "%s", msg);
    }
    runner_report(s, e, &spec, &res, id);
    if (pr.status == 0)
        print_counters(&pr, id, e->name);
    else
        out_printf("  counters: N/A: %s\n", pr.reason);
    emit_record(&pr, e, id, sol, 1);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static const char *const profile_options[] = {NULL};

const cmd cmd_profile = {
    .name = "profile",
    .usage = "profile ENGINE [sol]",
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
            "printed.",
    .min_args = 1,
    .max_args = 2,
    .options = profile_options,
    .run = profile_run,
};
