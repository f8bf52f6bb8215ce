/* GPU tests of `exact`: it equals `fp64` exactly in every mode (count,
 * per-point counts, pair set with bit-identical FP64 distances, histogram)
 * on the shared datasets and on adversarial sets (pairs exactly at eps,
 * duplicates, a large common offset, values near FP16's largest, integer
 * ties, clusters), symmetric tiles on and off, and with 1000-pair batches
 * (a buffer far smaller than the candidates); the band (the pairs the
 * bound leaves to FP64) is printed as a share of the result. fp64 is the independent reference (its
 * own kernel, direct (a-b)^2 form, checked against cpu in g_fp64). Data beyond FP16's range are
 * scaled down by a power of two (recorded) and still equal fp64; a value no scale brings in range
 * (not finite) is refused with one line. Skipped without a CUDA device. */
#include "center_exact.h"
#include "exact_path.h"
#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

/* exact on path against fp64 (the reference, once) with symmetric tiles
 * on and off, and with 1000-pair batches (many refills of its buffer). */
static void check_exact_path(const char *what, dataset *ds, double eps, int path)
{
    engine_opts opts;
    engine_opts_default(&opts);
    join_outcome ref = exact_run("fp64", ds, eps, &opts, 0);
    opts.exact_path = path;
    CHECK_MSG(ref.rc == 0, "%s fp64: %s", what, err_msg());
    for (int v = 0; v < 3; v++) {
        const int sym = v != 1, small = v == 2;
        opts.symmetric = sym;
        join_outcome a = exact_run("exact", ds, eps, &opts, small);
        CHECK_MSG(a.rc == 0, "%s: %s", what, err_msg());
        char why[200];
        const int same = jo_same(&a, &ref, ds->n, why, sizeof why);
        /* The COUNT run's: it computes in FP64 only what its bound left. */
        const double refined = jo_metric(&a, "refined_pairs"), band = jo_metric(&a, "band_pairs");
        printf("# %-12s n=%zu d=%zu eps=%.6g sym=%d small=%d: %llu pairs, band %.0f (%.4f of the "
               "result%s)\n",
               what, ds->n, ds->d, eps, sym, small, (unsigned long long)ref.count, band,
               ref.count ? band / (double)ref.count : 0.0, sym ? ", unordered pairs" : "");
        CHECK_MSG(same, "%s (sym %d, small batches %d): exact and fp64 differ: %s", what, sym,
                  small, why);
        CHECK_MSG(band >= 0 && refined == band,
                  "%s: COUNT computed %.0f pairs in FP64 but its band held %.0f", what, refined,
                  band);
        /* The screen decides the band from a fast sum and leaves the
         * pairs fp64's own d2 might put on either side to fp64's order: a
         * part of the band, and on the lattice the pairs exactly at eps
         * (d2 = eps^2 exactly, which no range short of a point decides). */
        const double seq = jo_metric(&a, "sequential_pairs");
        printf("#   screen left %.0f of the band's %.0f to fp64's order\n", seq, band);
        CHECK_MSG(seq >= 0 && seq <= refined,
                  "%s: %.0f pairs summed in fp64's order, of %.0f refined", what, seq, refined);
        if (strncmp(what, "lattice", 7) == 0)
            CHECK_MSG(seq > 0, "%s: the screen decided pairs exactly at eps", what);
        /* COUNT's epilogue lists only its band, bounded with the row's
         * own terms and the column tile's largest (rounded up): a subset
         * of the candidates PERPOINT's pass lists (every pair under the
         * pass threshold), holding every pair of the FP64 band. When the
         * FP64 bound decides three quarters of the result, the epilogue
         * must decide some too (at least the pairs of a point with
         * itself, d~2 = 0), so it lists fewer. */
        const double listed = jo_metric(&a, "listed_pairs"),
                     all = jr_metric(&a.perpoint_res, "listed_pairs");
        CHECK_MSG(listed >= band && listed <= all,
                  "%s: COUNT listed %.0f pairs: fewer than its band %.0f or more than the "
                  "pass's %.0f candidates",
                  what, listed, band, all);
        if (4 * band <= (double)ref.count && ref.count > 0)
            CHECK_MSG(listed < all,
                      "%s: COUNT listed all %.0f candidates for a result of %llu: the "
                      "epilogue decided none",
                      what, listed, (unsigned long long)ref.count);
        jo_free(&a);
    }
    jo_free(&ref);
}

