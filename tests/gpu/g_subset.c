/* GPU tests of subset runs (kernels/kern_subset.c) on exact: a join over
 * 300 rows of a dataset of 10^5 x 64 (2 x 10^4 under G_SUBSET_SMALL, for
 * the sanitizers, which slow every launch: no time checked) whose rows are
 * on the device lists
 * exactly the pairs the direct (a-b)^2 form in FP64 gives over those rows
 * (bit-identical distances; every ordered pair with a query row, each
 * query row's pair with itself), counts as many, leaves the whole
 * dataset's copy on the device for the next run (a cache hit, with runs
 * over the cluster cut's layout between subset runs too), and costs
 * its kernels plus under 2 ms of host work: what the clustering layer's
 * later joins pay for a few open components. Skipped without a CUDA
 * device. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "direct_f32.h"
#include "kernels.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

#define D 64
/* N rows in CL clusters of 100 (G_SUBSET_SMALL: 2 x 10^4, for the
 * sanitizers) */
static size_t N = 100000, CL = 1000;

/* CL clusters of N / CL rows: centres uniform in [-10, 10]^D, rows the
 * centre plus 0.1 N(0, 1) a value (a cluster's d2 about 1.3, two
 * clusters' about 1,300 apart); row i in cluster i % CL. */
static float *clusters(uint64_t seed)
{
    float *c = malloc(CL * D * sizeof *c), *x = malloc(N * D * sizeof *x);
    for (size_t i = 0; i < CL * D; i++)
        c[i] = (float)(20.0 * t_unit(&seed) - 10.0);
    for (size_t i = 0; i < N; i++)
        for (size_t k = 0; k < D; k++) {
            const double u = t_unit(&seed) + 1e-300, v = t_unit(&seed);
            const double g = sqrt(-2.0 * log(u)) * cos(2.0 * M_PI * v);
            x[i * D + k] = (float)(c[(i % CL) * D + k] + 0.1 * g);
        }
    free(c);
    return x;
}

typedef struct got {
    size_t n, bad;
    uint32_t *i, *j;
    double *d2;
} got;

static int take(void *ctx, size_t np, const uint32_t *pi, const uint32_t *pj, const double *d2)
{
    got *g = ctx;
    for (size_t t = 0; t < np; t++) {
        if (g->n == 4 * 300 * 300) {
            g->bad++;
            continue;
        }
        g->i[g->n] = pi[t];
        g->j[g->n] = pj[t];
        g->d2[g->n++] = d2[t];
    }
    return 0;
}

