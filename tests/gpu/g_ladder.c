/* GPU tests of the teaching ladder's own rungs (kern_ladder_run,
 * kernels/ladder/).
 *
 * Test plan:
 *  1. every own rung 1..KERN_LADDER_OWN counts exactly the pairs an
 *     independent FP64 count finds, with the direct form sum (a_k - b_k)^2,
 *     on ragged shapes (n not a multiple of 128: 1, 300, 1000, 1531; d not
 *     a multiple of 16 or 64: 3, 70, 129, 257) and one bigger (4096 x 256);
 *     the result's bookkeeping (d_padded, blocks, regs, variant) is filled.
 *  2. kern_ladder_check with the real device rejects broken copies of real
 *     rungs (a warp tile that does not divide, too many threads, more shared
 *     memory than the device has) with one line naming the rung (and, for
 *     the shared memory, the device).
 *  3. a cancelled run returns KERN_ECANCEL; a rung that is not an own one
 *     returns KERN_EINVAL.
 *  4. LADDER_BENCH=1: each rung at n = 32768, d = 1024, kernel ms and
 *     TFLOPS (2 n^2 d / t), registers and resident blocks; all rungs must
 *     agree on the count. Skipped otherwise.
 * LADDER_SMALL=1 keeps only small shapes (for compute-sanitizer).
 *
 * Tolerance: none, counts must be equal. The coordinates are integers in
 * [-4, 4], exact in FP16 and FP32; every product is an integer of at most
 * 16 and every sum (norm, dot product, d2) an integer of at most
 * 16 * 320 < 2^24, so FP32 (and the tensor cores' FP32 accumulation, whose
 * alignment keeps 24 bits and more) computes each exactly in any order, in
 * the direct and in the |a|^2 + |b|^2 - 2a.b form alike. eps^2 is a
 * half-integer, so no d2 ties it, and (float)(eps * eps) is that
 * half-integer exactly (its double error is far below half an FP32 ulp).
 * Skipped without a CUDA device. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "kernels.h"

static void need_gpu(void)
{
    if (kern_device_count() == 0)
        t_skip("skipped: no CUDA device");
}

static int small_only(void)
{
    const char *s = getenv("LADDER_SMALL");
    return s && *s && strcmp(s, "0") != 0;
}

static uint64_t rng = 46;
static unsigned rnext(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (unsigned)((z ^ (z >> 31)) >> 32);
}

/* n x d integers uniform in [-4, 4]; every 17th row repeats an earlier one
 * (pairs at distance 0 besides the self-pairs). */
static float *ints(size_t n, size_t d)
{
    float *x = malloc(n * d * sizeof *x);
    if (!x)
        abort();
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++)
            x[i * d + k] = i % 17 == 16 ? x[(i / 2) * d + k] : (float)((int)(rnext() % 9) - 4);
    return x;
}

/* A half-integer eps^2 about one standard deviation below the mean d2 of
 * two random rows (13.3 d, sd 15.7 sqrt(d)): a few percent of the pairs. */
static double eps2_for(size_t d)
{
    const double e = floor(13.33 * (double)d - 15.7 * sqrt((double)d));
    return (e < 2 ? 8 : e) + 0.5;
}

/* Ordered pairs with d2 <= eps2, in FP64, the direct form; each unordered
 * pair once (d2 is symmetric), the sum stopped once it passes eps2. */
static uint64_t ref_count(const float *x, size_t n, size_t d, double eps2)
{
    uint64_t c = n;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            double s = 0;
            for (size_t k = 0; k < d && s <= eps2; k++) {
                const double t = (double)x[i * d + k] - (double)x[j * d + k];
                s += t * t;
            }
            c += s <= eps2 ? 2 : 0;
        }
    return c;
}

static int run_rung(int rung, const float *x, size_t n, size_t d, double eps2, int reps,
                    const volatile int *cancel, kern_ladder_result *res)
{
    kern_ladder_args a;
    memset(&a, 0, sizeof a);
    a.rung = rung;
    a.x = x;
    a.n = n;
    a.d = d;
    a.eps = sqrt(eps2);
    a.reps = reps;
    a.cancel = cancel;
    return kern_ladder_run(&a, res);
}

/* Every own rung on one shape against FP64; 1 after a failure (reported). */
static int check_shape(size_t n, size_t d)
{
    float *x = ints(n, d);
    const double eps2 = eps2_for(d);
    const uint64_t want = ref_count(x, n, d, eps2);
    printf("# n %zu d %zu eps^2 %.1f: %llu pairs (FP64)\n", n, d, eps2, (unsigned long long)want);
    int bad = 0;
    for (int id = 1; id <= KERN_LADDER_OWN && !bad; id++) {
        kern_ladder_result res;
        const int rc = run_rung(id, x, n, d, eps2, 1, NULL, &res);
        if (rc) {
            t_fail(__FILE__, __LINE__, "rung %d, n %zu d %zu: %s", id, n, d, kern_error());
            bad = 1;
            break;
        }
        if (res.pairs != want) {
            t_fail(__FILE__, __LINE__, "rung %d (%s), n %zu d %zu: %llu pairs, FP64 %llu", id,
                   res.variant, n, d, (unsigned long long)res.pairs, (unsigned long long)want);
            bad = 1;
            break;
        }
        const size_t dp = (d + 63) / 64 * 64;
        if (res.d_padded != dp || res.blocks == 0 || res.regs <= 0 || res.blocks_per_sm <= 0 ||
            res.reps != 1 || !(res.t_kernel > 0) || strncmp(res.variant, "r", 1) != 0) {
            t_fail(__FILE__, __LINE__,
                   "rung %d, n %zu d %zu: d_padded %zu blocks %llu regs %d blocks/SM %d reps %d "
                   "t %g variant '%s'",
                   id, n, d, res.d_padded, res.blocks, res.regs, res.blocks_per_sm, res.reps,
                   res.t_kernel, res.variant);
            bad = 1;
        }
    }
    free(x);
    return bad;
}

