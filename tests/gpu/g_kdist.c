/* GPU tests of the tensor-core k-distance (kern_fasted_kdist through the
 * fasted and bf16 rows' kdist entry):
 * - It is the K-th smallest of the values the same engine's join reports:
 *   a PAIRS run of the engine at an eps that covers every row's answer
 *   gives each row's d2 values, and the K-th smallest of them must equal
 *   the k-distance bit for bit (same kernel, same epilogue arithmetic).
 *   Sets with ties, duplicates (K-distances of exactly 0), clusters, a
 *   lattice; K from 1 to 256; symmetric tiles on and off; wgmma and
 *   mma.sync; query ranges; every row decided in pass B, every row in
 *   pass C, and a mixture (TCJOIN_KDIST_SLOTS).
 * - A set large enough that the bound pass samples the columns (n=40000:
 *   the bound comes from 1/16 of the column tiles) is checked on a range
 *   of rows against the join of those rows.
 * - Against the cpu engine's exact FP64 k-distance within the FP16-input,
 *   FP32-accumulate bound of kernels/exact_bound.h: every computed d2 lies
 *   within delta(eps) of the exact one for pairs up to eps, so the K-th
 *   smallest does too, at eps the larger of the two answers.
 * - A dataset larger than the device (`set gpu-mem` below what the whole
 *   computation holds): streamed in chunks (kern_stream_kdist), every row's
 *   answer equals the whole computation's bit for bit (a pair's d2 does not
 *   depend on the run that holds it), for fasted and bf16, symmetric tiles
 *   on and off, wgmma and mma.sync, rows decided in pass B, in pass C and
 *   in later rounds, a range of query rows; the run says how it was cut
 *   and held no more than the cap.
 * - exact's k-distance off its grid: rows decided on the device in FP64
 *   and the rest by the host's joins equal cpu's bit for bit.
 * Skipped without a CUDA device. */
#include "exact_path.h"
#include "exact_sets.h"
#include "kdist.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

/* TCJOIN_KDIST_SLOTS=n: n slots a row (NULL: as sized). */
static void kd_slots(const char *n)
{
    if (n)
        setenv("TCJOIN_KDIST_SLOTS", n, 1);
    else
        unsetenv("TCJOIN_KDIST_SLOTS");
}

/* The k-distance of rows [q0, q1) into out, its run record into *r. */
static int kd_res(const char *engine, const dataset *ds, int k, size_t q0, size_t q1,
                  const engine_opts *o, double *out, join_result *r)
{
    kdist_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.q0 = q0;
    s.q1 = q1;
    s.k = k;
    s.opts = o;
    s.out = out;
    return kdist_run(engine_find(engine), &s, r);
}

static int kd(const char *engine, const dataset *ds, int k, size_t q0, size_t q1,
              const engine_opts *o, double *out)
{
    join_result r;
    return kd_res(engine, ds, k, q0, q1, o, out, &r);
}

/* The K-th smallest d2 to another row, per query row, from the engine's
 * own pair set at eps: NAN where a row has fewer than K. */
static int kth_from_join(const char *engine, const dataset *ds, int k, size_t q0, size_t q1,
                         double eps, const engine_opts *o, double *out)
{
    join_outcome jo;
    memset(&jo, 0, sizeof jo);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q0 = q0;
    s.q1 = q1;
    s.mode = JOIN_PAIRS;
    s.opts = o;
    s.sink = (pair_sink){jo_put, &jo};
    join_result r;
    int rc = engine_run(engine_find(engine), &s, &r);
    if (rc) {
        jo_free(&jo);
        return rc;
    }
    qsort(jo.pairs, jo.npairs, sizeof *jo.pairs, jo_by_ij);
    double *v = xmalloc(ds->n * sizeof *v);
    size_t p = 0;
    for (size_t q = q0; q < q1; q++) {
        size_t m = 0;
        while (p < jo.npairs && jo.pairs[p].i < q)
            p++;
        for (; p < jo.npairs && jo.pairs[p].i == q; p++)
            if (jo.pairs[p].j != q)
                v[m++] = jo.pairs[p].d2;
        qsort(v, m, sizeof *v, cmp_dbl);
        out[q - q0] = m >= (size_t)k ? v[k - 1] : NAN;
    }
    free(v);
    jo_free(&jo);
    return 0;
}

