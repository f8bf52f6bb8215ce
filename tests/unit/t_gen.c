/* Generators (src/gen.h, the table in src/gen_table.c). Test plan:
 *   uniform_known_values .. bad_generator_options: the documented PRNG
 *     (first values checked against an independent python3
 *     implementation of splitmix64 seeding xoshiro256**), value ranges
 *     and shapes of the first kinds, determinism by seed for every kind
 *     of the table;
 *   values_as_before_the_table: each old kind's values and names at a few
 *     (n, d, seed, parameters) equal those of the generator before it
 *     became a table (hashes pinned);
 *   table_*: gen_opt_names holds every kind's parameters and nothing
 *     else; a kind refuses another kind's parameter; gen's help and the
 *     man page's gen entry name every kind and parameter;
 *   halo_*: halo against a reference written from its documentation, the
 *     background fraction, the halos' shares and radii, its refusals. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "gen.h"

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
    for (const gen_kind *const *k = gen_table; *k; k++) {
        const char *kind = (*k)->name;
        dataset a, b, c;
        CHECK_MSG(gen(kind, 1000, 7, 42, &a) == 0, "%s: %s", kind, err_msg());
        CHECK(gen(kind, 1000, 7, 42, &b) == 0);
        CHECK(gen(kind, 1000, 7, 43, &c) == 0);
        CHECK_MSG(a.hash == b.hash && !memcmp(a.v, b.v, dataset_bytes(&a)), "%s", kind);
        CHECK_MSG(a.hash != c.hash && memcmp(a.v, c.v, dataset_bytes(&a)), "%s", kind);
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
    CHECK(gen_opts_set(&o, "lambda", "1") == 0); /* a third of the draws exceed 1: redrawn */
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK(!strcmp(ds.name, "expo-n50000-d1-l1-s0"));
    for (size_t i = 0; i < ds.n; i++)
        CHECK(dataset_value(&ds, i) >= 0 && dataset_value(&ds, i) <= 1);
    dataset_free(&ds);
}

/* Two tight clusters, 4000 points of d values, seed 5. */
static void two_clusters(gen_opts *o, size_t d)
{
    gen_opts_init(o);
    o->kind = "gauss";
    o->n = 4000;
    o->d = d;
    o->seed = 5;
    CHECK(gen_opts_set(o, "clusters", "2") == 0);
    CHECK(gen_opts_set(o, "sigma", "0.01") == 0);
}

