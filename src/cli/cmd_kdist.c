/* kdist K [use]: the k-distance curve (src/cluster/kdist.h) of the current
 * dataset from an engine's kdist entry, drawn as a text plot, its knee
 * (Kneedle, from the median to the 90th percentile: src/cluster/kdist.h) offered
 * as eps, stored in the log and emitted as a record the dashboard draws;
 * `use` makes the knee's eps current. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "cmd.h"
#include "err.h"
#include "mem.h"
#include "kdist.h"
#include "out.h"
#include "par.h"
#include "runner.h"
#include "store.h"

#define PLOT_W 72
#define PLOT_H 14

/* The engine: engine=NAME, else the default one when it has a kdist
 * entry (the tensor-core formats), else an exact one (cpu). */
static int pick_engine(const session *s, const char *name, const engine **out)
{
    if (name)
        return runner_engine_opt(&s->eopt, name, out);
    const engine *e = engine_kdist_pick(runner_default_engine(&s->eopt), &s->eopt);
    if (!e)
        return err_set(TCJ_EUNSUP, "kdist: no engine with a k-distance computation can run here");
    *out = e;
    return 0;
}

/* The curve as text: the knee an O, the session's eps (when set) a
 * dashed rule, and a log axis when outliers would flatten the bulk (as
 * the dashboard's panel draws it). */
static void print_plot(const session *s, const kdist_curve *c)
{
    double x[KDIST_MAX_POINTS];
    for (size_t j = 0; j < c->npts; j++)
        x[j] = (double)c->rank[j];
    char cells[PLOT_W * PLOT_H];
    ui_grid g;
    ui_grid_init(&g, cells, PLOT_W, PLOT_H);
    int logy = ui_kdist_logy(c->dist, c->npts);
    double kx = c->have_knee ? x[c->knee_point] : 0, ky = c->have_knee ? c->dist[c->knee_point] : 0;
    if (ui_plot_curve_rule(&g, x, c->dist, c->npts, &kx, &ky, c->have_knee ? 1 : 0, 0, logy,
                           s->have_eps ? s->eps : NAN) != 0)
        return;
    out_printf("  %d-distance against the points sorted by it (rank 0 to %zu)%s%s%s\n", c->k,
               c->n - 1, logy ? ", log scale (outliers)" : "", c->have_knee ? "; O the knee" : "",
               s->have_eps ? "; - - the current eps" : "");
    char row[PLOT_W + 1];
    for (int y = 0; y < PLOT_H; y++) {
        ui_grid_row_trimmed(&g, y, row);
        out_printf("  %s\n", row);
    }
}

/* The curve's value at a fraction of the ranks (from the stored points). */
static double at_frac(const kdist_curve *c, double f)
{
    size_t r = (size_t)(f * (double)(c->n - 1) + 0.5), best = 0;
    for (size_t j = 0; j < c->npts; j++)
        if (c->rank[j] <= r)
            best = j;
    return c->dist[best];
}

static void emit_record(session *s, const engine *e, const kdist_curve *c, const join_result *res,
                        int64_t id, int used)
{
    out_rec *r = out_rec_begin("kdist");
    out_rec_int(r, "kdist_id", id);
    out_rec_str(r, "engine", e->name);
    out_rec_str(r, "precision", res->precision);
    out_rec_str(r, "dataset", s->ds.name);
    out_rec_int(r, "n", (int64_t)s->ds.n);
    out_rec_int(r, "d", (int64_t)s->ds.d);
    out_rec_int(r, "k", c->k);
    out_rec_int(r, "minpts", c->k + 1);
    out_rec_dbl(r, "time_s", res->seconds);
    runner_rec_phases(r, res);
    out_rec_str(r, "knee_method", c->knee_method);
    if (c->have_knee) {
        out_rec_int(r, "knee_rank", (int64_t)c->rank[c->knee_point]);
        out_rec_dbl(r, "knee_dist", c->dist[c->knee_point]);
        out_rec_dbl(r, "eps", c->eps);
    }
    out_rec_bool(r, "used", used);
    out_rec_str(r, "variant", res->variant);
    runner_rec_counters(r, res);
    out_rec_obj(r, "points");
    out_rec_arr(r, "rank");
    for (size_t j = 0; j < c->npts; j++)
        out_rec_int(r, NULL, (int64_t)c->rank[j]);
    out_rec_close(r);
    out_rec_arr(r, "dist");
    for (size_t j = 0; j < c->npts; j++)
        out_rec_dbl(r, NULL, c->dist[j]);
    out_rec_close(r);
    out_rec_close(r);
    out_rec_end(r);
}