/* The k-distance of rows [q0, q1) equals the K-th smallest of the join's
 * values for those rows. */
static void check_against_join(const char *what, const char *engine, const dataset *ds, int k,
                               size_t q0, size_t q1, const engine_opts *o)
{
    const size_t nq = q1 - q0;
    double *got = xmalloc(nq * sizeof *got), *want = xmalloc(nq * sizeof *want);
    int rc = kd(engine, ds, k, q0, q1, o, got);
    CHECK_MSG(rc == 0, "%s: %s", what, err_msg());
    if (rc == 0) {
        double mx = 0;
        for (size_t q = 0; q < nq; q++)
            mx = fmax(mx, got[q]);
        /* eps^2 >= the largest answer, so every row keeps its K nearest. */
        const double eps = mx > 0 ? sqrt(mx) * (1 + 1e-9) : 1e-160; /* eps^2: 0 in FP32 */
        rc = kth_from_join(engine, ds, k, q0, q1, eps, o, want);
        CHECK_MSG(rc == 0, "%s join: %s", what, err_msg());
        size_t bad = 0, first = 0;
        for (size_t q = 0; q < nq && rc == 0; q++)
            if (!(got[q] == want[q]) && bad++ == 0)
                first = q;
        CHECK_MSG(bad == 0,
                  "%s (%s K=%d rows %zu..%zu sym %d off 0x%x): %zu rows differ, first row %zu: "
                  "kdist %.9g, join %.9g",
                  what, engine, k, q0, q1, o->symmetric, o->fasted_off, bad, q0 + first, got[first],
                  want[first]);
    }
    free(got);
    free(want);
}

static void check_set(const char *what, const dataset *ds, const int *ks, size_t nk)
{
    engine_opts o;
    engine_opts_default(&o);
    for (size_t t = 0; t < nk; t++) {
        if ((size_t)ks[t] >= ds->n)
            continue;
        for (int v = 0; v < 4; v++) {
            o.symmetric = !(v & 1);
            o.fasted_off = (v & 2) ? FASTED_OFF_WGMMA : 0;
            check_against_join(what, "fasted", ds, ks[t], 0, ds->n, &o);
        }
    }
    /* A range of query rows, and another format. */
    o.symmetric = 1;
    o.fasted_off = 0;
    check_against_join(what, "fasted", ds, ks[0], ds->n / 3, ds->n / 3 + 200, &o);
    check_against_join(what, "bf16", ds, ks[nk - 1] < (int)ds->n ? ks[nk - 1] : 1, 0, ds->n, &o);
}

/* Every set, with the rows' slots as sized (pass B decides them all),
 * with none (pass C decides every row) and with a few (some of each). */
static void each_set(const int *ks, size_t nk)
{
    static const char *const slots[] = {NULL, "0", "20"};
    for (int s = 0; s < 3; s++) {
        kd_slots(slots[s]);
        dataset ds = set_gauss();
        check_set("gauss", &ds, ks, nk);
        dataset_free(&ds);
        ds = set_ints();
        check_set("ints", &ds, ks, nk);
        dataset_free(&ds);
        ds = set_dups();
        check_set("dups", &ds, ks, nk);
        dataset_free(&ds);
        ds = set_lattice();
        check_set("lattice", &ds, ks, nk);
        dataset_free(&ds);
    }
    kd_slots(NULL);
}

TEST(kdist_equals_the_joins_kth_value)
{
    need_gpu();
    static const int ks[] = {1, 3, 16, 256};
    each_set(ks, 4);
}