TEST(gauss_clusters)
{
    gen_opts o;
    two_clusters(&o, 3);
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

/* gauss background=0.5: a point is uniform in [0, 1)^16 with probability 1/2,
 * else at one of two centres with sigma 0.01 (some 0.04 from it). A
 * clustered point has about a thousand others within 0.2 (its cluster); a
 * uniform one has none there but with probability far below 1e-9 (two
 * uniform points in 16-d lie some 1.6 apart, and a centre as far from a
 * uniform point), so the points with no other within 0.2 are the uniform
 * ones: Binomial(4000, 1/2), within 5 standard deviations (158) of 2000.
 * The name carries -bg0.5; a fraction beyond 1 is refused. */
TEST(gauss_background)
{
    gen_opts o;
    two_clusters(&o, 16);
    CHECK(gen_opts_set(&o, "background", "0.5") == 0);
    dataset ds;
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK_MSG(!strcmp(ds.name, "gauss-n4000-d16-c2-sg0.01-bg0.5-s5"), "%s", ds.name);
    const size_t n = ds.n, d = 16;
    double *x = malloc(n * d * sizeof *x);
    dataset_rows_f64(&ds, 0, n, x);
    size_t alone = 0, clustered = 0;
    for (size_t i = 0; i < n; i++) {
        size_t near = 0;
        for (size_t j = 0; j < n && near < 10; j++) {
            double s = 0;
            for (size_t k = 0; k < d; k++)
                s += (x[i * d + k] - x[j * d + k]) * (x[i * d + k] - x[j * d + k]);
            near += j != i && s < 0.04;
        }
        if (near == 0) {
            alone++;
            for (size_t k = 0; k < d; k++)
                CHECK(x[i * d + k] >= 0 && x[i * d + k] <= 1);
        } else {
            clustered += near == 10;
        }
    }
    CHECK_MSG(alone + clustered == n, "%zu alone, %zu clustered of %zu", alone, clustered, n);
    CHECK_MSG(alone > 2000 - 158 && alone < 2000 + 158, "%zu uniform points of 4000", alone);
    free(x);
    dataset_free(&ds);
    CHECK(gen_opts_set(&o, "background", "1.5") == TCJ_EINVAL);
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
    CHECK_STR_CONTAINS(err_msg(), "kind=pareto: expected one of: uniform expo gauss ints halo");
    CHECK(gen_opts_set(&o, "colour", "1") == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "unknown generator option 'colour' (kind n d seed lambda");
    /* the refusals of a value name the key and what was expected */
    CHECK(gen_opts_set(&o, "lambda", "-1") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "lambda=-1: expected a rate > 0"));
    CHECK(gen_opts_set(&o, "sigma", "0") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "sigma=0: expected a standard deviation > 0"));
    CHECK(gen_opts_set(&o, "clusters", "0") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "clusters=0: expected a number of centres >= 1"));
    /* the command line's reading of a whole number, and its line */
    CHECK(gen_opts_set(&o, "n", "2.5e5") == 0 && o.n == 250000);
    CHECK(gen_opts_set(&o, "n", "1.5G") == 0 && o.n == 1500000000);
    CHECK(gen_opts_set(&o, "n", "abc") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "n: expected a non-negative integer, got 'abc'"));
    CHECK(gen_opts_set(&o, "clusters", "2.5") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "clusters: expected a non-negative integer, got '2.5'"));
}

/* The values' digest the pins below were taken with: 64-bit FNV-1a over
 * n and d (little-endian uint64) and every value's binary64 bits,
 * row-major (the content hash of the time; dataset_hash is another now,
 * but these pins are of the values). */
static uint64_t fnv_values(const dataset *ds)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    const size_t all = ds->n * ds->d;
    for (size_t k = 0; k < all + 2; k++) {
        uint64_t b;
        if (k < 2) {
            b = k == 0 ? ds->n : ds->d;
        } else {
            double v = dataset_value(ds, k - 2);
            memcpy(&b, &v, 8);
        }
        for (int i = 0; i < 8; i++)
            h = (h ^ ((b >> (8 * i)) & 0xff)) * 0x100000001b3ULL;
    }
    return h;
}

/* A generated set from key=value words. */
static int gen_words(const char *kind, size_t n, size_t d, const char *seed, const char *const *kv,
                     dataset *ds)
{
    gen_opts o;
    gen_opts_init(&o);
    o.kind = kind;
    o.n = n;
    o.d = d;
    int rc = gen_opts_set(&o, "seed", seed);
    for (int i = 0; !rc && kv && kv[i]; i += 2)
        rc = gen_opts_set(&o, kv[i], kv[i + 1]);
    return rc ? rc : dataset_generate(&o, ds);
}

