/* `set center` (src/center.c) and the CPU engines that honour it:
 * - the means against a plain FP64 column sum, and the auto rule (centre
 *   when the largest norm at least halves) on data built to fall on each
 *   side of it; the default is auto for exact engines, off for the others;
 * - cpu-fp16 centred computes exactly what cpu-fp16 computes on the data
 *   centred by hand (same pair set, d2 bit for bit);
 * - what it buys, derived rather than tuned: 1e4 + [0, 0.5) collapses to
 *   one FP16 value (spacing 8 at 1e4), so uncentred every pair joins
 *   (n^2); centred, every pair on which cpu-fp16 and the exact cpu engine
 *   disagree lies within the error bound of kernels/exact_bound.h taken
 *   at the centred norms;
 * - cpu-exact with centring forced on still equals cpu on every
 *   adversarial set;
 * - the exact engines' auto (src/center_exact.c) against the sum of the
 *   bound over every row by hand, on integers the norm rule would centre
 *   and reals it would not; info's band prediction counted by hand;
 * - the k-distance's rule (centre unless the largest norm grows) on sets
 *   on each side of it;
 * - runs record metric centred, and the setting parses and shows. */
#include "center_exact.h"
#include "fp16.h"
#include "exact_predict.h"
#include "exact_sets.h"
#include "kernels.h"
#include "session.h"
#include "settings.h"

static dataset set_offset_big(void)
{
    dataset ds = make("offset-big", 800, 5);
    rng_state = 21;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 1e4 + 0.5 * rng_unit();
    finish(&ds);
    return ds;
}

/* +-v pairs: the column means are exactly 0, centring changes nothing. */
static dataset set_symmetric(void)
{
    dataset ds = make("symmetric", 400, 3);
    rng_state = 22;
    for (size_t i = 0; i < ds.n; i += 2)
        for (size_t k = 0; k < ds.d; k++) {
            const double v = rng_unit() * 4 - 2;
            ((double *)ds.v)[i * ds.d + k] = v;
            ((double *)ds.v)[(i + 1) * ds.d + k] = -v;
        }
    finish(&ds);
    return ds;
}

TEST(means_and_the_auto_rule)
{
    dataset ds = set_offset_big();
    center_facts f;
    const double *m = center_means(&ds, &f);
    CHECK(m != NULL);
    for (size_t k = 0; k < ds.d; k++) {
        double s = 0;
        for (size_t i = 0; i < ds.n; i++)
            s += ((double *)ds.v)[i * ds.d + k];
        /* a plain sum of 800 values near 1e4 is within 800 ulps of 1e4 */
        CHECK_NEAR(m[k], s / (double)ds.n, 800 * 0x1p-52 * 1e4);
        CHECK(m[k] > 1e4 && m[k] < 1e4 + 0.5);
    }
    CHECK(f.nmax_raw > 2e4 && f.nmax_centred < 0.6);
    CHECK(center_pick(&ds, CENTER_AUTO, 0) == m);
    CHECK(center_pick(&ds, CENTER_ON, 0) == m);
    CHECK(center_pick(&ds, CENTER_OFF, 1) == NULL);
    CHECK(center_pick(&ds, CENTER_DEFAULT, 1) == m);    /* exact: auto */
    CHECK(center_pick(&ds, CENTER_DEFAULT, 0) == NULL); /* the others: off */
    dataset_free(&ds);

    ds = set_symmetric();
    m = center_means(&ds, &f);
    for (size_t k = 0; k < ds.d; k++)
        CHECK(m[k] == 0.0);
    CHECK(f.nmax_centred == f.nmax_raw);
    CHECK(center_pick(&ds, CENTER_AUTO, 1) == NULL);
    CHECK(center_pick(&ds, CENTER_ON, 1) == m);
    dataset_free(&ds);
}

/* A column holding an Inf has no finite mean: no setting centres such
 * data (which would turn the column into Inf and NaN), so the engines see
 * the one bad value as loaded. */
