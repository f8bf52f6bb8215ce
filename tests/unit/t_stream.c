/* kern_stream_run: a dataset larger than the device, streamed in row
 * chunks (kernels/kern_stream.c). The driver is pure host code over any
 * engine entry, so it is tested here over an FP64 CPU engine that keeps
 * the kern_join_args contract (cross runs included) and refuses, as a
 * device would, a run holding more rows than a set budget. Every output
 * mode of the streamed run is checked against an independent brute force
 * over the whole dataset (direct (a-b)^2 in FP64, every ordered pair):
 * counts, per-point counts, the pair multiset with distances bit for bit,
 * the histogram. Also: the cross layout of the row helpers (padding rows
 * are zeros, candidates come from xc), an engine that runs symmetric cross
 * runs one way (fp64's way), symmetric off, a budget no chunk fits, a run
 * that sank pairs before it failed (not redone), and progress. An engine
 * that takes no cross run (the grid engines' KERN_ECROSS) is cut in slabs
 * of the rows sorted along their widest dimension: every mode against the
 * same brute force on point clouds whose pairs at exactly eps cross slab
 * ends (with and without a large common offset), a reach that no run can
 * hold, and a value no slab can hold. The cluster cut (kern_cluster_run,
 * exact's cluster path) is checked the same way on blobs of points, two
 * of them exactly eps apart at their nearest, the rest far: every mode
 * equals the brute force in one run over the layout of the groups (the
 * engine joins only rows of one group, never padding), each row centred
 * on its group's origin; the rule cuts only where the groups hold at most
 * half the pairs; uniform points, too few rows or a value not finite
 * leave the run whole; the layout TCJOIN_TRACE=cut-dump=FILE writes holds
 * every row once, grouped as the blobs are. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "direct_f32.h"
#include "kernels.h"

/* ---- the data: f32 values (the driver hands rows in their own type) ---- */

/* n points in d dimensions on a lattice of step 1/4 (exact in f32; many
 * distances fall exactly on eps = 1), with some duplicated points. */
static float *make_points(size_t n, size_t d, unsigned seed)
{
    float *x = malloc(n * d * sizeof *x);
    unsigned s = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            s = s * 1103515245u + 12345u;
            x[i * d + k] = (float)((s >> 16) % 24) * 0.25f;
        }
    for (size_t i = 7; i < n; i += 97) /* duplicates */
        memcpy(x + i * d, x + (i - 5) * d, d * sizeof *x);
    return x;
}

/* ---- the engine: FP64 on the CPU, the kernels' contract ---- */

static struct {
    size_t cap_rows;   /* a run holding more rows fails as a full device does */
    int honour_sym;    /* 0: ignores symmetric, as fp64 does */
    int sink_then_oom; /* PAIRS: emits one batch, then fails for memory */
    int no_cross;      /* takes no cross run, as the grid engines (KERN_ECROSS) */
    int dim0;          /* the first dimension of the last run's dim_order */
    size_t runs, max_rows, cross_runs;
    double max_dev; /* the largest |x_k - center_k| of a centred run's rows */
    size_t layout_runs;
    /* the tile cut: runs with a block list, block pairs out of order or
     * out of range, and pairs left out of the list though within eps */
    size_t tile_runs, bad_blk, skipped_within;
} eng;

/* A cluster layout's cluster of run row v (kern_join_args.clu), or -1 for
 * its padding rows, which join nothing. */
static int eng_cluster(const kern_join_args *a, size_t v)
{
    if (a->rows[v] == KERN_ROW_PAD)
        return -1;
    int c = 0;
    while (v >= a->clu[c + 1])
        c++;
    return c;
}

static int eng_emit(const kern_join_args *a, uint32_t *bi, uint32_t *bj, double *bd, size_t *nb,
                    uint32_t i, uint32_t j, double d2)
{
    bi[*nb] = i;
    bj[*nb] = j;
    bd[*nb] = d2;
    if (++*nb == 64) {
        int rc = a->pair_fn(a->pair_ctx, *nb, bi, bj, bd);
        *nb = 0;
        if (rc)
            return KERN_ESINK;
    }
    return 0;
}

static size_t eng_slot(const kern_join_args *a, double d2)
{
    size_t b = 0;
    while (b <= a->hist_nbins && d2 > a->hist_edges[b])
        b++;
    return b; /* 0: below edges[0]; b: bin b - 1 */
}

/* One found pair (q, c) with weight w (2: both orders). */
static int eng_found(const kern_join_args *a, kern_join_result *r, uint64_t *hist, uint32_t *bi,
                     uint32_t *bj, double *bd, size_t *nb, uint32_t q, uint32_t c, double d2, int w)
{
    switch (a->mode) {
    case KJOIN_COUNT:
        r->pairs += (uint64_t)w;
        return 0;
    case KJOIN_PERPOINT:
        a->counts[q - a->q0]++;
        if (w == 2)
            a->counts[c - a->q0]++;
        return 0;
    case KJOIN_PAIRS: {
        r->pairs += (uint64_t)w;
        int rc = eng_emit(a, bi, bj, bd, nb, q, c, d2);
        if (!rc && w == 2)
            rc = eng_emit(a, bi, bj, bd, nb, c, q, d2);
        return rc;
    }
    default:
        hist[eng_slot(a, d2)] += (uint64_t)w;
        return 0;
    }
}

