/* `set center local` (src/cpu_emul_local.c): the CPU emulations centred
 * per grid cell.
 * - cpu-fp16 under it computes, for every pair (i, j), FP16's arithmetic
 *   on x_i - o and x_j - o, o the origin of i's cell (the cell's lower
 *   corner along the indexed dimensions, the column mean along the
 *   others): checked against that arithmetic by hand over all n^2 pairs
 *   (brute force, so a pair the grid's ranges missed shows), pair set and
 *   d2 bit for bit, count and per-point counts;
 * - what it buys on a far, low-dimensional scan (coordinates 1000 +
 *   [0, 40) m, as a LiDAR scan in a map frame): every pair on which it
 *   and the exact cpu engine disagree lies inside the error bound of
 *   kernels/exact_bound.h taken at the pair's local norms, and it
 *   disagrees on fewer pairs than global centring;
 * - the engines that centre the whole dataset only refuse it with one
 *   line; the exact engines are exact under it; the setting parses. */
#include "center.h"
#include "cpu_emul.h"
#include "cpu_join.h"
#include "exact_sets.h"
#include "fp16.h"
#include "kernels.h"
#include "session.h"
#include "settings.h"

/* A 3-D scan: points on a few planes and poles, far from the origin. */
static dataset set_far_scan(size_t n)
{
    dataset ds = make("far-scan", n, 3);
    rng_state = 31;
    double *x = ds.v;
    for (size_t i = 0; i < n; i++) {
        const double u = rng_unit() * 40, v = rng_unit() * 40, kind = rng_unit();
        x[3 * i] = 1000 + u;
        x[3 * i + 1] = 2000 + (kind < 0.5 ? v : 20 + 0.2 * rng_unit());
        x[3 * i + 2] = kind < 0.5 ? 3 + 0.05 * rng_unit() : v * 0.25;
    }
    finish(&ds);
    return ds;
}

static engine_opts opts_center(int center)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.center = center;
    return o;
}

/* Row i relative to o in FP16 (widened), and its FP32 norm rounded
 * toward zero in order. */
static float by_hand_row(const dataset *ds, size_t i, const double *o, float *h)
{
    float s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        h[k] = fp16_round(((double *)ds->v)[i * ds->d + k] - o[k]);
        s = fp32_add_rz(s, h[k] * h[k]);
    }
    return s;
}

TEST(local_equals_per_cell_arithmetic_by_hand)
{
    dataset ds = set_far_scan(3000);
    const double eps = 0.35;
    engine_opts o = opts_center(CENTER_LOCAL);
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = eps;
    s.q1 = ds.n;
    s.opts = &o;
    s.engine = engine_find("cpu-fp16");
    s.mode = JOIN_COUNT;
    const cpu_emul_format f16 = {.name = "fp16", .round = fp16_round};
    cpu_grid g;
    CHECK_MSG(cpu_emul_local_index(&f16, &s, &g) == 0, "%s", err_msg());
    /* Each row's origin, from its cell. */
    center_facts facts;
    const double *mean = center_means(&ds, &facts);
    double *org = xmalloc(ds.n * ds.d * sizeof *org);
    for (size_t c = 0; c < g.ncell; c++)
        for (size_t p = g.start[c]; p < g.start[c + 1]; p++) {
            double *oi = org + (size_t)g.order[p] * ds.d;
            for (size_t k = 0; k < ds.d; k++)
                oi[k] = mean[k];
            for (int j = 0; j < g.k; j++)
                oi[g.dim[j]] = g.lo[j] + (double)(g.key[c] / g.stride[j] % g.cnt[j]) * g.side[j];
        }
    /* All pairs by hand. */
    const float lim = (float)(eps * eps);
    uint64_t count = 0;
    uint64_t *per = xcalloc(ds.n, sizeof *per);
    jo_pair *pairs = NULL;
    size_t np = 0, cap = 0;
    float hi[3], hj[3];
    for (size_t i = 0; i < ds.n; i++) {
        const float si = by_hand_row(&ds, i, org + i * ds.d, hi);
        for (size_t j = 0; j < ds.n; j++) {
            const float sj = by_hand_row(&ds, j, org + i * ds.d, hj);
            float dot = 0;
            for (size_t k = 0; k < ds.d; k++)
                dot = dot + hi[k] * hj[k];
            float d2 = (si + sj) - 2.0f * dot;
            d2 = i == j ? 0.0f : d2 < 0 ? 0.0f : d2;
            if (!(d2 <= lim))
                continue;
            count++;
            per[i]++;
            if (np == cap)
                pairs = xrealloc(pairs, (cap = cap ? 2 * cap : 1024) * sizeof *pairs);
            pairs[np++] = (jo_pair){(uint32_t)i, (uint32_t)j, (double)d2};
        }
    }
    join_outcome a = jo_run(engine_find("cpu-fp16"), &ds, eps, 0, ds.n, &o, NULL, 0);
    CHECK_MSG(a.rc == 0, "%s", err_msg());
    printf("# far scan n=%zu eps=%g: %llu pairs, %zu cells over %d dims\n", ds.n, eps,
           (unsigned long long)count, g.ncell, g.k);
    CHECK_EQ_INT(a.count, count);
    CHECK(jo_metric(&a, "centred") == 2);
    int same = a.npairs == np;
    for (size_t p = 0; same && p < np; p++)
        same = a.pairs[p].i == pairs[p].i && a.pairs[p].j == pairs[p].j &&
               a.pairs[p].d2 == pairs[p].d2;
    CHECK_MSG(same, "the pair set or a d2 differs from the arithmetic by hand");
    for (size_t i = 0; i < ds.n; i++)
        CHECK_EQ_INT(a.perpoint[i], per[i]);
    jo_free(&a);
    free(pairs);
    free(per);
    free(org);
    cpu_grid_free(&g);
    dataset_free(&ds);
}