static dataset set_uniform(size_t n, size_t d)
{
    gen_opts g = {.kind = "uniform", .n = n, .d = d, .seed = 7};
    dataset ds = {0};
    if (dataset_generate(&g, &ds) != 0)
        abort();
    return ds;
}

TEST(kdist_with_a_sampled_bound)
{
    need_gpu();
    dataset ds = set_uniform(40000, 32);
    engine_opts o;
    engine_opts_default(&o);
    for (int v = 0; v < 4; v++) {
        /* v 2 and 3: 40 slots a row, so some rows go through pass C */
        if (v >= 2)
            kd_slots("40");
        o.fasted_off = v & 1 ? FASTED_OFF_WGMMA : 0;
        o.symmetric = 0;
        /* Whole run, symmetric off; the join of 300 rows gives their values. */
        double *all = xmalloc(ds.n * sizeof *all), *part = xmalloc(300 * sizeof *part);
        CHECK_MSG(kd("fasted", &ds, 16, 0, ds.n, &o, all) == 0, "%s", err_msg());
        double mx = 0;
        for (size_t q = 20000; q < 20300; q++)
            mx = fmax(mx, all[q]);
        CHECK_MSG(kth_from_join("fasted", &ds, 16, 20000, 20300, sqrt(mx) * (1 + 1e-9), &o, part) ==
                      0,
                  "%s", err_msg());
        size_t bad = 0;
        for (size_t q = 0; q < 300; q++)
            bad += !(all[20000 + q] == part[q]);
        CHECK_MSG(bad == 0, "off 0x%x: %zu of 300 rows differ from the join's 16th value",
                  o.fasted_off, bad);
        /* Symmetric tiles: the same values. */
        o.symmetric = 1;
        double *sym = xmalloc(ds.n * sizeof *sym);
        CHECK_MSG(kd("fasted", &ds, 16, 0, ds.n, &o, sym) == 0, "%s", err_msg());
        bad = 0;
        for (size_t q = 0; q < ds.n; q++)
            bad += !(sym[q] == all[q]);
        CHECK_MSG(bad == 0, "off 0x%x: %zu rows differ between symmetric tiles on and off",
                  o.fasted_off, bad);
        free(all);
        free(part);
        free(sym);
    }
    kd_slots(NULL);
    dataset_free(&ds);
}

/* Within the bound of the exact FP64 k-distance (cpu engine). */
static void check_bound(const char *what, const dataset *ds, int k)
{
    engine_opts o;
    engine_opts_default(&o);
    double *g = xmalloc(ds->n * sizeof *g), *c = xmalloc(ds->n * sizeof *c);
    CHECK_MSG(kd("fasted", ds, k, 0, ds->n, &o, g) == 0, "%s: %s", what, err_msg());
    CHECK_MSG(kd("cpu", ds, k, 0, ds->n, &o, c) == 0, "%s: %s", what, err_msg());
    double nmax = 0;
    for (size_t i = 0; i < ds->n; i++) {
        double s = 0;
        for (size_t t = 0; t < ds->d; t++)
            s += dataset_value(ds, i * ds->d + t) * dataset_value(ds, i * ds->d + t);
        nmax = fmax(nmax, sqrt(s));
    }
    exact_bound b;
    exact_bound_init(&b, ds->d);
    size_t bad = 0, first = 0, differ = 0;
    double worst = 0;
    for (size_t q = 0; q < ds->n; q++) {
        const double delta = exact_bound_delta(&b, nmax, nmax, sqrt(fmax(g[q], c[q])));
        const double e = fabs(g[q] - c[q]);
        differ += e != 0;
        worst = fmax(worst, delta > 0 ? e / delta : 0);
        if (e > delta && bad++ == 0)
            first = q;
    }
    printf("# %-8s K=%d: %zu of %zu k-distances differ from FP64, worst %.3f of the bound\n", what,
           k, differ, ds->n, worst);
    CHECK_MSG(bad == 0, "%s K=%d: %zu rows beyond the bound, first %zu: fasted %.9g, cpu %.9g",
              what, k, bad, first, g[first], c[first]);
    free(g);
    free(c);
}