static int eng_join(const kern_join_args *a, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    eng.runs++;
    if (a->c0)
        eng.cross_runs++;
    if (a->c0 && eng.no_cross) /* before any allocation, as ted-index's entry */
        return kern_fail_msg(KERN_ECROSS, "this engine takes no cross run");
    if (a->n > eng.max_rows && a->n <= eng.cap_rows)
        eng.max_rows = a->n; /* the largest run that fit */
    if (a->dim_order)
        eng.dim0 = a->dim_order[0];
    const size_t n = a->n, d = a->d, nh = a->hist_nbins + 2;
    for (size_t i = 0; i < n; i++) {
        const void *row = kern_row_ptr(a, i);
        const double *center = kern_row_center(a, i);
        for (size_t k = 0; row && center && k < d; k++) {
            const double v = fabs((double)((const float *)row)[k] - center[k]);
            eng.max_dev = v > eng.max_dev ? v : eng.max_dev;
        }
    }
    if (a->nclu)
        eng.layout_runs++;
    uint32_t bi[64], bj[64];
    double bd[64];
    size_t nb = 0;
    if (eng.sink_then_oom && a->mode == KJOIN_PAIRS) {
        bi[0] = bj[0] = 0;
        bd[0] = 0;
        a->pair_fn(a->pair_ctx, 1, bi, bj, bd);
        return KERN_ENOMEM;
    }
    if (n > eng.cap_rows)
        return KERN_ENOMEM;
    const int sym = eng.honour_sym && a->symmetric && a->q0 == 0 && (a->q1 == n || a->c0);
    r->symmetric = sym;
    uint64_t *hist = calloc(nh, sizeof *hist);
    double *xi = malloc(d * sizeof *xi), *xj = malloc(d * sizeof *xj);
    if (a->mode == KJOIN_PERPOINT)
        memset(a->counts, 0, kern_count_rows(a) * sizeof *a->counts);
    const double eps2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    /* A tile cut's list: which pairs of KERN_STREAM_ALIGN-row blocks join. */
    const size_t A = KERN_STREAM_ALIGN, T = a->nblk ? n / A : 0;
    uint8_t *listed = a->nblk ? calloc(T * T, 1) : NULL;
    if (a->nblk)
        eng.tile_runs++;
    for (size_t t = 0; t < a->nblk; t++) {
        const uint32_t I = a->blk[2 * t], J = a->blk[2 * t + 1];
        if (I > J || J >= T || n % A) {
            eng.bad_blk++;
            continue;
        }
        listed[I * T + J] = listed[J * T + I] = 1;
    }
    int rc = 0;
    for (size_t q = a->q0; q < a->q1 && !rc; q++) {
        const size_t c_lo = a->c0 ? a->c0 : sym ? q : 0;
        const double *pq = kern_row_f64(a, q, xi);
        for (size_t c = c_lo; c < n && !rc; c++) {
            /* A layout joins rows within one cluster, its padding none. */
            if (a->nclu && (eng_cluster(a, q) < 0 || eng_cluster(a, q) != eng_cluster(a, c)))
                continue;
            const double s = direct_d2_f64(pq, kern_row_f64(a, c, xj), d);
            /* A tile cut joins the listed block pairs only; what it
             * leaves out must be farther apart than eps. */
            if (listed && !listed[(q / A) * T + c / A]) {
                eng.skipped_within += s <= eps2;
                continue;
            }
            if (s <= eps2)
                rc = eng_found(a, r, hist, bi, bj, bd, &nb, (uint32_t)q, (uint32_t)c, s,
                               sym && c != q ? 2 : 1);
        }
        if (a->progress)
            a->progress(a->progress_ctx, (double)(q + 1 - a->q0) / (double)(a->q1 - a->q0));
    }
    if (!rc && nb && a->mode == KJOIN_PAIRS && a->pair_fn(a->pair_ctx, nb, bi, bj, bd))
        rc = KERN_ESINK;
    if (a->mode == KJOIN_PERPOINT)
        for (size_t i = 0; i < kern_count_rows(a); i++)
            r->pairs += a->counts[i];
    if (a->mode == KJOIN_HIST) {
        *a->hist_below = hist[0];
        for (size_t b = 0; b < a->hist_nbins; b++)
            a->hist[b] = hist[b + 1];
        for (size_t b = 0; b <= a->hist_nbins; b++)
            r->pairs += hist[b];
    }
    r->launches = 1;
    free(listed);
    free(hist);
    free(xi);
    free(xj);
    return rc;
}

/* ---- pairs collected from the sink ---- */

typedef struct prec {
    uint32_t i, j;
    double d2;
} prec;

typedef struct pset {
    prec *v;
    size_t n, cap;
} pset;

static int pset_put(void *ctx, size_t k, const uint32_t *i, const uint32_t *j, const double *d2)
{
    pset *p = ctx;
    if (p->n + k > p->cap) {
        p->cap = (p->n + k) * 2;
        p->v = realloc(p->v, p->cap * sizeof *p->v);
    }
    for (size_t t = 0; t < k; t++)
        p->v[p->n++] = (prec){i[t], j[t], d2[t]};
    return 0;
}

static int prec_cmp(const void *a, const void *b)
{
    const prec *x = a, *y = b;
    if (x->i != y->i)
        return x->i < y->i ? -1 : 1;
    if (x->j != y->j)
        return x->j < y->j ? -1 : 1;
    return 0;
}

/* ---- the reference: every ordered pair of the whole dataset ---- */

typedef struct expect {
    uint64_t count, *counts, hist[6], below;
    pset pairs;
} expect;

static const double edges[6] = {0.0, 0.25, 0.5, 0.75, 0.875, 1.0};

static void expect_make(const float *x, size_t n, size_t d, double eps, expect *e)
{
    memset(e, 0, sizeof *e);
    e->counts = calloc(n, sizeof *e->counts);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            const double s = direct_d2(x, d, i, j);
            if (s <= eps * eps) {
                e->count++;
                e->counts[i]++;
                uint32_t ii = (uint32_t)i, jj = (uint32_t)j;
                pset_put(&e->pairs, 1, &ii, &jj, &s);
            }
            if (s <= edges[5]) {
                size_t b = 0;
                while (s > edges[b])
                    b++;
                if (b == 0)
                    e->below++;
                else
                    e->hist[b - 1]++;
            }
        }
    qsort(e->pairs.v, e->pairs.n, sizeof(prec), prec_cmp);
}

