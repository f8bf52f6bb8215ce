/* GPU tests of `set devices` (kernels/kern_multi.cu): a join spread over
 * several GPUs through the queue of work-item ranges gives exactly the
 * one-GPU run's results in every mode — the same pair set with
 * bit-identical distances, per-point counts, histogram and count — for
 * every GPU join engine (the FASTED formats, exact, fp64, ted, ted-index),
 * with symmetric tiles on and off and a pair buffer small enough to refill
 * many times. The reference is the same engine on one device: a tile's or
 * an item's arithmetic does not depend on which device or range computes
 * it, and exact's FP64 decision per pair does not depend on the device, so
 * equality is exact; exact's band and refined counters, summed over the
 * devices, equal the one-device run's too. The devices' shares add up to
 * the run, and with NVML each device of a list of two has its own figures
 * (devK_ names). On one GPU the queue path runs with a list of one device
 * (`set devices 0`); the two-device comparisons skip with "skipped: needs
 * 2 CUDA devices". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "exact_sets.h"
#include "kdist.h"
#include "kernels.h"
#include "nvml.h"

static void need_gpu(int n)
{
    int have = kern_device_count();
    if (have == 0)
        t_skip("skipped: no CUDA device");
    if (have < n)
        t_skip("skipped: needs 2 CUDA devices");
}

static dataset g_ds;
static double g_eps;

/* The clustered set (exact_sets.h): about 150 pairs a point. */
static void data(void)
{
    if (!((double *)g_ds.v))
        set_clustered(12000, 64, 7, &g_ds, &g_eps);
}

#define NB 32

typedef struct outcome {
    int rc;
    uint64_t count;
    uint64_t *counts;
    uint64_t hist[NB], below;
    join_outcome p; /* the pairs only: jo_put's collection */
    join_result res[4];
} outcome;

static void outcome_free(outcome *o)
{
    free(o->counts);
    jo_free(&o->p);
    memset(o, 0, sizeof *o);
}

/* Every mode of e with these options; pairs sorted. */
static int run_all(const engine *e, const engine_opts *opts, outcome *o)
{
    memset(o, 0, sizeof *o);
    o->counts = xcalloc(g_ds.n, sizeof *o->counts);
    double edges[NB + 1];
    for (int b = 0; b <= NB; b++)
        edges[b] = g_eps * g_eps * b / NB;
    for (int m = 0; m < 4; m++) {
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &g_ds;
        s.eps = g_eps;
        s.q0 = 0;
        s.q1 = g_ds.n;
        s.mode = (join_mode)m;
        s.opts = opts;
        s.counts = o->counts;
        s.sink.put = jo_put;
        s.sink.ctx = &o->p;
        s.hist_edges = edges;
        s.hist_nbins = NB;
        s.hist = o->hist;
        s.hist_below = &o->below;
        int rc = engine_run(e, &s, &o->res[m]);
        if (rc)
            return o->rc = rc;
        if (m == JOIN_COUNT)
            o->count = o->res[m].pairs;
    }
    qsort(o->p.pairs, o->p.npairs, sizeof *o->p.pairs, jo_by_ij);
    return 0;
}

static engine_opts opts_for(const char *devices, int symmetric)
{
    engine_opts o;
    engine_opts_default(&o);
    o.int8_scale = 1; /* int8 quantizes the generated reals */
    o.shift = 1;      /* the unsigned formats move the (signed) data by its minima */
    o.symmetric = symmetric;
    /* The smallest pair buffer FASTED takes (32k pairs): ~1.8M pairs
     * drain in dozens of refills, from every device. */
    o.batch_pairs = (size_t)1 << 15;
    if (devices && devices_parse(devices, &o) != 0)
        abort();
    return o;
}

/* b (over a device list) against a (one device): everything equal; the
 * shares of b add up to it. */