TEST(kdist_within_the_fp16_bound_of_fp64)
{
    need_gpu();
    dataset ds = set_gauss();
    check_bound("gauss", &ds, 8);
    dataset_free(&ds);
    ds = set_offset();
    check_bound("offset", &ds, 4);
    dataset_free(&ds);
    ds = set_uniform(40000, 32);
    check_bound("uniform", &ds, 16);
    dataset_free(&ds);
}

TEST(kdist_refuses_k_beyond_the_data)
{
    need_gpu();
    dataset ds = set_ints();
    engine_opts o;
    engine_opts_default(&o);
    double *out = xmalloc(ds.n * sizeof *out);
    CHECK_EQ_INT(kd("fasted", &ds, (int)ds.n, 0, ds.n, &o, out), TCJ_EINVAL);
    CHECK_MSG(!strchr(err_msg(), '\n'), "%s", err_msg());
    CHECK_MSG(kd("fasted", &ds, 2, 0, ds.n, &o, out) == 0, "%s", err_msg());
    free(out);
    dataset_free(&ds);
}

/* The FP16 rows' bytes of ds on the device: a cap that holds them and
 * not the whole computation beside them. */
static size_t fp16_rows_bytes(const dataset *ds)
{
    return ((ds->n + 255) / 256 * 256 + 256) * ((ds->d + 63) / 64 * 64 * 2 + 4);
}

/* Streamed under a cap against the whole computation: every row equal. */
static void check_streamed(const char *engine, const dataset *ds, int k, size_t q0, size_t q1,
                           engine_opts *o, size_t cap)
{
    const size_t nq = q1 - q0;
    double *whole = xmalloc(nq * sizeof *whole), *part = xmalloc(nq * sizeof *part);
    join_result rw, rp;
    o->gpu_mem = 0;
    int rc = kd_res(engine, ds, k, q0, q1, o, whole, &rw);
    CHECK_MSG(rc == 0, "%s whole: %s", engine, err_msg());
    CHECK_MSG(jr_metric(&rw, "stream_chunks") < 0, "%s: the whole computation was streamed",
              engine);
    o->gpu_mem = cap;
    rc = kd_res(engine, ds, k, q0, q1, o, part, &rp);
    o->gpu_mem = 0;
    CHECK_MSG(rc == 0, "%s under %zu bytes: %s", engine, cap, err_msg());
    CHECK_MSG(strstr(rp.variant, ", streamed ") && !strstr(rw.variant, "streamed"),
              "%s: variants '%s' (streamed) and '%s' (whole)", engine, rp.variant, rw.variant);
    const double chunks = jr_metric(&rp, "stream_chunks");
    CHECK_MSG(chunks >= (nq == ds->n ? 3 : 1), "%s: %g chunks", engine, chunks);
    CHECK_MSG(jr_metric(&rp, "device_mem_peak") <= (double)cap,
              "%s held %g bytes under a cap of %zu", engine, jr_metric(&rp, "device_mem_peak"),
              cap);
    size_t bad = 0, first = 0;
    for (size_t q = 0; q < nq; q++)
        if (!(whole[q] == part[q]) && bad++ == 0)
            first = q;
    CHECK_MSG(bad == 0,
              "%s K=%d rows %zu..%zu sym %d off 0x%x: %zu rows differ streamed, first %zu: whole "
              "%.9g, streamed %.9g",
              engine, k, q0, q1, o->symmetric, o->fasted_off, bad, q0 + first, whole[first],
              part[first]);
    printf("# %s K=%d rows %zu..%zu sym %d off 0x%x: under %.1f MB %g chunks of %g rows, %g "
           "runs, peak %.1f MB (whole %.1f MB)\n",
           engine, k, q0, q1, o->symmetric, o->fasted_off, cap / 1e6, chunks,
           jr_metric(&rp, "stream_chunk_rows"), jr_metric(&rp, "stream_runs"),
           jr_metric(&rp, "device_mem_peak") / 1e6, jr_metric(&rw, "device_mem_peak") / 1e6);
    free(whole);
    free(part);
}

