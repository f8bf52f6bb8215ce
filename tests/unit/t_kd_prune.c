/* The k-distance's pruned items (kd_prune_items, kernels/kern_kd_prune.c)
 * against every pair: on clustered rows in the cluster cut's order, each
 * pair whose FP64 distance is within a row's reach lies in a listed item
 * (the upper triangle of a symmetric run, where either row's reach
 * counts; and rows against every column), so a pruned pass keeps every
 * value the whole pass keeps. The reaches are drawn per row: none
 * (negative), a cluster's scale, a few far beyond it, one infinite. And
 * the list prunes: well-apart clusters keep a small share of the items,
 * and a reach as wide as the data takes no order. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kern_kd_prune.h"

#define KP_N 12288 /* six clusters of the cut's minimum rows */
#define KP_D 4
#define KP_C 6

static uint64_t rng = 11;
static double unit(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1p-53;
}
static double normal(void)
{
    const double u = unit() + 0x1p-60, v = unit();
    return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* The rows: KP_C Gaussian clusters (sd 0.02 to 0.1) with centres 4 apart
 * or more along the first axis, each row in a random one, and a sixtieth
 * of the rows uniform between them. */
static double *kp_rows(void)
{
    double *x = malloc((size_t)KP_N * KP_D * sizeof *x);
    for (size_t i = 0; i < KP_N; i++) {
        const int c = (int)(unit() * KP_C);
        const double sd = 0.02 + 0.016 * c;
        const int noise = unit() < 1.0 / 60;
        for (int k = 0; k < KP_D; k++)
            x[i * KP_D + k] = noise ? unit() * 4 * KP_C : (k == 0 ? 4.0 * c : 0) + sd * normal();
    }
    return x;
}

static double kp_dist(const double *x, uint32_t i, uint32_t j)
{
    double s = 0;
    for (int k = 0; k < KP_D; k++) {
        const double t = x[(size_t)i * KP_D + k] - x[(size_t)j * KP_D + k];
        s += t * t;
    }
    return sqrt(s);
}

/* The reach the tests give: the bound itself (u2 holds it), whatever the
 * norm. */
static double kp_reach(const void *ctx, double nx, double u2)
{
    (void)ctx;
    (void)nx;
    return u2;
}

/* Another that grows with the norm as well. */
static double kp_reach_sum(const void *ctx, double nx, double u2)
{
    (void)ctx;
    return u2 + nx;
}

/* A row's own reach, as the list must honour it. */
static double kp_row_reach(kd_prune_reach_fn fn, float u2, double nx)
{
    return u2 != u2 ? INFINITY : u2 < 0 ? -1 : fn(NULL, nx, u2);
}

/* Every pair within a row's reach lies in a listed item. */
static void kp_check(const char *what, const kd_prune *pr, const double *x, const float *lim,
                     const double *nx, kd_prune_reach_fn fn, size_t ur, size_t uc, int tri,
                     double most)
{
    uint32_t *items = NULL;
    size_t ni = 0, tot = 0;
    CHECK(kd_prune_items(pr, lim, nx, fn, NULL, ur, uc, tri, &items, &ni, &tot) == 0);
    const size_t TR = (KP_N + ur - 1) / ur, TC = (KP_N + uc - 1) / uc;
    CHECK_MSG(tot == (tri ? TR * (TR + 1) / 2 : TR * TC), "%s: %zu items in the grid", what, tot);
    unsigned char *in = calloc(TR * TC, 1);
    for (size_t t = 0; t < ni; t++) {
        const uint32_t r = items[2 * t], c = items[2 * t + 1];
        CHECK_MSG(r < TR && c < TC && (!tri || c >= r), "%s: item (%u, %u) off the grid", what, r,
                  c);
        CHECK_MSG(!in[(size_t)r * TC + c], "%s: item (%u, %u) twice", what, r, c);
        in[(size_t)r * TC + c] = 1;
    }
    size_t missed = 0, within = 0;
    for (uint32_t v = 0; v < KP_N; v++)
        for (uint32_t w = 0; w < KP_N; w++) {
            if (v == w || (tri && w < v))
                continue;
            const size_t I = v / ur, J = w / uc;
            if (in[I * TC + J])
                continue;
            const double s = kp_dist(x, pr->perm[v], pr->perm[w]);
            const int needed = s <= kp_row_reach(fn, lim[v], nx[v]) ||
                               (tri && s <= kp_row_reach(fn, lim[w], nx[w]));
            within += needed;
            missed += needed && !in[I * TC + J];
        }
    CHECK_MSG(missed == 0, "%s: %zu pairs within a reach lie in no listed item", what, missed);
    (void)within;
    CHECK_MSG((double)ni <= most * (double)tot, "%s: %zu of %zu items kept", what, ni, tot);
    free(in);
    free(items);
}

/* An ordinary run's arguments over the rows x (hash: the dataset's). */
static kern_join_args kp_args(const double *x, uint64_t hash)
{
    kern_join_args a;
    memset(&a, 0, sizeof a);
    a.x = x;
    a.n = KP_N;
    a.d = KP_D;
    a.x_bytes = 8;
    a.x_type = KERN_X_F64;
    a.hash = hash;
    a.q1 = KP_N;
    a.symmetric = 1;
    return a;
}

/* The order of the rows x (hash: the dataset's) at every row's reach r,
 * norms zero: *lim and *nx (KP_N each) hold them for the caller. */
static int kp_open(const double *x, uint64_t hash, float r, float **lim, double **nx, kd_prune *pr)
{
    const kern_join_args a = kp_args(x, hash);
    *lim = malloc(KP_N * sizeof **lim);
    *nx = calloc(KP_N, sizeof **nx);
    for (size_t i = 0; i < KP_N; i++)
        (*lim)[i] = r;
    return kd_prune_open(&a, *lim, *nx, kp_reach, NULL, pr);
}

TEST(pruned_items_hold_every_pair_within_reach)
{
    double *x = kp_rows();
    float *lim;
    double *nx;
    kd_prune pr;
    CHECK(kp_open(x, 0x6b7020746573742aull, 0.3f, &lim, &nx, &pr) == 0);
    CHECK_MSG(pr.K >= 2, "the clusters give no order (K %d)", pr.K);
    if (pr.K < 2) {
        free(lim);
        free(nx);
        free(x);
        return;
    }
    /* the order is a permutation */
    unsigned char *seen = calloc(KP_N, 1);
    for (size_t v = 0; v < KP_N; v++) {
        CHECK(pr.perm[v] < KP_N && !seen[pr.perm[v]]);
        seen[pr.perm[v]] = 1;
    }
    free(seen);
    for (size_t v = 0; v < KP_N; v++) {
        const double u = unit();
        lim[v] = (float)(u < 0.2 ? -1 : u < 0.9995 ? 0.3 * unit() : 2 + 6 * unit());
    }
    kp_check("symmetric, 256", &pr, x, lim, nx, kp_reach, 256, 256, 1, 0.6);
    kp_check("rows, 128 x 256", &pr, x, lim, nx, kp_reach, 128, 256, 0, 0.6);
    kp_check("symmetric, 64", &pr, x, lim, nx, kp_reach, 64, 64, 1, 0.6);
    /* tiles of two rows: a grid large enough that the listing runs on
     * several threads (each its share of the row tiles, buckets merged) */
    kp_check("symmetric, 2 (threads)", &pr, x, lim, nx, kp_reach, 2, 2, 1, 0.6);
    kp_check("rows, 2 x 8 (threads)", &pr, x, lim, nx, kp_reach, 2, 8, 0, 0.6);
    /* a reach that grows with the norm too: a tile's from its largest */
    for (size_t v = 0; v < KP_N; v++)
        nx[v] = 0.2 * unit();
    kp_check("reach and norm", &pr, x, lim, nx, kp_reach_sum, 256, 256, 1, 0.6);
    kp_check("reach and norm, rows", &pr, x, lim, nx, kp_reach_sum, 128, 256, 0, 0.6);
    /* one row reaching everything (and one not a number): its tile keeps
     * every column */
    lim[KP_N / 2] = INFINITY;
    lim[KP_N / 3] = NAN;
    kp_check("an infinite reach", &pr, x, lim, nx, kp_reach, 128, 256, 0, 0.6);
    /* rows that take no pair: no item at all */
    for (size_t v = 0; v < KP_N; v++)
        lim[v] = -1;
    uint32_t *items = NULL;
    size_t ni = 1, tot = 0;
    CHECK(kd_prune_items(&pr, lim, nx, kp_reach, NULL, 256, 256, 1, &items, &ni, &tot) == 0);
    CHECK_MSG(ni == 0, "%zu items for rows that take no pair", ni);
    free(items);
    kd_prune_close(&pr);
    free(lim);
    free(nx);
    free(x);
}

/* A reach as wide as the data: the sample says the order would not pay. */
TEST(no_order_where_the_reach_spans_the_clusters)
{
    double *x = kp_rows();
    float *lim;
    double *nx;
    kd_prune pr;
    CHECK(kp_open(x, 0x6b7020746573742bull, 100.0f, &lim, &nx, &pr) == 0);
    CHECK_EQ_INT(pr.K, 0);
    kd_prune_close(&pr);
    free(lim);
    free(nx);
    free(x);
}