/* The pass and its band (auto would take the FP64 grid on the low-d sets
 * with a wide band, g_exact_grid tests that path; or cut by clusters,
 * below). */
static void check_exact(const char *what, dataset *ds, double eps)
{
    check_exact_path(what, ds, eps, EXACT_PATH_PASS);
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

/* Beyond 65504: scaled by 2^k, k the largest with max |v| 2^k <= 65504
 * of the values converted (centred when auto centres, which the run
 * records), and fp64's results in every mode. */
TEST(exact_scales_beyond_fp16)
{
    need_gpu();
    dataset sets[2] = {set_huge(), set_wide()};
    for (int k = 0; k < 2; k++) {
        dataset *ds = &sets[k];
        const double eps = k ? eps_for(ds, 30) : 6.0;
        const double *m = center_pick_exact(ds, CENTER_DEFAULT, eps);
        const int want = exact_want_scale_m(ds, m);
        check_exact(ds->name, ds, eps);
        engine_opts pass;
        engine_opts_default(&pass);
        pass.exact_path = EXACT_PATH_PASS; /* the scale is the pass's */
        join_outcome a = exact_run("exact", ds, eps, &pass, 0);
        CHECK_MSG(a.rc == 0, "%s: %s", ds->name, err_msg());
        CHECK(exact_want_scale(ds) < 0 && jo_metric(&a, "centred") == (m != NULL));
        CHECK_NEAR(jo_metric(&a, "scale_log2"), want, 0);
        jo_free(&a);
        dataset_free(ds);
    }
}

/* Above d = 256 the pass promotes its sums (kern_fmt_fp16x) and takes
 * the tighter bound (2'); with a teaching switch off it runs fp16's
 * unpromoted kernels under bound (2). Both equal fp64 in every mode; the
 * variant says which ran; both bands are printed. */
TEST(exact_promoted_pass_equals_fp64)
{
    need_gpu();
    gen_opts gs[2] = {
        {.kind = "gauss", .n = 2000, .d = 320, .seed = 5, .opt = {{"clusters", "6"}}, .nopt = 1},
        {.kind = "uniform", .n = 1500, .d = 1024, .seed = 6},
    };
    for (int k = 0; k < 2; k++) {
        dataset ds = {0};
        CHECK(dataset_generate(&gs[k], &ds) == 0);
        const double eps = eps_for(&ds, 20);
        check_exact(gs[k].kind, &ds, eps);
        engine_opts opts;
        engine_opts_default(&opts);
        join_outcome ref = exact_run("fp64", &ds, eps, &opts, 0);
        join_outcome a = exact_run("exact", &ds, eps, &opts, 0);
        CHECK_MSG(a.rc == 0 && ref.rc == 0, "%s: %s", gs[k].kind, err_msg());
        CHECK_MSG(strstr(a.variant, "fp32-promoted") != NULL, "%s: variant %s", gs[k].kind,
                  a.variant);
        opts.fasted_off = FASTED_OFF_SWIZZLE; /* a teaching switch: mma.sync, unpromoted */
        join_outcome b = exact_run("exact", &ds, eps, &opts, 0);
        CHECK_MSG(b.rc == 0, "%s: %s", gs[k].kind, err_msg());
        CHECK_MSG(strstr(b.variant, "fp32-promoted") == NULL, "%s: variant %s", gs[k].kind,
                  b.variant);
        char why[200];
        CHECK_MSG(jo_same(&b, &ref, ds.n, why, sizeof why), "%s unpromoted: %s", gs[k].kind, why);
        const double ba = jo_metric(&a, "band_pairs"), bb = jo_metric(&b, "band_pairs");
        printf("# %s d=%zu: band %.0f promoted, %.0f unpromoted (%llu pairs)\n", gs[k].kind, ds.d,
               ba, bb, (unsigned long long)ref.count);
        jo_free(&a);
        jo_free(&b);
        jo_free(&ref);
        dataset_free(&ds);
    }
}

/* fp64's order over rows of each kind: f32 and FP64 rows whose length
 * is a multiple of 16 bytes (copied through shared memory 128 bytes a
 * step, exact_fp64_cp_kernel) with a last step shorter than the others
 * (f32 d = 100: 3 x 32 + 4; FP64 d = 50: 3 x 16 + 2; f32 d = 600, 2400
 * bytes, also sorted by its first row), and rows that are not (f32
 * d = 101, FP64 d = 51: exact_fp64_kernel). PAIRS sends every kept pair
 * through it, so the pair sets and their distances must equal fp64's
 * bit for bit. */
TEST(exact_fp64_order_every_row_shape)
{
    need_gpu();
    static const struct {
        dtype_id t;
        size_t n, d;
    } sh[] = {
        {DTYPE_F32, 1500, 100}, {DTYPE_F64, 1500, 50}, {DTYPE_F32, 1200, 600},
        {DTYPE_F32, 1500, 101}, {DTYPE_F64, 1500, 51},
    };
    for (size_t k = 0; k < sizeof sh / sizeof *sh; k++) {
        gen_opts g = {.kind = "gauss",
                      .n = sh[k].n,
                      .d = sh[k].d,
                      .seed = 11 + k,
                      .opt = {{"clusters", "6"}},
                      .nopt = 1,
                      .dtype = sh[k].t};
        dataset ds = {0};
        CHECK(dataset_generate(&g, &ds) == 0);
        char what[64];
        snprintf(what, sizeof what, "gauss %s d=%zu", sh[k].t == DTYPE_F32 ? "f32" : "f64",
                 sh[k].d);
        check_exact(what, &ds, eps_for(&ds, 30));
        dataset_free(&ds);
    }
}

/* f32 rows of every finite class (zeros of both signs, subnormals,
 * negatives, magnitudes from 2^-149 to 2^40): the FP64 stage builds one
 * FP64 image of each term from the float's bits (exact_w_int: its bits
 * placed as a double's are the value times 2^-896, then scaled back), the
 * other by conversion, so every kept pair's distance must still equal
 * fp64's bit for bit. d = 32: 128-byte rows, the aligned kernel. Two
 * sets: values near 2^-140 (all subnormal or zero) and clusters whose
 * coordinates mix the classes (a few subnormals and zeros in rows of
 * order-one values, some rows at 2^40). */
TEST(exact_f32_rows_of_every_float_class)
{
    need_gpu();
    for (int set = 0; set < 2; set++) {
        dataset ds = {0};
        ds.name = xstrdup(set ? "f32 mixed classes" : "f32 subnormal");
        ds.n = 800;
        ds.d = 32;
        ds.type = DTYPE_F32;
        float *v = xcalloc(ds.n * ds.d, sizeof *v);
        rng_state = 97 + (uint64_t)set;
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < ds.d; k++) {
                const double u = rng_unit(), c = (double)(i % 8) / 8; /* eight clusters */
                float x;
                if (set == 0) /* subnormal: multiples of 2^-149 below 2^-126 */
                    x = (float)ldexp(floor((c + 0.05 * u) * 0x1p20), -149);
                else if (k % 7 == 3)
                    x = (float)ldexp(u, -140); /* a subnormal coordinate */
                else if (k % 11 == 5)
                    x = i % 2 ? 0.0f : -0.0f;
                else if (i % 50 == 0)
                    x = (float)ldexp(c - 0.5 + 0.01 * u, 40); /* far rows, few pairs */
                else
                    x = (float)(c - 0.5 + 0.05 * (u - 0.5));
                v[i * ds.d + k] = k % 2 ? -x : x;
            }
        ds.v = v;
        ds.hash = dataset_hash(&ds);
        check_exact(ds.name, &ds, eps_for(&ds, 20));
        dataset_free(&ds);
    }
}

