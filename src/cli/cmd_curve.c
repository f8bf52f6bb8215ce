/* curve [LO HI]: the selectivity curve S(ε) over a range from ONE histogram
 * pass of an engine, drawn as a text plot (log-scaled S), optionally
 * written as CSV, and emitted as a record the dashboard draws. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "cmd.h"
#include "err.h"
#include "ofile.h"
#include "out.h"
#include "runner.h"
#include "store.h"
#include "sweep.h"

#define CURVE_BINS_DEFAULT 256
#define CURVE_BINS_MAX SWEEP_MAX_BINS
#define PLOT_W 72
#define PLOT_H 16

static int write_csv(ofile *of, const double *eps, const double *sel, const uint64_t *pairs,
                     size_t np)
{
    FILE *f = ofile_stream(of);
    if (!f) {
        ofile_abort(of);
        return TCJ_EIO;
    }
    fprintf(f, "eps,pairs,selectivity\n");
    for (size_t k = 0; k < np; k++)
        fprintf(f, "%.17g,%llu,%.17g\n", eps[k], (unsigned long long)pairs[k], sel[k]);
    return ofile_commit(of);
}

static void print_plot(const double *eps, const double *sel, size_t np)
{
    int logy = 0;
    for (size_t k = 0; k < np; k++)
        if (sel[k] > 0)
            logy = 1;
    char cells[PLOT_W * PLOT_H];
    ui_grid g;
    ui_grid_init(&g, cells, PLOT_W, PLOT_H);
    ui_plot_xy(&g, eps, sel, np, 0, logy);
    char row[PLOT_W + 1];
    out_printf("  S%s against eps\n", logy ? " (log scale; S = 0 not drawn)" : "");
    for (int y = 0; y < PLOT_H; y++) {
        ui_grid_row_trimmed(&g, y, row);
        out_printf("  %s\n", row);
    }
}

/* The curve in the session log: a sweeps row of kind "curve" (no target;
 * eps and S at HI), its points as the steps, in one transaction. Returns
 * the row id; 0 when there is no log, or when the write failed: then no
 * row of it is stored and the command reports it (cmd_store_failed). */
static int64_t curve_store(session *s, const engine *e, double lo, double hi, size_t bins,
                           const double *eps, const double *sel, const uint64_t *pairs, size_t npt,
                           double secs)
{
    if (!s->db)
        return 0;
    char note[96];
    snprintf(note, sizeof note, "curve %.6g to %.6g, %zu bins", lo, hi, bins);
    store_curve_rec r = {.session_id = s->session_id,
                         .dataset_id = s->dataset_id,
                         .engine = e->name,
                         .note = note,
                         .npt = npt,
                         .eps = eps,
                         .sel = sel,
                         .pairs = pairs,
                         .seconds = secs};
    int64_t id = store_curve(s->db, &r);
    if (id > 0)
        return id;
    char why[900];
    snprintf(why, sizeof why, "%s", err_msg());
    err_set(TCJ_ESTORE, "%s; no point of the curve is stored", why);
    cmd_store_failed();
    err_clear();
    return 0;
}

