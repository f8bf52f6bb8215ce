/* Loaders: the shared datasets (shapes and values checked against an
 * independent read with python3's struct/float, see the numbers below) and
 * crafted good and bad files written into t_tmpdir(). */
#include <errno.h>
#include <hdf5.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "dataset.h"
#include "err.h"
#include "load_util.h"
#include "mem.h"

static const char *wtext(const char *name, const char *text)
{
    return t_write(name, text, strlen(text));
}

/* 1 when values [k0, k0 + m) of ds are want's, compared as FP64. */
static int values_are(const dataset *ds, size_t k0, const double *want, size_t m)
{
    for (size_t k = 0; k < m; k++)
        if (dataset_value(ds, k0 + k) != want[k])
            return 0;
    return 1;
}

/* 1 when the first m values of a and b are equal as FP64, whatever their types. */
static int same_values(const dataset *a, size_t k0, const dataset *b, size_t m)
{
    for (size_t k = 0; k < m; k++)
        if (dataset_value(a, k0 + k) != dataset_value(b, k0 + k))
            return 0;
    return 1;
}

static double sum_all(const dataset *ds)
{
    double s = 0;
    for (size_t i = 0; i < ds->n * ds->d; i++)
        s += dataset_value(ds, i);
    return s;
}

/* little byte writers for crafted binary files */
typedef struct buf {
    unsigned char b[65536];
    size_t n;
} buf;

static void put(buf *b, const void *p, size_t k)
{
    memcpy(b->b + b->n, p, k);
    b->n += k;
}

static void put_i32(buf *b, int32_t v)
{
    put(b, &v, 4);
}

static void put_f32(buf *b, float v)
{
    put(b, &v, 4);
}

static void put_be(buf *b, uint64_t v, int k)
{
    for (int i = k - 1; i >= 0; i--)
        b->b[b->n++] = (unsigned char)(v >> (8 * i));
}

/* ---- the shared datasets ---- */

TEST(sift_fvecs)
{
    dataset ds;
    int rc = dataset_load(t_dataset("sift5k.fvecs"), NULL, &ds);
    CHECK_MSG(rc == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 5000);
    CHECK_EQ_INT(ds.d, 128);
    CHECK(!strcmp(ds.format, "fvecs"));
    CHECK(!strcmp(ds.name, "sift5k.fvecs"));
    CHECK(ds.path && ds.path[0] == '/');
    /* python3: row 0 starts 8 zeros then 13, 10; row 4999 starts 36, 9, 15 */
    CHECK(dataset_value(&ds, 8) == 13 && dataset_value(&ds, 9) == 10);
    CHECK(dataset_value(&ds, 4999 * 128) == 36 && dataset_value(&ds, 4999 * 128 + 1) == 9 &&
          dataset_value(&ds, 4999 * 128 + 2) == 15);
    CHECK(sum_all(&ds) == 21465670.0);
    CHECK(ds.hash == dataset_hash(&ds));
    dataset_free(&ds);
}

TEST(sift_tsv_equals_fvecs)
{
    dataset a, b, c;
    load_opts o = {.header = -1, .cols = "-last"};
    CHECK_MSG(dataset_load(t_dataset("sift5k.fvecs"), NULL, &a) == 0, "%s", err_msg());
    CHECK_MSG(dataset_load(t_dataset("sift5k_with_ids.tsv"), &o, &b) == 0, "%s", err_msg());
    CHECK_EQ_INT(b.n, 5000);
    CHECK_EQ_INT(b.d, 128);
    CHECK(a.type == DTYPE_F32 && b.type == DTYPE_F64); /* each kept as its file holds it */
    CHECK(same_values(&a, 0, &b, 5000 * 128));
    CHECK(a.hash == b.hash);
    o.cols = "0-127";
    CHECK_MSG(dataset_load(t_dataset("sift5k_with_ids.tsv"), &o, &c) == 0, "%s", err_msg());
    CHECK(c.hash == a.hash);
    dataset_free(&c);
    /* all 129 columns: the last is the id 100001..105000 */
    CHECK(dataset_load(t_dataset("sift5k_with_ids.tsv"), NULL, &c) == 0);
    CHECK_EQ_INT(c.d, 129);
    CHECK(dataset_value(&c, 128) == 100001 && dataset_value(&c, 4999 * 129 + 128) == 105000);
    dataset_free(&a);
    dataset_free(&b);
    dataset_free(&c);
}

