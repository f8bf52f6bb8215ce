#include "par.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

/* The ranges are fixed by n and the work alone (PAR_MAX_THREADS of them,
 * or one), never by the machine's cores, so what the caller combines, and
 * its rounding, is the same on every machine; the threads (at most one a
 * core) take ranges t, t + threads, ... */
typedef struct par_job {
    void (*fn)(void *ctx, int t, size_t a, size_t b);
    void *ctx;
    int first, step, nranges;
    size_t n, per;
} par_job;

static void *par_main(void *p)
{
    par_job *j = p;
    for (int t = j->first; t < j->nranges; t += j->step) {
        const size_t a = j->per * (size_t)t < j->n ? j->per * (size_t)t : j->n;
        const size_t b = a + j->per < j->n ? a + j->per : j->n;
        j->fn(j->ctx, t, a, b);
    }
    return NULL;
}

static size_t par_min;

/* The cores online, asked once: glibc may read them from /proc/stat, a
 * file of a line a CPU, which every par_for paid (DBSCAN's numbering on
 * the H200 host went from 0.85 to 0.6 ms for 60,000 points with this and
 * restrict in its loops, src/dbscan.c). */
long par_cores(void)
{
    static _Atomic long cores;
    long c = cores;
    if (c == 0) {
        c = sysconf(_SC_NPROCESSORS_ONLN);
        cores = c = c > 0 ? c : 1;
    }
    return c;
}

void par_for_tests(size_t min)
{
    par_min = min;
}

int par_ranges(size_t n, size_t weight)
{
    return n * weight < (par_min ? par_min : PAR_MIN) || n < PAR_MAX_THREADS ? 1 : PAR_MAX_THREADS;
}

typedef struct par_call {
    void (*fn)(void *ctx, int t);
    void *ctx;
    int t;
} par_call;

static void *par_call_main(void *p)
{
    par_call *c = p;
    c->fn(c->ctx, c->t);
    return NULL;
}

void par_threads(int nt, void (*fn)(void *ctx, int t), void *ctx)
{
    if (nt > PAR_MAX_THREADS)
        nt = PAR_MAX_THREADS;
    par_call call[PAR_MAX_THREADS];
    pthread_t th[PAR_MAX_THREADS];
    int started[PAR_MAX_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        call[t] = (par_call){fn, ctx, t};
        /* Thread 0's share runs here; one that cannot start runs here too. */
        if (t > 0)
            started[t] = pthread_create(&th[t], NULL, par_call_main, &call[t]) == 0;
    }
    if (nt > 0)
        par_call_main(&call[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        else
            par_call_main(&call[t]);
    }
}

static void par_job_run(void *ctx, int t)
{
    par_main((par_job *)ctx + t);
}

void par_for(size_t n, size_t weight, void (*fn)(void *ctx, int t, size_t a, size_t b), void *ctx,
             int *nt)
{
    const int k = par_ranges(n, weight);
    const long cores = par_cores();
    const int nth = k == 1 || cores < 2 ? 1 : (int)(cores < k ? cores : k);
    par_job job[PAR_MAX_THREADS];
    const size_t per = (n + (size_t)k - 1) / (size_t)k;
    for (int t = 0; t < nth; t++)
        job[t] = (par_job){fn, ctx, t, nth, k, n, per};
    par_threads(nth, par_job_run, job);
    *nt = k;
}

static void par_zero_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    memset((char *)ctx + a, 0, b - a);
}

void par_zero(void *p, size_t bytes)
{
    int nt;
    par_for(bytes, 1, par_zero_range, p, &nt);
}

size_t par_offsets(size_t *at, int nt)
{
    size_t m = 0;
    for (int t = 0; t < nt; t++) {
        const size_t c = at[t];
        at[t] = m;
        m += c;
    }
    return m;
}
