/* Subset runs (kernels/kern_subset.c) on the CPU: the layout's rows,
 * padding and block list, and a run through an engine that honours the
 * layout contract (FP64 on the CPU: every listed block pair of the one
 * group, the upper triangle when symmetric, padding rows joining nothing),
 * against the pairs of the subset computed directly from the dataset:
 * every ordered pair of subset rows within eps with a query row among
 * them, and each query row's pair with itself. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "direct_f32.h"
#include "kernels.h"

#define A KERN_STREAM_ALIGN

/* n points on a lattice of step 1/4 (exact in f32; ties at eps). */
static float *points(size_t n, size_t d, uint64_t seed)
{
    float *x = malloc(n * d * sizeof *x);
    for (size_t i = 0; i < n * d; i++)
        x[i] = (float)(t_splitmix(&seed) % 16) * 0.25f;
    return x;
}

/* ---- the engine: the layout's contract, FP64 ---- */

static struct {
    size_t runs, bad; /* runs; rows or blocks against the contract */
    int symmetric;    /* the last run's */
} eng;

static int eng_join(const kern_join_args *a, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    eng.runs++;
    eng.symmetric = a->symmetric;
    if (a->nclu != 1 || a->clu[0] != 0 || a->clu[1] != a->n || a->n % A || !a->origin_of) {
        eng.bad++;
        return KERN_EINVAL;
    }
    const size_t T = a->n / A;
    uint8_t *listed = calloc(T * T, 1);
    for (size_t t = 0; t < a->nblk; t++) {
        const uint32_t I = a->blk[2 * t], J = a->blk[2 * t + 1];
        if (I > J || J >= T || listed[I * T + J])
            eng.bad++;
        else
            listed[I * T + J] = 1;
    }
    const size_t d = a->d;
    double *xi = malloc(d * sizeof *xi), *xj = malloc(d * sizeof *xj);
    uint32_t bi[2], bj[2];
    double bd[2];
    int rc = 0;
    for (size_t q = 0; q < a->n && !rc; q++) {
        if ((a->rows[q] == KERN_ROW_PAD) != (a->origin_of[q] == KERN_ORIGIN_NONE))
            eng.bad++;
        if (a->rows[q] == KERN_ROW_PAD)
            continue;
        const double *pq = kern_row_f64(a, q, xi);
        for (size_t c = q; c < a->n && !rc; c++) {
            if (a->rows[c] == KERN_ROW_PAD || !listed[(q / A) * T + c / A])
                continue;
            const double s = direct_d2_f64(pq, kern_row_f64(a, c, xj), d);
            if (s > a->eps * a->eps)
                continue;
            r->pairs += c == q ? 1 : 2;
            if (a->mode == KJOIN_PAIRS) {
                bi[0] = bj[1] = (uint32_t)q;
                bj[0] = bi[1] = (uint32_t)c;
                bd[0] = bd[1] = s;
                if (a->pair_fn(a->pair_ctx, c == q ? 1 : 2, bi, bj, bd))
                    rc = KERN_ESINK;
            }
        }
    }
    free(listed);
    free(xi);
    free(xj);
    return rc;
}

/* ---- pairs from the sink, as a matrix of the dataset's rows ---- */

typedef struct seen {
    size_t n;
    uint8_t *m; /* n x n: times (i, j) came */
    double *d2;
    size_t bad;
} seen;

static int seen_pairs(void *ctx, size_t np, const uint32_t *pi, const uint32_t *pj,
                      const double *d2)
{
    seen *s = ctx;
    for (size_t t = 0; t < np; t++) {
        if (pi[t] >= s->n || pj[t] >= s->n) {
            s->bad++;
            continue;
        }
        s->m[pi[t] * s->n + pj[t]]++;
        s->d2[pi[t] * s->n + pj[t]] = d2[t];
    }
    return 0;
}

/* sub: nsub distinct rows of n, the first nq queries. The run's pairs and
 * count equal the subset's, computed from the rows. */
