/* How a dataset fits the precision lab's formats (src/fmt_fit.c, `info`):
 * data built so that every count is known by construction. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "dataset.h"
#include "err.h"
#include "fmt_fit.h"

static dataset make_ds(const double *v, size_t n)
{
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.name = xstrdup("fit");
    ds.n = n;
    ds.d = 1;
    ds.v = xmalloc(n * sizeof(double));
    memcpy(((double *)ds.v), v, n * sizeof(double));
    return ds;
}

static const fmt_fit_format *find(const char *name)
{
    for (const fmt_fit_format *f = fmt_fit_formats; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

TEST(counts_by_construction)
{
    /* 70000 overflows FP16; 1e-8 underflows it (2^-24 ~ 5.96e-8); -3 is
     * refused by the unsigned formats; 600 overflows ue4m4 (496). */
    const double v[] = {0, 1, -3, 600, 70000, 1e-8, 0x1p-24, 0.5};
    dataset ds = make_ds(v, sizeof v / sizeof *v);
    fmt_fit f;
    fmt_fit_compute(&ds, find("fp16"), &f);
    CHECK(f.overflow == 1 && f.underflow == 1 && f.negative == 0 && f.scale == 0);
    fmt_fit_compute(&ds, find("ue4m4"), &f);
    /* 600 and 70000 beyond 496; 1e-8 and 2^-24 below 2^-10; -3 refused */
    CHECK(f.overflow == 2 && f.underflow == 2 && f.negative == 1);
    fmt_fit_compute(&ds, find("ue5m3"), &f);
    CHECK(f.overflow == 1 && f.underflow == 2 && f.negative == 1);
    /* FP8 E4M3 scales 70000 under 448: 70000 2^-8 = 273.4, 2^-7 would be 546.9 */
    fmt_fit_compute(&ds, find("fp8-e4m3"), &f);
    CHECK_EQ_INT(f.scale, -8);
    CHECK(f.overflow == 0);
    /* after 2^-8: 1e-8, 2^-24, 1 (2^-8 >= 2^-9 stays) -> 1e-8 and 2^-24 vanish */
    CHECK_EQ_INT(f.underflow, 2);
    fmt_fit_compute(&ds, find("fp8-e5m2"), &f);
    CHECK_EQ_INT(f.scale, -1); /* 35000 <= 57344 < 70000 */
    CHECK(f.overflow == 0 && f.underflow == 2);
    dataset_free(&ds);
}

TEST(scale_is_the_largest_that_fits)
{
    /* the largest |v| lands exactly on the format's largest value */
    const double v[] = {448.0 / 16, 1};
    dataset ds = make_ds(v, 2);
    fmt_fit f;
    fmt_fit_compute(&ds, find("fp8-e4m3"), &f);
    CHECK_EQ_INT(f.scale, 4);
    CHECK(f.overflow == 0);
    dataset_free(&ds);
}

TEST(int8_exactness)
{
    size_t nonint;
    double lo, hi;
    const double u[] = {0, 17, 255, 3};
    dataset ds = make_ds(u, 4);
    CHECK_EQ_INT(fmt_fit_int8(&ds, &nonint, &lo, &hi), FMT_INT8_U8);
    dataset_free(&ds);
    const double s8[] = {-128, 0, 127};
    ds = make_ds(s8, 3);
    CHECK_EQ_INT(fmt_fit_int8(&ds, &nonint, &lo, &hi), FMT_INT8_S8);
    dataset_free(&ds);
    const double no[] = {-1, 200, 0.5};
    ds = make_ds(no, 3);
    CHECK_EQ_INT(fmt_fit_int8(&ds, &nonint, &lo, &hi), FMT_INT8_NO);
    CHECK(nonint == 1 && lo == -1 && hi == 200);
    dataset_free(&ds);
    const double wide[] = {-1, 200};
    ds = make_ds(wide, 2);
    CHECK_EQ_INT(fmt_fit_int8(&ds, &nonint, &lo, &hi), FMT_INT8_NO);
    CHECK(nonint == 0);
    dataset_free(&ds);
}

/* Large enough for the threaded scan (src/par.c): counts planted at known
 * places in every range, the largest value in the last one, and the fit
 * of the centred values (fmt_fit_engine) against a serial count here. */
TEST(threaded_scan_counts_every_range)
{
    const size_t n = (size_t)3 << 20;
    dataset ds;
    memset(&ds, 0, sizeof ds);
    ds.name = xstrdup("big");
    ds.n = n / 4;
    ds.d = 4;
    ds.v = xmalloc(n * sizeof(double));
    for (size_t k = 0; k < n; k++)
        ((double *)ds.v)[k] = 1.0 + (double)(k % 97) / 97.0;
    size_t tiny = 0;
    for (size_t k = 5; k < n; k += 100003, tiny++)
        ((double *)ds.v)[k] = 0x1p-40; /* below e4m3's smallest subnormal after any scale here */
    ((double *)ds.v)[n - 3] = 300.0;   /* the largest: e4m3 scale 2^0 */
    ds.hash = dataset_hash(&ds);
    const fmt_fit_format *f = fmt_fit_find("fp8-e4m3");
    CHECK(f != NULL);
    fmt_fit fit;
    fmt_fit_compute(&ds, f, &fit);
    CHECK_EQ_INT(fit.scale, 0);
    CHECK_EQ_INT(fit.underflow, tiny);
    CHECK_EQ_INT(fit.overflow, 0);
    /* Centred by a vector: the same counts a serial loop gives. */
    double c[4] = {1.0, -2.0, 0.5, 0.0};
    fmt_fit_engine(&ds, c, f, &fit);
    double m = 0;
    for (size_t k = 0; k < n; k++)
        m = fmax(m, fabs(((double *)ds.v)[k] - c[k % 4]));
    int s = 0;
    while (ldexp(m, s) > f->max)
        s--;
    while (ldexp(m, s + 1) <= f->max)
        s++;
    size_t under = 0;
    for (size_t k = 0; k < n; k++) {
        const double a = fabs(ldexp(((double *)ds.v)[k] - c[k % 4], s));
        under += a > 0 && a < f->min_sub;
    }
    CHECK_EQ_INT(fit.scale, s);
    CHECK_EQ_INT(fit.underflow, under);
    dataset_free(&ds);
}