TEST(values_as_before_the_table)
{
    /* The values of the generator before it became a table (src/gen.c at
     * 1751057, its kinds chosen by index): each case generated there by a
     * small driver setting gen_opts' lambda, clusters and sigma, printing
     * the name and ds.hash. Blocks of 8192 / d rows, a row wider than a
     * block (d = 9000), both expo paths (redraw and inversion), gauss with
     * as many centres as points, f32 and f64. */
    /* clang-format off */
    static const struct {
        const char *kind;
        size_t n, d;
        const char *seed;
        const char *kv[8]; /* pairs, NULL-terminated */
        const char *name;
        uint64_t hash;
    } cs[] = {
        {"uniform", 5000, 3, "42", {"dtype", "f64"}, "uniform-n5000-d3-s42-f64",
         0x24307994eadb0baeULL},
        {"uniform", 3, 9000, "7", {"dtype", "f64"}, "uniform-n3-d9000-s7-f64",
         0x1b96d497da3fccc5ULL},
        {"uniform", 1000, 16, "1", {NULL}, "uniform-n1000-d16-s1", 0x0292472fe2818632ULL},
        {"expo", 4000, 3, "42", {"dtype", "f64"}, "expo-n4000-d3-s42-f64", 0x35d25c67e19a68fcULL},
        {"expo", 3000, 2, "5", {"dtype", "f64", "lambda", "1"}, "expo-n3000-d2-l1-s5-f64",
         0xa8956b7138b32514ULL},
        {"expo", 3000, 2, "5", {"dtype", "f64", "lambda", "0.5"}, "expo-n3000-d2-l0.5-s5-f64",
         0x724cfc9c78e21a65ULL},
        {"expo", 2000, 4, "9", {"lambda", "1e-300"}, "expo-n2000-d4-l1e-300-s9",
         0x594c1c64e8866b4dULL},
        {"gauss", 4000, 3, "5", {"dtype", "f64", "clusters", "2", "sigma", "0.01"},
         "gauss-n4000-d3-c2-sg0.01-s5-f64", 0x99f5d632a8adbafaULL},
        {"gauss", 3000, 16, "1", {"dtype", "f64"}, "gauss-n3000-d16-s1-f64", 0x0df8643632282c9bULL},
        {"gauss", 100, 2, "3", {"clusters", "100", "sigma", "0.3"}, "gauss-n100-d2-c100-sg0.3-s3",
         0xfa165befd766fb7fULL},
        {"gauss", 5, 9000, "11", {"dtype", "f64", "clusters", "3"}, "gauss-n5-d9000-c3-s11-f64",
         0xfd4f45d7f8352b98ULL},
        {"ints", 3000, 16, "1", {"dtype", "f64"}, "ints-n3000-d16-s1-f64", 0x6377a5cc4a58eab4ULL},
        {"ints", 700, 9, "123456789", {NULL}, "ints-n700-d9-s123456789", 0x359624ea93f922e3ULL},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        dataset ds;
        CHECK_MSG(gen_words(cs[i].kind, cs[i].n, cs[i].d, cs[i].seed, cs[i].kv, &ds) == 0, "%s: %s",
                  cs[i].name, err_msg());
        CHECK_MSG(!strcmp(ds.name, cs[i].name), "%s, expected %s", ds.name, cs[i].name);
        CHECK_MSG(fnv_values(&ds) == cs[i].hash && ds.hash == dataset_hash(&ds),
                  "%s: values' digest %016llx, expected %016llx", cs[i].name,
                  (unsigned long long)fnv_values(&ds), (unsigned long long)cs[i].hash);
        dataset_free(&ds);
    }
    /* the list of a C caller's designated initialiser gives the same */
    gen_opts o = {.kind = "gauss",
                  .n = 4000,
                  .d = 3,
                  .seed = 5,
                  .opt = {{"clusters", "2"}, {"sigma", "0.01"}},
                  .nopt = 2};
    dataset ds;
    CHECK(dataset_generate(&o, &ds) == 0);
    CHECK(fnv_values(&ds) == 0x99f5d632a8adbafaULL &&
          !strcmp(ds.name, "gauss-n4000-d3-c2-sg0.01-s5-f64"));
    dataset_free(&ds);
}

