/* kern_stream_kdist: the k-distance of a dataset larger than the device,
 * its query rows cut into chunks and each chunk computed over itself and
 * the rest of the rows in pieces (kernels/kern_stream_kd.c). The driver is
 * pure host code over any k-distance entry, so it is tested here over an
 * FP64 CPU entry that keeps the kern_kd_fn contract (the chunk's rows
 * against themselves and the cut's pieces, nothing else) and refuses, as a
 * device would, a run holding more rows than a set budget. Every row's
 * answer is checked against an independent brute force over the whole
 * dataset (direct (a-b)^2 in FP64, the K-th smallest over all other
 * rows), on data whose distances are distinct (a row missed or counted
 * twice moves the K-th value) and on data with duplicated points. Also:
 * the pieces of a cut cover every other row once, every run of every cut
 * has its own device-cache key, the cut in thirds, cuts
 * halved until they fit, query ranges, a budget no chunk fits (one line,
 * KERN_ENOMEM), an error other than memory (not streamed), progress. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "direct_f32.h"
#include "kernels.h"

/* n points in d dimensions, f32, from a seed; dups: every 13th row repeats
 * the row 4 before it. */
static float *make_points(size_t n, size_t d, unsigned seed, int dups)
{
    float *x = malloc(n * d * sizeof *x);
    unsigned s = seed;
    for (size_t i = 0; i < n * d; i++) {
        s = s * 1103515245u + 12345u;
        x[i] = (float)((s >> 8) & 0xffff) / 4096.0f;
    }
    if (dups)
        for (size_t i = 4; i < n; i += 13)
            memcpy(x + i * d, x + (i - 4) * d, d * sizeof *x);
    return x;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The reference: row q's K-th smallest d2 over every other row. */
static double brute_kth(const float *x, size_t n, size_t d, size_t q, int K, double *v)
{
    size_t m = 0;
    for (size_t j = 0; j < n; j++)
        if (j != q)
            v[m++] = direct_d2(x, d, q, j);
    qsort(v, m, sizeof *v, cmp_dbl);
    return v[K - 1];
}

/* ---- the entry: FP64 on the CPU, kern_kd_fn's contract ---- */

static struct {
    size_t cap_rows; /* a run holding more rows fails as a full device does */
    int fail_inval;  /* every call fails with KERN_EINVAL */
    size_t calls, max_rows;
} eng;

static int eng_kd(const kern_join_args *a, int K, const kern_kd_cut *cut, double *out,
                  kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    eng.calls++;
    if (eng.fail_inval)
        return kern_fail_msg(KERN_EINVAL, "the test entry refuses every call");
    const float *x = a->x;
    const size_t n = a->n, d = a->d;
    const size_t q0 = cut ? cut->q0 : a->q0, q1 = cut ? cut->q1 : a->q1;
    size_t *b0 = malloc((n + 2) * sizeof *b0), *b1 = malloc((n + 2) * sizeof *b1), np = 0;
    /* What one run holds: the whole dataset, or the chunk (its rows up to
     * a whole column tile, as a cross run's c0) and its largest piece. */
    size_t held = n;
    if (cut) {
        np = kern_kd_pieces(n, cut, b0, b1);
        size_t big = 0;
        for (size_t t = 0; t < np; t++)
            big = b1[t] - b0[t] > big ? b1[t] - b0[t] : big;
        held = big ? (q1 - q0 + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN + big
                   : q1 - q0;
    }
    if (held > eng.cap_rows) {
        free(b0);
        free(b1);
        char m[128];
        snprintf(m, sizeof m, "the test entry holds %zu rows, a run needs %zu", eng.cap_rows, held);
        return kern_fail_msg(KERN_ENOMEM, m);
    }
    eng.max_rows = held > eng.max_rows ? held : eng.max_rows;
    double *v = malloc(n * sizeof *v);
    for (size_t q = q0; q < q1; q++) {
        size_t m = 0;
        if (!cut) {
            for (size_t j = 0; j < n; j++)
                if (j != q)
                    v[m++] = direct_d2(x, d, q, j);
        } else {
            for (size_t j = q0; j < q1; j++)
                if (j != q)
                    v[m++] = direct_d2(x, d, q, j);
            for (size_t t = 0; t < np; t++)
                for (size_t j = b0[t]; j < b1[t]; j++)
                    v[m++] = direct_d2(x, d, q, j);
        }
        qsort(v, m, sizeof *v, cmp_dbl);
        out[q - q0] = m >= (size_t)K ? v[K - 1] : -1.0;
        if (a->progress)
            a->progress(a->progress_ctx, (double)(q + 1 - q0) / (double)(q1 - q0));
    }
    r->launches = 1;
    r->t_kernel = 1e-3;
    free(v);
    free(b0);
    free(b1);
    return 0;
}

static void args_for(kern_join_args *a, const float *x, size_t n, size_t d, size_t q0, size_t q1)
{
    f32_args(a, x, n, d);
    a->q0 = q0;
    a->q1 = q1;
    a->symmetric = 1;
}

/* Progress as reported: never backwards, ends at 1. */
static struct {
    double last;
    int backwards;
    size_t calls;
} prog;

static void prog_fn(void *ctx, double f)
{
    (void)ctx;
    prog.backwards |= f < prog.last;
    prog.last = f;
    prog.calls++;
}

/* One case: the k-distance of rows [q0, q1) of n points at K through the
 * driver, the entry holding at most cap rows; 1 when every row equals the
 * brute force. */
static int kd_case(size_t n, size_t d, unsigned seed, int dups, size_t q0, size_t q1, int K,
                   size_t cap, kern_join_result *r)
{
    float *x = make_points(n, d, seed, dups);
    const size_t nq = q1 - q0;
    double *got = malloc(nq * sizeof *got), *v = malloc(n * sizeof *v);
    kern_join_args a;
    args_for(&a, x, n, d, q0, q1);
    a.progress = prog_fn;
    memset(&prog, 0, sizeof prog);
    memset(&eng, 0, sizeof eng);
    eng.cap_rows = cap;
    int ok = kern_stream_kdist(eng_kd, &a, K, got, r) == KERN_OK;
    if (!ok)
        printf("# %s\n", kern_error());
    size_t bad = 0;
    for (size_t q = q0; q < q1 && ok; q++) {
        const double want = brute_kth(x, n, d, q, K, v);
        if (got[q - q0] != want && bad++ == 0)
            printf("# row %zu K=%d: streamed %.17g, brute force %.17g\n", q, K, got[q - q0], want);
    }
    ok = ok && bad == 0 && !prog.backwards && prog.last == 1.0;
    free(x);
    free(got);
    free(v);
    return ok;
}

TEST(pieces_cover_every_other_row_once)
{
    unsigned s = 5;
    for (int t = 0; t < 500; t++) {
        s = s * 1103515245u + 12345u;
        const size_t n = 1 + (s >> 8) % 5000;
        s = s * 1103515245u + 12345u;
        const size_t q0 = (s >> 8) % n;
        s = s * 1103515245u + 12345u;
        const size_t q1 = q0 + 1 + (s >> 8) % (n - q0);
        s = s * 1103515245u + 12345u;
        const size_t R = 1 + (s >> 8) % 1500;
        const kern_kd_cut cut = {q0, q1, R};
        size_t *b0 = malloc((n / R + 2) * sizeof *b0), *b1 = malloc((n / R + 2) * sizeof *b1);
        const size_t np = kern_kd_pieces(n, &cut, b0, b1);
        unsigned char *seen = calloc(n, 1);
        for (size_t i = q0; i < q1; i++)
            seen[i]++;
        int sized = 1, ordered = 1;
        for (size_t p = 0; p < np; p++) {
            sized &= b1[p] > b0[p] && b1[p] - b0[p] <= R;
            ordered &= p == 0 || b0[p] >= b1[p - 1];
            for (size_t i = b0[p]; i < b1[p]; i++)
                seen[i]++;
        }
        size_t once = 0;
        for (size_t i = 0; i < n; i++)
            once += seen[i] == 1;
        CHECK_MSG(once == n && sized && ordered && np <= n / R + 2,
                  "n %zu rows [%zu, %zu) R %zu: %zu pieces, %zu of %zu rows once, sized %d, "
                  "ordered %d",
                  n, q0, q1, R, np, once, n, sized, ordered);
        free(b0);
        free(b1);
        free(seen);
    }
}

TEST(fits_not_streamed)
{
    kern_join_result r;
    CHECK(kd_case(600, 3, 3, 0, 0, 600, 4, 600, &r));
    CHECK_EQ_INT(r.chunks, 0);
    CHECK_EQ_INT(eng.calls, 1);
}

TEST(streamed_in_thirds)
{
    /* 2000 rows, room for 1600: chunks of 768 (a third, up to 256); a run
     * holds a chunk and a piece of 768. Each chunk meets two pieces. */
    kern_join_result r;
    for (int K = 1; K <= 16; K *= 4) {
        CHECK_MSG(kd_case(2000, 4, 7, 0, 0, 2000, K, 1600, &r), "K=%d", K);
        CHECK_EQ_INT(r.chunks, 3);
        CHECK_EQ_INT(r.chunk_rows, 768);
        CHECK_EQ_INT(r.chunk_runs, 9);
        CHECK_EQ_INT(eng.max_rows, 1536);
        CHECK_EQ_INT(eng.calls, 1 + 3);
    }
}

TEST(streamed_halved_until_fits_with_duplicates)
{
    /* Room for 600: 512-row chunks need 1000 rows a run, 256-row chunks
     * 512. Duplicated points give k-distances of 0 and ties. */
    kern_join_result r;
    CHECK(kd_case(1000, 3, 9, 1, 0, 1000, 3, 600, &r));
    CHECK_EQ_INT(r.chunks, 4);
    CHECK_EQ_INT(r.chunk_rows, 256);
    CHECK_EQ_INT(r.chunk_runs, 4 * 4);
    CHECK_EQ_INT(eng.max_rows, 512);
}

TEST(streamed_query_range)
{
    /* Rows [300, 1100) of 2000: 768-row chunks need 1536 rows a run, 512
     * (the next multiple of 256) 1024, which fit in 1100; the chunks'
     * pieces lie on both sides of them. */
    kern_join_result r;
    CHECK(kd_case(2000, 2, 13, 0, 300, 1100, 5, 1100, &r));
    CHECK_EQ_INT(r.chunks, 2);
    CHECK_EQ_INT(r.chunk_rows, 512);
    CHECK_EQ_INT(eng.max_rows, 1024);
    /* A range inside one chunk. */
    CHECK(kd_case(2000, 2, 13, 0, 1500, 1520, 16, 1100, &r));
    CHECK_EQ_INT(r.chunks, 1);
}

/* The driver over n points of two dimensions with the entry holding at
 * most cap rows (inval: refusing every call as invalid): its code. */
static int kd_refused(size_t n, unsigned seed, size_t cap, int inval)
{
    float *x = make_points(n, 2, seed, 0);
    double *out = malloc(n * sizeof *out);
    kern_join_args a;
    args_for(&a, x, n, 2, 0, n);
    memset(&eng, 0, sizeof eng);
    eng.cap_rows = cap;
    eng.fail_inval = inval;
    kern_join_result r;
    const int rc = kern_stream_kdist(eng_kd, &a, 2, out, &r);
    free(x);
    free(out);
    return rc;
}

TEST(nothing_fits_fails_for_memory)
{
    /* A 256-row chunk and a piece need 512 rows. */
    CHECK_EQ_INT(kd_refused(700, 17, 300, 0), KERN_ENOMEM);
    CHECK_MSG(strstr(kern_error(), "streamed in chunks of 256 rows too") &&
                  !strchr(kern_error(), '\n'),
              "%s", kern_error());
}

TEST(other_errors_not_streamed)
{
    CHECK_EQ_INT(kd_refused(900, 19, 100, 1), KERN_EINVAL);
    CHECK_EQ_INT(eng.calls, 1);
}

TEST(every_run_has_its_own_cache_key)
{
    /* The runs of the cuts of 3000 rows into chunks of 256 and 512 (query
     * ranges starting and ending anywhere on a 128-row grid): no two runs
     * that hold different rows share a key, and none shares the
     * dataset's own. */
    enum { MAXK = 40000 };
    uint64_t *keys = malloc(MAXK * sizeof *keys);
    size_t nk = 0, b0[32], b1[32];
    const uint64_t h = 0x1234abcdULL;
    for (size_t R = 256; R <= 512; R *= 2)
        for (size_t q0 = 0; q0 < 3000; q0 += 128)
            for (size_t q1 = q0 + 128; q1 <= q0 + R && q1 <= 3000; q1 += 128) {
                const kern_kd_cut cut = {q0, q1, R};
                const size_t np = kern_kd_pieces(3000, &cut, b0, b1);
                keys[nk++] = kern_kd_hash(h, &cut, q0);
                for (size_t t = 0; t < np && nk < MAXK; t++)
                    keys[nk++] = kern_kd_hash(h, &cut, b0[t]);
            }
    CHECK(nk < MAXK);
    qsort(keys, nk, sizeof *keys, cmp_u64);
    size_t same = 0;
    for (size_t t = 1; t < nk; t++)
        same += keys[t] == keys[t - 1];
    int own = 0;
    for (size_t t = 0; t < nk; t++)
        own |= keys[t] == h;
    CHECK_MSG(same == 0 && !own, "%zu of %zu keys repeat, the dataset's own key %s", same, nk,
              own ? "among them" : "not among them");
    free(keys);
}
