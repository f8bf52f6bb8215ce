/* `info` facts and the content hash on hand-built datasets. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "par.h"
#include "dataset.h"
#include "err.h"

TEST(info_counts_by_hand)
{
    /* rows: (0,1) (70000,-1e-9) (0,1) (1e-6,-3) (-0,1) (2^-14,65504)
     * duplicates: row 2 and row 4 (-0 == 0) equal row 0 -> 2
     * overflow: 70000 -> 1; underflow: 1e-9 < 2^-24 -> 1;
     * subnormal: 1e-6 in [2^-24, 2^-14) -> 1 (2^-14 itself is normal, 65504 fits) */
    double x[12] = {0, 1, 70000, -1e-9, 0, 1, 1e-6, -3, -0.0, 1, ldexp(1, -14), 65504};
    dataset ds = {.n = 6, .d = 2, .v = x};
    dataset_info in;
    dataset_info_compute(&ds, &in);
    CHECK(in.min == -3);
    CHECK(in.max == 70000);
    CHECK(in.absmax == 70000);
    CHECK_EQ_INT(in.fp16_overflow, 1);
    CHECK_EQ_INT(in.fp16_underflow, 1);
    CHECK_EQ_INT(in.fp16_subnormal, 1);
    CHECK_EQ_INT(in.duplicates, 2);
    CHECK(in.max_norm2 == 70000.0 * 70000.0 + 1e-18);
}

TEST(info_negative_range_no_duplicates)
{
    double x[6] = {-5, -4, -3, -2, -1, -0.5};
    dataset ds = {.n = 3, .d = 2, .v = x};
    dataset_info in;
    dataset_info_compute(&ds, &in);
    CHECK(in.min == -5 && in.max == -0.5 && in.absmax == 5);
    CHECK_EQ_INT(in.duplicates, 0);
    CHECK_EQ_INT(in.fp16_overflow + in.fp16_underflow + in.fp16_subnormal, 0);
    CHECK(in.max_norm2 == 41);
}

TEST(info_many_duplicates)
{
    /* 1000 points cycling through 7 distinct ones: 993 duplicates */
    static double x[1000 * 3];
    for (int i = 0; i < 1000; i++)
        for (int j = 0; j < 3; j++)
            x[i * 3 + j] = (i % 7) * 0.5 + j;
    dataset ds = {.n = 1000, .d = 3, .v = x};
    dataset_info in;
    dataset_info_compute(&ds, &in);
    CHECK_EQ_INT(in.duplicates, 993);
}

/* docs/DATASETS.md's content hash written out from its words, one value
 * at a time with no chunk buffers or threads: the program's, whatever
 * its split, must equal it. */
static uint64_t ref_rotl(uint64_t x, int r)
{
    return (x << r) | (x >> (64 - r));
}
static uint64_t ref_final(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t ref_fold(uint64_t h, uint64_t x)
{
    return ref_rotl(h ^ ref_final(x), 27) * 0x165667b19e3779f9ULL + 0x9e3779b97f4a7c15ULL;
}
static uint64_t ref_hash(const double *v, size_t n, size_t d)
{
    const uint64_t k1 = 0x9e3779b97f4a7c15ULL, k2 = 0xc2b2ae3d27d4eb4fULL,
                   k3 = 0x165667b19e3779f9ULL;
    uint64_t h = ref_fold(ref_fold(k3, n), d);
    const size_t all = n * d, chunk = 65536;
    for (size_t c0 = 0; c0 < all; c0 += chunk) {
        const size_t m = all - c0 < chunk ? all - c0 : chunk;
        uint64_t lane[4] = {k1, k2, k3, k1 ^ k2};
        for (size_t k = 0; k < m; k++) {
            uint64_t b;
            memcpy(&b, &v[c0 + k], 8);
            lane[k % 4] = ref_rotl(lane[k % 4] ^ (b * k2), 31) * k1;
        }
        uint64_t ch = m;
        for (int t = 0; t < 4; t++)
            ch = ref_rotl(ch ^ ref_final(lane[t]), 27) * k3;
        h = ref_fold(h, ch);
    }
    return ref_final(h);
}

TEST(hash_by_its_definition)
{
    double x[6] = {1.0, 2.0, 3.0, 4.5, -0.25, 1e300};
    dataset ds = {.n = 3, .d = 2, .v = x};
    CHECK(dataset_hash(&ds) == ref_hash(x, 3, 2));
    dataset e = {.n = 0, .d = 0, .v = NULL};
    CHECK(dataset_hash(&e) == ref_hash(NULL, 0, 0));
    /* shape matters, not only the values */
    dataset t = {.n = 2, .d = 3, .v = x};
    CHECK(dataset_hash(&t) != dataset_hash(&ds));
    /* several chunks and a tail, on one thread and split over many: the
     * same; f32 values and the same values as f64 hash alike; one value
     * or two rows' order changed, another hash */
    enum { R = 70001, C = 3 };
    double *v = malloc(sizeof(double) * R * C);
    float *f = malloc(sizeof(float) * R * C);
    uint64_t st = 11;
    for (size_t k = 0; k < (size_t)R * C; k++) {
        f[k] = (float)(t_unit(&st) * 100 - 50);
        v[k] = f[k];
    }
    const uint64_t want = ref_hash(v, R, C);
    dataset big = {.n = R, .d = C, .v = v};
    dataset big32 = {.n = R, .d = C, .type = DTYPE_F32, .v = f};
    CHECK(dataset_hash(&big) == want);
    par_for_tests(1);
    CHECK(dataset_hash(&big) == want && dataset_hash(&big32) == want);
    par_for_tests(0);
    v[R * C - 1] += 1e-9;
    CHECK(dataset_hash(&big) != want && dataset_hash(&big) == ref_hash(v, R, C));
    v[R * C - 1] = f[R * C - 1];
    for (int k = 0; k < C; k++) {
        double u = v[k];
        v[k] = v[C + k];
        v[C + k] = u;
    }
    CHECK(dataset_hash(&big) != want);
    free(v);
    free(f);
}

TEST(info_on_shared_datasets)
{
    /* python3: letter's 16 integer features in 0..15, 1332 rows repeat an
     * earlier row, largest squared norm 1524; KITTI's values, norms (summed
     * left to right in double) and no duplicates */
    load_opts o;
    load_opts_init(&o);
    o.cols = "-0";
    dataset ds;
    dataset_info in;
    CHECK_MSG(dataset_load(t_dataset("letter.csv"), &o, &ds) == 0, "%s", err_msg());
    dataset_info_compute(&ds, &in);
    CHECK(in.min == 0 && in.max == 15 && in.absmax == 15);
    CHECK_EQ_INT(in.duplicates, 1332);
    CHECK(in.max_norm2 == 1524);
    dataset_free(&ds);
    load_opts_init(&o);
    o.dim = 4;
    CHECK_MSG(dataset_load(t_dataset("kitti_000000_xyzr.f32"), &o, &ds) == 0, "%s", err_msg());
    dataset_info_compute(&ds, &in);
    CHECK(in.min == -16.132999420166016 && in.max == 73.03900146484375);
    CHECK(in.absmax == 73.03900146484375);
    CHECK(in.max_norm2 == 5541.423212704337);
    CHECK_EQ_INT(in.duplicates, 0);
    CHECK_EQ_INT(in.fp16_overflow + in.fp16_underflow + in.fp16_subnormal, 0);
    dataset_free(&ds);
}
