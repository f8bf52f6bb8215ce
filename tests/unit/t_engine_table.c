/* The engine rows state what each engine computes, and the program picks
 * engines for roles from those fields, never from names: the choosers on
 * fake tables (rank, availability, set device), and the real table's rows. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"

static int never_run(const join_spec *s, join_result *r)
{
    (void)s;
    (void)r;
    return TCJ_EUNSUP;
}

/* A GPU-like engine that exists on devices 0 and 1 only. */
static int two_devices(const engine_opts *o)
{
    int dev = o ? o->device : 0;
    return dev < 2 ? 0 : err_set(TCJ_ENODEV, "fake: no device %d", dev);
}

static int nowhere(const engine_opts *o)
{
    (void)o;
    return err_set(TCJ_ENODEV, "fake: never here");
}

static const engine host = {.name = "host",
                            .run = never_run,
                            .dist = ENGINE_DIST_FP64,
                            .exact = 1,
                            .rank = {[ENGINE_ROLE_DEFAULT] = 1, [ENGINE_ROLE_TRUTH] = 1}};
static const engine fast = {.name = "fast",
                            .available = two_devices,
                            .run = never_run,
                            .dist = ENGINE_DIST_FP32,
                            .rank = {[ENGINE_ROLE_DEFAULT] = 2}};
static const engine gpu_truth = {.name = "gpu-truth",
                                 .available = two_devices,
                                 .run = never_run,
                                 .dist = ENGINE_DIST_FP64,
                                 .exact = 1,
                                 .rank = {[ENGINE_ROLE_TRUTH] = 2}};
static const engine better_truth = {.name = "better-truth",
                                    .available = nowhere,
                                    .run = never_run,
                                    .dist = ENGINE_DIST_FP64,
                                    .exact = 1,
                                    .rank = {[ENGINE_ROLE_TRUTH] = 3}};
/* available everywhere, but never chosen for a role */
static const engine emul = {.name = "emul", .run = never_run, .dist = ENGINE_DIST_FP32};
static const engine host2 = {.name = "host2",
                             .run = never_run,
                             .dist = ENGINE_DIST_FP64,
                             .exact = 1,
                             .rank = {[ENGINE_ROLE_DEFAULT] = 1, [ENGINE_ROLE_TRUTH] = 1}};

TEST(roles_go_to_the_best_available_rank)
{
    const engine *t[] = {&emul, &host, &fast, &gpu_truth, &better_truth, &host2, NULL};
    engine_opts o;
    engine_opts_default(&o);
    /* device 0 exists: the GPU engines win their roles; better_truth
     * outranks gpu_truth but cannot run, so it is skipped */
    CHECK(engine_best_of(t, ENGINE_ROLE_DEFAULT, &o) == &fast);
    CHECK(engine_best_of(t, ENGINE_ROLE_TRUTH, &o) == &gpu_truth);
    CHECK(engine_best_of(t, ENGINE_ROLE_DEFAULT, NULL) == &fast); /* NULL: defaults */
    /* set device 1: still there; set device 5: the host engines serve, and
     * of the two equal ranks the earlier row */
    o.device = 1;
    CHECK(engine_best_of(t, ENGINE_ROLE_TRUTH, &o) == &gpu_truth);
    o.device = 5;
    CHECK(engine_best_of(t, ENGINE_ROLE_DEFAULT, &o) == &host);
    CHECK(engine_best_of(t, ENGINE_ROLE_TRUTH, &o) == &host);
    CHECK(err_msg()[0] == '\0'); /* the unavailable ones leave no message */
    /* order does not matter for different ranks */
    const engine *r[] = {&better_truth, &gpu_truth, &fast, &host2, &host, &emul, NULL};
    o.device = 0;
    CHECK(engine_best_of(r, ENGINE_ROLE_DEFAULT, &o) == &fast);
    CHECK(engine_best_of(r, ENGINE_ROLE_TRUTH, &o) == &gpu_truth);
    o.device = 5;
    CHECK(engine_best_of(r, ENGINE_ROLE_TRUTH, &o) == &host2);
    /* rank 0 is never chosen, even when it is the only one that can run */
    const engine *only[] = {&emul, &better_truth, NULL};
    CHECK(engine_best_of(only, ENGINE_ROLE_DEFAULT, &o) == NULL);
    CHECK(engine_best_of(only, ENGINE_ROLE_TRUTH, &o) == NULL);
}

