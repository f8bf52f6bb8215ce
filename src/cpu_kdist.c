#include "cpu_kdist.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cpu_join.h"
#include "kd_tree.h"
#include "err.h"
#include "mem.h"
#include "topk.h"

typedef struct ck_item {
    size_t cell, i0, i1; /* the grid pass: positions qpos[i0 .. i1) of one cell */
} ck_item;

typedef struct ck_shared {
    const kdist_spec *spec;
    const cpu_kernel *k;
    size_t q0, q1, n, qb, cb, nqblocks;
    size_t nrows; /* query rows a kernel call takes (the kernel's rows_max, else 1) */
    int kk;
    /* The brute-force pass: query rows rows[0 .. nlist) (NULL: q0 .. q1). */
    const uint32_t *rows;
    size_t nlist;
    /* The grid pass: the index, the query positions by cell, the items,
     * the certified limit r2 (a row whose K-th d2 is at most r2 is final)
     * and the rows left for the next pass. */
    const cpu_grid *g;
    const uint32_t *qpos;
    const ck_item *items;
    double r2;
    uint32_t *left;
    atomic_size_t nleft;
    atomic_ullong examined;
    size_t tree_rows; /* rows the k-d tree pass finished */
    atomic_size_t next;
    atomic_size_t rows_done;
    atomic_int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int finished;
} ck_shared;

typedef struct ck_worker {
    ck_shared *sh;
    size_t (*rng)[2]; /* the grid pass's candidate ranges */
    double *out;
    void *scratch, *scratch_raw;
    double *heap; /* qb heaps of kk values */
    int *len;     /* values in each heap */
} ck_worker;

static int ck_cmp_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
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

/* Candidates' values o[0 .. nc) into a row's heap of kk (*len held), but
 * its own (at skip) and NaN. */
static void ck_take(double *h, int *len, int kk, const double *o, size_t nc, size_t skip)
{
    for (size_t c = 0; c < nc; c++) {
        const double v = o[c];
        if (c == skip || v != v)
            continue;
        if (*len < kk) {
            topk_push(h, *len, v);
            (*len)++;
        } else if (v < h[0]) {
            topk_replace_top(h, kk, v);
        }
    }
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
        size_t qa = blk * sh->qb;
        size_t qe = qa + sh->qb < sh->nlist ? qa + sh->qb : sh->nlist;
        memset(w->len, 0, sh->qb * sizeof *w->len);
        for (size_t ca = 0; ca < sh->n; ca += sh->cb) {
            if (ck_cancelled(sh))
                break;
            size_t ce = ca + sh->cb < sh->n ? ca + sh->cb : sh->n;
            if (k->prepare)
                k->prepare(k->ctx, w->scratch, ca, ce);
            /* runs of consecutive rows share each candidate load (the
             * kernel's rows call); the loosest heap's limit serves them
             * all: a value above a row's own limit is dropped below */
            for (size_t i = qa; i < qe;) {
                const size_t q = sh->rows ? sh->rows[i] : sh->q0 + i;
                size_t nr = 1;
                while (nr < sh->nrows && i + nr < qe &&
                       (sh->rows ? sh->rows[i + nr] : sh->q0 + i + nr) == q + nr)
                    nr++;
                double lim = 0;
                for (size_t r = 0; r < nr; r++) {
                    const size_t at = i + r - qa;
                    const double l = w->len[at] == kk ? w->heap[at * (size_t)kk] : INFINITY;
                    lim = l > lim ? l : lim;
                }
                if (nr > 1)
                    k->rows(k->ctx, w->scratch, q, nr, ca, ce, lim, w->out, sh->cb);
                else
                    k->row(k->ctx, w->scratch, q, ca, ce, lim, w->out);
                for (size_t r = 0; r < nr; r++)
                    ck_take(w->heap + (i + r - qa) * (size_t)kk, &w->len[i + r - qa], kk,
                            w->out + r * sh->cb, ce - ca, q + r - ca);
                i += nr;
            }
        }
        if (!atomic_load(&sh->stop))
            for (size_t i = qa; i < qe; i++)
                sh->spec->out[(sh->rows ? sh->rows[i] : sh->q0 + i) - sh->q0] =
                    w->heap[(i - qa) * (size_t)kk];
        atomic_fetch_add(&sh->rows_done, qe - qa);
    }
    pthread_mutex_lock(&sh->mu);
    sh->finished++;
    pthread_cond_signal(&sh->cv);
    pthread_mutex_unlock(&sh->mu);
    return NULL;
}

