/* Generators: determinism by seed, the documented PRNG (first values checked
 * against an independent python3 implementation of splitmix64 seeding
 * xoshiro256**), value ranges and shapes. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "dataset.h"
#include "err.h"

static int gen(const char *kind, size_t n, size_t d, uint64_t seed, dataset *ds)
{
    gen_opts o;
    gen_opts_init(&o);
    o.kind = kind;
    o.n = n;
    o.d = d;
    o.seed = seed;
    return dataset_generate(&o, ds);
}

TEST(uniform_known_values)
{
    dataset ds;
    CHECK_MSG(gen("uniform", 3, 1, 42, &ds) == 0, "%s", err_msg());
    /* python3: splitmix64(42) -> xoshiro256**, (next >> 11) * 2^-53, kept
     * as f32 (rounded to nearest) by default */
    static const double want[3] = {0.08386297105988216, 0.3789802506626686, 0.6800434110281394};
    CHECK(ds.type == DTYPE_F32 && dataset_bytes(&ds) == 3 * sizeof(float));
    for (int i = 0; i < 3; i++)
        CHECK(dataset_value(&ds, i) == (double)(float)want[i]);
    CHECK(!strcmp(ds.name, "uniform-n3-d1-s42"));
    CHECK(!strcmp(ds.format, "synth"));
    CHECK(ds.path == NULL);
    dataset_free(&ds);
    /* dtype=f64: the FP64 values themselves, and a name of their own */
    gen_opts o;
    gen_opts_init(&o);
    o.n = 3;
    o.d = 1;
    o.seed = 42;
    CHECK(gen_opts_set(&o, "dtype", "f64") == 0);
    CHECK(gen_opts_set(&o, "dtype", "u8") == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "dtype=u8: expected f32 or f64");
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK(ds.type == DTYPE_F64 && dataset_bytes(&ds) == 3 * sizeof(double));
    for (int i = 0; i < 3; i++)
        CHECK(dataset_value(&ds, i) == want[i]);
    CHECK(!strcmp(ds.name, "uniform-n3-d1-s42-f64"));
    dataset_free(&ds);
}

TEST(same_seed_same_data)
{
    const char *kinds[] = {"uniform", "expo", "gauss"};
    for (int k = 0; k < 3; k++) {
        dataset a, b, c;
        CHECK(gen(kinds[k], 1000, 7, 42, &a) == 0);
        CHECK(gen(kinds[k], 1000, 7, 42, &b) == 0);
        CHECK(gen(kinds[k], 1000, 7, 43, &c) == 0);
        CHECK_MSG(a.hash == b.hash && !memcmp(a.v, b.v, dataset_bytes(&a)), "%s", kinds[k]);
        CHECK_MSG(a.hash != c.hash && memcmp(a.v, c.v, dataset_bytes(&a)), "%s", kinds[k]);
        CHECK(a.hash == dataset_hash(&a));
        dataset_free(&a);
        dataset_free(&b);
        dataset_free(&c);
    }
}

TEST(uniform_range_and_mean)
{
    dataset ds;
    CHECK(gen("uniform", 20000, 5, 7, &ds) == 0);
    double s = 0;
    for (size_t i = 0; i < ds.n * ds.d; i++) {
        /* f32 rounds a value within 2^-25 of 1 up to 1 */
        CHECK(dataset_value(&ds, i) >= 0 && dataset_value(&ds, i) <= 1);
        s += dataset_value(&ds, i);
    }
    /* mean of 100000 uniforms: std error 0.0009; 0.005 is over 5 of them */
    CHECK_NEAR(s / 100000, 0.5, 0.005);
    dataset_free(&ds);
}

TEST(expo_in_unit_interval)
{
    dataset ds;
    CHECK(gen("expo", 100000, 2, 42, &ds) == 0);
    CHECK(!strcmp(ds.name, "expo-n100000-d2-s42"));
    double s = 0, mx = 0;
    for (size_t i = 0; i < ds.n * ds.d; i++) {
        CHECK(dataset_value(&ds, i) >= 0 && dataset_value(&ds, i) <= 1);
        s += dataset_value(&ds, i);
        if (dataset_value(&ds, i) > mx)
            mx = dataset_value(&ds, i);
    }
    /* exponential with rate 40: mean 1/40, std error 0.025/sqrt(2e5) = 5.6e-5 */
    CHECK_NEAR(s / 200000, 0.025, 0.0005);
    CHECK(mx > 0.2); /* the tail is there: P(max of 2e5 < 0.2) = (1-e^-8)^2e5 ~ e^-67 */
    dataset_free(&ds);
    gen_opts o;
    gen_opts_init(&o);
    o.kind = "expo";
    o.n = 50000;
    o.d = 1;
    o.lambda = 1; /* a third of the draws exceed 1 and are redrawn */
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK(!strcmp(ds.name, "expo-n50000-d1-l1-s0"));
    for (size_t i = 0; i < ds.n; i++)
        CHECK(dataset_value(&ds, i) >= 0 && dataset_value(&ds, i) <= 1);
    dataset_free(&ds);
}

TEST(gauss_clusters)
{
    gen_opts o;
    gen_opts_init(&o);
    o.kind = "gauss";
    o.n = 4000;
    o.d = 3;
    o.seed = 5;
    o.clusters = 2;
    o.sigma = 0.01;
    dataset ds;
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK(!strcmp(ds.name, "gauss-n4000-d3-c2-sg0.01-s5"));
    /* two tight clusters: every point lies within 0.2 (20 sigma) of point 0
     * or of the first point far from it; the fixed seed puts the centres
     * further apart than that (both counts large) */
    double *x = malloc(ds.n * 3 * sizeof *x);
    dataset_rows_f64(&ds, 0, ds.n, x);
    const double *a = x, *b = NULL;
    size_t near_a = 0, near_b = 0;
    for (size_t i = 0; i < ds.n; i++) {
        const double *p = x + i * 3;
        double da = 0, db = 0;
        for (int j = 0; j < 3; j++)
            da += (p[j] - a[j]) * (p[j] - a[j]);
        if (da < 0.04) {
            near_a++;
            continue;
        }
        if (!b)
            b = p;
        for (int j = 0; j < 3; j++)
            db += (p[j] - b[j]) * (p[j] - b[j]);
        near_b += db < 0.04;
    }
    CHECK_EQ_INT(near_a + near_b, 4000);
    CHECK(near_a > 1500 && near_b > 1500);
    free(x);
    dataset_free(&ds);
}

TEST(bad_generator_options)
{
    dataset ds;
    CHECK(gen("uniform", 1, 4, 0, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "a self-join needs at least 2 points");
    CHECK(gen("uniform", 10, 0, 0, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "d=0");
    CHECK(gen("zipf", 10, 2, 0, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "unknown generator 'zipf'");
    gen_opts o;
    gen_opts_init(&o);
    CHECK(gen_opts_set(&o, "kind", "expo") == 0 && !strcmp(o.kind, "expo"));
    CHECK(gen_opts_set(&o, "n", "100k") == 0 && o.n == 100000);
    CHECK(gen_opts_set(&o, "seed", "42") == 0 && o.seed == 42);
    CHECK(gen_opts_set(&o, "lambda", "-1") == TCJ_EINVAL);
    CHECK(gen_opts_set(&o, "sigma", "x") == TCJ_EINVAL);
    CHECK(gen_opts_set(&o, "kind", "pareto") == TCJ_EINVAL);
    CHECK(gen_opts_set(&o, "colour", "1") == TCJ_EINVAL);
}