TEST(no_centring_with_a_value_not_finite)
{
    dataset ds = set_offset_big();
    ((double *)ds.v)[3 * ds.d + 1] = INFINITY;
    ds.hash = dataset_hash(&ds);
    center_facts f;
    const double *m = center_means(&ds, &f);
    CHECK(m != NULL && !isfinite(m[1]) && isfinite(m[0]));
    CHECK(center_pick(&ds, CENTER_AUTO, 1) == NULL);
    CHECK(center_pick(&ds, CENTER_ON, 0) == NULL);
    CHECK(center_pick(&ds, CENTER_DEFAULT, 1) == NULL);
    dataset_free(&ds);
}

static join_outcome run_pairs(const char *engine, const dataset *ds, double eps, int center)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.center = center;
    return jo_run_as(engine_find(engine), ds, eps, 0, ds->n, &o, NULL, 0);
}

TEST(centred_equals_centred_by_hand)
{
    dataset sets[2] = {set_offset_big(), set_gauss()};
    for (int t = 0; t < 2; t++) {
        dataset *ds = &sets[t];
        center_facts f;
        const double *m = center_means(ds, &f);
        dataset hand = make("by hand", ds->n, ds->d);
        for (size_t i = 0; i < ds->n * ds->d; i++)
            ((double *)hand.v)[i] = ((double *)ds->v)[i] - m[i % ds->d];
        finish(&hand);
        const double eps = eps_for(ds, 20);
        join_outcome a = run_pairs("cpu-fp16", ds, eps, CENTER_ON);
        join_outcome b = run_pairs("cpu-fp16", &hand, eps, CENTER_OFF);
        CHECK_MSG(a.rc == 0 && b.rc == 0, "%s", err_msg());
        char why[200];
        CHECK_MSG(jo_same(&a, &b, ds->n, why, sizeof why), "%s: %s", ds->name, why);
        CHECK(jo_metric(&a, "centred") == 1 && jo_metric(&b, "centred") == 0);
        jo_free(&a);
        jo_free(&b);
        dataset_free(&hand);
        dataset_free(ds);
    }
}

TEST(what_centring_buys)
{
    dataset ds = set_offset_big();
    const double eps = eps_for(&ds, 20);
    join_outcome off = run_pairs("cpu-fp16", &ds, eps, CENTER_OFF);
    join_outcome on = run_pairs("cpu-fp16", &ds, eps, CENTER_ON);
    join_outcome ref = run_pairs("cpu", &ds, eps, CENTER_OFF);
    CHECK_MSG(off.rc == 0 && on.rc == 0 && ref.rc == 0, "%s", err_msg());
    /* Every value rounds to 10000 in FP16: all pairs at distance 0. */
    CHECK_EQ_INT(off.count, (uint64_t)ds.n * ds.n);
    /* Centred: a disagreement only inside the bound's band. */
    center_facts f;
    const double *m = center_means(&ds, &f);
    exact_bound b;
    exact_bound_init(&b, ds.d);
    size_t p = 0, q = 0, differ = 0, beyond = 0;
    while (p < on.npairs || q < ref.npairs) {
        int c = p == on.npairs ? 1 : q == ref.npairs ? -1 : jo_by_ij(&on.pairs[p], &ref.pairs[q]);
        if (c == 0) {
            p++, q++;
            continue;
        }
        const jo_pair *x = c < 0 ? &on.pairs[p++] : &ref.pairs[q++];
        double d2 = 0, ni = 0, nj = 0;
        for (size_t k = 0; k < ds.d; k++) {
            const double u = ((double *)ds.v)[x->i * ds.d + k] - ((double *)ds.v)[x->j * ds.d + k];
            const double ci = ((double *)ds.v)[x->i * ds.d + k] - m[k],
                         cj = ((double *)ds.v)[x->j * ds.d + k] - m[k];
            d2 += u * u;
            ni += ci * ci;
            nj += cj * cj;
        }
        differ++;
        beyond += fabs(d2 - eps * eps) > exact_bound_delta(&b, sqrt(ni), sqrt(nj), eps);
    }
    printf("# offset 1e4: uncentred %llu pairs (all), centred %llu, exact %llu, %zu differ, all "
           "within the bound\n",
           (unsigned long long)off.count, (unsigned long long)on.count,
           (unsigned long long)ref.count, differ);
    CHECK_MSG(beyond == 0, "%zu of %zu differing pairs lie outside the bound", beyond, differ);
    CHECK(on.count < off.count / 10);
    jo_free(&off);
    jo_free(&on);
    jo_free(&ref);
    dataset_free(&ds);
}

