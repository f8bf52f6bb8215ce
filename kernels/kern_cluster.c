/* The cluster cut's plan (kern_cluster.h): k-means in FP64 on a sample of
 * the rows, then every row to its nearest centre, then at a given eps the
 * groups of clusters that are not proved apart, laid out for one run.
 * Host code over
 * kern_rows_f64, deterministic: the sample, the seeding and every sum are
 * fixed by the rows alone (the row pass splits its rows into fixed ranges,
 * each on its own thread, and keeps only maxima and each row's choice), so
 * every machine cuts a dataset alike.
 *
 * Why a sample: the clusters only choose each run's origin and which runs
 * are skipped; no pair's fate depends on them (each run is exact, and a
 * skip is proved by the radii of the members themselves, clu_apart). So
 * the k-means need not converge on every row: CLU_SAMPLE rows (fewer at
 * large d) and CLU_ITERS Lloyd steps find well-separated clusters for
 * some 10^8 multiply-adds (the assignments on threads), whatever the data;
 * then, unless the sample's clusters already make one group at the run's
 * eps, one pass over the rows (n K d, on threads). */
#include <math.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kern_cluster.h"
#include "kern_stream.h"

#define CLU_SAMPLE 4096              /* rows sampled, at most */
#define CLU_SAMPLE_VALUES (1u << 20) /* ... and at most this many values */
#define CLU_ITERS 8
#define CLU_RANGES 16 /* the assignments: fixed ranges, a thread each */

static struct {
    stream_data_id ds; /* the dataset the plan is of */
    size_t min_rows;
    int done; /* done: the sample stage ran (g.p.K 0: no cut) */
    clu_plan p;
    uint8_t *cl;  /* n: each row's cluster, once assigned */
    clu_layout L; /* the last layout (L.comp: its groups) */
} g;

static void clu_layout_free(clu_layout *L)
{
    free(L->o);
    free(L->rows);
    free(L->origin);
    free(L->clu);
    free(L->comp);
    memset(L, 0, sizeof *L);
}

static void clu_free(void)
{
    free(g.p.o);
    free(g.p.est);
    free(g.p.srad);
    free(g.p.size);
    free(g.p.off);
    free(g.p.perm);
    free(g.p.rad);
    free(g.p.vmax);
    clu_layout_free(&g.L);
    free(g.cl);
    memset(&g, 0, sizeof g);
}

static int clu_same(const kern_join_args *a, size_t min_rows)
{
    return g.done && stream_data_is(&g.ds, a) && g.min_rows == min_rows;
}

/* |x - y|^2 in four interleaved sums: one chain of d dependent additions
 * holds the sample's k-means (the seeding's K m d on one thread) to the
 * adder's latency (measured: docs/history/ACCURACY-2026-11.md, "exact over
 * clusters"). The margins the plan takes for a
 * d2, (d + 3) 2^-53 relative (clu_plan_rows, clu_apart's mu), hold for any order of the sum: four
 * sums of ceil(d / 4) terms met pairwise round ceil(d / 4) + 2 times in a term's path, a single
 * chain d - 1 times. */
double clu_d2(const double *x, const double *y, size_t d)
{
    double s[4] = {0, 0, 0, 0};
    size_t k = 0;
    for (; k + 4 <= d; k += 4)
        for (int u = 0; u < 4; u++) {
            const double t = x[k + u] - y[k + u];
            s[u] += t * t;
        }
    for (; k < d; k++) {
        const double t = x[k] - y[k];
        s[k & 3] += t * t;
    }
    return (s[0] + s[1]) + (s[2] + s[3]);
}

int clu_nearest(const double *o, int K, const double *x, size_t d, double *best)
{
    int c = 0;
    double b = INFINITY;
    for (int t = 0; t < K; t++) {
        const double s = clu_d2(x, o + (size_t)t * d, d);
        if (s < b) {
            b = s;
            c = t;
        }
    }
    *best = b;
    return c;
}

double clu_mu(size_t d)
{
    return 0x1p-30 + 8.0 * (double)(d + 8) * 0x1p-53;
}