static void check_subset(size_t n, size_t d, size_t nsub, size_t nq, double eps, uint64_t seed)
{
    float *x = points(n, d, seed);
    uint32_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (size_t i = n - 1; i > 0; i--) { /* a shuffle: rows in no order */
        const size_t j = t_splitmix(&seed) % (i + 1);
        const uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    uint8_t *role = calloc(n, 1); /* 1 query, 2 other */
    for (size_t i = 0; i < nsub; i++)
        role[perm[i]] = i < nq ? 1 : 2;
    seen s = {n, calloc(n * n, 1), calloc(n * n, sizeof(double)), 0};
    kern_join_args a;
    f32_args(&a, x, n, d);
    a.eps = eps;
    a.mode = KJOIN_PAIRS;
    a.pair_fn = seen_pairs;
    a.pair_ctx = &s;
    a.sub = perm;
    a.nsub = nsub;
    a.sub_q = nq;
    kern_join_result r;
    memset(&eng, 0, sizeof eng);
    const int rc = kern_subset_run(eng_join, &a, &r);
    CHECK_MSG(rc == 0, "kern_subset_run: %d", rc);
    CHECK_MSG(eng.runs == 1 && eng.bad == 0 && eng.symmetric, "%zu runs, %zu against the layout",
              eng.runs, eng.bad);
    CHECK(s.bad == 0);
    uint64_t want = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            const int in = role[i] && role[j] && (role[i] == 1 || role[j] == 1) &&
                           direct_d2(x, d, i, j) <= eps * eps;
            want += in;
            CHECK_MSG(s.m[i * n + j] == in, "pair (%u, %u): came %u times, wanted %d", i, j,
                      s.m[i * n + j], in);
            if (in)
                CHECK(s.d2[i * n + j] == direct_d2(x, d, i, j));
        }
    CHECK_MSG(r.pairs == want, "%llu pairs, wanted %llu", (unsigned long long)r.pairs,
              (unsigned long long)want);
    /* COUNT: the same number */
    a.mode = KJOIN_COUNT;
    a.pair_fn = NULL;
    CHECK(kern_subset_run(eng_join, &a, &r) == 0);
    CHECK_MSG(r.pairs == want, "COUNT %llu, wanted %llu", (unsigned long long)r.pairs,
              (unsigned long long)want);
    free(s.m);
    free(s.d2);
    free(role);
    free(perm);
    free(x);
}

TEST(subset_pairs_equal_the_rows_pairs)
{
    /* queries within one block and across several; others none, a few,
     * and more than the queries; a block boundary exactly */
    check_subset(700, 3, 40, 40, 0.6, 1);
    check_subset(700, 3, 300, 17, 0.6, 2);
    check_subset(700, 3, 700, 300, 0.6, 3);
    check_subset(900, 2, 2 * A, A, 0.5, 4);
    check_subset(900, 5, 600, 599, 1.0, 5);
}

TEST(subset_layout_pads_and_blocks)
{
    float *x = points(1000, 2, 9);
    uint32_t sub[600];
    for (uint32_t i = 0; i < 600; i++)
        sub[i] = 999 - i;
    kern_join_args a;
    f32_args(&a, x, 1000, 2);
    a.sub = sub;
    a.nsub = 600;
    a.sub_q = 300; /* 2 query blocks, 2 others */
    kern_subset_layout L;
    CHECK(kern_subset_layout_make(&a, &L) == 0);
    CHECK(L.n == 4 * A && L.qb == 2 && L.nblk == 3 + 2 * 2);
    for (size_t v = 0; v < L.n; v++) {
        const uint32_t want = v < 300           ? sub[v]
                              : v < 2 * A       ? KERN_ROW_PAD
                              : v < 2 * A + 300 ? sub[300 + v - 2 * A]
                                                : KERN_ROW_PAD;
        CHECK_MSG(L.rows[v] == want, "row %zu: %u, wanted %u", v, L.rows[v], want);
        CHECK(L.origin_of[v] == (want == KERN_ROW_PAD ? KERN_ORIGIN_NONE : 0));
    }
    for (size_t t = 0; t < L.nblk; t++)
        CHECK(L.blk[2 * t] < L.qb && L.blk[2 * t] <= L.blk[2 * t + 1] && L.blk[2 * t + 1] < 4);
    const uint64_t h = L.hash;
    kern_subset_layout_free(&L);
    /* other rows, or another split: another content hash */
    sub[5] = 3;
    CHECK(kern_subset_layout_make(&a, &L) == 0 && L.hash != h);
    kern_subset_layout_free(&L);
    sub[5] = 994;
    a.sub_q = 301;
    CHECK(kern_subset_layout_make(&a, &L) == 0 && L.hash != h);
    kern_subset_layout_free(&L);
    free(x);
}

TEST(subset_bad_input_refused)
{
    float *x = points(100, 2, 3);
    uint32_t sub[4] = {1, 2, 3, 100};
    kern_join_args a;
    f32_args(&a, x, 100, 2);
    a.eps = 1;
    a.mode = KJOIN_COUNT;
    a.sub = sub;
    a.nsub = 4;
    a.sub_q = 2;
    kern_join_result r;
    CHECK(kern_subset_run(eng_join, &a, &r) == KERN_EINVAL); /* row 100 of 100 */
    sub[3] = 4;
    a.sub_q = 0;
    CHECK(kern_subset_run(eng_join, &a, &r) == KERN_EINVAL); /* no query */
    a.sub_q = 5;
    CHECK(kern_subset_run(eng_join, &a, &r) == KERN_EINVAL);
    a.sub_q = 2;
    a.mode = KJOIN_PERPOINT;
    CHECK(kern_subset_run(eng_join, &a, &r) == KERN_EINVAL);
    a.mode = KJOIN_COUNT;
    a.q0 = 1;
    CHECK(kern_subset_run(eng_join, &a, &r) == KERN_EINVAL);
    a.q0 = 0;
    CHECK(kern_subset_run(eng_join, &a, &r) == 0);
    free(x);
}