/* Pairs of a and b that differ (a sorted merge), each passed to fn. */
static size_t differing(const join_outcome *a, const join_outcome *b,
                        void (*fn)(const jo_pair *, void *), void *ctx)
{
    size_t p = 0, q = 0, n = 0;
    while (p < a->npairs || q < b->npairs) {
        int c = p == a->npairs ? 1 : q == b->npairs ? -1 : jo_by_ij(&a->pairs[p], &b->pairs[q]);
        if (c == 0) {
            p++, q++;
            continue;
        }
        fn(c < 0 ? &a->pairs[p++] : &b->pairs[q++], ctx);
        n++;
    }
    return n;
}

typedef struct bound_ctx {
    const dataset *ds;
    const cpu_grid *g;
    const double *mean;
    uint32_t *cell_of; /* row -> cell */
    double eps;
    exact_bound b;
    size_t beyond;
} bound_ctx;

/* A differing pair must lie within delta taken at its local norms
 * (|x - o| with o the origin of the query row's cell). */
static void check_in_bound(const jo_pair *x, void *vc)
{
    bound_ctx *c = vc;
    const dataset *ds = c->ds;
    const size_t cell = c->cell_of[x->i];
    double d2 = 0, ni = 0, nj = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double o = c->mean[k];
        for (int j = 0; j < c->g->k; j++)
            if ((size_t)c->g->dim[j] == k)
                o = c->g->lo[j] +
                    (double)(c->g->key[cell] / c->g->stride[j] % c->g->cnt[j]) * c->g->side[j];
        const double a = ((double *)ds->v)[x->i * ds->d + k],
                     b = ((double *)ds->v)[x->j * ds->d + k];
        d2 += (a - b) * (a - b);
        ni += (a - o) * (a - o);
        nj += (b - o) * (b - o);
    }
    c->beyond += fabs(d2 - c->eps * c->eps) > exact_bound_delta(&c->b, sqrt(ni), sqrt(nj), c->eps);
}

static void ignore(const jo_pair *x, void *c)
{
    (void)x;
    (void)c;
}

