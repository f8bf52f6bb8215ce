/* pair_par (src/pair_par.h) against the batch walked directly: each
 * point's endpoints, in the batch's order, reach exactly one range's
 * function (an order-sensitive digest a point, the same as one thread's),
 * the ranges cover [0, n) without overlap; small batches, few points and
 * one thread stay on the caller. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

#include "pair_par.h"

typedef struct pp_seen {
    size_t n;
    uint64_t *digest; /* by point: every endpoint's pair index folded in order */
    unsigned *owner;  /* by point: ranges that touched it */
} pp_seen;

static uint64_t fold(uint64_t h, uint64_t v)
{
    return (h ^ (v + 0x9e3779b97f4a7c15ULL)) * 0x100000001b3ULL;
}

static void seen_range(void *ctx, const pair_batch *b, size_t lo, size_t hi)
{
    pp_seen *s = ctx;
    for (size_t p = lo; p < hi; p++)
        s->owner[p]++;
    for (size_t k = 0; k < b->k; k++) {
        if (b->i[k] >= lo && b->i[k] < hi)
            s->digest[b->i[k]] = fold(s->digest[b->i[k]], 2 * k);
        if (b->j[k] >= lo && b->j[k] < hi)
            s->digest[b->j[k]] = fold(s->digest[b->j[k]], 2 * k + 1);
    }
}

static uint64_t rng = 11;
static uint32_t rnext(uint32_t m)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng >> 33) % m);
}

/* The ranges the last check_batch used. */
static int g_ranges;

/* The batch of k random pairs over n points split (threads forced, at
 * least `least` pairs to split), checked against the direct walk. */
static void run_batch(size_t n, size_t k, int threads, size_t least, const char *what)
{
    uint32_t *i = malloc(k * sizeof *i), *j = malloc(k * sizeof *j);
    double *d2 = calloc(k, sizeof *d2);
    for (size_t t = 0; t < k; t++) {
        i[t] = rnext((uint32_t)n);
        j[t] = t % 7 ? rnext((uint32_t)n) : i[t]; /* some self pairs */
    }
    uint64_t *want = calloc(n, sizeof *want);
    for (size_t t = 0; t < k; t++) {
        want[i[t]] = fold(want[i[t]], 2 * t);
        want[j[t]] = fold(want[j[t]], 2 * t + 1);
    }
    pp_seen s = {n, calloc(n, sizeof(uint64_t)), calloc(n, sizeof(unsigned))};
    pair_batch b = {k, i, j, d2};
    pair_par_for_tests(least, threads);
    g_ranges = pair_par(&b, n, seen_range, &s);
    pair_par_for_tests(0, 0);
    size_t bad = 0, cover = 0;
    for (size_t p = 0; p < n; p++) {
        bad += s.digest[p] != want[p];
        cover += s.owner[p] != 1;
    }
    CHECK_MSG(bad == 0, "%s: %zu of %zu points saw their pairs otherwise", what, bad, n);
    CHECK_MSG(cover == 0, "%s: %zu points not in exactly one range", what, cover);
    free(i);
    free(j);
    free(d2);
    free(want);
    free(s.digest);
    free(s.owner);
}

static int check_batch(size_t n, size_t k, int threads, size_t least, const char *what)
{
    g_ranges = -1;
    run_batch(n, k, threads, least, what);
    return g_ranges;
}

TEST(every_endpoint_in_order_in_one_range)
{
    CHECK(check_batch(1000, 20000, 3, 1, "3 threads") == 3);
    CHECK(check_batch(17, 5000, 16, 1, "16 threads, 17 points") == 16);
    CHECK(check_batch(100003, 300000, 7, 1, "7 threads, uneven ranges") == 7);
    /* more threads than the helper keeps: its most */
    CHECK(check_batch(5000, 5000, 64, 1, "64 asked") == PAIR_PAR_MAX_THREADS);
}

TEST(small_work_stays_on_the_caller)
{
    CHECK(check_batch(1000, 100, 4, 0, "under PAIR_PAR_MIN") == 1);
    CHECK(check_batch(3, 5000, 4, 1, "fewer points than threads") == 1);
    CHECK(check_batch(1000, 5000, 1, 1, "one thread") == 1);
    CHECK(check_batch(1000, 0, 4, 0, "an empty batch") == 1);
}