static void exact_centred(const char *what, dataset *ds, double eps)
{
    engine_opts o;
    engine_opts_default(&o);
    o.threads = 2;
    o.center = CENTER_ON;
    join_outcome a = exact_run("cpu-exact", ds, eps, &o, 0);
    join_outcome b = exact_run_default("cpu", ds, eps);
    CHECK_MSG(a.rc == 0 && b.rc == 0, "%s: %s", what, err_msg());
    char why[200];
    CHECK_MSG(jo_same(&a, &b, ds->n, why, sizeof why), "%s centred: cpu-exact and cpu differ: %s",
              what, why);
    CHECK(jo_metric(&a, "centred") == 1);
    jo_free(&a);
    jo_free(&b);
}

TEST(cpu_exact_centred_equals_cpu)
{
    exact_each_adversarial(exact_centred);
}

TEST(setting_parses_and_shows)
{
    session s;
    memset(&s, 0, sizeof s);
    settings_default(&s);
    const setting *t = setting_find("center");
    CHECK(t != NULL);
    char buf[128];
    t->get(&s, buf, sizeof buf);
    CHECK(strcmp(buf, "default") == 0);
    char *v[] = {"on", NULL};
    CHECK_EQ_INT(t->set(&s, v), 0);
    CHECK_EQ_INT(s.eopt.center, CENTER_ON);
    t->get(&s, buf, sizeof buf);
    CHECK(strcmp(buf, "on") == 0);
    char *bad[] = {"sometimes", NULL};
    CHECK_EQ_INT(t->set(&s, bad), TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "auto, on, off, local or default, got 'sometimes'");
    CHECK_EQ_INT(s.eopt.center, CENTER_ON);
}

/* Row i's norm and FP16 rounding, centred by m when m, by hand. */
static void hand_rho(const dataset *ds, size_t i, const double *m, double *nx, double *rx)
{
    double s = 0, r = 0;
    for (size_t k = 0; k < ds->d; k++) {
        const double v = dataset_value(ds, i * ds->d + k) - (m ? m[k] : 0.0);
        const double h = (double)fp16_to_float(fp16_from_double(v));
        s += v * v;
        r += (h - v) * (h - v);
    }
    *nx = sqrt(s);
    *rx = sqrt(r);
}

/* The exact engines' auto rule, by hand: the sum over every row (n is
 * within center_exact.c's sample, so the sample is every row) of
 * delta_ii with the row's own norm and FP16 rounding, centred against as
 * loaded. */
static int hand_centres(const dataset *ds, const double *m, double eps)
{
    exact_bound b;
    exact_bound_init(&b, ds->d); /* d <= 256: the unpromoted pass */
    double raw = 0, cen = 0;
    for (size_t i = 0; i < ds->n; i++) {
        double n0, r0, n1, r1;
        hand_rho(ds, i, NULL, &n0, &r0);
        hand_rho(ds, i, m, &n1, &r1);
        raw += exact_bound_delta_rho(&b, n0, n0, r0, r0, eps);
        cen += exact_bound_delta_rho(&b, n1, n1, r1, r1, eps);
    }
    return cen < raw;
}

/* Integers 10..20, d = 8: FP16 holds them exactly (rho 0), and centring
 * shrinks the largest norm about 3x, so the norm rule centres; but the
 * centred values are fractional, and their rounding (about 2^-9 each)
 * costs more than the accumulation term saves: exact leaves them as
 * loaded. */
static dataset set_small_ints(void)
{
    dataset ds = make("small-ints", 900, 8);
    rng_state = 31;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 10 + floor(11.0 * rng_unit());
    finish(&ds);
    return ds;
}

/* Reals 1 + 0.62 u (u of unit variance), d = 64: centring shrinks the
 * largest norm less than 2x, so the norm rule leaves them; but both the
 * rounding and the norms shrink, and exact centres them (gauss d=784's
 * case). */