TEST(local_buys_on_a_far_scan)
{
    dataset ds = set_far_scan(6000);
    const double eps = 0.35;
    engine_opts ol = opts_center(CENTER_LOCAL), og = opts_center(CENTER_ON),
                oo = opts_center(CENTER_OFF);
    join_outcome loc = jo_run_as(engine_find("cpu-fp16"), &ds, eps, 0, ds.n, &ol, NULL, 0);
    join_outcome glo = jo_run_as(engine_find("cpu-fp16"), &ds, eps, 0, ds.n, &og, NULL, 0);
    join_outcome ref = jo_run_as(engine_find("cpu"), &ds, eps, 0, ds.n, &oo, NULL, 0);
    CHECK_MSG(loc.rc == 0 && glo.rc == 0 && ref.rc == 0, "%s", err_msg());
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = &ds;
    s.eps = eps;
    s.q1 = ds.n;
    s.opts = &ol;
    s.engine = engine_find("cpu-fp16");
    const cpu_emul_format f16 = {.name = "fp16", .round = fp16_round};
    bound_ctx c = {.ds = &ds, .eps = eps};
    cpu_grid g;
    CHECK_MSG(cpu_emul_local_index(&f16, &s, &g) == 0, "%s", err_msg());
    center_facts facts;
    c.g = &g;
    c.mean = center_means(&ds, &facts);
    c.cell_of = xmalloc(ds.n * sizeof *c.cell_of);
    for (size_t cell = 0; cell < g.ncell; cell++)
        for (size_t p = g.start[cell]; p < g.start[cell + 1]; p++)
            c.cell_of[g.order[p]] = (uint32_t)cell;
    exact_bound_init(&c.b, ds.d);
    const size_t dl = differing(&loc, &ref, check_in_bound, &c);
    const size_t dg = differing(&glo, &ref, ignore, NULL);
    printf("# far scan n=%zu eps=%g: exact %llu pairs; global centring %llu (%zu differ), "
           "local %llu (%zu differ)\n",
           ds.n, eps, (unsigned long long)ref.count, (unsigned long long)glo.count, dg,
           (unsigned long long)loc.count, dl);
    CHECK_MSG(c.beyond == 0, "%zu of %zu differing pairs lie outside the local bound", c.beyond,
              dl);
    CHECK_MSG(dl < dg, "local centring differs on %zu pairs, global on %zu", dl, dg);
    free(c.cell_of);
    cpu_grid_free(&g);
    jo_free(&loc);
    jo_free(&glo);
    jo_free(&ref);
    dataset_free(&ds);
}

TEST(local_refused_where_it_is_not_built)
{
    dataset ds = set_far_scan(500);
    engine_opts o = opts_center(CENTER_LOCAL);
    /* cpu-fp8-e4m3 centres the whole dataset only. */
    join_outcome a = jo_run_as(engine_find("cpu-fp8-e4m3"), &ds, 0.35, 0, ds.n, &o, NULL, 0);
    CHECK(a.rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "center local: cpu-fp8-e4m3 centres the whole dataset only");
    jo_free(&a);
    /* Without the grid index. */
    o.cpu_index = CPU_INDEX_OFF;
    join_outcome b = jo_run_as(engine_find("cpu-bf16"), &ds, 0.35, 0, ds.n, &o, NULL, 0);
    CHECK(b.rc == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "center local: needs the grid index");
    jo_free(&b);
    dataset_free(&ds);
}

/* The exact engines are exact under it (auto's choice of centring). */
static void exact_local(const char *what, dataset *ds, double eps)
{
    engine_opts o = opts_center(CENTER_LOCAL);
    join_outcome a = exact_run("cpu-exact", ds, eps, &o, 0);
    join_outcome b = exact_run_default("cpu", ds, eps);
    CHECK_MSG(a.rc == 0 && b.rc == 0, "%s: %s", what, err_msg());
    char why[200];
    CHECK_MSG(jo_same(&a, &b, ds->n, why, sizeof why), "%s local: cpu-exact and cpu differ: %s",
              what, why);
    jo_free(&a);
    jo_free(&b);
}

TEST(cpu_exact_under_local_equals_cpu)
{
    exact_each_adversarial(exact_local);
}

TEST(local_setting_parses_and_shows)
{
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    const setting *t = setting_find("center");
    char *v[] = {"local", NULL};
    CHECK_EQ_INT(t->set(&s, v), 0);
    CHECK_EQ_INT(s.eopt.center, CENTER_LOCAL);
    char buf[64];
    t->get(&s, buf, sizeof buf);
    CHECK(strcmp(buf, "local") == 0);
}
