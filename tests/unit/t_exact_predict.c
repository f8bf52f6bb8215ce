/* What `info` predicts for the exact engines (src/exact_predict.c) on data
 * near the largest double.
 * Test plan:
 * - the prediction is a property of the values as the engine converts
 *   them: the engine scales by a power of two into FP16's range, so the
 *   same points times 2^998, at eps times 2^998, predict the same bound,
 *   the same centring and the same sampled pair counts, bit for bit; at
 *   that scale eps^2 and the squared norms overflow a double;
 * - the sampled pairs within eps, counted here by hand on the small set,
 *   are what both predictions report. */
#include "exact_predict.h"
#include "exact_sets.h"

/* 100 points of [1e5, 4e5)^3 times 2^shift: beyond FP16's range as loaded
 * and centred, so the engine scales them down at either shift (it never
 * scales up); at shift 998 their column sums still fit a double. */
static dataset set_far(int shift)
{
    dataset ds = make(shift ? "far-big" : "far", 100, 3);
    rng_state = 41;
    for (size_t k = 0; k < ds.n * ds.d; k++)
        ((double *)ds.v)[k] = ldexp(1e5 + 3e5 * rng_unit(), shift);
    finish(&ds);
    return ds;
}

TEST(near_the_largest_double_predicts_as_scaled_down)
{
    dataset small = set_far(0), big = set_far(998);
    const double eps = 4e4, big_eps = ldexp(eps, 998);
    CHECK(isinf(big_eps * big_eps)); /* the case: eps^2 is beyond a double */
    exact_prediction ps, pb;
    exact_predict(&small, eps, small.n, small.n, &ps);
    exact_predict(&big, big_eps, big.n, big.n, &pb);
    CHECK_MSG(isfinite(pb.err_raw) && isfinite(pb.err_centred), "err %g, centred %g", pb.err_raw,
              pb.err_centred);
    CHECK_MSG(pb.err_raw == ps.err_raw, "%g against %g", pb.err_raw, ps.err_raw);
    CHECK_MSG(pb.err_centred == ps.err_centred, "%g against %g", pb.err_centred, ps.err_centred);
    CHECK(pb.auto_centres == ps.auto_centres);
    uint64_t in = 0;
    for (size_t i = 0; i < small.n; i++)
        for (size_t j = 0; j < small.n; j++) {
            double s = 0;
            for (size_t k = 0; k < small.d; k++) {
                const double u =
                    ((double *)small.v)[i * small.d + k] - ((double *)small.v)[j * small.d + k];
                s += u * u;
            }
            in += s <= eps * eps;
        }
    CHECK(in > small.n && in < small.n * small.n); /* neighbours beyond self, not all */
    CHECK_MSG(ps.in == in && pb.in == in, "in %llu and %llu, by hand %llu",
              (unsigned long long)ps.in, (unsigned long long)pb.in, (unsigned long long)in);
    CHECK_MSG(pb.band == ps.band && pb.band_fraction == ps.band_fraction, "band %llu against %llu",
              (unsigned long long)pb.band, (unsigned long long)ps.band);
    dataset_free(&small);
    dataset_free(&big);
}