static void expect_free(expect *e)
{
    free(e->counts);
    free(e->pairs.v);
}

static double last_frac;
static int frac_ok;
static void on_progress(void *ctx, double f)
{
    (void)ctx;
    if (f < last_frac - 1e-12 || f < 0 || f > 1)
        frac_ok = 0;
    last_frac = f;
}

static void args_for(kern_join_args *a, const float *x, size_t n, size_t d, double eps, int mode,
                     int sym)
{
    f32_args(a, x, n, d);
    a->eps = eps;
    a->mode = mode;
    a->symmetric = sym;
    a->progress = on_progress;
}

/* The driver run_all_modes calls: kern_stream_run, or (cut_min_rows > 0)
 * the cluster cut with clusters of cut_min_rows rows, or (cut_tiles) the
 * tile cut, forced or by its rule (cut_force); cut_center the runs'
 * centre (NULL: none). */
static size_t cut_min_rows;
static int cut_force, cut_tiles;
static const double *cut_center;
static int drive(const kern_join_args *a, kern_join_result *r)
{
    if (cut_tiles)
        return kern_tiles_run(eng_join, eng_join, a, r, cut_force);
    if (cut_min_rows == 0)
        return kern_stream_run(eng_join, a, r);
    return kern_cluster_run(eng_join, a, r, cut_force, cut_min_rows);
}

/* Run every mode streamed and check each against e; *r the last run's. */
static int run_all_modes(const float *x, size_t n, size_t d, double eps, int sym, const expect *e,
                         kern_join_result *r, unsigned *chunks)
{
    for (int mode = KJOIN_COUNT; mode <= KJOIN_HIST; mode++) {
        kern_join_args a;
        args_for(&a, x, n, d, eps, mode, sym);
        a.center = cut_center;
        if (cut_min_rows || cut_tiles) {
            /* The content's hash, as the app's: the cuts keep their
             * clustering and order by it, and the cases reuse their
             * buffers' addresses. */
            uint64_t h = 14695981039346656037ull;
            for (size_t b = 0; b < n * d * sizeof *x; b++)
                h = (h ^ ((const unsigned char *)x)[b]) * 1099511628211ull;
            a.hash = h;
        }
        uint64_t *counts = calloc(n, sizeof *counts), hist[5] = {0}, below = 0;
        pset ps = {0};
        a.counts = counts;
        a.pair_fn = pset_put;
        a.pair_ctx = &ps;
        a.hist_edges = edges;
        a.hist_nbins = 5;
        a.hist = hist;
        a.hist_below = &below;
        last_frac = 0;
        frac_ok = 1;
        int rc = drive(&a, r);
        int ok = rc == KERN_OK && frac_ok && last_frac > 1 - 1e-9;
        if (!ok)
            fprintf(stderr, "mode %d: rc %d, progress ok %d, last %.17g\n", mode, rc, frac_ok,
                    last_frac);
        switch (mode) {
        case KJOIN_COUNT:
            ok = ok && r->pairs == e->count;
            break;
        case KJOIN_PERPOINT:
            ok = ok && r->pairs == e->count && !memcmp(counts, e->counts, n * sizeof *counts);
            break;
        case KJOIN_PAIRS:
            qsort(ps.v, ps.n, sizeof(prec), prec_cmp);
            ok = ok && ps.n == e->pairs.n;
            for (size_t t = 0; ok && t < ps.n; t++)
                ok = ps.v[t].i == e->pairs.v[t].i && ps.v[t].j == e->pairs.v[t].j &&
                     ps.v[t].d2 == e->pairs.v[t].d2; /* bit for bit */
            break;
        default:
            ok = ok && below == e->below && !memcmp(hist, e->hist, sizeof hist);
            break;
        }
        if (!ok)
            fprintf(stderr, "mode %d differs from the whole run (pairs %llu, expected %llu)\n",
                    mode, (unsigned long long)r->pairs, (unsigned long long)e->count);
        *chunks = r->chunks;
        free(counts);
        free(ps.v);
        if (!ok)
            return 0;
    }
    return 1;
}

static void eng_reset(size_t cap_rows, int honour_sym)
{
    memset(&eng, 0, sizeof eng);
    eng.cap_rows = cap_rows;
    eng.honour_sym = honour_sym;
}

/* ---- the cases ---- */

