/* GPU tests of the overlapped pair drain (kernels/kern_drive.cu): launch
 * N+1 runs while launch N's pairs are copied out of the other of two
 * device buffers and handed to the sink. For every GPU engine, symmetric
 * on and off, the pair set through a pair buffer far smaller than the
 * result (many launches, refills, both buffers in turn) equals the set of
 * a run whose buffer holds the whole result, and (the FASTED formats and exact) equals
 * that of the one-buffer path (a gpu-mem cap that holds one buffer of the
 * smallest size but not two), index for index and d2 bit for bit:
 * buffering changes when pairs move, never what is computed. exact's set
 * equals fp64's through the same path. A sink that stops the run, or a cancel raised from the sink,
 * ends the run with the sink's error (or cancelled) and the next run gives the whole set again.
 * Skipped without a CUDA device. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exact_sets.h"
#include "kernels.h"

static void need_gpu(void)
{
    /* Lines as they come, before anything is printed: a run stopped by a
     * timeout (under compute-sanitizer) still shows how far it got. */
    static int lines;
    if (!lines++)
        setvbuf(stdout, NULL, _IOLBF, 0);
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

/* A collecting sink that can stop the run (stop_after batches, 0: never)
 * or raise cancel there instead, and records the largest batch. */
typedef struct collect {
    join_outcome o;
    size_t batches, stop_after, max_batch;
    int cancel_instead;
    volatile int cancel;
} collect;

static int collect_put(void *ctx, const pair_batch *b)
{
    collect *c = ctx;
    c->batches++;
    if (b->k > c->max_batch)
        c->max_batch = b->k;
    jo_put(&c->o, b);
    if (c->stop_after && c->batches == c->stop_after) {
        if (c->cancel_instead)
            c->cancel = 1;
        else
            return err_set(TCJ_EIO, "test sink: stopped after %zu batches", c->batches);
    }
    return 0;
}

typedef struct prun {
    int rc;
    join_outcome o; /* pairs sorted by (i, j) */
    join_result r;
    size_t max_batch;
} prun;

/* One PAIRS run of e with the given batch size and cap. */
static prun run_pairs(const engine *e, const dataset *ds, double eps, int sym, size_t batch,
                      size_t cap, size_t stop_after, int cancel_instead)
{
    engine_opts o;
    engine_opts_default(&o);
    o.symmetric = sym;
    o.batch_pairs = batch;
    o.gpu_mem = cap;
    o.int8_scale = 1; /* int8 quantizes the generated reals */
    o.shift = 1;      /* the unsigned formats move the (signed) data by its minima */
    collect c;
    memset(&c, 0, sizeof c);
    c.stop_after = stop_after;
    c.cancel_instead = cancel_instead;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.eps = eps;
    s.q1 = ds->n;
    s.mode = JOIN_PAIRS;
    s.opts = &o;
    s.sink = (pair_sink){collect_put, &c};
    s.cancel = &c.cancel;
    prun p;
    memset(&p, 0, sizeof p);
    p.rc = engine_run(e, &s, &p.r);
    p.o = c.o;
    p.max_batch = c.max_batch;
    qsort(p.o.pairs, p.o.npairs, sizeof *p.o.pairs, jo_by_ij);
    return p;
}

/* Pairs of a not in b, or differing in d2's bits (a and b sorted). */
static size_t pairs_differ(const prun *a, const prun *b)
{
    if (a->o.npairs != b->o.npairs)
        return a->o.npairs > b->o.npairs ? a->o.npairs - b->o.npairs : b->o.npairs - a->o.npairs;
    size_t bad = 0;
    for (size_t k = 0; k < a->o.npairs; k++)
        bad += a->o.pairs[k].i != b->o.pairs[k].i || a->o.pairs[k].j != b->o.pairs[k].j ||
               memcmp(&a->o.pairs[k].d2, &b->o.pairs[k].d2, sizeof(double)) != 0;
    return bad;
}

/* Bytes one pair takes in a pair buffer at most (i, j and an FP64 d2):
 * the cap below leaves room for one smallest buffer and not for two. */
#define MAX_PAIR_BYTES 16

