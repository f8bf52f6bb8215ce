#include "cpu_join.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dist.h"
#include "err.h"
#include "mem.h"
#include "par.h"

/* State shared by the workers of one run. */
typedef struct cj_shared {
    const join_spec *spec;
    const cpu_kernel *k;
    size_t q0, q1, n;
    size_t qb, cb; /* query and candidate block rows */
    size_t nqblocks;
    size_t cap;   /* pairs per thread buffer */
    double lim;   /* short-circuit limit handed to k->row */
    size_t nrows; /* query rows per kernel call */
    /* With a grid index: position -> row, and the work items, each a run
     * of query positions within one cell. */
    const uint32_t *order;
    struct cj_item *items;
    atomic_size_t next; /* next query block to hand out */
    atomic_size_t rows_done;
    atomic_int stop;

    pthread_mutex_t mu; /* guards everything below, and the sink */
    pthread_cond_t cv;
    int finished;
    int err;
    char errmsg[512];
    double sink_seconds;
    uint64_t pairs;
    uint64_t examined; /* with a grid: query rows times candidates met */
    uint64_t hist_below;
    uint64_t *hist;
} cj_shared;

typedef struct cj_item {
    size_t cell, p0, p1;
} cj_item;

typedef struct cj_worker {
    cj_shared *sh;
    double *out; /* nrows rows of cb values */
    size_t (*rng)[2];
    void *scratch, *scratch_raw;
    uint32_t *bi, *bj;
    double *bd;
    size_t len;
    uint64_t pairs, below, examined;
    uint64_t *hist;
} cj_worker;

void cpu_pool_run(const cpu_pool *p, int nthr, void *(*fn)(void *), void *args, size_t stride)
{
    pthread_t *tid = xmalloc((size_t)(nthr > 0 ? nthr : 1) * sizeof *tid);
    int started = 0;
    for (int t = 0; t < nthr; t++) {
        if (pthread_create(&tid[t], NULL, fn, (char *)args + (size_t)t * stride) != 0)
            break;
        started++;
    }
    if (started == 0) {
        /* No thread could be created: do the work here. */
        fn(args);
    } else {
        /* The calling thread reports progress while the workers run. */
        pthread_mutex_lock(p->mu);
        while (*p->finished < started) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(p->cv, p->mu, &ts);
            if (p->progress && *p->finished < started && p->nq) {
                pthread_mutex_unlock(p->mu);
                p->progress(p->progress_ctx, (double)atomic_load(p->rows_done) / (double)p->nq);
                pthread_mutex_lock(p->mu);
            }
        }
        pthread_mutex_unlock(p->mu);
        for (int t = 0; t < started; t++)
            pthread_join(tid[t], NULL);
    }
    free(tid);
}

/* tcjoin-mpi (src/dist.h): each part of a shared run is a join over a
 * range of rows, and each would build the same index (the whole dataset,
 * one radius); the last one built is kept and copied instead (a copy is
 * n row numbers, a sort is much more). */
static struct {
    const dataset *ds;
    uint64_t hash;
    size_t n, d;
    double r;
    int want, use;
    cpu_grid g;
} cj_kept;
static pthread_mutex_t cj_kept_mu = PTHREAD_MUTEX_INITIALIZER;

static void cj_grid_copy(const cpu_grid *from, cpu_grid *to)
{
    *to = *from;
    to->order = xmalloc(from->n * sizeof *to->order);
    memcpy(to->order, from->order, from->n * sizeof *to->order);
    to->key = xmalloc((from->ncell ? from->ncell : 1) * sizeof *to->key);
    memcpy(to->key, from->key, from->ncell * sizeof *to->key);
    to->start = xmalloc((from->ncell + 1) * sizeof *to->start);
    memcpy(to->start, from->start, (from->ncell + 1) * sizeof *to->start);
}

/* 1 (and g filled when the index is used) when the kept index is this
 * one's; use: whether it is used. Caller holds cj_kept_mu. */
