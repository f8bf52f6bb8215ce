/* compare A B: engine A judged against reference B on the current dataset
 * and eps, side by side; both runs and the comparison are stored. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "compare.h"
#include "err.h"
#include "out.h"
#include "runner.h"
#include "store.h"

/* Seconds of a phase by name, or -1 when the run has no such phase. */
static double phase_of(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nphase; k++)
        if (strcmp(r->phase[k].name, name) == 0)
            return r->phase[k].seconds;
    return -1;
}

static void cell_time(char *b, size_t n, double t)
{
    if (t < 0)
        snprintf(b, n, "-");
    else
        snprintf(b, n, "%.4f s", t);
}

static void row(const char *label, const char *a, const char *b)
{
    out_printf("  %-22s %-20s %s\n", label, a, b);
}

static void rec_phases(out_rec *r, const char *key, const join_result *res)
{
    out_rec_obj(r, key);
    for (int k = 0; k < res->nphase; k++)
        out_rec_dbl(r, res->phase[k].name, res->phase[k].seconds);
    out_rec_close(r);
}

static void rec_rel(out_rec *r, const char *key, const uint64_t *bins)
{
    out_rec_arr(r, key);
    for (int b = 0; b < CMP_REL_BINS; b++) {
        if (!bins[b])
            continue;
        out_rec_obj(r, NULL);
        out_rec_dbl(r, "lo", cmp_rel_edges[b]);
        out_rec_dbl(r, "hi", cmp_rel_edges[b + 1]);
        out_rec_int(r, "count", (int64_t)bins[b]);
        out_rec_close(r);
    }
    out_rec_close(r);
}

static void print_rel(const char *who, const uint64_t *bins)
{
    for (int b = 0; b < CMP_REL_BINS; b++)
        if (bins[b])
            out_printf("    only %-10s (d-eps)/eps in [%g, %g): %llu\n", who, cmp_rel_edges[b],
                       cmp_rel_edges[b + 1], (unsigned long long)bins[b]);
}

