/* GPU tests of `set devices` (kernels/kern_multi.cu): a FASTED-format run
 * spread over several GPUs through the queue of tile ranges gives exactly
 * the one-GPU run's results in every mode — the same pair set with
 * bit-identical distances, per-point counts, histogram and count — with
 * symmetric tiles on and off and a pair buffer small enough to refill
 * many times. The reference is the same engine on one device: a tile's
 * arithmetic does not depend on which device or range computes it, so
 * equality is exact. The devices' shares add up to the run. On one GPU
 * the queue path runs with a list of one device (`set devices 0`); the
 * two-device comparisons skip with "skipped: needs 2 CUDA devices". */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "exact_sets.h"
#include "kernels.h"

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
    for (int m = 0; m < 4; m++) {
        const join_result *r = &b->res[m];
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

/* The FASTED rows a device list applies to. */
static int queued(const engine *e)
{
    return e->kjoin == kern_fasted_run && !e->exact && engine_available(e, NULL) == 0;
}

static void compare_lists(const char *list, int ndev)
{
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!queued(e))
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
    CHECK_MSG(ran > 0, "no FASTED format could run");
}

TEST(a_list_of_one_device_equals_the_single_device_run)
{
    need_gpu(1);
    compare_lists("0", 1);
}

TEST(two_devices_equal_one_every_format_and_mode)
{
    need_gpu(2);
    compare_lists("0,1", 2);
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

/* Cancel is seen by every device's loop; the next run goes on; progress
 * ascends to 1 from the calling thread. */
static void cancel_then_run(const char *list)
{
    data();
    const engine *e = engine_find("fasted");
    CHECK(e != NULL);
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
    CHECK_MSG(rc == TCJ_ECANCEL, "cancelled run: rc %d (%s)", rc, err_msg());
    CHECK_MSG(strcmp(err_msg(), "cancelled") == 0, "cancel message: %s", err_msg());
    cancel = 0;
    rc = engine_run(e, &s, &r);
    CHECK_MSG(rc == 0, "after a cancel: %s", err_msg());
    engine_opts one = opts_for(NULL, 1);
    join_result r1;
    s.opts = &one;
    s.progress = NULL;
    rc = engine_run(e, &s, &r1);
    CHECK_MSG(rc == 0, "one device: %s", err_msg());
    CHECK_EQ_INT(r.pairs, r1.pairs);
    CHECK_MSG(pg.calls > 0 && pg.backwards == 0 && pg.last == 1.0,
              "progress: %d calls, %d backwards, last %g", pg.calls, pg.backwards, pg.last);
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

/* exact, fp64, ted and ted-index run on one GPU: a list of two is refused
 * with one line naming the setting, and a list of one runs them there. */
TEST(single_device_engines_refuse_a_list_of_two)
{
    need_gpu(2);
    data();
    int ran = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        if (!e->kjoin || queued(e) || engine_available(e, NULL) != 0)
            continue;
        engine_opts two = opts_for("0,1", 1), one = opts_for("1", 1);
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &g_ds;
        s.eps = g_eps;
        s.q1 = g_ds.n;
        s.opts = &two;
        join_result r;
        int rc = engine_run(e, &s, &r);
        CHECK_MSG(rc == TCJ_EUNSUP && strstr(err_msg(), "set devices") &&
                      strstr(err_msg(), e->name) && !strchr(err_msg(), '\n'),
                  "%s on two devices: rc %d, %s", e->name, rc, err_msg());
        s.opts = &one;
        rc = engine_run(e, &s, &r);
        CHECK_MSG(rc == 0 && r.pairs > 0, "%s on device 1: %s", e->name, err_msg());
        ran++;
    }
    CHECK_MSG(ran > 0, "no single-device GPU engine could run");
}