/* A fixed sequence in [0, 1): the seeding's draws. */
static double clu_draw(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * 0x1p-53;
}

/* One Lloyd assignment over sampled rows [a, b): each to its nearest
 * centre. */
typedef struct clu_assign {
    const double *xs, *o;
    size_t d, a, b;
    int K, first, moved;
    int *cl;
} clu_assign;

static void *clu_assign_run(void *v)
{
    clu_assign *t = v;
    for (size_t i = t->a; i < t->b; i++) {
        double b;
        const int c = clu_nearest(t->o, t->K, t->xs + i * t->d, t->d, &b);
        t->moved |= t->first || c != t->cl[i];
        t->cl[i] = c;
    }
    return NULL;
}

/* Every sampled row to its nearest centre, over fixed ranges on threads
 * where the work is worth them (each row's choice is its own, so the
 * result is the same); whether any row moved. */
static int clu_assign_all(const double *xs, size_t m, size_t d, const double *o, int K, int *cl,
                          int first)
{
    clu_assign t[CLU_RANGES];
    pthread_t th[CLU_RANGES];
    int started[CLU_RANGES] = {0}, moved = 0;
    const int par = (double)m * (double)d * K >= 0x1p22;
    for (int r = 0; r < CLU_RANGES; r++) {
        t[r] =
            (clu_assign){xs, o, d, m * r / CLU_RANGES, m * (r + 1) / CLU_RANGES, K, first, 0, cl};
        started[r] = par && pthread_create(&th[r], NULL, clu_assign_run, &t[r]) == 0;
        if (!started[r])
            clu_assign_run(&t[r]);
    }
    for (int r = 0; r < CLU_RANGES; r++) {
        if (started[r])
            pthread_join(th[r], NULL);
        moved |= t[r].moved;
    }
    return moved;
}

/* k-means++ seeding then Lloyd steps over the m sampled rows xs: K
 * centres into o, each row's cluster into cl. 0 when a value is not
 * finite. */
static int clu_kmeans(const double *xs, size_t m, size_t d, int K, double *o, int *cl, double *w)
{
    double *dmin = malloc(m * sizeof *dmin);
    if (!dmin)
        return -1;
    uint64_t seed = 0x9e3779b97f4a7c15ull;
    memcpy(o, xs, d * sizeof *o);
    for (size_t i = 0; i < m; i++)
        dmin[i] = clu_d2(xs + i * d, o, d);
    for (int c = 1; c < K; c++) {
        double tot = 0;
        for (size_t i = 0; i < m; i++)
            tot += dmin[i];
        if (!isfinite(tot)) {
            free(dmin);
            return 0;
        }
        size_t pick = m - 1;
        double r = clu_draw(&seed) * tot, acc = 0;
        for (size_t i = 0; i < m; i++) {
            acc += dmin[i];
            if (acc > r) {
                pick = i;
                break;
            }
        }
        memcpy(o + (size_t)c * d, xs + pick * d, d * sizeof *o);
        for (size_t i = 0; i < m; i++) {
            const double s = clu_d2(xs + i * d, o + (size_t)c * d, d);
            dmin[i] = s < dmin[i] ? s : dmin[i];
        }
    }
    free(dmin);
    for (int it = 0; it < CLU_ITERS; it++) {
        if (!clu_assign_all(xs, m, d, o, K, cl, it == 0))
            break;
        memset(w, 0, (size_t)K * sizeof *w);
        for (size_t i = 0; i < m; i++)
            w[cl[i]] += 1;
        for (int c = 0; c < K; c++)
            if (w[c] > 0)
                memset(o + (size_t)c * d, 0, d * sizeof *o);
        for (size_t i = 0; i < m; i++)
            for (size_t k = 0; k < d; k++)
                o[(size_t)cl[i] * d + k] += xs[i * d + k];
        for (int c = 0; c < K; c++)
            for (size_t k = 0; w[c] > 0 && k < d; k++)
                o[(size_t)c * d + k] /= w[c];
    }
    memset(w, 0, (size_t)K * sizeof *w);
    for (size_t i = 0; i < m; i++)
        w[cl[i]] += 1;
    return 1;
}

