/* precisions [FORMAT...] [cpu] [ref=ENGINE] [min-overlap=X]: the precision
 * lab (src/lab.h) on the current dataset and eps. This file parses, stores
 * each run, comparison and lab row as it finishes, and prints through
 * src/lab_out.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "dbscan.h"
#include "dbscan_out.h"
#include "err.h"
#include "lab.h"
#include "lab_out.h"
#include "out.h"
#include "reuse.h"
#include "runner.h"
#include "store.h"

/* What the lab's callbacks need to store as the lab goes. */
typedef struct lab_ctx {
    session *s;
    const engine *ref;
    join_spec spec;   /* the session's dataset and eps, all rows, count mode */
    reuse_run *rr;    /* scratch for reuse_find */
    char reused[400]; /* "fp16 run 12, bf16 run 13": the formats' stored runs reused */
} lab_ctx;

/* A format's run that compare or run just made (same data, eps and
 * settings) stands for its timed run, as the reference's does. */
static int on_reuse(void *vctx, const engine *e, join_result *out, int64_t *id)
{
    lab_ctx *c = vctx;
    int rc = reuse_find(c->s, e, c->rr);
    if (rc != 1)
        return rc;
    *out = c->rr->res;
    *id = c->rr->id;
    size_t len = strlen(c->reused);
    if (len < sizeof c->reused)
        snprintf(c->reused + len, sizeof c->reused - len, "%s%s run %lld", len ? ", " : "",
                 e->lab ? e->lab : e->name, (long long)c->rr->id);
    return 1;
}

static int on_ref(void *vctx, lab_result *r, const join_result *res)
{
    lab_ctx *c = vctx;
    session *s = c->s;
    if (r->ref_run_id <= 0) /* else a stored run stands for it */
        r->ref_run_id = runner_store(s, c->ref, &c->spec, res, 0, NULL);
    if (!s->db)
        return 0;
    store_lab_rec lr = {.session_id = s->session_id,
                        .command_id = s->command_id,
                        .dataset_id = s->dataset_id,
                        .run_ref = r->ref_run_id,
                        .eps = r->eps,
                        .min_overlap = r->min_overlap,
                        .ref_engine = r->ref_engine,
                        .baseline = r->baseline};
    int64_t id = store_lab_begin(s->db, &lr);
    if (id < 0)
        cmd_store_failed();
    r->lab_id = id > 0 ? id : 0;
    return 0;
}

/* The format's run as it finishes (failed runs too, with their error). */
static int on_run(void *vctx, lab_result *r, lab_row *row, const engine *e, const join_result *run,
                  int run_rc)
{
    lab_ctx *c = vctx;
    session *s = c->s;
    row->run_id = runner_store(s, e, &c->spec, run, run_rc, run_rc ? row->reason : NULL);
    if (row->run_id)
        s->last_run_id = row->run_id;
    return 0;
}

/* The row is final: its comparison with the reference as side b, then
 * the lab row pointing at its run and comparison. */
static int on_row(void *vctx, lab_result *r, lab_row *row, const engine *e, const cmp_result *cmp)
{
    lab_ctx *c = vctx;
    session *s = c->s;
    if (cmp && s->db) {
        cmp_side a = cmp->side, b;
        a.run_id = row->run_id;
        cmp_side_ref(&b, r->ref_engine, r->ref_run_id);
        store_cmp_rec cr = {
            .session_id = s->session_id, .eps = r->eps, .run_ref = 0, .side = {&a, &b}};
        int64_t cid = store_comparison(s->db, &cr);
        if (cid < 0)
            cmd_store_failed();
        row->comparison_id = cid > 0 ? cid : 0;
    }
    if (s->db && r->lab_id > 0 && store_lab_row(s->db, r->lab_id, (int)(row - r->row), row))
        cmd_store_failed();
    return 0;
}

static void on_progress(void *vctx, double frac, const char *what)
{
    session *s = ((lab_ctx *)vctx)->s;
    if (!s->ui)
        return;
    if (s->ui->progress)
        s->ui->progress(s->ui_ctx, what, frac);
    if (s->ui->poll)
        s->ui->poll(s->ui_ctx);
}

/* dbscan=M: each format that ran, clustered at eps with minPts M on its
 * own eps-graph, against the reference's clustering (src/cluster/dbscan.h):
 * adjusted Rand index, changed labels, noise and core points gained and
 * lost. Each clustering is stored (dbscans) like a `dbscan` run. */
static int cluster_one(session *s, const engine *e, size_t minpts, int32_t *lab, uint8_t *core,
                       dbscan_result *res)
{
    dbscan_spec sp = {.ds = &s->ds,
                      .eps = s->eps,
                      .minpts = minpts,
                      .opts = &s->eopt,
                      .labels = lab,
                      .core = core,
                      .cancel = &s->cancel};
    int rc = dbscan_run(e, &sp, res);
    if (rc)
        return rc;
    dbscan_view v = {.engine = e->name,
                     .precision = res->precision,
                     .dataset = s->ds.name,
                     .d = s->ds.d,
                     .eps = s->eps,
                     .minpts = minpts,
                     .res = res};
    runner_store_dbscan(s, e, &v);
    return 0;
}