static int cj_kept_find(const join_spec *spec, double r, int want, cpu_grid *g, int *use)
{
    const dataset *ds = spec->ds;
    if (!dist || cj_kept.ds != ds || cj_kept.hash != ds->hash || cj_kept.n != ds->n ||
        cj_kept.d != ds->d || cj_kept.r != r || cj_kept.want != want)
        return 0;
    *use = cj_kept.use;
    if (*use)
        cj_grid_copy(&cj_kept.g, g);
    return 1;
}

static void cj_kept_put(const join_spec *spec, double r, int want, const cpu_grid *g, int use)
{
    if (!dist)
        return;
    if (cj_kept.use)
        cpu_grid_free(&cj_kept.g);
    cj_kept.ds = spec->ds;
    cj_kept.hash = spec->ds->hash;
    cj_kept.n = spec->ds->n;
    cj_kept.d = spec->ds->d;
    cj_kept.r = r;
    cj_kept.want = want;
    cj_kept.use = use;
    if (use)
        cj_grid_copy(g, &cj_kept.g);
}

int cpu_join_index_want(const engine_opts *o)
{
    const int want = o ? o->cpu_index : CPU_INDEX_AUTO;
    return want > CPU_INDEX_AUTO && want < CPU_INDEX_N ? want : CPU_INDEX_AUTO;
}

static const char *const cj_index_names[CPU_INDEX_N] = {"auto", "off", "on"};

int cpu_index_parse(const char *name)
{
    for (int i = 0; i < CPU_INDEX_N; i++)
        if (name && strcmp(name, cj_index_names[i]) == 0)
            return i;
    return -1;
}

const char *cpu_index_name(int idx)
{
    return idx >= 0 && idx < CPU_INDEX_N ? cj_index_names[idx] : "?";
}

int cpu_join_index(const join_spec *spec, double r, cpu_grid *g, join_result *res)
{
    const int want = cpu_join_index_want(spec->opts);
    memset(g, 0, sizeof *g);
    /* Tiny joins: the index cannot save what it costs to build. */
    if (want == CPU_INDEX_OFF || (want == CPU_INDEX_AUTO && spec->ds->n < 4096))
        return 0;
    double t0 = engine_now();
    int use;
    pthread_mutex_lock(&cj_kept_mu);
    if (!cj_kept_find(spec, r, want, g, &use)) {
        if (cpu_grid_build(spec->ds, r, CPU_GRID_MAXK, g)) {
            pthread_mutex_unlock(&cj_kept_mu);
            return TCJ_ENOMEM;
        }
        use = want == CPU_INDEX_ON ? g->k > 0 : cpu_grid_prunes(g);
        cj_kept_put(spec, r, want, g, use);
        if (!use)
            cpu_grid_free(g);
    }
    pthread_mutex_unlock(&cj_kept_mu);
    join_result_phase(res, "index", engine_now() - t0);
    return use;
}

int cpu_join_threads(const engine_opts *o)
{
    int t = o ? o->threads : 0;
    if (t <= 0) {
        long c = par_cores();
        t = c > 0 ? (int)c : 1;
    }
    return t;
}

static char cj_model[96];
static pthread_once_t cj_model_once = PTHREAD_ONCE_INIT;

static void cj_read_model(void)
{
    snprintf(cj_model, sizeof cj_model, "unknown CPU");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0)
            continue;
        const char *v = strchr(line, ':');
        if (!v)
            break;
        v++;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t len = strcspn(v, "\n");
        if (len)
            snprintf(cj_model, sizeof cj_model, "%.*s", (int)len, v);
        break;
    }
    fclose(f);
}

const char *cpu_join_model(void)
{
    pthread_once(&cj_model_once, cj_read_model);
    return cj_model;
}

/* Record the first error of the run and stop every worker. The message is
 * copied because err_msg() is per thread. Caller holds sh->mu. */
static void cj_fail_locked(cj_shared *sh, int code, const char *msg)
{
    if (!sh->err) {
        sh->err = code;
        snprintf(sh->errmsg, sizeof sh->errmsg, "%s", msg);
    }
    atomic_store(&sh->stop, 1);
}