/* Clusters the sample predicts smaller than min_rows go into the nearest
 * other (their centres weighted by their rows): a run should fill the
 * GPU. Returns the clusters left. */
static int clu_merge(double *o, double *w, int K, size_t d, double min_rows)
{
    for (;;) {
        int s = 0;
        for (int c = 1; c < K; c++)
            if (w[c] < w[s])
                s = c;
        if (K < 2 || w[s] >= min_rows)
            return K;
        int t = s == 0 ? 1 : 0;
        double bt = INFINITY;
        for (int c = 0; c < K; c++) {
            const double q = c == s ? INFINITY : clu_d2(o + (size_t)s * d, o + (size_t)c * d, d);
            if (q < bt) {
                bt = q;
                t = c;
            }
        }
        if (w[s] > 0)
            for (size_t k = 0; k < d; k++)
                o[(size_t)t * d + k] =
                    (w[t] * o[(size_t)t * d + k] + w[s] * o[(size_t)s * d + k]) / (w[t] + w[s]);
        w[t] += w[s];
        K--;
        memmove(o + (size_t)s * d, o + (size_t)(s + 1) * d, (size_t)(K - s) * d * sizeof *o);
        memmove(w + s, w + s + 1, (size_t)(K - s) * sizeof *w);
    }
}

int clu_plan_sample(const kern_join_args *a, size_t min_rows, const clu_plan **p)
{
    *p = NULL;
    if (clu_same(a, min_rows)) {
        *p = g.p.K ? &g.p : NULL;
        return 0;
    }
    clu_free();
    const size_t n = a->n, d = a->d;
    size_t m = CLU_SAMPLE_VALUES / d;
    m = m < CLU_SAMPLE ? m : CLU_SAMPLE;
    m = m < n ? m : n;
    size_t k0 = n / (min_rows ? min_rows : 1);
    k0 = k0 < m / 16 ? k0 : m / 16;
    const int K = (int)(k0 < CLU_MAX_K ? k0 : CLU_MAX_K);
    g.ds = stream_data_of(a);
    g.min_rows = min_rows;
    g.done = 1;
    if (K < 2)
        return 0;
    double *xs = malloc(m * d * sizeof *xs), *o = malloc((size_t)K * d * sizeof *o),
           *w = malloc((size_t)K * sizeof *w), *srad = NULL;
    int *cl = calloc(m, sizeof *cl);
    int rc = 0;
    if (!xs || !o || !w || !cl) {
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory clustering the rows");
        goto out;
    }
    for (size_t t = 0; t < m; t++) /* evenly spread over the rows */
        kern_rows_f64(a, (size_t)((double)t * (double)n / (double)m), 1, xs + t * d);
    const int fin = clu_kmeans(xs, m, d, K, o, cl, w);
    if (fin < 0) {
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory clustering the rows");
        goto out;
    }
    if (!fin)
        goto out;
    for (int c = 0; c < K; c++)
        w[c] *= (double)n / (double)m;
    const int k = clu_merge(o, w, K, d, (double)min_rows);
    if (k < 2)
        goto out;
    srad = calloc((size_t)k, sizeof *srad);
    if (!srad) {
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory clustering the rows");
        goto out;
    }
    for (size_t t = 0; t < m; t++) {
        double b;
        const int c = clu_nearest(o, k, xs + t * d, d, &b);
        srad[c] = fmax(srad[c], sqrt(b));
    }
    g.p.K = k;
    g.p.o = o;
    g.p.est = w;
    g.p.srad = srad;
    o = w = srad = NULL;
    *p = &g.p;
out:
    free(xs);
    free(o);
    free(w);
    free(srad);
    free(cl);
    return rc;
}

/* ---- the row pass ---- */

typedef struct clu_range {
    const kern_join_args *a;
    size_t r0, r1;
    double *rad2, *vmax; /* K each: this range's maxima */
    int bad;             /* a value that is not finite */
} clu_range;