TEST(kdist_streamed_equals_whole)
{
    need_gpu();
    /* 40000 clustered points in 128 dimensions: the FP16 rows (10.4 MB)
     * are most of what the whole computation holds, so a cap of that
     * size leaves room for a chunk and a piece and none for the whole. */
    dataset ds;
    double e150;
    set_clustered(40000, 128, 5, &ds, &e150);
    const size_t cap = fp16_rows_bytes(&ds);
    engine_opts o;
    engine_opts_default(&o);
    static const char *const slots[] = {NULL, "0", "20"};
    for (int s = 0; s < 3; s++) {
        /* sized slots (pass B decides), none (pass C), a few (later rounds) */
        kd_slots(slots[s]);
        for (int v = 0; v < (s ? 1 : 4); v++) {
            o.symmetric = !(v & 1);
            o.fasted_off = (v & 2) ? FASTED_OFF_WGMMA : 0;
            check_streamed("fasted", &ds, 8, 0, ds.n, &o, cap);
        }
    }
    kd_slots(NULL);
    o.symmetric = 1;
    o.fasted_off = 0;
    check_streamed("bf16", &ds, 32, 0, ds.n, &o, cap);
    check_streamed("fasted", &ds, 4, 15000, 17000, &o, cap);
    dataset_free(&ds);
}

/* exact's k-distance off its grid (exact-path pass): each row its passes
 * kept every value of under the widened bound is decided in FP64 on the
 * device (kernels/fasted_kdist_exact.cu), the rest by the host's joins;
 * either way cpu's value bit for bit. With the rows' slots as sized the
 * device decides some rows (metric rows_fp64_device); with none (every
 * row through pass C) it decides none; with a few, a mixture. Sets with
 * ties, duplicates (k-distances of exactly 0), a lattice, an offset far
 * from the origin, uniform d = 64 and the sampled bound (n = 40000); K
 * from 1 to 256; symmetric tiles on and off; a range of query rows. */
static void check_exact(const char *what, const dataset *ds, int k, size_t q0, size_t q1, int sym,
                        const char *slots, size_t *fp64)
{
    const size_t nq = q1 - q0;
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.symmetric = sym;
    o.exact_path = EXACT_PATH_PASS;
    double *a = xmalloc(nq * sizeof *a), *b = xmalloc(nq * sizeof *b);
    join_result ra, rb;
    int rc = kd_res("cpu", ds, k, q0, q1, &o, b, &rb);
    CHECK_MSG(rc == 0, "%s cpu: %s", what, err_msg());
    kd_slots(slots);
    rc = rc ? rc : kd_res("exact", ds, k, q0, q1, &o, a, &ra);
    kd_slots(NULL);
    CHECK_MSG(rc == 0, "%s K=%d exact: %s", what, k, err_msg());
    size_t bad = 0, first = 0;
    for (size_t q = 0; q < nq && rc == 0; q++)
        if (memcmp(&a[q], &b[q], sizeof *a) != 0 && bad++ == 0)
            first = q;
    CHECK_MSG(bad == 0,
              "%s K=%d rows %zu..%zu sym %d slots %s: %zu rows differ, first %zu: "
              "%.17g against cpu's %.17g",
              what, k, q0, q1, sym, slots ? slots : "sized", bad, q0 + first, a[first], b[first]);
    *fp64 = rc ? 0 : (size_t)join_result_metric_value(&ra, "rows_fp64_device");
    printf("# %-8s K=%-3d rows [%zu,%zu) sym %d slots %-5s: %zu of %zu rows decided on the "
           "device, %.2f ms (%s)\n",
           what, k, q0, q1, sym, slots ? slots : "sized", *fp64, nq, 1e3 * ra.seconds, ra.variant);
    free(a);
    free(b);
}

