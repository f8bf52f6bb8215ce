/* The k-distance's pruned passes (kern_kd_prune.h). In clustered data a
 * row's K nearest lie near it, yet passes B and C of exact's k-distance
 * visit every tile, many times the work of the COUNT the cluster cut
 * prunes (docs/BENCHMARKS.md). In the order here (the
 * cluster cut's clusters one after another, each cluster's rows by their
 * distance from its centre) a tile is one or two thin shells, and a tile
 * part of cluster a at distances [lo1, hi1] from o_a and one of cluster b
 * at [lo2, hi2] from o_b hold no pair within R where
 *   a != b: |o_a - o_b| - hi1 - hi2 > R   (the triangle inequality), or
 *   a == b: lo2 - hi1 > R or lo1 - hi2 > R (|x - y| >= | |x - o| - |y - o| |).
 * R is the largest reach among the row tile's rows: the real distance
 * within which every estimate a row keeps lies (exact_bound_within), so a
 * pruned pass keeps exactly the values the whole pass keeps, and the
 * answers are the same. Every bound carries the margin kdp_mu (FP64's
 * error on a distance and on these sums).
 *
 * Along a cluster's tiles lo and hi only grow, so the tiles of b a part
 * reaches are one range (a suffix for a != b), found by bisection:
 * listing costs O(tiles x clusters x log) and the kept items, never the
 * grid. Deterministic: the order and the items depend on the rows and the
 * reaches alone. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kern_cluster.h"
#include "kern_kd_prune.h"
#include "kern_stream.h"

#define KDP_RANGES 16 /* the distances', the sorts' and the listing's threads */

/* The centres' distances (K x K), times f (the callers' margin). */
static void kdp_sep(const clu_plan *p, size_t d, double f, double *sep)
{
    for (int i = 0; i < p->K; i++)
        for (int j = 0; j < p->K; j++)
            sep[(size_t)i * p->K + j] =
                sqrt(clu_d2(p->o + (size_t)i * d, p->o + (size_t)j * d, d)) * f;
}

/* The order, kept for one dataset. */
static struct {
    stream_data_id ds;
    int valid, K;
    size_t n, d;
    uint32_t *perm;
    double *dist;
    size_t *off, *size;
    double *sep;
    double hmax; /* the largest distance from a centre */
} g;

static void kdp_free(void)
{
    free(g.perm);
    free(g.dist);
    free(g.off);
    free(g.size);
    free(g.sep);
    memset(&g, 0, sizeof g);
}

typedef struct kdp_key {
    double dist;
    uint32_t row;
} kdp_key;

typedef struct kdp_job {
    const kern_join_args *a;
    const clu_plan *p;
    const uint8_t *cl;
    double *dist;  /* by the dataset's row */
    kdp_key *key;  /* by run row (the sorts) */
    size_t r0, r1; /* rows (distances) */
    int t, nt;     /* clusters t, t + nt, ... (sorts) */
    int bad;
} kdp_job;

static void *kdp_dist_run(void *v)
{
    kdp_job *j = v;
    const size_t d = j->a->d, blk = d < 8192 ? 8192 / d : 1;
    double *buf = malloc(blk * d * sizeof *buf);
    if (!buf) {
        j->bad = 1;
        return NULL;
    }
    for (size_t i0 = j->r0; i0 < j->r1; i0 += blk) {
        const size_t cnt = i0 + blk < j->r1 ? blk : j->r1 - i0;
        kern_rows_f64(j->a, i0, cnt, buf);
        for (size_t i = 0; i < cnt; i++)
            j->dist[i0 + i] = sqrt(clu_d2(buf + i * d, j->p->o + (size_t)j->cl[i0 + i] * d, d));
    }
    free(buf);
    return NULL;
}

static int kdp_cmp_key(const void *x, const void *y)
{
    const kdp_key *a = x, *b = y;
    if (a->dist != b->dist)
        return a->dist < b->dist ? -1 : 1;
    return a->row < b->row ? -1 : a->row > b->row;
}

static void *kdp_sort_run(void *v)
{
    kdp_job *j = v;
    kdp_key *k = j->key;
    for (int c = j->t; c < j->p->K; c += j->nt)
        qsort(k + j->p->off[c], j->p->size[c], sizeof *k, kdp_cmp_key);
    return NULL;
}

