/* The host's k-d tree (src/kd_tree.h) against a direct computation:
 * - its shape: every row once, each node's box holding its rows, no leaf
 *   over KD_TREE_LEAF rows (300 equal rows too, which no coordinate cuts),
 *   every leaf but one whole groups of CPU_GROUP rows (no padding);
 * - kd_tree_knn's k-th squared distance and its kl nearest against every
 *   other row's direct (a - b)^2 sorted by (d2, row), bit for bit: the
 *   leaves' SIMD kernels sum each distance in dimension order as the
 *   direct form does; on Gaussian clusters at d = 16, a lattice full of
 *   ties at d = 2, duplicates, d = 1 and d = 40, f32 data, a list of
 *   query rows with an offset, every instruction set the CPU has;
 * - a cancelled search says so;
 * - the tree built with its top levels on the cores equals the one built
 *   on one thread, node for node (uniform 300,000 x 3, clusters with
 *   duplicates at d = 16, equal rows, 300 x 1), and its search stays
 *   exact with the row-wise steps split over threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "err.h"
#include "kd_tree.h"
#include "par.h"

static uint64_t rng;

static double rgauss(void)
{
    const double u = t_unit(&rng), v = t_unit(&rng);
    return sqrt(-2 * log(u > 0 ? u : 0x1p-53)) * cos(2 * M_PI * v);
}

static dataset make(size_t n, size_t d)
{
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.name = "t";
    ds.type = DTYPE_F64;
    ds.v = calloc(n && d ? n * d : 1, sizeof(double));
    return ds;
}
#define X(ds, i, k) (((double *)(ds).v)[(i) * (ds).d + (k)])

static double direct(const dataset *ds, size_t i, size_t j)
{
    double a[64], b[64], s = 0;
    dataset_rows_f64(ds, i, 1, a);
    dataset_rows_f64(ds, j, 1, b);
    for (size_t k = 0; k < ds->d; k++) {
        const double u = a[k] - b[k];
        s = s + u * u;
    }
    return s;
}

typedef struct near {
    double d2;
    uint32_t row;
} near;

static int cmp_near(const void *x, const void *y)
{
    const near *a = x, *b = y;
    if (a->d2 != b->d2)
        return a->d2 < b->d2 ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* The tree's shape; nonzero when wrong. */
static int check_shape(const kd_tree *t, const dataset *ds)
{
    int bad = 0;
    unsigned char *seen = calloc(t->n ? t->n : 1, 1);
    for (size_t p = 0; p < t->n; p++) {
        bad |= t->perm[p] >= t->n || seen[t->perm[p]] || t->pos[t->perm[p]] != p;
        if (t->perm[p] < t->n)
            seen[t->perm[p]] = 1;
    }
    double x[64];
    size_t partial = 0; /* leaves of a part of a group: the tree's last alone */
    for (size_t node = 0; node < t->nn && !bad; node++) {
        if (!t->kid[node]) {
            bad |= t->end[node] - t->beg[node] > KD_TREE_LEAF;
            partial += (t->end[node] - t->beg[node]) % CPU_GROUP != 0;
        }
        for (uint32_t p = t->beg[node]; p < t->end[node]; p++) {
            dataset_rows_f64(ds, t->perm[p], 1, x);
            for (size_t k = 0; k < t->d; k++)
                bad |= !(t->lo[node * t->d + k] <= x[k] && x[k] <= t->hi[node * t->d + k]);
        }
    }
    free(seen);
    bad |= partial > 1;
    if (bad)
        printf("# the tree's shape is wrong (%zu leaves of part of a group)\n", partial);
    return bad;
}

/* kd_tree_knn over rows (NULL: all) against the direct form, on ops;
 * nonzero when anything differs. */
