/* sort_f64 against qsort with a comparison of values: random doubles over
 * twenty decades of both signs, zeros of both signs, infinities, runs of
 * repeats; a set where every key shares its high digits (skipped passes);
 * one and two values. Equal as values (-0.0 and +0.0 compare equal). Each
 * at a size sorted on one thread and at one whose passes are split over
 * par_for's ranges (above 2^18 values), the stable order too. */
#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sort_f64.h"

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static uint64_t rng = 7;
static double unit(void)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng >> 11) * 0x1p-53;
}

static void check_sorted(double *a, size_t n, const char *what)
{
    double *b = malloc(n * sizeof *b);
    memcpy(b, a, n * sizeof *b);
    sort_f64(a, n);
    qsort(b, n, sizeof *b, cmp_dbl);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !(a[i] == b[i]);
    CHECK_MSG(bad == 0, "%s: %zu of %zu differ", what, bad, n);
    free(b);
}

static void sorts_at(size_t n)
{
    double *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        double v = (unit() - 0.3) * pow(10, floor(unit() * 20) - 10);
        if (i % 97 == 0)
            v = 0.0;
        if (i % 101 == 0)
            v = -0.0;
        if (i % 1009 == 0)
            v = (i / 1009) % 2 ? INFINITY : -INFINITY;
        if (i % 7 == 0 && i > 0)
            v = a[i / 2];
        a[i] = v;
    }
    check_sorted(a, n, "mixed");
    for (size_t i = 0; i < n; i++) /* keys alike in their high 48 bits */
        a[i] = 1.0 + (double)(i * 7919 % n) * 0x1p-52;
    check_sorted(a, n, "one binade");
    free(a);
}

TEST(sort_f64_equals_qsort)
{
    sorts_at(100000);
    sorts_at(600000);
    double two[2] = {2.5, -1.0};
    sort_f64(two, 2);
    CHECK(two[0] == -1.0 && two[1] == 2.5);
    double one[1] = {3.0};
    sort_f64(one, 1);
    CHECK(one[0] == 3.0);
}

/* sort_f64_order against an insertion-stable reference: qsort of (value,
 * index) pairs by value then index gives the stable order exactly. */
typedef struct vi {
    double v;
    uint32_t i;
} vi;

static int cmp_vi(const void *a, const void *b)
{
    const vi *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static void order_at(size_t n)
{
    double *a = malloc(n * sizeof *a);
    for (size_t i = 0; i < n; i++)
        a[i] = i % 5 == 0 ? (double)(i % 17) : (unit() - 0.5) * pow(10, floor(unit() * 12) - 6);
    uint32_t *ord = malloc(n * sizeof *ord);
    sort_f64_order(a, n, ord);
    vi *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        r[i] = (vi){a[i], (uint32_t)i};
    qsort(r, n, sizeof *r, cmp_vi);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += ord[i] != r[i].i;
    CHECK_MSG(bad == 0, "%zu of %zu indices differ", bad, n);
    uint32_t one;
    sort_f64_order(a, 1, &one);
    CHECK(one == 0);
    free(r);
    free(ord);
    free(a);
}

TEST(sort_f64_order_is_the_stable_order)
{
    order_at(50000);
    order_at(400000);
}