static int lab_clusterings(session *s, const lab_result *r, const engine *ref, size_t minpts)
{
    size_t n = s->ds.n;
    if (minpts < 1 || minpts > n)
        return err_set(TCJ_EINVAL, "precisions: dbscan= must be 1 to n = %zu, got %zu", n, minpts);
    int32_t *lref = xmalloc(n * sizeof *lref), *lab = xmalloc(n * sizeof *lab);
    uint8_t *cref = xmalloc(n), *core = xmalloc(n);
    dbscan_result *res = xmalloc(sizeof *res);
    int rc = cluster_one(s, ref, minpts, lref, cref, res);
    if (!rc)
        out_printf("  DBSCAN at eps, minpts %zu, against %s's clustering (%zu clusters, %zu "
                   "noise):\n  %-10s %-14s %9s %9s %9s %8s %8s %8s %8s\n",
                   minpts, ref->name, res->clusters, res->noise, "format", "engine", "ARI",
                   "clusters", "changed", "noise+", "noise-", "core+", "core-");
    for (size_t k = 0; k < (size_t)r->nrow && !rc; k++) {
        const lab_row *row = &r->row[k];
        const engine *e = row->status == LAB_OK ? engine_find(row->engine) : NULL;
        if (!e)
            continue;
        if ((rc = cluster_one(s, e, minpts, lab, core, res)))
            break;
        dbscan_cmp c;
        dbscan_compare(lref, cref, lab, core, n, &c);
        out_printf("  %-10s %-14s %9.6f %9zu %9zu %8zu %8zu %8zu %8zu\n", row->format, e->name,
                   c.ari, res->clusters, c.changed, c.noise_gained, c.noise_lost, c.core_gained,
                   c.core_lost);
        out_rec *o = out_rec_begin("lab_dbscan");
        out_rec_int(o, "lab_id", r->lab_id);
        out_rec_str(o, "format", row->format);
        out_rec_str(o, "engine", e->name);
        out_rec_str(o, "ref_engine", ref->name);
        out_rec_dbl(o, "eps", s->eps);
        out_rec_int(o, "minpts", (int64_t)minpts);
        out_rec_int(o, "clusters", (int64_t)res->clusters);
        out_rec_dbl(o, "ari", c.ari);
        out_rec_int(o, "changed", (int64_t)c.changed);
        out_rec_int(o, "noise_gained", (int64_t)c.noise_gained);
        out_rec_int(o, "noise_lost", (int64_t)c.noise_lost);
        out_rec_int(o, "core_gained", (int64_t)c.core_gained);
        out_rec_int(o, "core_lost", (int64_t)c.core_lost);
        out_rec_end(o);
    }
    if (rc == TCJ_ECANCEL)
        err_cancelled("precisions dbscan=%zu", minpts);
    free(lref);
    free(lab);
    free(cref);
    free(core);
    free(res);
    return rc;
}

static const char *const precisions_options[] = {"min-overlap", "ref", "dbscan", NULL};