static void same(const char *what, outcome *a, outcome *b, int ndev)
{
    CHECK_MSG(a->count > 0 && a->p.npairs > ((size_t)1 << 20), "%s: only %zu pairs", what,
              a->p.npairs);
    CHECK_MSG(b->count == a->count, "%s: count %llu vs %llu", what, (unsigned long long)b->count,
              (unsigned long long)a->count);
    CHECK_MSG(b->p.npairs == a->p.npairs, "%s: %zu pairs vs %zu", what, b->p.npairs, a->p.npairs);
    CHECK_EQ_INT(a->p.npairs, a->count);
    CHECK_MSG(memcmp(a->counts, b->counts, g_ds.n * sizeof *a->counts) == 0,
              "%s: per-point counts differ", what);
    CHECK_MSG(memcmp(a->hist, b->hist, sizeof a->hist) == 0 && a->below == b->below,
              "%s: histograms differ", what);
    size_t bad = 0;
    for (size_t k = 0; k < a->p.npairs; k++)
        bad += a->p.pairs[k].i != b->p.pairs[k].i || a->p.pairs[k].j != b->p.pairs[k].j ||
               memcmp(&a->p.pairs[k].d2, &b->p.pairs[k].d2, sizeof(double)) != 0;
    CHECK_MSG(bad == 0, "%s: %zu pairs differ in index or d2 bits", what, bad);
    CHECK_MSG(jr_metric(&b->res[JOIN_PAIRS], "buffer_refills") > 0, "%s: the buffer never refilled",
              what);
    const int nvml = nvml_open() == 0;
    for (int m = 0; m < 4; m++) {
        const join_result *r = &b->res[m];
        /* exact: each candidate is classified, and the band's refined,
         * once on whichever device ran its tile. */
        static const char *const sums[] = {"band_pairs", "refined_pairs"};
        for (int k = 0; k < 2; k++)
            CHECK_MSG(jr_metric(r, sums[k]) == jr_metric(&a->res[m], sums[k]),
                      "%s mode %d: %s %.0f vs %.0f", what, m, sums[k], jr_metric(r, sums[k]),
                      jr_metric(&a->res[m], sums[k]));
        /* NVML: every device of a list of two or more under its own
         * names; a list of one keeps the plain names alone. */
        if (nvml) {
            CHECK_MSG(jr_metric(r, "nvml.samples") > 0, "%s mode %d: no NVML samples", what, m);
            for (int dv = 0; dv < ndev; dv++) {
                char name[48];
                snprintf(name, sizeof name, "dev%d_nvml.samples", dv);
                CHECK_MSG((jr_metric(r, name) > 0) == (ndev > 1), "%s mode %d: %s %g", what, m,
                          name, jr_metric(r, name));
            }
        }
        CHECK_MSG(jr_metric(r, "devices") == ndev, "%s mode %d: devices %g", what, m,
                  jr_metric(r, "devices"));
        double items = 0, pairs = 0;
        int seen = 0;
        for (int dv = 0; dv < 64; dv++) {
            char name[32];
            snprintf(name, sizeof name, "dev%d_items", dv);
            double it = jr_metric(r, name);
            if (it < 0)
                continue;
            seen++;
            items += it;
            snprintf(name, sizeof name, "dev%d_pairs", dv);
            pairs += jr_metric(r, name);
        }
        CHECK_MSG(seen == ndev, "%s mode %d: shares of %d devices", what, m, seen);
        CHECK_MSG(pairs == (double)r->pairs, "%s mode %d: shares hold %.0f pairs of %llu", what, m,
                  pairs, (unsigned long long)r->pairs);
        /* Every item of the list went to some device, once: the items of
         * a one-device queue run are the whole list. */
        CHECK_MSG(items > 0, "%s mode %d: no items taken", what, m);
        if (m == JOIN_COUNT)
            printf("# %s: %.0f items over %d devices (%s)\n", what, items, ndev, r->device);
    }
}

/* The items the devices of a run took, summed. */
static double items_of(const join_result *r)
{
    double items = 0;
    for (int k = 0; k < r->nmetric; k++)
        if (strncmp(r->metric[k].name, "dev", 3) == 0 && strstr(r->metric[k].name, "_items"))
            items += r->metric[k].value;
    return items;
}

/* The rows a device list applies to: every GPU join this GPU runs. */
static int queued(const engine *e)
{
    return e->kjoin && engine_available(e, NULL) == 0;
}

/* Every queued engine (only: that one alone) on list against one device. */
static void compare_lists(const char *list, int ndev, const char *only)
{
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!queued(e) || (only && strcmp(e->name, only) != 0))
            continue;
        for (int sym = 0; sym <= 1; sym++) {
            engine_opts one = opts_for(NULL, sym), many = opts_for(list, sym);
            outcome a, b;
            int rc = run_all(e, &one, &a);
            CHECK_MSG(rc == 0, "%s on one device: %s", e->name, err_msg());
            rc = run_all(e, &many, &b);
            CHECK_MSG(rc == 0, "%s on devices %s: %s", e->name, list, err_msg());
            char what[96];
            snprintf(what, sizeof what, "%s devices %s symmetric %s", e->name, list,
                     sym ? "on" : "off");
            same(what, &a, &b, ndev);
            /* The items shared out are the whole list: what a list of one
             * device takes alone. */
            if (ndev > 1) {
                engine_opts solo = opts_for("0", sym);
                join_spec s;
                memset(&s, 0, sizeof s);
                s.ds = &g_ds;
                s.eps = g_eps;
                s.q1 = g_ds.n;
                s.opts = &solo;
                join_result r;
                rc = engine_run(e, &s, &r);
                CHECK_MSG(rc == 0, "%s on devices 0: %s", e->name, err_msg());
                CHECK_MSG(items_of(&b.res[JOIN_COUNT]) == items_of(&r),
                          "%s: %.0f items over the devices, %.0f on one", what,
                          items_of(&b.res[JOIN_COUNT]), items_of(&r));
            }
            outcome_free(&a);
            outcome_free(&b);
            ran++;
        }
    }
    CHECK_MSG(ran > 0, "no GPU engine could run");
}