TEST(exact_refuses_not_finite)
{
    need_gpu();
    dataset ds = set_inf();
    join_outcome o = exact_run_default("exact", &ds, 1.0);
    CHECK_EQ_INT(o.rc, TCJ_EINVAL);
    CHECK_MSG(strstr(err_msg(), "not finite") && strstr(err_msg(), "fp64") &&
                  !strchr(err_msg(), '\n'),
              "%s", err_msg());
    jo_free(&o);
    dataset_free(&ds);
    /* the next run goes on */
    ds = set_ints();
    o = exact_run_default("exact", &ds, 2.0);
    CHECK_MSG(o.rc == 0, "%s", err_msg());
    jo_free(&o);
    dataset_free(&ds);
}

/* exact's COUNT pass (its own fp16b kernel) and its other modes (fp16's
 * PAIRS kernel) read fp16's converted rows: after a fasted run on the
 * same data nothing is converted again (cache_hit 1), and every mode
 * equals fp64. Above d = 256 the promoting passes (fp16x for COUNT,
 * fp16xl for the other modes) keep rows of their own (norms summed in
 * FP64): COUNT converts again, PERPOINT after it does not, and both ran
 * promoted. Uncentred, so fasted and exact convert the same values. The
 * refinement's time is a part of the kernel time, and not 0 when there
 * was a band to refine. */
