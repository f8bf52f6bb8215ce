/* load FILE [...] and gen KIND [...]: make a dataset current. A failure
 * keeps the previous dataset. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dataset.h"
#include "err.h"
#include "gen.h"
#include "out.h"
#include "store.h"

/* Replace the session's dataset, store its row, report it. */
/* The bounding box's diagonal, from at most 4096 rows spread over the
 * dataset: the scale a carried-over eps is read against (cheap at any n). */
/* The bounding box's diagonal over a sample of up to 4096 rows, the
 * columns a block at a time: memory bounded whatever d (a row of doubles
 * at d = 2^28 is 2 GB). */
#define EXTENT_COLS 4096
static double extent(const dataset *ds)
{
    size_t step = ds->n > 4096 ? ds->n / 4096 : 1;
    double lo[EXTENT_COLS], hi[EXTENT_COLS], sum = 0;
    for (size_t j0 = 0; j0 < ds->d; j0 += EXTENT_COLS) {
        const size_t m = ds->d - j0 < EXTENT_COLS ? ds->d - j0 : EXTENT_COLS;
        for (size_t j = 0; j < m; j++)
            lo[j] = INFINITY, hi[j] = -INFINITY;
        for (size_t i = 0; i < ds->n; i += step)
            for (size_t j = 0; j < m; j++) {
                const double v = dataset_value(ds, i * ds->d + j0 + j);
                lo[j] = v < lo[j] ? v : lo[j];
                hi[j] = v > hi[j] ? v : hi[j];
            }
        for (size_t j = 0; j < m; j++)
            sum += isfinite(hi[j] - lo[j]) ? (hi[j] - lo[j]) * (hi[j] - lo[j]) : 0;
    }
    return sqrt(sum);
}

/* eps stays when the dataset changes (a session often compares datasets
 * at one eps), but an eps chosen for data of another scale is said: a
 * ratio of extents beyond 4, or an eps that holds every pair. */
static void warn_eps_scale(const session *s, const char *old_name, double old_ext,
                           const dataset *ds)
{
    if (!s->have_eps)
        return;
    double ext = extent(ds);
    int all = s->eps >= ext;
    int scale = old_ext > 0 && ext > 0 && (ext / old_ext > 4 || old_ext / ext > 4);
    if (!all && !scale)
        return;
    char msg[512];
    int k = snprintf(msg, sizeof msg, "eps %g carries over", s->eps);
    if (old_name)
        k += snprintf(msg + k, sizeof msg - (size_t)k, " from %s (extent %.3g)", old_name, old_ext);
    snprintf(msg + k, sizeof msg - (size_t)k,
             "; %s's extent (bounding-box diagonal) is %.3g%s; set eps again (eps, sweep S or "
             "kdist K)",
             ds->name, ext, all ? ", so every pair is within eps" : "");
    out_printf("warning: %s\n", msg);
    out_rec *w = out_rec_begin("warning");
    out_rec_str(w, "command", "load");
    out_rec_str(w, "message", msg);
    out_rec_dbl(w, "eps", s->eps);
    out_rec_dbl(w, "extent", ext);
    out_rec_dbl(w, "previous_extent", old_name ? old_ext : NAN);
    out_rec_end(w);
}

static void adopt(session *s, dataset *ds)
{
    char *old_name = NULL;
    double old_ext = 0;
    if (s->have_ds && s->have_eps) {
        old_name = xstrdup(s->ds.name);
        old_ext = extent(&s->ds);
    }
    if (s->have_ds)
        dataset_free(&s->ds);
    s->ds = *ds;
    s->have_ds = 1;
    s->dataset_id = s->db ? store_dataset(s->db, &s->ds) : 0;
    if (s->dataset_id < 0) {
        cmd_store_failed();
        s->dataset_id = 0;
    }

    char hash[24];
    snprintf(hash, sizeof hash, "%016" PRIx64, s->ds.hash);
    out_printf("dataset %s: n=%zu d=%zu %s (%s) hash %s\n", s->ds.name, s->ds.n, s->ds.d,
               dataset_dtype(&s->ds)->name, s->ds.format, hash);
    out_rec *r = out_rec_begin("dataset");
    out_rec_int(r, "dataset_id", s->dataset_id);
    out_rec_str(r, "dataset", s->ds.name);
    out_rec_str(r, "dataset_path", s->ds.path);
    out_rec_str(r, "dataset_format", s->ds.format);
    out_rec_int(r, "n", (int64_t)s->ds.n);
    out_rec_int(r, "d", (int64_t)s->ds.d);
    out_rec_str(r, "dtype", dataset_dtype(&s->ds)->name);
    out_rec_str(r, "dataset_hash", hash);
    out_rec_end(r);
    warn_eps_scale(s, old_name, old_ext, &s->ds);
    free(old_name);
}

