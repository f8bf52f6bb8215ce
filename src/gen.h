/* Generators as a table: one row per kind (src/gen_table.c), the kinds'
 * code one file per family (src/gen_basic.c: uniform, expo, gauss, ints;
 * src/gen_halo.c: halo), and one driver, dataset_generate (src/gen.c),
 * that checks sizes and memory, runs a kind's rows a block at a time,
 * rounds to the element type and names and hashes the dataset. A new kind
 * is one new file and one row in gen_table. */
#ifndef TCJ_GEN_H
#define TCJ_GEN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "dataset.h"

/* The PRNG, the same on every machine: splitmix64(seed) fills the state of
 * xoshiro256**; a double is its top 53 bits times 2^-53. Static inline so
 * every kind (and the tests' reference implementations) draw the one
 * stream. */
typedef struct gen_rng {
    uint64_t s[4];
} gen_rng;

static inline uint64_t gen_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static inline void gen_rng_seed(gen_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = gen_splitmix64(&seed);
}

static inline uint64_t gen_rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

static inline uint64_t gen_rng_next(gen_rng *r)
{
    uint64_t *s = r->s;
    uint64_t out = gen_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = gen_rotl(s[3], 45);
    return out;
}

/* uniform in [0, 1) */
static inline double gen_rng_unit(gen_rng *r)
{
    return (double)(gen_rng_next(r) >> 11) * 0x1.0p-53;
}

/* N(0, 1) by Box-Muller, one value from two draws (log, sqrt, cos) */
static inline double gen_rng_normal(gen_rng *r)
{
    double u1 = 1.0 - gen_rng_unit(r), u2 = gen_rng_unit(r); /* u1 in (0, 1] */
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* One parameter of a kind, a key=value word of `gen`. Its value is refused
 * below min (at min too when min_open) and above max where max > min. */
typedef struct gen_param {
    const char *name; /* the key: "lambda" */
    const char *what; /* in a refusal, "expected WHAT > 0": "a rate" */
    double def;       /* the value when not given */
    int whole;        /* a whole number (read into gen_val.z) */
    double min;       /* lower bound */
    int min_open;     /* min itself refused */
    double max;       /* upper bound (inclusive) where max > min, else none */
    const char *tag;  /* the dataset name's tag, before the value, when it is not def: "-l" */
} gen_param;

/* A parameter's value: z for a whole number (x holds it too, as a double). */
typedef struct gen_val {
    double x;
    size_t z;
} gen_val;

#define GEN_MAX_PARAMS 8 /* per kind */

/* One generation: what a kind's functions see. */
typedef struct gen_ctx {
    size_t n, d;
    gen_val p[GEN_MAX_PARAMS]; /* the kind's parameters, in its row's order */
    gen_rng r;                 /* the one stream, seeded from gen_opts.seed */
    const volatile int *cancel;
    const char *what; /* "gen gauss": for mem_alloc's lines */
    void *setup;      /* begin's allocation, freed by end */
} gen_ctx;

typedef struct gen_kind {
    const char *name;
    const char *help;        /* one line of gen's help: "values uniform in [0, 1)" */
    const gen_param *params; /* nparams rows */
    int nparams;
    /* The set-up in the memory lines ("gen gauss: needs ... for n=.. x d=..
     * and clusters x d centres"); NULL where begin allocates nothing. */
    const char *setup_what;
    /* Refuse a bad combination with one line (TCJ_EINVAL) and set *extra
     * to the bytes begin will allocate (UINT64_MAX: beyond 64 bits). NULL:
     * nothing to refuse, no set-up. */
    int (*check)(const gen_ctx *g, uint64_t *extra);
    /* Draw the set-up (gauss's centres) from g->r before any point and keep
     * it in g->setup, which end frees whatever begin returned: 0,
     * TCJ_ENOMEM (mem_alloc's line) or TCJ_ECANCEL. NULL: none. */
    int (*begin)(gen_ctx *g);
    /* m rows of d FP64 values into x, drawn from g->r. */
    void (*rows)(gen_ctx *g, double *x, size_t m);
    void (*end)(gen_ctx *g); /* free g->setup; NULL: free() it */
} gen_kind;

/* A row's parameters from their array: .params and .nparams in one. */
#define GEN_PARAMS(a) .params = (a), .nparams = (int)(sizeof(a) / sizeof((a)[0]))

extern const gen_kind *const gen_table[]; /* NULL-terminated, src/gen_table.c */
const gen_kind *gen_kind_find(const char *name);
/* The kinds' names, separated by sep ("uniform expo gauss ints halo"), in
 * a static buffer. */
const char *gen_kind_names(const char *sep);
/* k's parameter of that name (k NULL: the first kind's that takes it),
 * or NULL. */
const gen_param *gen_param_find(const gen_kind *k, const char *name);
/* Read val as p's value: 0, or TCJ_EINVAL naming the key and what was
 * expected (src/gen.c). */
int gen_param_parse(const gen_param *p, const char *val, gen_val *out);

/* The kinds, one file per family. */
extern const gen_kind gen_uniform, gen_expo, gen_gauss, gen_ints; /* src/gen_basic.c */
extern const gen_kind gen_halo;                                   /* src/gen_halo.c */

#endif