TEST(a_list_of_one_device_equals_the_single_device_run)
{
    need_gpu(1);
    compare_lists("0", 1, NULL);
}

TEST(two_devices_equal_one_every_engine_and_mode)
{
    need_gpu(2);
    compare_lists("0,1", 2, NULL);
}

/* exact alone on two devices: the case gpu-check runs under
 * compute-sanitizer (the pass, the refinement and the serialised sink). */
TEST(exact_two_devices_equal_one)
{
    need_gpu(2);
    compare_lists("0,1", 2, "exact");
}

/* One COUNT run of engine name over list; its pair count into *pairs. */
static void count_on(const char *name, const char *list, uint64_t *pairs)
{
    const engine *e = engine_find(name);
    engine_opts o = opts_for(list, 1);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &g_ds;
    s.eps = g_eps;
    s.q1 = g_ds.n;
    s.opts = &o;
    join_result r;
    *pairs = 0;
    int rc = engine_run(e, &s, &r);
    CHECK_MSG(rc == 0, "%s on devices %s: %s", name, list, err_msg());
    *pairs = r.pairs;
}

/* Convert once, copy to every device: over 0,1 device 0 converts the
 * dataset and device 1 copies its converted rows and norms; both slots are
 * byte for byte what device 1 converts alone, in the FP16 format and in an
 * FP8 one (scaled, its own conversion kernel). */
TEST(converted_once_copied_byte_identical)
{
    need_gpu(2);
    data();
    static const char *const names[] = {"fasted", "fp8-e4m3"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        kern_fasted_release();
        uint64_t pairs, solo;
        count_on(names[k], "0,1", &pairs);
        uint64_t dg[2] = {0, 0};
        int from[2] = {-2, -2};
        for (int dv = 0; dv < 2; dv++)
            CHECK_MSG(kern_fasted_cache_digest(dv, &dg[dv], &from[dv]) == 0, "%s device %d: %s",
                      names[k], dv, kern_error());
        CHECK_MSG(from[0] == -1 && from[1] == 0, "%s: device 0 from %d, device 1 from %d", names[k],
                  from[0], from[1]);
        CHECK_MSG(dg[0] == dg[1], "%s: the copy differs (%016llx vs %016llx)", names[k],
                  (unsigned long long)dg[0], (unsigned long long)dg[1]);
        /* Device 1 converting by itself (a list of one: the source). */
        kern_fasted_release();
        count_on(names[k], "1", &solo);
        uint64_t d1 = 0;
        int f1 = -2;
        CHECK(kern_fasted_cache_digest(1, &d1, &f1) == 0);
        CHECK_MSG(f1 == -1 && d1 == dg[1], "%s: device 1 alone %016llx (from %d), copied %016llx",
                  names[k], (unsigned long long)d1, f1, (unsigned long long)dg[1]);
        CHECK_MSG(solo == pairs && pairs > 0, "%s: %llu pairs on 0,1, %llu on 1", names[k],
                  (unsigned long long)pairs, (unsigned long long)solo);
    }
}

typedef struct prog {
    double last;
    int calls, backwards;
} prog;

static void on_progress(void *ctx, double f)
{
    prog *p = ctx;
    p->backwards += f < p->last || f < 0 || f > 1;
    p->last = f;
    p->calls++;
}

/* Cancel is seen by every device's loop, of each kind of engine (FASTED,
 * exact's pass and refinement, the FP64 engines' items); the next run
 * goes on; progress ascends to 1 from the calling thread. */
static void cancel_then_run_one(const engine *e, const char *list);

static void cancel_then_run(const char *list)
{
    static const char *const names[] = {"fasted", "exact", "fp64", "ted", "ted-index"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        const engine *e = engine_find(names[k]);
        CHECK(e != NULL);
        if (e && engine_available(e, NULL) == 0)
            cancel_then_run_one(e, list);
    }
}

