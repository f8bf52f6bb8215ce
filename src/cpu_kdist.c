#include "cpu_kdist.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_join.h"
#include "err.h"

typedef struct ck_shared {
    const kdist_spec *spec;
    const cpu_kernel *k;
    size_t q0, q1, n, qb, cb, nqblocks;
    int kk;
    atomic_size_t next;
    atomic_size_t rows_done;
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} ck_shared;

typedef struct ck_worker {
    ck_shared *sh;
    double *out;
    void *scratch, *scratch_raw;
    double *heap; /* qb heaps of kk values */
    int *len;     /* values in each heap */
} ck_worker;

/* Replace the top of a full max-heap with v (v < top) and restore order. */
static void heap_replace_top(double *h, int n, double v)
{
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1] > h[c])
            c++;
        if (!(h[c] > v))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = v;
}

static void heap_push(double *h, int n, double v)
{
    int i = n;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!(h[p] < v))
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static int ck_cancelled(ck_shared *sh)
{
    if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
        return 1;
    const volatile int *c = sh->spec->cancel;
    if (c && __atomic_load_n((const int *)c, __ATOMIC_RELAXED)) {
        atomic_store(&sh->stop, 1);
        return 1;
    }
    return 0;
}

static void *ck_work(void *arg)
{
    ck_worker *w = arg;
    ck_shared *sh = w->sh;
    const cpu_kernel *k = sh->k;
    const int kk = sh->kk;
    for (;;) {
        size_t blk = atomic_fetch_add(&sh->next, 1);
        if (blk >= sh->nqblocks || ck_cancelled(sh))
            break;
        size_t qa = sh->q0 + blk * sh->qb;
        size_t qe = qa + sh->qb < sh->q1 ? qa + sh->qb : sh->q1;
        memset(w->len, 0, sh->qb * sizeof *w->len);
        for (size_t ca = 0; ca < sh->n; ca += sh->cb) {
            if (ck_cancelled(sh))
                break;
            size_t ce = ca + sh->cb < sh->n ? ca + sh->cb : sh->n;
            if (k->prepare)
                k->prepare(k->ctx, w->scratch, ca, ce);
            for (size_t q = qa; q < qe; q++) {
                double *h = w->heap + (q - qa) * (size_t)kk;
                int *len = &w->len[q - qa];
                /* Until the heap is full every candidate counts. */
                double lim = *len == kk ? h[0] : INFINITY;
                k->row(k->ctx, w->scratch, q, ca, ce, lim, w->out);
                for (size_t c = 0; c < ce - ca; c++) {
                    double v = w->out[c];
                    if (ca + c == q || v != v)
                        continue;
                    if (*len < kk) {
                        heap_push(h, *len, v);
                        (*len)++;
                    } else if (v < h[0]) {
                        heap_replace_top(h, kk, v);
                    }
                }
            }
        }
        if (!atomic_load(&sh->stop))
            for (size_t q = qa; q < qe; q++)
                sh->spec->out[q - sh->q0] = w->heap[(q - qa) * (size_t)kk];
        atomic_fetch_add(&sh->rows_done, qe - qa);
    }
    pthread_mutex_lock(&sh->mu);
    sh->finished++;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

static size_t ck_clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int cpu_kdist_run(const kdist_spec *spec, const cpu_kernel *k, join_result *res)
{
    const size_t nq = spec->q1 - spec->q0;
    ck_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.spec = spec;
    sh.k = k;
    sh.q0 = spec->q0;
    sh.q1 = spec->q1;
    sh.n = spec->ds->n;
    sh.kk = spec->k;
    int nthr = cpu_join_threads(spec->opts);
    /* The blocking of cpu_join: query blocks share a candidate block while
     * it sits in cache. */
    sh.qb = ck_clamp(nq / ((size_t)nthr * 4), 1, 64);
    sh.cb = ck_clamp(((size_t)128 << 10) / (k->row_bytes ? k->row_bytes : 1), CPU_GROUP, 2048);
    sh.cb = (sh.cb + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    sh.nqblocks = (nq + sh.qb - 1) / sh.qb;
    if ((size_t)nthr > sh.nqblocks)
        nthr = sh.nqblocks ? (int)sh.nqblocks : 1;
    atomic_init(&sh.next, 0);
    atomic_init(&sh.rows_done, 0);
    atomic_init(&sh.stop, 0);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);

    ck_worker *w = xcalloc((size_t)nthr, sizeof *w);
    for (int t = 0; t < nthr; t++) {
        w[t].sh = &sh;
        w[t].out = xmalloc((sh.cb + CPU_GROUP) * sizeof *w[t].out);
        if (k->scratch_row_bytes) {
            w[t].scratch_raw = xmalloc(sh.cb * k->scratch_row_bytes + 64);
            w[t].scratch = (void *)(((uintptr_t)w[t].scratch_raw + 63) & ~(uintptr_t)63);
        }
        w[t].heap = xmalloc(sh.qb * (size_t)sh.kk * sizeof *w[t].heap);
        w[t].len = xmalloc(sh.qb * sizeof *w[t].len);
    }

    double t0 = engine_now();
    const cpu_pool pool = {&sh.mu, &sh.cv,         &sh.finished,      &sh.rows_done,
                           nq,     spec->progress, spec->progress_ctx};
    cpu_pool_run(&pool, nthr, ck_work, w, sizeof *w);
    double wall = engine_now() - t0;
    int rc = atomic_load(&sh.stop) ? err_set(TCJ_ECANCEL, "cancelled") : 0;
    if (!rc && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    res->kernel_seconds = wall;
    join_result_phase(res, "compute", wall);
    snprintf(res->device, sizeof res->device, "%s (%d threads)", cpu_join_model(), nthr);
    snprintf(res->variant, sizeof res->variant,
             "%s, %s, top-%d heaps cut at the k-th, blocks %zux%zu, %d threads", k->name,
             k->path ? k->path : "scalar", sh.kk, sh.qb, sh.cb, nthr);
    join_result_metric(res, "threads", nthr, "");
    for (int t = 0; t < nthr; t++) {
        free(w[t].out);
        free(w[t].scratch_raw);
        free(w[t].heap);
        free(w[t].len);
    }
    free(w);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    return rc;
}