static void *clu_range_run(void *v)
{
    clu_range *t = v;
    const size_t d = t->a->d, blk = d < 8192 ? 8192 / d : 1;
    const int K = g.p.K;
    double *buf = malloc(blk * d * sizeof *buf);
    if (!buf) {
        t->bad = -1;
        return NULL;
    }
    for (size_t i0 = t->r0; i0 < t->r1 && !t->bad; i0 += blk) {
        const size_t cnt = i0 + blk < t->r1 ? blk : t->r1 - i0;
        kern_rows_f64(t->a, i0, cnt, buf);
        for (size_t i = 0; i < cnt; i++) {
            const double *x = buf + i * d;
            double b;
            const int c = clu_nearest(g.p.o, K, x, d, &b);
            if (!isfinite(b)) {
                t->bad = 1;
                break;
            }
            g.cl[i0 + i] = (uint8_t)c;
            t->rad2[c] = fmax(t->rad2[c], b);
            const double *oc = g.p.o + (size_t)c * d;
            for (size_t k = 0; k < d; k++)
                t->vmax[c] = fmax(t->vmax[c], fabs(x[k] - oc[k]));
        }
    }
    free(buf);
    return NULL;
}

int clu_plan_rows(const kern_join_args *a, int *ok)
{
    *ok = g.p.rows;
    if (g.p.rows)
        return 0;
    const size_t n = a->n, d = a->d;
    const int K = g.p.K;
    clu_range rg[CLU_RANGES];
    double *mx = calloc((size_t)2 * CLU_RANGES * K, sizeof *mx);
    g.cl = malloc(n);
    g.p.size = calloc((size_t)K, sizeof *g.p.size);
    g.p.off = calloc((size_t)K, sizeof *g.p.off);
    g.p.perm = malloc(n * sizeof *g.p.perm);
    g.p.rad = calloc((size_t)K, sizeof *g.p.rad);
    g.p.vmax = calloc((size_t)K, sizeof *g.p.vmax);
    if (!mx || !g.cl || !g.p.size || !g.p.off || !g.p.perm || !g.p.rad || !g.p.vmax) {
        free(mx);
        return kern_fail_msg(KERN_ENOMEM, "out of host memory assigning the rows to clusters");
    }
    pthread_t th[CLU_RANGES];
    int started[CLU_RANGES] = {0};
    /* Threads only for work worth them; the result is the same. */
    const int par = (double)n * (double)d * K >= 0x1p24;
    for (int t = 0; t < CLU_RANGES; t++) {
        rg[t] = (clu_range){
            a, n * t / CLU_RANGES, n * (t + 1) / CLU_RANGES, mx + 2 * t * K, mx + (2 * t + 1) * K,
            0};
        started[t] = par && pthread_create(&th[t], NULL, clu_range_run, &rg[t]) == 0;
        if (!started[t])
            clu_range_run(&rg[t]);
    }
    int bad = 0;
    for (int t = 0; t < CLU_RANGES; t++) {
        if (started[t])
            pthread_join(th[t], NULL);
        bad = bad ? bad : rg[t].bad;
        for (int c = 0; c < K; c++) {
            g.p.rad[c] = fmax(g.p.rad[c], rg[t].rad2[c]);
            g.p.vmax[c] = fmax(g.p.vmax[c], rg[t].vmax[c]);
        }
    }
    free(mx);
    if (bad < 0)
        return kern_fail_msg(KERN_ENOMEM, "out of host memory assigning the rows to clusters");
    if (bad) {
        g.p.K = 0; /* not finite: never cut this dataset */
        return 0;
    }
    /* sqrt and the d2 each carry (d + 3) 2^-53 of relative error at most;
     * the margin is far above it, so rad bounds every member's distance. */
    const double mu = clu_mu(d);
    for (int c = 0; c < K; c++)
        g.p.rad[c] = sqrt(g.p.rad[c]) * (1 + mu);
    for (size_t i = 0; i < n; i++)
        g.p.size[g.cl[i]]++;
    for (int c = 1; c < K; c++)
        g.p.off[c] = g.p.off[c - 1] + g.p.size[c - 1];
    size_t *at = malloc((size_t)K * sizeof *at);
    if (!at)
        return kern_fail_msg(KERN_ENOMEM, "out of host memory assigning the rows to clusters");
    memcpy(at, g.p.off, (size_t)K * sizeof *at);
    for (size_t i = 0; i < n; i++)
        g.p.perm[at[g.cl[i]]++] = (uint32_t)i;
    free(at);
    g.p.rows = 1;
    *ok = 1;
    return 0;
}

