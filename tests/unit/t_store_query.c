/* The dashboard's query API (store/query.c: store_session_runs): runs of
 * one session, newest first, as structs, against the values written with
 * store_run; the other session's runs stay out; the limit holds; NULL
 * columns come back as NAN; a cancelled run keeps its code. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "err.h"
#include "store.h"

typedef struct got {
    store_run_brief r[8];
    int n, stop_after;
} got;

static int take(void *ctx, const store_run_brief *r)
{
    got *g = ctx;
    if (g->n < 8)
        g->r[g->n++] = *r;
    return g->stop_after && g->n >= g->stop_after;
}

static int64_t add_run(store *st, int64_t sid, const char *engine, double eps, uint64_t pairs,
                       int status, double tflops)
{
    join_result res;
    memset(&res, 0, sizeof res);
    res.pairs = pairs;
    res.seconds = 0.25;
    store_run_rec r;
    memset(&r, 0, sizeof r);
    r.session_id = sid;
    r.engine = engine;
    r.precision = "fp64";
    r.mode = "count";
    r.eps = eps;
    r.q1 = r.n = 10;
    r.d = r.d_padded = 2;
    r.status = status;
    r.error = status ? "stopped" : NULL;
    r.res = &res;
    r.selectivity = (double)pairs / 10 - 1;
    r.tflops_padded = tflops;
    return store_run(st, &r);
}

TEST(session_runs_newest_first_as_structs)
{
    char path[] = "/tmp/t_store_query-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    unlink(path);
    store *st = NULL;
    CHECK_MSG(store_open(path, &st) == 0, "%s", err_msg());
    if (!st)
        return;
    const int64_t s1 = store_session_begin(st, "t", "0", "host");
    const int64_t s2 = store_session_begin(st, "t", "0", "host");
    const int64_t a = add_run(st, s1, "cpu", 0.5, 30, 0, 1.5);
    add_run(st, s2, "fasted", 0.7, 40, 0, 2.0);
    const int64_t c = add_run(st, s1, "cpu-fp16", 0.25, 20, TCJ_ECANCEL, NAN);
    got g = {0};
    CHECK_EQ_INT(store_session_runs(st, s1, 64, take, &g), 0);
    CHECK_EQ_INT(g.n, 2);
    CHECK(g.r[0].id == c && strcmp(g.r[0].engine, "cpu-fp16") == 0 &&
          g.r[0].status == TCJ_ECANCEL && g.r[0].eps == 0.25);
    /* a run that did not finish stores no pair count: 0 here */
    CHECK_EQ_INT((int)g.r[0].pairs, 0);
    CHECK_MSG(isnan(g.r[0].tflops), "a NULL tflops reads %g", g.r[0].tflops);
    CHECK(g.r[1].id == a && strcmp(g.r[1].engine, "cpu") == 0 && g.r[1].status == 0 &&
          g.r[1].eps == 0.5 && g.r[1].pairs == 30 && g.r[1].selectivity == 2.0 &&
          g.r[1].tflops == 1.5);
    /* the limit, and a callback that stops */
    got one = {0};
    CHECK_EQ_INT(store_session_runs(st, s1, 1, take, &one), 0);
    CHECK(one.n == 1 && one.r[0].id == c);
    got stop = {.stop_after = 1};
    CHECK_EQ_INT(store_session_runs(st, s1, 64, take, &stop), 0);
    CHECK_EQ_INT(stop.n, 1);
    store_close(st);
    unlink(path);
    char side[sizeof path + 8];
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}