static int parse_yesno(const char *what, const char *v, int *out)
{
    if (!strcmp(v, "yes") || !strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
        *out = 1;
    else if (!strcmp(v, "no") || !strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
        *out = 0;
    else
        return err_set(TCJ_EINVAL, "%s: expected yes or no, got '%s'", what, v);
    return 0;
}

static int load_run(session *s, int argc, char **argv)
{
    char *pos[2];
    if (cmd_positional(argc, argv, pos, 2) != 1)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("load")->usage);
    load_opts o;
    memset(&o, 0, sizeof o);
    o.header = -1;
    o.cancel = &s->cancel;
    const char *v;
    int rc;
    o.format = cmd_opt(argc, argv, "format");
    if (o.format && !loader_find(o.format)) {
        char names[256] = "";
        size_t k = 0;
        for (const loader *const *l = loader_table; *l && k < sizeof names; l++)
            k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? " " : "", (*l)->name);
        return err_set(TCJ_EINVAL, "format: unknown format '%s' (one of: %s)", o.format, names);
    }
    if ((v = cmd_opt(argc, argv, "offset")) && (rc = cmd_parse_size(v, "offset", &o.offset)))
        return rc;
    if ((v = cmd_opt(argc, argv, "limit")) && (rc = cmd_parse_size(v, "limit", &o.limit)))
        return rc;
    o.cols = cmd_opt(argc, argv, "cols");
    if ((v = cmd_opt(argc, argv, "header"))) {
        if (!strcmp(v, "auto"))
            o.header = -1;
        else if ((rc = parse_yesno("header", v, &o.header)))
            return rc;
    }
    if ((v = cmd_opt(argc, argv, "delim"))) {
        if (!strcmp(v, "tab") || !strcmp(v, "\\t"))
            o.delim = '\t';
        else if (!strcmp(v, "space"))
            o.delim = ' ';
        else if (!strcmp(v, "comma"))
            o.delim = ',';
        else if (!strcmp(v, "semicolon")) /* ';' itself ends the command */
            o.delim = ';';
        else if (strlen(v) == 1)
            o.delim = v[0];
        else
            return err_set(TCJ_EINVAL,
                           "delim: expected one character, tab, space, comma or semicolon, "
                           "got '%s'",
                           v);
    }
    o.dtype = cmd_opt(argc, argv, "dtype");
    if ((v = cmd_opt(argc, argv, "dim")) && (rc = cmd_parse_size(v, "dim", &o.dim)))
        return rc;
    o.h5name = cmd_opt(argc, argv, "dataset");
    if ((v = cmd_opt(argc, argv, "drop-nonfinite")) &&
        (rc = parse_yesno("drop-nonfinite", v, &o.drop_nonfinite)))
        return rc;

    dataset ds;
    memset(&ds, 0, sizeof ds);
    rc = dataset_load(pos[0], &o, &ds);
    if (rc)
        return rc;
    adopt(s, &ds);
    return 0;
}

static const char *const load_options[] = {
    "format", "offset", "limit",   "cols",           "header", "delim",
    "dtype",  "dim",    "dataset", "drop-nonfinite", NULL,
};