TEST(ladder_rungs_equal_fp64_small)
{
    need_gpu();
    static const size_t shapes[][2] = {{1, 3},     {300, 3},   {257, 70},
                                       {200, 129}, {130, 257}, {128, 64}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        if (check_shape(shapes[k][0], shapes[k][1]))
            return;
}

TEST(ladder_rungs_equal_fp64_ragged)
{
    need_gpu();
    if (small_only())
        t_skip("skipped: LADDER_SMALL");
    static const size_t shapes[][2] = {
        {1000, 3}, {1531, 70}, {1000, 129}, {1531, 257}, {4096, 256}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++)
        if (check_shape(shapes[k][0], shapes[k][1]))
            return;
}

TEST(ladder_check_rejects_broken_rungs_on_the_device)
{
    need_gpu();
    kern_device dv;
    CHECK_MSG(kern_device_info(0, &dv) == 0, "%s", kern_error());
    char why[256];
    kern_ladder_rung r = *kern_ladder_find(9);
    CHECK_EQ_INT(kern_ladder_check(&r, &dv, why, sizeof why), 0);
    r.wm = 48;
    CHECK_EQ_INT(kern_ladder_check(&r, &dv, why, sizeof why), KERN_EINVAL);
    CHECK_STR_CONTAINS(why, "ladder rung 9 (fasted-tiles): warp tile 48x64 does not divide");
    r = *kern_ladder_find(4);
    r.threads = 2048;
    CHECK_EQ_INT(kern_ladder_check(&r, &dv, why, sizeof why), KERN_EINVAL);
    CHECK_STR_CONTAINS(why, "ladder rung 4 (reg-tile): threads a block must be");
    r = *kern_ladder_find(9);
    r.stages = 16; /* 16 x 32 KiB: more than any device's block may have */
    CHECK_EQ_INT(kern_ladder_check(&r, &dv, why, sizeof why), KERN_EINVAL);
    CHECK_STR_CONTAINS(why, "524288 bytes of shared memory a block");
    CHECK_STR_CONTAINS(why, dv.name);
    CHECK(strchr(why, '\n') == NULL);
}

TEST(ladder_cancel_and_bad_rung)
{
    need_gpu();
    float *x = ints(300, 5);
    kern_ladder_result res;
    volatile int stop = 1;
    CHECK_EQ_INT(run_rung(8, x, 300, 5, 20.5, 3, &stop, &res), KERN_ECANCEL);
    stop = 0;
    CHECK_EQ_INT(run_rung(8, x, 300, 5, 20.5, 3, &stop, &res), 0);
    CHECK_EQ_INT(res.reps, 3);
    CHECK_EQ_INT(run_rung(KERN_LADDER_OWN + 1, x, 300, 5, 20.5, 1, NULL, &res), KERN_EINVAL);
    CHECK_STR_CONTAINS(kern_error(), "not one of the own rungs");
    CHECK_EQ_INT(run_rung(0, x, 300, 5, 20.5, 1, NULL, &res), KERN_EINVAL);
    free(x);
}

TEST(ladder_bench)
{
    need_gpu();
    const char *s = getenv("LADDER_BENCH");
    if (!s || !*s || strcmp(s, "0") == 0)
        t_skip("skipped: set LADDER_BENCH=1 for the timings");
    const size_t n = 32768, d = 1024;
    float *x = ints(n, d);
    const double eps2 = eps2_for(d), flop = 2.0 * (double)n * (double)n * (double)d;
    kern_device dv;
    kern_device_info(0, &dv);
    printf("# ladder on %s, n %zu d %zu eps^2 %.1f\n", dv.name, n, d, eps2);
    printf("# %-36s %10s %8s %5s %6s %12s\n", "rung", "ms", "TFLOPS", "regs", "blk/SM", "pairs");
    uint64_t first = 0;
    for (int id = 1; id <= KERN_LADDER_OWN; id++) {
        kern_ladder_result res;
        const int rc = run_rung(id, x, n, d, eps2, id <= 3 ? 1 : 3, NULL, &res);
        CHECK_MSG(rc == 0, "rung %d: %s", id, kern_error());
        printf("# %-36s %10.3f %8.2f %5d %6d %12llu\n", res.variant, res.t_kernel * 1e3,
               flop / res.t_kernel * 1e-12, res.regs, res.blocks_per_sm,
               (unsigned long long)res.pairs);
        fflush(stdout);
        if (id == 1)
            first = res.pairs;
        CHECK_MSG(res.pairs == first, "rung %d: %llu pairs, rung 1 %llu", id,
                  (unsigned long long)res.pairs, (unsigned long long)first);
    }
    free(x);
}