TEST(cross_rows_layout)
{
    /* Queries [0, 3) from x, padding [3, 256), candidates [256, 260) from xc. */
    const size_t d = 2;
    float q[6] = {1, 2, 3, 4, 5, 6}, c[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    kern_join_args a;
    args_for(&a, q, 260, d, 1, KJOIN_COUNT, 1);
    a.q1 = 3;
    a.c0 = 256;
    a.xc = c;
    double buf[260 * 2], one[2];
    kern_rows_f64(&a, 0, 260, buf);
    for (size_t k = 0; k < 6; k++)
        CHECK(buf[k] == q[k]);
    for (size_t k = 6; k < 512; k++)
        CHECK(buf[k] == 0);
    for (size_t k = 0; k < 8; k++)
        CHECK(buf[512 + k] == c[k]);
    const double *p = kern_row_f64(&a, 257, one);
    CHECK(p[0] == 12 && p[1] == 13);
    p = kern_row_f64(&a, 100, one);
    CHECK(p[0] == 0 && p[1] == 0);
    CHECK_EQ_INT(kern_count_rows(&a), 260);
    a.symmetric = 0;
    CHECK_EQ_INT(kern_count_rows(&a), 3);
}

TEST(fits_not_streamed)
{
    const size_t n = 300, d = 3;
    float *x = make_points(n, d, 7);
    expect e;
    expect_make(x, n, d, 1.0, &e);
    eng_reset(n, 1);
    kern_join_result r;
    unsigned chunks = 9;
    CHECK(run_all_modes(x, n, d, 1.0, 1, &e, &r, &chunks));
    CHECK_EQ_INT(chunks, 0);
    CHECK_EQ_INT(eng.cross_runs, 0);
    expect_free(&e);
    free(x);
}

/* One streamed case: n points in d dimensions (seed), every mode at eps
 * against the whole-dataset reference, the engine holding at most
 * cap_rows rows (honour: it runs symmetric joins symmetric). 1 when every
 * mode matched; *r the last run's result, *npairs the reference count. */
static int streamed_case(size_t n, size_t d, unsigned seed, double eps, size_t cap_rows, int honour,
                         int sym, kern_join_result *r, uint64_t *npairs)
{
    float *x = make_points(n, d, seed);
    expect e;
    expect_make(x, n, d, eps, &e);
    *npairs = e.count;
    eng_reset(cap_rows, honour);
    unsigned chunks = 0;
    const int ok = run_all_modes(x, n, d, eps, sym, &e, r, &chunks);
    expect_free(&e);
    free(x);
    return ok;
}

TEST(streamed_thirds_symmetric)
{
    /* 2000 rows, room for 1600: chunks of 768 rows (a third, rounded up to
     * 256), the last 464; a cross run holds 1536. */
    kern_join_result r;
    uint64_t np;
    CHECK(streamed_case(2000, 2, 11, 1.0, 1600, 1, 1, &r, &np));
    CHECK(np > 2 * 2000); /* the join holds more than the self-pairs */
    CHECK_EQ_INT(r.chunks, 3);
    CHECK_EQ_INT(r.chunk_rows, 768);
    CHECK_EQ_INT(r.chunk_runs, 6); /* three cross runs, three chunks' own */
    CHECK(r.symmetric);
    CHECK_EQ_INT(eng.max_rows, 1536); /* the largest run: a cross run of two full chunks */
}

TEST(streamed_halved_until_fits)
{
    /* Room for 600 rows: 512-row chunks (a cross run holds all 1000) fail,
     * 256 fit. */
    kern_join_result r;
    uint64_t np;
    CHECK(streamed_case(1000, 4, 13, 1.0, 600, 1, 1, &r, &np));
    CHECK_EQ_INT(r.chunks, 4);
    CHECK_EQ_INT(r.chunk_rows, 256);
    CHECK_EQ_INT(r.chunk_runs, 4 * 3 / 2 + 4);
    CHECK_EQ_INT(eng.max_rows, 512);
}

TEST(streamed_engine_one_way)
{
    /* An engine that runs every join unsymmetric (fp64): each cross run is
     * also run the other way round. */
    kern_join_result r;
    uint64_t np;
    CHECK(streamed_case(1000, 3, 17, 1.0, 600, 0, 1, &r, &np));
    CHECK_EQ_INT(r.chunks, 4);
    CHECK_EQ_INT(r.chunk_runs, 16); /* every ordered pair of chunks, and each chunk's own */
    CHECK(!r.symmetric);
}

TEST(streamed_symmetric_off)
{
    kern_join_result r;
    uint64_t np;
    CHECK(streamed_case(800, 2, 19, 0.75, 700, 1, 0, &r, &np));
    CHECK_EQ_INT(r.chunks, 4); /* 512-row chunks: a cross run holds all 800; 256 */
    CHECK_EQ_INT(r.chunk_runs, 16);
}

TEST(nothing_fits_fails_for_memory)
{
    const size_t n = 600, d = 2;
    float *x = make_points(n, d, 23);
    eng_reset(200, 1); /* not even one 256-row chunk */
    kern_join_args a;
    args_for(&a, x, n, d, 1.0, KJOIN_COUNT, 1);
    kern_join_result r;
    CHECK_EQ_INT(kern_stream_run(eng_join, &a, &r), KERN_ENOMEM);
    free(x);
}

/* A symmetric PAIRS run of x at eps 1 into ps, streamed over eng. */
static int pairs_at_eps1(const float *x, size_t n, size_t d, pset *ps)
{
    kern_join_args a;
    args_for(&a, x, n, d, 1.0, KJOIN_PAIRS, 1);
    a.pair_fn = pset_put;
    a.pair_ctx = ps;
    kern_join_result r;
    return kern_stream_run(eng_join, &a, &r);
}

TEST(sunk_pairs_not_redone)
{
    /* A run that handed pairs to the sink and then failed is not run
     * again in chunks: the sink would see those pairs twice. */
    const size_t n = 600, d = 2;
    float *x = make_points(n, d, 29);
    eng_reset(n, 1);
    eng.sink_then_oom = 1;
    pset ps = {0};
    CHECK_EQ_INT(pairs_at_eps1(x, n, d, &ps), KERN_ENOMEM);
    CHECK_EQ_INT(eng.runs, 1);
    CHECK_EQ_INT(ps.n, 1);
    free(ps.v);
    free(x);
}

/* ---- the slab cut: an engine that takes no cross run ---- */

/* A long 3-D point cloud: dimension 1 spans [0, 60), the others [0, 3),
 * on a lattice of step 1/4 (exact in f32 even at the offset: many pairs
 * at exactly eps = 1, across slab ends too), plus offset everywhere and
 * some duplicated points. */
static float *make_cloud(size_t n, unsigned seed, float offset)
{
    float *x = malloc(n * 3 * sizeof *x);
    unsigned s = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 3; k++) {
            s = s * 1103515245u + 12345u;
            x[i * 3 + k] = offset + (float)((s >> 16) % (k == 1 ? 240 : 12)) * 0.25f;
        }
    for (size_t i = 11; i < n; i += 89)
        memcpy(x + i * 3, x + (i - 3) * 3, 3 * sizeof *x);
    return x;
}

/* The cloud streamed in slabs under a budget of cap rows, every mode,
 * symmetric on and off, against the whole-dataset brute force. */
