/* The FP64 engines' side of the common launch loop: see f64_common.cuh. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f64_common.cuh"
#include "kern_util.cuh"

void f64_end(f64_run *r)
{
    cudaFree(r->d_count);
    cudaFree(r->d_counts);
    cudaFree(r->d_np);
    cudaFree(r->d_hist);
    cudaFree(r->d_edges);
    free(r->stack);
    r->stack = NULL;
    r->d_count = r->d_counts = r->d_np = r->d_hist = NULL;
    r->d_edges = NULL;
    kern_end(&r->k);
}

int f64_malloc(f64_run *r, void **p, size_t bytes, const char *what)
{
    return kern_malloc(&r->k, p, bytes, what);
}

static int f64_outputs(f64_run *r)
{
    const kern_join_args *a = r->a;
    f64_out &o = r->out;
    o.mode = a->mode;
    o.q0 = a->q0;
    o.eps2 = a->eps * a->eps;
    cudaStream_t st = r->k.st;
    int rc;
    /* [0] the count, [1] the distances a pruning kernel computed, [2] the
     * pairs it decided without one (examined[1]) */
    if ((rc = f64_malloc(r, (void **)&r->d_count, 3 * sizeof(unsigned long long), "the count")))
        return rc;
    KERN_CUDA(cudaMemsetAsync(r->d_count, 0, 3 * sizeof(unsigned long long), st));
    o.count = r->d_count;
    o.examined = r->d_count + 1;
    if (a->mode == KJOIN_PERPOINT) {
        size_t b = (r->ncount ? r->ncount : 1) * sizeof(unsigned long long);
        if ((rc = f64_malloc(r, (void **)&r->d_counts, b, "the per-point counts")))
            return rc;
        KERN_CUDA(cudaMemsetAsync(r->d_counts, 0, b, st));
        o.counts = r->d_counts;
    } else if (a->mode == KJOIN_PAIRS) {
        if ((rc = f64_malloc(r, (void **)&r->d_np, sizeof(unsigned long long), "the pair count")))
            return rc;
        KERN_CUDA(cudaMemsetAsync(r->d_np, 0, sizeof(unsigned long long), st));
        o.np = r->d_np;
    } else if (a->mode == KJOIN_HIST) {
        size_t nb = a->hist_nbins;
        if ((rc = f64_malloc(r, (void **)&r->d_edges, (nb + 1) * sizeof(double), "the histogram")))
            return rc;
        KERN_CUDA(cudaMemcpyAsync(r->d_edges, a->hist_edges, (nb + 1) * sizeof(double),
                                  cudaMemcpyHostToDevice, st));
        if ((rc = f64_malloc(r, (void **)&r->d_hist, (nb + 1) * sizeof(unsigned long long),
                             "the histogram")))
            return rc;
        KERN_CUDA(cudaMemsetAsync(r->d_hist, 0, (nb + 1) * sizeof(unsigned long long), st));
        o.edges = r->d_edges;
        o.nbins = (int)nb;
        o.hist = r->d_hist;
        o.eps2 = a->hist_edges[nb];
    }
    return 0;
}

int f64_begin(f64_run *r, const kern_join_args *a, kern_join_result *res, const char *who,
              int need_dmma)
{
    memset(r, 0, sizeof *r);
    r->a = a;
    r->res = res;
    int rc = kern_begin(&r->k, a, res, who, need_dmma);
    if (rc)
        return rc;
    r->nq = a->q1 - a->q0;
    r->ncount = kern_count_rows(a);
    if ((rc = f64_outputs(r)) != 0)
        f64_end(r);
    return rc;
}

int f64_upload(f64_run *r, const kern_join_args *a, const uint32_t *order, size_t dp,
               const int *perm, double **out)
{
    double t0 = kern_now();
    const size_t n = a->n, d = a->d;
    *out = NULL;
    int rc = f64_malloc(r, (void **)out, n * dp * sizeof(double) + 64, "the dataset (FP64)");
    if (rc)
        return rc;
    /* Widen, pad and permute on the host in slabs, so the host copy stays
     * small (the dataset stays in its own type). */
    size_t slab = ((size_t)1 << 22) / dp + 1;
    double *h = NULL, *row = (double *)malloc(d * sizeof(double));
    if (!row)
        return kern_fail(KERN_ENOMEM, "out of host memory for one row (%zu values)", d);
    if ((rc = kern_malloc_host((void **)&h, (slab < n ? slab : n) * dp * sizeof(double),
                               "the upload slab"))) {
        free(row);
        return rc;
    }
    for (size_t r0 = 0; r0 < n; r0 += slab) {
        size_t r1 = r0 + slab < n ? r0 + slab : n;
        for (size_t i = r0; i < r1; i++) {
            double *dst = h + (i - r0) * dp;
            const double *src = kern_row_f64(a, order ? (size_t)order[i] : i, row);
            for (size_t k = 0; k < d; k++)
                dst[k] = src[perm ? (size_t)perm[k] : k];
            for (size_t k = d; k < dp; k++)
                dst[k] = 0;
        }
        cudaError_t e =
            cudaMemcpy(*out + r0 * dp, h, (r1 - r0) * dp * sizeof(double), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
            cudaFreeHost(h);
            free(row);
            return kern_cuda_fail(e, "cudaMemcpy(points)", __FILE__, __LINE__);
        }
    }
    cudaFreeHost(h);
    free(row);
    r->res->t_h2d += kern_now() - t0;
    return 0;
}

