/* GPU tests of `exact`: it equals `fp64` exactly in every mode (count,
 * per-point counts, pair set with bit-identical FP64 distances, histogram)
 * on the shared datasets and on adversarial sets (pairs exactly at eps,
 * duplicates, a large common offset, values near FP16's largest, integer
 * ties, clusters), symmetric tiles on and off, and with a pair buffer far
 * smaller than the candidates; the share of the result computed again in
 * FP64 is printed. fp64 is the independent reference (its own kernel,
 * direct (a-b)^2 form, checked against cpu in g_fp64). Data beyond FP16's
 * range are refused with one line. Skipped without a CUDA device. */
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static double g_refined;

/* run_all with the engine's refined count of its COUNT run. */
static int run_exact(const dataset *ds, double eps, int sym, size_t batch, outcome *o)
{
    const engine *e = engine_find("exact");
    engine_opts opts;
    engine_opts_default(&opts);
    opts.symmetric = sym;
    if (batch)
        opts.batch_pairs = batch;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = 0;
    s.q1 = ds->n;
    s.mode = JOIN_COUNT;
    s.opts = &opts;
    join_result res;
    int rc = engine_run(e, &s, &res);
    if (rc)
        return rc;
    g_refined = 0;
    for (int k = 0; k < res.nmetric; k++)
        if (strcmp(res.metric[k].name, "refined_pairs") == 0)
            g_refined = res.metric[k].value;
    return run_all_opts("exact", ds, eps, &opts, o);
}

static void check_exact(const char *what, dataset *ds, double eps)
{
    outcome ref;
    CHECK_MSG(run_all("fp64", ds, eps, &ref) == 0, "%s fp64: %s", what, err_msg());
    for (int v = 0; v < 3; v++) {
        const int sym = v != 1;
        const size_t batch = v == 2 ? 1024 : 0;
        outcome a;
        CHECK_MSG(run_exact(ds, eps, sym, batch, &a) == 0, "%s: %s", what, err_msg());
        const char *diff = same(ds, &a, &ref);
        printf("# %-12s n=%zu d=%zu eps=%.6g sym=%d batch=%zu: %llu pairs, %.0f computed again "
               "in FP64 (%.2fx the result)\n",
               what, ds->n, ds->d, eps, sym, batch, (unsigned long long)ref.count, g_refined,
               ref.count ? g_refined / (double)ref.count : 0.0);
        CHECK_MSG(diff == NULL, "%s (sym %d, batch %zu): exact and fp64 differ in the %s", what,
                  sym, batch, diff);
        outcome_free(&a);
    }
    outcome_free(&ref);
}

TEST(exact_equals_fp64_adversarial)
{
    need_gpu();
    exact_each_adversarial(check_exact);
}

TEST(exact_equals_fp64_shared_datasets)
{
    need_gpu();
    const char *bad = exact_each_shared(check_exact, 0);
    CHECK_MSG(bad == NULL, "%s: %s", bad, err_msg());
}

TEST(exact_refuses_beyond_fp16)
{
    need_gpu();
    dataset ds = set_huge();
    outcome o;
    int rc = run_all("exact", &ds, 1.0, &o);
    CHECK_EQ_INT(rc, TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "65504") && strstr(err_msg(), "fp64") && !strchr(err_msg(), '\n'),
              "%s", err_msg());
    free(o.counts);
    dataset_free(&ds);
    /* the next run goes on */
    ds = set_ints();
    CHECK_MSG(run_all("exact", &ds, 2.0, &o) == 0, "%s", err_msg());
    outcome_free(&o);
    dataset_free(&ds);
}