static int curve_run(session *s, int argc, char **argv)
{
    const cmd *self = cmd_find("curve");
    int force = cmd_take_flag(&argc, argv, "force");
    char *pos[3];
    int np = cmd_positional(argc, argv, pos, 3);
    if (np != 0 && np != 2)
        return err_set(TCJ_EINVAL, "Usage: %s", self ? self->usage : "curve [LO HI]");
    if (!s->have_ds || s->ds.n == 0)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    int rc;
    double lo = 0, hi = 0;
    if (np == 2) {
        if ((rc = cmd_parse_double(pos[0], "curve: LO", &lo)) ||
            (rc = cmd_parse_double(pos[1], "curve: HI", &hi)))
            return rc;
        if (!(lo >= 0 && hi > lo))
            return err_set(TCJ_EINVAL, "curve: the range must satisfy 0 <= LO < HI (got %s %s)",
                           pos[0], pos[1]);
    }
    size_t bins = CURVE_BINS_DEFAULT;
    const char *v;
    if ((v = cmd_opt(argc, argv, "bins"))) {
        if ((rc = cmd_parse_count(v, "curve: bins", 1, CURVE_BINS_MAX, &bins)))
            return rc;
    }
    const engine *e;
    if ((rc = runner_engine_opt(&s->eopt, cmd_opt(argc, argv, "engine"), &e)))
        return rc;
    const char *csv = cmd_opt(argc, argv, "csv");
    if (csv && !*csv)
        return err_set(TCJ_EINVAL, "curve: csv= needs a file name");

    double sample_s = 0;
    if (np == 0) {
        /* No range given: the sample picks one around S in [0.01, 1000]. */
        sweep_sample smp;
        if ((rc = sweep_sample_build(&s->ds, 0, &smp)))
            return rc;
        sweep_curve_range(&smp, &lo, &hi);
        sample_s = smp.seconds;
        sweep_sample_free(&smp);
    }
    /* The csv file is checked before the pass, not after it. */
    ofile *of = NULL;
    if (csv && (rc = ofile_open(csv, force, s->db ? store_path(s->db) : NULL, &of)))
        return rc;
    size_t npt = bins + 1;
    double *eps = xmalloc(npt * sizeof *eps), *sel = xmalloc(npt * sizeof *sel);
    uint64_t *pairs = xmalloc(npt * sizeof *pairs);
    double secs = 0;
    rc = sweep_curve(&s->ds, e, &s->eopt, lo, hi, bins, eps, sel, pairs, &secs, &s->cancel);
    if (rc == TCJ_ECANCEL)
        rc = err_cancelled("curve");
    if (of && !rc)
        rc = write_csv(of, eps, sel, pairs, npt);
    else if (of)
        ofile_abort(of);
    if (rc)
        goto done;

    out_printf("curve on %s (n=%zu d=%zu), engine %s: eps %.6g to %.6g, %zu bins, one pass in "
               "%.3f s%s\n",
               s->ds.name ? s->ds.name : "dataset", s->ds.n, s->ds.d, e->name, lo, hi, bins, secs,
               np == 0 ? " (range from a sample)" : "");
    print_plot(eps, sel, npt);
    out_printf("  %14s %14s %16s\n", "eps", "S", "pairs");
    for (int k = 0; k <= 8; k++) {
        size_t i = (size_t)k * bins / 8;
        out_printf("  %14.6g %14.6g %16llu\n", eps[i], sel[i], (unsigned long long)pairs[i]);
    }
    if (csv)
        out_printf("  %zu points written to %s\n", npt, csv);

    int64_t cid = curve_store(s, e, lo, hi, bins, eps, sel, pairs, npt, secs);
    if (cid)
        out_printf("  stored as sweep %lld (kind curve) in the session log\n", (long long)cid);
    out_rec *r = out_rec_begin("curve");
    out_rec_int(r, "sweep_id", cid);
    out_rec_str(r, "engine", e->name);
    out_rec_str(r, "dataset", s->ds.name);
    out_rec_int(r, "n", (int64_t)s->ds.n);
    out_rec_dbl(r, "lo", lo);
    out_rec_dbl(r, "hi", hi);
    out_rec_int(r, "bins", (int64_t)bins);
    out_rec_int(r, "passes", 1);
    out_rec_dbl(r, "time_s", secs);
    out_rec_dbl(r, "sample_time_s", sample_s);
    if (csv)
        out_rec_str(r, "csv", csv);
    out_rec_arr(r, "points");
    for (size_t k = 0; k < npt; k++) {
        out_rec_obj(r, NULL);
        out_rec_dbl(r, "eps", eps[k]);
        out_rec_dbl(r, "selectivity", sel[k]);
        out_rec_int(r, "pairs", (int64_t)pairs[k]);
        out_rec_close(r);
    }
    out_rec_close(r);
    out_rec_end(r);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
done:
    free(eps);
    free(sel);
    free(pairs);
    return rc;
}

static const char *const curve_options[] = {"bins", "engine", "csv", NULL};

const cmd cmd_curve = {
    .name = "curve",
    .usage = "curve [LO HI] [bins=N] [engine=NAME] [csv=FILE] [force]",
    .summary = "the selectivity curve S(eps) from one pass",
    .help = "Count pairs per bin of distance in ONE histogram pass of the engine (default:\n"
            "fasted on a GPU, else cpu) and print S(eps) at bins+1 evenly spaced eps from\n"
            "LO to HI as a text plot (S on a log scale) and a short table. Without LO HI a\n"
            "sample picks a range where S goes from about 0.01 to about 1000.\n"
            "  bins=N        bins (default 256, at most 4096)\n"
            "  engine=NAME   engine for the pass\n"
            "  csv=FILE      also write eps,pairs,selectivity per point\n"
            "  force         replace an existing csv= file (never the session log)\n"
            "Ctrl-C stops the pass within a second. The points are stored in the session log\n"
            "(a sweep of kind curve).",
    .min_args = 0,
    .max_args = -1,
    .options = curve_options,
    .run = curve_run,
};