/* nj jobs of size bytes each at jobs over threads (each on the caller
 * where no thread starts). */
static void kdp_par(void *(*fn)(void *), void *jobs, size_t size, int nj)
{
    pthread_t th[KDP_RANGES];
    int started[KDP_RANGES];
    for (int t = 0; t < nj; t++) {
        void *j = (char *)jobs + (size_t)t * size;
        started[t] = pthread_create(&th[t], NULL, fn, j) == 0;
        if (!started[t])
            fn(j);
    }
    for (int t = 0; t < nj; t++)
        if (started[t])
            pthread_join(th[t], NULL);
}

/* The order of a's rows from the plan p (every row assigned). */
static int kdp_build(const kern_join_args *a, const clu_plan *p)
{
    kdp_free();
    const size_t n = a->n, d = a->d;
    const int K = p->K;
    uint8_t *cl = malloc(n);
    double *dist = malloc(n * sizeof *dist);
    kdp_key *key = malloc(n * sizeof *key);
    g.perm = malloc(n * sizeof *g.perm);
    g.dist = malloc(n * sizeof *g.dist);
    g.off = malloc((size_t)K * sizeof *g.off);
    g.size = malloc((size_t)K * sizeof *g.size);
    g.sep = malloc((size_t)K * K * sizeof *g.sep);
    int rc = 0;
    if (!cl || !dist || !key || !g.perm || !g.dist || !g.off || !g.size || !g.sep) {
        rc = KERN_ENOMEM;
        goto out;
    }
    for (int c = 0; c < K; c++)
        for (size_t v = p->off[c]; v < p->off[c] + p->size[c]; v++)
            cl[p->perm[v]] = (uint8_t)c;
    {
        kdp_job jobs[KDP_RANGES];
        const int par = (double)n * (double)d >= 0x1p22;
        const int nj = par ? KDP_RANGES : 1;
        for (int t = 0; t < nj; t++)
            jobs[t] = (kdp_job){a, p, cl, dist, key, n * t / nj, n * (t + 1) / nj, t, nj, 0};
        kdp_par(kdp_dist_run, jobs, sizeof *jobs, nj);
        for (int t = 0; t < nj; t++)
            if (jobs[t].bad)
                rc = KERN_ENOMEM;
        if (rc)
            goto out;
        for (int c = 0; c < K; c++)
            for (size_t v = p->off[c]; v < p->off[c] + p->size[c]; v++)
                key[v] = (kdp_key){dist[p->perm[v]], p->perm[v]};
        kdp_par(kdp_sort_run, jobs, sizeof *jobs, nj);
    }
    g.hmax = 0;
    for (size_t v = 0; v < n; v++) {
        g.perm[v] = key[v].row;
        g.dist[v] = key[v].dist;
        g.hmax = key[v].dist > g.hmax ? key[v].dist : g.hmax;
    }
    kdp_sep(p, d, 1 - clu_mu(d), g.sep);
    memcpy(g.off, p->off, (size_t)K * sizeof *g.off);
    memcpy(g.size, p->size, (size_t)K * sizeof *g.size);
    g.ds = stream_data_of(a);
    g.valid = 1;
    g.K = K;
    g.n = n;
    g.d = d;
out:
    free(cl);
    free(dist);
    free(key);
    if (rc) {
        kdp_free();
        return kern_fail_msg(rc, "out of host memory ordering the rows for the k-distance");
    }
    return 0;
}

/* The share of the sampled pairs (x, y) a pass would keep: those whose
 * lower bound (as the items': centres and distances from them) is within
 * the reach of x or of y. KDP_SAMPLE rows spread evenly over the dataset,
 * each to its nearest centre. Negative where the host runs out. */
#define KDP_SAMPLE 512
/* A row's reach from its bound and norm: none (-1) below 0, every pair
 * for a bound that is not a number. */
static double kdp_reach(kd_prune_reach_fn reach, const void *ctx, double nx, float u2)
{
    if (u2 != u2)
        return INFINITY;
    return u2 < 0.0f ? -1.0 : reach(ctx, nx, (double)u2);
}