/* For one engine and symmetric setting: the default buffer (A), the
 * smallest buffers overlapped (B), and one smallest buffer (C). B goes to
 * *out for the caller (exact against fp64). */
static void check_engine(const engine *e, const dataset *ds, double eps, int sym, prun *out)
{
    /* A buffer of 1M pairs holds the whole result here, as the default's
     * 4M would (without pinning 100 MB for each engine). */
    prun A = run_pairs(e, ds, eps, sym, (size_t)1 << 20, 0, 0, 0);
    CHECK_MSG(A.rc == 0, "%s sym=%d large buffer: %s", e->name, sym, err_msg());
    /* batch 1000: every engine's smallest buffer (its min_cap). */
    prun B = run_pairs(e, ds, eps, sym, 1000, 0, 0, 0);
    CHECK_MSG(B.rc == 0, "%s sym=%d small buffers: %s", e->name, sym, err_msg());
    const double cap_pairs = jr_metric(&B.r, "pair_buffer"),
                 peak = jr_metric(&B.r, "device_mem_peak");
    CHECK_MSG(A.o.npairs > 4 * (size_t)cap_pairs, "%s: %zu pairs, buffer %g: too few to refill",
              e->name, A.o.npairs, cap_pairs);
    CHECK_MSG(jr_metric(&B.r, "launches") > 2, "%s: %g launches", e->name,
              jr_metric(&B.r, "launches"));
    CHECK_MSG(B.max_batch <= 1000, "%s: a batch of %zu pairs (asked 1000)", e->name, B.max_batch);
    size_t bad = pairs_differ(&A, &B);
    CHECK_MSG(bad == 0, "%s sym=%d: small overlapped buffers differ from a large one in %zu pairs",
              e->name, sym, bad);
    /* Two smallest buffers need peak bytes; half a buffer less holds one.
     * Only where the smallest buffer is FASTED's 32768 pairs (0.4 to 0.5
     * MB, the FASTED formats and exact): the FP64 engines' 1024 pairs (16
     * KB) are less than what they allocate and free before the loop, so
     * their peak says nothing of the buffers. */
    const size_t cap = (size_t)peak - (size_t)(cap_pairs * MAX_PAIR_BYTES / 2 + 1);
    prun C;
    memset(&C, 0, sizeof C);
    if (cap_pairs >= 32768) {
        C = run_pairs(e, ds, eps, sym, 1000, cap, 0, 0);
        CHECK_MSG(C.rc == 0, "%s sym=%d one buffer under %zu bytes: %s", e->name, sym, cap,
                  err_msg());
    }
    if (cap_pairs >= 32768 && C.rc == 0) {
        CHECK_MSG(jr_metric(&C.r, "buffers_shrunk") == 1, "%s: one buffer not reported", e->name);
        CHECK_MSG(jr_metric(&C.r, "pair_buffer") == cap_pairs, "%s: buffer %g vs %g", e->name,
                  jr_metric(&C.r, "pair_buffer"), cap_pairs);
        CHECK_MSG(jr_metric(&C.r, "device_mem_peak") <= peak - cap_pairs * 12,
                  "%s: one buffer held %g bytes, two %g", e->name,
                  jr_metric(&C.r, "device_mem_peak"), peak);
        bad = pairs_differ(&A, &C);
        CHECK_MSG(bad == 0, "%s sym=%d: one buffer differs from a large one in %zu pairs", e->name,
                  sym, bad);
    }
    printf("# %s sym=%d: %zu pairs; small buffers %g pairs, %g launches, %g refills, peak "
           "%.2f MB; one buffer %.2f MB\n",
           e->name, sym, A.o.npairs, cap_pairs, jr_metric(&B.r, "launches"),
           jr_metric(&B.r, "buffer_refills"), peak / 1e6, jr_metric(&C.r, "device_mem_peak") / 1e6);
    jo_free(&A.o);
    jo_free(&C.o);
    *out = B;
}