static int check_knn(const dataset *ds, const cpu_simd_ops *ops, int k, size_t kl,
                     const uint32_t *rows, size_t nrows, size_t q0, const char *what)
{
    kd_tree t;
    if (kd_tree_build(ds, ops, &t)) {
        printf("# %s: %s\n", what, err_msg());
        return 1;
    }
    int bad = check_shape(&t, ds);
    const size_t n = ds->n, nq = rows ? nrows : n;
    double *out = malloc(n * sizeof *out);
    uint32_t *nb = malloc((n * kl + 1) * sizeof *nb);
    double *nd2 = malloc((n * kl + 1) * sizeof *nd2);
    near *all = malloc(n * sizeof *all);
    uint64_t ex = 0;
    bad |= kd_tree_knn(&t, rows, nrows, q0, k, out, kl, nb, nd2, 2, NULL, &ex) != 0;
    for (size_t r = 0; r < nq && !bad; r++) {
        const size_t i = rows ? rows[r] : r, at = i - q0;
        size_t m = 0;
        for (size_t j = 0; j < n; j++)
            if (j != i)
                all[m++] = (near){direct(ds, i, j), (uint32_t)j};
        qsort(all, m, sizeof *all, cmp_near);
        const double want = (size_t)k <= m ? all[k - 1].d2 : INFINITY;
        if (memcmp(&out[at], &want, sizeof want)) {
            printf("# %s (%s): row %zu: k-th %.17g, want %.17g\n", what, ops->name, i, out[at],
                   want);
            bad = 1;
        }
        for (size_t q = 0; q < kl && !bad; q++) {
            const near w = q < m ? all[q] : (near){INFINITY, UINT32_MAX};
            if (nb[at * kl + q] != w.row || memcmp(&nd2[at * kl + q], &w.d2, sizeof w.d2)) {
                printf("# %s (%s): row %zu nearest %zu: %u at %.17g, want %u at %.17g\n", what,
                       ops->name, i, q, nb[at * kl + q], nd2[at * kl + q], w.row, w.d2);
                bad = 1;
            }
        }
    }
    if (!bad && ex > (uint64_t)nq * n)
        bad = printf("# %s: %llu distances for %zu rows of %zu\n", what, (unsigned long long)ex, nq,
                     n) > 0;
    free(out);
    free(nb);
    free(nd2);
    free(all);
    kd_tree_free(&t);
    return bad;
}

/* Every instruction set this CPU has. */
static int check_all(const dataset *ds, int k, size_t kl, const char *what)
{
    int bad = 0;
    for (int isa = CPU_SIMD_SCALAR; isa < CPU_SIMD_NISA; isa++)
        if (cpu_simd_has(isa))
            bad |= check_knn(ds, cpu_simd_get(isa), k, kl, NULL, 0, 0, what);
    return bad;
}

TEST(knn_equals_the_direct_form)
{
    rng = 11;
    { /* Gaussian clusters of three widths at d = 16 */
        dataset ds = make(2500, 16);
        const double sd[3] = {0.02, 0.1, 0.4};
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < ds.d; k++)
                X(ds, i, k) = (double)(i % 5) * 0.3 + sd[i % 3] * rgauss();
        CHECK(!check_all(&ds, 9, 11, "clusters d=16"));
        CHECK(!check_all(&ds, 1, 1, "clusters d=16 K=1"));
        free(ds.v);
    }
    { /* a lattice of step 1 at d = 2: every distance tied many times */
        dataset ds = make(1600, 2);
        for (size_t i = 0; i < ds.n; i++) {
            X(ds, i, 0) = (double)(i % 40);
            X(ds, i, 1) = (double)(i / 40);
        }
        CHECK(!check_all(&ds, 4, 12, "lattice"));
        free(ds.v);
    }
    { /* 300 equal rows among 200 others: leaves cut where no coordinate does */
        dataset ds = make(500, 3);
        for (size_t i = 0; i < ds.n; i++)
            for (size_t k = 0; k < ds.d; k++)
                X(ds, i, k) = i < 300 ? 0.5 : t_unit(&rng);
        CHECK(!check_all(&ds, 5, 7, "duplicates"));
        CHECK(!check_all(&ds, 299, 301, "duplicates K=299"));
        free(ds.v);
    }
    { /* one dimension; forty */
        dataset a = make(700, 1), b = make(600, 40);
        for (size_t i = 0; i < a.n; i++)
            X(a, i, 0) = rgauss();
        for (size_t i = 0; i < b.n * b.d; i++)
            ((double *)b.v)[i] = t_unit(&rng);
        CHECK(!check_all(&a, 3, 4, "d=1"));
        CHECK(!check_all(&b, 6, 8, "d=40"));
        free(a.v);
        free(b.v);
    }
}

TEST(knn_of_f32_data_and_of_listed_rows)
{
    rng = 29;
    dataset ds = {0};
    ds.n = 1200;
    ds.d = 5;
    ds.name = "f32";
    ds.type = DTYPE_F32;
    float *v = malloc(ds.n * ds.d * sizeof *v);
    for (size_t i = 0; i < ds.n * ds.d; i++)
        v[i] = (float)(100.0 + rgauss()); /* an offset: the widening is exact */
    ds.v = v;
    CHECK(!check_all(&ds, 7, 9, "f32"));
    /* every third row of 300 .. 899, written at row - 300 */
    uint32_t rows[200];
    for (size_t r = 0; r < 200; r++)
        rows[r] = (uint32_t)(300 + 3 * r);
    CHECK(!check_knn(&ds, cpu_simd_get(CPU_SIMD_AUTO), 4, 6, rows, 200, 300, "listed rows"));
    free(v);
}

