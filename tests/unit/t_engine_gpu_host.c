/* The GPU engines' host side by role (src/engine_gpu_int.h), on the CPU:
 * 1. args: every option lands in kern_join_args once, the defaults hold;
 * 2. xform: an unsigned row refuses negative data with one line, and under
 *    `set shift on` takes the column minima as its origin; a plain row
 *    takes none;
 * 3. result: the metrics a join records and the k-distance's subset, in
 *    order, TFLOPS from the paper's count 2 nq n d / t, exact's fractions,
 *    the devices' shares and the scale; kernel codes as TCJ_E* codes. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "engine_gpu_int.h"
#include "err.h"

static dataset make_ds(const double *v, size_t n, size_t d)
{
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.name = xstrdup("t");
    ds.n = n;
    ds.d = d;
    ds.v = xmalloc(n * d * sizeof(double));
    memcpy(ds.v, v, n * d * sizeof(double));
    return ds;
}

TEST(args_take_every_option_once)
{
    const double v[] = {1, 2, 3, 4, 5, 6};
    dataset ds = make_ds(v, 3, 2);
    engine_opts o;
    engine_opts_default(&o);
    o.symmetric = 1;
    o.device = 0;
    o.gpu_mem = 12345;
    o.fasted_off = 5;
    o.fp8_acc_fast = 1;
    o.ted_paper = 1;
    o.index_k = 4;
    o.batch_pairs = 0;
    kern_join_args a;
    engine_gpu_args(&ds, 1, 3, &o, NULL, NULL, NULL, NULL, &a);
    CHECK(a.n == 3 && a.d == 2 && a.q0 == 1 && a.q1 == 3 && a.x == ds.v && a.x_bytes == 8);
    CHECK(a.symmetric == 1 && a.mem_cap == 12345 && a.off == 5 && a.acc_fast == 1);
    CHECK(a.ted_paper == 1 && a.index_k == 4);
    CHECK(a.batch_pairs == (size_t)1 << 22); /* 0: the default batch */
    CHECK(a.eps == 0 && a.center == NULL && a.scale == 0);
    o.batch_pairs = 77;
    engine_gpu_args(&ds, 0, 3, &o, NULL, NULL, NULL, NULL, &a);
    CHECK(a.batch_pairs == 77);
    dataset_free(&ds);
}

TEST(xform_shift_and_refusal)
{
    const double v[] = {-1, 5, 2, -3, 4, 7};
    dataset ds = make_ds(v, 3, 2);
    engine_opts o;
    engine_opts_default(&o);
    const engine *ue = engine_find("ue5m3");
    CHECK(ue && ue->shifts && !ue->centers);
    kern_join_args a;
    gpu_xform x;
    engine_gpu_args(&ds, 0, 3, &o, NULL, NULL, NULL, NULL, &a);
    err_clear();
    CHECK(engine_gpu_xform(ue, &ds, &o, NULL, 0, &a, &x) != 0);
    CHECK(strstr(err_msg(), "ue5m3") == err_msg() && !strchr(err_msg(), '\n'));
    o.shift = 1;
    CHECK_EQ_INT(engine_gpu_xform(ue, &ds, &o, NULL, 0, &a, &x), 0);
    CHECK(x.shifted == 1 && !x.scaled && a.center && a.center[0] == -1 && a.center[1] == -3);
    /* a row that neither centres nor shifts keeps the data as loaded; a
     * given scale passes through */
    const engine *cpu = engine_find("cpu");
    double eps = 1;
    CHECK_EQ_INT(engine_gpu_xform(cpu, &ds, &o, &eps, 4.0, &a, &x), 0);
    CHECK(a.center == NULL && a.scale == 4.0 && !x.shifted && !x.scaled);
    dataset_free(&ds);
}

static int index_of(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (strcmp(r->metric[k].name, name) == 0)
            return k;
    return -1;
}

