/* The first generators' rows (src/gen.h; the table in src/gen_table.c):
 *   uniform  every value uniform in [0, 1)
 *   expo     TED-Join's exponential data: -ln(1-u)/lambda (lambda 40),
 *            redrawn while above 1, so values lie in [0, 1] (with lambda 40 a
 *            redraw has probability e^-40: the shape is not truncated visibly);
 *            where a draw lands in [0, 1] less than half the time (lambda
 *            below ln 2) the truncated law is sampled directly by inversion,
 *            -ln(1 - u(1 - e^-lambda))/lambda, so no lambda loops forever
 *   gauss    `clusters` centres uniform in [0, 1)^d, drawn first; each point
 *            picks a centre uniformly and adds N(0, sigma^2) per coordinate
 *            (Box-Muller), not clipped; more centres than points is refused;
 *            a fraction `background` (0) of the points uniform in [0, 1)^d
 *   ints     every value an integer uniform in {-4, ..., 4}: held exactly
 *            by every format (FP16, BF16, FP8, INT8) and every dot product
 *            of them exact in FP32 below d = 2^19, so every engine's count
 *            equals FP64's (the teaching ladder's data)
 * Their values and names are those of the generator before it was a table
 * (tests/unit/t_gen.c pins them). */
#include <math.h>
#include <stdlib.h>

#include "err.h"
#include "gen.h"
#include "mem.h"

static void uniform_rows(gen_ctx *g, double *x, size_t m)
{
    for (size_t i = 0; i < m * g->d; i++)
        x[i] = gen_rng_unit(&g->r);
}

const gen_kind gen_uniform = {
    .name = "uniform",
    .help = "values uniform in [0, 1)",
    .rows = uniform_rows,
};

static const gen_param expo_params[] = {
    {.name = "lambda", .what = "a rate", .def = 40, .min = 0, .min_open = 1, .tag = "-l"},
};

static void expo_rows(gen_ctx *g, double *x, size_t m)
{
    const double lambda = g->p[0].x;
    /* the chance a draw lies in [0, 1] is 1 - e^-lambda (as the negative
     * expm1, exact for tiny lambda); below 1/2 invert instead. Two libm
     * calls a block: not worth a set-up. */
    const double accept = expm1(-lambda);
    if (accept > -0.5) {
        for (size_t i = 0; i < m * g->d; i++)
            x[i] = fmin(-log1p(gen_rng_unit(&g->r) * accept) / lambda, 1.0);
        return;
    }
    for (size_t i = 0; i < m * g->d; i++) {
        double u;
        do
            u = -log1p(-gen_rng_unit(&g->r)) / lambda;
        while (u > 1.0);
        x[i] = u;
    }
}

const gen_kind gen_expo = {
    .name = "expo",
    .help = "exponential with rate lambda= (default 40, TED-Join's), in [0, 1]",
    GEN_PARAMS(expo_params),
    .rows = expo_rows,
};

static const gen_param gauss_params[] = {
    {.name = "clusters",
     .what = "a number of centres",
     .def = 16,
     .whole = 1,
     .min = 1,
     .tag = "-c"},
    {.name = "sigma",
     .what = "a standard deviation",
     .def = 0.05,
     .min = 0,
     .min_open = 1,
     .tag = "-sg"},
    {.name = "background", .what = "a fraction", .def = 0, .min = 0, .max = 1, .tag = "-bg"},
};

static int gauss_check(const gen_ctx *g, uint64_t *extra)
{
    const size_t clusters = g->p[0].z;
    /* a centre no point can pick is only time and memory (1e9 centres for
     * 100 points take 15.6 GB and a long time to draw) */
    if (clusters > g->n)
        return err_set(TCJ_EINVAL,
                       "gen gauss: clusters=%zu is more than the n=%zu points; at most n centres "
                       "can be used",
                       clusters, g->n);
    if (__builtin_mul_overflow((uint64_t)clusters, (uint64_t)g->d, extra) ||
        __builtin_mul_overflow(*extra, sizeof(double), extra))
        *extra = UINT64_MAX;
    return 0;
}

static int gauss_begin(gen_ctx *g)
{
    const size_t cd = g->p[0].z * g->d;
    double *c = mem_alloc(g->what, "the cluster centres", cd, sizeof(double), 0);
    if (!c)
        return TCJ_ENOMEM;
    g->setup = c;
    for (size_t i = 0; i < cd; i++) {
        if (!(i & 0xffff) && g->cancel && *g->cancel)
            return TCJ_ECANCEL;
        c[i] = gen_rng_unit(&g->r);
    }
    return 0;
}

/* With background > 0 each point first draws u: below it the point is
 * uniform in [0, 1)^d, the centres' box (far from every centre in high d:
 * noise to a clustering). 0 draws nothing more, so the default's values
 * are those of the generator before the parameter. */
static void gauss_rows(gen_ctx *g, double *x, size_t m)
{
    const size_t d = g->d, clusters = g->p[0].z;
    const double sigma = g->p[1].x, bg = g->p[2].x;
    const double *c = g->setup;
    for (size_t i = 0; i < m; i++) {
        if (bg > 0 && gen_rng_unit(&g->r) < bg) {
            for (size_t j = 0; j < d; j++)
                x[i * d + j] = gen_rng_unit(&g->r);
            continue;
        }
        const double *ci = c + (size_t)(gen_rng_unit(&g->r) * (double)clusters) * d;
        for (size_t j = 0; j < d; j++)
            x[i * d + j] = ci[j] + sigma * gen_rng_normal(&g->r);
    }
}

const gen_kind gen_gauss = {
    .name = "gauss",
    .help = "Gaussian clusters: clusters= centres (16), std dev sigma= (0.05), background= (0)",
    GEN_PARAMS(gauss_params),
    .setup_what = "clusters x d centres",
    .check = gauss_check,
    .begin = gauss_begin,
    .rows = gauss_rows,
};

static void ints_rows(gen_ctx *g, double *x, size_t m)
{
    for (size_t i = 0; i < m * g->d; i++)
        x[i] = floor(gen_rng_unit(&g->r) * 9.0) - 4.0;
}

const gen_kind gen_ints = {
    .name = "ints",
    .help = "integers uniform in {-4, ..., 4}: exact in every format",
    .rows = ints_rows,
};