static void cancel_then_run_one(const engine *e, const char *list)
{
    data();
    engine_opts o = opts_for(list, 1);
    volatile int cancel = 1;
    prog pg = {0, 0, 0};
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &g_ds;
    s.eps = g_eps;
    s.q0 = 0;
    s.q1 = g_ds.n;
    s.mode = JOIN_COUNT;
    s.opts = &o;
    s.cancel = &cancel;
    s.progress = on_progress;
    s.progress_ctx = &pg;
    join_result r;
    int rc = engine_run(e, &s, &r);
    CHECK_MSG(rc == TCJ_ECANCEL, "%s cancelled: rc %d (%s)", e->name, rc, err_msg());
    CHECK_MSG(strcmp(err_msg(), "cancelled") == 0, "%s cancel message: %s", e->name, err_msg());
    cancel = 0;
    rc = engine_run(e, &s, &r);
    CHECK_MSG(rc == 0, "%s after a cancel: %s", e->name, err_msg());
    engine_opts one = opts_for(NULL, 1);
    join_result r1;
    s.opts = &one;
    s.progress = NULL;
    rc = engine_run(e, &s, &r1);
    CHECK_MSG(rc == 0, "%s on one device: %s", e->name, err_msg());
    CHECK_EQ_INT(r.pairs, r1.pairs);
    CHECK_MSG(pg.calls > 0 && pg.backwards == 0 && pg.last == 1.0,
              "%s progress: %d calls, %d backwards, last %g", e->name, pg.calls, pg.backwards,
              pg.last);
}

TEST(cancel_reaches_the_queue_and_the_next_run_goes_on)
{
    need_gpu(1);
    cancel_then_run("0");
}

TEST(cancel_reaches_both_devices)
{
    need_gpu(2);
    cancel_then_run("0,1");
}

TEST(a_device_not_present_is_refused_with_one_line)
{
    need_gpu(1);
    data();
    int have = kern_device_count();
    char list[32];
    snprintf(list, sizeof list, "0,%d", have < 63 ? have : 63);
    engine_opts o = opts_for(list, 1);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &g_ds;
    s.eps = g_eps;
    s.q1 = g_ds.n;
    s.opts = &o;
    join_result r;
    int rc = engine_run(engine_find("fasted"), &s, &r);
    CHECK_MSG(rc == TCJ_ENODEV, "rc %d (%s)", rc, err_msg());
    CHECK_MSG(strstr(err_msg(), "set devices") && !strchr(err_msg(), '\n'), "message: %s",
              err_msg());
}

/* k-distance over a list: the query rows in blocks from the queue, each
 * block on one device without symmetric tiles; every row's K-th d2 equals
 * the one-device run's bit for bit, with symmetric tiles on and off (a
 * d2 computed as row j's or mirrored from row i's is the same products
 * and sums). A cancel set before the run stops every device. */
static void kdist_lists(const char *list, int ndev)
{
    data();
    const int K = 16;
    const size_t n = g_ds.n;
    double *one = xcalloc(n, sizeof *one), *many = xcalloc(n, sizeof *many);
    for (int sym = 0; sym <= 1; sym++) {
        engine_opts o1 = opts_for(NULL, sym), on = opts_for(list, sym);
        kdist_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &g_ds;
        s.q0 = 0;
        s.q1 = n;
        s.k = K;
        s.opts = &o1;
        s.out = one;
        join_result r1, rn;
        int rc = kdist_run(engine_find("fasted"), &s, &r1);
        CHECK_MSG(rc == 0, "k-distance on one device: %s", err_msg());
        s.opts = &on;
        s.out = many;
        rc = kdist_run(engine_find("fasted"), &s, &rn);
        CHECK_MSG(rc == 0, "k-distance on devices %s: %s", list, err_msg());
        size_t bad = 0, pos = 0;
        for (size_t q = 0; q < n; q++) {
            bad += memcmp(&one[q], &many[q], sizeof(double)) != 0;
            pos += one[q] > 0;
        }
        CHECK_MSG(bad == 0, "k-distance devices %s symmetric %d: %zu of %zu rows differ", list, sym,
                  bad, n);
        CHECK_MSG(pos > n / 2, "k-distance: only %zu of %zu rows positive", pos, n);
        CHECK_MSG(jr_metric(&rn, "devices") == ndev, "k-distance: devices %g",
                  jr_metric(&rn, "devices"));
        CHECK_MSG(items_of(&rn) > 0, "k-distance: no blocks taken");
        printf("# k-distance devices %s symmetric %s: %.0f blocks (%s)\n", list, sym ? "on" : "off",
               items_of(&rn), rn.device);
    }
    engine_opts o = opts_for(list, 1);
    volatile int cancel = 1;
    kdist_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &g_ds;
    s.q1 = n;
    s.k = K;
    s.opts = &o;
    s.out = many;
    s.cancel = &cancel;
    join_result r;
    int rc = kdist_run(engine_find("fasted"), &s, &r);
    CHECK_MSG(rc == TCJ_ECANCEL, "k-distance cancelled: rc %d (%s)", rc, err_msg());
    free(one);
    free(many);
}

TEST(kdist_list_of_one_device_equals_the_single_device_run)
{
    need_gpu(1);
    kdist_lists("0", 1);
}

TEST(kdist_two_devices_equal_one)
{
    need_gpu(2);
    kdist_lists("0,1", 2);
}
