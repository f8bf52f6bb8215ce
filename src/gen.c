/* Generated datasets: the driver of the generator table (src/gen.h; one row
 * per kind in src/gen_table.c) and the gen_opts words. The generator is
 * self-contained (splitmix64 seeding xoshiro256**, doubles from the top 53
 * bits, src/gen.h) so a seed gives the same values on any machine; beyond
 * it each kind calls only these libm functions, which glibc computes
 * identically across x86-64 and AArch64:
 *   uniform  none
 *   expo     log1p and expm1 (src/gen_basic.c)
 *   gauss    log, sqrt and cos (Box-Muller, src/gen.h)
 *   ints     floor
 *   halo     log, exp, sqrt and cos (src/gen_halo.c)
 * Every value is generated in FP64 and then kept as dtype says: f32 by
 * default (rounded to nearest, so a uniform value just below 1 may become
 * 1.0f), f64 when asked (dtype=f64, the values of earlier versions). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "err.h"
#include "gen.h"
#include "load_util.h"
#include "mem.h"

int gen_param_parse(const gen_param *p, const char *val, gen_val *out)
{
    if (p->whole) {
        int rc = dataset_parse_count(p->name, val, &out->z);
        if (rc)
            return rc;
        out->x = (double)out->z;
    } else {
        char *end;
        errno = 0;
        out->x = strtod(val, &end);
        out->z = 0;
        if (end == val || *end || errno == ERANGE || !isfinite(out->x))
            return err_set(TCJ_EINVAL, "%s: expected a number, got '%s'", p->name, val);
    }
    const double x = out->x;
    const int low = p->min_open ? !(x > p->min) : !(x >= p->min);
    if (p->max > p->min && (low || x > p->max))
        return err_set(TCJ_EINVAL, "%s=%s: expected %s in %c%g, %g]", p->name, val, p->what,
                       p->min_open ? '(' : '[', p->min, p->max);
    if (low)
        return err_set(TCJ_EINVAL, "%s=%s: expected %s %s %g", p->name, val, p->what,
                       p->min_open ? ">" : ">=", p->min);
    return 0;
}

void gen_opts_init(gen_opts *o)
{
    memset(o, 0, sizeof *o);
    o->kind = "uniform";
    o->dtype = DTYPE_F32;
}

int gen_opts_set(gen_opts *o, const char *key, const char *val)
{
    if (!val)
        val = "";
    if (!strcmp(key, "kind")) {
        const gen_kind *k = gen_kind_find(val);
        if (!k)
            return err_set(TCJ_EINVAL, "kind=%s: expected one of: %s", val, gen_kind_names(" "));
        o->kind = k->name;
        return 0;
    }
    if (!strcmp(key, "n"))
        return dataset_parse_count(key, val, &o->n);
    if (!strcmp(key, "d"))
        return dataset_parse_count(key, val, &o->d);
    if (!strcmp(key, "seed")) {
        size_t s;
        int rc = dataset_parse_count(key, val, &s);
        o->seed = s;
        return rc;
    }
    if (!strcmp(key, "dtype")) {
        const dtype *t = dtype_find(val);
        if (!t || (t->id != DTYPE_F32 && t->id != DTYPE_F64))
            return err_set(TCJ_EINVAL, "dtype=%s: expected f32 or f64", val);
        o->dtype = t->id;
        return 0;
    }
    /* The kind's own row where it takes the key, else the first that
     * does; dataset_generate reads the value again against the kind it
     * makes. */
    const gen_kind *k = o->kind ? gen_kind_find(o->kind) : NULL;
    const gen_param *p = k ? gen_param_find(k, key) : NULL;
    if (!p)
        p = gen_param_find(NULL, key);
    if (!p) {
        char names[256] = "";
        for (int i = 0; gen_opt_names[i]; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? " " : "",
                     gen_opt_names[i]);
        return err_set(TCJ_EINVAL, "unknown generator option '%s' (%s)", key, names);
    }
    gen_val v;
    int rc = gen_param_parse(p, val, &v);
    if (rc)
        return rc;
    int i = 0;
    while (i < o->nopt && strcmp(o->opt[i].key, p->name))
        i++;
    if (i == GEN_OPTS_MAX)
        return err_set(TCJ_EINVAL, "%s=%s: more than %d generator parameters given", key, val,
                       GEN_OPTS_MAX);
    o->opt[i] = (gen_opt){p->name, val};
    if (i == o->nopt)
        o->nopt++;
    return 0;
}

/* The kind's parameters into g->p: each given one read against the row,
 * the rest the row's defaults; a key the kind does not take is refused. */
