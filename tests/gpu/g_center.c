/* GPU tests of `set center` (src/center.c):
 * - exact with centring forced on equals fp64 in every mode on the
 *   adversarial sets (its bound then works with the centred norms);
 * - fasted (and bf16) centred compute exactly what they compute on the
 *   data centred by hand: the same pair set with d2 bit for bit, and the
 *   same k-distances; the run records centred 1;
 * - 1e4 + [0, 0.5) (FP16's spacing at 1e4 is 8): uncentred fasted joins
 *   every pair, exact still equals fp64 there (auto centres it).
 * Skipped without a CUDA device. */
#include "center.h"
#include "exact_path.h"
#include "exact_sets.h"
#include "kdist.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static void exact_centred(const char *what, dataset *ds, double eps)
{
    engine_opts o;
    engine_opts_default(&o);
    join_outcome ref = exact_run("fp64", ds, eps, &o, 0);
    o.center = CENTER_ON;
    o.exact_path = EXACT_PATH_PASS; /* centring is the FP16 pass's */
    join_outcome a = exact_run("exact", ds, eps, &o, 0);
    CHECK_MSG(a.rc == 0 && ref.rc == 0, "%s: %s", what, err_msg());
    char why[200];
    CHECK_MSG(jo_same(&a, &ref, ds->n, why, sizeof why), "%s centred: exact and fp64 differ: %s",
              what, why);
    CHECK(jo_metric(&a, "centred") == 1);
    jo_free(&a);
    jo_free(&ref);
}

TEST(exact_centred_equals_fp64)
{
    need_gpu();
    exact_each_adversarial(exact_centred);
}

static dataset by_hand(const dataset *ds)
{
    center_facts f;
    const double *m = center_means(ds, &f);
    dataset h = make("by hand", ds->n, ds->d);
    for (size_t i = 0; i < ds->n * ds->d; i++)
        ((double *)h.v)[i] = dataset_value(ds, i) - m[i % ds->d];
    finish(&h);
    return h;
}

TEST(fasted_centred_equals_centred_by_hand)
{
    need_gpu();
    dataset sets[2] = {set_offset(), set_gauss()};
    static const char *const engines[] = {"fasted", "bf16"};
    for (int t = 0; t < 2; t++) {
        dataset *ds = &sets[t];
        dataset h = by_hand(ds);
        const double eps = eps_for(ds, 30);
        for (int e = 0; e < 2; e++) {
            engine_opts on, off;
            engine_opts_default(&on);
            engine_opts_default(&off);
            on.center = CENTER_ON;
            off.center = CENTER_OFF;
            join_outcome a = jo_run_as(engine_find(engines[e]), ds, eps, 0, ds->n, &on, NULL, 0);
            join_outcome b = jo_run_as(engine_find(engines[e]), &h, eps, 0, h.n, &off, NULL, 0);
            CHECK_MSG(a.rc == 0 && b.rc == 0, "%s", err_msg());
            char why[200];
            CHECK_MSG(jo_same(&a, &b, ds->n, why, sizeof why), "%s %s: %s", engines[e], ds->name,
                      why);
            CHECK(jo_metric(&a, "centred") == 1 && jo_metric(&b, "centred") == 0);
            jo_free(&a);
            jo_free(&b);
            /* k-distances too */
            double *ka = xmalloc(ds->n * sizeof *ka), *kb = xmalloc(ds->n * sizeof *kb);
            kdist_spec s;
            memset(&s, 0, sizeof s);
            s.q1 = ds->n;
            s.k = 8;
            join_result r;
            s.ds = ds;
            s.opts = &on;
            s.out = ka;
            CHECK_MSG(kdist_run(engine_find(engines[e]), &s, &r) == 0, "%s", err_msg());
            s.ds = &h;
            s.opts = &off;
            s.out = kb;
            CHECK_MSG(kdist_run(engine_find(engines[e]), &s, &r) == 0, "%s", err_msg());
            size_t bad = 0;
            for (size_t q = 0; q < ds->n; q++)
                bad += ka[q] != kb[q];
            CHECK_MSG(bad == 0, "%s %s: %zu k-distances differ", engines[e], ds->name, bad);
            free(ka);
            free(kb);
        }
        dataset_free(&h);
        dataset_free(ds);
    }
}

TEST(offset_collapses_uncentred)
{
    need_gpu();
    dataset ds = make("offset-big", 800, 5);
    rng_state = 21;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 1e4 + 0.5 * rng_unit();
    finish(&ds);
    const double eps = eps_for(&ds, 20);
    engine_opts o;
    engine_opts_default(&o);
    o.center = CENTER_OFF;
    join_outcome off = jo_run_as(engine_find("fasted"), &ds, eps, 0, ds.n, &o, NULL, 0);
    o.center = CENTER_ON;
    join_outcome on = jo_run_as(engine_find("fasted"), &ds, eps, 0, ds.n, &o, NULL, 0);
    join_outcome ex = exact_run_default("exact", &ds, eps);
    join_outcome ref = exact_run_default("fp64", &ds, eps);
    CHECK_MSG(off.rc == 0 && on.rc == 0 && ex.rc == 0 && ref.rc == 0, "%s", err_msg());
    /* every value is 10000 in FP16: every pair at distance 0 */
    CHECK_EQ_INT(off.count, (uint64_t)ds.n * ds.n);
    CHECK(on.count < off.count / 10);
    char why[200];
    CHECK_MSG(jo_same(&ex, &ref, ds.n, why, sizeof why), "exact (auto) and fp64: %s", why);
    CHECK(jo_metric(&ex, "centred") == 1);
    printf("# offset 1e4: fasted uncentred %llu pairs, centred %llu, fp64 %llu\n",
           (unsigned long long)off.count, (unsigned long long)on.count,
           (unsigned long long)ref.count);
    jo_free(&off);
    jo_free(&on);
    jo_free(&ex);
    jo_free(&ref);
    dataset_free(&ds);
}