TEST(exact_kdist_decides_rows_on_the_device)
{
    need_gpu();
    dataset sets[6] = {set_gauss(),   set_ints(),   set_dups(),
                       set_lattice(), set_offset(), set_uniform(4000, 64)};
    static const int ks[] = {1, 3, 16, 256};
    for (int t = 0; t < 6; t++) {
        const dataset *ds = &sets[t];
        for (int kk = 0; kk < 4; kk++) {
            if ((size_t)ks[kk] >= ds->n)
                continue;
            size_t sized = 0, none = 0, few = 0;
            check_exact(ds->name, ds, ks[kk], 0, ds->n, 1, NULL, &sized);
            check_exact(ds->name, ds, ks[kk], 0, ds->n, 0, NULL, &sized);
            check_exact(ds->name, ds, ks[kk], 0, ds->n, 1, "0", &none);
            check_exact(ds->name, ds, ks[kk], 0, ds->n, 1, "20", &few);
            CHECK_MSG(sized > 0, "%s K=%d: no row decided on the device", ds->name, ks[kk]);
            CHECK_MSG(none == 0, "%s K=%d: %zu rows decided on the device without slots", ds->name,
                      ks[kk], none);
        }
        size_t part = 0;
        check_exact(ds->name, ds, 3, ds->n / 3, ds->n / 3 + 200, 1, NULL, &part);
    }
    for (int t = 0; t < 6; t++)
        dataset_free(&sets[t]);
    dataset big = set_uniform(40000, 32);
    size_t fp64 = 0;
    check_exact("unif40k", &big, 9, 0, big.n, 1, NULL, &fp64);
    CHECK(fp64 > 0);
    dataset_free(&big);
}

/* exact's k-distance at large d (d > 2 KERN_FP16X_PROMOTE_VALUES): the
 * passes run exact's promoting kernel with its bound (docs/ACCURACY.md
 * (2')) on the centred rows. Eight Gaussian clusters of about 500 rows in
 * 784 dimensions (the handwritten-digit shape): fp16's unpromoted bound
 * at the loaded norms reaches about the whole cluster from a row's 9th
 * value (some 500 rows), the promoted one at the centred norms 20 to 40
 * (both counted in FP64 over the rows' exact distances, exact_bound.h's
 * reach), so with 64 slots a row every row is decided on the device
 * where wgmma runs, none going through pass C. Values cpu's bit for bit,
 * slots as sized and 64, symmetric on and off, K 1 and 9. */
TEST(exact_kdist_promoted_at_large_d)
{
    need_gpu();
    gen_opts g = {.kind = "gauss", .n = 4000, .d = 784, .seed = 3};
    dataset ds = {0};
    CHECK(gen_opts_set(&g, "clusters", "8") == 0 && dataset_generate(&g, &ds) == 0);
    const int wg = kern_device_has_wgmma(0) == 1;
    static const int ks[] = {1, 9};
    for (int kk = 0; kk < 2; kk++) {
        size_t sized = 0, sym_off = 0, s64 = 0;
        check_exact("gauss784", &ds, ks[kk], 0, ds.n, 1, NULL, &sized);
        check_exact("gauss784", &ds, ks[kk], 0, ds.n, 0, NULL, &sym_off);
        check_exact("gauss784", &ds, ks[kk], 0, ds.n, 1, "64", &s64);
        if (wg)
            CHECK_MSG(s64 == ds.n && sized == ds.n && sym_off == ds.n,
                      "K=%d: %zu, %zu and %zu of %zu rows decided on the device", ks[kk], sized,
                      sym_off, s64, ds.n);
    }
    dataset_free(&ds);
}

/* exact's k-distance in the cluster order (kernels/kern_kd_prune.c): on
 * clustered rows passes B and C join only the items whose rows reach
 * each other (metric cluster_work below 1), and every value is cpu's bit
 * for bit, as is the run in the dataset's order (TCJOIN_KDIST_PRUNE=0).
 * Eight Gaussian clusters in 24 dimensions, with a twentieth of the rows
 * uniform and a hundred duplicated; K 1, 9 and 64; the rows' slots as
 * sized and a few (pass C over the items). */