static double kdp_sample_share(const kern_join_args *a, const clu_plan *p, const float *u2,
                               const double *nx, kd_prune_reach_fn reach, const void *ctx)
{
    const size_t n = a->n, d = a->d, m = n < KDP_SAMPLE ? n : KDP_SAMPLE;
    const int K = p->K;
    double *x = malloc(d * sizeof *x), *dist = malloc(m * sizeof *dist), *r = malloc(m * sizeof *r);
    double *sep = malloc((size_t)K * K * sizeof *sep);
    int *c = malloc(m * sizeof *c);
    double share = -1;
    if (!x || !dist || !r || !c || !sep)
        goto out;
    kdp_sep(p, d, 1, sep);
    for (size_t t = 0; t < m; t++) {
        const size_t i = (size_t)((double)t * (double)n / (double)m);
        kern_rows_f64(a, i, 1, x);
        double best;
        c[t] = clu_nearest(p->o, K, x, d, &best);
        dist[t] = sqrt(best);
        r[t] = kdp_reach(reach, ctx, nx[i], u2[i]);
    }
    size_t kept = 0;
    for (size_t t = 0; t < m; t++)
        for (size_t u = t + 1; u < m; u++) {
            const double lb = c[t] == c[u] ? fabs(dist[t] - dist[u])
                                           : sep[(size_t)c[t] * K + c[u]] - dist[t] - dist[u];
            kept += lb <= (r[t] > r[u] ? r[t] : r[u]);
        }
    share = m > 1 ? (double)kept / ((double)m * (double)(m - 1) / 2) : 1.0;
out:
    free(x);
    free(dist);
    free(r);
    free(c);
    free(sep);
    return share;
}

int kd_prune_open(const kern_join_args *a, const float *u2, const double *nx,
                  kd_prune_reach_fn reach, const void *ctx, kd_prune *pr)
{
    memset(pr, 0, sizeof *pr);
    if (!(g.valid && stream_data_is(&g.ds, a))) {
        const clu_plan *p = NULL;
        int rc = clu_plan_sample(a, KERN_CLU_MIN_ROWS, &p);
        if (rc || !p)
            return rc;
        const double share = kdp_sample_share(a, p, u2, nx, reach, ctx);
        if (share < 0)
            return kern_fail_msg(KERN_ENOMEM, "out of host memory sampling the k-distance's order");
        if (share > KD_PRUNE_KEEP)
            return 0;
        int ok = 0;
        if ((rc = clu_plan_rows(a, &ok)) != 0 || !ok || p->K < 2)
            return rc;
        if ((rc = kdp_build(a, p)) != 0)
            return rc;
    }
    pr->K = g.K;
    pr->n = g.n;
    pr->d = g.d;
    pr->perm = g.perm;
    pr->dist = g.dist;
    pr->off = g.off;
    pr->size = g.size;
    pr->sep = g.sep;
    pr->hmax = g.hmax;
    return 0;
}

void kd_prune_close(kd_prune *pr)
{
    memset(pr, 0, sizeof *pr);
}

/* The parts of the tiles of u rows: for each cluster c, the tiles its
 * rows lie in (t0[c] on, np[c] of them, from base[c] in lo and hi) and
 * the least and largest distance of its rows in each, with the margin. */
typedef struct kdp_parts {
    size_t *t0, *np, *base;
    double *lo, *hi;
} kdp_parts;

static void kdp_parts_free(kdp_parts *q)
{
    free(q->t0);
    free(q->np);
    free(q->base);
    free(q->lo);
    free(q->hi);
}