static void cj_flush(cj_worker *w)
{
    cj_shared *sh = w->sh;
    if (w->len == 0)
        return;
    pthread_mutex_lock(&sh->mu);
    if (!atomic_load(&sh->stop)) {
        pair_batch b = {.k = w->len, .i = w->bi, .j = w->bj, .d2 = w->bd};
        double t0 = engine_now();
        int rc = sh->spec->sink.put(sh->spec->sink.ctx, &b);
        sh->sink_seconds += engine_now() - t0;
        if (rc)
            cj_fail_locked(sh, rc, err_msg()[0] ? err_msg() : "the pair sink failed");
    }
    pthread_mutex_unlock(&sh->mu);
    w->len = 0;
}

static int cj_cancelled(cj_shared *sh)
{
    if (atomic_load_explicit(&sh->stop, memory_order_relaxed))
        return 1;
    /* The flag is set asynchronously (a signal handler, another thread):
     * read it atomically. */
    const volatile int *c = sh->spec->cancel;
    if (c && __atomic_load_n((const int *)c, __ATOMIC_RELAXED)) {
        pthread_mutex_lock(&sh->mu);
        cj_fail_locked(sh, TCJ_ECANCEL, ERR_CANCELLED);
        pthread_mutex_unlock(&sh->mu);
        return 1;
    }
    return 0;
}

/* Fold one computed row (out, candidates c0 .. c0+m-1) of query row q into
 * the worker's tallies, by mode. With a grid q and the candidates are
 * positions, mapped back to rows through sh->order. */
static void cj_consume(cj_worker *w, size_t q, const double *out, size_t c0, size_t m)
{
    cj_shared *sh = w->sh;
    const join_spec *s = sh->spec;
    const uint32_t *ord = sh->order;
    if (ord)
        q = ord[q];
    const double eps2 = sh->k->eps2;
    uint64_t cnt = 0;
    switch (s->mode) {
    case JOIN_COUNT:
    case JOIN_PERPOINT: {
        /* Two at a time in vector lanes (-1 where true): a scalar loop of
         * compares cost as much as a kernel of small d. */
        typedef double v2d __attribute__((vector_size(16)));
        typedef long long v2l __attribute__((vector_size(16)));
        v2l acc = {0, 0};
        size_t c = 0;
        for (; c + 2 <= m; c += 2) {
            v2d v;
            memcpy(&v, out + c, sizeof v);
            acc += v <= eps2;
        }
        cnt = (uint64_t)(-(acc[0] + acc[1]));
        for (; c < m; c++)
            cnt += out[c] <= eps2;
        if (s->mode == JOIN_PERPOINT)
            s->counts[q - sh->q0] += cnt;
        break;
    }
    case JOIN_PAIRS:
        for (size_t c = 0; c < m; c++) {
            if (!(out[c] <= eps2))
                continue;
            w->bi[w->len] = (uint32_t)q;
            w->bj[w->len] = ord ? ord[c0 + c] : (uint32_t)(c0 + c);
            w->bd[w->len] = out[c];
            cnt++;
            if (++w->len == sh->cap)
                cj_flush(w);
        }
        break;
    case JOIN_HIST: {
        const double *e = sh->k->edges;
        const size_t nb = s->hist_nbins;
        for (size_t c = 0; c < m; c++) {
            double v = out[c];
            if (!(v <= e[nb]))
                continue;
            cnt++;
            if (v <= e[0]) {
                w->below++;
                continue;
            }
            /* smallest b with v <= e[b+1]; then e[b] < v */
            size_t lo = 0, hi = nb - 1;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (v <= e[mid + 1])
                    hi = mid;
                else
                    lo = mid + 1;
            }
            w->hist[lo]++;
        }
        break;
    }
    }
    w->pairs += cnt;
}