static int slab_case(size_t n, float offset, size_t cap, kern_join_result *r)
{
    float *x = make_cloud(n, 41, offset);
    expect e;
    expect_make(x, n, 3, 1.0, &e);
    unsigned chunks = 0;
    int ok = e.count > 4 * n; /* more than the self-pairs and duplicates */
    for (int sym = 1; sym >= 0 && ok; sym--) {
        eng_reset(cap, 0);
        eng.no_cross = 1;
        ok = run_all_modes(x, n, 3, 1.0, sym, &e, r, &chunks);
    }
    expect_free(&e);
    free(x);
    return ok;
}

TEST(slabs_when_the_engine_takes_no_cross_run)
{
    /* 3000 rows, room for 1200: two slabs of 1536 (a run of 1536 and its
     * reach) do not fit; slabs of 768 rows, about 50 rows a unit of
     * dimension 1 within reach on either side, do. */
    kern_join_result r;
    CHECK(slab_case(3000, 0.0f, 1200, &r));
    CHECK(r.slabs);
    CHECK_EQ_INT(r.slab_dim, 1); /* the widest dimension */
    CHECK_EQ_INT(eng.dim0, 1);   /* every run is handed the whole's dimension order */
    CHECK_EQ_INT(r.chunks, 4);
    CHECK_EQ_INT(r.chunk_rows, 768);
    CHECK_EQ_INT(r.chunk_runs, 4); /* a run per slab: no cross run, no second order */
    CHECK(!r.symmetric);
    CHECK(eng.max_rows <= 1200 && eng.max_rows > 768);
    /* The reach: each inner slab end brings the rows within eps of it on
     * the far side (about 50 a unit, ties at the end included); the
     * three ends, both ways. */
    CHECK(r.halo_rows >= 6 * 40 && r.halo_rows <= 6 * 100);
    CHECK(eng.cross_runs >= 1); /* the refused cross run that chose the slabs */
}

TEST(slabs_at_a_large_negative_offset)
{
    /* Every value near -1e4: negative sort keys in order, the widest
     * dimension found under a common offset 10^4 times the spread, and a
     * reach that grows with the norms (ted-index's dot-product error). */
    kern_join_result r;
    CHECK(slab_case(3000, -10000.0f, 1200, &r));
    CHECK(r.slabs && r.slab_dim == 1 && r.chunks == 4);
}

TEST(slabs_whose_reach_never_fits_fail_for_memory)
{
    /* The lattice of make_points spans 6 units in every dimension at eps
     * 1: a slab of 256 rows and the rows within reach are over half of
     * them, more than the budget of 500. One line says why. */
    const size_t n = 1200, d = 2;
    float *x = make_points(n, d, 43);
    eng_reset(500, 0);
    eng.no_cross = 1;
    pset ps = {0};
    CHECK_EQ_INT(pairs_at_eps1(x, n, d, &ps), KERN_ENOMEM);
    CHECK_EQ_INT(ps.n, 0);
    CHECK_MSG(strstr(kern_error(), "slabs of 256 rows") && !strchr(kern_error(), '\n'), "%s",
              kern_error());
    free(ps.v);
    free(x);
}

TEST(slabs_refuse_a_value_no_slab_holds)
{
    const size_t n = 1000;
    float *x = make_cloud(n, 47, 0.0f);
    x[3 * 517 + 2] = 0.0f / 0.0f;
    eng_reset(600, 0);
    eng.no_cross = 1;
    kern_join_args a;
    args_for(&a, x, n, 3, 1.0, KJOIN_COUNT, 1);
    kern_join_result r;
    CHECK_EQ_INT(kern_stream_run(eng_join, &a, &r), KERN_ENOMEM);
    CHECK_MSG(strstr(kern_error(), "row 517, column 2 is not finite"), "%s", kern_error());
    free(x);
}

/* ---- the cluster cut ---- */

/* Points in blobs (lattice step 1/4 in [0, 1.5]^3, so distances fall
 * exactly on eps = 1), row i in blob blob_of(i): A at the origin; B 2.5
 * along the first axis, so A's and B's nearest points are exactly 1
 * apart; C, D and E 20 or more from every other. */
static float *make_blobs(size_t n, unsigned seed, int (*blob_of)(size_t))
{
    static const float off[5][3] = {{0, 0, 0}, {2.5f, 0, 0}, {20, 0, 0}, {0, 20, 0}, {20, 20, 20}};
    float *x = malloc(n * 3 * sizeof *x);
    unsigned s = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < 3; k++) {
            s = s * 1103515245u + 12345u;
            x[i * 3 + k] = off[blob_of(i)][k] + (float)((s >> 16) % 7) * 0.25f;
        }
    return x;
}

static int five_blobs(size_t i)
{
    return (int)(i % 5); /* rows interleaved, 240 a blob of 1200 */
}

static int a_and_c(size_t i)
{
    return i % 4 == 3 ? 2 : 0; /* 900 in A, 300 in C */
}

/* Every mode through the cluster cut (force, or its rule) at eps 1 over
 * the engine (honour, sym), against the brute force. */
static int blobs_case(const float *x, size_t n, int force, int honour, int sym, kern_join_result *r)
{
    expect e;
    expect_make(x, n, 3, 1.0, &e);
    eng_reset(4 * n, honour); /* room for the layout's padding */
    cut_min_rows = 128;
    cut_force = force;
    unsigned chunks = 0;
    const int ok = run_all_modes(x, n, 3, 1.0, sym, &e, r, &chunks);
    cut_min_rows = 0;
    expect_free(&e);
    return ok;
}