int clu_apart(const clu_plan *p, size_t d, const double *rad, int a, int b, double lim)
{
    /* Real |x - y| >= |o_a - o_b| - |x - o_a| - |y - o_b| > lim (1 + mu)
     * for every x of a and y of b, while a pair FP64 puts within lim is
     * within lim (1 + (d + 2) 2^-53) in fact. mu covers that, the
     * centres' distance as computed (sep, deflated) and the sum's
     * rounding. */
    const double mu = clu_mu(d);
    const double sep = sqrt(clu_d2(p->o + (size_t)a * d, p->o + (size_t)b * d, d)) * (1 - mu);
    return sep > (rad[a] + rad[b] + lim) * (1 + mu);
}

int clu_groups(const clu_plan *p, size_t d, const double *rad, double lim, int *comp)
{
    const int K = p->K;
    for (int c = 0; c < K; c++)
        comp[c] = c;
    for (int a = 0; a < K; a++) /* union by the lower number */
        for (int b = a + 1; b < K; b++) {
            if (clu_apart(p, d, rad, a, b, lim))
                continue;
            int ra = a, rb = b;
            while (comp[ra] != ra)
                ra = comp[ra];
            while (comp[rb] != rb)
                rb = comp[rb];
            if (ra != rb)
                comp[ra > rb ? ra : rb] = ra < rb ? ra : rb;
        }
    /* Every root found before any is renumbered: a walk through entries
     * already rewritten to group numbers would take a number for a
     * parent (it put cluster 3 of {0, 1}, {2, 3} in group 0, and the
     * cut then skipped every pair between clusters 2 and 3: 0.7% of
     * fp64's pairs on gauss 5*10^5 x 128, 64 clusters). */
    int root[CLU_MAX_K], num[CLU_MAX_K];
    for (int c = 0; c < K; c++) {
        int r = c;
        while (comp[r] != r)
            r = comp[r];
        root[c] = r;
    }
    int G = 0;
    for (int c = 0; c < K; c++)
        if (root[c] == c)
            num[c] = G++;
    for (int c = 0; c < K; c++)
        comp[c] = num[root[c]];
    return G;
}

double clu_sample_work(const clu_plan *p, size_t n, size_t d, double lim)
{
    int comp[CLU_MAX_K];
    double rows[CLU_MAX_K] = {0}, kept = 0;
    const int G = clu_groups(p, d, p->srad, lim, comp);
    for (int c = 0; c < p->K; c++)
        rows[comp[c]] += p->est[c];
    for (int c = 0; c < G; c++)
        kept += rows[c] * rows[c];
    return G < 2 ? 1.0 : kept / ((double)n * (double)n);
}