static int kdist_cmd(session *s, int argc, char **argv)
{
    const cmd *self = cmd_find("kdist");
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    int use = np == 2 && strcmp(pos[1], "use") == 0;
    if (np < 1 || np > 2 || (np == 2 && !use))
        return err_set(TCJ_EINVAL, "Usage: %s", self->usage);
    size_t k;
    int rc;
    if ((rc = cmd_parse_count(pos[0], "kdist: K", 1, KDIST_MAX_K, &k)))
        return rc;
    if (!s->have_ds)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    const engine *e;
    if ((rc = pick_engine(s, cmd_opt(argc, argv, "engine"), &e)))
        return rc;

    const dataset *ds = &s->ds;
    double *d2 = mem_alloc("kdist", "the k-distances", ds->n, sizeof *d2, 0);
    if (!d2)
        return TCJ_ENOMEM;
    par_zero(d2, ds->n * sizeof *d2); /* its pages faulted in on every core */
    runner_progress pg = {.s = s, .what = "kdist"};
    kdist_spec spec = {
        .ds = ds,
        .q0 = 0,
        .q1 = ds->n,
        .k = (int)k,
        .opts = &s->eopt,
        .out = d2,
        .cancel = &s->cancel,
        .progress = runner_on_progress,
        .progress_ctx = &pg,
    };
    join_result res;
    if ((rc = kdist_run(e, &spec, &res))) {
        free(d2);
        if (rc == TCJ_ECANCEL)
            return err_cancelled("kdist %s", e->name);
        return rc;
    }
    session_put(s, "kdist_d2", d2, SESSION_F64, ds->n); /* in row order: the curve sorts them */
    kdist_curve *c = xmalloc(sizeof *c);
    kdist_curve_build(d2, ds->n, (int)k, c);
    free(d2);

    int64_t id = 0;
    if (s->db) {
        store_kdist_rec r = {
            .session_id = s->session_id,
            .dataset_id = s->dataset_id,
            .command_id = s->command_id,
            .engine = e->name,
            .precision = res.precision,
            .device = res.device,
            .variant = res.variant,
            .curve = c,
            .seconds = res.seconds,
        };
        id = store_kdist(s->db, &r);
        if (id < 0) {
            free(c);
            return (int)id;
        }
    }

    out_printf("kdist %lld: K=%zu on %s (n=%zu d=%zu), engine %s, in %.3f s: the distance of "
               "each point to its %zu%s nearest other point (self excluded)\n",
               (long long)id, k, ds->name, ds->n, ds->d, e->name, res.seconds, k,
               k % 10 == 1 && k % 100 != 11   ? "st"
               : k % 10 == 2 && k % 100 != 12 ? "nd"
               : k % 10 == 3 && k % 100 != 13 ? "rd"
                                              : "th");
    out_printf("  for DBSCAN minPts = %zu (scikit-learn min_samples = %zu): both count the point "
               "itself\n",
               k + 1, k + 1);
    print_plot(s, c);
    out_printf("  min %.6g, p10 %.6g, median %.6g, p90 %.6g, max %.6g\n", c->dist[0],
               at_frac(c, 0.1), at_frac(c, 0.5), at_frac(c, 0.9), c->dist[c->npts - 1]);
    int used = 0;
    if (c->have_knee) {
        size_t r = c->rank[c->knee_point];
        char eps[40];
        out_fmt_double(eps, sizeof eps, c->eps);
        out_printf("  knee (%s%s) at rank %zu of %zu (%.1f%%): %zu-distance %.9g; eps %s "
                   "leaves at most %.1f%% of the points with fewer than %zu others within it\n",
                   c->knee_method,
                   c->knee_method[0] == 'k' ? ", Satopaa et al. 2011, on the ranks from the median "
                                              "to p90"
                                            : ", Kneedle found none from the median to p90",
                   r, c->n, 100.0 * (double)r / (double)(c->n > 1 ? c->n - 1 : 1), k,
                   c->dist[c->knee_point], eps, 100.0 * (double)(c->n - 1 - r) / (double)c->n, k);
        if (use) {
            s->eps = c->eps;
            s->have_eps = 1;
            used = 1;
            out_printf("eps %s (the knee of the %zu-distance curve)\n", eps, k);
            out_printf("  dbscan curve minpts=%zu use then takes, below it, the widest eps range "
                       "with 2+ clusters and under half the points noise\n",
                       k + 1);
        } else {
            out_printf("  kdist %zu use (or eps %s) makes it the current eps\n", k, eps);
        }
    } else {
        out_printf("  no knee: the curve is flat, straight or concave from its median to p90 "
                   "(%s)\n",
                   c->knee_method);
        double p90 = at_frac(c, 0.9);
        if (p90 > 0) {
            char pb[40];
            out_fmt_double(pb, sizeof pb, p90);
            out_printf("  dbscan curve minpts=%zu max=%s use picks from every eps up to p90\n",
                       k + 1, pb);
        }
        if (use)
            out_printf("warning: no knee to use; eps unchanged\n");
    }
    emit_record(s, e, c, &res, id, used);
    if (used) {
        out_rec *r = out_rec_begin("eps");
        out_rec_dbl(r, "eps", s->eps);
        out_rec_end(r);
    }
    free(c);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static const char *const kdist_options[] = {"engine", NULL};

const cmd cmd_kdist = {
    .name = "kdist",
    .usage = "kdist K [use] [engine=NAME]",
    .summary = "k-distance curve and its knee: DBSCAN's eps for minPts = K+1",
    .help = "For every point the distance to its K-th nearest other point (self excluded),\n"
            "K from 1 to 256, sorted and drawn as a curve: the k-distance plot used to pick\n"
            "DBSCAN's eps. A point has K other points within its K-distance, K+1 counting\n"
            "itself, so K maps to DBSCAN's minPts = K+1 and to scikit-learn's min_samples =\n"
            "K+1 (both count the point itself); for minPts = 5 use kdist 4.\n"
            "The knee is found by Kneedle (V. Satopaa, J. Albrecht, D. Irwin, B. Raghavan,\n"
            "\"Finding a 'Kneedle' in a Haystack: Detecting Knee Points in System Behavior\",\n"
            "ICDCS Workshops 2011), sensitivity 1, on the sorted curve's ranks from the\n"
            "median to the 90th percentile (below, noise could be most points; above, the\n"
            "outliers' tail draws the knee to it); when it declares none, the point farthest\n"
            "below the chord there. Its distance is offered as eps (the smallest eps whose\n"
            "join reaches that point's K-th neighbour): fewer than half the points are noise\n"
            "at it; dbscan curve minpts=K+1 use then picks among the eps below it.\n"
            "  use            make the knee's eps the current eps\n"
            "  engine=NAME    engine computing it. Default: the default engine when it has\n"
            "                 one (fasted on a GPU: FASTED's FP16/FP32 arithmetic in three\n"
            "                 tensor-core passes, a per-row bound, a per-row histogram\n"
            "                 under it and the K-th value from its bin; bf16 and tf32 too),\n"
            "                 else cpu (exact FP64, threaded). exact: cpu's values\n"
            "                 exactly: small data every pair in FP64 on the device, low d\n"
            "                 (set exact-path) through the device's grid index, else its\n"
            "                 tensor-core passes decided in FP64. Memory is bounded per\n"
            "                 row, never the pairs.\n"
            "The curve (up to 1024 quantile points), knee, K and engine are stored (kdists,\n"
            "kdist_points); export kdist ID csv|json FILE writes one.",
    .min_args = 1,
    .max_args = 3,
    .options = kdist_options,
    .run = kdist_cmd,
};