TEST(table_opt_names_match_the_rows)
{
    /* gen_opt_names is written by hand beside the table: kind, n, d, seed,
     * every kind's parameters and dtype, each once */
    static const char *const own[] = {"kind", "n", "d", "seed", "dtype"};
    CHECK(!strcmp(gen_opt_names[0], "kind"));
    size_t count = 0;
    for (const char *const *o = gen_opt_names; *o; o++, count++) {
        int known = gen_param_find(NULL, *o) != NULL;
        for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
            known += !strcmp(*o, own[i]);
        CHECK_MSG(known == 1, "gen_opt_names: %s is %s", *o,
                  known ? "both gen's own and a kind's" : "no kind's parameter");
        for (const char *const *p = gen_opt_names; p < o; p++)
            CHECK_MSG(strcmp(*p, *o), "gen_opt_names: %s twice", *o);
    }
    size_t params = 0;
    for (const gen_kind *const *k = gen_table; *k; k++) {
        CHECK_MSG((*k)->nparams <= GEN_MAX_PARAMS && (*k)->rows && (*k)->help, "%s", (*k)->name);
        CHECK(gen_kind_find((*k)->name) == *k);
        for (int i = 0; i < (*k)->nparams; i++) {
            const gen_param *p = &(*k)->params[i];
            int listed = 0;
            for (const char *const *o = gen_opt_names; *o; o++)
                listed += !strcmp(*o, p->name);
            CHECK_MSG(listed == 1, "%s's %s is not in gen_opt_names", (*k)->name, p->name);
            /* a parameter name belongs to one kind (gen_opts_set reads a
             * value against the first kind that takes the key) */
            CHECK_MSG(gen_param_find(NULL, p->name) == p, "%s's %s: another kind's too", (*k)->name,
                      p->name);
            CHECK_MSG(p->tag && p->what, "%s's %s: a tag and a what", (*k)->name, p->name);
            params++;
        }
    }
    CHECK_EQ_INT(count, params + sizeof own / sizeof own[0]);
}

TEST(table_kind_refuses_other_kinds_options)
{
    gen_opts o;
    gen_opts_init(&o);
    o.n = 100;
    o.d = 2;
    /* lambda is expo's: kept by gen_opts_set, refused for uniform */
    CHECK(gen_opts_set(&o, "lambda", "3") == 0);
    dataset ds;
    CHECK(dataset_generate(&o, &ds) == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "gen uniform: unknown option 'lambda'; gen uniform takes n= d= seed= "
                             "dtype="));
    gen_opts_init(&o);
    o.n = 100;
    o.d = 2;
    CHECK(gen_opts_set(&o, "kind", "gauss") == 0);
    CHECK(gen_opts_set(&o, "halos", "3") == 0);
    CHECK(dataset_generate(&o, &ds) == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "gen gauss: unknown option 'halos'; gen gauss takes n= d= seed= "
                             "clusters= sigma= background= dtype="));
    /* a key given again replaces its value */
    gen_opts_init(&o);
    o.kind = "expo";
    o.n = 100;
    o.d = 2;
    CHECK(gen_opts_set(&o, "lambda", "3") == 0 && gen_opts_set(&o, "lambda", "5") == 0);
    CHECK_EQ_INT(o.nopt, 1);
    CHECK(dataset_generate(&o, &ds) == 0 && !strcmp(ds.name, "expo-n100-d2-l5-s0"));
    dataset_free(&ds);
}

/* The man page's gen entry as text: from ".B gen " to the next ".TP",
 * \- read as -, font escapes dropped. */
static char *man_gen_entry(void)
{
    FILE *f = fopen("man/tcjoin.1", "r");
    if (!f)
        return NULL;
    static char raw[1 << 20];
    size_t got = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[got] = '\0';
    char *a = strstr(raw, "\n.B gen ");
    char *b = a ? strstr(a + 1, "\n.TP") : NULL;
    if (!b)
        return NULL;
    *b = '\0';
    char *out = malloc((size_t)(b - a) + 1), *w = out;
    for (const char *p = a; *p; p++) {
        if (p[0] == '\\' && p[1] == 'f' && p[2]) {
            p += 2;
            continue;
        }
        if (p[0] == '\\' && p[1] == '-') {
            *w++ = '-';
            p++;
            continue;
        }
        *w++ = *p;
    }
    *w = '\0';
    return out;
}

