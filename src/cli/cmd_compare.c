/* compare A B [ref=R]: engines A and B run on the current dataset and eps,
 * side by side, each judged against the FP64 ground truth (B itself when
 * it is an exact FP64 engine and no ref= is given); the runs and the one
 * comparison are stored. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "compare.h"
#include "err.h"
#include "json.h"
#include "out.h"
#include "reuse.h"
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

/* A table row of two or three columns (c NULL: two). */
static void row3(const char *label, const char *a, const char *b, const char *c)
{
    if (c)
        out_printf("  %-22s %-20s %-20s %s\n", label, a, b, c);
    else
        out_printf("  %-22s %-20s %s\n", label, a, b);
}

static void row(const char *label, const char *a, const char *b)
{
    row3(label, a, b, NULL);
}

static void print_rel(const char *who, const uint64_t *bins)
{
    for (int b = 0; b < CMP_REL_BINS; b++)
        if (bins[b])
            out_printf("    only %-10s (d-eps)/eps in [%g, %g): %llu\n", who, cmp_rel_edges[b],
                       cmp_rel_edges[b + 1], (unsigned long long)bins[b]);
}

static void print_hist(const cmp_side *r)
{
    /* A bin of one value (every error 0) is closed: [0, 0) would be empty. */
    for (size_t k = 0; k < r->nbins; k++)
        if (r->bin_count[k])
            out_printf("    [%10.3g, %10.3g%c %llu\n", r->bin_lo[k], r->bin_hi[k],
                       r->bin_lo[k] == r->bin_hi[k] ? ']' : ')',
                       (unsigned long long)r->bin_count[k]);
}

static double ratio(double num, double den)
{
    return num > 0 && den > 0 ? num / den : NAN;
}

static void cell_speedup(char *b, size_t n, double x)
{
    if (isfinite(x))
        snprintf(b, n, "%.3gx", x);
    else
        snprintf(b, n, "-");
}

/* The accuracy rows of A and B, each against the reference. */
static void print_accuracy(const cmp_side *ra, const cmp_side *rb, const char *ref)
{
    char a[64], b[64], label[64];
    snprintf(label, sizeof label, "accuracy against %s", ref);
    out_printf("  %s\n", label);
    snprintf(a, sizeof a, "%.6f", ra->overlap);
    snprintf(b, sizeof b, "%.6f", rb->overlap);
    row("overlap (eq. 3)", a, b);
    snprintf(a, sizeof a, "%llu", (unsigned long long)ra->both);
    snprintf(b, sizeof b, "%llu", (unsigned long long)rb->both);
    row("pairs both found", a, b);
    snprintf(a, sizeof a, "%llu", (unsigned long long)ra->only_engine);
    snprintf(b, sizeof b, "%llu", (unsigned long long)rb->only_engine);
    row("only the engine", a, b);
    snprintf(label, sizeof label, "only %s", ref);
    snprintf(a, sizeof a, "%llu", (unsigned long long)ra->only_ref);
    snprintf(b, sizeof b, "%llu", (unsigned long long)rb->only_ref);
    row(label, a, b);
    const char *names[4] = {"error mean", "error std", "error min", "error max"};
    const double va[4] = {ra->err_mean, ra->err_std, ra->err_min, ra->err_max};
    const double vb[4] = {rb->err_mean, rb->err_std, rb->err_min, rb->err_max};
    for (int k = 0; k < 4; k++) {
        snprintf(a, sizeof a, "%.4g", va[k]);
        snprintf(b, sizeof b, "%.4g", vb[k]);
        row(names[k], a, b);
    }
    snprintf(a, sizeof a, "%.4g", ra->only_engine_rel_max);
    snprintf(b, sizeof b, "%.4g", rb->only_engine_rel_max);
    row("only-engine max |rel|", a, b);
    snprintf(a, sizeof a, "%.4g", ra->only_ref_rel_max);
    snprintf(b, sizeof b, "%.4g", rb->only_ref_rel_max);
    row("only-ref max |rel|", a, b);
}

/* One side's one-sided pairs and error histogram, after the table. */
static void print_side(const char *side, const cmp_side *r, const char *ref)
{
    out_printf("  %s: %s - %s, distance error histogram, %zu bin%s (bins holding pairs):\n", side,
               r->engine, ref, r->nbins, r->nbins == 1 ? "" : "s");
    print_hist(r);
    print_rel(r->engine, r->only_engine_rel);
    print_rel(ref, r->only_ref_rel);
}

/* One side of the compare record: its run and its accuracy against the
 * reference, the same shape for a, b and ref (docs/JSON.md). */
