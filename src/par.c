#include "par.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
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
 * file of a line a CPU, which every par_for would pay (with this and
 * restrict in its loops, src/cluster/dbscan.c, DBSCAN's numbering takes
 * over a quarter less at 60,000 points). */
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

static void par_pool_atfork(void);

static void *par_call_main(void *p)
{
    par_call *c = p;
    c->fn(c->ctx, c->t);
    return NULL;
}

/* Spawned threads: par_threads's route where the workers below are busy
 * (another caller's, or this call is made from one of them) or could not
 * start. */
static void par_spawn(int nt, void (*fn)(void *ctx, int t), void *ctx)
{
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

/* PAR_MAX_THREADS - 1 workers, started at the first call that needs them
 * and kept for the process, parked on a condition variable between calls.
 * A thread started and joined each call would cost the par_fors most of
 * a 60,000-point step on the H200 host (a gVisor sandbox; DBSCAN curve's
 * closed components, four par_fors). One call at a time
 * takes them (busy); worker w runs share w of a call of more than w
 * threads. */
static struct {
    pthread_mutex_t mu, busy;
    pthread_cond_t go, done;
    unsigned long gen; /* the call's number: a worker runs each once */
    void (*fn)(void *ctx, int t);
    void *ctx;
    int nt, left;                        /* the call's threads; its workers not yet done */
    int workers;                         /* started */
    unsigned long gen0[PAR_MAX_THREADS]; /* gen when worker w started */
} par_pool = {.mu = PTHREAD_MUTEX_INITIALIZER,
              .busy = PTHREAD_MUTEX_INITIALIZER,
              .go = PTHREAD_COND_INITIALIZER,
              .done = PTHREAD_COND_INITIALIZER};

static void *par_worker(void *arg)
{
    const int w = (int)(intptr_t)arg;
    /* the calls before it started are not its (a worker may first run
     * after the call that started it has already begun) */
    unsigned long seen = par_pool.gen0[w];
    pthread_mutex_lock(&par_pool.mu);
    for (;;) {
        while (par_pool.gen == seen)
            pthread_cond_wait(&par_pool.go, &par_pool.mu);
        seen = par_pool.gen;
        if (w >= par_pool.nt)
            continue;
        void (*fn)(void *, int) = par_pool.fn;
        void *ctx = par_pool.ctx;
        pthread_mutex_unlock(&par_pool.mu);
        fn(ctx, w);
        pthread_mutex_lock(&par_pool.mu);
        if (--par_pool.left == 0)
            pthread_cond_signal(&par_pool.done);
    }
    return NULL;
}

/* A forked child has none of the parent's workers (only the forking
 * thread is copied): it starts its own when it needs them. */
static void par_pool_child(void)
{
    pthread_mutex_init(&par_pool.mu, NULL);
    pthread_mutex_init(&par_pool.busy, NULL);
    pthread_cond_init(&par_pool.go, NULL);
    pthread_cond_init(&par_pool.done, NULL);
    par_pool.workers = 0;
}

static void par_pool_atfork(void)
{
    pthread_atfork(NULL, NULL, par_pool_child);
}

/* Workers 1..nt-1 running (the caller holds busy): whether they are. */
static int par_pool_ready(int nt)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, par_pool_atfork);
    while (par_pool.workers < nt - 1) {
        pthread_t th;
        pthread_attr_t at;
        if (pthread_attr_init(&at) != 0)
            return 0;
        pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
        par_pool.gen0[par_pool.workers + 1] = par_pool.gen;
        const int rc =
            pthread_create(&th, &at, par_worker, (void *)(intptr_t)(par_pool.workers + 1));
        pthread_attr_destroy(&at);
        if (rc != 0)
            return 0;
        pthread_mutex_lock(&par_pool.mu);
        par_pool.workers++;
        pthread_mutex_unlock(&par_pool.mu);
    }
    return 1;
}

void par_threads(int nt, void (*fn)(void *ctx, int t), void *ctx)
{
    if (nt > PAR_MAX_THREADS)
        nt = PAR_MAX_THREADS;
    if (nt <= 1) {
        if (nt == 1)
            fn(ctx, 0);
        return;
    }
    if (pthread_mutex_trylock(&par_pool.busy) != 0) {
        par_spawn(nt, fn, ctx);
        return;
    }
    if (!par_pool_ready(nt)) {
        pthread_mutex_unlock(&par_pool.busy);
        par_spawn(nt, fn, ctx);
        return;
    }
    pthread_mutex_lock(&par_pool.mu);
    par_pool.fn = fn;
    par_pool.ctx = ctx;
    par_pool.nt = nt;
    par_pool.left = nt - 1;
    par_pool.gen++;
    pthread_cond_broadcast(&par_pool.go);
    pthread_mutex_unlock(&par_pool.mu);
    fn(ctx, 0);
    pthread_mutex_lock(&par_pool.mu);
    while (par_pool.left > 0)
        pthread_cond_wait(&par_pool.done, &par_pool.mu);
    pthread_mutex_unlock(&par_pool.mu);
    pthread_mutex_unlock(&par_pool.busy);
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

/* Whether every page of [p, p + bytes) is resident (mincore; where it
 * cannot tell, not). */
static int par_resident(const void *p, size_t bytes)
{
    const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t a = (uintptr_t)p & ~(pg - 1);
    const uintptr_t end = (uintptr_t)p + bytes;
    unsigned char v[1024];
    while (a < end) {
        const size_t pages =
            (end - a + pg - 1) / pg < sizeof v ? (end - a + pg - 1) / pg : sizeof v;
        if (mincore((void *)a, pages * pg, v) != 0)
            return 0;
        for (size_t k = 0; k < pages; k++)
            if (!(v[k] & 1))
                return 0;
        a += pages * pg;
    }
    return 1;
}

/* par_fault_in's ranges laid end to end: a byte's range found by a walk
 * (a handful of ranges). */
typedef struct par_fault {
    unsigned char *p[PAR_FAULT_MAX];
    size_t at[PAR_FAULT_MAX + 1]; /* each range's first byte in the whole */
    int m;
    size_t pg;
} par_fault;

static void par_fault_range(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const par_fault *f = ctx;
    for (int r = 0; r < f->m; r++) {
        const size_t lo = a > f->at[r] ? a : f->at[r], hi = b < f->at[r + 1] ? b : f->at[r + 1];
        if (lo >= hi)
            continue;
        unsigned char *q = f->p[r] + (lo - f->at[r]);
        /* the first byte of each page the range holds: an atomic add of 0
         * is one write fault, and leaves the byte as it was */
        for (unsigned char *x = q; x < q + (hi - lo);) {
            __atomic_fetch_add(x, 0, __ATOMIC_RELAXED);
            const uintptr_t next = ((uintptr_t)x / f->pg + 1) * f->pg;
            x = (unsigned char *)next;
        }
    }
}

void par_fault_in(void *const *p, const size_t *bytes, int m)
{
    par_fault f = {.m = 0, .pg = (size_t)sysconf(_SC_PAGESIZE)};
    f.at[0] = 0;
    for (int r = 0; r < m && r < PAR_FAULT_MAX; r++)
        if (bytes[r] && !par_resident(p[r], bytes[r])) {
            f.p[f.m] = p[r];
            f.at[f.m + 1] = f.at[f.m] + bytes[r];
            f.m++;
        }
    if (f.m == 0)
        return;
    int nt;
    /* a page's fault costs what some 4096 bytes' zeroing does */
    par_for(f.at[f.m], 1, par_fault_range, &f, &nt);
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
