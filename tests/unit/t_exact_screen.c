/* The exact engine's screen (kernels/exact_refine.cuh): a pair's squared
 * distance summed fast in FP32 (FP64 for FP64 rows) decides the pair
 * wherever exact_screen_range (kernels/exact_bound.h) says fp64's own d2
 * cannot be on the other side of the threshold. This checks the range
 * against fp64's arithmetic computed here independently (direct (a - b)^2
 * in dimension order, no contraction): for every pair of every set, the
 * screen's sum formed in the kernel's shape (exact_screen_shape: V values
 * a load, L lanes, one FMA a term, a butterfly of adds) gives a range
 * [lo, hi] that holds fp64's d2. The sets reach where the bound's terms
 * matter: cancellation (a large common offset), magnitudes from 1e-15 to
 * 1e15 in one row, FP32 and FP64 subnormals (the absolute term), sums that
 * overflow FP32 (no range: the kernel refines those), exact ties at a
 * lattice's eps, duplicates. Long FP64 rows are screened from their FP32
 * copies (exact_screen_range_r): checked the same way. The check can
 * fail: with h = 0 (no rounding allowed for), or the copies' distances
 * left out, fp64's d2 falls outside the range on these sets. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "kernels.h"

/* fp64's arithmetic: the direct form in dimension order. */
static double seq_f32(const float *a, const float *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double v = (double)a[k] - (double)b[k];
        const double t = v * v;
        s = s + t;
    }
    return s;
}
static double seq_f64(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double v = a[k] - b[k];
        const double t = v * v;
        s = s + t;
    }
    return s;
}

/* The screen's sum in the kernel's shape: lane l of L adds loads l, l + L,
 * ... (V values each) with one FMA a value, then lanes meet by xor
 * butterfly (every lane ends with the same sum: a + b == b + a). */
#define SCREEN_SUM(name, T, FMA)                                                                   \
    static T name(const T *a, const T *b, size_t d, int V, int L)                                  \
    {                                                                                              \
        T acc[32];                                                                                 \
        const size_t nv = d / (size_t)V;                                                           \
        for (int l = 0; l < L; l++) {                                                              \
            T s = 0;                                                                               \
            for (size_t v = (size_t)l; v < nv; v += (size_t)L)                                     \
                for (int e = 0; e < V; e++) {                                                      \
                    const T t = a[v * V + e] - b[v * V + e];                                       \
                    s = FMA(t, t, s);                                                              \
                }                                                                                  \
            acc[l] = s;                                                                            \
        }                                                                                          \
        for (int m = L >> 1; m; m >>= 1) {                                                         \
            T nx[32];                                                                              \
            for (int l = 0; l < L; l++)                                                            \
                nx[l] = acc[l] + acc[l ^ m];                                                       \
            for (int l = 0; l < L; l++)                                                            \
                acc[l] = nx[l];                                                                    \
        }                                                                                          \
        return acc[0];                                                                             \
    }
SCREEN_SUM(screen_f32, float, fmaf)
SCREEN_SUM(screen_f64, double, fma)

static uint64_t rng_state;
static double rnd(void) /* [0, 1) */
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * 0x1p-53;
}

enum { SET_UNIFORM, SET_OFFSET, SET_WIDE, SET_TINY, SET_HUGE, SET_LATTICE, SET_DUPS, NSETS };
static const char *const set_name[NSETS] = {"uniform",     "1e4 offset", "1e-15..1e15", "subnormal",
                                            "overflowing", "lattice",    "duplicates"};

/* Value k of row i of set s, for FP32 (f64 = 0) or FP64 rows. */
static double value(int s, size_t i, size_t k, int f64)
{
    switch (s) {
    case SET_UNIFORM:
        return rnd();
    case SET_OFFSET:
        return 1e4 + 0.5 * rnd();
    case SET_WIDE: { /* squares of 1e-15..1e15: normal in FP32 */
        const double m = pow(10.0, -15.0 + 30.0 * rnd());
        return rnd() < 0.5 ? -m : m;
    }
    case SET_TINY: /* subnormal in the rows' own format */
        return (f64 ? 0x1p-1074 : 0x1p-149) * floor(1000.0 * rnd());
    case SET_HUGE: /* squares beyond FP32 (and, for FP64 rows, FP64) */
        return (f64 ? 1e160 : 1e25) * (1.0 + rnd());
    case SET_LATTICE: /* integer points: many pairs exactly at eps^2 = 1, 2, ... */
        return (double)((i + k) % 3);
    default: /* every row twice */
        rng_state = (uint64_t)(i / 2) * 977 + k * 131 + 7;
        return rnd();
    }
}

/* ||x - (double)(float)x||, rounded up, from 64-bit long double sums (not
 * the engine's formula): how far a row's FP32 copy lies from it. */