/* Every row of the real table states its arithmetic, consistently. */
TEST(rows_state_their_arithmetic)
{
    int always[ENGINE_NROLES] = {0};
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        CHECK_MSG(e->dist == ENGINE_DIST_FP32 || e->dist == ENGINE_DIST_FP64,
                  "%s: distance type unset", e->name);
        CHECK_MSG(e->in_bits >= 2 && e->in_bits <= 53, "%s: in_bits %d", e->name, e->in_bits);
        CHECK_MSG(e->precision && e->precision[0] && e->summary && e->summary[0], "%s", e->name);
        /* an exact pair set needs FP64 distances; a ground truth is exact */
        CHECK_MSG(!e->exact || (e->dist == ENGINE_DIST_FP64 && e->in_bits == 53), "%s", e->name);
        CHECK_MSG(e->rank[ENGINE_ROLE_TRUTH] == 0 || e->exact, "%s: a truth must be exact",
                  e->name);
        CHECK_MSG(engine_find(e->name) == e, "%s", e->name);
        for (int r = 0; r < ENGINE_NROLES; r++)
            if (e->rank[r] > 0 && !e->available && !e->gpu)
                always[r] = 1;
    }
    /* each role is filled on any machine: some engine that always runs
     * holds it */
    CHECK(always[ENGINE_ROLE_DEFAULT] && always[ENGINE_ROLE_TRUTH]);
    CHECK(engine_find("no-such-engine") == NULL);
}

/* On this machine: the chosen engines can run, and no engine that can run
 * outranks them. */
TEST(real_roles_are_the_best_available)
{
    engine_opts o;
    engine_opts_default(&o);
    for (int r = 0; r < ENGINE_NROLES; r++) {
        const engine *b = engine_best((engine_role)r, &o);
        CHECK(b && engine_available(b, &o) == 0 && b->rank[r] > 0);
        for (const engine *const *t = engine_table; *t; t++)
            if (engine_available(*t, &o) == 0)
                CHECK_MSG((*t)->rank[r] <= b->rank[r], "%s outranks %s", (*t)->name, b->name);
    }
    err_clear();
}

/* GPU engines honour set device: a device past the last one is refused
 * with one line naming it; CPU engines do not care. */
TEST(gpu_engines_honour_set_device)
{
    engine_opts o;
    engine_opts_default(&o);
    int ndev = kern_device_count();
    o.device = ndev > 0 ? ndev : 7;
    int gpus = 0;
    for (const engine *const *t = engine_table; *t; t++) {
        const engine *e = *t;
        err_clear();
        int rc = engine_available(e, &o);
        if (!e->gpu) {
            CHECK_MSG(rc == 0, "%s: %s", e->name, err_msg());
            continue;
        }
        gpus++;
        CHECK_MSG(rc == TCJ_ENODEV, "%s on device %d: %d", e->name, o.device, rc);
        CHECK_MSG(strchr(err_msg(), '\n') == NULL && strstr(err_msg(), e->name) == err_msg(),
                  "%s: '%s'", e->name, err_msg());
        if (ndev > 0) {
            char want[64];
            snprintf(want, sizeof want, "no CUDA device %d", o.device);
            CHECK_STR_CONTAINS(err_msg(), want);
        }
    }
    CHECK(gpus > 0);
    /* with no device asked past the end, the defaults fall back to CPU
     * engines that always run */
    const engine *d = engine_best(ENGINE_ROLE_DEFAULT, &o);
    const engine *g = engine_best(ENGINE_ROLE_TRUTH, &o);
    CHECK(d && !d->gpu && g && !g->gpu && g->exact);
    err_clear();
}

/* Without a device no GPU row may say it can run, whether the build has
 * CUDA (the format's device check) or not (a NULL format: the device
 * check of engine_available); the default engine is then a CPU one. */
TEST(gpu_rows_unavailable_without_a_device)
{
    if (kern_device_count() > 0)
        t_skip("skipped: a CUDA device is present");
    for (const engine *const *t = engine_table; *t; t++)
        if ((*t)->gpu)
            CHECK_MSG(engine_available(*t, NULL) != 0, "%s says it is available", (*t)->name);
    const engine *d = engine_best(ENGINE_ROLE_DEFAULT, NULL);
    const engine *r = engine_best(ENGINE_ROLE_TRUTH, NULL);
    CHECK(d && !d->gpu);
    CHECK(r && !r->gpu && r->exact);
}
