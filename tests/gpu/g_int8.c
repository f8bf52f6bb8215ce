/* GPU tests of the int8 engine (kernels/fmt_int8.cu, src/engine_int8.c):
 * - on data whose values are 8-bit integers (sift5k, letter, the olivetti
 *   faces, generated u8 and s8 sets, a lattice with pairs exactly at eps)
 *   its count, per-point counts and pair set equal fp64's exactly, both
 *   kernels (wgmma and mma.sync), symmetric on and off. Its d2 are the
 *   exact integers carried as FP32: equal to (float) of fp64's. HIST over
 *   edges on half-integers (exact in FP32 below 2^23) equals fp64's where
 *   the top edge is below 2^23;
 * - quantized (set int8-scale on) it equals its CPU twin cpu-int8 in every
 *   mode (both compute the same integers);
 * - refusals give one line and the next run works.
 * Skipped without a CUDA device. */
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

/* int8 against ref (fp64 or cpu-int8) in every mode. */
static void int8_vs(const char *what, const dataset *ds, double eps, const engine_opts *o,
                    const char *ref)
{
    const double top = floor(eps * eps) + 0.5;
    const int hist = top < 0x1p23;
    double edges[17];
    for (int b = 0; b <= 16; b++)
        edges[b] = floor(eps * eps * b / 16) + 0.5;
    const double *ed = hist ? edges : NULL;
    join_outcome a = jo_run_as(engine_find("int8"), ds, eps, 0, ds->n, o, ed, 16);
    CHECK_MSG(a.rc == 0, "%s: int8: %s", what, err_msg());
    join_outcome r = jo_run_as(engine_find(ref), ds, eps, 0, ds->n, o, ed, 16);
    CHECK_MSG(r.rc == 0, "%s: %s: %s", what, ref, err_msg());
    if (a.rc || r.rc)
        return;
    CHECK_MSG(a.count == r.count, "%s: count %llu vs %s %llu", what, (unsigned long long)a.count,
              ref, (unsigned long long)r.count);
    size_t bad = 0;
    for (size_t q = 0; q < ds->n; q++)
        bad += a.perpoint[q] != r.perpoint[q];
    CHECK_MSG(bad == 0, "%s: %zu per-point counts differ", what, bad);
    CHECK_MSG(a.npairs == r.npairs, "%s: %zu pairs vs %zu", what, a.npairs, r.npairs);
    /* The integer d2 of a pair, from the reference's d2 / c^2 (c = 1
     * unquantized), carried as FP32 and divided by c^2 as the drain does. */
    const double c = jo_metric(&a, "int8_scale") > 0 ? jo_metric(&a, "int8_scale") : 1.0;
    size_t dbad = 0;
    for (size_t p = 0; p < a.npairs && p < r.npairs; p++) {
        CHECK(a.pairs[p].i == r.pairs[p].i && a.pairs[p].j == r.pairs[p].j);
        const double want = (double)(float)nearbyint(r.pairs[p].d2 * c * c) * (1.0 / (c * c));
        dbad += a.pairs[p].d2 != want;
    }
    CHECK_MSG(dbad == 0, "%s: %zu d2 differ from %s's integer as FP32", what, dbad, ref);
    if (hist) {
        CHECK_EQ_INT(a.below, r.below);
        for (int b = 0; b < 16; b++)
            CHECK_MSG(a.hist[b] == r.hist[b], "%s: hist[%d] %llu vs %llu", what, b,
                      (unsigned long long)a.hist[b], (unsigned long long)r.hist[b]);
    }
    fprintf(stderr, "%s (%s, sym %d): %llu pairs equal %s's; %s\n", what, a.variant, o->symmetric,
            (unsigned long long)a.count, ref, hist ? "hist too" : "no hist (d2 beyond 2^23)");
    jo_free(&a);
    jo_free(&r);
}