TEST(letter_csv)
{
    dataset ds;
    load_opts o = {.header = -1, .cols = "-0"};
    CHECK_MSG(dataset_load(t_dataset("letter.csv"), &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 20000);
    CHECK_EQ_INT(ds.d, 16);
    static const double first[16] = {2, 8, 3, 5, 1, 8, 13, 0, 6, 6, 10, 8, 0, 8, 0, 8};
    static const double last[16] = {4, 9, 6, 6, 2, 9, 5, 3, 1, 8, 1, 8, 2, 7, 2, 8};
    CHECK(values_are(&ds, 0, first, 16));
    CHECK(values_are(&ds, 19999 * 16, last, 16));
    CHECK(sum_all(&ds) == 1896149.0);
    uint64_t h = ds.hash;
    dataset_free(&ds);
    o.cols = "1-16";
    CHECK(dataset_load(t_dataset("letter.csv"), &o, &ds) == 0);
    CHECK(ds.hash == h);
    dataset_free(&ds);
    /* the label column left in: one line naming file, line, column */
    CHECK(dataset_load(t_dataset("letter.csv"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "letter.csv:2:1: field 0: expected a number, got 'T'");
}

TEST(htru2_cr_only)
{
    dataset ds;
    load_opts o = {.header = -1, .cols = "-last"};
    CHECK_MSG(dataset_load(t_dataset("htru2.csv"), &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 17898);
    CHECK_EQ_INT(ds.d, 8);
    static const double first[8] = {140.5625,    55.68378214, -0.234571412, -0.699648398,
                                    3.199832776, 19.11042633, 7.975531794,  74.24222492};
    static const double last[8] = {57.0625,     85.79734025, 1.406391047,  0.089519707,
                                   188.3060201, 64.71256228, -1.597526579, 1.42947536};
    CHECK(values_are(&ds, 0, first, 8));
    CHECK(values_are(&ds, 17897 * 8, last, 8));
    CHECK(sum_all(&ds) == 5583814.735047648);
    dataset_free(&ds);
}

TEST(kitti_raw)
{
    dataset ds;
    load_opts o = {.header = -1, .dim = 4};
    CHECK_MSG(dataset_load(t_dataset("kitti_000000_xyzr.f32"), &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 20285);
    CHECK_EQ_INT(ds.d, 4);
    CHECK(!strcmp(ds.format, "raw"));
    CHECK(dataset_value(&ds, 0) == (double)18.324f && dataset_value(&ds, 1) == (double)0.049f &&
          dataset_value(&ds, 3) == 0);
    CHECK(dataset_value(&ds, 20284 * 4 + 2) == (double)-1.638f &&
          dataset_value(&ds, 20284 * 4 + 3) == (double)0.31f);
    CHECK(sum_all(&ds) == 235190.87703074724);
    dataset_free(&ds);
    /* no dim: a clear request for it */
    CHECK(dataset_load(t_dataset("kitti_000000_xyzr.f32"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "needs dim=N");
}

TEST(olivetti_npy)
{
    dataset ds;
    CHECK_MSG(dataset_load(t_dataset("olivetti_400x4096_u8.npy"), NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 400);
    CHECK_EQ_INT(ds.d, 4096);
    CHECK(dataset_value(&ds, 0) == 75 && dataset_value(&ds, 4) == 81 &&
          dataset_value(&ds, 200 * 4096 + 100) == 104);
    CHECK(dataset_value(&ds, 400 * 4096 - 1) == 93);
    CHECK(sum_all(&ds) == 216898402.0);
    dataset_free(&ds);
}

/* ---- fvecs / bvecs / ivecs ---- */

static const char *fvecs_file(const char *name, int nrec, int d)
{
    buf b = {.n = 0};
    for (int i = 0; i < nrec; i++) {
        put_i32(&b, d);
        for (int j = 0; j < d; j++)
            put_f32(&b, (float)(i * 10 + j));
    }
    return t_write(name, b.b, b.n);
}

TEST(fvecs_offset_limit)
{
    dataset ds;
    load_opts o = {.header = -1, .offset = 3, .limit = 4};
    const char *p = fvecs_file("ol.fvecs", 10, 4);
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 4);
    CHECK(dataset_value(&ds, 0) == 30 && dataset_value(&ds, 3) == 33 &&
          dataset_value(&ds, 15) == 63);
    CHECK(!strcmp(ds.name, "ol.fvecs[3:7]"));
    dataset_free(&ds);
    o.offset = 8;
    CHECK(dataset_load(p, &o, &ds) == 0);
    CHECK_EQ_INT(ds.n, 2);
    dataset_free(&ds);
    o.offset = 10;
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no points left after offset=10");
}

TEST(fvecs_truncated)
{
    buf b = {.n = 0};
    for (int i = 0; i < 3; i++) {
        put_i32(&b, 4);
        for (int j = 0; j < 4; j++)
            put_f32(&b, 1.0f);
    }
    b.n -= 6;
    dataset ds;
    CHECK(dataset_load(t_write("tr.fvecs", b.b, b.n), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "tr.fvecs: byte 40: record 2 is truncated: 14 of 20 bytes");
}

TEST(fvecs_changing_d)
{
    buf b = {.n = 0};
    put_i32(&b, 4);
    for (int j = 0; j < 4; j++)
        put_f32(&b, 1.0f);
    put_i32(&b, 3);
    for (int j = 0; j < 3; j++)
        put_f32(&b, 2.0f);
    dataset ds;
    CHECK(dataset_load(t_write("cd.fvecs", b.b, b.n), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "cd.fvecs: byte 20: record 1 has d=3, expected 4");
}

TEST(fvecs_d0_and_n1)
{
    buf b = {.n = 0};
    put_i32(&b, 0);
    dataset ds;
    CHECK(dataset_load(t_write("d0.fvecs", b.b, b.n), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "d0.fvecs: byte 0: record 0 has d=0");
    CHECK(dataset_load(fvecs_file("one.fvecs", 1, 4), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "one.fvecs: only 1 point; a self-join needs at least 2 points");
}

TEST(bvecs_ivecs)
{
    buf b = {.n = 0};
    for (int i = 0; i < 3; i++) {
        put_i32(&b, 2);
        unsigned char v[2] = {(unsigned char)(200 + i), (unsigned char)i};
        put(&b, v, 2);
    }
    dataset ds;
    CHECK_MSG(dataset_load(t_write("a.bvecs", b.b, b.n), NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK(dataset_value(&ds, 0) == 200 && dataset_value(&ds, 4) == 202 &&
          dataset_value(&ds, 5) == 2);
    dataset_free(&ds);
    b.n = 0;
    for (int i = 0; i < 2; i++) {
        put_i32(&b, 3);
        for (int j = 0; j < 3; j++)
            put_i32(&b, -1000000 * (j + 1) + i);
    }
    CHECK_MSG(dataset_load(t_write("a.ivecs", b.b, b.n), NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK_EQ_INT(ds.d, 3);
    CHECK(dataset_value(&ds, 2) == -3000000 && dataset_value(&ds, 3) == -999999);
    dataset_free(&ds);
}

/* ---- npy ---- */

/* An npy file: version v, header dict text, then data. */
static const char *npy_file(const char *name, int v, const char *dict, const void *data, size_t len)
{
    buf b = {.n = 0};
    put(&b, "\x93NUMPY", 6);
    b.b[b.n++] = (unsigned char)v;
    b.b[b.n++] = 0;
    size_t pre = v == 1 ? 10 : 12, hl = strlen(dict) + 1;
    size_t total = (pre + hl + 63) / 64 * 64;
    hl = total - pre;
    unsigned char l[4] = {(unsigned char)hl, (unsigned char)(hl >> 8), 0, 0};
    put(&b, l, v == 1 ? 2 : 4);
    put(&b, dict, strlen(dict));
    while (b.n < total - 1)
        b.b[b.n++] = ' ';
    b.b[b.n++] = '\n';
    put(&b, data, len);
    return t_write(name, b.b, b.n);
}

TEST(npy_versions_and_dtypes)
{
    dataset ds;
    float f4[6] = {1, 2, 3, 4, 5.5f, -6};
    const char *p = npy_file(
        "v1.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", f4, sizeof f4);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK_EQ_INT(ds.d, 2);
    CHECK(dataset_value(&ds, 4) == 5.5 && dataset_value(&ds, 5) == -6);
    dataset_free(&ds);
    double f8[4] = {0.1, 0.2, 0.3, 1e300};
    p = npy_file("v2.npy", 2, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", f8,
                 sizeof f8);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 0.1 && dataset_value(&ds, 3) == 1e300);
    dataset_free(&ds);
    /* half: 1.5, -2, 65504, 2^-24 (the smallest subnormal) */
    uint16_t f2[4] = {0x3E00, 0xC000, 0x7BFF, 0x0001};
    p = npy_file("v3.npy", 3, "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 2), }", f2,
                 sizeof f2);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 1.5 && dataset_value(&ds, 1) == -2 &&
          dataset_value(&ds, 2) == 65504 && dataset_value(&ds, 3) == ldexp(1, -24));
    dataset_free(&ds);
    /* big-endian float32 and int32 */
    unsigned char be[8] = {0x3f, 0xc0, 0, 0, 0xc1, 0x20, 0, 0}; /* 1.5, -10 */
    p = npy_file("be.npy", 1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 1), }", be, 8);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 1.5 && dataset_value(&ds, 1) == -10);
    dataset_free(&ds);
    unsigned char bi[8] = {0xff, 0xff, 0xff, 0xfe, 0, 0, 1, 0}; /* -2, 256 */
    p = npy_file("bei.npy", 1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }", bi, 8);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.d, 1); /* 1-D: n points of d = 1 */
    CHECK(dataset_value(&ds, 0) == -2 && dataset_value(&ds, 1) == 256);
    dataset_free(&ds);
}

TEST(npy_fortran_order)
{
    /* the 3x2 matrix [[1,2],[3,4],[5,6]] stored column by column */
    double col[6] = {1, 3, 5, 2, 4, 6};
    const char *p = npy_file(
        "f.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 2), }", col, sizeof col);
    dataset ds;
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    for (int i = 0; i < 6; i++)
        CHECK(dataset_value(&ds, i) == i + 1);
    dataset_free(&ds);
    load_opts o = {.header = -1, .offset = 1, .limit = 2};
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 0) == 3 && dataset_value(&ds, 1) == 4 && dataset_value(&ds, 2) == 5 &&
          dataset_value(&ds, 3) == 6);
    dataset_free(&ds);
}

TEST(npy_bad)
{
    dataset ds;
    char junk[16] = {0};
    const char *p =
        npy_file("o.npy", 1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", junk, 16);
    CHECK(dataset_load(p, NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "o.npy: npy dtype '|O' holds Python objects");
    static char data[400000];
    p = npy_file("lie.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1000, 128), }",
                 data, 0);
    FILE *f = fopen(p, "ab");
    CHECK(f && fwrite(data, 1, sizeof data, f) == sizeof data);
    fclose(f);
    CHECK(dataset_load(p, NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(),
                       "lie.npy: header says 1000x128 f32 = 512000 bytes of data, file has 400000");
    /* truncated inside the header */
    CHECK(dataset_load(t_write("th.npy", "\x93NUMPY\x01\x00\x76\x00{'descr'", 17), NULL, &ds) ==
          TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "th.npy: byte 10: npy header of 118 bytes runs past the end");
    float two[2] = {1, 2};
    p = npy_file("d0.npy", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (5, 0), }", two,
                 0);
    CHECK(dataset_load(p, NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "d0.npy: byte 60: shape gives d = 0");
}

/* ---- delimited text ---- */

TEST(csv_line_endings)
{
    const char *texts[3] = {"x,y\n1,2\n3,4\n5,6\n", "x,y\r\n1,2\r\n3,4\r\n5,6\r\n",
                            "x,y\r1,2\r3,4\r5,6"};
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "le%d.csv", k);
        dataset ds;
        CHECK_MSG(dataset_load(wtext(name, texts[k]), NULL, &ds) == 0, "%s", err_msg());
        CHECK_EQ_INT(ds.n, 3);
        CHECK_EQ_INT(ds.d, 2);
        CHECK(dataset_value(&ds, 0) == 1 && dataset_value(&ds, 5) == 6);
        dataset_free(&ds);
    }
}

TEST(csv_header_comments_delims)
{
    dataset ds;
    /* no header, comments, blank lines, trailing comment */
    const char *p = wtext("c.csv", "# made by hand\n1.5, 2\n\n  # indented comment\n3,4 # tail\n");
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 0) == 1.5 && dataset_value(&ds, 3) == 4);
    dataset_free(&ds);
    /* forced header drops a numeric first line */
    load_opts o = {.header = 1};
    p = wtext("h.csv", "1,2\n3,4\n5,6\n");
    CHECK(dataset_load(p, &o, &ds) == 0);
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 0) == 3);
    dataset_free(&ds);
    /* header=no: a non-numeric first line is an error, not a header */
    o.header = 0;
    CHECK(dataset_load(wtext("hn.csv", "a,b\n1,2\n3,4\n"), &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "hn.csv:1:1: field 0: expected a number, got 'a'");
    /* whitespace, tab and ';' separated, quoted fields */
    p = wtext("w.txt", "  1  2\t 3\n4 5 6  \n");
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.d, 3);
    CHECK(dataset_value(&ds, 5) == 6);
    dataset_free(&ds);
    p = wtext("t.tsv", "a\tb\n-1e3\t2\n3\t.5\n");
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == -1000 && dataset_value(&ds, 3) == 0.5);
    dataset_free(&ds);
    p = wtext("s.csv", "\"a\";\"b\"\n\"1\";2\n3;4\n");
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 0) == 1 && dataset_value(&ds, 3) == 4);
    dataset_free(&ds);
}

TEST(csv_cols_grammar)
{
    const char *p = wtext("cols.csv", "id,a,b,c\n7,1,2,3\n8,4,5,6\n");
    struct {
        const char *cols;
        int d;
        double first[3];
    } cases[] = {
        {"-0", 3, {1, 2, 3}},     {"-id", 3, {1, 2, 3}}, {"1-", 3, {1, 2, 3}},
        {"1-last", 3, {1, 2, 3}}, {"0,2", 2, {7, 2}},    {"-last", 3, {7, 1, 2}},
        {"last", 1, {3}},         {"b,id", 2, {7, 2}},   {"-0,-last", 2, {1, 2}},
        {"1-3,-2", 2, {1, 3}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        load_opts o = {.header = -1, .cols = cases[k].cols};
        dataset ds;
        CHECK_MSG(dataset_load(p, &o, &ds) == 0, "cols=%s: %s", cases[k].cols, err_msg());
        CHECK_MSG((int)ds.d == cases[k].d, "cols=%s: d=%zu", cases[k].cols, ds.d);
        for (int j = 0; j < cases[k].d; j++)
            CHECK_MSG(dataset_value(&ds, j) == cases[k].first[j], "cols=%s: x[%d]=%g",
                      cases[k].cols, j, dataset_value(&ds, j));
        dataset_free(&ds);
    }
    load_opts o = {.header = -1, .cols = "2-9"};
    dataset ds;
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "cols.csv: cols: '2-9' is outside columns 0 to 3");
    o.cols = "zz";
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "no column named 'zz'");
    o.cols = "-0-last";
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "cols.csv:1: no columns left to load (d = 0)");
}

TEST(csv_bad_rows)
{
    dataset ds;
    CHECK(dataset_load(wtext("r.csv", "1,2,3\n4,5,6\n7,8\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "r.csv:3: 2 fields, expected 3 as on line 1");
    CHECK(dataset_load(wtext("nn.csv", "1,2\n3,4x\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "nn.csv:2:3: field 1: expected a number, got '4x'");
    CHECK(dataset_load(wtext("em.csv", "1,2\n3,\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "em.csv:2:3: field 1: expected a number, got ''");
    CHECK(dataset_load(wtext("one.csv", "x,y\n1,2\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "one.csv: only 1 point");
    CHECK(dataset_load(wtext("only.csv", "# nothing\n\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "only.csv: no data lines");
}

TEST(nonfinite_refused_and_dropped)
{
    const char *p = wtext("nan.csv", "a,b,c\n1,2,3\nnan,5,6\n7,8,9\n10,inf,-Inf\n13,14,15\n");
    dataset ds;
    CHECK(dataset_load(p, NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(),
                       "nan.csv: 3 values are NaN or Inf, first at line 3 column 1 (field 0)");
    CHECK_STR_CONTAINS(err_msg(), "drop-nonfinite=yes");
    load_opts o = {.header = -1, .drop_nonfinite = 1};
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK(dataset_value(&ds, 0) == 1 && dataset_value(&ds, 3) == 7 && dataset_value(&ds, 6) == 13 &&
          dataset_value(&ds, 8) == 15);
    dataset_free(&ds);
    /* binary: the byte of the first bad value */
    buf b = {.n = 0};
    for (int i = 0; i < 3; i++) {
        put_i32(&b, 2);
        put_f32(&b, (float)i);
        put_f32(&b, i == 1 ? NAN : 1.0f);
    }
    p = t_write("nan.fvecs", b.b, b.n);
    CHECK(dataset_load(p, NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "nan.fvecs: 1 value is NaN or Inf, first at byte 20 (point 1 "
                                  "value 1)");
    CHECK(dataset_load(p, &o, &ds) == 0);
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 0) == 0 && dataset_value(&ds, 2) == 2);
    dataset_free(&ds);
}

TEST(text_offset_limit)
{
    const char *p = wtext("ol.csv", "h1,h2\n0,0\n1,1\n2,2\n3,3\n4,4\n");
    load_opts o = {.header = -1, .offset = 1, .limit = 3};
    dataset ds;
    CHECK(dataset_load(p, &o, &ds) == 0);
    CHECK_EQ_INT(ds.n, 3);
    CHECK(dataset_value(&ds, 0) == 1 && dataset_value(&ds, 5) == 3);
    dataset_free(&ds);
    /* a bad line after the limit is never read */
    p = wtext("ol2.csv", "0,0\n1,1\nbad\n");
    o.offset = 0;
    o.limit = 2;
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    dataset_free(&ds);
}

/* ---- files that are not data ---- */

TEST(empty_missing_directory)
{
    dataset ds;
    const char *names[] = {"e.csv", "e.fvecs", "e.npy", "e.f32", "e.idx", "noext"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        load_opts o = {.header = -1, .dim = strstr(names[k], ".f32") ? 2 : 0};
        const char *p = t_write(names[k], "", 0);
        CHECK_MSG(dataset_load(p, &o, &ds) == TCJ_EINVAL, "%s", names[k]);
        CHECK_STR_CONTAINS(err_msg(), names[k]);
        CHECK_MSG(strstr(err_msg(), "empty") || strstr(err_msg(), "no data"), "%s: %s", names[k],
                  err_msg());
    }
    CHECK(dataset_load(t_path("missing.csv"), NULL, &ds) == TCJ_EIO);
    CHECK_STR_CONTAINS(err_msg(), "missing.csv: No such file or directory");
    CHECK(dataset_load(t_tmpdir(), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "is a directory");
    if (geteuid() != 0) { /* root reads anything */
        const char *p = wtext("locked.csv", "1,2\n3,4\n");
        chmod(p, 0);
        CHECK(dataset_load(p, NULL, &ds) == TCJ_EIO);
        CHECK_STR_CONTAINS(err_msg(), "locked.csv: Permission denied");
    }
    load_opts o = {.header = -1, .format = "nope"};
    CHECK(dataset_load(wtext("x.csv", "1\n2\n"), &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "unknown format 'nope'");
}

TEST(probe_without_extension)
{
    dataset ds;
    float f4[4] = {1, 2, 3, 4};
    const char *p =
        npy_file("npy_data.bin", 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                 f4, sizeof f4);
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK(!strcmp(ds.format, "npy"));
    dataset_free(&ds);
    CHECK_MSG(dataset_load(wtext("points", "1 2\n3 4\n"), NULL, &ds) == 0, "%s", err_msg());
    CHECK(!strcmp(ds.format, "csv"));
    dataset_free(&ds);
    unsigned char bin[8] = {0x80, 0xff, 0x01, 0x02, 0x00, 0x9c, 0x07, 0x00};
    CHECK(dataset_load(t_write("blob", bin, 8), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "blob: cannot tell the format");
}

/* ---- raw ---- */

TEST(raw_dtypes_and_bad_size)
{
    dataset ds;
    float f[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const char *p = t_write("r.bin", f, 40);
    load_opts o = {.header = -1, .dtype = "f32", .dim = 4};
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "r.bin: 40 bytes is not a whole number of points of 4 f32 (16 "
                                  "bytes each): 8 trailing bytes from byte 32");
    o.dim = 5;
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK(dataset_value(&ds, 9) == 9);
    dataset_free(&ds);
    unsigned char be[8] = {0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18}; /* pi as f64be */
    unsigned char two[16];
    memcpy(two, be, 8);
    memcpy(two + 8, be, 8);
    o.dtype = "f64be";
    o.dim = 1;
    CHECK_MSG(dataset_load(t_write("pi.raw", two, 16), &o, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 3.141592653589793 &&
          dataset_value(&ds, 1) == dataset_value(&ds, 0));
    dataset_free(&ds);
    int16_t i2[4] = {-32768, 32767, -1, 0};
    o.dtype = "i16";
    o.dim = 2;
    CHECK(dataset_load(t_write("s.raw", i2, 8), &o, &ds) == 0);
    CHECK(dataset_value(&ds, 0) == -32768 && dataset_value(&ds, 1) == 32767 &&
          dataset_value(&ds, 2) == -1);
    dataset_free(&ds);
    o.dtype = "f128";
    CHECK(dataset_load(t_write("s2.raw", i2, 8), &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "s2.raw: unknown dtype 'f128'");
}

/* ---- idx ---- */

TEST(idx_files)
{
    buf b = {.n = 0};
    unsigned char magic[4] = {0, 0, 0x08, 3};
    put(&b, magic, 4);
    put_be(&b, 3, 4);
    put_be(&b, 2, 4);
    put_be(&b, 2, 4);
    for (int i = 0; i < 12; i++)
        b.b[b.n++] = (unsigned char)(i * 20);
    dataset ds;
    CHECK_MSG(dataset_load(t_write("img-idx3-ubyte", b.b, b.n), NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK_EQ_INT(ds.d, 4);
    CHECK(dataset_value(&ds, 11) == 220);
    dataset_free(&ds);
    b.n = 0;
    unsigned char m2[4] = {0, 0, 0x0D, 2};
    put(&b, m2, 4);
    put_be(&b, 2, 4);
    put_be(&b, 1, 4);
    put_be(&b, 0x3fc00000, 4); /* 1.5 */
    put_be(&b, 0xc1200000, 4); /* -10 */
    CHECK_MSG(dataset_load(t_write("f.idx", b.b, b.n), NULL, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 1.5 && dataset_value(&ds, 1) == -10);
    dataset_free(&ds);
    b.n -= 2;
    CHECK(dataset_load(t_write("short.idx", b.b, b.n), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "short.idx: header says 2 x 1 f32 = 8 bytes of data, file has 6");
}

/* ---- HDF5 ---- */

static void h5_write(hid_t file, const char *name, hid_t type, int rows, int cols, const void *data,
                     hid_t memtype)
{
    hsize_t dims[2] = {(hsize_t)rows, (hsize_t)cols};
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t ds = H5Dcreate2(file, name, type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(sp);
}

TEST(hdf5_ann_benchmarks)
{
    const char *p = t_path("ann.hdf5");
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    float train[15];
    for (int i = 0; i < 15; i++)
        train[i] = (float)i / 4;
    double test[6] = {1e-3, 2, 3, 4, 5, 6};
    int ids[4] = {7, -8, 9, 10};
    h5_write(f, "train", H5T_IEEE_F32LE, 5, 3, train, H5T_NATIVE_FLOAT);
    h5_write(f, "test", H5T_IEEE_F64LE, 2, 3, test, H5T_NATIVE_DOUBLE);
    h5_write(f, "neighbors", H5T_STD_I32LE, 2, 2, ids, H5T_NATIVE_INT);
    H5Fclose(f);
    dataset ds;
    CHECK_MSG(dataset_load(p, NULL, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 5);
    CHECK_EQ_INT(ds.d, 3);
    CHECK(dataset_value(&ds, 14) == 3.5 && dataset_value(&ds, 1) == 0.25);
    CHECK(ds.type == DTYPE_F32); /* the file's own type, sent as doubles by the child */
    CHECK(!strcmp(ds.format, "hdf5"));
    dataset_free(&ds);
    load_opts o = {.header = -1, .h5name = "test"};
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 0) == 1e-3 && dataset_value(&ds, 5) == 6);
    CHECK(ds.type == DTYPE_F64);
    dataset_free(&ds);
    o.h5name = "neighbors";
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK(dataset_value(&ds, 1) == -8);
    CHECK(ds.type == DTYPE_F64); /* i32: wider than f32 holds exactly */
    dataset_free(&ds);
    o = (load_opts){.offset = 1, .limit = 3};
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 3);
    CHECK(dataset_value(&ds, 0) == 0.75 && dataset_value(&ds, 8) == 2.75);
    dataset_free(&ds);
    o = (load_opts){.h5name = "nope"};
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "ann.hdf5: no dataset 'nope' (the file has: neighbors, test, "
                                  "train)");
    CHECK(dataset_load(wtext("garbage.h5", "1,2\n3,4\n"), NULL, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "garbage.h5: not a readable HDF5 file");
}

/* A chunked, deflated HDF5 dataset of rows rows of d values of type
 * (memtype in memory), chunks of cr x cc: its path, or NULL. */
static const char *h5_chunked(const char *name, hid_t type, hsize_t rows, hsize_t d, hsize_t cr,
                              hsize_t cc, const void *v, hid_t memtype)
{
    const char *p = t_path(name);
    hsize_t dims[2] = {rows, d}, chunk[2] = {cr, cc};
    hid_t f = H5Fcreate(p, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(2, dims, NULL);
    hid_t pl = H5Pcreate(H5P_DATASET_CREATE);
    herr_t w = -1;
    if (f >= 0 && sp >= 0 && pl >= 0 && H5Pset_chunk(pl, 2, chunk) >= 0 &&
        H5Pset_deflate(pl, 1) >= 0) {
        hid_t ds = H5Dcreate2(f, "train", type, sp, H5P_DEFAULT, pl, H5P_DEFAULT);
        if (ds >= 0) {
            w = H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
            H5Dclose(ds);
        }
    }
    if (pl >= 0)
        H5Pclose(pl);
    if (sp >= 0)
        H5Sclose(sp);
    if (f >= 0)
        H5Fclose(f);
    return w < 0 ? NULL : p;
}

static float h5_f32_at(size_t i, size_t j)
{
    return (float)((i * 131 + j) % 1009) - 500;
}

/* Rows longer than the reader's 4 MiB block come in pieces of columns:
 * chunks of 2 rows as wide as a row (each read in pieces from the chunk
 * cache), a band of rows cut by offset=1 and limit=3, a row with a NaN
 * dropped (the rows after it move down) or refused. Every value is
 * checked. */
TEST(hdf5_pieces_offset_and_drop)
{
    const size_t n = 5, d = ((size_t)1 << 20) + 3;
    float *v = malloc(n * d * sizeof *v);
    CHECK(v);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < d; j++)
            v[i * d + j] = h5_f32_at(i, j);
    v[2 * d + 7] = NAN;
    const char *p = h5_chunked("pieces.hdf5", H5T_IEEE_F32LE, n, d, 2, d, v, H5T_NATIVE_FLOAT);
    free(v);
    CHECK(p);
    load_opts o = {.header = -1, .offset = 1, .limit = 3};
    dataset ds;
    CHECK(dataset_load(p, &o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "pieces.hdf5: 1 value is NaN or Inf, first at point 2 value 7;");
    o.drop_nonfinite = 1;
    CHECK_MSG(dataset_load(p, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.n, 2);
    CHECK_EQ_INT(ds.d, d);
    CHECK(ds.type == DTYPE_F32);
    const size_t kept[2] = {1, 3};
    for (size_t i = 0; i < 2; i++)
        for (size_t j = 0; j < d; j++)
            CHECK_MSG(dataset_value(&ds, i * d + j) == h5_f32_at(kept[i], j),
                      "row %zu value %zu: %g", i, j, dataset_value(&ds, i * d + j));
    dataset_free(&ds);
}

/* Peak address space the load may add: the array plus this. */
#define H5_WIDE_SLACK ((size_t)32 << 20)

/* Load p in a child process whose address space is limited to what it
 * maps now, the values' bytes and H5_WIDE_SLACK (the HDF5 reader, forked
 * from it, gets the same limit); the child checks every value against
 * at(i, j). Its exit status: 0 loaded and right, 2 a wrong value, 3 not
 * loaded (the line on stderr), 4 no limit set. */
static int h5_load_limited(const char *p, size_t n, size_t d, size_t bytes,
                           double (*at)(size_t i, size_t j))
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (!f || fscanf(f, "%ld", &pages) != 1)
            _exit(4);
        fclose(f);
        const rlim_t lim =
            (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + n * d * bytes + H5_WIDE_SLACK;
        struct rlimit rl = {lim, lim};
        if (setrlimit(RLIMIT_AS, &rl) != 0)
            _exit(4);
        dataset ds;
        load_opts o = {.header = -1};
        if (dataset_load(p, &o, &ds) != 0) {
            fprintf(stderr, "%s\n", err_msg());
            _exit(3);
        }
        if (ds.n != n || ds.d != d)
            _exit(2);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < d; j++)
                if (dataset_value(&ds, i * d + j) != at(i, j))
                    _exit(2);
        _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static double h5_u8_at(size_t i, size_t j)
{
    return (double)((i * 7 + j + j / 251) % 256);
}

static double h5_f32_wide_at(size_t i, size_t j)
{
    return h5_f32_at(i, j);
}

/* n = 2 rows of a large d, chunked and deflated (32 MB of values, a few
 * hundred KB of file), load within the values and a bounded block: the
 * reader held a row of FP64 (128 MiB here) and the parent two more beside
 * the array, so 2 x 2^28 u8 (537 MB) took 4.7 GB. Chunks as wide as a
 * row (read in pieces through the chunk cache), a few columns wide, and
 * two rows by a few columns. */
TEST(hdf5_wide_rows_load_within_the_data)
{
#if defined(__SANITIZE_ADDRESS__)
    t_skip("AddressSanitizer maps terabytes of shadow: no address-space limit fits it");
#endif
    const size_t n = 2, du = (size_t)1 << 24, df = (size_t)1 << 22;
    unsigned char *u = malloc(n * du);
    float *f = malloc(n * df * sizeof *f);
    CHECK(u && f);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < du; j++)
            u[i * du + j] = (unsigned char)h5_u8_at(i, j);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < df; j++)
            f[i * df + j] = h5_f32_at(i, j);
    const char *rowwide =
        h5_chunked("wide_row.hdf5", H5T_STD_U8LE, n, du, 1, du, u, H5T_NATIVE_UCHAR);
    const char *cols =
        h5_chunked("wide_cols.hdf5", H5T_STD_U8LE, n, du, 1, (hsize_t)1 << 20, u, H5T_NATIVE_UCHAR);
    const char *both = h5_chunked("wide_f32.hdf5", H5T_IEEE_F32LE, n, df, 2, (hsize_t)1 << 16, f,
                                  H5T_NATIVE_FLOAT);
    free(u);
    free(f);
    CHECK(rowwide && cols && both);
    int st = h5_load_limited(rowwide, n, du, 1, h5_u8_at);
    CHECK_MSG(st == 0, "wide_row.hdf5: exit %d", st);
    st = h5_load_limited(cols, n, du, 1, h5_u8_at);
    CHECK_MSG(st == 0, "wide_cols.hdf5: exit %d", st);
    st = h5_load_limited(both, n, df, 4, h5_f32_wide_at);
    CHECK_MSG(st == 0, "wide_f32.hdf5: exit %d", st);
}

/* ---- option words ---- */

TEST(load_opts_words)
{
    load_opts o;
    load_opts_init(&o);
    CHECK(load_opts_set(&o, "limit", "100k") == 0 && o.limit == 100000);
    CHECK(load_opts_set(&o, "offset", "1e3") == 0 && o.offset == 1000);
    CHECK(load_opts_set(&o, "delim", "tab") == 0 && o.delim == '\t');
    CHECK(load_opts_set(&o, "header", "no") == 0 && o.header == 0);
    CHECK(load_opts_set(&o, "header", "auto") == 0 && o.header == -1);
    load_opts_init(&o);
    CHECK(o.header == -1 && o.limit == 0 && !o.cols);
    CHECK(load_opts_set(&o, "drop-nonfinite", "1") == 0 && o.drop_nonfinite == 1);
    CHECK(load_opts_set(&o, "dtype", "u16be") == 0);
    CHECK(load_opts_set(&o, "dim", "0") == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "dim=0");
    CHECK(load_opts_set(&o, "limit", "-5") == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "limit=-5: expected a whole number");
    CHECK(load_opts_set(&o, "format", "xls") == TCJ_EINVAL);
    CHECK(load_opts_set(&o, "colour", "red") == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "unknown load option 'colour'");
    int k = 0;
    while (load_opt_names[k])
        k++;
    CHECK_EQ_INT(k, 10);
}

/* ---- the element type each loader keeps ---- */

/* Loaders keep the file's own type when it is u8, f16, f32 or f64, the
 * narrowest exact one for other integers, f64 for text; the values and
 * the hash are those of the FP64 widening. */
TEST(loaders_keep_their_type)
{
    static const struct {
        const char *descr;
        size_t es;
        dtype_id want;
    } cases[] = {
        {"<f2", 2, DTYPE_F16}, {"<f4", 4, DTYPE_F32}, {"<f8", 8, DTYPE_F64}, {"|u1", 1, DTYPE_U8},
        {"|i1", 1, DTYPE_F16}, {"<i2", 2, DTYPE_F32}, {"<u2", 2, DTYPE_F32}, {"<i4", 4, DTYPE_F64},
    };
    /* -3, 7, 100, 0 in each type (u8: 3 for -3) */
    const double want[4][4] = {{-3, 7, 100, 0}, {3, 7, 100, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const int uns = cases[c].descr[1] == 'u';
        unsigned char data[32];
        for (int k = 0; k < 4; k++) {
            const double v = want[uns][k];
            if (cases[c].descr[1] == 'f' && cases[c].es == 2) {
                const uint16_t h[4] = {0xC200, 0x4700, 0x5640, 0}; /* -3 7 100 0 */
                memcpy(data + 2 * k, &h[k], 2);
            } else if (cases[c].descr[1] == 'f' && cases[c].es == 4) {
                const float f = (float)v;
                memcpy(data + 4 * k, &f, 4);
            } else if (cases[c].descr[1] == 'f') {
                memcpy(data + 8 * k, &v, 8);
            } else {
                const int64_t i = (int64_t)v;
                memcpy(data + cases[c].es * k, &i, cases[c].es); /* little-endian */
            }
        }
        char dict[128], name[32];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 2), }",
                 cases[c].descr);
        snprintf(name, sizeof name, "type%zu.npy", c);
        dataset ds;
        CHECK_MSG(dataset_load(npy_file(name, 1, dict, data, 4 * cases[c].es), NULL, &ds) == 0,
                  "%s: %s", cases[c].descr, err_msg());
        CHECK_MSG(ds.type == cases[c].want, "%s: kept as %s", cases[c].descr,
                  dtype_get(ds.type)->name);
        CHECK(dataset_bytes(&ds) == 4 * dtype_get(cases[c].want)->bytes);
        dataset f64 = {0};
        dataset_set_f64(&f64, want[uns], 2, 2, DTYPE_F64);
        for (int k = 0; k < 4; k++)
            CHECK_MSG(dataset_value(&ds, k) == want[uns][k], "%s value %d", cases[c].descr, k);
        CHECK_MSG(ds.hash == f64.hash, "%s: hash differs from the FP64 values'", cases[c].descr);
        dataset_free(&f64);
        dataset_free(&ds);
    }
    /* The shared files: fvecs f32, u8 npy, raw f32, text f64. */
    static const struct {
        const char *file;
        dtype_id want;
    } shared[] = {{"sift5k.fvecs", DTYPE_F32},
                  {"olivetti_400x4096_u8.npy", DTYPE_U8},
                  {"letter.csv", DTYPE_F64}};
    for (size_t c = 0; c < sizeof shared / sizeof shared[0]; c++) {
        dataset ds;
        load_opts o = {.header = -1, .cols = c == 2 ? "1-16" : NULL};
        CHECK_MSG(dataset_load(t_dataset(shared[c].file), &o, &ds) == 0, "%s", err_msg());
        CHECK_MSG(ds.type == shared[c].want, "%s: kept as %s", shared[c].file,
                  dtype_get(ds.type)->name);
        CHECK(dataset_bytes(&ds) == ds.n * ds.d * dtype_get(shared[c].want)->bytes);
        dataset_free(&ds);
    }
    dataset ds;
    load_opts o = {.header = -1, .dtype = "f32", .dim = 4};
    CHECK_MSG(dataset_load(t_dataset("kitti_000000_xyzr.f32"), &o, &ds) == 0, "%s", err_msg());
    CHECK(ds.type == DTYPE_F32);
    dataset_free(&ds);
}

/* Memory is counted in the type the loader keeps, not as FP64: with the
 * available memory capped between a file's own bytes and 8 bytes a value,
 * a u8, f16 or f32 file loads (and keeps its type); one byte under its own
 * size it is refused, and the message counts its type's bytes. The npy and
 * HDF5 loaders (the latter through its child process and the parent's
 * check) are held to the same count. */
TEST(mem_check_counts_the_kept_type)
{
    enum { N = 1000, D = 64 }; /* 64000 values */
    static unsigned char v[N * D * 4];
    for (size_t k = 0; k < sizeof v; k++)
        v[k] = (unsigned char)(k * 37 % 251);
    /* f16 and f32 payloads: small integers, finite whatever the bytes */
    uint16_t *h = (uint16_t *)v;
    for (size_t k = 0; k < (size_t)N * D; k++)
        h[k] = (uint16_t)(0x3c00 + k % 1024); /* [1, 2) */
    static const struct {
        const char *name, *type;
        size_t bytes;
    } c[] = {{"m.u8", "u8", 1}, {"m.f16", "f16", 2}, {"m.f32", "f32", 4}};
    load_opts o = {.header = -1, .dim = D};
    dataset ds;
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t own = (size_t)N * D * c[i].bytes;
        if (c[i].bytes == 4) {
            float *f = (float *)v;
            for (size_t k = 0; k < (size_t)N * D; k++)
                f[k] = (float)(k % 97);
        }
        const char *p = t_write(c[i].name, v, own);
        /* fits as kept; as FP64 (8 bytes a value) it would not */
        ld_mem_cap_for_tests(own + own / 2);
        CHECK(own + own / 2 < (size_t)N * D * 8);
        int rc = dataset_load(p, &o, &ds);
        CHECK_MSG(rc == 0, "%s: %s", c[i].name, err_msg());
        if (rc == 0) {
            CHECK(strcmp(dataset_dtype(&ds)->name, c[i].type) == 0);
            CHECK_EQ_INT(dataset_bytes(&ds), own);
            dataset_free(&ds);
        }
        ld_mem_cap_for_tests(own - 1);
        CHECK(dataset_load(p, &o, &ds) == TCJ_ENOMEM);
        char want[160], a[32], b[32];
        snprintf(want, sizeof want, "%s: needs %s of memory for %d x %d %s values; %s available",
                 c[i].name, mem_bytes_str(own, a), N, D, c[i].type, mem_bytes_str(own - 1, b));
        CHECK_STR_CONTAINS(err_msg(), want);
    }

    /* npy u1 and an HDF5 u8 dataset: kept as u8, counted as u8 */
    for (size_t k = 0; k < (size_t)N * D; k++)
        v[k] = (unsigned char)(k * 37 % 251);
    char dict[128];
    snprintf(dict, sizeof dict, "{'descr': '|u1', 'fortran_order': False, 'shape': (%d, %d), }", N,
             D);
    const char *np = npy_file("m.npy", 1, dict, v, (size_t)N * D);
    const char *hp = t_path("m.hdf5");
    hid_t f = H5Fcreate(hp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(f >= 0);
    h5_write(f, "train", H5T_STD_U8LE, N, D, v, H5T_NATIVE_UCHAR);
    H5Fclose(f);
    const char *files[2] = {np, hp};
    /* HDF5's parent reads its child's values into the array as kept: it
     * needs the array and nothing of FP64 beside it */
    load_opts none = {.header = -1};
    for (int i = 0; i < 2; i++) {
        ld_mem_cap_for_tests((size_t)N * D * 2);
        int rc = dataset_load(files[i], &none, &ds);
        CHECK_MSG(rc == 0, "%s: %s", files[i], err_msg());
        if (rc == 0) {
            CHECK(strcmp(dataset_dtype(&ds)->name, "u8") == 0);
            dataset_free(&ds);
        }
        ld_mem_cap_for_tests((size_t)N * D - 1);
        CHECK(dataset_load(files[i], &none, &ds) == TCJ_ENOMEM);
        CHECK_STR_CONTAINS(err_msg(), "1000 x 64 u8 values;");
    }
    ld_mem_cap_for_tests(0);
}

/* cols= on a binary format is refused (it picks fields of text lines; a
 * raw file's rows have none), and a reversed range says reversed. */
TEST(cols_refused_off_text_and_reversed)
{
    float v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    char path[1100];
    snprintf(path, sizeof path, "%s/two.f32", t_tmpdir());
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(v, sizeof v[0], 8, f) == 8);
    fclose(f);
    dataset ds;
    load_opts o;
    load_opts_init(&o);
    o.dtype = "f32";
    o.dim = 4;
    o.cols = "0-2";
    CHECK_EQ_INT(dataset_load(path, &o, &ds), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "cols= applies to delimited text only, not to a raw file");
    o.cols = NULL;
    CHECK_MSG(dataset_load(path, &o, &ds) == 0, "%s", err_msg());
    CHECK_EQ_INT(ds.d, 4);
    dataset_free(&ds);
    const char *p = wtext("rev.csv", "1,2,3\n4,5,6\n");
    load_opts_init(&o);
    o.cols = "2-0";
    CHECK_EQ_INT(dataset_load(p, &o, &ds), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "cols: '2-0' is reversed (first column after last); write 0-2");
}