TEST(clusters_every_mode_equals_the_whole)
{
    const size_t n = 1200;
    float *x = make_blobs(n, 53, five_blobs);
    /* The case is worth its name: pairs of A and B exactly eps apart. */
    size_t at_eps = 0;
    for (size_t i = 0; i < n; i += 5)
        for (size_t j = 1; j < n; j += 5)
            at_eps += direct_d2(x, 3, i, j) == 1.0;
    CHECK(at_eps > 0);
    for (int force = 0; force <= 1; force++)
        for (int honour = 0; honour <= 1; honour++)
            for (int sym = 0; sym <= 1; sym++) {
                kern_join_result r;
                CHECK_MSG(blobs_case(x, n, force, honour, sym, &r), "force %d honour %d sym %d",
                          force, honour, sym);
                CHECK_EQ_INT(eng.runs, 4);
                CHECK_EQ_INT(r.symmetric, sym && honour);
                if (!sym) { /* only a symmetric run is cut */
                    CHECK_EQ_INT(r.clusters, 0);
                    CHECK_EQ_INT(eng.layout_runs, 0);
                    continue;
                }
                /* Groups: A with B (not apart), C, D, E; one run a mode
                 * over their layout, joining (480^2 + 3 240^2) / 1200^2
                 * of the pairs. */
                CHECK_EQ_INT(r.clusters, 4);
                CHECK_NEAR(r.cluster_work, 0.28, 1e-12);
                CHECK_EQ_INT(eng.layout_runs, 4);
                /* Each row centred on its group's origin, a mean of its
                 * members, so within the group's box: at most 4 (A and
                 * B's width along the first axis) from any value; the
                 * dataset's mean is some 10 away. */
                CHECK_MSG(eng.max_dev <= 4.0 && eng.max_dev > 0, "%g", eng.max_dev);
            }
    free(x);
}

/* The groups of the last cut run, row by row (kern_cluster_parts, the
 * curve's closed components): A with B, C, D and E each alone, numbered
 * by their first cluster; no pair within eps (the brute force, direct
 * form) between two groups; a row count other than the layout's refused. */
TEST(cluster_parts_hold_every_pair_within_eps)
{
    const size_t n = 1200;
    float *x = make_blobs(n, 53, five_blobs);
    kern_join_result r;
    CHECK(blobs_case(x, n, 1, 1, 1, &r));
    CHECK_EQ_INT(r.clusters, 4);
    uint32_t *part = calloc(n, sizeof *part);
    CHECK_EQ_INT(kern_cluster_parts(n, part), 0);
    /* blob -> the group of its first row; A and B share one */
    uint32_t of[5];
    for (int b = 0; b < 5; b++)
        of[b] = part[b];
    CHECK(of[0] == of[1]);
    for (int b = 1; b < 5; b++)
        for (int c = b + 1; c < 5; c++)
            CHECK_MSG(of[b] != of[c], "blobs %d and %d", b, c);
    size_t cross = 0, within = 0;
    for (size_t i = 0; i < n; i++) {
        CHECK_EQ_INT(part[i], of[five_blobs(i)]);
        for (size_t j = i + 1; j < n; j++)
            if (direct_d2(x, 3, i, j) <= 1.0) {
                within++;
                cross += part[i] != part[j];
            }
    }
    CHECK(within > 0);
    CHECK_EQ_INT(cross, 0);
    CHECK_EQ_INT(kern_cluster_parts(n + 1, part), KERN_EINVAL);
    free(part);
    free(x);
}

/* TCJOIN_TRACE=cut-dump=FILE (set here through kern_trace_set): a new
 * layout is written to FILE as G (u64), the G + 1 group bounds in run
 * rows (u64, each a multiple of KERN_STREAM_ALIGN, the last the run's
 * rows) and each run row's dataset row (u32, KERN_ROW_PAD for padding,
 * which ends a group): every dataset row once, A's and B's rows in one
 * group, C's, D's and E's each in one of their own (the blobs as made,
 * not the cut's own account). Traced off, a new layout writes nothing. */
TEST(cluster_cut_dump_writes_the_layout)
{
    const size_t n = 1200;
    const char *path = t_path("cut.bin");
    char spec[1200];
    snprintf(spec, sizeof spec, "cut-dump=%s", path);
    CHECK_EQ_INT(kern_trace_set(spec), 0);
    CHECK(!kern_trace_on()); /* the steps stay off */
    float *x = make_blobs(n, 71, five_blobs);
    kern_join_result r;
    const int ok = blobs_case(x, n, 1, 1, 1, &r);
    kern_trace_set(NULL);
    free(x);
    CHECK(ok);
    CHECK_EQ_INT(r.clusters, 4);
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "no dump at %s", path);
    uint64_t g = 0, clu[5] = {0};
    const int head = fread(&g, sizeof g, 1, f) == 1 && g == 4 && fread(clu, sizeof *clu, 5, f) == 5;
    uint32_t *rows = head && clu[4] <= 8 * n ? malloc(clu[4] * sizeof *rows) : NULL;
    const int body = rows && fread(rows, sizeof *rows, clu[4], f) == clu[4] && fgetc(f) == EOF;
    fclose(f);
    if (!head || !body)
        free(rows);
    CHECK_MSG(head, "G %llu", (unsigned long long)g);
    CHECK_MSG(body, "the rows after bounds ending at %llu", (unsigned long long)clu[4]);
    int seen[1200] = {0}, group_of[5] = {-1, -1, -1, -1, -1}, same = 1, order = 1;
    for (int c = 0; c < 4; c++) {
        order &= clu[c] < clu[c + 1] && clu[c + 1] % KERN_STREAM_ALIGN == 0;
        int pad = 0;
        for (uint64_t v = clu[c]; v < clu[c + 1]; v++) {
            if (rows[v] == KERN_ROW_PAD) {
                pad = 1;
                continue;
            }
            order &= !pad && rows[v] < n;
            if (rows[v] >= n)
                continue;
            seen[rows[v]]++;
            const int b = five_blobs(rows[v]);
            if (group_of[b] < 0)
                group_of[b] = c;
            same &= group_of[b] == c;
        }
    }
    free(rows);
    CHECK(clu[0] == 0 && order);
    CHECK(same);
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(seen[i] == 1, "row %zu written %d times", i, seen[i]);
    CHECK(group_of[0] == group_of[1]);
    for (int b = 1; b < 5; b++)
        for (int c = b + 1; c < 5; c++)
            CHECK_MSG(group_of[b] != group_of[c], "blobs %d and %d", b, c);
    remove(path);
    x = make_blobs(n, 73, five_blobs);
    CHECK(blobs_case(x, n, 1, 1, 1, &r));
    free(x);
    CHECK_EQ_INT(r.clusters, 4);
    f = fopen(path, "rb");
    if (f)
        fclose(f);
    CHECK_MSG(f == NULL, "traced off, a layout was written");
}