TEST(table_docs_name_every_kind_and_parameter)
{
    const cmd *c = cmd_find("gen");
    CHECK(c && c->help && c->usage);
    char *man = man_gen_entry();
    CHECK_MSG(man, "man/tcjoin.1 has no gen entry (tests run from the repo root)");
    char want[128];
    for (const gen_kind *const *k = gen_table; *k; k++) {
        /* the row's line, as the help lists it */
        snprintf(want, sizeof want, "\n  %-9s %s", (*k)->name, (*k)->help);
        CHECK_MSG(strstr(c->help, want), "gen's help lacks \"%s\"", want + 1);
        snprintf(want, sizeof want, "%s", (*k)->name);
        CHECK_MSG(strstr(c->usage, want), "gen's usage lacks %s", want);
        CHECK_MSG(strstr(man, want), "man/tcjoin.1's gen entry lacks %s", want);
        for (int i = 0; i < (*k)->nparams; i++) {
            snprintf(want, sizeof want, "%s=", (*k)->params[i].name);
            CHECK_MSG(strstr(c->help, want), "gen's help lacks %s of %s", want, (*k)->name);
            CHECK_MSG(strstr(c->usage, want), "gen's usage lacks %s of %s", want, (*k)->name);
            CHECK_MSG(strstr(man, want), "man/tcjoin.1's gen entry lacks %s of %s", want,
                      (*k)->name);
        }
    }
    free(man);
}

/* halo as src/gen_halo.c's header and docs/DATASETS.md describe it,
 * written again with pow and a linear search: the set-up drawn first
 * (centres row by row, then one weight per halo), then the points. */
typedef struct halo_ref {
    size_t h, d;
    double *c, *w, *r;
} halo_ref;

static void halo_ref_setup(gen_rng *g, size_t h, size_t d, double alpha, double radius, halo_ref *s)
{
    s->h = h;
    s->d = d;
    s->c = malloc(h * d * sizeof *s->c);
    s->w = malloc(h * sizeof *s->w);
    s->r = malloc(h * sizeof *s->r);
    for (size_t i = 0; i < h * d; i++)
        s->c[i] = gen_rng_unit(g);
    for (size_t k = 0; k < h; k++) {
        const double u = gen_rng_unit(g);
        s->w[k] =
            alpha == 1 ? pow(1e4, u) : pow(1 - u * (1 - pow(1e4, 1 - alpha)), 1 / (1 - alpha));
        s->r[k] = radius * pow(s->w[k], 1.0 / (double)d);
    }
}

static void halo_ref_free(halo_ref *s)
{
    free(s->c);
    free(s->w);
    free(s->r);
}

static void halo_ref_points(gen_rng *g, const halo_ref *s, double noise, size_t n, double *x)
{
    double total = 0;
    for (size_t k = 0; k < s->h; k++)
        total += s->w[k];
    for (size_t i = 0; i < n; i++) {
        double *xi = x + i * s->d;
        if (gen_rng_unit(g) < noise) {
            for (size_t j = 0; j < s->d; j++)
                xi[j] = gen_rng_unit(g);
            continue;
        }
        const double t = gen_rng_unit(g) * total;
        size_t k = 0;
        for (double cum = s->w[0]; k + 1 < s->h && !(cum > t); cum += s->w[++k])
            ;
        for (size_t j = 0; j < s->d; j++)
            xi[j] = s->c[k * s->d + j] + s->r[k] * gen_rng_normal(g);
    }
}