TEST(result_metrics_for_join_and_kdist)
{
    /* a tensor-core exact row: any non-NULL format stands for one */
    static const kern_format fake = {.name = "fake"};
    engine e = {.name = "tc", .format = &fake, .exact = 1, .centers = 1};
    kern_join_args a;
    memset(&a, 0, sizeof a);
    a.n = 1000;
    a.q0 = 100;
    a.q1 = 600;
    a.mode = KJOIN_PAIRS;
    kern_join_result r;
    memset(&r, 0, sizeof r);
    r.pairs = 400;
    r.d_padded = 64;
    r.t_kernel = 0.5;
    r.symmetric = 1;
    r.ex.refined = 100;
    r.ex.band = 40;
    r.ndevices = 2;
    r.share[0].device = 0;
    r.share[1].device = 3;
    r.share[1].pairs = 9;
    gpu_xform x = {.scaled = 1, .fit = {.scale = -3, .underflow = 2}};
    join_result j;
    memset(&j, 0, sizeof j);
    engine_gpu_metrics(&e, &a, &r, &x, 1, &j);
    const char *order[] = {"cache_hit",        "centred",        "launches",     "buffer_refills",
                           "device_mem_peak",  "buffers_shrunk", "pair_buffer",  "refined_pairs",
                           "refined_fraction", "band_pairs",     "listed_pairs", "band_fraction",
                           "sequential_pairs", "refine_kernel",  "devices",      "dev0_items",
                           "dev0_kernel_s",    "dev0_pairs",     "dev3_items",   "dev3_kernel_s",
                           "dev3_pairs",       "tflops_padded",  "tflops_paper", "scale_log2",
                           "underflow_values"};
    const int n = (int)(sizeof order / sizeof *order);
    CHECK_EQ_INT(j.nmetric, n);
    for (int k = 0; k < n && k < j.nmetric; k++)
        CHECK_MSG(strcmp(j.metric[k].name, order[k]) == 0, "%d: %s, expected %s", k,
                  j.metric[k].name, order[k]);
    /* 2 nq n d / t: 2 * 500 * 1000 * 64 / 0.5 = 1.28e8 flop/s = 1.28e-4 TFLOPS */
    CHECK(j.metric[index_of(&j, "tflops_paper")].value == 2.0 * 500 * 1000 * 64 / 0.5 / 1e12);
    CHECK(j.metric[index_of(&j, "tflops_padded")].value ==
          0.5 * j.metric[index_of(&j, "tflops_paper")].value);
    CHECK(j.metric[index_of(&j, "refined_fraction")].value == 0.25);
    CHECK(j.metric[index_of(&j, "band_fraction")].value == 0.1);
    CHECK(j.metric[index_of(&j, "dev3_pairs")].value == 9);
    CHECK(j.metric[index_of(&j, "scale_log2")].value == -3);

    /* the k-distance: no refills, pair buffer, exact's counters or TFLOPS */
    join_result kd;
    memset(&kd, 0, sizeof kd);
    engine_gpu_metrics(&e, &a, &r, &x, 0, &kd);
    const char *korder[] = {"cache_hit",       "centred",       "launches",      "device_mem_peak",
                            "devices",         "dev0_items",    "dev0_kernel_s", "dev0_pairs",
                            "dev3_items",      "dev3_kernel_s", "dev3_pairs",    "scale_log2",
                            "underflow_values"};
    const int kn = (int)(sizeof korder / sizeof *korder);
    CHECK_EQ_INT(kd.nmetric, kn);
    for (int k = 0; k < kn && k < kd.nmetric; k++)
        CHECK_MSG(strcmp(kd.metric[k].name, korder[k]) == 0, "%d: %s", k, kd.metric[k].name);

    /* the FP64 grid's run: its candidates are the pairs examined, and the
     * tensor cores' TFLOPS (n^2 work) are not claimed for it */
    r.examined = 12345;
    join_result g;
    memset(&g, 0, sizeof g);
    engine_gpu_metrics(&e, &a, &r, &x, 1, &g);
    CHECK(index_of(&g, "pairs_examined") >= 0);
    CHECK(g.metric[index_of(&g, "pairs_examined")].value == 12345);
    CHECK(index_of(&g, "tflops_paper") < 0);
    CHECK(index_of(&g, "tflops_padded") < 0);
    int pruned = 0;
    CHECK(engine_pairs_examined(&g, 500, 1000, &pruned) == 12345);
    CHECK(pruned);
}

TEST(result_timing_and_codes)
{
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.d = 7;
    kern_join_result r;
    memset(&r, 0, sizeof r);
    r.t_h2d = 1;
    r.t_kernel = 2;
    r.t_d2h = 3;
    r.t_sink = 4;
    r.convert_name = "convert";
    r.t_convert = 5;
    snprintf(r.device_name, sizeof r.device_name, "dev");
    join_result res;
    memset(&res, 0, sizeof res);
    engine_gpu_timing(&r, &ds, "select", &res);
    CHECK(res.kernel_seconds == 2 && res.d_padded == 7 && strcmp(res.device, "dev") == 0);
    const char *ph[] = {"h2d", "convert", "kernel", "d2h", "select"};
    const double sec[] = {1, 5, 2, 3, 4};
    CHECK_EQ_INT(res.nphase, 5);
    for (int k = 0; k < 5 && k < res.nphase; k++)
        CHECK(strcmp(res.phase[k].name, ph[k]) == 0 && res.phase[k].seconds == sec[k]);
    CHECK_EQ_INT(engine_gpu_error("x", KERN_OK), 0);
    CHECK_EQ_INT(engine_gpu_error("x", KERN_ECANCEL), TCJ_ECANCEL);
    CHECK_EQ_INT(engine_gpu_error("x", KERN_ESINK), TCJ_EIO);
    err_clear();
}