static int compare_run(session *s, int argc, char **argv)
{
    const engine *ea, *eb;
    int rc;
    if ((rc = runner_find_engine(argv[0], &ea)) || (rc = runner_find_engine(argv[1], &eb)))
        return rc;
    join_spec sa, sb;
    runner_progress pg;
    if ((rc = runner_spec(s, ea, &sa, &pg)) || (rc = runner_spec(s, eb, &sb, &pg)))
        return rc;
    snprintf(pg.what, sizeof pg.what, "compare %s %s", ea->name, eb->name);

    cmp_spec cs;
    memset(&cs, 0, sizeof cs);
    cs.a = ea;
    cs.b = eb;
    cs.ds = &s->ds;
    cs.eps = s->eps;
    cs.opts = &s->eopt;
    cs.cancel = &s->cancel;
    cs.progress = sa.progress;
    cs.progress_ctx = &pg;
    static cmp_result r; /* large (histograms, two join results) */
    memset(&r, 0, sizeof r);
    rc = cmp_run(&cs, &r);
    if (rc) {
        if (rc == TCJ_ECANCEL)
            return err_set(rc, "compare %s %s cancelled", ea->name, eb->name);
        return rc;
    }

    int64_t ida = runner_store(s, ea, &sa, &r.run_a, 0, NULL);
    int64_t idb = runner_store(s, eb, &sb, &r.run_b, 0, NULL);
    int64_t cid = 0;
    if (s->db) {
        store_cmp_rec cr;
        memset(&cr, 0, sizeof cr);
        cmp_store_rec(&r, &cr);
        cr.session_id = s->session_id;
        cr.run_a = ida;
        cr.run_b = idb;
        cid = store_comparison(s->db, &cr);
        if (cid < 0)
            cid = 0;
    }
    if (idb)
        s->last_run_id = idb;

    size_t n = s->ds.n;
    char eps[40], a[64], b[64];
    out_fmt_double(eps, sizeof eps, s->eps);
    double tpa, tua, tpb, tub;
    runner_tflops(&sa, &r.run_a, &tpa, &tua);
    runner_tflops(&sb, &r.run_b, &tpb, &tub);
    double speedup = r.run_a.seconds > 0 ? r.run_b.seconds / r.run_a.seconds : NAN;

    out_printf("compare %lld: %s against %s on %s (n=%zu d=%zu) eps=%s\n", (long long)cid, ea->name,
               eb->name, s->ds.name, n, s->ds.d, eps);
    row("", ea->name, eb->name);
    snprintf(a, sizeof a, "%lld", (long long)ida);
    snprintf(b, sizeof b, "%lld", (long long)idb);
    row("run", a, b);
    row("precision", r.run_a.precision, r.run_b.precision);
    snprintf(a, sizeof a, "%llu", (unsigned long long)r.run_a.pairs);
    snprintf(b, sizeof b, "%llu", (unsigned long long)r.run_b.pairs);
    row("pairs", a, b);
    snprintf(a, sizeof a, "%.4f", engine_selectivity(r.run_a.pairs, n));
    snprintf(b, sizeof b, "%.4f", engine_selectivity(r.run_b.pairs, n));
    row("selectivity", a, b);
    cell_time(a, sizeof a, r.run_a.seconds);
    cell_time(b, sizeof b, r.run_b.seconds);
    row("time", a, b);
    /* Every phase either side has, in order of appearance. */
    const join_result *rs[2] = {&r.run_a, &r.run_b};
    const char *seen[2 * JOIN_MAX_PHASES];
    int nseen = 0;
    for (int side = 0; side < 2; side++)
        for (int k = 0; k < rs[side]->nphase; k++) {
            const char *nm = rs[side]->phase[k].name;
            int dup = 0;
            for (int q = 0; q < nseen; q++)
                dup |= strcmp(seen[q], nm) == 0;
            if (dup)
                continue;
            seen[nseen++] = nm;
            char label[64];
            snprintf(label, sizeof label, "  %s", nm);
            cell_time(a, sizeof a, phase_of(&r.run_a, nm));
            cell_time(b, sizeof b, phase_of(&r.run_b, nm));
            row(label, a, b);
        }
    snprintf(a, sizeof a, "%.3f TFLOPS", tpa);
    snprintf(b, sizeof b, "%.3f TFLOPS", tpb);
    row("derived (padded d)", a, b);
    out_printf("  overlap %.6f (eq. 3 of the FASTED paper)\n", r.overlap);
    out_printf("  pairs both found %llu; only %s %llu; only %s %llu\n", (unsigned long long)r.both,
               ea->name, (unsigned long long)r.only_a, eb->name, (unsigned long long)r.only_b);
    out_printf("  distance error %s - %s: mean %.4g, std %.4g, min %.4g, max %.4g\n", ea->name,
               eb->name, r.err_mean, r.err_std, r.err_min, r.err_max);
    if (r.only_a)
        out_printf("  only %s: largest |d-eps|/eps %.4g (FP64 distance)\n", ea->name,
                   r.only_a_rel_max);
    if (r.only_b)
        out_printf("  only %s: largest |d-eps|/eps %.4g (FP64 distance)\n", eb->name,
                   r.only_b_rel_max);
    print_rel(ea->name, r.only_a_rel);
    print_rel(eb->name, r.only_b_rel);
    out_printf("  error histogram, %zu bins (bins holding pairs):\n", r.nbins);
    for (size_t k = 0; k < r.nbins; k++)
        if (r.bin_count[k])
            out_printf("    [%10.3g, %10.3g) %llu\n", r.bin_lo[k], r.bin_hi[k],
                       (unsigned long long)r.bin_count[k]);
    out_printf("  speedup %s over %s: %.3gx (end to end)\n", ea->name, eb->name, speedup);

    /* Each stored run is a result of its own (the dashboard's runs panel
     * and JSON readers see it like any run), then the comparison. */
    out_rec *ra = out_rec_begin("run");
    runner_rec_fields(ra, s, ea, &sa, &r.run_a, ida);
    out_rec_end(ra);
    out_rec *rb = out_rec_begin("run");
    runner_rec_fields(rb, s, eb, &sb, &r.run_b, idb);
    out_rec_end(rb);

    out_rec *rec = out_rec_begin("compare");
    out_rec_int(rec, "comparison_id", cid);
    out_rec_str(rec, "engine_a", ea->name);
    out_rec_str(rec, "engine_b", eb->name);
    out_rec_int(rec, "run_a", ida);
    out_rec_int(rec, "run_b", idb);
    out_rec_str(rec, "dataset", s->ds.name);
    out_rec_int(rec, "n", (int64_t)n);
    out_rec_int(rec, "d", (int64_t)s->ds.d);
    out_rec_dbl(rec, "eps", s->eps);
    out_rec_int(rec, "pairs_a", (int64_t)r.run_a.pairs);
    out_rec_int(rec, "pairs_b", (int64_t)r.run_b.pairs);
    out_rec_dbl(rec, "selectivity_a", engine_selectivity(r.run_a.pairs, n));
    out_rec_dbl(rec, "selectivity_b", engine_selectivity(r.run_b.pairs, n));
    out_rec_dbl(rec, "time_a", r.run_a.seconds);
    out_rec_dbl(rec, "time_b", r.run_b.seconds);
    rec_phases(rec, "phases_a", &r.run_a);
    rec_phases(rec, "phases_b", &r.run_b);
    out_rec_dbl(rec, "tflops_a", tpa);
    out_rec_dbl(rec, "tflops_b", tpb);
    out_rec_dbl(rec, "overlap", r.overlap);
    out_rec_int(rec, "both", (int64_t)r.both);
    out_rec_int(rec, "only_a", (int64_t)r.only_a);
    out_rec_int(rec, "only_b", (int64_t)r.only_b);
    out_rec_dbl(rec, "err_mean", r.err_mean);
    out_rec_dbl(rec, "err_std", r.err_std);
    out_rec_dbl(rec, "err_min", r.err_min);
    out_rec_dbl(rec, "err_max", r.err_max);
    out_rec_dbl(rec, "only_a_rel_max", r.only_a_rel_max);
    out_rec_dbl(rec, "only_b_rel_max", r.only_b_rel_max);
    out_rec_dbl(rec, "speedup", speedup);
    out_rec_arr(rec, "histogram");
    for (size_t k = 0; k < r.nbins; k++) {
        out_rec_obj(rec, NULL);
        out_rec_dbl(rec, "lo", r.bin_lo[k]);
        out_rec_dbl(rec, "hi", r.bin_hi[k]);
        out_rec_int(rec, "count", (int64_t)r.bin_count[k]);
        out_rec_close(rec);
    }
    out_rec_close(rec);
    rec_rel(rec, "only_a_rel", r.only_a_rel);
    rec_rel(rec, "only_b_rel", r.only_b_rel);
    out_rec_end(rec);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

const cmd cmd_compare = {
    .name = "compare",
    .usage = "compare ENGINE_A ENGINE_B",
    .summary = "run two engines and judge A against reference B",
    .help = "Run both engines on the current dataset and eps and show them side by side:\n"
            "pairs, selectivity, time by phase, derived TFLOPS, the overlap score (eq. 3 of\n"
            "the FASTED paper: mean over points of |N_A & N_B| / |N_A | N_B|), the distance\n"
            "error A - B over pairs both found (mean, std, histogram), the pairs only one\n"
            "side found with their FP64 distance relative to eps, and the speedup of A over\n"
            "B. Works block of rows by block of rows; memory does not grow with the pairs.\n"
            "Both runs and the comparison (with its histogram bins) are stored.\n"
            "Example: compare cpu-fp16 cpu",
    .min_args = 2,
    .max_args = 2,
    .options = NULL,
    .run = compare_run,
};