static dataset set_clusters_noise(void)
{
    gen_opts g = {.kind = "gauss",
                  .n = 20000,
                  .d = 24,
                  .seed = 3,
                  .dtype = DTYPE_F32,
                  .opt = {{"clusters", "8"}},
                  .nopt = 1};
    dataset ds = {0};
    if (dataset_generate(&g, &ds) != 0 || ds.type != DTYPE_F32)
        abort();
    float *x = ds.v;
    uint64_t s = 17;
    for (size_t i = 0; i < ds.n; i += 20)
        for (size_t k = 0; k < ds.d; k++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            x[i * ds.d + k] = (float)((double)(s >> 11) * 0x1p-53);
        }
    for (size_t i = 1; i < 200; i += 2)
        memcpy(x + i * ds.d, x + (i - 1) * ds.d, ds.d * sizeof *x);
    ds.hash = dataset_hash(&ds);
    return ds;
}

TEST(exact_kdist_in_the_cluster_order)
{
    need_gpu();
    dataset ds = set_clusters_noise();
    static const int ks[] = {1, 9, 64};
    for (int kk = 0; kk < 3; kk++) {
        const int k = ks[kk];
        engine_opts o;
        engine_opts_default(&o);
        o.threads = 2;
        o.exact_path = EXACT_PATH_PASS;
        double *cpu = xmalloc(ds.n * sizeof *cpu), *got = xmalloc(ds.n * sizeof *got);
        join_result rc_, rp, rw;
        CHECK(kd_res("cpu", &ds, k, 0, ds.n, &o, cpu, &rc_) == 0);
        for (int v = 0; v < 3; v++) {
            const char *slots = v == 2 ? "20" : NULL;
            setenv("TCJOIN_KDIST_PRUNE", v == 1 ? "0" : "1", 1);
            kd_slots(slots);
            const int rc = kd_res("exact", &ds, k, 0, ds.n, &o, got, v == 1 ? &rw : &rp);
            kd_slots(NULL);
            unsetenv("TCJOIN_KDIST_PRUNE");
            CHECK_MSG(rc == 0, "K=%d: %s", k, err_msg());
            size_t bad = 0, first = 0;
            for (size_t q = 0; q < ds.n && rc == 0; q++)
                if (memcmp(&got[q], &cpu[q], sizeof *got) != 0 && bad++ == 0)
                    first = q;
            CHECK_MSG(bad == 0,
                      "K=%d %s%s: %zu rows differ from cpu, first %zu: %.17g against %.17g", k,
                      v == 1 ? "dataset order" : "cluster order", slots ? " (20 slots)" : "", bad,
                      first, got[first], cpu[first]);
            const join_result *r = v == 1 ? &rw : &rp;
            printf("# K=%-2d %-13s%s: %.2f ms, clusters %g, items kept %g, %g rows on the device\n",
                   k, v == 1 ? "dataset order" : "cluster order", slots ? " 20 slots" : "",
                   1e3 * r->seconds, jr_metric(r, "clusters"), jr_metric(r, "cluster_work"),
                   jr_metric(r, "rows_fp64_device"));
            if (v == 1) {
                CHECK_MSG(jr_metric(r, "cluster_work") < 0, "K=%d: ordered with the order off", k);
            } else {
                const double w = jr_metric(r, "cluster_work");
                CHECK_MSG(w > 0 && w < 0.5, "K=%d: items kept %g (the order pruned nothing)", k, w);
            }
        }
        free(cpu);
        free(got);
    }
    dataset_free(&ds);
}

/* A small case for compute-sanitizer (scripts/gpu-check): every pass and
 * kernel (bound, histogram with slots, smaller bounds for the row tiles
 * left, pass C), symmetric on and off, wgmma and mma.sync; streamed
 * under a cap (chunks against their pieces, cross runs); exact's FP64 on
 * the device, also at d = 300 (the promoting kernel). */