static dataset set_near_offset(void)
{
    dataset ds = make("near-offset", 900, 64);
    rng_state = 32;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 1 + 0.62 * sqrt(3.0) * (2 * rng_unit() - 1);
    finish(&ds);
    return ds;
}

TEST(exact_auto_weighs_the_bound)
{
    dataset ds = set_small_ints();
    double eps = eps_for(&ds, 20);
    center_facts f;
    const double *m = center_means(&ds, &f);
    CHECK(center_pick(&ds, CENTER_AUTO, 1) == m); /* the norm rule centres */
    CHECK(!hand_centres(&ds, m, eps));
    CHECK(center_pick_exact(&ds, CENTER_AUTO, eps) == NULL);
    CHECK(center_pick_exact(&ds, CENTER_DEFAULT, eps) == NULL);
    CHECK(center_pick_exact(&ds, CENTER_ON, eps) == m);
    CHECK(center_pick_exact(&ds, CENTER_OFF, eps) == NULL);
    printf("# small ints: nmax %.4g -> %.4g, exact leaves them\n", f.nmax_raw, f.nmax_centred);
    dataset_free(&ds);

    ds = set_near_offset();
    eps = eps_for(&ds, 20);
    m = center_means(&ds, &f);
    CHECK(f.nmax_centred * 2 > f.nmax_raw && f.nmax_centred < f.nmax_raw);
    CHECK(center_pick(&ds, CENTER_AUTO, 1) == NULL); /* the norm rule does not */
    CHECK(hand_centres(&ds, m, eps));
    CHECK(center_pick_exact(&ds, CENTER_AUTO, eps) == m);
    CHECK(center_pick_exact(&ds, CENTER_OFF, eps) == NULL);
    printf("# near offset: nmax %.4g -> %.4g, exact centres\n", f.nmax_raw, f.nmax_centred);
    /* Both choices give cpu's pair set: cpu-exact is exact either way. */
    join_outcome a = run_pairs("cpu-exact", &ds, eps, CENTER_DEFAULT);
    join_outcome c = run_pairs("cpu", &ds, eps, CENTER_DEFAULT);
    CHECK_MSG(a.rc == 0 && c.rc == 0, "%s", err_msg());
    char why[200];
    CHECK_MSG(jo_same(&a, &c, ds.n, why, sizeof why), "%s", why);
    CHECK(jo_metric(&a, "centred") == 1);
    jo_free(&a);
    jo_free(&c);
    dataset_free(&ds);
}

/* Rows at +1 in every dimension but one at -3: the means lie near +1, so
 * centring takes the far row to about -4, a longer largest norm. */
static dataset set_far_opposite(void)
{
    dataset ds = make("far-opposite", 400, 16);
    rng_state = 33;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = k < ds.d ? -3.0 : 1.0 + 0.01 * rng_unit();
    finish(&ds);
    return ds;
}

/* The k-distance's rule (center_pick_kdist): its passes' bound grows with
 * the row's norm and the largest, with no measured rounding, so it centres
 * wherever the largest norm does not grow: the small integers and the
 * near-offset reals (each of which one of the other rules leaves), not
 * the far row's set; ON and OFF as set. */
TEST(kdist_centres_when_the_largest_norm_does_not_grow)
{
    dataset sets[3] = {set_small_ints(), set_near_offset(), set_far_opposite()};
    for (int t = 0; t < 3; t++) {
        center_facts f;
        const double *m = center_means(&sets[t], &f);
        CHECK(m != NULL);
        const int shrinks = f.nmax_centred <= f.nmax_raw;
        CHECK_MSG(shrinks == (t < 2), "%s: nmax %.6g -> %.6g", sets[t].name, f.nmax_raw,
                  f.nmax_centred);
        CHECK(center_pick_kdist(&sets[t], CENTER_AUTO) == (shrinks ? m : NULL));
        CHECK(center_pick_kdist(&sets[t], CENTER_DEFAULT) == (shrinks ? m : NULL));
        CHECK(center_pick_kdist(&sets[t], CENTER_LOCAL) == (shrinks ? m : NULL));
        CHECK(center_pick_kdist(&sets[t], CENTER_ON) == m);
        CHECK(center_pick_kdist(&sets[t], CENTER_OFF) == NULL);
        printf("# %s: nmax %.4g -> %.4g, the k-distance %s\n", sets[t].name, f.nmax_raw,
               f.nmax_centred, shrinks ? "centres" : "leaves them");
        dataset_free(&sets[t]);
    }
}