static void rec_side(out_rec *rec, const char *key, const cmp_side *sd, const join_spec *spec,
                     const join_result *run, size_t n)
{
    double tp, tu;
    runner_tflops(spec, run, &tp, &tu);
    json_w *w = out_rec_json(rec);
    json_w_obj(w, key);
    json_w_str(w, "engine", sd->engine);
    json_w_int(w, "run_id", sd->run_id);
    json_w_str(w, "precision", run->precision);
    json_w_uint(w, "pairs", run->pairs);
    json_w_dbl(w, "selectivity", engine_selectivity(run->pairs, n));
    json_w_dbl(w, "time_s", run->seconds);
    json_w_dbl(w, "kernel_s", run->kernel_seconds);
    json_w_obj(w, "phases");
    for (int k = 0; k < run->nphase; k++)
        json_w_dbl(w, run->phase[k].name, run->phase[k].seconds);
    json_w_close(w);
    json_w_dbl(w, "tflops", tp);
    json_w_dbl(w, "tflops_unpadded", tu);
    cmp_side_accuracy_json(sd, w);
    json_w_close(w);
}

static const char *const compare_options[] = {"ref", NULL};

static int compare_run(session *s, int argc, char **argv)
{
    char *pos[4];
    int np = cmd_positional(argc, argv, pos, 4);
    int fresh = np == 3 && strcmp(pos[2], "fresh") == 0;
    if (np != 2 && !fresh)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("compare")->usage);
    const engine *ea, *eb, *er = NULL;
    int rc;
    if ((rc = runner_find_engine(pos[0], &ea)) || (rc = runner_find_engine(pos[1], &eb)))
        return rc;
    const char *refname = cmd_opt(argc, argv, "ref");
    if (refname && (rc = runner_find_engine(refname, &er)))
        return rc;
    if (!refname && !eb->exact)
        er = runner_reference_engine(&s->eopt);
    if (er == eb)
        er = NULL; /* B is the ground truth itself */
    join_spec sa, sb, sr;
    runner_progress pg;
    if ((rc = runner_spec(s, ea, &sa, &pg)) || (rc = runner_spec(s, eb, &sb, &pg)) ||
        (er && (rc = runner_spec(s, er, &sr, &pg))))
        return rc;
    snprintf(pg.what, sizeof pg.what, "compare %s %s", ea->name, eb->name);
    /* Stored runs standing for the clean COUNT runs (src/cli/reuse.h). */
    const engine *const sides[REUSE_SIDES] = {ea, eb, er};
    static reuse_set reused; /* large: three join results */
    if ((rc = reuse_sides(s, sides, fresh, &reused)))
        return rc;

    /* A against the truth, then B against it when B is not the truth. */
    cmp_spec cs;
    memset(&cs, 0, sizeof cs);
    cs.a = ea;
    cs.b = er ? er : eb;
    cs.ds = &s->ds;
    cs.eps = s->eps;
    cs.opts = &s->eopt;
    cs.cancel = &s->cancel;
    cs.progress = sa.progress;
    cs.progress_ctx = &pg;
    cs.reuse_a = reuse_res(&reused, 0);
    cs.reuse_b = reuse_res(&reused, er ? 2 : 1);
    static cmp_result ra, rb; /* large (histograms, two join results) */
    memset(&ra, 0, sizeof ra);
    memset(&rb, 0, sizeof rb);
    /* With a reference of its own, A and B are judged in one pair pass. */
    rc = er ? cmp_run2(&cs, eb, reuse_res(&reused, 1), &ra, &rb) : cmp_run(&cs, &ra);
    if (rc) {
        if (rc == TCJ_ECANCEL)
            return err_cancelled("compare %s %s", ea->name, eb->name);
        return rc;
    }
    const join_result *run_a = &ra.run_a, *run_b = er ? &rb.run_a : &ra.run_b;
    const join_result *run_r = er ? &ra.run_b : NULL;
    const char *refn = er ? er->name : eb->name;

    int64_t ida = reused.found[0] ? reused.run[0].id : runner_store(s, ea, &sa, run_a, 0, NULL);
    int64_t idb = reused.found[1] ? reused.run[1].id : runner_store(s, eb, &sb, run_b, 0, NULL);
    int64_t idr = !er               ? idb
                  : reused.found[2] ? reused.run[2].id
                                    : runner_store(s, er, &sr, run_r, 0, NULL);
    /* The sides: A and B, each judged against the reference unless B is
     * the reference itself. */
    cmp_side side_b, side_r;
    cmp_side *side_a = &ra.side;
    side_a->run_id = ida;
    if (er) {
        side_b = rb.side;
        side_b.run_id = idb;
        cmp_side_ref(&side_r, er->name, idr);
    } else {
        cmp_side_ref(&side_b, eb->name, idb);
        side_r = side_b;
    }
    int64_t cid = 0;
    if (s->db) {
        store_cmp_rec cr = {.session_id = s->session_id,
                            .eps = s->eps,
                            .ref_engine = refn,
                            .run_ref = idr,
                            .side = {side_a, &side_b}};
        cid = store_comparison(s->db, &cr);
        if (cid < 0) {
            cmd_store_failed();
            cid = 0;
        }
    }
    if (idb)
        s->last_run_id = idb;

    size_t n = s->ds.n;
    char eps[40], a[64], b[64], c[64];
    char *cc = er ? c : NULL;
    out_fmt_double(eps, sizeof eps, s->eps);
    double tpa, tua, tpb, tub, tpr = 0, tur;
    runner_tflops(&sa, run_a, &tpa, &tua);
    runner_tflops(&sb, run_b, &tpb, &tub);
    if (er)
        runner_tflops(&sr, run_r, &tpr, &tur);
    double speedup = ratio(run_b->seconds, run_a->seconds);
    double speedup_k = ratio(run_b->kernel_seconds, run_a->kernel_seconds);

    if (er)
        out_printf("compare %lld: %s and %s against %s on %s (n=%zu d=%zu) eps=%s\n",
                   (long long)cid, ea->name, eb->name, er->name, s->ds.name, n, s->ds.d, eps);
    else
        out_printf("compare %lld: %s against %s on %s (n=%zu d=%zu) eps=%s\n", (long long)cid,
                   ea->name, eb->name, s->ds.name, n, s->ds.d, eps);
    reuse_report(sides, &reused);
    if (er)
        snprintf(c, sizeof c, "%s (ref)", er->name);
    row3("", ea->name, eb->name, cc);
    snprintf(a, sizeof a, "%lld", (long long)ida);
    snprintf(b, sizeof b, "%lld", (long long)idb);
    if (er)
        snprintf(c, sizeof c, "%lld", (long long)idr);
    row3("run", a, b, cc);
    row3("precision", run_a->precision, run_b->precision, er ? run_r->precision : NULL);
    snprintf(a, sizeof a, "%llu", (unsigned long long)run_a->pairs);
    snprintf(b, sizeof b, "%llu", (unsigned long long)run_b->pairs);
    if (er)
        snprintf(c, sizeof c, "%llu", (unsigned long long)run_r->pairs);
    row3("pairs", a, b, cc);
    snprintf(a, sizeof a, "%.4f", engine_selectivity(run_a->pairs, n));
    snprintf(b, sizeof b, "%.4f", engine_selectivity(run_b->pairs, n));
    if (er)
        snprintf(c, sizeof c, "%.4f", engine_selectivity(run_r->pairs, n));
    row3("selectivity", a, b, cc);
    cell_time(a, sizeof a, run_a->seconds);
    cell_time(b, sizeof b, run_b->seconds);
    if (er)
        cell_time(c, sizeof c, run_r->seconds);
    row3("time", a, b, cc);
    /* Every phase any column has, in order of appearance. */
    const join_result *rs[3] = {run_a, run_b, run_r};
    const char *seen[3 * JOIN_MAX_PHASES];
    int nseen = 0;
    for (int side = 0; side < (er ? 3 : 2); side++)
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
            cell_time(a, sizeof a, phase_of(run_a, nm));
            cell_time(b, sizeof b, phase_of(run_b, nm));
            if (er)
                cell_time(c, sizeof c, phase_of(run_r, nm));
            row3(label, a, b, cc);
        }
    snprintf(a, sizeof a, "%.3f TFLOPS", tpa);
    snprintf(b, sizeof b, "%.3f TFLOPS", tpb);
    if (er)
        snprintf(c, sizeof c, "%.3f TFLOPS", tpr);
    row3("derived (padded d)", a, b, cc);
    if (er) {
        print_accuracy(side_a, &side_b, er->name);
        print_side("A", side_a, er->name);
        print_side("B", &side_b, er->name);
    } else {
        out_printf("  overlap %.6f (eq. 3 of the FASTED paper)\n", side_a->overlap);
        out_printf("  pairs both found %llu; only %s %llu; only %s %llu\n",
                   (unsigned long long)side_a->both, ea->name,
                   (unsigned long long)side_a->only_engine, eb->name,
                   (unsigned long long)side_a->only_ref);
        out_printf("  distance error %s - %s: mean %.4g, std %.4g, min %.4g, max %.4g\n", ea->name,
                   eb->name, side_a->err_mean, side_a->err_std, side_a->err_min, side_a->err_max);
        if (side_a->only_engine)
            out_printf("  only %s: largest |d-eps|/eps %.4g (FP64 distance)\n", ea->name,
                       side_a->only_engine_rel_max);
        if (side_a->only_ref)
            out_printf("  only %s: largest |d-eps|/eps %.4g (FP64 distance)\n", eb->name,
                       side_a->only_ref_rel_max);
        print_rel(ea->name, side_a->only_engine_rel);
        print_rel(eb->name, side_a->only_ref_rel);
        out_printf("  error histogram, %zu bin%s (bins holding pairs):\n", side_a->nbins,
                   side_a->nbins == 1 ? "" : "s");
        print_hist(side_a);
    }
    cell_speedup(a, sizeof a, speedup);
    out_printf("  speedup %s over %s: %s (end to end)\n", ea->name, eb->name, a);
    cell_speedup(a, sizeof a, speedup_k);
    out_printf("  speedup %s over %s: %s (kernel)\n", ea->name, eb->name, a);

    /* Each stored run is a result of its own (the dashboard's runs panel
     * and JSON readers see it like any run), then the comparison. */
    out_rec *rrec = out_rec_begin("run");
    runner_rec_fields(rrec, s, ea, &sa, run_a, ida);
    out_rec_end(rrec);
    rrec = out_rec_begin("run");
    runner_rec_fields(rrec, s, eb, &sb, run_b, idb);
    out_rec_end(rrec);
    if (er) {
        rrec = out_rec_begin("run");
        runner_rec_fields(rrec, s, er, &sr, run_r, idr);
        out_rec_end(rrec);
    }

    /* Sides a, b and ref in one shape; the accuracy of a side that is
     * the reference is null. */
    out_rec *rec = out_rec_begin("compare");
    out_rec_int(rec, "comparison_id", cid);
    out_rec_str(rec, "dataset", s->ds.name);
    out_rec_int(rec, "n", (int64_t)n);
    out_rec_int(rec, "d", (int64_t)s->ds.d);
    out_rec_dbl(rec, "eps", s->eps);
    rec_side(rec, "a", side_a, &sa, run_a, n);
    rec_side(rec, "b", &side_b, &sb, run_b, n);
    if (er)
        rec_side(rec, "ref", &side_r, &sr, run_r, n);
    else
        rec_side(rec, "ref", &side_r, &sb, run_b, n);
    out_rec_dbl(rec, "speedup", speedup);
    out_rec_dbl(rec, "speedup_kernel", speedup_k);
    out_rec_arr(rec, "reused_runs");
    for (int k = 0; k < REUSE_SIDES; k++)
        if (reused.found[k])
            out_rec_int(rec, NULL, reused.run[k].id);
    out_rec_close(rec);
    out_rec_end(rec);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