static int precisions_run(session *s, int argc, char **argv)
{
    int cpu_only = cmd_take_flag(&argc, argv, "cpu");
    int fresh = cmd_take_flag(&argc, argv, "fresh");
    char *pos[LAB_MAX_FORMATS + 1];
    int np = cmd_positional(argc, argv, pos, LAB_MAX_FORMATS + 1);
    if (np > LAB_MAX_FORMATS)
        return err_set(TCJ_EINVAL, "precisions: at most %d formats at once", LAB_MAX_FORMATS);
    double min_overlap = LAB_DEFAULT_MIN_OVERLAP;
    const char *mo = cmd_opt(argc, argv, "min-overlap");
    int rc;
    if (mo && (rc = cmd_parse_double(mo, "min-overlap", &min_overlap)))
        return rc;
    if (!(min_overlap >= 0 && min_overlap <= 1))
        return err_set(TCJ_EINVAL, "min-overlap: expected a number from 0 to 1, got '%s'", mo);
    size_t dbscan_minpts = 0;
    const char *dm = cmd_opt(argc, argv, "dbscan");
    if (dm && (rc = cmd_parse_size(dm, "precisions: dbscan", &dbscan_minpts)))
        return rc;
    if (dm && !s->have_ds)
        return err_set(TCJ_EINVAL, "no dataset loaded (use load or gen)");
    if (dm && (dbscan_minpts < 1 || dbscan_minpts > s->ds.n))
        return err_set(TCJ_EINVAL, "precisions: dbscan= (minPts) must be 1 to n = %zu, got '%s'",
                       s->ds.n, dm);
    const char *refname = cmd_opt(argc, argv, "ref");
    lab_ctx ctx = {.s = s};
    if (refname) {
        if ((rc = runner_find_engine(refname, &ctx.ref)))
            return rc;
    } else if (!(ctx.ref = lab_reference(&s->eopt, cpu_only))) {
        return err_set(TCJ_EINVAL, "precisions: no exact engine can run here to judge against");
    }
    if ((rc = engine_available(ctx.ref, &s->eopt)))
        return rc;
    runner_progress pg;
    if ((rc = runner_spec(s, ctx.ref, &ctx.spec, &pg)))
        return rc;
    lab_pick rows[LAB_MAX_FORMATS];
    size_t nrows;
    if ((rc = lab_pick_rows(&s->eopt, (const char *const *)pos, (size_t)np, cpu_only, rows,
                            LAB_MAX_FORMATS, &nrows)))
        return rc;

    lab_spec ls = {.ds = &s->ds,
                   .eps = s->eps,
                   .opts = &s->eopt,
                   .ref = ctx.ref,
                   .rows = rows,
                   .nrows = nrows,
                   .min_overlap = min_overlap,
                   .cancel = &s->cancel,
                   .progress = on_progress,
                   .progress_ctx = &ctx,
                   .on_ref = on_ref,
                   .on_run = on_run,
                   .on_row = on_row,
                   .ctx = &ctx};
    /* The reference's run that compare (or run) just made stands for its
     * timed run, as in compare; fresh runs it again. */
    reuse_run *rr = xcalloc(1, sizeof *rr);
    if (!fresh && reuse_find(s, ctx.ref, rr) == 1) {
        ls.ref_reused = &rr->res;
        ls.ref_reused_id = rr->id;
        out_printf("reference: run %lld of %s (%s) reused; precisions ... fresh runs it again\n",
                   (long long)rr->id, ctx.ref->name, rr->at);
    }
    if (!fresh) {
        ctx.rr = xcalloc(1, sizeof *ctx.rr);
        ls.reuse = on_reuse;
    }
    lab_result *r = xmalloc(sizeof *r);
    rc = lab_run(&ls, r);
    if (ctx.reused[0])
        out_printf("formats: %s reused (same data, eps and options); precisions ... fresh times "
                   "them again\n",
                   ctx.reused);
    free(ctx.rr);
    free(rr);
    if (rc == TCJ_ECANCEL) /* a stopped lab keeps the rows it finished (store_lab_end) */
        err_cancelled_note(s->db && r->lab_id > 0 ? ERR_NOTE_KEPT : NULL, "precisions");
    if (s->db && r->lab_id > 0) {
        /* A lab that stopped keeps the rows it made; the note says why. */
        char note[300];
        snprintf(note, sizeof note, "%s", err_msg());
        if (store_lab_end(s->db, r->lab_id, !rc && r->chosen >= 0 ? r->row[r->chosen].format : NULL,
                          rc ? note : NULL))
            cmd_store_failed();
        if (rc)
            err_set(rc, "%s", note);
    }
    if (!rc) {
        lab_print(r);
        lab_records(r);
        if (dm)
            rc = lab_clusterings(s, r, ctx.ref, dbscan_minpts);
    }
    free(r);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return rc;
}

const cmd cmd_precisions = {
    .name = "precisions",
    .usage = "precisions [FORMAT...] [cpu] [fresh] [min-overlap=X] [ref=ENGINE] [dbscan=M]",
    .summary = "the precision lab: every number format on this data and eps, against the truth",
    .help = "Run every number format of the engine table (fp16, bf16, tf32, the 8-bit\n"
            "formats: whatever the table holds) on the current dataset and eps: its GPU engine\n"
            "where one can run here, else its CPU emulation (cpu: the emulations even on\n"
            "a GPU). Each is judged against the ground truth (ref=ENGINE; default exact on\n"
            "a GPU, else cpu), whose timed run is made once. A stored run of the reference or\n"
            "of a format on the same data, eps and settings (compare or run just made it)\n"
            "stands for its timed run; fresh times them all again. One table: format, bits per\n"
            "value, the engine, its run and comparison, the transforms the run applied\n"
            "(centred, a power-of-two scale, shifted, values that underflowed, inexact),\n"
            "pairs, overlap (eq. 3 of the FASTED paper), pairs only the format and only the\n"
            "reference found, the distance error relative to eps (mean, std, largest\n"
            "|err|), kernel time, derived TFLOPS and the speed against fp16. A format that\n"
            "refuses the data (ue5m3 and ue4m4 hold no sign) is a row saying why, and the\n"
            "lab goes on. Last, one sentence names the fastest format whose overlap is at\n"
            "least min-overlap=X (default 0.9999), or the closest when none is; the two\n"
            "fastest that reach it are timed 3 times each, and a timing: line says whether\n"
            "they are within timing noise. A line says where the lab's time went. The reference's "
            "pairs are made once per block\n"
            "of rows for all the formats together.\n"
            "FORMAT... runs those formats only. Every run, comparison and the lab are\n"
            "stored: show lab ID prints it again, export lab ID csv|json FILE writes it.\n"
            "dbscan=M also clusters with DBSCAN (minPts M, see dbscan) on the reference's\n"
            "and each format's own eps-graph and prints each format's adjusted Rand index\n"
            "against the reference's clustering, the labels that change, and noise and\n"
            "core points gained and lost (three more joins per format).\n"
            "Examples: precisions; precisions fp16 ue4m4 min-overlap=0.999; precisions cpu",
    .min_args = 0,
    .max_args = -1,
    .options = precisions_options,
    .run = precisions_run,
};