TEST(exact_shares_fasted_rows)
{
    need_gpu();
    const size_t dims[2] = {64, 320};
    engine_opts opts;
    engine_opts_default(&opts);
    opts.center = CENTER_OFF;
    opts.exact_path = EXACT_PATH_PASS;
    for (int k = 0; k < 2; k++) {
        gen_opts g = {.kind = "gauss",
                      .n = 3000,
                      .d = dims[k],
                      .seed = 5 + k,
                      .opt = {{"clusters", "4"}},
                      .nopt = 1,
                      .dtype = DTYPE_F32};
        dataset ds = {0};
        CHECK(dataset_generate(&g, &ds) == 0);
        const double eps = eps_for(&ds, 30);
        join_outcome f = exact_run("fasted", &ds, eps, &opts, 0);
        join_outcome a = exact_run("exact", &ds, eps, &opts, 0);
        join_outcome ref = exact_run("fp64", &ds, eps, &opts, 0);
        CHECK_MSG(f.rc == 0 && a.rc == 0 && ref.rc == 0, "d=%zu: %s", dims[k], err_msg());
        const join_result *c = &a.first, *p = &a.perpoint_res;
        const double want = k == 0 ? 1 : 0; /* d = 320 promotes: rows of its own */
        CHECK_MSG(jr_metric(c, "cache_hit") == want && jr_metric(p, "cache_hit") == 1,
                  "d=%zu: exact after fasted: cache_hit %g (COUNT), %g (PERPOINT after COUNT)",
                  dims[k], jr_metric(c, "cache_hit"), jr_metric(p, "cache_hit"));
        const join_result *rs[2] = {c, p};
        for (int m = 0; m < 2; m++) {
            CHECK_MSG((strstr(rs[m]->variant, "fp32-promoted") != NULL) == (k == 1),
                      "d=%zu: %s variant %s", dims[k], m ? "PERPOINT" : "COUNT", rs[m]->variant);
            const double t = jr_metric(rs[m], "refine_kernel");
            CHECK_MSG(t >= 0 && t <= rs[m]->kernel_seconds &&
                          (jr_metric(rs[m], "refined_pairs") == 0 || t > 0),
                      "d=%zu: refine_kernel %g s of a %g s kernel, %g pairs refined", dims[k], t,
                      rs[m]->kernel_seconds, jr_metric(rs[m], "refined_pairs"));
        }
        char why[200];
        CHECK_MSG(jo_same(&a, &ref, ds.n, why, sizeof why), "d=%zu: exact and fp64 differ: %s",
                  dims[k], why);
        printf("# d=%zu: %llu pairs; exact COUNT kernel %.3f ms (refinement %.3f ms)\n", dims[k],
               (unsigned long long)ref.count, c->kernel_seconds * 1e3,
               jr_metric(c, "refine_kernel") * 1e3);
        jo_free(&f);
        jo_free(&a);
        jo_free(&ref);
        dataset_free(&ds);
    }
}

/* The cluster path (kern_cluster_run): 16384 points in 6 tight clusters
 * (sigma 0.05 a dimension about centres uniform in [0, 1)^96, so each
 * cluster's radius is some 0.5 and their centres some 4 apart), eps at
 * S = 20: fp64's results in every mode, symmetric on and off, small
 * batches, forced (`set exact-path clusters`) and under auto, which takes
 * it (the groups hold about 1/6 of the pairs). One run joins each cluster
 * with itself over the layout (each padded to whole tiles, each row
 * centred on its own cluster's origin). A row lies 0.5 from its cluster's
 * origin against 2.3 from the dataset's mean, so its FP16 error and the
 * band are smaller than the whole pass's: the band must shrink. A second
 * run finds the layout on the device. */