/* Query rows [qa, qe) against candidate rows [ca, ce), prepared. */
static void cj_rows(cj_worker *w, size_t qa, size_t qe, size_t ca, size_t ce)
{
    cj_shared *sh = w->sh;
    const cpu_kernel *k = sh->k;
    const join_spec *s = sh->spec;
    const int counting = k->count && (s->mode == JOIN_COUNT || s->mode == JOIN_PERPOINT);
    for (size_t q = qa; q < qe; q += sh->nrows) {
        size_t nr = qe - q < sh->nrows ? qe - q : sh->nrows;
        if (counting) {
            uint64_t cnt[CPU_SIMD_MAX_ROWS] = {0};
            k->count(k->ctx, w->scratch, q, nr, ca, ce, sh->lim, cnt);
            for (size_t r = 0; r < nr; r++) {
                w->pairs += cnt[r];
                if (s->mode == JOIN_PERPOINT)
                    s->counts[(sh->order ? sh->order[q + r] : q + r) - sh->q0] += cnt[r];
            }
            continue;
        }
        if (k->rows)
            k->rows(k->ctx, w->scratch, q, nr, ca, ce, sh->lim, w->out, sh->cb);
        else
            k->row(k->ctx, w->scratch, q, ca, ce, sh->lim, w->out);
        for (size_t r = 0; r < nr; r++)
            cj_consume(w, q + r, w->out + r * sh->cb, ca, ce - ca);
    }
}

/* One work item of the indexed join: its query positions against the
 * ranges of its cell's neighbours. */
static void cj_item_run(cj_worker *w, const cj_item *it)
{
    cj_shared *sh = w->sh;
    const cpu_kernel *k = sh->k;
    size_t nr = cpu_grid_ranges(k->grid, it->cell, w->rng);
    for (size_t r = 0; r < nr; r++)
        w->examined += (uint64_t)(it->p1 - it->p0) * (w->rng[r][1] - w->rng[r][0]);
    for (size_t r = 0; r < nr; r++)
        for (size_t ca = w->rng[r][0]; ca < w->rng[r][1]; ca += sh->cb) {
            if (cj_cancelled(sh))
                return;
            size_t ce = ca + sh->cb < w->rng[r][1] ? ca + sh->cb : w->rng[r][1];
            if (k->prepare_cell)
                k->prepare_cell(k->ctx, w->scratch, it->cell, ca, ce);
            else if (k->prepare)
                k->prepare(k->ctx, w->scratch, ca, ce);
            cj_rows(w, it->p0, it->p1, ca, ce);
        }
}

