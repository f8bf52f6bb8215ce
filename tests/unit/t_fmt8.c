/* The unsigned 8-bit formats (src/fmt8.h) bit for bit over all 256 codes,
 * against an independent decoding written here from the format's
 * definition (fields and powers of two, no FP16 or fmt_round): each code's
 * value, that rounding it gives it back, that values are ordered, that the
 * midpoint of two neighbours rounds to the even code, overflow (ue5m3:
 * Inf; ue4m4: 496), the truncating conversion from FP16, and that the
 * cpu-ue* engines refuse negative data with one line. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "fmt8.h"
#include "fp16.h"

/* ue5m3: exponent field e (5 bits, bias 15), mantissa m (3 bits). */
static double ref_ue5m3(int c)
{
    int e = c >> 3, m = c & 7;
    if (e == 31)
        return m ? NAN : INFINITY;
    if (e == 0)
        return m * pow(2, -14) / 8;
    return (1 + m / 8.0) * pow(2, e - 15);
}

/* ue4m4: exponent field e (4 bits, bias 7), mantissa m (4 bits), no Inf. */
static double ref_ue4m4(int c)
{
    int e = c >> 4, m = c & 15;
    if (e == 0)
        return m * pow(2, -6) / 16;
    return (1 + m / 16.0) * pow(2, e - 7);
}

/* A few anchors of the formats as docs/FORMATS.md lists them. */
TEST(anchors)
{
    CHECK(ref_ue5m3(0x3c << 1) == 1.0); /* 1.0 = FP16 0x3c00 >> 7 = 0x78 */
    CHECK(ue5m3_decode(0x78) == 1.0f);
    CHECK(ue5m3_decode(0xf7) == 61440.0f);
    CHECK(isinf(ue5m3_decode(0xf8)));
    CHECK(ue5m3_decode(0x01) == 0x1p-17f);
    CHECK(ue4m4_decode(0x70) == 1.0f);
    CHECK(ue4m4_decode(0xff) == 496.0f);
    CHECK(ue4m4_decode(0x01) == 0x1p-10f);
    CHECK(ue4m4_decode(0x10) == 0x1p-6f);
}

typedef struct fmt8 {
    const char *name;
    double (*ref)(int);
    float (*round)(double);
    uint8_t (*bits)(double);
    float (*decode)(uint8_t);
    int ncodes;  /* finite codes, from 0 */
    double over; /* what rounding past the largest value gives */
} fmt8;

static const fmt8 fmts[] = {
    {"ue5m3", ref_ue5m3, ue5m3_round, ue5m3_bits, ue5m3_decode, 0xf8, INFINITY},
    {"ue4m4", ref_ue4m4, ue4m4_round, ue4m4_bits, ue4m4_decode, 0x100, UE4M4_MAX},
};

TEST(every_code)
{
    for (size_t f = 0; f < sizeof fmts / sizeof *fmts; f++) {
        const fmt8 *F = &fmts[f];
        for (int c = 0; c < 256; c++) {
            double v = F->ref(c);
            float dv = F->decode((uint8_t)c);
            if (isnan(v)) {
                CHECK_MSG(isnan(dv), "%s code %#x: NaN expected, got %g", F->name, c, dv);
                continue;
            }
            CHECK_MSG((double)dv == v, "%s code %#x: %.9g, expected %.9g", F->name, c, dv, v);
            if (c >= F->ncodes)
                continue;
            CHECK_MSG((double)F->round(v) == v, "%s code %#x does not round to itself", F->name, c);
            CHECK_MSG(F->bits(v) == c, "%s: bits(%g) = %#x, expected %#x", F->name, v, F->bits(v),
                      c);
            if (c + 1 < F->ncodes) {
                double w = F->ref(c + 1);
                CHECK_MSG(w > v, "%s: codes %#x and %#x out of order", F->name, c, c + 1);
                /* the midpoint rounds to the even code; just off it, to the nearer */
                double mid = (v + w) / 2;
                int even = (c & 1) ? c + 1 : c;
                CHECK_MSG(F->bits(mid) == even, "%s: the midpoint of %#x and %#x gave %#x", F->name,
                          c, c + 1, F->bits(mid));
                CHECK(F->bits(nextafter(mid, 0)) == c);
                CHECK(F->bits(nextafter(mid, INFINITY)) == c + 1);
            }
        }
        /* past the largest value */
        double top = F->ref(F->ncodes - 1), step = top - F->ref(F->ncodes - 2);
        CHECK((double)F->round(top + step / 4) == top);
        CHECK((double)F->round(top + step) == F->over);
        CHECK(isnan(F->round(-1.0)));
    }
}

TEST(ue5m3_truncates_from_fp16)
{
    /* every non-negative finite FP16 value: the shift keeps its top bits,
     * so the result is the largest ue5m3 value at or below it */
    for (uint32_t h = 0; h < 0x7c00; h++) {
        uint8_t c = ue5m3_from_fp16_trunc((uint16_t)h);
        double v = fp16_to_float((uint16_t)h), t = ref_ue5m3(c);
        CHECK_MSG(t <= v && (c == 0xf7 || ref_ue5m3(c + 1) > v), "fp16 %#x: code %#x", h, c);
    }
}