static int kdp_parts_make(const kd_prune *pr, size_t u, kdp_parts *q)
{
    const int K = pr->K;
    const double mu = clu_mu(pr->d);
    q->t0 = malloc((size_t)K * sizeof *q->t0);
    q->np = malloc((size_t)K * sizeof *q->np);
    q->base = malloc((size_t)K * sizeof *q->base);
    q->lo = q->hi = NULL;
    if (!q->t0 || !q->np || !q->base)
        return -1;
    size_t tot = 0;
    for (int c = 0; c < K; c++) {
        const size_t b = pr->off[c], e = b + pr->size[c];
        q->t0[c] = b / u;
        q->np[c] = pr->size[c] ? (e + u - 1) / u - b / u : 0;
        q->base[c] = tot;
        tot += q->np[c];
    }
    q->lo = malloc((tot ? tot : 1) * sizeof *q->lo);
    q->hi = malloc((tot ? tot : 1) * sizeof *q->hi);
    if (!q->lo || !q->hi)
        return -1;
    for (int c = 0; c < K; c++)
        for (size_t t = 0; t < q->np[c]; t++) {
            const size_t b = pr->off[c], e = b + pr->size[c];
            const size_t v0 = (q->t0[c] + t) * u > b ? (q->t0[c] + t) * u : b;
            const size_t v1 = (q->t0[c] + t + 1) * u < e ? (q->t0[c] + t + 1) * u : e;
            /* ascending within the cluster: the first and the last */
            q->lo[q->base[c] + t] = pr->dist[v0] * (1 - mu);
            q->hi[q->base[c] + t] = pr->dist[v1 - 1] * (1 + mu);
        }
    return 0;
}

/* The cluster of run row v: the last non-empty cluster starting at or
 * before it. */
static int kdp_cluster(const kd_prune *pr, size_t v)
{
    int lo = 0, hi = pr->K - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (pr->off[mid] <= v)
            lo = mid;
        else
            hi = mid - 1;
    }
    while (lo > 0 && pr->size[lo] == 0)
        lo--;
    return lo;
}

/* The first index in [0, m) with x[i] >= t, or (above) x[i] > t; m if
 * none. x ascending. */
static size_t kdp_first(const double *x, size_t m, double t, int above)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (x[mid] > t || (!above && x[mid] == t))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The listing's two passes: count (buf NULL) or fill each row's bucket. */
typedef struct kdp_list {
    const kd_prune *pr;
    const kdp_parts *rp, *cp; /* row tiles' parts, column tiles' parts */
    const double *R;          /* each row tile's reach (negative: none) */
    size_t TR, ur;
    int tri;
    double slack0; /* mu times the largest sums (the bounds' rounding) */
    size_t *cnt;   /* per row: entries (count), or the next slot (fill) */
    uint32_t *buf;
} kdp_list;

static void kdp_emit(kdp_list *L, size_t I, size_t J)
{
    const size_t r = L->tri && J < I ? J : I, c = L->tri && J < I ? I : J;
    if (L->buf)
        L->buf[L->cnt[r]++] = (uint32_t)c;
    else
        L->cnt[r]++;
}

/* Row tile I's reach over every cluster's column tiles; returns the
 * entries it made. */
static size_t kdp_row(kdp_list *L, size_t I)
{
    const kd_prune *pr = L->pr;
    const int K = pr->K;
    const double R = L->R[I];
    if (!(R >= 0))
        return 0;
    const double mu = clu_mu(pr->d);
    const size_t v0 = I * L->ur, v1 = v0 + L->ur < pr->n ? v0 + L->ur : pr->n;
    size_t made = 0;
    for (int a = kdp_cluster(pr, v0); a <= kdp_cluster(pr, v1 - 1); a++) {
        if (!pr->size[a] || I < L->rp->t0[a] || I >= L->rp->t0[a] + L->rp->np[a])
            continue;
        const double lo1 = L->rp->lo[L->rp->base[a] + (I - L->rp->t0[a])];
        const double hi1 = L->rp->hi[L->rp->base[a] + (I - L->rp->t0[a])];
        for (int b = 0; b < K; b++) {
            const size_t m = L->cp->np[b];
            if (!m)
                continue;
            const double *lo2 = L->cp->lo + L->cp->base[b], *hi2 = L->cp->hi + L->cp->base[b];
            size_t j0, j1;
            if (a == b) {
                const double s = L->slack0 + mu * (hi1 + R);
                j0 = kdp_first(hi2, m, lo1 - R - s, 0); /* hi2 >= lo1 - R */
                j1 = kdp_first(lo2, m, hi1 + R + s, 1); /* and lo2 <= hi1 + R */
            } else {
                const double sep = pr->sep[(size_t)a * K + b];
                const double s = L->slack0 + mu * (sep + hi1 + R);
                j0 = kdp_first(hi2, m, sep - hi1 - R - s, 0); /* hi2 >= sep - hi1 - R */
                j1 = m;
            }
            for (size_t j = j0; j < j1; j++)
                kdp_emit(L, I, L->cp->t0[b] + j);
            made += j1 > j0 ? j1 - j0 : 0;
        }
    }
    return made;
}

