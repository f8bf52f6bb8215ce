/* cpu-int8, the int8 engine's CPU twin (src/engine_cpu_int8.c,
 * src/int8_plan.c):
 * - on 8-bit integer data (u8 and s8, a lattice with pairs exactly at eps,
 *   the shared sift5k and letter) it equals cpu in every mode, d2 bit for
 *   bit: its distances are exact integers, as fp64's are;
 * - quantized (int8_scale on) it equals a brute force written here: each
 *   value rint(v c) with c = 255/max (non-negative data) or 127/max|v|,
 *   integer d2 <= floor(eps^2 c^2), d2 reported / c^2;
 * - refusals: non-integers, integers beyond 8 bits, d above 33025, each
 *   one line naming the value and what to use. */
#include "exact_sets.h"
#include "int8_plan.h"

static dataset ints(const char *name, size_t n, size_t d, double lo, double hi, uint64_t seed)
{
    dataset ds = make(name, n, d);
    rng_state = seed;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = lo + floor((hi - lo + 1) * rng_unit());
    finish(&ds);
    return ds;
}

static void same_as_cpu(const char *what, const dataset *ds, double eps)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    double edges[9];
    for (int b = 0; b <= 8; b++)
        edges[b] = floor(eps * eps * b / 8) + 0.5; /* half-integers: exact in FP32 here */
    join_outcome a = jo_run(engine_find("cpu-int8"), ds, eps, 0, ds->n, &o, edges, 8);
    join_outcome r = jo_run(engine_find("cpu"), ds, eps, 0, ds->n, &o, edges, 8);
    char why[200];
    CHECK_MSG(jo_same(&a, &r, ds->n, why, sizeof why), "%s: cpu-int8 and cpu differ: %s", what,
              why);
    CHECK(jo_metric(&a, "inexact") == 0);
    jo_free(&a);
    jo_free(&r);
}

TEST(cpu_int8_equals_cpu_on_integer_data)
{
    dataset ds = ints("u8", 700, 24, 0, 255, 5);
    same_as_cpu("u8", &ds, eps_for(&ds, 15));
    dataset_free(&ds);
    ds = ints("s8", 600, 9, -128, 127, 6);
    same_as_cpu("s8", &ds, eps_for(&ds, 15));
    dataset_free(&ds);
    ds = set_lattice();
    same_as_cpu("lattice", &ds, 1.0);
    same_as_cpu("lattice", &ds, 2.0);
    dataset_free(&ds);
    CHECK(load_shared("sift5k.fvecs", 1500, &ds) == 0);
    same_as_cpu("sift5k", &ds, eps_for(&ds, 20));
    dataset_free(&ds);
    CHECK(load_shared("letter.csv", 2000, &ds) == 0);
    same_as_cpu("letter", &ds, 3.0);
    dataset_free(&ds);
}

static int by_ij(const void *x, const void *y)
{
    const jo_pair *a = x, *b = y;
    return a->i != b->i ? (a->i < b->i ? -1 : 1) : (a->j > b->j) - (a->j < b->j);
}

TEST(cpu_int8_quantized_by_hand)
{
    for (int neg = 0; neg < 2; neg++) {
        dataset ds = make("reals", 400, 7);
        rng_state = 70 + neg;
        double m = 0;
        for (size_t k = 0; k < ds.n * ds.d; k++) {
            ((double *)ds.v)[k] = neg ? 3.0 * rng_unit() - 1.7 : 0.25 * rng_unit();
            m = fmax(m, fabs(((double *)ds.v)[k]));
        }
        finish(&ds);
        const double c = (neg ? 127.0 : 255.0) / m, eps = neg ? 1.0 : 0.08;
        double *q = xmalloc(ds.n * ds.d * sizeof *q);
        for (size_t k = 0; k < ds.n * ds.d; k++)
            q[k] = nearbyint(((double *)ds.v)[k] * c);
        const double lim = floor(eps * eps * c * c);
        size_t np = 0;
        jo_pair *want = xmalloc(ds.n * ds.n * sizeof *want);
        for (uint32_t i = 0; i < ds.n; i++)
            for (uint32_t j = 0; j < ds.n; j++) {
                double s = 0;
                for (size_t k = 0; k < ds.d; k++) {
                    const double t = q[i * ds.d + k] - q[j * ds.d + k];
                    s += t * t;
                }
                if (s <= lim)
                    want[np++] = (jo_pair){i, j, s / (c * c)};
            }
        engine_opts o;
        engine_opts_default(&o);
        o.int8_scale = 1;
        join_outcome a = jo_run(engine_find("cpu-int8"), &ds, eps, 0, ds.n, &o, NULL, 0);
        CHECK_MSG(a.rc == 0, "%s", err_msg());
        CHECK(jo_metric(&a, "inexact") == 1);
        CHECK(fabs(jo_metric(&a, "int8_scale") - c) <= 1e-15 * c);
        qsort(want, np, sizeof *want, by_ij);
        CHECK_EQ_INT(a.npairs, np);
        CHECK_EQ_INT(a.count, np);
        size_t bad = 0;
        for (size_t p = 0; p < np && p < a.npairs; p++)
            bad += a.pairs[p].i != want[p].i || a.pairs[p].j != want[p].j ||
                   fabs(a.pairs[p].d2 - want[p].d2) > 1e-15 * want[p].d2;
        CHECK_EQ_INT(bad, 0);
        fprintf(stderr, "quantized %s: scale %.6g, %zu pairs as by hand\n", neg ? "s8" : "u8", c,
                np);
        jo_free(&a);
        free(want);
        free(q);
        dataset_free(&ds);
    }
}

TEST(cpu_int8_refusals)
{
    engine_opts o;
    engine_opts_default(&o);
    dataset ds = make("halves", 10, 3);
    for (size_t k = 0; k < 30; k++)
        ((double *)ds.v)[k] = k == 17 ? 2.5 : 1.0;
    finish(&ds);
    join_outcome a = jo_run(engine_find("cpu-int8"), &ds, 1.0, 0, ds.n, &o, NULL, 0);
    CHECK(a.rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "row 5, column 2: 2.5");
    CHECK_STR_CONTAINS(err_msg(), "set int8-scale on");
    jo_free(&a);
    dataset_free(&ds);
    ds = ints("wide", 20, 3, -1, 256, 9);
    a = jo_run(engine_find("cpu-int8"), &ds, 1.0, 0, ds.n, &o, NULL, 0);
    CHECK(a.rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "beyond 8 bits");
    jo_free(&a);
    dataset_free(&ds);
    ds = make("tall", 2, INT8_MAX_D + 1);
    finish(&ds);
    a = jo_run(engine_find("cpu-int8"), &ds, 1.0, 0, ds.n, &o, NULL, 0);
    CHECK(a.rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "exact up to d = 33025");
    jo_free(&a);
    dataset_free(&ds);
}

/* The threaded scan (src/par.c) names the first value that does not fit,
 * wherever the ranges fall: one planted late, one earlier. */
TEST(int8_plan_names_the_first_bad_value)
{
    const size_t n = (size_t)1 << 19, d = 4;
    dataset ds = make("big", n, d);
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = (double)(k % 200);
    ((double *)ds.v)[n * d - 2] = 0.5;
    finish(&ds);
    int8_plan pl;
    CHECK(int8_plan_for(&ds, 0, "int8", &pl) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "row 524287, column 2: 0.5");
    ((double *)ds.v)[1000 * d + 1] = 7.25;
    finish(&ds);
    CHECK(int8_plan_for(&ds, 0, "int8", &pl) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "row 1000, column 1: 7.25");
    dataset_free(&ds);
}