static int resolve_params(const gen_kind *k, const gen_opts *o, gen_ctx *g)
{
    for (int j = 0; j < o->nopt; j++)
        if (!gen_param_find(k, o->opt[j].key)) {
            char takes[256];
            int at = snprintf(takes, sizeof takes, "takes n= d= seed=");
            for (int i = 0; i < k->nparams; i++)
                at += snprintf(takes + at, sizeof takes - at, " %s=", k->params[i].name);
            snprintf(takes + at, sizeof takes - at, " dtype=");
            return err_set(TCJ_EINVAL, "gen %s: unknown option '%s'; gen %s %s", k->name,
                           o->opt[j].key, k->name, takes);
        }
    for (int i = 0; i < k->nparams; i++) {
        const gen_param *p = &k->params[i];
        const char *val = NULL;
        for (int j = 0; j < o->nopt; j++)
            if (!strcmp(o->opt[j].key, p->name))
                val = o->opt[j].val;
        g->p[i] = (gen_val){p->def, (size_t)p->def};
        if (val) {
            int rc = gen_param_parse(p, val, &g->p[i]);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* "uniform-n3-d1-s42", the kind's tags for values not their default
 * (in the row's order), "-f64" when not f32. */
static char *gen_name(const gen_kind *k, const gen_ctx *g, uint64_t seed, const dtype *t)
{
    char name[256];
    size_t m = (size_t)snprintf(name, sizeof name, "%s-n%zu-d%zu", k->name, g->n, g->d);
    for (int i = 0; i < k->nparams && m < sizeof name; i++) {
        const gen_param *p = &k->params[i];
        if (p->whole && g->p[i].z != (size_t)p->def)
            m += (size_t)snprintf(name + m, sizeof name - m, "%s%zu", p->tag, g->p[i].z);
        else if (!p->whole && g->p[i].x != p->def)
            m += (size_t)snprintf(name + m, sizeof name - m, "%s%g", p->tag, g->p[i].x);
    }
    if (m < sizeof name)
        m += (size_t)snprintf(name + m, sizeof name - m, "-s%llu", (unsigned long long)seed);
    if (m < sizeof name && t->id != DTYPE_F32)
        snprintf(name + m, sizeof name - m, "-%s", t->name);
    return xstrdup(name);
}

int dataset_generate(const gen_opts *opt, dataset *out)
{
    memset(out, 0, sizeof *out);
    const char *kind = opt->kind ? opt->kind : "uniform";
    const gen_kind *k = gen_kind_find(kind);
    if (!k)
        return err_set(TCJ_EINVAL, "unknown generator '%s' (%s)", kind, gen_kind_names(", "));
    if (opt->n < 2)
        return err_set(TCJ_EINVAL, "%s: n=%zu; a self-join needs at least 2 points", kind, opt->n);
    if (opt->d < 1)
        return err_set(TCJ_EINVAL, "%s: d=0: points need at least one coordinate", kind);
    const size_t n = opt->n, d = opt->d;
    char what[32];
    snprintf(what, sizeof what, "gen %s", kind);
    gen_ctx g = {.n = n, .d = d, .cancel = opt->cancel, .what = what};
    int rc = resolve_params(k, opt, &g);
    uint64_t extra = 0;
    if (!rc && k->check)
        rc = k->check(&g, &extra);
    if (rc)
        return rc;
    /* the points and the kind's set-up (gauss's centres) must fit in
     * memory: refused up front with the size, never an abort or a machine
     * in swap */
    const dtype *t = dtype_get(opt->dtype);
    char and_setup[96] = "", and_the_setup[96] = "";
    if (k->setup_what) {
        snprintf(and_setup, sizeof and_setup, " and %s", k->setup_what);
        snprintf(and_the_setup, sizeof and_the_setup, " (and the %s)", k->setup_what);
    }
    uint64_t vals, bytes;
    if (__builtin_mul_overflow((uint64_t)n, (uint64_t)d, &vals) ||
        __builtin_mul_overflow(vals, t->bytes, &bytes) ||
        __builtin_add_overflow(bytes, extra, &bytes) ||
        /* and the FP64 block the rows are generated in: one row of 2.1 GB
         * at d = 2^28 */
        __builtin_add_overflow(bytes, (uint64_t)(d < 8192 ? 8192 / d * d : d) * 8, &bytes) ||
        bytes > SIZE_MAX / 2)
        return err_set(TCJ_ENOMEM, "gen %s: n=%zu x d=%zu%s does not fit in memory", kind, n, d,
                       and_the_setup);
    uint64_t avail = ld_mem_available();
    if (bytes > avail) {
        char a[32], b[32];
        return err_set(TCJ_ENOMEM, "gen %s: needs %s of memory for n=%zu x d=%zu%s; %s available",
                       kind, mem_bytes_str(bytes, a), n, d, and_setup, mem_bytes_str(avail, b));
    }
    /* Generated in FP64 as always, a block of rows at a time, and stored
     * rounded to the element type (f32 unless asked for f64): the values
     * are those of the FP64 generator, each rounded to nearest. */
    const size_t blk = d < 8192 ? 8192 / d : 1;
    /* the FP64 block is a row at large d (2.1 GB at d = 2^28): checked
     * with the values (src/mem.h), as is malloc itself under ulimit -v */
    double *x = mem_alloc(what, "a block of FP64 rows", blk * d, sizeof(double), 0);
    char *v = x ? mem_alloc(what, "the values", vals, t->bytes, 0) : NULL;
    if (!v) {
        free(x);
        return TCJ_ENOMEM;
    }
    gen_rng_seed(&g.r, opt->seed);
    /* the set-up is drawn first, before any point */
    rc = k->begin ? k->begin(&g) : 0;
    /* Ctrl-C is looked at every block: well under a millisecond */
    for (size_t i0 = 0; i0 < n && !rc; i0 += blk) {
        if (g.cancel && *g.cancel)
            rc = TCJ_ECANCEL;
        const size_t m = n - i0 < blk ? n - i0 : blk;
        k->rows(&g, x, m);
        t->from_f64(x, m * d, v + i0 * d * t->bytes);
    }
    if (k->end)
        k->end(&g);
    else
        free(g.setup);
    if (rc == TCJ_ENOMEM) {
        free(x);
        free(v);
        return rc;
    }
    free(x);
    if (rc) {
        free(v);
        return err_cancelled("gen %s", kind);
    }
    out->name = gen_name(k, &g, opt->seed, t);
    out->path = NULL;
    out->format = xstrdup("synth");
    out->n = n;
    out->d = d;
    out->type = t->id;
    out->v = v;
    if (dataset_hash_checked(out, opt->cancel, &out->hash)) {
        dataset_free(out);
        return err_cancelled("gen %s", kind);
    }
    return 0;
}