static double copy_dist(const double *x, const float *xf, size_t d)
{
    long double a = 0;
    for (size_t k = 0; k < d; k++) {
        const long double v = (long double)x[k] - (long double)xf[k];
        a += v * v;
    }
    return nextafter((double)(sqrtl(a) * (1.0L + 0x1p-40L)) + 0x1p-1074, INFINITY);
}

enum { ROWS_F32, ROWS_F64, ROWS_F64_COPY };

/* Every pair of n rows of set s at dimension d: fp64's d2 in the range
 * the screen gives (h_scale = 1: the real bound; 0: none). rows: f32
 * rows summed in FP32, FP64 rows in FP64, or FP64 rows summed from their
 * FP32 copies (exact_screen_range_r with the copies' distances; r_scale
 * 0 leaves those out). Returns pairs outside; *ranged counts the pairs
 * that got a range at all. */
static size_t check_rows(int s, size_t n, size_t d, int rows, double h_scale, double r_scale,
                         size_t *ranged)
{
    const int f64 = rows != ROWS_F32, sum64 = rows == ROWS_F64;
    int V, L;
    double h;
    exact_screen_shape(d, sum64 ? 8 : 4, &V, &L, &h);
    h *= h_scale;
    const double u = sum64 ? 0x1p-53 : 0x1p-24, tiny = sum64 ? 0x1p-1074 : 0x1p-149;
    float *xf = malloc(n * d * sizeof(float));
    double *xd = malloc(n * d * sizeof(double)), *rc = malloc(n * sizeof(double));
    rng_state = 12345 + (uint64_t)s * 1000 + d;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < d; k++) {
            const double v = value(s, i, k, f64);
            xf[i * d + k] = (float)v;
            xd[i * d + k] = v;
        }
        rc[i] = copy_dist(xd + i * d, xf + i * d, d) * r_scale;
    }
    size_t bad = 0;
    *ranged = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++) {
            double seq, scr;
            if (f64) {
                seq = seq_f64(xd + i * d, xd + j * d, d);
                scr = sum64 ? screen_f64(xd + i * d, xd + j * d, d, V, L)
                            : screen_f32(xf + i * d, xf + j * d, d, V, L);
            } else {
                seq = seq_f32(xf + i * d, xf + j * d, d);
                scr = screen_f32(xf + i * d, xf + j * d, d, V, L);
            }
            if (!isfinite(scr))
                continue; /* the kernel decides nothing from it */
            double lo, hi;
            if (rows == ROWS_F64_COPY) /* as the kernel sums the two */
                exact_screen_range_r(scr, u, h, tiny, d, (rc[i] + rc[j]) * (1.0 + 0x1p-51), &lo,
                                     &hi);
            else
                exact_screen_range(scr, u, h, tiny, d, &lo, &hi);
            (*ranged)++;
            if (!(lo <= seq && seq <= hi))
                bad++;
        }
    free(xf);
    free(xd);
    free(rc);
    return bad;
}

static size_t check_set(int s, size_t n, size_t d, int f64, double h_scale, size_t *ranged)
{
    return check_rows(s, n, d, f64 ? ROWS_F64 : ROWS_F32, h_scale, 1.0, ranged);
}

static const size_t dims[] = {1, 3, 4, 9, 16, 33, 128, 784};

static void check_all(int f64)
{
    for (int s = 0; s < NSETS; s++)
        for (size_t q = 0; q < sizeof dims / sizeof dims[0]; q++) {
            const size_t d = dims[q], n = d >= 128 ? 48 : 96;
            size_t ranged = 0;
            const size_t bad = check_set(s, n, d, f64, 1.0, &ranged);
            CHECK_MSG(
                bad == 0,
                "%s rows, %s, d = %zu: fp64's d2 outside the screen's range for %zu of %zu pairs",
                f64 ? "FP64" : "FP32", set_name[s], d, bad, ranged);
            /* Only sums past the format's range go without one. */
            CHECK_MSG(s == SET_HUGE || ranged == n * (n + 1) / 2,
                      "%s, d = %zu: %zu of %zu pairs ranged", set_name[s], d, ranged,
                      n * (n + 1) / 2);
        }
}

TEST(range_holds_fp64_d2_f32_rows)
{
    check_all(0);
}

TEST(range_holds_fp64_d2_f64_rows)
{
    check_all(1);
}

/* Long FP64 rows screened from their FP32 copies (kernels/exact.cu,
 * exact_copy_f32_kernel): the sum is of other rows, and the range widened
 * by their distances from the data's still holds fp64's d2, on every set
 * (values beyond FP32 copy to Inf and get no range). */