static void overlap_engines(size_t n, size_t d, const char *const *only)
{
    dataset ds;
    memset(&ds, 0, sizeof ds);
    double eps;
    set_clustered(n, d, 13, &ds, &eps);
    int ran = 0;
    for (int sym = 0; sym < 2; sym++) {
        prun exact_b, fp64_b;
        memset(&exact_b, 0, sizeof exact_b);
        memset(&fp64_b, 0, sizeof fp64_b);
        exact_b.rc = fp64_b.rc = -1;
        for (const engine *const *t = engine_table; *t; t++) {
            const engine *e = *t;
            if (!e->kjoin || engine_available(e, NULL) != 0)
                continue;
            int pick = !only;
            for (const char *const *w = only; w && *w && !pick; w++)
                pick = strcmp(*w, e->name) == 0;
            if (!pick)
                continue;
            ran++;
            prun B;
            memset(&B, 0, sizeof B);
            B.rc = -1;
            check_engine(e, &ds, eps, sym, &B);
            if (strcmp(e->name, "exact") == 0)
                exact_b = B;
            else if (strcmp(e->name, "fp64") == 0)
                fp64_b = B;
            else
                jo_free(&B.o);
        }
        /* exact's overlapped set is fp64's (both FP64 (a-b)^2 decisions). */
        if (exact_b.rc == 0 && fp64_b.rc == 0) {
            size_t bad = pairs_differ(&exact_b, &fp64_b);
            CHECK_MSG(bad == 0, "sym=%d: exact differs from fp64 in %zu pairs", sym, bad);
        }
        jo_free(&exact_b.o);
        jo_free(&fp64_b.o);
    }
    CHECK_MSG(ran > 0, "no GPU engine could run");
    dataset_free(&ds);
}

TEST(overlap_equals_default_and_one_buffer_every_engine)
{
    need_gpu();
    overlap_engines(4000, 32, NULL);
}

/* A sink that stops after a few batches, and a cancel raised from the
 * sink: the run ends with that error, having delivered no more than it
 * computed, and the next run gives the whole set again. */
TEST(sink_stop_and_cancel_leave_the_session_usable)
{
    need_gpu();
    dataset ds;
    memset(&ds, 0, sizeof ds);
    double eps;
    set_clustered(3000, 32, 13, &ds, &eps);
    static const char *const names[] = {"fasted", "exact", "fp64", "ted", NULL};
    for (const char *const *nm = names; *nm; nm++) {
        const engine *e = engine_find(*nm);
        if (!e || engine_available(e, NULL) != 0)
            continue;
        for (int sym = 0; sym < 2; sym++) {
            prun A = run_pairs(e, &ds, eps, sym, 1000, 0, 0, 0);
            CHECK_MSG(A.rc == 0, "%s: %s", e->name, err_msg());
            for (int how = 0; how < 2; how++) {
                prun S = run_pairs(e, &ds, eps, sym, 1000, 0, 3, how);
                CHECK_MSG(S.rc == (how ? TCJ_ECANCEL : TCJ_EIO), "%s sym=%d %s: rc %d (%s)",
                          e->name, sym, how ? "cancel" : "stop", S.rc, err_msg());
                if (!how)
                    CHECK_STR_CONTAINS(err_msg(), "stopped");
                /* Stopped: the third batch was the last the sink saw; a
                 * cancel lets the copied batch before it through. */
                CHECK_MSG(S.o.npairs < A.o.npairs, "%s: %zu of %zu pairs after a stop", e->name,
                          S.o.npairs, A.o.npairs);
                prun N = run_pairs(e, &ds, eps, sym, 1000, 0, 0, 0);
                CHECK_MSG(N.rc == 0, "%s after a stop: %s", e->name, err_msg());
                size_t bad = pairs_differ(&A, &N);
                CHECK_MSG(bad == 0, "%s sym=%d: the run after a %s differs in %zu pairs", e->name,
                          sym, how ? "cancel" : "stop", bad);
                jo_free(&S.o);
                jo_free(&N.o);
            }
            jo_free(&A.o);
        }
    }
    dataset_free(&ds);
}

/* The small case compute-sanitizer runs: fasted and exact (whose kept
 * pairs are copied out of its own buffers) through both paths. */
TEST(overlap_sanitizer_case)
{
    need_gpu();
    static const char *const names[] = {"fasted", "exact", NULL};
    overlap_engines(3000, 16, names);
}