/* halo with key=value words, kept as f64 */
static int gen_halo_f64(size_t n, size_t d, const char *seed, const char *const *kv, dataset *ds)
{
    const char *all[16] = {"dtype", "f64"};
    for (int i = 0; kv && kv[i] && i < 12; i++)
        all[2 + i] = kv[i];
    return gen_words("halo", n, d, seed, all, ds);
}

TEST(halo_matches_reference)
{
    /* The reference computes w and r with pow, the kind with exp and log:
     * a few ulps apart (relative 1e-15). A coordinate is c + r z with r <=
     * radius W^(1/d) <= 0.22 here (the largest: d = 3 at radius 0.01,
     * 0.01 x 21.6; d = 2 at the default 1e-4: 1e-4 x 100 = 0.01) and
     * |z| <= sqrt(-2 ln 2^-53) = 8.6 (Box-Muller's largest), so the two
     * differ by under 2 x 1e-15 (1 + 1.7): 1e-12 is a hundred times that.
     * A point that picked another halo (a draw within rounding of a
     * cumulative boundary: about 1e-15 a point) would differ by the
     * distance between centres. halos=0 gives n / 185 (10, then 1). */
    /* clang-format off */
    static const struct {
        size_t n, d;
        const char *seed;
        const char *kv[10];
        size_t h;
        double alpha, noise, radius;
        const char *name;
    } cs[] = {
        {1850, 2, "3", {NULL}, 10, 2, 0.36, 0.0001, "halo-n1850-d2-s3-f64"},
        {500, 3, "8", {"halos", "7", "alpha", "1", "noise", "0.5", "radius", "0.01"}, 7, 1, 0.5,
         0.01, "halo-n500-d3-h7-a1-nz0.5-r0.01-s8-f64"},
        {100, 4, "1", {NULL}, 1, 2, 0.36, 0.0001, "halo-n100-d4-s1-f64"},
        {3000, 5, "2", {"halos", "40", "alpha", "3.5", "noise", "0"}, 40, 3.5, 0, 0.0001,
         "halo-n3000-d5-h40-a3.5-nz0-s2-f64"},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        dataset ds;
        CHECK_MSG(gen_halo_f64(cs[i].n, cs[i].d, cs[i].seed, cs[i].kv, &ds) == 0, "%s: %s",
                  cs[i].name, err_msg());
        CHECK_MSG(!strcmp(ds.name, cs[i].name), "%s, expected %s", ds.name, cs[i].name);
        gen_rng g;
        gen_rng_seed(&g, strtoull(cs[i].seed, NULL, 10));
        halo_ref s;
        halo_ref_setup(&g, cs[i].h, cs[i].d, cs[i].alpha, cs[i].radius, &s);
        double *x = malloc(cs[i].n * cs[i].d * sizeof *x);
        halo_ref_points(&g, &s, cs[i].noise, cs[i].n, x);
        const double *v = ds.v;
        size_t bad = 0, first = 0;
        for (size_t k = 0; k < cs[i].n * cs[i].d; k++)
            if (!(fabs(v[k] - x[k]) <= 1e-12) && !bad++)
                first = k;
        CHECK_MSG(!bad, "%s: %zu values differ from the reference, the first [%zu] %.17g vs %.17g",
                  cs[i].name, bad, first, v[first], x[first]);
        free(x);
        halo_ref_free(&s);
        dataset_free(&ds);
    }
}

/* Points within 5 r_h of centre h, for each h: counts into cnt[h] (a
 * point near two halos counts twice), and the sum of |p - c_h|^2 / r_h^2
 * over them into s2[h]. */
static size_t halo_near(const dataset *ds, const halo_ref *s, size_t *cnt, double *s2)
{
    const double *v = ds->v;
    size_t near = 0;
    for (size_t k = 0; k < s->h; k++)
        cnt[k] = 0, s2[k] = 0;
    for (size_t i = 0; i < ds->n; i++) {
        int any = 0;
        for (size_t k = 0; k < s->h; k++) {
            double q = 0;
            for (size_t j = 0; j < s->d; j++) {
                const double e = v[i * s->d + j] - s->c[k * s->d + j];
                q += e * e;
            }
            q /= s->r[k] * s->r[k];
            if (q < 25) {
                cnt[k]++;
                s2[k] += q;
                any = 1;
            }
        }
        near += any;
    }
    return near;
}

