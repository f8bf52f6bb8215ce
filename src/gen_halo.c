/* halo: a cosmology-like low-dimensional set, dense halos whose sizes
 * follow a power law in a uniform background (the dense-cell path of a
 * grid join on low-dimensional data; docs/DATASETS.md).
 *   set-up  H halos (halos=, default max(1, n / 185): 200,000 for n =
 *           3.7e7), drawn before any point: the H centres uniform in
 *           [0, 1)^d (H x d draws, row by row), then one weight per halo
 *           from a power law truncated to [1, W], W = 10^4, alpha = a:
 *             w = (1 - u (1 - W^(1-a)))^(1/(1-a)),  a = 1: w = W^u,
 *           and the radius r = radius * w^(1/d): a bigger halo is wider at
 *           about the same central density.
 *   a point one draw u: below noise= it is background, d uniform draws;
 *           else one more draw picks halo h with probability w_h / sum(w)
 *           (binary search of the cumulative weights, O(log H)), and each
 *           coordinate is centre + r_h N(0, 1) (Box-Muller, as gauss), not
 *           clipped.
 * Powers are written with exp and log so the kind calls only log, exp,
 * sqrt and cos from libm (src/gen.c). */
#include <math.h>
#include <stdlib.h>

#include "err.h"
#include "gen.h"
#include "mem.h"

#define HALO_WMAX 1e4       /* the heaviest halo's weight, the lightest's 1 */
#define HALO_PER_POINTS 185 /* halos=0: one halo per this many points */

enum { HALO_H, HALO_ALPHA, HALO_NOISE, HALO_RADIUS };

static const gen_param halo_params[] = {
    [HALO_H] = {.name = "halos",
                .what = "a number of halos (0: n / 185)",
                .def = 0,
                .whole = 1,
                .min = 0,
                .tag = "-h"},
    [HALO_ALPHA] =
        {.name = "alpha", .what = "a power-law exponent", .def = 2.0, .min = 1, .tag = "-a"},
    [HALO_NOISE] =
        {.name = "noise", .what = "a fraction", .def = 0.36, .min = 0, .max = 1, .tag = "-nz"},
    [HALO_RADIUS] =
        {.name = "radius", .what = "a length", .def = 0.0001, .min = 0, .min_open = 1, .tag = "-r"},
};

/* The set-up, one allocation: H x d centres, then H cumulative weights,
 * then H radii. */
typedef struct halo_setup {
    size_t h;
    double *centre, *cum, *radius;
} halo_setup;

static size_t halo_count(const gen_ctx *g)
{
    const size_t h = g->p[HALO_H].z;
    if (h)
        return h;
    return g->n / HALO_PER_POINTS > 1 ? g->n / HALO_PER_POINTS : 1;
}

static int halo_check(const gen_ctx *g, uint64_t *extra)
{
    const size_t h = halo_count(g);
    /* as gauss's centres: a halo no point can pick is only time and memory */
    if (h > g->n)
        return err_set(TCJ_EINVAL,
                       "gen halo: halos=%zu is more than the n=%zu points; at most n halos can be "
                       "used",
                       h, g->n);
    if (__builtin_add_overflow((uint64_t)g->d, (uint64_t)2, extra) ||
        __builtin_mul_overflow(*extra, (uint64_t)h, extra) ||
        __builtin_mul_overflow(*extra, sizeof(double), extra) ||
        __builtin_add_overflow(*extra, (uint64_t)sizeof(halo_setup), extra))
        *extra = UINT64_MAX;
    return 0;
}

static int halo_begin(gen_ctx *g)
{
    const size_t h = halo_count(g), d = g->d;
    halo_setup *s = mem_alloc(g->what, "the halos", 1, sizeof *s + h * (d + 2) * sizeof(double), 0);
    if (!s)
        return TCJ_ENOMEM;
    g->setup = s;
    s->h = h;
    s->centre = (double *)(s + 1);
    s->cum = s->centre + h * d;
    s->radius = s->cum + h;
    for (size_t i = 0; i < h * d; i++) {
        if (!(i & 0xffff) && g->cancel && *g->cancel)
            return TCJ_ECANCEL;
        s->centre[i] = gen_rng_unit(&g->r);
    }
    const double a = g->p[HALO_ALPHA].x, lw = log(HALO_WMAX);
    /* 1 - W^(1-a): the share of the untruncated law's mass that lies in [1, W] */
    const double span = a == 1 ? 0 : 1 - exp((1 - a) * lw);
    double sum = 0;
    for (size_t k = 0; k < h; k++) {
        const double u = gen_rng_unit(&g->r);
        /* log w; u < 1 keeps the log's argument above W^(1-a) > 0 */
        const double logw = a == 1 ? u * lw : log(1 - u * span) / (1 - a);
        sum += exp(logw);
        s->cum[k] = sum;
        s->radius[k] = g->p[HALO_RADIUS].x * exp(logw / (double)d);
    }
    return 0;
}

/* The halo whose slice of [0, sum(w)) holds t: the first with cum > t
 * (the last when rounding put t at the sum itself). */
static size_t halo_pick(const halo_setup *s, double t)
{
    size_t lo = 0, hi = s->h - 1;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (s->cum[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static void halo_rows(gen_ctx *g, double *x, size_t m)
{
    const halo_setup *s = g->setup;
    const size_t d = g->d;
    const double noise = g->p[HALO_NOISE].x, total = s->cum[s->h - 1];
    for (size_t i = 0; i < m; i++) {
        double *xi = x + i * d;
        if (gen_rng_unit(&g->r) < noise) {
            for (size_t j = 0; j < d; j++)
                xi[j] = gen_rng_unit(&g->r);
            continue;
        }
        const size_t k = halo_pick(s, gen_rng_unit(&g->r) * total);
        const double *c = s->centre + k * d, r = s->radius[k];
        for (size_t j = 0; j < d; j++)
            xi[j] = c[j] + r * gen_rng_normal(&g->r);
    }
}

const gen_kind gen_halo = {
    .name = "halo",
    .help = "dense halos of power-law sizes in a uniform background",
    GEN_PARAMS(halo_params),
    .setup_what = "halos x d centres with weights and radii",
    .check = halo_check,
    .begin = halo_begin,
    .rows = halo_rows,
};
