/* dbscan [minpts=M] [engine=E] [out=FILE]: DBSCAN at the current eps
 * (src/cluster/dbscan.h), its counts, largest clusters, time by pass and red
 * flags; labels to out=. `dbscan curve` (src/cluster/dbscan_curve.h) gives the
 * clustering for every eps up to max= at once; `dbscan compare A B` runs
 * two engines and compares their clusterings. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "plot.h"
#include "dbscan.h"
#include "curve_pick.h"
#include "dbscan_curve.h"
#include "dbscan_out.h"
#include "err.h"
#include "mem.h"
#include "ofile.h"
#include "out.h"
#include "par.h"
#include "runner.h"
#include "store.h"

#define DBSCAN_DEFAULT_MINPTS 5 /* scikit-learn's min_samples default */

/* engine=NAME, else the ground truth (exact on a GPU, cpu without one). */
static int pick_engine(const session *s, const char *name, const engine **out)
{
    if (name)
        return runner_engine_opt(&s->eopt, name, out);
    const engine *e = runner_reference_engine(&s->eopt);
    if (!e)
        return err_set(TCJ_EUNSUP, "dbscan: no engine can run here");
    *out = e;
    return engine_available(e, &s->eopt);
}

/* minpts=M (default 5), checked against n. */
static int parse_minpts(const session *s, int argc, char **argv, size_t *out)
{
    const char *v = cmd_opt(argc, argv, "minpts");
    size_t m = DBSCAN_DEFAULT_MINPTS;
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "dbscan: no dataset loaded (use load or gen)");
    /* A word that is no count gets the same line as one out of range. */
    if ((v && cmd_parse_size(v, "dbscan: minpts", &m)) || m < 1 || m > s->ds.n) {
        char got[64];
        snprintf(got, sizeof got, "%s", v ? v : "");
        if (!v)
            snprintf(got, sizeof got, "%d", DBSCAN_DEFAULT_MINPTS);
        return err_set(TCJ_EINVAL,
                       "dbscan: minpts must be 1 to n = %zu (it counts the point itself), got %s",
                       s->ds.n, got);
    }
    *out = m;
    return 0;
}

static int need_eps(const session *s)
{
    if (!s->have_eps)
        return err_set(TCJ_EINVAL, "dbscan: eps is not set (eps VALUE, sweep or kdist K use)");
    return 0;
}

/* One clustering on the session's dataset and eps: labels and core flags
 * into arrays the caller frees. */
static int cluster(session *s, const engine *e, size_t minpts, int32_t **labels, uint8_t **core,
                   dbscan_result *res)
{
    *labels = mem_alloc("dbscan", "the labels", s->ds.n, sizeof **labels, 0);
    *core = *labels ? mem_alloc("dbscan", "the core flags", s->ds.n, 1, 0) : NULL;
    if (!*core) {
        free(*labels);
        *labels = NULL;
        return TCJ_ENOMEM;
    }
    par_zero(*labels, s->ds.n * sizeof **labels); /* their pages faulted in on every core */
    par_zero(*core, s->ds.n);
    runner_progress pg = {.s = s, .what = "dbscan"};
    dbscan_spec spec = {
        .ds = &s->ds,
        .eps = s->eps,
        .minpts = minpts,
        .opts = &s->eopt,
        .labels = *labels,
        .core = *core,
        .cancel = &s->cancel,
        .progress = runner_on_progress,
        .progress_ctx = &pg,
    };
    int rc = dbscan_run(e, &spec, res);
    if (rc) {
        free(*labels);
        free(*core);
        *labels = NULL;
        *core = NULL;
        if (rc == TCJ_ECANCEL)
            return err_cancelled("dbscan %s", e->name);
    }
    return rc;
}