TEST(kdist_sanitizer_case)
{
    need_gpu();
    static const int ks[] = {16};
    dataset ds = set_gauss();
    static const char *const slots[] = {"0", "20", "1000"};
    for (int s = 0; s < 3; s++) {
        kd_slots(slots[s]);
        check_set("gauss", &ds, ks, 1);
    }
    kd_slots(NULL);
    engine_opts o;
    engine_opts_default(&o);
    check_streamed("fasted", &ds, 16, 0, ds.n, &o, fp16_rows_bytes(&ds));
    /* exact's rows decided on the device, and some through pass C */
    size_t fp64 = 0;
    check_exact("gauss", &ds, 16, 0, ds.n, 1, NULL, &fp64);
    check_exact("gauss", &ds, 16, 0, ds.n, 1, "20", &fp64);
    dataset_free(&ds);
    /* and at d = 300 the promoting kernel's instance for the passes */
    gen_opts g = {.kind = "gauss", .n = 600, .d = 300, .seed = 5};
    CHECK(gen_opts_set(&g, "clusters", "4") == 0 && dataset_generate(&g, &ds) == 0);
    check_exact("gauss300", &ds, 9, 0, ds.n, 1, NULL, &fp64);
    check_exact("gauss300", &ds, 9, 0, ds.n, 1, "20", &fp64);
    dataset_free(&ds);
}

static int cmp_f(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

/* Pass A's bounds (kern_kd_bounds): the k-th and 2k-th smallest of each
 * row's chunk minima, held in registers (every width the kernel is built
 * for, 1 to 32 a lane, and the memory path past 1,024 chunks) and read
 * from memory, both against the row sorted on the host. The minima come
 * in runs of ties, with zeros and +inf (chunks holding no column). */
TEST(kdist_pass_a_bounds_equal_the_sorted_rows)
{
    need_gpu();
    static const unsigned widths[] = {5, 32, 33, 200, 256, 257, 489, 512, 978, 1024, 1500};
    static const int ks[] = {1, 9, 16};
    uint64_t z = 7;
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++) {
        const unsigned m = widths[w];
        const size_t rows = 300;
        float *v = malloc(rows * m * sizeof *v), *row = malloc(m * sizeof *row);
        float *u[2] = {malloc(rows * 4), malloc(rows * 4)},
              *uw[2] = {malloc(rows * 4), malloc(rows * 4)};
        for (size_t i = 0; i < rows * m; i++) {
            z = z * 6364136223846793005ull + 1442695040888963407ull;
            const unsigned r = (unsigned)(z >> 40);
            /* a value of 64 (ties), 0 or +inf now and then */
            v[i] = r % 50 == 0 ? INFINITY : r % 47 == 0 ? 0.0f : (float)(r % 64) * 0.37f;
        }
        for (size_t t = 0; t < sizeof ks / sizeof *ks; t++) {
            const int k = ks[t] <= (int)m ? ks[t] : (int)m;
            const int k2 = 2 * k <= (int)m ? 2 * k : (int)m;
            for (int regs = 0; regs < 2; regs++)
                CHECK_MSG(kern_kd_bounds(v, rows, m, k, k2, u[regs], uw[regs], regs) == 0, "%s",
                          err_msg());
            size_t bad = 0;
            for (size_t q = 0; q < rows; q++) {
                memcpy(row, v + q * m, m * sizeof *row);
                qsort(row, m, sizeof *row, cmp_f);
                for (int regs = 0; regs < 2; regs++)
                    bad += !(u[regs][q] == row[k - 1]) + !(uw[regs][q] == row[k2 - 1]);
            }
            CHECK_MSG(bad == 0, "%u chunks, k %d: %zu bounds differ from the sorted rows' values",
                      m, k, bad);
        }
        free(v);
        free(row);
        for (int i = 0; i < 2; i++) {
            free(u[i]);
            free(uw[i]);
        }
    }
}
