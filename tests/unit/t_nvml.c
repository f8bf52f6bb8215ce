/* NVML without the library: every metric N/A with a reason, never 0, and a
 * GPU run gets no clock metrics rather than fake zeros. Also the throttle
 * reason decoding. */
#include "check.h"
#include "engine.h"
#include "err.h"
#include "nvml.h"

#include <math.h>

static void no_library(void)
{
    nvml_set_library("/nonexistent/tcjoin-test/libnvidia-ml.so.1");
}

TEST(open_reports_reason)
{
    no_library();
    CHECK_EQ_INT(nvml_open(), TCJ_EUNSUP);
    CHECK_STR_CONTAINS(err_msg(), "NVML not available");
    CHECK_STR_CONTAINS(nvml_unavailable_reason(), "not found");
    /* The outcome is remembered. */
    CHECK_EQ_INT(nvml_open(), TCJ_EUNSUP);
}

TEST(sample_is_na_not_zero)
{
    no_library();
    nvml_sample s;
    s.sm_mhz = 1234;
    s.valid = ~0u;
    CHECK_EQ_INT(nvml_sample_now(0, &s), TCJ_EUNSUP);
    CHECK_EQ_INT(s.valid, 0);
    CHECK(isnan(s.sm_mhz));
    CHECK(isnan(s.mem_mhz));
    CHECK(isnan(s.power_w));
    CHECK(isnan(s.temp_c));
    CHECK(isnan(s.power_limit_w));
}

TEST(sampler_without_library)
{
    no_library();
    CHECK_EQ_INT(nvml_sampler_start(0, 20), TCJ_EUNSUP);
    CHECK(!nvml_sampler_running());
    nvml_stats st;
    nvml_sampler_stop(&st);
    CHECK_EQ_INT(st.samples, 0);
    CHECK(isnan(st.sm_mhz.min) && isnan(st.sm_mhz.mean) && isnan(st.sm_mhz.max));
    CHECK(isnan(st.power_w.mean));
    CHECK(isnan(st.power_limit_w));
    CHECK_STR_CONTAINS(st.reason, "not found");
    nvml_sample buf[4];
    CHECK_EQ_INT(nvml_series(buf, 4), 0);
    join_result r;
    memset(&r, 0, sizeof r);
    nvml_add_metrics(&r, &st);
    CHECK_EQ_INT(r.nmetric, 0);
}

/* A pretend GPU engine that says it can run here: engine_run samples NVML
 * around it. */
static int fake_available(const engine_opts *o)
{
    (void)o;
    return 0;
}

static int fake_run(const join_spec *s, join_result *r)
{
    r->pairs = s->q1 - s->q0;
    return 0;
}

TEST(gpu_run_gets_no_fake_clock_metrics)
{
    no_library();
    static const engine fake = {.name = "fake-gpu",
                                .precision = "fp64",
                                .summary = "test",
                                .gpu = 1,
                                .available = fake_available,
                                .run = fake_run};
    double x[4] = {0, 1, 2, 3};
    dataset ds = {0};
    ds.name = "t";
    ds.n = 4;
    ds.d = 1;
    ds.v = x;
    engine_opts o;
    engine_opts_default(&o);
    join_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.ds = &ds;
    spec.eps = 0.5;
    spec.q1 = 4;
    spec.opts = &o;
    join_result res;
    CHECK_EQ_INT(engine_run(&fake, &spec, &res), 0);
    CHECK_EQ_INT(res.pairs, 4);
    for (int k = 0; k < res.nmetric; k++)
        CHECK_MSG(strncmp(res.metric[k].name, "sm_clock", 8) != 0 &&
                      strncmp(res.metric[k].name, "power", 5) != 0,
                  "metric %s = %g without NVML", res.metric[k].name, res.metric[k].value);
}

TEST(reasons_decoded)
{
    char b[160];
    nvml_reasons_str(0, b, sizeof b);
    CHECK(strcmp(b, "none") == 0);
    nvml_reasons_str(NVML_R_SW_POWER_CAP | NVML_R_HW_THERMAL, b, sizeof b);
    CHECK(strcmp(b, "power cap, hw thermal") == 0);
    nvml_reasons_str(NVML_R_GPU_IDLE | 0x1000, b, sizeof b);
    CHECK(strcmp(b, "idle, 0x1000") == 0);
}

/* A run over a device list: each device's figures under its own names
 * (devK_ as the shares), the plain names for one device as before. */
TEST(per_device_metric_names)
{
    char b[128];
    nvml_metric_name(b, sizeof b, -1, "power_w.mean");
    CHECK(strcmp(b, "power_w.mean") == 0);
    nvml_metric_name(b, sizeof b, 3, "power_w.mean");
    CHECK(strcmp(b, "dev3_power_w.mean") == 0);
    nvml_stats st;
    memset(&st, 0, sizeof st);
    st.samples = 2;
    st.sm_mhz = (nvml_stat){1500, 1700, 1900, 2};
    st.mem_mhz = (nvml_stat){NAN, NAN, NAN, 0}; /* not read: left out */
    st.power_w = (nvml_stat){300, 450, 600, 2};
    st.temp_c = (nvml_stat){40, 45, 50, 2};
    st.power_limit_w = 700;
    st.reasons_any = NVML_R_SW_POWER_CAP;
    st.have_reasons = 1;
    join_result one, two;
    memset(&one, 0, sizeof one);
    memset(&two, 0, sizeof two);
    nvml_add_metrics(&one, &st);
    nvml_add_metrics_dev(&two, &st, 1);
    /* The same figures, one for one, under the prefixed names. */
    CHECK_EQ_INT(one.nmetric, 10);
    CHECK_EQ_INT(two.nmetric, one.nmetric);
    for (int k = 0; k < one.nmetric; k++) {
        char want[128];
        snprintf(want, sizeof want, "dev1_%s", one.metric[k].name);
        CHECK_MSG(strcmp(two.metric[k].name, want) == 0, "%s vs %s", two.metric[k].name, want);
        CHECK(two.metric[k].value == one.metric[k].value);
        CHECK(strcmp(two.metric[k].unit, one.metric[k].unit) == 0);
    }
    CHECK(strcmp(one.metric[0].name, "sm_clock_mhz.min") == 0 && one.metric[0].value == 1500);
    /* Two devices' worth fits the run record with the shares beside it. */
    join_result r;
    memset(&r, 0, sizeof r);
    nvml_add_metrics(&r, &st);
    for (int d = 0; d < NVML_MAX_DEVS; d++)
        nvml_add_metrics_dev(&r, &st, d);
    CHECK_MSG(r.nmetric + 3 * NVML_MAX_DEVS + 24 <= JOIN_MAX_METRICS,
              "%d NVML metrics for %d devices leave too little room", r.nmetric, NVML_MAX_DEVS);
}

TEST(sampler_list_without_library)
{
    no_library();
    int devs[2] = {0, 1};
    CHECK_EQ_INT(nvml_sampler_start_list(devs, 2, 20), TCJ_EUNSUP);
    CHECK(!nvml_sampler_running());
    nvml_stats st, each[NVML_MAX_DEVS];
    nvml_sampler_stop(&st);
    int got[NVML_MAX_DEVS];
    const int n = nvml_sampler_devices(each, got, NVML_MAX_DEVS);
    CHECK(n <= 1);
    for (int k = 0; k < n; k++)
        CHECK_EQ_INT(each[k].samples, 0);
}