static int dbscan_at_eps(session *s, int argc, char **argv, int force)
{
    size_t minpts;
    const engine *e;
    int rc;
    if ((rc = parse_minpts(s, argc, argv, &minpts)) || (rc = need_eps(s)) ||
        (rc = pick_engine(s, cmd_opt(argc, argv, "engine"), &e)))
        return rc;
    const char *path = cmd_opt(argc, argv, "out");
    ofile *of = NULL;
    /* The name is checked before the work; the file is made after it, so
     * a kill during the work leaves none. */
    if (path && (rc = ofile_open_late(path, force, s->db ? store_path(s->db) : NULL, &of)))
        return rc == TCJ_ECANCEL ? err_cancelled("dbscan %s", e->name) : rc; /* a FIFO's wait */
    int32_t *labels;
    uint8_t *core;
    dbscan_result *res = xmalloc(sizeof *res);
    if ((rc = cluster(s, e, minpts, &labels, &core, res))) {
        ofile_abort(of);
        free(res);
        return rc;
    }
    if (of && (rc = dbscan_write_labels(of, path, labels, s->ds.n))) {
        free(labels);
        free(core);
        free(res);
        /* Ctrl-C while a FIFO's reader was awaited (src/ofile.c) */
        return rc == TCJ_ECANCEL ? err_cancelled("dbscan %s", e->name) : rc;
    }
    dbscan_view v = {
        .engine = e->name,
        .precision = res->precision,
        .dataset = s->ds.name,
        .d = s->ds.d,
        .eps = s->eps,
        .minpts = minpts,
        .labels_path = path,
        .res = res,
    };
    runner_store_dbscan(s, e, &v);
    dbscan_print(&v);
    dbscan_record(&v);
    session_put(s, "labels", labels, SESSION_I32, s->ds.n);
    session_put(s, "core", core, SESSION_U8, s->ds.n);
    free(labels);
    free(core);
    free(res);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

/* dbscan compare A B: both engines at the current eps and minpts. */
static int dbscan_compare_cmd(session *s, int argc, char **argv, char **pos)
{
    size_t minpts;
    const engine *e[2];
    int rc;
    if ((rc = parse_minpts(s, argc, argv, &minpts)) || (rc = need_eps(s)) ||
        (rc = runner_engine_opt(&s->eopt, pos[1], &e[0])) ||
        (rc = runner_engine_opt(&s->eopt, pos[2], &e[1])))
        return rc;
    int32_t *lab[2] = {NULL, NULL};
    uint8_t *core[2] = {NULL, NULL};
    dbscan_result *res = xmalloc(2 * sizeof *res);
    for (int k = 0; k < 2 && !rc; k++)
        rc = cluster(s, e[k], minpts, &lab[k], &core[k], &res[k]);
    if (!rc) {
        dbscan_cmp c;
        dbscan_compare(lab[0], core[0], lab[1], core[1], s->ds.n, &c);
        dbscan_view v[2];
        for (int k = 0; k < 2; k++) {
            v[k] = (dbscan_view){.engine = e[k]->name,
                                 .precision = res[k].precision,
                                 .dataset = s->ds.name,
                                 .d = s->ds.d,
                                 .eps = s->eps,
                                 .minpts = minpts,
                                 .res = &res[k]};
            runner_store_dbscan(s, e[k], &v[k]);
        }
        char eps[40];
        out_fmt_double(eps, sizeof eps, s->eps);
        out_printf("dbscan compare: eps %s, minpts %zu on %s (n=%zu d=%zu), A %s, B %s\n", eps,
                   minpts, s->ds.name, s->ds.n, s->ds.d, e[0]->name, e[1]->name);
        dbscan_compare_print(&v[0], &v[1], &c);
    }
    for (int k = 0; k < 2; k++) {
        free(lab[k]);
        free(core[k]);
    }
    free(res);
    return rc;
}

#define CURVE_POINTS 256
#define CURVE_PLATEAUS 8
#define PLOT_W 72
#define PLOT_H 12

/* The curve's engine: engine=NAME, else the ground truth when it has a
 * k-distance entry, else the first exact engine that has one. */
static int curve_engine(const session *s, const char *name, size_t minpts, const engine **out)
{
    int rc;
    if (name) {
        if ((rc = runner_engine_opt(&s->eopt, name, out)))
            return rc;
        if (minpts > 1 && !(*out)->kdist)
            return err_set(TCJ_EUNSUP,
                           "dbscan curve: engine %s has no k-distance computation (use cpu)",
                           (*out)->name);
        return 0;
    }
    const engine *e = engine_kdist_pick(runner_reference_engine(&s->eopt), &s->eopt);
    if (!e)
        return err_set(TCJ_EUNSUP, "dbscan curve: no exact engine with a k-distance can run here");
    *out = e;
    return 0;
}

static void curve_plot(const dbscan_curve *c, const double *x, const double *y, size_t m,
                       double eps, int have_eps)
{
    char cells[PLOT_W * PLOT_H];
    ui_grid g;
    ui_grid_init(&g, cells, PLOT_W, PLOT_H);
    double mx = eps, my = 0;
    if (have_eps) {
        size_t cl;
        dbscan_curve_at(c, eps, &cl, NULL, NULL, NULL);
        my = (double)cl;
    }
    int on = have_eps && eps <= c->max;
    if (ui_plot_curve(&g, x, y, m, on ? &mx : NULL, on ? &my : NULL, on ? 1 : 0, 0, 0) != 0)
        return;
    out_printf("  clusters against eps (0 to %g)%s\n", c->max, on ? "; O: the current eps" : "");
    char row[PLOT_W + 1];
    for (int r = 0; r < PLOT_H; r++) {
        ui_grid_row_trimmed(&g, r, row);
        out_printf("  %s\n", row);
    }
}

/* The widest plateaus with the noise share over each (it falls as eps
 * grows: at lo, then at the range's largest eps). */
static void print_plateaus(const dbscan_curve *c, const dbscan_plateau *pl, size_t np)
{
    if (np)
        out_printf("  widest plateaus (eps ranges over which the cluster count holds; noise "
                   "at their start and end):\n");
    double n = c->n ? (double)c->n : 1;
    for (size_t k = 0; k < np; k++)
        out_printf("    [%.6g, %.6g%s  width %.4g  clusters %zu  noise %.1f%% to %.1f%%\n",
                   pl[k].lo, pl[k].hi, pl[k].hi == c->max ? "]" : ")", pl[k].hi - pl[k].lo,
                   pl[k].clusters, 100.0 * (double)pl[k].noise_lo / n,
                   100.0 * (double)pl[k].noise_hi / n);
}

/* The picked eps and why; with use, made current. Returns whether it was. */
static int print_pick(session *s, const dbscan_curve *c, const curve_pick *pk, int use)
{
    char why[320];
    dbscan_curve_pick_text(c, pk, why, sizeof why);
    if (!(pk->eps > 0) || (pk->why != CURVE_PICK_CLUSTERS && pk->why != CURVE_PICK_ONE)) {
        out_printf("  %s\n", why);
        if (use)
            out_printf("warning: no eps to use; eps unchanged\n");
        return 0;
    }
    char eb[40];
    out_fmt_double(eb, sizeof eb, pk->eps);
    if (!use) {
        out_printf("  dbscan curve use (or eps %s) takes %s\n", eb, why);
        return 0;
    }
    s->eps = pk->eps;
    s->have_eps = 1;
    out_printf("eps %s (%s)\n", eb, why);
    return 1;
}

static int dbscan_curve_cmd(session *s, int argc, char **argv, int use)
{
    size_t minpts;
    const engine *e;
    int rc;
    if ((rc = parse_minpts(s, argc, argv, &minpts)))
        return rc;
    double max = s->eps;
    const char *v = cmd_opt(argc, argv, "max");
    if (v) {
        if ((rc = cmd_parse_double(v, "dbscan curve: max", &max)))
            return rc;
        if (!(max > 0) || !isfinite(max))
            return err_set(TCJ_EINVAL, "dbscan curve: max must be a positive number, got '%s'", v);
    } else if (!s->have_eps) {
        return err_set(TCJ_EINVAL, "dbscan curve: give max=EPS or set eps");
    }
    if ((rc = curve_engine(s, cmd_opt(argc, argv, "engine"), minpts, &e)))
        return rc;
    dbscan_curve c;
    runner_progress pg = {.s = s, .what = "dbscan"};
    dbscan_curve_spec spec = {.ds = &s->ds,
                              .minpts = minpts,
                              .max = max,
                              .opts = &s->eopt,
                              .cancel = &s->cancel,
                              .progress = runner_on_progress,
                              .progress_ctx = &pg};
    if ((rc = dbscan_curve_run(e, &spec, &c))) {
        if (rc == TCJ_ECANCEL)
            return err_cancelled("dbscan curve");
        return rc;
    }
    double x[CURVE_POINTS], y[CURVE_POINTS];
    size_t cl[CURVE_POINTS], co[CURVE_POINTS], no[CURVE_POINTS], lg[CURVE_POINTS];
    for (size_t k = 0; k < CURVE_POINTS; k++) {
        x[k] = max * (double)(k + 1) / CURVE_POINTS;
        dbscan_curve_at(&c, x[k], &cl[k], &co[k], &no[k], &lg[k]);
        y[k] = (double)cl[k];
    }
    char knn[64] = "";
    if (c.knn)
        snprintf(knn, sizeof knn, ", each point's %zu nearest", c.knn);
    out_printf(
        "dbscan curve: minpts %zu on %s (n=%zu d=%zu), engine %s, every eps up to %g, "
        "in %.3f s (core distances %.3f s%s%s; spanning forest %.3f s, %d join%s at max%s)\n",
        minpts, s->ds.name, s->ds.n, s->ds.d, e->name, max, c.seconds, c.kdist_seconds,
        c.core_device ? " from the join at max on the device"
        : c.knn       ? " from the join at max"
                      : "",
        knn, c.forest_seconds, c.rounds, c.rounds == 1 ? "" : "s",
        c.rounds_device == 0          ? ""
        : c.rounds_device == c.rounds ? ", their pairs kept on the device"
                                      : ", some of their pairs kept on the device");
    curve_plot(&c, x, y, CURVE_POINTS, s->eps, s->have_eps);
    if (s->have_eps && s->eps <= max) {
        size_t a, b, d, l;
        dbscan_curve_at(&c, s->eps, &a, &b, &d, &l);
        out_printf("  at the current eps %g: clusters %zu, core %zu, noise %zu, largest cluster "
                   "%zu core points\n",
                   s->eps, a, b, d, l);
    }
    dbscan_plateau pl[CURVE_PLATEAUS];
    size_t np;
    curve_pick pk;
    if ((rc = dbscan_curve_plateaus(&c, pl, CURVE_PLATEAUS, &np)) ||
        (rc = dbscan_curve_pick(&c, &pk))) {
        dbscan_curve_free(&c);
        return rc;
    }
    print_plateaus(&c, pl, np);
    int used = print_pick(s, &c, &pk, use);
    out_rec *r = out_rec_begin("dbscan_curve");
    out_rec_str(r, "engine", e->name);
    out_rec_str(r, "dataset", s->ds.name);
    out_rec_int(r, "n", (int64_t)s->ds.n);
    out_rec_int(r, "minpts", (int64_t)minpts);
    out_rec_dbl(r, "max", max);
    out_rec_int(r, "rounds", c.rounds);
    out_rec_int(r, "rounds_device", c.rounds_device);
    out_rec_bool(r, "core_device", c.core_device);
    out_rec_int(r, "knn", (int64_t)c.knn);
    out_rec_str(r, "route", curve_route_name(s->eopt.curve_route));
    out_rec_int(r, "merges_device", c.merges_device);
    out_rec_int(r, "forest_edges", (int64_t)c.nedge);
    out_rec_dbl(r, "time_s", c.seconds);
    out_rec_dbl(r, "kdist_s", c.kdist_seconds);
    out_rec_dbl(r, "forest_s", c.forest_seconds);
    if (s->have_eps)
        out_rec_dbl(r, "eps", s->eps);
    else
        out_rec_null(r, "eps");
    out_rec_bool(r, "used", used);
    out_rec_arr(r, "points");
    for (size_t k = 0; k < CURVE_POINTS; k++) {
        out_rec_obj(r, NULL);
        out_rec_dbl(r, "eps", x[k]);
        out_rec_int(r, "clusters", (int64_t)cl[k]);
        out_rec_int(r, "core", (int64_t)co[k]);
        out_rec_int(r, "noise", (int64_t)no[k]);
        out_rec_int(r, "largest_core", (int64_t)lg[k]);
        out_rec_close(r);
    }
    out_rec_close(r);
    out_rec_arr(r, "plateaus");
    for (size_t k = 0; k < np; k++) {
        out_rec_obj(r, NULL);
        out_rec_dbl(r, "lo", pl[k].lo);
        out_rec_dbl(r, "hi", pl[k].hi);
        out_rec_int(r, "clusters", (int64_t)pl[k].clusters);
        out_rec_int(r, "noise_lo", (int64_t)pl[k].noise_lo);
        out_rec_int(r, "noise_hi", (int64_t)pl[k].noise_hi);
        out_rec_close(r);
    }
    out_rec_close(r);
    out_rec_end(r);
    if (used) {
        out_rec *er = out_rec_begin("eps");
        out_rec_dbl(er, "eps", s->eps);
        out_rec_end(er);
    }
    dbscan_curve_free(&c);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static int dbscan_cmd(session *s, int argc, char **argv)
{
    const cmd *self = cmd_find("dbscan");
    int force = cmd_take_flag(&argc, argv, "force");
    char *pos[4];
    int np = cmd_positional(argc, argv, pos, 4);
    if (np == 0)
        return dbscan_at_eps(s, argc, argv, force);
    if (strcmp(pos[0], "compare") == 0 && np == 3)
        return dbscan_compare_cmd(s, argc, argv, pos);
    if (strcmp(pos[0], "curve") == 0 && (np == 1 || (np == 2 && strcmp(pos[1], "use") == 0)))
        return dbscan_curve_cmd(s, argc, argv, np == 2);
    return err_set(TCJ_EINVAL, "Usage: %s", self->usage);
}

static const char *const dbscan_options[] = {"minpts", "engine", "out", "max", NULL};
static const char *const dbscan_at_eps_options[] = {"minpts", "engine", "out", NULL};
static const char *const dbscan_curve_options[] = {"minpts", "max", "engine", NULL};
static const char *const dbscan_compare_options[] = {"minpts", NULL};
static const cmd_form dbscan_forms[] = {
    {"curve", dbscan_curve_options},
    {"compare", dbscan_compare_options},
    {NULL, dbscan_at_eps_options},
};

const cmd cmd_dbscan = {
    .name = "dbscan",
    .usage = "dbscan [curve [use]|compare A B] [minpts=M] [engine=NAME] [out=FILE] [max=EPS] "
             "[force]",
    .summary = "DBSCAN clusters at eps (exact, any engine), for every eps at once, or compared",
    .help = "DBSCAN on the eps-join with scikit-learn's definitions: a point is core when at\n"
            "least M points (itself included; scikit-learn's min_samples) lie within eps;\n"
            "clusters are the connected components of core points, numbered 0, 1, ... by\n"
            "their smallest core index; a non-core point with a core neighbour is a border\n"
            "point and takes the smallest cluster number among its core neighbours; the\n"
            "rest is noise (-1). Three passes over the join, memory O(n), no neighbour\n"
            "lists: per-point counts (core), core-core pairs into a union-find, border\n"
            "labels. Prints clusters, core, border and noise, the largest clusters, time by\n"
            "pass and red flags (no core point, nearly all core, one cluster holding most\n"
            "points, most points noise) with advice; stored (dbscans, dbscan_sizes).\n"
            "  minpts=M       points within eps, itself included, to be core (default 5)\n"
            "  engine=NAME    whose eps-graph to cluster (default: the ground truth, exact\n"
            "                 on a GPU, cpu otherwise); any format shows what precision does\n"
            "                 to the clusters\n"
            "  out=FILE       labels, int32 (-1 noise): .npy, .csv (one per line under a\n"
            "                 header 'label') or anything else raw (host byte order)\n"
            "  force          replace an existing out= file\n"
            "dbscan curve [use] [minpts=M] [max=EPS] [engine=NAME]: clusters, core points\n"
            "and noise for every eps up to max (default: the current eps) at once, exactly:\n"
            "core distances (kdist M-1), reachability and the minimum spanning forest of\n"
            "mutual-reachability weights, drawn with the current eps marked; plateaus\n"
            "(eps ranges with one cluster count) listed with the noise share over each;\n"
            "use makes current the middle of the widest eps range with 2 or more clusters\n"
            "and under half the points noise (else with one cluster; none when every eps\n"
            "up to max leaves half the points noise), and says why. The engine needs a\n"
            "k-distance entry (cpu).\n"
            "dbscan compare A B [minpts=M]: engines A and B clustered at the current eps:\n"
            "adjusted Rand index, points whose label changes after matching clusters, core\n"
            "and noise points gained and lost.",
    .min_args = 0,
    .max_args = 8,
    .options = dbscan_options,
    .forms = dbscan_forms,
    .run = dbscan_cmd,
};
