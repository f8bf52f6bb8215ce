/* Generated datasets. The generator is self-contained (splitmix64 seeding
 * xoshiro256**, doubles from the top 53 bits) so a seed gives the same
 * values on any machine; the non-uniform kinds also use log, sqrt and cos
 * from libm, which glibc computes identically across x86-64 and AArch64.
 *   uniform  every value uniform in [0, 1)
 *   expo     TED-Join's exponential data: -ln(1-u)/lambda (lambda 40),
 *            redrawn while above 1, so values lie in [0, 1] (with lambda 40 a
 *            redraw has probability e^-40: the shape is not truncated visibly);
 *            where a draw lands in [0, 1] less than half the time (lambda
 *            below ln 2) the truncated law is sampled directly by inversion,
 *            -ln(1 - u(1 - e^-lambda))/lambda, so no lambda loops forever
 *   gauss    `clusters` centres uniform in [0, 1)^d, drawn first; each point
 *            picks a centre uniformly and adds N(0, sigma^2) per coordinate
 *            (Box-Muller), not clipped; more centres than points is refused
 *   ints     every value an integer uniform in {-4, ..., 4}: held exactly
 *            by every format (FP16, BF16, FP8, INT8) and every dot product
 *            of them exact in FP32 below d = 2^19, so every engine's count
 *            equals FP64's (the teaching ladder's data)
 * Every value is generated in FP64 and then kept as dtype says: f32 by
 * default (rounded to nearest, so a uniform value just below 1 may become
 * 1.0f), f64 when asked (dtype=f64, the values of earlier versions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "err.h"
#include "load_util.h"
#include "mem.h"

typedef struct rng {
    uint64_t s[4];
} rng;

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void rng_seed(rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static uint64_t rng_next(rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return out;
}

/* uniform in [0, 1) */
static double rng_unit(rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_normal(rng *r)
{
    double u1 = 1.0 - rng_unit(r), u2 = rng_unit(r); /* u1 in (0, 1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

int dataset_generate(const gen_opts *opt, dataset *out)
{
    memset(out, 0, sizeof *out);
    const char *kind = opt->kind ? opt->kind : "uniform";
    double lambda = opt->lambda > 0 ? opt->lambda : 40;
    double sigma = opt->sigma > 0 ? opt->sigma : 0.05;
    size_t clusters = opt->clusters ? opt->clusters : 16;
    int k = 0; /* its index in gen_kinds: 0 uniform, 1 expo, 2 gauss, 3 ints */
    while (gen_kinds[k] && strcmp(kind, gen_kinds[k]))
        k++;
    if (!gen_kinds[k])
        return err_set(TCJ_EINVAL, "unknown generator '%s' (uniform, expo, gauss, ints)", kind);
    if (opt->n < 2)
        return err_set(TCJ_EINVAL, "%s: n=%zu; a self-join needs at least 2 points", kind, opt->n);
    if (opt->d < 1)
        return err_set(TCJ_EINVAL, "%s: d=0: points need at least one coordinate", kind);
    size_t n = opt->n, d = opt->d;
    /* a centre no point can pick is only time and memory (1e9 centres for
     * 100 points took 70 s and 15.6 GB) */
    if (k == 2 && clusters > n)
        return err_set(TCJ_EINVAL,
                       "gen gauss: clusters=%zu is more than the n=%zu points; at most n centres "
                       "can be used",
                       clusters, n);
    if (k == 1 && !isfinite(lambda))
        return err_set(TCJ_EINVAL, "gen expo: lambda=%g is not a finite rate", lambda);
    /* the points and, for gauss, the centres must fit in memory: refused
     * up front with the size, never an abort or a machine in swap */
    const dtype *t = dtype_get(opt->dtype);
    uint64_t vals, cvals = 0, bytes, cbytes;
    if (__builtin_mul_overflow((uint64_t)n, (uint64_t)d, &vals) ||
        (k == 2 && __builtin_mul_overflow((uint64_t)clusters, (uint64_t)d, &cvals)) ||
        __builtin_mul_overflow(vals, t->bytes, &bytes) ||
        __builtin_mul_overflow(cvals, sizeof(double), &cbytes) ||
        __builtin_add_overflow(bytes, cbytes, &bytes) ||
        /* and the FP64 block the rows are generated in: one row of 2.1 GB
         * at d = 2^28 */
        __builtin_add_overflow(bytes, (uint64_t)(d < 8192 ? 8192 / d * d : d) * 8, &bytes) ||
        bytes > SIZE_MAX / 2)
        return err_set(TCJ_ENOMEM, "gen %s: n=%zu x d=%zu%s does not fit in memory", kind, n, d,
                       k == 2 ? " (and the cluster centres)" : "");
    uint64_t avail = ld_mem_available();
    if (bytes > avail) {
        char a[32], b[32];
        return err_set(TCJ_ENOMEM, "gen %s: needs %s of memory for n=%zu x d=%zu%s; %s available",
                       kind, mem_bytes_str(bytes, a), n, d,
                       k == 2 ? " and clusters x d centres" : "", mem_bytes_str(avail, b));
    }
    const volatile int *cancel = opt->cancel;
    /* expo: the chance a draw lies in [0, 1] is 1 - e^-lambda (as the
     * negative expm1, exact for tiny lambda); below 1/2 invert instead */
    const double accept = expm1(-lambda);
    const int inverse = k == 1 && accept > -0.5;
    /* Generated in FP64 as always, a block of rows at a time, and stored
     * rounded to the element type (f32 unless asked for f64): the values
     * are those of the FP64 generator, each rounded to nearest. */
    const size_t blk = d < 8192 ? 8192 / d : 1;
    char what[32];
    snprintf(what, sizeof what, "gen %s", kind);
    /* the FP64 block is a row at large d (2.1 GB at d = 2^28): checked
     * with the values (src/mem.h), as is malloc itself under ulimit -v */
    double *x = mem_alloc(what, "a block of FP64 rows", blk * d, sizeof(double), 0);
    char *v = x ? mem_alloc(what, "the values", vals, t->bytes, 0) : NULL;
    double *c = NULL;
    if (!v) {
        free(x);
        return TCJ_ENOMEM;
    }
    rng r;
    rng_seed(&r, opt->seed);
    int rc = 0;
    if (k == 2) {
        if (!(c = mem_alloc(what, "the cluster centres", clusters * d, sizeof(double), 0))) {
            free(x);
            free(v);
            return TCJ_ENOMEM;
        }
        for (size_t i = 0; i < clusters * d && !rc; i++) {
            if (!(i & 0xffff) && cancel && *cancel)
                rc = TCJ_ECANCEL;
            c[i] = rng_unit(&r);
        }
    }
    /* Ctrl-C is looked at every block: well under a millisecond */
    for (size_t i0 = 0; i0 < n && !rc; i0 += blk) {
        if (cancel && *cancel)
            rc = TCJ_ECANCEL;
        const size_t m = n - i0 < blk ? n - i0 : blk;
        if (k == 0) {
            for (size_t i = 0; i < m * d; i++)
                x[i] = rng_unit(&r);
        } else if (k == 3) {
            for (size_t i = 0; i < m * d; i++)
                x[i] = floor(rng_unit(&r) * 9.0) - 4.0;
        } else if (k == 1 && inverse) {
            for (size_t i = 0; i < m * d; i++)
                x[i] = fmin(-log1p(rng_unit(&r) * accept) / lambda, 1.0);
        } else if (k == 1) {
            for (size_t i = 0; i < m * d; i++) {
                double u;
                do
                    u = -log1p(-rng_unit(&r)) / lambda;
                while (u > 1.0);
                x[i] = u;
            }
        } else {
            for (size_t i = 0; i < m; i++) {
                const double *ci = c + (size_t)(rng_unit(&r) * (double)clusters) * d;
                for (size_t j = 0; j < d; j++)
                    x[i * d + j] = ci[j] + sigma * rng_normal(&r);
            }
        }
        t->from_f64(x, m * d, v + i0 * d * t->bytes);
    }
    free(c);
    free(x);
    if (rc) {
        free(v);
        return err_cancelled("gen %s", kind);
    }
    char name[160];
    int m = snprintf(name, sizeof name, "%s-n%zu-d%zu", kind, n, d);
    if (k == 1 && lambda != 40)
        m += snprintf(name + m, sizeof name - m, "-l%g", lambda);
    if (k == 2 && clusters != 16)
        m += snprintf(name + m, sizeof name - m, "-c%zu", clusters);
    if (k == 2 && sigma != 0.05)
        m += snprintf(name + m, sizeof name - m, "-sg%g", sigma);
    m += snprintf(name + m, sizeof name - m, "-s%llu", (unsigned long long)opt->seed);
    if (t->id != DTYPE_F32)
        snprintf(name + m, sizeof name - m, "-%s", t->name);
    out->name = xstrdup(name);
    out->path = NULL;
    out->format = xstrdup("synth");
    out->n = n;
    out->d = d;
    out->type = t->id;
    out->v = v;
    if (dataset_hash_checked(out, cancel, &out->hash)) {
        dataset_free(out);
        return err_cancelled("gen %s", kind);
    }
    return 0;
}