static int kdp_cmp_u32(const void *x, const void *y)
{
    const uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* One thread's share of the listing: row tiles [I0, I1) for the reaches,
 * the count and the fill (its own counts, then its own slots in each
 * row's bucket: sorted after, each bucket holds what one thread would
 * put there), and rows [r0, r1) of the buckets for the sorts and the
 * items. */
typedef struct kdp_ljob {
    kdp_list L; /* cnt: this job's */
    const float *u2;
    const double *nx;
    kd_prune_reach_fn reach;
    const void *ctx;
    double *R;
    size_t I0, I1, r0, r1;
    double most;      /* stop counting past it: the listing would not pay */
    size_t made;      /* the count's entries */
    const size_t *at; /* the buckets (sorts) */
    size_t *uniq;     /* each row's distinct columns (sorts), then where its items go */
    uint32_t *out;
    int step;
} kdp_ljob;

enum { KDP_COUNT, KDP_FILL, KDP_SORT, KDP_OUT };

static void *kdp_list_run(void *v)
{
    kdp_ljob *j = v;
    kdp_list *L = &j->L;
    const size_t n = L->pr->n, ur = L->ur;
    switch (j->step) {
    case KDP_COUNT:
        /* each tile's reach: that of its largest bound and norm */
        for (size_t t = j->I0; t < j->I1; t++) {
            const size_t v0 = t * ur, v1 = v0 + ur < n ? v0 + ur : n;
            float um = -1.0f;
            double nm = 0;
            for (size_t w = v0; w < v1; w++)
                if (j->u2[w] >= 0.0f || j->u2[w] != j->u2[w]) {
                    um = j->u2[w] != j->u2[w] || j->u2[w] > um ? j->u2[w] : um;
                    nm = j->nx[w] > nm ? j->nx[w] : nm;
                    if (um != um)
                        break;
                }
            j->R[t] = kdp_reach(j->reach, j->ctx, nm, um);
        }
        j->made = 0;
        for (size_t I = j->I0; I < j->I1 && (double)j->made <= j->most; I++)
            j->made += kdp_row(L, I);
        break;
    case KDP_FILL:
        for (size_t I = j->I0; I < j->I1; I++)
            kdp_row(L, I);
        break;
    case KDP_SORT: /* each row's columns ascending, each once, in place */
        for (size_t r = j->r0; r < j->r1; r++) {
            uint32_t *c = L->buf + j->at[r];
            const size_t m = j->at[r + 1] - j->at[r];
            qsort(c, m, sizeof *c, kdp_cmp_u32);
            size_t u = 0;
            for (size_t e = 0; e < m; e++)
                if (e == 0 || c[e] != c[u - 1])
                    c[u++] = c[e];
            j->uniq[r] = u;
        }
        break;
    default: /* KDP_OUT: row r's items are uniq[r] to uniq[r + 1] */
        for (size_t r = j->r0; r < j->r1; r++) {
            const uint32_t *c = L->buf + j->at[r];
            const size_t m = j->uniq[r + 1] - j->uniq[r];
            for (size_t e = 0; e < m; e++) {
                j->out[2 * (j->uniq[r] + e)] = (uint32_t)r;
                j->out[2 * (j->uniq[r] + e) + 1] = c[e];
            }
        }
        break;
    }
    return NULL;
}

/* The listing's threads: one where the grid is small (a thread costs more
 * than its share), else KDP_RANGES. */
static int kdp_list_threads(size_t TR, int K)
{
    const double work = (double)TR * (double)K;
    return work >= 0x1p14 ? KDP_RANGES : 1;
}

/* One step of the listing on every job's thread; mark: the trace's
 * (TCJOIN_TRACE) line after it. */
static void kdp_steps(kdp_ljob *jobs, int nj, int step, const char *mark)
{
    for (int t = 0; t < nj; t++)
        jobs[t].step = step;
    kdp_par(kdp_list_run, jobs, sizeof *jobs, nj);
    kern_trace_mark(mark);
}

int kd_prune_items(const kd_prune *pr, const float *u2, const double *nx, kd_prune_reach_fn reach,
                   const void *ctx, size_t ur, size_t uc, int tri, uint32_t **items, size_t *nitems,
                   size_t *total)
{
    *items = NULL;
    *nitems = *total = 0;
    const size_t TR = (pr->n + ur - 1) / ur, TC = (pr->n + uc - 1) / uc;
    *total = tri ? TR * (TR + 1) / 2 : TR * TC;
    const int nj = kdp_list_threads(TR, pr->K);
    kdp_parts rp, cp;
    memset(&rp, 0, sizeof rp);
    memset(&cp, 0, sizeof cp);
    kdp_ljob jobs[KDP_RANGES];
    memset(jobs, 0, sizeof jobs);
    double *R = malloc(TR * sizeof *R);
    size_t *at = malloc((TR + 1) * sizeof *at), *uniq = malloc((TR + 1) * sizeof *uniq);
    uint32_t *buf = NULL, *out = NULL;
    int rc = KERN_ENOMEM;
    if (!R || !at || !uniq || kdp_parts_make(pr, ur, &rp) || kdp_parts_make(pr, uc, &cp))
        goto done;
    double slack0;
    {
        double sm = 0;
        for (int i = 0; i < pr->K * pr->K; i++)
            sm = pr->sep[i] > sm ? pr->sep[i] : sm;
        slack0 = clu_mu(pr->d) * (sm + 2 * pr->hmax);
    }
    /* count; stop where the list would keep too much of the grid (each
     * item of the triangle can come from both its tiles) */
    const double most = KD_PRUNE_ITEMS * (double)*total * (tri ? 2 : 1);
    for (int t = 0; t < nj; t++) {
        size_t *cnt = calloc(TR + 1, sizeof *cnt);
        if (!cnt)
            goto done;
        jobs[t] = (kdp_ljob){{pr, &rp, &cp, R, TR, ur, tri, slack0, cnt, NULL},
                             u2,
                             nx,
                             reach,
                             ctx,
                             R,
                             TR * t / nj,
                             TR * (t + 1) / nj,
                             TR * t / nj,
                             TR * (t + 1) / nj,
                             most,
                             0,
                             at,
                             uniq,
                             NULL,
                             0};
    }
    kern_trace_mark("kdist items: set-up");
    kdp_steps(jobs, nj, KDP_COUNT, "kdist items: counted");
    size_t made = 0;
    for (int t = 0; t < nj; t++)
        made += jobs[t].made;
    if ((double)made > most) {
        rc = 0;
        goto done;
    }
    /* each row's bucket, the threads' slots in it in thread order */
    at[0] = 0;
    for (size_t r = 0; r < TR; r++) {
        size_t s = at[r];
        for (int t = 0; t < nj; t++) {
            const size_t c = jobs[t].L.cnt[r];
            jobs[t].L.cnt[r] = s;
            s += c;
        }
        at[r + 1] = s;
    }
    buf = malloc((made ? made : 1) * sizeof *buf);
    if (!buf)
        goto done;
    for (int t = 0; t < nj; t++)
        jobs[t].L.buf = buf;
    kdp_steps(jobs, nj, KDP_FILL, "kdist items: filled");
    kdp_steps(jobs, nj, KDP_SORT, "kdist items: sorted");
    size_t no = 0;
    for (size_t r = 0; r < TR; r++) {
        const size_t u = uniq[r];
        uniq[r] = no;
        no += u;
    }
    uniq[TR] = no;
    out = malloc((no ? no : 1) * 2 * sizeof *out);
    if (!out)
        goto done;
    for (int t = 0; t < nj; t++)
        jobs[t].out = out;
    kdp_steps(jobs, nj, KDP_OUT, "kdist items: listed");
    if ((double)no <= KD_PRUNE_ITEMS * (double)*total) {
        *items = out;
        *nitems = no;
        out = NULL;
    }
    rc = 0;
done:
    for (int t = 0; t < nj; t++)
        free(jobs[t].L.cnt);
    free(R);
    free(at);
    free(uniq);
    free(buf);
    free(out);
    kdp_parts_free(&rp);
    kdp_parts_free(&cp);
    if (rc)
        return kern_fail_msg(rc, "out of host memory listing the k-distance's tiles");
    return 0;
}