TEST(clusters_cut_by_their_rule)
{
    /* 900 rows in A, 300 far away in C: the groups hold (900^2 + 300^2) /
     * 1200^2 = 0.625 of the pairs, above KERN_CLU_KEEP: the rule runs the
     * whole, forced the cut; both equal the brute force. */
    const size_t n = 1200;
    float *x = make_blobs(n, 67, a_and_c);
    kern_join_result r;
    CHECK(blobs_case(x, n, 0, 1, 1, &r));
    CHECK_EQ_INT(r.clusters, 0);
    CHECK_EQ_INT(eng.layout_runs, 0);
    CHECK(blobs_case(x, n, 1, 1, 1, &r));
    CHECK_EQ_INT(r.clusters, 2);
    CHECK_NEAR(r.cluster_work, 0.625, 1e-12);
    CHECK_EQ_INT(eng.layout_runs, 4);
    free(x);
}

TEST(clusters_of_uniform_points_stay_whole)
{
    /* Uniform lattice points: no cluster is apart from the others, so
     * there is one group and the engine runs the whole, even forced; too
     * few rows for two clusters of cut_min_rows likewise. */
    const size_t n = 1200, d = 3;
    float *x = make_points(n, d, 59);
    expect e;
    expect_make(x, n, d, 1.0, &e);
    kern_join_result r;
    unsigned chunks;
    const size_t rows[2] = {128, 700};
    for (int k = 0; k < 2; k++) {
        eng_reset(4 * n, 1);
        cut_min_rows = rows[k];
        cut_force = 1;
        CHECK(run_all_modes(x, n, d, 1.0, 1, &e, &r, &chunks));
        CHECK_EQ_INT(r.clusters, 0);
        CHECK_EQ_INT(eng.runs, 4); /* one whole run a mode */
        CHECK(eng.max_dev == 0);   /* not centred by the cut */
    }
    cut_min_rows = 0;
    expect_free(&e);
    free(x);
}

TEST(clusters_leave_a_value_not_finite_whole)
{
    /* A NaN: no cluster can hold it, so the engine runs the whole (and,
     * like fp64, keeps no pair of that row). */
    const size_t n = 1200;
    float *x = make_blobs(n, 61, five_blobs);
    x[3 * 617 + 1] = 0.0f / 0.0f;
    kern_join_result r;
    CHECK(blobs_case(x, n, 1, 1, 1, &r));
    CHECK_EQ_INT(r.clusters, 0);
    CHECK_EQ_INT(eng.runs, 4);
    free(x);
}

/* ---- the tile cut ---- */

/* Every mode through the tile cut (force, or its rule) at eps over the
 * engine (honour, sym), against the brute force; the engine checks that
 * every pair the list leaves out is farther apart than eps. */
static int tiles_case(const float *x, size_t n, size_t d, double eps, int force, int honour,
                      int sym, kern_join_result *r)
{
    expect e;
    expect_make(x, n, d, eps, &e);
    eng_reset(2 * n + KERN_STREAM_ALIGN, honour);
    cut_tiles = 1;
    cut_force = force;
    unsigned chunks = 0;
    const int ok = run_all_modes(x, n, d, eps, sym, &e, r, &chunks);
    cut_tiles = 0;
    expect_free(&e);
    return ok && eng.bad_blk == 0 && eng.skipped_within == 0;
}

/* n = 256 g points in g groups of 256 along the first axis, group k's
 * lattice points (step 1/4, [0, 1.5] each way, so pairs fall exactly on
 * eps = 1) from gap k on; rows interleaved. Each group fills one block of
 * the k-d order exactly (every split is along the first axis, the widest,
 * at a whole block, between groups), so the blocks' boxes are the groups'. */
static float *make_row_of_groups(size_t g, size_t d, float gap, unsigned seed)
{
    const size_t n = g * KERN_STREAM_ALIGN;
    float *x = malloc(n * d * sizeof *x);
    unsigned s = seed;
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < d; k++) {
            s = s * 1103515245u + 12345u;
            x[i * d + k] = (float)((s >> 16) % 7) * 0.25f + (k ? 0 : gap * (float)(i % g));
        }
    return x;
}

TEST(tiles_every_mode_equals_the_whole)
{
    /* Lattice points in [0, 5.75]^d with duplicates, eps 1 (many pairs
     * exactly at eps across block borders), d = 2 to 16, forced. */
    const size_t n = 1500, dims[5] = {2, 3, 4, 8, 16};
    for (int t = 0; t < 5; t++) {
        float *x = make_points(n, dims[t], 71 + t);
        for (int honour = 0; honour <= 1; honour++)
            for (int sym = 0; sym <= 1; sym++) {
                kern_join_result r;
                CHECK_MSG(tiles_case(x, n, dims[t], 1.0, 1, honour, sym, &r),
                          "d %zu honour %d sym %d: bad %zu skipped within %zu", dims[t], honour,
                          sym, eng.bad_blk, eng.skipped_within);
                CHECK_EQ_INT(eng.runs, 4);
                if (!sym) { /* only a symmetric run is cut */
                    CHECK_EQ_INT(r.tile_blocks, 0);
                    CHECK_EQ_INT(eng.tile_runs, 0);
                    continue;
                }
                CHECK_EQ_INT(eng.tile_runs, 4);
                CHECK_EQ_INT(r.tile_blocks, 6); /* ceil(1500 / 256) */
                CHECK(r.tile_work > 0 && r.tile_work <= 1);
                CHECK(strstr(r.variant, "tiles") != NULL);
                /* In the plane the k-d blocks at the two ends of the first
                 * split are about 2.9 apart: some pairs are left out. */
                if (dims[t] == 2)
                    CHECK_MSG(r.tile_work < 1, "%g", r.tile_work);
            }
        free(x);
    }
}