static double f64_work(const f64_item &it)
{
    return (double)(it.qb - it.qa) * (double)(it.cb - it.ca);
}

/* The next non-empty item into r->cur, split pieces first. */
static int f64_more(void *e)
{
    f64_run *r = (f64_run *)e;
    for (;;) {
        f64_item it;
        if (r->top > 0) {
            it = r->stack[--r->top];
        } else if (r->next < r->stop) {
            it = r->items[r->next++];
        } else if (r->q) {
            unsigned long long b, e;
            if (!kern_queue_take(r->q, 1, 1, &b, &e))
                return 0;
            r->taken += e - b;
            r->next = (size_t)b;
            r->stop = (size_t)e;
            continue;
        } else {
            return 0;
        }
        if (it.qa < it.qb && it.ca < it.cb) {
            r->cur = it;
            return 1;
        }
    }
}

static int f64_launch(void *e, kern_run *k)
{
    f64_run *r = (f64_run *)e;
    if (r->a->mode == KJOIN_PAIRS) {
        r->out.pi = k->pi;
        r->out.pj = k->pj;
        r->out.pd = (double *)k->pd;
        r->out.cap = k->cap;
    }
    return r->fn(r, &r->cur, r->user);
}

/* A PAIRS item that overflowed: split into pieces expected to fit (queries
 * first, then candidates), run next, in order. */
static int f64_split(f64_run *r, const f64_item &it, unsigned long long np)
{
    size_t want = (size_t)((2 * np + r->k.cap - 1) / r->k.cap);
    int by_q = it.qb - it.qa > 1;
    size_t len = by_q ? it.qb - it.qa : it.cb - it.ca;
    size_t parts = want < 2 ? 2 : want;
    if (parts > len)
        parts = len;
    if (r->top + parts > r->scap) {
        size_t cap = (r->top + parts) * 2;
        f64_item *ns = (f64_item *)realloc(r->stack, cap * sizeof *ns);
        if (!ns)
            return kern_fail(KERN_ENOMEM, "out of host memory splitting a work item");
        r->stack = ns;
        r->scap = cap;
    }
    /* Pushed last piece first so pieces run in order. */
    for (size_t p = parts; p-- > 0;) {
        f64_item s = it;
        size_t lo = len * p / parts, hi = len * (p + 1) / parts;
        if (by_q) {
            s.qa = it.qa + lo;
            s.qb = it.qa + hi;
        } else {
            s.ca = it.ca + lo;
            s.cb = it.ca + hi;
        }
        r->stack[r->top++] = s;
    }
    return 0;
}

/* The launch just collected finished its piece; with no pieces left on the
 * stack, the list item it came from is done (the queue's progress). */
static void f64_item_done(f64_run *r)
{
    if (r->q && r->top == 0)
        r->q->done++;
}

static int f64_collect(void *e, kern_run *k, kern_step *s)
{
    f64_run *r = (f64_run *)e;
    if (r->a->mode == KJOIN_PAIRS) {
        unsigned long long np = 0;
        KERN_CUDA(cudaMemcpy(&np, r->d_np, sizeof np, cudaMemcpyDeviceToHost));
        /* Zeroed for the next launch here, not inside its timed span. */
        KERN_CUDA(cudaMemsetAsync(r->d_np, 0, sizeof(unsigned long long), k->st));
        if (np > k->cap) {
            /* Nothing of it is kept: the pieces compute it again. */
            s->overflow = 1;
            int rc = f64_split(r, r->cur, np);
            if (rc)
                return rc;
        } else {
            s->np = np;
            r->done += f64_work(r->cur);
            f64_item_done(r);
        }
    } else {
        r->done += f64_work(r->cur);
        f64_item_done(r);
    }
    if (r->q)
        s->frac = (double)r->q->done.load() / (double)r->q->total;
    else
        s->frac = r->total > 0 ? r->done / r->total : 1.0;
    return 0;
}

size_t f64_chunk(const f64_run *r, size_t chunk, size_t min)
{
    if (!r->q)
        return chunk;
    /* 16 items over the query rows, rounded up to whole 128-row tiles:
     * the same list for any number of devices. */
    size_t c = r->nq / 16 / 128 * 128 + 128;
    return c < min ? min : c > chunk ? chunk : c;
}

