/* Observability on a GPU: NVML reads a plausible SM clock during a fasted
 * run and stores it with the run; CUPTI gives percentages in [0, 100] for
 * the fasted kernel, or a stated reason; a profiled run counts the same
 * pairs as a plain one (replay passes must not add up). */
#include "check.h"
#include "cupti_prof.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"
#include "nvml.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static dataset ds;

static int setup(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
    if (ds.n)
        return 0;
    gen_opts g = {0};
    g.kind = "uniform";
    g.n = 16384;
    g.d = 64;
    g.seed = 7;
    return dataset_generate(&g, &ds);
}

static int run_engine(const char *name, join_result *res, double eps)
{
    const engine *e = engine_find(name);
    if (!e)
        return -100;
    engine_opts o;
    engine_opts_default(&o);
    join_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.ds = &ds;
    spec.eps = eps;
    spec.q0 = 0;
    spec.q1 = ds.n;
    spec.mode = JOIN_COUNT;
    spec.opts = &o;
    return engine_run(e, &spec, res);
}

static int run_fasted(join_result *res, double eps)
{
    return run_engine("fasted", res, eps);
}

static double metric(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (strcmp(r->metric[k].name, name) == 0)
            return r->metric[k].value;
    return NAN;
}

TEST(nvml_clock_during_fasted_run)
{
    CHECK_EQ_INT(setup(), 0);
    CHECK_MSG(nvml_open() == 0, "NVML on a GPU machine: %s", err_msg());
    nvml_sample s;
    CHECK_EQ_INT(nvml_sample_now(0, &s), 0);
    CHECK(s.valid & NVML_V_SM);
    CHECK_MSG(s.sm_mhz > 0 && s.sm_mhz < 5000, "SM clock %g MHz", s.sm_mhz);

    static join_result res;
    CHECK_MSG(run_fasted(&res, 1.0) == 0, "fasted: %s", err_msg());
    double mn = metric(&res, "sm_clock_mhz.min"), mx = metric(&res, "sm_clock_mhz.max");
    double mean = metric(&res, "sm_clock_mhz.mean");
    CHECK_MSG(!isnan(mx), "no sm_clock_mhz metrics on a GPU run");
    CHECK_MSG(mx > 0 && mx < 5000, "SM clock max %g MHz", mx);
    CHECK(mn > 0 && mn <= mean && mean <= mx);
    CHECK(metric(&res, "nvml.samples") >= 2);
    double pw = metric(&res, "power_w.max");
    if (!isnan(pw))
        CHECK_MSG(pw > 0 && pw < 2000, "power %g W", pw);
    /* The samples of the run stay for the clocks panel. */
    nvml_sample buf[16];
    CHECK(nvml_series(buf, 16) >= 2);
    printf("# SM clock %.0f/%.0f/%.0f MHz, power max %.0f W, throttle mask %g\n", mn, mean, mx, pw,
           metric(&res, "throttle_reasons"));
}

TEST(cupti_counters_or_reason)
{
    CHECK_EQ_INT(setup(), 0);
    static join_result plain, prof;
    CHECK_MSG(run_fasted(&plain, 1.0) == 0, "fasted: %s", err_msg());

    static cupti_prof_result pr;
    cupti_prof_request(1, &pr);
    int rc = run_fasted(&prof, 1.0);
    int launched = cupti_prof_finish();
    CHECK_MSG(rc == 0, "fasted under profiling: %s", err_msg());
    CHECK_MSG(launched, "engine_gpu.c does not call cupti_prof_launch (fasted)");
    /* Replays must not change the result. */
    CHECK_EQ_INT(prof.pairs, plain.pairs);
    if (pr.status != 0) {
        CHECK_MSG(strlen(pr.reason) > 10, "no counters and no reason");
        printf("# counters N/A: %s\n", pr.reason);
        return;
    }
    CHECK(pr.n > 0);
    CHECK(pr.passes >= 1);
    int have_clock = 0, have_tensor = 0;
    for (int k = 0; k < pr.n; k++) {
        const cupti_metric_def *d = cupti_metric_find(pr.name[k]);
        CHECK_MSG(d, "unknown metric %s", pr.name[k]);
        printf("# %-28s %g %s\n", d->label, pr.value[k], d->unit);
        if (d->pct)
            CHECK_MSG(pr.value[k] >= 0 && pr.value[k] <= 100, "%s = %g", pr.name[k], pr.value[k]);
        if (strcmp(pr.name[k], "sm__cycles_elapsed.avg.per_second") == 0) {
            have_clock = 1;
            CHECK_MSG(pr.value[k] > 1e8 && pr.value[k] < 5e9, "SM clock %g Hz", pr.value[k]);
        }
        if (strstr(pr.name[k], "hmma"))
            have_tensor = pr.value[k] > 0;
    }
    CHECK(have_clock);
    /* FASTED's kernel is tensor-core work: the FP16 pipe must be busy. */
    CHECK(have_tensor);
}

TEST(profile_without_request_is_plain)
{
    CHECK_EQ_INT(setup(), 0);
    CHECK(!cupti_prof_pending());
    static join_result a;
    CHECK_EQ_INT(run_fasted(&a, 0.5), 0);
    CHECK_EQ_INT(cupti_prof_finish(), 0);
}

/* The FP64 tensor-core engine goes through the same profiling hook: the
 * FP64 tensor pipe is busy, or a reason is given; replays add nothing. */
TEST(cupti_ted_counters_or_reason)
{
    CHECK_EQ_INT(setup(), 0);
    static join_result plain, prof;
    CHECK_MSG(run_engine("ted", &plain, 0.5) == 0, "ted: %s", err_msg());
    static cupti_prof_result pr;
    cupti_prof_request(0, &pr);
    int rc = run_engine("ted", &prof, 0.5);
    int launched = cupti_prof_finish();
    CHECK_MSG(rc == 0, "ted under profiling: %s", err_msg());
    CHECK_MSG(launched, "src/engine_gpu.c does not call cupti_prof_launch (fp64)");
    CHECK_EQ_INT(prof.pairs, plain.pairs);
    if (pr.status != 0) {
        CHECK_MSG(strlen(pr.reason) > 10, "no counters and no reason");
        printf("# counters N/A: %s\n", pr.reason);
        return;
    }
    int have_fp64 = 0;
    for (int k = 0; k < pr.n; k++) {
        const cupti_metric_def *d = cupti_metric_find(pr.name[k]);
        CHECK_MSG(d, "unknown metric %s", pr.name[k]);
        if (d->pct)
            CHECK_MSG(pr.value[k] >= 0 && pr.value[k] <= 100, "%s = %g", pr.name[k], pr.value[k]);
        if (strstr(pr.name[k], "dmma")) {
            have_fp64 = 1;
            printf("# ted: %s %g %%\n", d->label, pr.value[k]);
            CHECK_MSG(pr.value[k] > 0, "FP64 tensor pipe idle during ted: %g", pr.value[k]);
        }
    }
    CHECK_MSG(have_fp64, "no FP64 tensor-pipe metric collected");
}