/* The grid pass: each item's query positions against the rows of their
 * cell's neighbour ranges, heaps as in ck_work. A row whose heap is full
 * with its K-th d2 at most r2 is final (every row outside the ranges is
 * farther than the radius along an indexed dimension, so its d2 is at
 * least r2: it cannot enter the top K); the others go to sh->left. */
static void *ck_grid_work(void *arg)
{
    ck_worker *w = arg;
    ck_shared *sh = w->sh;
    const cpu_kernel *k = sh->k;
    const int kk = sh->kk;
    for (;;) {
        size_t blk = atomic_fetch_add(&sh->next, 1);
        if (blk >= sh->nqblocks || ck_cancelled(sh))
            break;
        const ck_item *it = &sh->items[blk];
        const size_t nq = it->i1 - it->i0;
        memset(w->len, 0, nq * sizeof *w->len);
        const size_t nr = cpu_grid_ranges(sh->g, it->cell, w->rng);
        unsigned long long ex = 0;
        for (size_t r = 0; r < nr; r++) {
            ex += (unsigned long long)nq * (w->rng[r][1] - w->rng[r][0]);
            for (size_t ca = w->rng[r][0]; ca < w->rng[r][1]; ca += sh->cb) {
                if (ck_cancelled(sh))
                    break;
                const size_t ce = ca + sh->cb < w->rng[r][1] ? ca + sh->cb : w->rng[r][1];
                if (k->prepare)
                    k->prepare(k->ctx, w->scratch, ca, ce);
                for (size_t i = 0; i < nq; i++) {
                    const size_t q = sh->qpos[it->i0 + i];
                    double *h = w->heap + i * (size_t)kk;
                    int *len = &w->len[i];
                    double lim = *len == kk ? h[0] : INFINITY;
                    k->row(k->ctx, w->scratch, q, ca, ce, lim, w->out);
                    ck_take(h, len, kk, w->out, ce - ca, q - ca);
                }
            }
        }
        atomic_fetch_add(&sh->examined, ex);
        if (atomic_load(&sh->stop))
            continue;
        size_t done = 0;
        for (size_t i = 0; i < nq; i++) {
            const uint32_t row = sh->g->order[sh->qpos[it->i0 + i]];
            const double top = w->heap[i * (size_t)kk];
            if (w->len[i] == kk && top <= sh->r2) {
                sh->spec->out[row - sh->q0] = top;
                done++;
            } else {
                sh->left[atomic_fetch_add(&sh->nleft, 1)] = row;
            }
        }
        atomic_fetch_add(&sh->rows_done, done);
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

/* One pass of fn over nblocks work blocks on the workers. */
static void ck_pass(ck_shared *sh, ck_worker *w, int nthr, void *(*fn)(void *), size_t nblocks)
{
    sh->nqblocks = nblocks;
    sh->finished = 0;
    atomic_store(&sh->next, 0);
    const int t = (size_t)nthr > nblocks ? (nblocks ? (int)nblocks : 1) : nthr;
    const cpu_pool pool = {&sh->mu,
                           &sh->cv,
                           &sh->finished,
                           &sh->rows_done,
                           sh->q1 - sh->q0,
                           sh->spec->progress,
                           sh->spec->progress_ctx};
    cpu_pool_run(&pool, t, fn, w, sizeof *w);
}

static int cmp_d2(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The widest finite range of a dimension (0 when there is none). */
static double ck_span(const dataset *ds)
{
    const size_t d = ds->d;
    double *lo = xmalloc(3 * d * sizeof *lo), *hi = lo + d, *rb = hi + d, span = 0;
    for (size_t j = 0; j < d; j++) {
        lo[j] = INFINITY;
        hi[j] = -INFINITY;
    }
    for (size_t i = 0; i < ds->n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        for (size_t j = 0; j < d; j++)
            if (isfinite(x[j])) {
                lo[j] = x[j] < lo[j] ? x[j] : lo[j];
                hi[j] = x[j] > hi[j] ? x[j] : hi[j];
            }
    }
    for (size_t j = 0; j < d; j++)
        if (isfinite(hi[j] - lo[j]) && hi[j] - lo[j] > span)
            span = hi[j] - lo[j];
    free(lo);
    return span;
}

/* The grid passes (src/cpu_kdist.h): rows[0 .. *nrows) are the query rows
 * still to do, in and out. The first radius is the 3rd quartile of the
 * K-distances of a sample of them (by brute force, ck_work), each pass
 * doubles it, and the passes stop when the rows left are done or a grid
 * at the radius would cost them more than half of brute force. Returns
 * the passes made; *kdim the indexed dimensions of the first. */
static int ck_grid_passes(ck_shared *sh, ck_worker *w, int nthr, uint32_t *rows, size_t *nrows,
                          int force, int *kdim)
{
    const kdist_spec *spec = sh->spec;
    const cpu_kernel *k = sh->k;
    const size_t n = sh->n;
    /* The sample: up to 256 rows evenly spread, their K-distances. */
    const size_t m = *nrows < 256 ? *nrows : 256;
    uint32_t *smp = xmalloc(m * sizeof *smp);
    for (size_t i = 0; i < m; i++)
        smp[i] = rows[(size_t)((double)i * (double)*nrows / (double)m)];
    double *save = xmalloc(m * sizeof *save), *d2 = xmalloc(m * sizeof *d2);
    for (size_t i = 0; i < m; i++)
        save[i] = spec->out[smp[i] - sh->q0];
    sh->rows = smp;
    sh->nlist = m;
    ck_pass(sh, w, nthr, ck_work, (m + sh->qb - 1) / sh->qb);
    size_t pos = 0, zero = 0;
    for (size_t i = 0; i < m; i++) {
        const double v = spec->out[smp[i] - sh->q0];
        spec->out[smp[i] - sh->q0] = save[i];
        zero += v == 0;
        if (v > 0 && isfinite(v))
            d2[pos++] = v;
    }
    atomic_store(&sh->rows_done, 0);
    free(save);
    free(smp);
    if (atomic_load(&sh->stop)) {
        free(d2);
        return 0;
    }
    double r;
    if (pos) {
        /* The 3rd quartile of the finite ones, zeros (duplicates) counted;
         * when that is 0, the smallest positive one. */
        qsort(d2, pos, sizeof *d2, cmp_d2);
        const size_t q3 = (zero + pos) * 3 / 4;
        r = sqrt(q3 < zero ? d2[0] : d2[q3 - zero]) * (1 + 1e-9);
    } else {
        /* Every sampled K-distance 0 (duplicates): any radius finishes
         * those rows; a thousandth of the widest finite range. */
        r = ck_span(spec->ds) / 1024;
    }
    free(d2);

    uint32_t *qpos = xmalloc(*nrows * sizeof *qpos), *left = xmalloc(*nrows * sizeof *left);
    uint32_t *where = xmalloc(n * sizeof *where);
    int passes = 0;
    *kdim = 0;
    for (; *nrows && passes < 64 && !atomic_load(&sh->stop); r *= 2) {
        cpu_grid g;
        cpu_grid_build(spec->ds, r, CPU_GRID_MAXK, &g);
        if (g.k == 0) {
            cpu_grid_free(&g);
            break;
        }
        /* Each row's position and cell; the cost of the rows left. */
        for (size_t c = 0; c < g.ncell; c++)
            for (size_t p = g.start[c]; p < g.start[c + 1]; p++)
                where[g.order[p]] = (uint32_t)p;
        for (size_t i = 0; i < *nrows; i++)
            qpos[i] = where[rows[i]];
        /* Sorted positions: the rows of a cell are consecutive. */
        qsort(qpos, *nrows, sizeof *qpos, ck_cmp_u32);
        size_t nit = 0, cap = 1024, c = 0;
        ck_item *items = xmalloc(cap * sizeof *items);
        double cost = 0;
        size_t(*rng)[2] = xmalloc((g.max_ranges ? g.max_ranges : 1) * sizeof *rng);
        for (size_t i = 0; i < *nrows;) {
            while (g.start[c + 1] <= qpos[i])
                c++;
            size_t e = i + 1;
            while (e < *nrows && qpos[e] < g.start[c + 1] && e - i < sh->qb)
                e++;
            if (nit == cap)
                items = xrealloc(items, (cap *= 2) * sizeof *items);
            items[nit++] = (ck_item){c, i, e};
            const size_t nr = cpu_grid_ranges(&g, c, rng);
            for (size_t j = 0; j < nr; j++)
                cost += (double)(e - i) * ((double)(rng[j][1] - rng[j][0]) + CPU_GRID_RANGE_COST);
            i = e;
        }
        free(rng);
        if (!force && cost > 0.5 * (double)*nrows * (double)n) {
            free(items);
            cpu_grid_free(&g);
            break; /* the rest by brute force */
        }
        if (passes == 0)
            *kdim = g.k;
        k->regrid(k->ctx, &g);
        for (int t = 0; t < nthr; t++)
            w[t].rng = xrealloc(w[t].rng, (g.max_ranges ? g.max_ranges : 1) * sizeof *w[t].rng);
        sh->g = &g;
        sh->qpos = qpos;
        sh->items = items;
        sh->r2 = r * r;
        sh->left = left;
        atomic_store(&sh->nleft, 0);
        ck_pass(sh, w, nthr, ck_grid_work, nit);
        k->regrid(k->ctx, NULL);
        sh->g = NULL;
        free(items);
        cpu_grid_free(&g);
        passes++;
        *nrows = atomic_load(&sh->nleft);
        memcpy(rows, left, *nrows * sizeof *rows);
    }
    free(qpos);
    free(left);
    free(where);
    return passes;
}

/* The k-d tree pass (the cpu engine's arithmetic, k->f64_direct) for the
 * rows still to do, *rows[0 .. *nrows) (NULL: q0 .. q1), at d up to
 * KD_TREE_KDIST_MAX_D unless `set cpu-index off`: a sample of 256 of them
 * first; where its searches computed more than a third of brute force's
 * distances, the boxes do not prune on these data and the rest go to
 * brute force (the sample's values stand, as brute force would write
 * them). *used: whether the tree took the rows. */
static int ck_tree_pass(ck_shared *sh, int nthr, uint32_t **rows, size_t *nrows, int want,
                        int *used)
{
    const kdist_spec *spec = sh->spec;
    const size_t n = sh->n;
    *used = 0;
    if (want == CPU_INDEX_OFF || spec->ds->d > KD_TREE_KDIST_MAX_D || n > UINT32_MAX ||
        (want == CPU_INDEX_AUTO && n < 4096))
        return 0;
    if (!*rows) {
        *rows = xmalloc(*nrows * sizeof **rows);
        for (size_t i = 0; i < *nrows; i++)
            (*rows)[i] = (uint32_t)(sh->q0 + i);
    }
    kd_tree t;
    int rc = kd_tree_build(spec->ds, sh->k->f64_direct, &t);
    if (rc)
        return rc;
    const size_t m = *nrows < 256 ? *nrows : 256;
    uint32_t *smp = xmalloc(m * sizeof *smp);
    for (size_t i = 0; i < m; i++)
        smp[i] = (*rows)[(size_t)((double)i * (double)*nrows / (double)m)];
    uint64_t ex = 0;
    rc = kd_tree_knn(&t, smp, m, sh->q0, sh->kk, spec->out, 0, NULL, NULL, nthr, spec->cancel, &ex);
    free(smp);
    atomic_fetch_add(&sh->examined, ex);
    if (!rc && (want == CPU_INDEX_ON || (double)ex <= (double)m * (double)n / 3)) {
        rc = kd_tree_knn(&t, *rows, *nrows, sh->q0, sh->kk, spec->out, 0, NULL, NULL, nthr,
                         spec->cancel, &ex);
        atomic_fetch_add(&sh->examined, ex);
        sh->tree_rows = *nrows;
        *nrows = 0;
        *used = 1;
    }
    kd_tree_free(&t);
    return rc;
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
    sh.nrows = k->rows && k->rows_max > 1 ? k->rows_max : 1;
    int nthr = cpu_join_threads(spec->opts);
    /* The blocking of cpu_join: query blocks share a candidate block while
     * it sits in cache. */
    sh.qb = ck_clamp(nq / ((size_t)nthr * 4), 1, 64);
    sh.cb = ck_clamp(((size_t)128 << 10) / (k->row_bytes ? k->row_bytes : 1), CPU_GROUP, 2048);
    sh.cb = (sh.cb + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
    if ((size_t)nthr > (nq + sh.qb - 1) / sh.qb)
        nthr = (int)((nq + sh.qb - 1) / sh.qb);
    if (nthr < 1)
        nthr = 1;
    atomic_init(&sh.next, 0);
    atomic_init(&sh.rows_done, 0);
    atomic_init(&sh.stop, 0);
    atomic_init(&sh.nleft, 0);
    atomic_init(&sh.examined, 0);
    pthread_mutex_init(&sh.mu, NULL);
    pthread_cond_init(&sh.cv, NULL);

    /* Grid passes take runs of up to 64 rows of a cell (as cpu_join). */
    const size_t qmax = sh.qb > 64 ? sh.qb : 64;
    /* What each thread holds that d and K size: its candidate scratch and
     * its heaps (src/mem.h). */
    {
        const uint64_t per = (uint64_t)sh.cb * k->scratch_row_bytes + 64 +
                             (uint64_t)qmax * sh.kk * sizeof(double) +
                             (sh.nrows * sh.cb + CPU_GROUP) * 8;
        if (mem_check(spec->ds->name ? spec->ds->name : "dataset", "the k-distance's scratch",
                      (uint64_t)nthr, per, 0) ||
            /* the grid passes' index and row lists (rows, qpos, left, where) */
            (k->regrid &&
             mem_check(spec->ds->name ? spec->ds->name : "dataset", "the k-distance's grid", sh.n,
                       cpu_grid_row_bytes() + 4 * sizeof(uint32_t), 0))) {
            pthread_mutex_destroy(&sh.mu);
            pthread_cond_destroy(&sh.cv);
            return TCJ_ENOMEM;
        }
    }
    ck_worker *w = xcalloc((size_t)nthr, sizeof *w);
    for (int t = 0; t < nthr; t++) {
        w[t].sh = &sh;
        w[t].out = xmalloc((sh.nrows * sh.cb + CPU_GROUP) * sizeof *w[t].out);
        if (k->scratch_row_bytes) {
            w[t].scratch_raw = xmalloc(sh.cb * k->scratch_row_bytes + 64);
            w[t].scratch = (void *)(((uintptr_t)w[t].scratch_raw + 63) & ~(uintptr_t)63);
        }
        w[t].heap = xmalloc(qmax * (size_t)sh.kk * sizeof *w[t].heap);
        w[t].len = xmalloc(qmax * sizeof *w[t].len);
    }

    double t0 = engine_now();
    /* Low-dimensional data through the grid index when the options allow
     * it and the data are large enough to pay for it (as cpu_join_index);
     * the rows no pass finished, by brute force. */
    const int want = cpu_join_index_want(spec->opts);
    uint32_t *rows = NULL;
    size_t nrows = nq;
    int passes = 0, kdim = 0, rc0 = 0;
    if (k->regrid && want != CPU_INDEX_OFF && (want == CPU_INDEX_ON || sh.n >= 4096) &&
        sh.n <= UINT32_MAX) {
        rows = xmalloc(nq * sizeof *rows);
        for (size_t i = 0; i < nq; i++)
            rows[i] = (uint32_t)(spec->q0 + i);
        sh.qb = 64;
        passes = ck_grid_passes(&sh, w, nthr, rows, &nrows, want == CPU_INDEX_ON, &kdim);
        sh.qb = ck_clamp(nrows / ((size_t)nthr * 4), 1, 64);
    }
    int tree = 0;
    if (nrows && !atomic_load(&sh.stop) && k->f64_direct &&
        (rc0 = ck_tree_pass(&sh, nthr, &rows, &nrows, want, &tree)))
        atomic_store(&sh.stop, 1);
    if (nrows && !atomic_load(&sh.stop)) {
        sh.qb = ck_clamp(nrows / ((size_t)nthr * 4), 1, 64);
        sh.rows = rows;
        sh.nlist = nrows;
        ck_pass(&sh, w, nthr, ck_work, (nrows + sh.qb - 1) / sh.qb);
    }
    double wall = engine_now() - t0;
    int rc = rc0 ? rc0 : atomic_load(&sh.stop) ? err_set(TCJ_ECANCEL, ERR_CANCELLED) : 0;
    if (!rc && spec->progress)
        spec->progress(spec->progress_ctx, 1.0);
    res->kernel_seconds = wall;
    join_result_phase(res, "compute", wall);
    snprintf(res->device, sizeof res->device, "%s (%d threads)", cpu_join_model(), nthr);
    if (passes || tree) {
        char grid[48] = "", kd[48] = "";
        if (passes)
            snprintf(grid, sizeof grid, "grid k=%d x%d radii, ", kdim, passes);
        if (tree)
            snprintf(kd, sizeof kd, "k-d tree, ");
        snprintf(res->variant, sizeof res->variant,
                 "%s, %s, top-%d heaps, %s%s%zu rows brute, %d threads", k->name,
                 k->path ? k->path : "scalar", sh.kk, grid, kd, nrows, nthr);
    } else
        snprintf(res->variant, sizeof res->variant,
                 "%s, %s, top-%d heaps cut at the k-th, blocks %zux%zu, %d threads", k->name,
                 k->path ? k->path : "scalar", sh.kk, sh.qb, sh.cb, nthr);
    join_result_metric(res, "threads", nthr, "");
    if (tree)
        join_result_metric(res, "tree_rows", (double)sh.tree_rows, "rows");
    if (passes || tree) {
        join_result_metric(res, "grid_passes", passes, "");
        join_result_metric(res, "brute_rows", (double)nrows, "rows");
        join_result_metric(res, "pairs_examined",
                           (double)atomic_load(&sh.examined) + (double)nrows * (double)sh.n,
                           "pairs");
    }
    for (int t = 0; t < nthr; t++) {
        free(w[t].out);
        free(w[t].rng);
        free(w[t].scratch_raw);
        free(w[t].heap);
        free(w[t].len);
    }
    free(w);
    free(rows);
    pthread_mutex_destroy(&sh.mu);
    pthread_cond_destroy(&sh.cv);
    return rc;
}