const cmd cmd_compare = {
    .name = "compare",
    .usage = "compare ENGINE_A ENGINE_B [fresh] [ref=ENGINE]",
    .summary = "run two engines side by side, each judged against the FP64 ground truth",
    .help = "Run both engines on the current dataset and eps and show them side by side:\n"
            "pairs, selectivity, time by phase, derived TFLOPS, and the accuracy of each\n"
            "against the ground truth: the overlap score (eq. 3 of the FASTED paper: mean\n"
            "over points of |N_E & N_ref| / |N_E | N_ref|), the distance error E - ref over\n"
            "pairs both found (mean, std, min, max, histogram), the pairs only one side\n"
            "found with their FP64 distance relative to eps; then the speedup of A over B\n"
            "(end to end and kernel). The ground truth is B itself when B is an exact FP64\n"
            "engine (cpu, fp64) and no ref= is given; else ref=ENGINE, by default fp64\n"
            "when it can run here, else cpu. Works block of rows by block of rows; memory\n"
            "does not grow with the pairs. The runs and the one comparison (with both\n"
            "sides' histogram bins) are stored.\n"
            "A stored COUNT run with the same dataset (content hash), eps, engine and\n"
            "options (the settings choosing the kernel variant) made on this host stands\n"
            "for an engine's timed run and is named as reused; fresh runs them again. The\n"
            "pair pass that judges accuracy always runs.\n"
            "Examples: compare cpu-fp16 cpu; compare fasted ted; compare fasted ted ref=cpu",
    .min_args = 2,
    .max_args = 4,
    .options = compare_options,
    .run = compare_run,
};