TEST(range_holds_fp64_d2_from_f32_copies)
{
    for (int s = 0; s < NSETS; s++)
        for (size_t q = 0; q < sizeof dims / sizeof dims[0]; q++) {
            const size_t d = dims[q], n = d >= 128 ? 48 : 96;
            size_t ranged = 0;
            const size_t bad = check_rows(s, n, d, ROWS_F64_COPY, 1.0, 1.0, &ranged);
            CHECK_MSG(bad == 0,
                      "FP64 rows from FP32 copies, %s, d = %zu: fp64's d2 outside the range for "
                      "%zu of %zu pairs",
                      set_name[s], d, bad, ranged);
            CHECK_MSG(s == SET_HUGE || ranged == n * (n + 1) / 2,
                      "%s, d = %zu: %zu of %zu pairs ranged", set_name[s], d, ranged,
                      n * (n + 1) / 2);
        }
    size_t ranged = 0;
    CHECK(check_rows(SET_UNIFORM, 24, 4096, ROWS_F64_COPY, 1.0, 1.0, &ranged) == 0 &&
          ranged == 300);
    /* Without the copies' distances the range misses fp64's d2 where the
     * copies' rounding outweighs the sum's (a large common offset: FP32
     * keeps 1e4 + x to some 6e-4): the term is what makes it hold. */
    CHECK(check_rows(SET_OFFSET, 48, 128, ROWS_F64_COPY, 1.0, 0.0, &ranged) > 0);
    CHECK(check_rows(SET_OFFSET, 48, 16, ROWS_F64_COPY, 1.0, 0.0, &ranged) > 0);
}

/* The copies' term keeps the range narrow: FP32's rounding of uniform
 * values moves d2 by some 2^-23 relative, where the band is 2^-10. */
TEST(range_from_copies_is_narrow)
{
    int V, L;
    double h, lo, hi;
    exact_screen_shape(4096, 4, &V, &L, &h);
    /* d2 = 642 (uniform d = 4096 at S ~ 72), rows of norm
     * ~18.5 each rounded by at most 2^-24 of it */
    const double r = 2.0 * 18.5 * 0x1p-24;
    exact_screen_range_r(642.0, 0x1p-24, h, 0x1p-149, 4096, r, &lo, &hi);
    CHECK_MSG(hi - 642.0 < 642.0 * 0x1p-14 && 642.0 - lo < 642.0 * 0x1p-14, "range [%.17g, %.17g]",
              lo, hi);
}

/* At d = 4096 (the widest setting) too, aligned and not. */
TEST(range_holds_at_d4096)
{
    size_t ranged = 0;
    CHECK(check_set(SET_OFFSET, 24, 4096, 0, 1.0, &ranged) == 0 && ranged == 300);
    CHECK(check_set(SET_WIDE, 24, 4095, 0, 1.0, &ranged) == 0 && ranged == 300);
    CHECK(check_set(SET_UNIFORM, 24, 4096, 1, 1.0, &ranged) == 0 && ranged == 300);
}

/* The check sees a bound that is too small: with no rounding allowed for,
 * fp64's d2 leaves the range on sets where FP32 rounds (not the offset
 * set: its differences and squares are exact in FP32). */
TEST(range_without_rounding_fails)
{
    size_t ranged = 0;
    CHECK(check_set(SET_UNIFORM, 48, 128, 0, 0.0, &ranged) > 0);
    CHECK(check_set(SET_WIDE, 48, 9, 0, 0.0, &ranged) > 0);
    CHECK(check_set(SET_WIDE, 48, 33, 0, 0.0, &ranged) > 0);
}

/* The range is narrow enough to decide the band: at f32 rows, d = 784
 * (32 lanes, 16-byte loads: h = 7 * 4 + 7 = 35), a few 2^-24 relative,
 * where the FP16 pass's band is about 2^-8 of eps^2 wide. */
TEST(range_is_narrow)
{
    int V, L;
    double h, lo, hi;
    exact_screen_shape(784, 4, &V, &L, &h);
    CHECK_EQ_INT(V, 4);
    CHECK_EQ_INT(L, 32);
    CHECK(h == 35);
    exact_screen_range(1.0, 0x1p-24, h, 0x1p-149, 784, &lo, &hi);
    CHECK_MSG(hi - 1.0 < 40 * 0x1p-24 && 1.0 - lo < 40 * 0x1p-24, "range [%.17g, %.17g]", lo, hi);
    /* Unaligned rows take one value a load; short rows fewer lanes. */
    exact_screen_shape(9, 4, &V, &L, &h);
    CHECK(V == 1 && L == 16 && h == 1 + 4 + 2);
    exact_screen_shape(3, 8, &V, &L, &h);
    CHECK(V == 1 && L == 4 && h == 1 + 2 + 2);
    exact_screen_shape(128, 1, &V, &L, &h);
    CHECK(V == 16 && L == 8 && h == 16 + 3 + 2);
}