TEST(halo_background_fraction)
{
    /* n = 20000, d = 3, 4 halos, radius 1e-4, noise 0.36. A halo point lies
     * beyond 5 r_h of its centre with P(chi_3 > 5) = erfc(5/sqrt 2) +
     * sqrt(2/pi) 5 e^-12.5 = 1.5e-5; a background point lands within 5 r_h
     * of some centre with probability at most the balls' volume, 4 x 4/3 pi
     * (5 x 1e-4 x (10^4)^(1/3))^3 = 2.1e-5. So the fraction near a centre
     * is 1 - 0.36 within 2.1e-5, plus the binomial spread of the
     * background count: sd sqrt(0.36 x 0.64 / 20000) = 0.0034; 5 sd and
     * the bias: 0.0170. (noise ignored or read as 1 - noise is off by
     * 0.28.) */
    const size_t n = 20000, d = 3;
    dataset ds;
    static const char *const kv[] = {"halos", "4", "radius", "1e-4", NULL};
    CHECK(gen_halo_f64(n, d, "11", kv, &ds) == 0);
    gen_rng g;
    gen_rng_seed(&g, 11);
    halo_ref s;
    halo_ref_setup(&g, 4, d, 2, 1e-4, &s);
    size_t cnt[4];
    double s2[4];
    const double frac = (double)halo_near(&ds, &s, cnt, s2) / (double)n;
    printf("# halo: %.4f of the points near a centre (expected 0.64)\n", frac);
    CHECK_NEAR(frac, 1 - 0.36, 5 * sqrt(0.36 * 0.64 / (double)n) + 2.1e-5);
    halo_ref_free(&s);
    dataset_free(&ds);
}

TEST(halo_shares_and_radii)
{
    /* Two halos, no background, radius 1e-3 (r <= 1e-3 x 21.6 = 0.0216):
     * the first seed from 1 whose centres lie more than 5 (r_0 + r_1)
     * apart (each point near one halo only), whose weights' shares differ
     * from 1/2 by more than 0.1 (so a halo picked uniformly would fail
     * here) and whose larger weight is over 2 (a radius not scaled by
     * w^(1/3) would be 26% off). */
    const size_t n = 20000, d = 3;
    halo_ref s = {0};
    unsigned seed = 0;
    for (unsigned t = 1; t < 200 && !seed; t++) {
        gen_rng g;
        gen_rng_seed(&g, t);
        halo_ref_setup(&g, 2, d, 2, 1e-3, &s);
        double q = 0;
        for (size_t j = 0; j < d; j++)
            q += (s.c[j] - s.c[d + j]) * (s.c[j] - s.c[d + j]);
        const double p0 = s.w[0] / (s.w[0] + s.w[1]);
        if (sqrt(q) > 5 * (s.r[0] + s.r[1]) && fabs(p0 - 0.5) > 0.1 && fmax(s.w[0], s.w[1]) > 2)
            seed = t;
        else
            halo_ref_free(&s);
    }
    CHECK_MSG(seed, "no seed below 200 gives two apart, unequal halos");
    char sd[16];
    snprintf(sd, sizeof sd, "%u", seed);
    dataset ds;
    static const char *const kv[] = {"halos", "2", "radius", "1e-3", "noise", "0", NULL};
    CHECK(gen_halo_f64(n, d, sd, kv, &ds) == 0);
    size_t cnt[2];
    double s2[2];
    const size_t near = halo_near(&ds, &s, cnt, s2);
    /* beyond 5 r: 1.5e-5 a point (halo_background_fraction), 0.3 expected
     * of 20000; more than 10 has probability below 1e-15 */
    CHECK_MSG(near >= n - 10 && cnt[0] + cnt[1] == near, "%zu near, %zu + %zu", near, cnt[0],
              cnt[1]);
    const size_t big = s.w[1] > s.w[0];
    const double p = s.w[big] / (s.w[0] + s.w[1]);
    printf("# halo: seed %u, weights %.3f and %.3f: the larger has %.4f of the points (share "
           "%.4f)\n",
           seed, s.w[0], s.w[1], (double)cnt[big] / (double)n, p);
    /* binomial: 5 sd of the share, and the (at most 10) points outside */
    CHECK_NEAR((double)cnt[big] / (double)n, p, 5 * sqrt(p * (1 - p) / (double)n) + 10.0 / n);
    /* |p - c|^2 / r^2 summed over a halo's k points is chi-square with k d
     * degrees of freedom (less the 1.5e-5 tail beyond 5 r, which holds
     * under 2e-4 of the mean): its mean over k d is 1 within 5
     * sqrt(2 / (k d)) */
    for (int k = 0; k < 2; k++) {
        const double m = s2[k] / (double)(cnt[k] * d);
        CHECK_MSG(fabs(m - 1) <= 5 * sqrt(2.0 / (double)(cnt[k] * d)) + 2e-4,
                  "halo %d (w %.3f): mean |p - c|^2 / (d r^2) %.4f", k, s.w[k], m);
    }
    halo_ref_free(&s);
    dataset_free(&ds);
}