static void *cj_work(void *arg)
{
    cj_worker *w = arg;
    cj_shared *sh = w->sh;
    const cpu_kernel *k = sh->k;
    for (;;) {
        size_t blk = atomic_fetch_add(&sh->next, 1);
        if (blk >= sh->nqblocks || cj_cancelled(sh))
            break;
        if (sh->items) {
            cj_item_run(w, &sh->items[blk]);
            atomic_fetch_add(&sh->rows_done, sh->items[blk].p1 - sh->items[blk].p0);
            continue;
        }
        size_t qa = sh->q0 + blk * sh->qb;
        size_t qe = qa + sh->qb < sh->q1 ? qa + sh->qb : sh->q1;
        for (size_t ca = 0; ca < sh->n; ca += sh->cb) {
            if (cj_cancelled(sh))
                break;
            size_t ce = ca + sh->cb < sh->n ? ca + sh->cb : sh->n;
            if (k->prepare)
                k->prepare(k->ctx, w->scratch, ca, ce);
            cj_rows(w, qa, qe, ca, ce);
        }
        atomic_fetch_add(&sh->rows_done, qe - qa);
    }
    cj_flush(w);

    pthread_mutex_lock(&sh->mu);
    sh->pairs += w->pairs;
    sh->examined += w->examined;
    if (sh->spec->mode == JOIN_HIST) {
        sh->hist_below += w->below;
        for (size_t b = 0; b < sh->spec->hist_nbins; b++)
            sh->hist[b] += w->hist[b];
    }
    sh->finished++;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* The indexed join's work items: runs of consecutive positions of one cell
 * whose rows are query rows, at most qb positions each. */
static size_t cj_items(cj_shared *sh)
{
    const cpu_grid *g = sh->k->grid;
    size_t m = 0, cap = 1024;
    sh->items = xmalloc(cap * sizeof *sh->items);
    for (size_t c = 0; c < g->ncell; c++)
        for (size_t p = g->start[c]; p < g->start[c + 1];) {
            if (g->order[p] < sh->q0 || g->order[p] >= sh->q1) {
                p++;
                continue;
            }
            size_t e = p + 1;
            while (e < g->start[c + 1] && e - p < sh->qb && g->order[e] >= sh->q0 &&
                   g->order[e] < sh->q1)
                e++;
            if (m == cap)
                sh->items = xrealloc(sh->items, (cap *= 2) * sizeof *sh->items);
            sh->items[m++] = (cj_item){c, p, e};
            p = e;
        }
    return m;
}

static size_t cj_clamp(size_t v, size_t lo, size_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int cpu_join_run(const join_spec *spec, const cpu_kernel *k, join_result *res)
{
    const size_t nq = spec->q1 - spec->q0;
    const size_t nb = spec->hist_nbins;
    if (spec->mode == JOIN_PERPOINT)
        memset(spec->counts, 0, nq * sizeof *spec->counts);
    if (spec->mode == JOIN_HIST) {
        memset(spec->hist, 0, nb * sizeof *spec->hist);
        *spec->hist_below = 0;
    }

    cj_shared sh;
    memset(&sh, 0, sizeof sh);
    sh.spec = spec;
    sh.k = k;
    sh.q0 = spec->q0;
    sh.q1 = spec->q1;
    sh.n = spec->ds->n;
    sh.lim = spec->mode == JOIN_HIST ? k->edges[nb] : k->eps2;
    int nthr = cpu_join_threads(spec->opts);
    /* A candidate block of 32 KiB stays in L1 while every row of a query
     * block passes over it; query blocks of up to 512 rows amortise its
     * transposition (at 64 rows it cost a tenth of the time at d = 128),
     * several blocks per thread so threads finish together. */
    sh.qb = cj_clamp(nq / ((size_t)nthr * 4), 1, 512);
    sh.cb = cj_clamp(((size_t)32 << 10) / (k->row_bytes ? k->row_bytes : 1), CPU_GROUP, 2048);
    sh.cb = (sh.cb + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    sh.nrows = k->rows && k->rows_max ? k->rows_max : 1;
    if (k->grid) {
        /* Small items keep both threads busy on clustered data. */
        sh.qb = 64;
        sh.order = k->grid->order;
        sh.nqblocks = cj_items(&sh);
    } else {
        sh.nqblocks = (nq + sh.qb - 1) / sh.qb;
    }
    if ((size_t)nthr > sh.nqblocks)
        nthr = sh.nqblocks ? (int)sh.nqblocks : 1;
    /* The thread buffers together hold at most batch_pairs pairs. */
    size_t bp = spec->opts && spec->opts->batch_pairs ? spec->opts->batch_pairs : (size_t)1 << 22;
    sh.cap = bp / (size_t)nthr;
    if (sh.cap < 1024)
        sh.cap = bp < 1024 ? bp : 1024;
    /* What each thread holds that d sizes: its candidate scratch and the
     * rows its kernel widens to FP64 (a group of candidates, a block of
     * query rows), row_bytes each. At d = 2^28 a block of 16 candidates is
     * 34 GB: refused with the size (src/mem.h), never an abort. */
    {
        uint64_t per = k->scratch_head_bytes + (uint64_t)sh.cb * k->scratch_row_bytes + 64 +
                       (uint64_t)(CPU_GROUP + sh.nrows) * k->row_bytes;
        char what[64];
        snprintf(what, sizeof what, "%d threads' rows and scratch", nthr);
        if (mem_check(spec->ds->name ? spec->ds->name : "dataset", what, (uint64_t)nthr, per, 0)) {
            free(sh.items);
            return TCJ_ENOMEM;
        }
    }
    atomic_init(&sh.next, 0);
    atomic_init(&sh.rows_done, 0);
    atomic_init(&sh.stop, 0);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);
    if (spec->mode == JOIN_HIST)
        sh.hist = xcalloc(nb, sizeof *sh.hist);

    cj_worker *w = xcalloc((size_t)nthr, sizeof *w);
    int arc = 0;
    for (int t = 0; t < nthr && !arc; t++) {
        w[t].sh = &sh;
        w[t].out = xmalloc(sh.nrows * sh.cb * sizeof *w[t].out);
        if (k->grid)
            w[t].rng = xmalloc((k->grid->max_ranges ? k->grid->max_ranges : 1) * sizeof *w[t].rng);
        if (k->scratch_row_bytes) {
            /* 64-byte aligned for vector loads */
            w[t].scratch_raw = mem_alloc(
                spec->ds->name ? spec->ds->name : "dataset", "a thread's candidate scratch", 1,
                k->scratch_head_bytes + sh.cb * k->scratch_row_bytes + 64, 0);
            if (!w[t].scratch_raw) {
                arc = TCJ_ENOMEM;
                break;
            }
            w[t].scratch = (void *)(((uintptr_t)w[t].scratch_raw + 63) & ~(uintptr_t)63);
            memset(w[t].scratch, 0, k->scratch_head_bytes);
        }
        if (spec->mode == JOIN_PAIRS) {
            w[t].bi = xmalloc(sh.cap * sizeof *w[t].bi);
            w[t].bj = xmalloc(sh.cap * sizeof *w[t].bj);
            w[t].bd = xmalloc(sh.cap * sizeof *w[t].bd);
        }
        if (spec->mode == JOIN_HIST)
            w[t].hist = xcalloc(nb, sizeof *w[t].hist);
    }

    double t0 = engine_now();
    const cpu_pool pool = {&sh.mu, &sh.cv,         &sh.finished,      &sh.rows_done,
                           nq,     spec->progress, spec->progress_ctx};
    if (!arc)
        cpu_pool_run(&pool, nthr, cj_work, w, sizeof *w);
    double wall = engine_now() - t0;

    int rc = 0;
    if (arc) {
        rc = arc;
    } else if (sh.err) {
        rc = err_set(sh.err, "%s", sh.errmsg);
    } else {
        res->pairs = sh.pairs;
        if (spec->mode == JOIN_HIST) {
            memcpy(spec->hist, sh.hist, nb * sizeof *sh.hist);
            *spec->hist_below = sh.hist_below;
        }
        if (spec->progress)
            spec->progress(spec->progress_ctx, 1.0);
    }
    res->kernel_seconds = wall - sh.sink_seconds;
    join_result_phase(res, "compute", wall - sh.sink_seconds);
    if (spec->mode == JOIN_PAIRS)
        join_result_phase(res, "sink", sh.sink_seconds);
    snprintf(res->device, sizeof res->device, "%s (%d threads)", cpu_join_model(), nthr);
    if (k->grid)
        snprintf(res->variant, sizeof res->variant, "%s, %s, grid k=%d (%zu cells), %d threads",
                 k->name, k->path ? k->path : "scalar", k->grid->k, k->grid->ncell, nthr);
    else
        snprintf(res->variant, sizeof res->variant, "%s, %s, blocks %zux%zu rows, %d threads",
                 k->name, k->path ? k->path : "scalar", sh.qb, sh.cb, nthr);
    join_result_metric(res, "threads", nthr, "");
    if (k->grid) {
        join_result_metric(res, "grid_k", k->grid->k, "");
        join_result_metric(res, "grid_cells", (double)k->grid->ncell, "");
        /* the index pruned: derived rates count these, not nq*n */
        join_result_metric(res, "pairs_examined", (double)sh.examined, "pairs");
    }

    for (int t = 0; t < nthr; t++) {
        free(w[t].out);
        free(w[t].rng);
        free(w[t].scratch_raw);
        free(w[t].bi);
        free(w[t].bj);
        free(w[t].bd);
        free(w[t].hist);
    }
    free(w);
    free(sh.hist);
    free(sh.items);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    return rc;
}