TEST(exact_clusters_equal_fp64)
{
    need_gpu();
    gen_opts g = {
        .kind = "gauss", .n = 16384, .d = 96, .seed = 8, .opt = {{"clusters", "6"}}, .nopt = 1};
    dataset ds = {0};
    CHECK(dataset_generate(&g, &ds) == 0);
    const double eps = eps_for(&ds, 20);
    check_exact_path("clusters", &ds, eps, EXACT_PATH_CLUSTERS);
    {
        /* Above d = 256 the layout runs the promoting kernels (fp16x in
         * COUNT, fp16xl in the other modes): 4 clusters of about 3072. */
        gen_opts g2 = {.kind = "gauss",
                       .n = 12288,
                       .d = 320,
                       .seed = 9,
                       .opt = {{"clusters", "4"}},
                       .nopt = 1};
        dataset d2 = {0};
        CHECK(dataset_generate(&g2, &d2) == 0);
        const double e2 = eps_for(&d2, 20);
        check_exact_path("clusters d=320", &d2, e2, EXACT_PATH_CLUSTERS);
        join_outcome c = exact_run_default("exact", &d2, e2);
        CHECK_MSG(c.rc == 0 && jo_metric(&c, "path") == 2 && strstr(c.variant, "fp32-promoted"),
                  "d=320: path %g, variant %s", jo_metric(&c, "path"), c.variant);
        jo_free(&c);
        dataset_free(&d2);
    }
    engine_opts opts;
    engine_opts_default(&opts);
    join_outcome ref = exact_run("fp64", &ds, eps, &opts, 0);
    join_outcome a = exact_run("exact", &ds, eps, &opts, 0); /* auto */
    join_outcome b = exact_run("exact", &ds, eps, &opts, 0); /* again: the layout cached */
    const engine_opts auto_opts = opts;
    opts.exact_path = EXACT_PATH_PASS;
    join_outcome p = exact_run("exact", &ds, eps, &opts, 0);
    /* the layout's rows kept in slots of their own beside the ordinary
     * run's: the cut after the whole pass converts nothing again */
    join_outcome c = exact_run("exact", &ds, eps, &auto_opts, 0);
    CHECK_MSG(a.rc == 0 && b.rc == 0 && p.rc == 0 && c.rc == 0 && ref.rc == 0, "%s", err_msg());
    char why[200];
    CHECK_MSG(jo_same(&a, &ref, ds.n, why, sizeof why), "auto: %s", why);
    CHECK_MSG(jo_same(&b, &ref, ds.n, why, sizeof why), "again: %s", why);
    CHECK_MSG(jo_same(&c, &ref, ds.n, why, sizeof why), "after the pass: %s", why);
    CHECK_NEAR(jo_metric(&b, "cache_hit"), 1, 0);
    CHECK_MSG(jo_metric(&c, "path") == 2 && jo_metric(&c, "cache_hit") == 1,
              "the cut after the whole pass: path %g, cache_hit %g", jo_metric(&c, "path"),
              jo_metric(&c, "cache_hit"));
    const double ba = jo_metric(&a, "band_pairs"), bp = jo_metric(&p, "band_pairs");
    printf("# clusters: %.0f groups joining %.4f of the pairs; band %.0f against the pass's %.0f "
           "(%llu pairs)\n",
           jo_metric(&a, "clusters"), jo_metric(&a, "cluster_work"), ba, bp,
           (unsigned long long)ref.count);
    CHECK_NEAR(jo_metric(&a, "path"), 2, 0);
    CHECK_NEAR(jo_metric(&p, "path"), 0, 0);
    CHECK_NEAR(jo_metric(&a, "clusters"), 6, 0);
    /* About 1/6: the pairs within each cluster. */
    CHECK(jo_metric(&a, "cluster_work") < 0.25);
    CHECK_MSG(ba < bp, "the clusters' band %.0f is not below the pass's %.0f", ba, bp);
    jo_free(&c);
    jo_free(&b);
    jo_free(&a);
    jo_free(&p);
    jo_free(&ref);
    dataset_free(&ds);
}