int clu_plan_layout(const kern_join_args *a, double lim, const clu_layout **out)
{
    const clu_plan *p = &g.p;
    const int K = p->K;
    const size_t d = a->d, A = KERN_STREAM_ALIGN;
    int comp[CLU_MAX_K];
    *out = NULL;
    const int G = clu_groups(p, d, p->rad, lim, comp);
    if (G < 2)
        return 0;
    if (g.L.comp && g.L.K == G && memcmp(g.L.comp, comp, (size_t)K * sizeof *comp) == 0) {
        *out = &g.L; /* the same groups: the same layout, still on the device */
        return 0;
    }
    clu_layout_free(&g.L);
    clu_layout *L = &g.L;
    L->K = G;
    L->o = calloc((size_t)G * d, sizeof *L->o);
    L->clu = calloc((size_t)G + 1, sizeof *L->clu);
    L->comp = malloc((size_t)K * sizeof *L->comp);
    double *w = calloc((size_t)G, sizeof *w), *vm = calloc((size_t)G, sizeof *vm);
    if (!L->o || !L->clu || !L->comp || !w || !vm) {
        free(w);
        free(vm);
        return kern_fail_msg(KERN_ENOMEM, "out of host memory laying out the clusters");
    }
    memcpy(L->comp, comp, (size_t)K * sizeof *comp);
    /* A group's origin: its clusters' centres weighted by their members
     * (any origin is exact; this one is near all of them). */
    for (int c = 0; c < K; c++)
        w[comp[c]] += (double)p->size[c];
    for (int c = 0; c < K; c++)
        for (size_t k = 0; w[comp[c]] > 0 && k < d; k++)
            L->o[(size_t)comp[c] * d + k] +=
                (double)p->size[c] / w[comp[c]] * p->o[(size_t)c * d + k];
    /* Every value of a member of c within vmax[c] of c's centre, and that
     * within dmax of its group's origin: the run's FP16 range. */
    for (int c = 0; c < K; c++) {
        double dm = 0;
        for (size_t k = 0; k < d; k++)
            dm = fmax(dm, fabs(p->o[(size_t)c * d + k] - L->o[(size_t)comp[c] * d + k]));
        vm[comp[c]] = fmax(vm[comp[c]], p->vmax[c] + dm);
    }
    L->vmax = 0;
    for (int c = 0; c < G; c++)
        L->vmax = fmax(L->vmax, vm[c] * (1 + 0x1p-40));
    /* Members group by group (their clusters in order), each group padded
     * to whole tiles. */
    double kept = 0;
    for (int c = 0; c < G; c++) {
        L->clu[c + 1] = L->clu[c] + ((size_t)w[c] + A - 1) / A * A;
        kept += w[c] * w[c];
    }
    L->work = kept / ((double)a->n * (double)a->n);
    L->n = L->clu[G];
    L->rows = malloc(L->n * sizeof *L->rows);
    L->origin = malloc(L->n);
    free(w);
    free(vm);
    if (!L->rows || !L->origin)
        return kern_fail_msg(KERN_ENOMEM, "out of host memory laying out the clusters");
    uint64_t h = 14695981039346656037ull;
    for (int c = 0; c < G; c++) {
        size_t v = L->clu[c];
        for (int t = 0; t < K; t++)
            if (comp[t] == c)
                for (size_t i = 0; i < p->size[t]; i++, v++) {
                    L->rows[v] = p->perm[p->off[t] + i];
                    L->origin[v] = (uint8_t)c;
                }
        for (; v < L->clu[c + 1]; v++) {
            L->rows[v] = KERN_ROW_PAD;
            L->origin[v] = KERN_ORIGIN_NONE;
        }
    }
    for (int c = 0; c < K; c++)
        h = (h ^ (uint64_t)comp[c]) * 1099511628211ull;
    L->key = h;
    *out = L;
    /* TCJOIN_TRACE=cut-dump=FILE: the layout (G, the groups' first run
     * rows and the end, each run row's dataset row) for a look at what a
     * run over it computed (docs/ACCURACY.md). */
    const char *dump = kern_trace_file(KERN_TRACE_CUT_DUMP);
    FILE *f = dump ? fopen(dump, "wb") : NULL;
    if (f) {
        const uint64_t g64 = (uint64_t)G;
        fwrite(&g64, sizeof g64, 1, f);
        for (int c = 0; c <= G; c++) {
            const uint64_t v = L->clu[c];
            fwrite(&v, sizeof v, 1, f);
        }
        fwrite(L->rows, sizeof *L->rows, L->n, f);
        fclose(f);
    }
    return 0;
}

int kern_cluster_parts(size_t n, uint32_t *part)
{
    const clu_layout *L = &g.L;
    size_t rows = 0;
    for (int c = 0; g.p.rows && c < g.p.K; c++)
        rows += g.p.size[c];
    if (!L->rows || rows != n)
        return kern_fail_msg(KERN_EINVAL, "cluster cut: no layout of the dataset's rows is held");
    for (size_t v = 0; v < L->n; v++)
        if (L->rows[v] != KERN_ROW_PAD)
            part[L->rows[v]] = L->origin[v];
    return 0;
}