const cmd cmd_load = {
    .name = "load",
    .usage = "load FILE [format=F] [offset=N] [limit=N] [cols=LIST] [header=yes|no|auto] "
             "[delim=C] [dtype=T] [dim=N] [dataset=NAME] [drop-nonfinite=yes|no]",
    .summary = "load a dataset from a file",
    .help = "Read FILE into memory as float64 points and make it the current dataset.\n"
            "The format is detected from the extension and the first bytes: fvecs, bvecs,\n"
            "ivecs (TEXMEX), npy, delimited text (csv, tsv, txt), ann-benchmarks HDF5, MNIST\n"
            "idx, raw binary (needs dtype= and dim=).\n"
            "  format=F            force a loader by name\n"
            "  offset=N limit=N    skip N points / take at most N points\n"
            "  cols=LIST           delimited text: columns to keep, e.g. 1-16, 0,2,5 or -0\n"
            "  header=yes|no|auto  delimited text: first line is a header\n"
            "  delim=C             delimited text: one character, or tab, space, comma,\n"
            "                      semicolon (a bare ; would end the command)\n"
            "  dtype=T dim=N       raw binary: f32 f64 f16 u8 i32 ..., values per point\n"
            "  dataset=NAME        HDF5: dataset to read (default train)\n"
            "  drop-nonfinite=yes  drop rows holding NaN or Inf instead of refusing the file\n"
            "A failed load keeps the previous dataset.",
    .min_args = 1,
    .max_args = 11,
    .options = load_options,
    .run = load_run,
};

static int gen_run(session *s, int argc, char **argv)
{
    char *pos[2];
    if (cmd_positional(argc, argv, pos, 2) != 1)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("gen")->usage);
    if (!gen_kind_find(pos[0]))
        return err_set(TCJ_EINVAL, "gen: unknown kind '%s' (one of: %s)", pos[0],
                       gen_kind_names(" "));
    gen_opts o;
    gen_opts_init(&o);
    o.kind = pos[0];
    o.n = 10000;
    o.d = 16;
    o.seed = 1;
    o.cancel = &s->cancel;
    /* every key=value word through gen_opts_set: the kind's row reads its
     * own (src/gen_table.c); the values point into argv */
    for (int i = 0; i < argc; i++) {
        const char *eq = cmd_is_opt(argv[i]) ? strchr(argv[i], '=') : NULL;
        if (!eq)
            continue;
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(eq - argv[i]), argv[i]);
        int rc = gen_opts_set(&o, key, eq + 1);
        if (rc)
            return rc;
    }
    if (o.n == 0 || o.d == 0)
        return err_set(TCJ_EINVAL, "gen: n and d must be at least 1");

    dataset ds;
    memset(&ds, 0, sizeof ds);
    int rc = dataset_generate(&o, &ds);
    if (rc)
        return rc;
    adopt(s, &ds);
    return 0;
}

const cmd cmd_gen = {
    .name = "gen",
    .usage = "gen uniform|expo|gauss|ints|halo [n=N] [d=N] [seed=N] [lambda=X] [clusters=N] "
             "[sigma=X] [background=F] [halos=H] [alpha=A] [noise=F] [radius=R] [dtype=f32|f64]",
    .summary = "generate a synthetic dataset",
    .help = "Generate a dataset and make it current; the same options give the same values\n"
            "on any machine. A kind takes its own options only (gen uniform lambda=3 is\n"
            "refused).\n"
            "  uniform   values uniform in [0, 1)\n"
            "  expo      exponential with rate lambda= (default 40, TED-Join's), in [0, 1]\n"
            "  gauss     Gaussian clusters: clusters= centres (16), std dev sigma= (0.05), "
            "background= (0)\n"
            "            background=F  fraction of points uniform in [0, 1)^d instead\n"
            "  ints      integers uniform in {-4, ..., 4}: exact in every format, so every\n"
            "            engine's count equals FP64's (the teaching ladder's data)\n"
            "  halo      dense halos of power-law sizes in a uniform background\n"
            "            halos=H   number of halos (default 0: n / 185, at least 1)\n"
            "            alpha=A   halo weights w in [1, 10^4], density ~ w^-A (default 2;\n"
            "                      at least 1, 1 is log-uniform); points pick halos by w\n"
            "            radius=R  a halo's radius is R w^(1/d) (default 0.0001)\n"
            "            noise=F   fraction of points uniform in [0, 1)^d (default 0.36)\n"
            "  n=N d=N   points and dimension (default 10000 and 16)\n"
            "  seed=N    random seed (default 1)\n"
            "  dtype=T   f32 (default: generated in FP64, kept rounded to FP32) or f64",
    /* one kind word, each option once (cmd_check_opts): no count to keep
     * in step with the table */
    .min_args = 1,
    .max_args = -1,
    .options = gen_opt_names + 1, /* every key but kind (gen's first word; src/gen_table.c) */
    .run = gen_run,
};
