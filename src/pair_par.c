#include "pair_par.h"

#include <unistd.h>

#include "par.h"

typedef struct pp_job {
    pair_par_fn fn;
    void *ctx;
    const pair_batch *b;
    size_t lo, hi;
} pp_job;

static size_t pp_min;
static int pp_threads;

void pair_par_for_tests(size_t k, int threads)
{
    pp_min = k;
    pp_threads = threads;
}

static void pp_run(void *ctx, int t)
{
    const pp_job *j = (const pp_job *)ctx + t;
    j->fn(j->ctx, j->b, j->lo, j->hi);
}

int pair_par(const pair_batch *b, size_t n, pair_par_fn fn, void *ctx)
{
    const size_t least = pp_min ? pp_min : PAIR_PAR_MIN;
    long cores = pp_threads ? pp_threads : par_cores();
    int nt = cores < 1 ? 1 : cores > PAIR_PAR_MAX_THREADS ? PAIR_PAR_MAX_THREADS : (int)cores;
    if (b->k < least || n < (size_t)nt)
        nt = 1;
    if (nt == 1) {
        fn(ctx, b, 0, n);
        return 1;
    }
    pp_job job[PAIR_PAR_MAX_THREADS];
    for (int t = 0; t < nt; t++)
        job[t] = (pp_job){fn, ctx, b, n * (size_t)t / (size_t)nt, n * (size_t)(t + 1) / (size_t)nt};
    par_threads(nt, pp_run, job);
    return nt;
}