TEST(tiles_join_only_the_blocks_within_eps)
{
    /* Ten groups 4 apart (their nearest points 2.5 apart): only each
     * group with itself, 10 of the 55 block pairs. Groups 2.5 apart have
     * their nearest points exactly eps = 1 apart: every neighbouring pair
     * of groups too, 19 of 55. Both by the rule (at most 60%). */
    const float gaps[2] = {4.0f, 2.5f};
    const double want[2] = {10.0 / 55, 19.0 / 55};
    for (int t = 0; t < 2; t++) {
        float *x = make_row_of_groups(10, 2, gaps[t], 83);
        kern_join_result r;
        const size_t plans = kern_tiles_plans_for_tests();
        CHECK(tiles_case(x, 10 * KERN_STREAM_ALIGN, 2, 1.0, 0, 1, 1, &r));
        CHECK_EQ_INT(r.tile_blocks, 10);
        CHECK_NEAR(r.tile_work, want[t], 1e-15);
        CHECK_EQ_INT(kern_tiles_plans_for_tests(), plans + 1); /* the estimate let it build */
        free(x);
    }
}

TEST(tiles_cut_by_their_rule)
{
    /* Lattice points in 16 dimensions: every block's box meets every
     * other's within eps, so the list holds all 21 pairs: the rule runs
     * the whole, forced the cut with tile_work 1; both equal the brute
     * force. */
    const size_t n = 1500, d = 16;
    float *x = make_points(n, d, 89);
    kern_join_result r;
    /* The rule: the estimate (every 16th row, blocks of 16) sees every
     * block pair within eps too, so no plan is built at all. */
    const size_t plans = kern_tiles_plans_for_tests();
    CHECK(tiles_case(x, n, d, 1.0, 0, 1, 1, &r));
    CHECK_EQ_INT(r.tile_blocks, 0);
    CHECK_EQ_INT(eng.tile_runs, 0);
    CHECK_EQ_INT(kern_tiles_plans_for_tests(), plans);
    CHECK(tiles_case(x, n, d, 1.0, 1, 1, 1, &r));
    CHECK_EQ_INT(r.tile_blocks, 6);
    CHECK(r.tile_work == 1);
    CHECK_EQ_INT(kern_tiles_plans_for_tests(), plans + 1); /* one plan, kept for every mode */
    free(x);
}

TEST(tiles_offsets_duplicates_and_extremes)
{
    /* (a) LiDAR-like: the ten groups of tiles_join_only_the_blocks_within_
     * eps at a large offset (4096) and scaled by 1/16 (exact in f32: steps
     * of 1/64), eps 1/16 (only each group with itself); centred on a
     * given centre, which the layout keeps (the largest |x - c| is the
     * first axis's half-width, (36 + 1.5) / 32). (b) Every point the
     * same. (c) eps below the lattice step (only duplicates pair) and (d)
     * above the data's extent (every pair). */
    const size_t d = 3, g = 10, n = g * KERN_STREAM_ALIGN;
    float *x = make_row_of_groups(g, d, 4.0f, 97);
    float *y = malloc(n * d * sizeof *y);
    for (size_t i = 0; i < n * d; i++)
        y[i] = 4096.0f + x[i] / 16.0f;
    const double c[3] = {4096 + 37.5 / 32, 4096 + 1.5 / 32, 4096 + 1.5 / 32};
    kern_join_result r;
    cut_center = c;
    CHECK(tiles_case(y, n, d, 1.0 / 16, 1, 1, 1, &r));
    cut_center = NULL;
    CHECK_EQ_INT(r.tile_blocks, g);
    /* r is the last mode's, the histogram's, whose top edge is 1: groups
     * j apart are 4 j / 16 - 1.5 / 16 apart, within it up to j = 4: the
     * ten diagonal pairs and 9 + 8 + 7 + 6 more, 40 of 55. */
    CHECK_NEAR(r.tile_work, 40.0 / 55, 1e-15);
    CHECK_MSG(eng.max_dev == 37.5 / 32, "%.17g", eng.max_dev);
    free(x);
    free(y);
    const size_t m = 1100;
    x = make_points(m, d, 97);
    float *z = calloc(m * d, sizeof *z);
    CHECK(tiles_case(z, m, d, 0.5, 1, 1, 1, &r));
    CHECK(r.tile_work == 1);
    CHECK(tiles_case(x, m, d, 0.1, 1, 1, 1, &r));
    CHECK(tiles_case(x, m, d, 100.0, 1, 1, 1, &r));
    CHECK(r.tile_work == 1);
    free(x);
    free(z);
}

TEST(tiles_leave_small_or_not_finite_runs_whole)
{
    /* Fewer than KERN_TILE_MIN_ROWS rows, or a NaN (no box holds it):
     * the engine runs the whole, even forced. */
    const size_t d = 2;
    float *x = make_points(1500, d, 101);
    kern_join_result r;
    CHECK(tiles_case(x, KERN_TILE_MIN_ROWS - 1, d, 1.0, 1, 1, 1, &r));
    CHECK_EQ_INT(r.tile_blocks, 0);
    CHECK_EQ_INT(eng.tile_runs, 0);
    x[2 * 617 + 1] = 0.0f / 0.0f;
    CHECK(tiles_case(x, 1500, d, 1.0, 1, 1, 1, &r));
    CHECK_EQ_INT(r.tile_blocks, 0);
    CHECK_EQ_INT(eng.tile_runs, 0);
    free(x);
}