static int by_pair(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int by_f64(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

TEST(subset_join_equals_fp64_and_costs_its_rows)
{
    need_gpu();
    const int small = getenv("G_SUBSET_SMALL") != NULL;
    if (small)
        N = 20000, CL = 200;
    float *x = clusters(7);
    /* the rows of three clusters, 300, shuffled; 200 queries */
    uint32_t sub[300];
    for (uint32_t t = 0; t < 300; t++)
        sub[t] = (uint32_t)((t % 3) * 17 + (t / 3) * CL);
    uint64_t seed = 11;
    for (size_t t = 299; t > 0; t--) {
        const size_t u = t_splitmix(&seed) % (t + 1);
        const uint32_t v = sub[t];
        sub[t] = sub[u];
        sub[u] = v;
    }
    const size_t nq = 200;
    const double eps = 1.5;
    kern_join_args a;
    f32_args(&a, x, N, D);
    a.eps = eps;
    a.mode = KJOIN_COUNT;
    a.symmetric = 1;
    kern_join_result r;
    /* the whole dataset first, as the curve's first join leaves it */
    CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
    const uint64_t whole = r.pairs;
    /* the subset's pairs, from the rows */
    got want = {0, 0, malloc(4 * 300 * 300 * 4), malloc(4 * 300 * 300 * 4),
                malloc(4 * 300 * 300 * 8)};
    for (size_t s = 0; s < 300; s++)
        for (size_t t = 0; t < 300; t++) {
            const double d2 = direct_d2(x, D, sub[s], sub[t]);
            if ((s < nq || t < nq) && d2 <= eps * eps) {
                want.i[want.n] = sub[s];
                want.j[want.n] = sub[t];
                want.d2[want.n++] = d2;
            }
        }
    got g = {0, 0, malloc(4 * 300 * 300 * 4), malloc(4 * 300 * 300 * 4), malloc(4 * 300 * 300 * 8)};
    a.sub = sub;
    a.nsub = 300;
    a.sub_q = nq;
    a.mode = KJOIN_PAIRS;
    a.pair_fn = take;
    a.pair_ctx = &g;
    CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
    CHECK(g.bad == 0);
    printf("# subset of 300 rows (%zu queries) of %zu x %d: %zu pairs (the dataset %llu)\n", nq, N,
           D, g.n, (unsigned long long)whole);
    CHECK_MSG(g.n == want.n && r.pairs == want.n, "%zu pairs listed, %llu counted, wanted %zu", g.n,
              (unsigned long long)r.pairs, want.n);
    /* the same pairs with the same d2: sorted by (i, j), d2 compared */
    uint64_t *kg = malloc(g.n * 16), *kw = malloc(want.n * 16);
    for (size_t t = 0; t < g.n; t++) {
        kg[2 * t] = (uint64_t)g.i[t] << 32 | g.j[t];
        memcpy(&kg[2 * t + 1], &g.d2[t], 8);
        kw[2 * t] = (uint64_t)want.i[t] << 32 | want.j[t];
        memcpy(&kw[2 * t + 1], &want.d2[t], 8);
    }
    qsort(kg, g.n, 16, by_pair);
    qsort(kw, want.n, 16, by_pair);
    CHECK_MSG(memcmp(kg, kw, g.n * 16) == 0, "the pairs or their FP64 d2 differ from the rows'");
    a.mode = KJOIN_COUNT;
    a.pair_fn = NULL;
    CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
    CHECK_MSG(r.pairs == want.n, "COUNT %llu, wanted %zu", (unsigned long long)r.pairs, want.n);
    /* host work: the wall time less the kernels', median of 7 warm runs */
    double host[7];
    for (int k = 0; k < 7; k++) {
        const double t0 = now_s();
        CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
        host[k] = now_s() - t0 - r.t_kernel;
    }
    qsort(host, 7, sizeof *host, by_f64);
    printf("# a 300-row join's host work: median %.3f ms (%.3f-%.3f), kernels %.3f ms\n",
           host[3] * 1e3, host[0] * 1e3, host[6] * 1e3, r.t_kernel * 1e3);
    /* (not under the sanitizers, G_SUBSET_SMALL: every launch is slowed) */
    CHECK_MSG(host[3] < 2e-3 || small, "a 300-row join took %.3f ms of host work", host[3] * 1e3);
    /* the whole dataset's copy is still the device's */
    a.sub = NULL;
    a.nsub = a.sub_q = 0;
    CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
    CHECK_MSG(r.cache_hit && r.pairs == whole, "the next whole run: cache hit %d, %llu pairs",
              r.cache_hit, (unsigned long long)r.pairs);
    /* runs over a cut's layout and subset runs take turns (the curve's
     * rounds on a cut set): each finds its rows converted */
    for (int k = 0; k < 2; k++) {
        a.sub = NULL;
        a.nsub = a.sub_q = 0;
        CHECK_MSG(kern_exact_clusters_run(&a, &r) == 0, "%s", kern_error());
        CHECK_MSG(r.pairs == whole && (k == 0 || r.cache_hit),
                  "the cut's run %d: %llu pairs, cache hit %d", k, (unsigned long long)r.pairs,
                  r.cache_hit);
        a.sub = sub;
        a.nsub = 300;
        a.sub_q = nq;
        CHECK_MSG(kern_exact_run(&a, &r) == 0, "%s", kern_error());
        CHECK_MSG(r.pairs == want.n && r.cache_hit, "the subset's run %d: %llu pairs, cache hit %d",
                  k, (unsigned long long)r.pairs, r.cache_hit);
    }
    free(kg);
    free(kw);
    free(g.i);
    free(g.j);
    free(g.d2);
    free(want.i);
    free(want.j);
    free(want.d2);
    free(x);
}
