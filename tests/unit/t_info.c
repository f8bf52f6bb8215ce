/* `info` facts and the content hash on hand-built datasets. */
#include <stdint.h>

#include "check.h"
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

TEST(hash_is_fnv1a)
{
    /* python3: FNV-1a 64 over struct.pack('<QQ', n, d) + the '<d' values */
    double x[6] = {1.0, 2.0, 3.0, 4.5, -0.25, 1e300};
    dataset ds = {.n = 3, .d = 2, .v = x};
    CHECK(dataset_hash(&ds) == 0x20060221c5285de0ULL);
    dataset e = {.n = 0, .d = 0, .v = NULL};
    CHECK(dataset_hash(&e) == 0x88201fb960ff6465ULL);
    /* shape matters, not only the values */
    dataset t = {.n = 2, .d = 3, .v = x};
    CHECK(dataset_hash(&t) != dataset_hash(&ds));
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