TEST(a_cancelled_search_says_so)
{
    dataset ds = make(3000, 4);
    rng = 5;
    for (size_t i = 0; i < ds.n * ds.d; i++)
        ((double *)ds.v)[i] = t_unit(&rng);
    kd_tree t;
    CHECK_EQ_INT(kd_tree_build(&ds, cpu_simd_get(CPU_SIMD_AUTO), &t), 0);
    double *out = malloc(ds.n * sizeof *out);
    volatile int cancel = 1;
    CHECK_EQ_INT(kd_tree_knn(&t, NULL, 0, 0, 3, out, 0, NULL, NULL, 2, &cancel, NULL), TCJ_ECANCEL);
    free(out);
    kd_tree_free(&t);
    free(ds.v);
}

/* The tree built with its top levels on the cores equals the one built
 * on one thread (kd_build alone), node for node: the same positions, node
 * ranges, children, boxes, groups and rows. */
static void same_tree(const kd_tree *a, const kd_tree *b, const char *what)
{
    const size_t d = a->d ? a->d : 1;
    CHECK_MSG(a->nn == b->nn && a->depth == b->depth,
              "%s: %zu nodes, depth %zu; one thread %zu, %zu", what, b->nn, b->depth, a->nn,
              a->depth);
    if (a->nn != b->nn)
        return;
    size_t bad = 0, ng = 0;
    for (size_t p = 0; p < a->n; p++)
        bad += a->perm[p] != b->perm[p] || a->pos[p] != b->pos[p];
    for (size_t t = 0; t < a->nn; t++) {
        bad += a->beg[t] != b->beg[t] || a->end[t] != b->end[t] || a->kid[t] != b->kid[t];
        bad += memcmp(a->lo + t * d, b->lo + t * d, d * sizeof(double)) != 0;
        bad += memcmp(a->hi + t * d, b->hi + t * d, d * sizeof(double)) != 0;
        if (!a->kid[t]) {
            bad += a->grp[t] != b->grp[t];
            ng += (a->end[t] - a->beg[t] + CPU_GROUP - 1) / CPU_GROUP;
        }
    }
    bad += memcmp(a->gx, b->gx, ng * CPU_GROUP * a->d * sizeof(double)) != 0;
    CHECK_MSG(bad == 0, "%s: %zu entries differ from the one-thread tree", what, bad);
}

static void levels_case(const dataset *ds, const char *what)
{
    const cpu_simd_ops *ops = cpu_simd_get(CPU_SIMD_AUTO);
    kd_tree one, t;
    CHECK(kd_tree_build_levels(ds, ops, &one, 0) == 0);
    for (int l = 1; l <= 4; l++) {
        char w[96];
        snprintf(w, sizeof w, "%s, %d levels", what, l);
        CHECK(kd_tree_build_levels(ds, ops, &t, l) == 0);
        same_tree(&one, &t, w);
        kd_tree_free(&t);
    }
    CHECK(kd_tree_build(ds, ops, &t) == 0); /* its own levels by n */
    same_tree(&one, &t, what);
    kd_tree_free(&t);
    kd_tree_free(&one);
}

TEST(top_levels_on_the_cores_build_the_same_tree)
{
    rng = 41;
    dataset u = make(300000, 3); /* kd_tree_build takes 4 levels */
    for (size_t i = 0; i < u.n * u.d; i++)
        X(u, i / u.d, i % u.d) = t_unit(&rng);
    levels_case(&u, "uniform 300000 x 3");
    free(u.v);
    dataset g = make(40000, 16); /* clusters, with runs of equal rows */
    for (size_t i = 0; i < g.n; i++)
        for (size_t k = 0; k < g.d; k++)
            X(g, i, k) = i % 7 == 0 ? 1.0 : (double)(i % 5) + 0.1 * rgauss();
    levels_case(&g, "gauss 40000 x 16 with duplicates");
    free(g.v);
    dataset e = make(5000, 2); /* every row the same: no coordinate cuts */
    for (size_t i = 0; i < e.n * e.d; i++)
        X(e, i / e.d, i % e.d) = 3.0;
    levels_case(&e, "5000 equal rows");
    dataset s = make(300, 1); /* top nodes that are leaves */
    for (size_t i = 0; i < s.n; i++)
        X(s, i, 0) = t_unit(&rng);
    levels_case(&s, "300 x 1");
    free(s.v);
    free(e.v);
    /* the row-wise steps (FP64 rows, the leaves' groups, positions) split
     * over threads even at this size: the search still exact */
    par_for_tests(1);
    dataset c = make(3000, 4);
    for (size_t i = 0; i < c.n * c.d; i++)
        X(c, i / c.d, i % c.d) = rgauss();
    CHECK(!check_all(&c, 5, 7, "3000 x 4, rows split"));
    par_for_tests(0);
    free(c.v);
}