/* info's prediction on the offset set: err_raw and err_centred are the
 * bound at the largest norms; the band is exactly the pairs within
 * delta_ij of eps^2, delta_ij with each pair's own centred norms and each
 * row's FP16 rounding, counted here. */
TEST(prediction_counts_the_band)
{
    dataset ds = set_offset_big();
    const double eps = eps_for(&ds, 20);
    exact_prediction p;
    exact_predict(&ds, eps, ds.n, ds.n, &p);
    center_facts f;
    const double *m = center_means(&ds, &f);
    exact_bound b;
    exact_bound_init(&b, ds.d);
    CHECK(p.err_raw == exact_bound_delta(&b, f.nmax_raw, f.nmax_raw, eps) / (eps * eps));
    CHECK(p.err_centred ==
          exact_bound_delta(&b, f.nmax_centred, f.nmax_centred, eps) / (eps * eps));
    CHECK(p.auto_centres && p.err_centred < p.err_raw / 1000);
    CHECK(f.vmax_centred < EXACT_FP16_MAX); /* no scale */
    double *nr = malloc(2 * ds.n * sizeof *nr);
    for (size_t i = 0; i < ds.n; i++)
        hand_rho(&ds, i, m, &nr[2 * i], &nr[2 * i + 1]);
    uint64_t in = 0, band = 0;
    for (size_t i = 0; i < ds.n; i++)
        for (size_t j = 0; j < ds.n; j++) {
            double s = 0;
            for (size_t k = 0; k < ds.d; k++) {
                const double a = ((double *)ds.v)[i * ds.d + k], c = ((double *)ds.v)[j * ds.d + k];
                s += (a - c) * (a - c);
            }
            in += s <= eps * eps;
            band += fabs(s - eps * eps) <= exact_bound_delta_rho(&b, nr[2 * i], nr[2 * j],
                                                                 nr[2 * i + 1], nr[2 * j + 1], eps);
        }
    free(nr);
    CHECK(p.rows == ds.n && p.cols == ds.n && p.in == in && p.band == band);
    CHECK(p.band_fraction == (double)band / (double)in);
    printf("# offset 1e4: bound %.3g eps^2 uncentred, %.3g centred; band %llu of %llu\n", p.err_raw,
           p.err_centred, (unsigned long long)band, (unsigned long long)in);
    dataset_free(&ds);
}

/* Large enough for the ranges of src/par.c: each mean within a few ulps of
 * a long double column sum here, and the largest norms as a plain loop
 * finds them. */
TEST(means_over_parallel_ranges)
{
    dataset ds = make("big", (size_t)1 << 15, 40);
    rng_state = 77;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = 1e4 * (double)(k % 40) + rng_unit();
    finish(&ds);
    center_facts f;
    const double *m = center_means(&ds, &f);
    CHECK(m != NULL);
    double nraw = 0, ncen = 0;
    for (size_t k = 0; k < ds.d; k++) {
        long double s = 0;
        for (size_t i = 0; i < ds.n; i++)
            s += ((double *)ds.v)[i * ds.d + k];
        const double want = (double)(s / (long double)ds.n);
        CHECK_MSG(fabs(m[k] - want) <= 4 * 0x1p-52 * fabs(want) + 1e-300,
                  "column %zu: %.17g vs %.17g", k, m[k], want);
    }
    for (size_t i = 0; i < ds.n; i++) {
        double r = 0, c = 0;
        for (size_t k = 0; k < ds.d; k++) {
            const double v = ((double *)ds.v)[i * ds.d + k], w = v - m[k];
            r += v * v;
            c += w * w;
        }
        nraw = fmax(nraw, sqrt(r));
        ncen = fmax(ncen, sqrt(c));
    }
    CHECK(f.nmax_raw == nraw && f.nmax_centred == ncen);
    dataset_free(&ds);
}