int f64_drive(f64_run *r, const f64_item *items, size_t nitems, f64_launch_fn fn, void *user,
              const char *what)
{
    r->items = items;
    r->nitems = nitems;
    r->next = r->top = 0;
    r->stop = r->q ? 0 : nitems;
    if (r->q) {
        int rc = kern_queue_open(r->q, r->a->device, nitems, what);
        if (rc)
            return rc;
    }
    r->fn = fn;
    r->user = user;
    /* Progress: candidate-row pairs of the items done (a split item counts
     * when its pieces are done). */
    r->total = r->done = 0;
    for (size_t i = 0; i < nitems; i++)
        r->total += f64_work(items[i]);
    /* The buffer holds at least 1024 pairs so that an item of one query row
     * stays small. */
    kern_work w = {r, 8, 1024, 0, f64_more, f64_launch, f64_collect};
    return kern_drive(&r->k, &w);
}

int f64_finish(f64_run *r)
{
    const kern_join_args *a = r->a;
    double t0 = kern_now();
    unsigned long long total = 0, cnt[3];
    KERN_CUDA(cudaMemcpy(cnt, r->d_count, sizeof cnt, cudaMemcpyDeviceToHost));
    r->res->examined = cnt[1];
    r->res->skipped = cnt[2];
    if (a->mode == KJOIN_COUNT) {
        total = cnt[0];
    } else if (a->mode == KJOIN_PERPOINT) {
        if (r->ncount) {
            KERN_CUDA(cudaMemcpy(a->counts, r->d_counts, r->ncount * sizeof(uint64_t),
                                 cudaMemcpyDeviceToHost));
        }
        for (size_t i = 0; i < r->ncount; i++)
            total += a->counts[i];
    } else if (a->mode == KJOIN_PAIRS) {
        total = r->res->pairs; /* counted as drained */
    } else {
        size_t nb = a->hist_nbins;
        unsigned long long *h = (unsigned long long *)malloc((nb + 1) * sizeof *h);
        if (!h)
            return kern_fail(KERN_ENOMEM, "out of host memory for the histogram");
        cudaError_t e = cudaMemcpy(h, r->d_hist, (nb + 1) * sizeof *h, cudaMemcpyDeviceToHost);
        if (e != cudaSuccess) {
            free(h);
            return kern_cuda_fail(e, "cudaMemcpy(hist)", __FILE__, __LINE__);
        }
        *a->hist_below = h[0];
        total = h[0];
        for (size_t b = 0; b < nb; b++) {
            a->hist[b] = h[b + 1];
            total += h[b + 1];
        }
        free(h);
    }
    r->res->pairs = total;
    r->res->t_d2h += kern_now() - t0;
    return 0;
}

size_t f64_brute_items(const kern_join_args *a, size_t chunk, int symmetric, f64_item **items)
{
    size_t q0 = a->q0, q1 = a->q1, n = a->n;
    size_t nqc = (q1 - q0 + chunk - 1) / chunk;
    if (a->mode == KJOIN_PAIRS)
        symmetric = 0;
    if (!symmetric || a->c0) {
        /* A cross run's candidates are [c0, n), all off the diagonal:
         * symmetric, every pair found is emitted mirrored. */
        *items = (f64_item *)malloc((nqc ? nqc : 1) * sizeof(f64_item));
        if (!*items)
            return 0;
        for (size_t i = 0; i < nqc; i++) {
            size_t lo = q0 + i * chunk, hi = lo + chunk < q1 ? lo + chunk : q1;
            (*items)[i] = f64_item{lo, hi, a->c0, n, symmetric ? 2 : 0};
        }
        return nqc;
    }
    /* Candidate chunks: those of the query range (mirrored among
     * themselves) plus plain chunks before q0 and after q1. */
    size_t nlo = (q0 + chunk - 1) / chunk, nhi = (n - q1 + chunk - 1) / chunk;
    size_t max = nqc * (nqc + nlo + nhi) + 1, k = 0;
    f64_item *it = (f64_item *)malloc(max * sizeof(f64_item));
    if (!it) {
        *items = NULL;
        return 0;
    }
    for (size_t i = 0; i < nqc; i++) {
        size_t lo = q0 + i * chunk, hi = lo + chunk < q1 ? lo + chunk : q1;
        for (size_t j = i; j < nqc; j++) {
            size_t c = q0 + j * chunk, e = c + chunk < q1 ? c + chunk : q1;
            it[k++] = f64_item{lo, hi, c, e, j == i ? 1 : 2};
        }
        for (size_t c = 0; c < q0; c += chunk)
            it[k++] = f64_item{lo, hi, c, c + chunk < q0 ? c + chunk : q0, 0};
        for (size_t c = q1; c < n; c += chunk)
            it[k++] = f64_item{lo, hi, c, c + chunk < n ? c + chunk : n, 0};
    }
    *items = it;
    return k;
}