static void int8_vs_fp64_all(const char *what, const dataset *ds, double eps)
{
    engine_opts o;
    engine_opts_default(&o);
    for (int sym = 0; sym < 2; sym++)
        for (int mma = 0; mma < 2; mma++) {
            o.symmetric = sym;
            o.fasted_off = mma ? FASTED_OFF_WGMMA : 0;
            int8_vs(what, ds, eps, &o, "fp64");
        }
}

static dataset set_random_ints(const char *name, size_t n, size_t d, double lo, double hi)
{
    dataset ds = make(name, n, d);
    rng_state = 21 + n;
    for (size_t k = 0; k < n * d; k++)
        ((double *)ds.v)[k] = lo + floor((hi - lo + 1) * rng_unit());
    finish(&ds);
    return ds;
}

TEST(int8_equals_fp64_on_integer_data)
{
    need_gpu();
    static const struct {
        const char *file;
        size_t limit;
    } files[] = {{"sift5k.fvecs", 0}, {"letter.csv", 4000}, {"olivetti_400x4096_u8.npy", 0}};
    for (size_t f = 0; f < 3; f++) {
        dataset ds;
        CHECK_MSG(load_shared(files[f].file, files[f].limit, &ds) == 0, "%s: %s", files[f].file,
                  err_msg());
        int8_vs_fp64_all(files[f].file, &ds, eps_for(&ds, 10));
        int8_vs_fp64_all(files[f].file, &ds, eps_for(&ds, 100));
        dataset_free(&ds);
    }
    dataset ds = set_random_ints("u8 d=300", 3001, 300, 0, 255);
    int8_vs_fp64_all("u8 d=300", &ds, eps_for(&ds, 20));
    dataset_free(&ds);
    ds = set_random_ints("s8 d=37", 2500, 37, -128, 127);
    int8_vs_fp64_all("s8 d=37", &ds, eps_for(&ds, 20));
    dataset_free(&ds);
    ds = set_lattice();
    int8_vs_fp64_all("lattice 1", &ds, 1.0);
    int8_vs_fp64_all("lattice 2", &ds, 2.0);
    dataset_free(&ds);
    ds = set_ints();
    int8_vs_fp64_all("ints r3", &ds, sqrt(3.0));
    dataset_free(&ds);
}

TEST(int8_quantized_equals_cpu_int8)
{
    need_gpu();
    engine_opts o;
    engine_opts_default(&o);
    o.int8_scale = 1;
    dataset g = set_gauss();
    for (int sym = 0; sym < 2; sym++) {
        o.symmetric = sym;
        int8_vs("gauss quantized", &g, eps_for(&g, 30), &o, "cpu-int8");
    }
    join_outcome a = jo_run_as(engine_find("int8"), &g, eps_for(&g, 30), 0, g.n, &o, NULL, 0);
    CHECK(a.rc == 0 && jo_metric(&a, "inexact") == 1 && jo_metric(&a, "int8_scale") > 0);
    jo_free(&a);
    dataset_free(&g);
}

TEST(int8_refuses_with_one_line)
{
    need_gpu();
    engine_opts o;
    engine_opts_default(&o);
    dataset g = set_gauss();
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &g;
    s.eps = 0.1;
    s.q1 = g.n;
    s.opts = &o;
    join_result r;
    CHECK(engine_run(engine_find("int8"), &s, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "not an integer");
    CHECK(strchr(err_msg(), '\n') == NULL);
    dataset w = set_random_ints("wide", 100, 4, -300, 300);
    s.ds = &w;
    s.q1 = w.n;
    CHECK(engine_run(engine_find("int8"), &s, &r) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "beyond 8 bits");
    dataset ok = set_random_ints("ok", 200, 4, 0, 9);
    s.ds = &ok;
    s.q1 = ok.n;
    s.eps = 3;
    CHECK_MSG(engine_run(engine_find("int8"), &s, &r) == 0, "%s", err_msg());
    dataset_free(&g);
    dataset_free(&w);
    dataset_free(&ok);
}