TEST(halo_refusals)
{
    dataset ds;
    gen_opts o;
    gen_opts_init(&o);
    o.kind = "halo";
    o.n = 10;
    o.d = 3;
    /* alpha >= 1: the power law's mass must lie in [1, 10^4] with a > 1,
     * and a = 1 is its log-uniform limit */
    CHECK(gen_opts_set(&o, "alpha", "0.99") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "alpha=0.99: expected a power-law exponent >= 1"));
    CHECK(gen_opts_set(&o, "noise", "1.5") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "noise=1.5: expected a fraction in [0, 1]"));
    CHECK(gen_opts_set(&o, "noise", "-0.1") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "noise=-0.1: expected a fraction in [0, 1]"));
    CHECK(gen_opts_set(&o, "radius", "0") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "radius=0: expected a length > 0"));
    CHECK(gen_opts_set(&o, "halos", "x") == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(), "halos: expected a non-negative integer, got 'x'"));
    CHECK(gen_opts_set(&o, "halos", "11") == 0);
    CHECK(dataset_generate(&o, &ds) == TCJ_EINVAL);
    CHECK(!strcmp(err_msg(),
                  "gen halo: halos=11 is more than the n=10 points; at most n halos can be used"));
    CHECK(!strchr(err_msg(), '\n'));
    /* the ends of the ranges are taken: every point background (noise 1),
     * log-uniform weights (alpha 1), a halo per point */
    CHECK(gen_opts_set(&o, "halos", "10") == 0 && gen_opts_set(&o, "alpha", "1") == 0 &&
          gen_opts_set(&o, "noise", "1") == 0);
    CHECK_MSG(dataset_generate(&o, &ds) == 0, "%s", err_msg());
    CHECK(!strcmp(ds.name, "halo-n10-d3-h10-a1-nz1-s0"));
    for (size_t k = 0; k < ds.n * ds.d; k++)
        CHECK(dataset_value(&ds, k) >= 0 && dataset_value(&ds, k) <= 1);
    dataset_free(&ds);
    /* gauss's and expo's keys are not halo's */
    CHECK(gen_opts_set(&o, "sigma", "0.1") == 0);
    CHECK(dataset_generate(&o, &ds) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "gen halo: unknown option 'sigma'; gen halo takes n= d= seed= "
                                  "halos= alpha= noise= radius= dtype=");
}