TEST(negative_data_refused)
{
    dataset ds = {0};
    ds.name = xstrdup("signed");
    ds.n = 4;
    ds.d = 2;
    ds.v = xcalloc(8, sizeof(double));
    ((double *)ds.v)[5] = -0.5;
    ds.hash = dataset_hash(&ds);
    const char *names[] = {"cpu-ue5m3", "cpu-ue4m4"};
    for (int k = 0; k < 2; k++) {
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.eps = 1;
        s.q1 = ds.n;
        join_result res;
        int rc = engine_run(engine_find(names[k]), &s, &res);
        CHECK_EQ_INT(rc, TCJ_EINVAL);
        CHECK_MSG(strstr(err_msg(), "negative") && strstr(err_msg(), "row 2") &&
                      !strchr(err_msg(), '\n'),
                  "%s", err_msg());
    }
    ((double *)ds.v)[5] = 0.5;
    ds.hash = dataset_hash(&ds);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = 1;
    s.q1 = ds.n;
    join_result res;
    CHECK_MSG(engine_run(engine_find("cpu-ue4m4"), &s, &res) == 0, "%s", err_msg());
    dataset_free(&ds);
}

typedef struct shift_pairs {
    size_t k;
    uint64_t key[4096];
    double d2[4096];
} shift_pairs;

static int shift_put(void *ctx, const pair_batch *b)
{
    shift_pairs *p = ctx;
    for (size_t t = 0; t < b->k && p->k < 4096; t++, p->k++) {
        p->key[p->k] = (uint64_t)b->i[t] << 32 | b->j[t];
        p->d2[p->k] = b->d2[t];
    }
    return 0;
}

static void shift_sort(shift_pairs *p)
{
    for (size_t x = 1; x < p->k; x++)
        for (size_t y = x; y > 0 && p->key[y - 1] > p->key[y]; y--) {
            uint64_t tk = p->key[y];
            double td = p->d2[y];
            p->key[y] = p->key[y - 1];
            p->d2[y] = p->d2[y - 1];
            p->key[y - 1] = tk;
            p->d2[y - 1] = td;
        }
}

/* `set shift on`: the unsigned formats translate each column by its
 * minimum, exactly what translating the data by hand gives (the same
 * rounded values, so the same pairs with d2 bit for bit); the run records
 * shifted 1, and without shift the same data are refused. */
TEST(shift_equals_shifted_by_hand)
{
    const size_t n = 60, d = 5;
    dataset ds = {0}, hand = {0};
    ds.name = xstrdup("signed");
    hand.name = xstrdup("by hand");
    ds.n = hand.n = n;
    ds.d = hand.d = d;
    ds.v = xcalloc(n * d, sizeof(double));
    hand.v = xcalloc(n * d, sizeof(double));
    for (size_t i = 0; i < n * d; i++)
        ((double *)ds.v)[i] = sin(0.37 * (double)i) * (1.0 + (double)(i % d)) - 0.6;
    for (size_t k = 0; k < d; k++) {
        double m = INFINITY;
        for (size_t i = 0; i < n; i++)
            m = fmin(m, ((double *)ds.v)[i * d + k]);
        for (size_t i = 0; i < n; i++)
            ((double *)hand.v)[i * d + k] = ((double *)ds.v)[i * d + k] - m;
    }
    ds.hash = dataset_hash(&ds);
    hand.hash = dataset_hash(&hand);
    const char *names[] = {"cpu-ue5m3", "cpu-ue4m4"};
    for (int k = 0; k < 2; k++) {
        engine_opts o;
        engine_opts_default(&o);
        static shift_pairs a, b;
        a.k = b.k = 0;
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.eps = 1.5;
        s.q1 = n;
        s.mode = JOIN_PAIRS;
        s.opts = &o;
        s.sink = (pair_sink){shift_put, &a};
        join_result ra, rb;
        CHECK_EQ_INT(engine_run(engine_find(names[k]), &s, &ra), TCJ_EINVAL);
        o.shift = 1;
        CHECK_MSG(engine_run(engine_find(names[k]), &s, &ra) == 0, "%s", err_msg());
        int shifted = -1;
        for (int m = 0; m < ra.nmetric; m++)
            if (strcmp(ra.metric[m].name, "shifted") == 0)
                shifted = (int)ra.metric[m].value;
        CHECK_EQ_INT(shifted, 1);
        o.shift = 0;
        s.ds = &hand;
        s.sink = (pair_sink){shift_put, &b};
        CHECK_MSG(engine_run(engine_find(names[k]), &s, &rb) == 0, "%s", err_msg());
        CHECK(a.k > n && a.k < 4096);
        CHECK_EQ_INT(a.k, b.k);
        /* Threads emit blocks in any order: compare sorted. */
        shift_sort(&a);
        shift_sort(&b);
        CHECK(memcmp(a.key, b.key, a.k * sizeof *a.key) == 0);
        CHECK(memcmp(a.d2, b.d2, a.k * sizeof *a.d2) == 0);
    }
    dataset_free(&ds);
    dataset_free(&hand);
}
