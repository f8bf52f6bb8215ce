/* run [ENGINE] [...]: one join on the current dataset and eps, stored in
 * the log whether it succeeds or not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "mem.h"
#include "out.h"
#include "par.h"
#include "perpoint.h"
#include "perpoint_out.h"
#include "runner.h"
#include "settings.h"
#include "ofile.h"
#include "sink.h"
#include "store.h"

/* Per-point counts to a text file, one count per query row. */
static int write_counts(ofile *of, const uint64_t *c, size_t k)
{
    FILE *f = ofile_stream(of);
    if (!f) {
        ofile_abort(of);
        return TCJ_EIO;
    }
    for (size_t i = 0; i < k; i++)
        fprintf(f, "%llu\n", (unsigned long long)c[i]);
    return ofile_commit(of);
}

/* The summary's members in the run record. */
static void pp_rec(out_rec *r, void *ctx)
{
    perpoint_json(out_rec_json(r), ctx);
}

static int run_run(session *s, int argc, char **argv)
{
    int force = cmd_take_flag(&argc, argv, "force");
    const char *log_path = s->db ? store_path(s->db) : NULL;
    char *pos[2];
    int np = cmd_positional(argc, argv, pos, 2);
    if (np > 1)
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("run")->usage);
    const engine *e;
    int rc;
    if (np == 1) {
        if ((rc = runner_find_engine(pos[0], &e)))
            return rc;
    } else {
        e = runner_default_engine(&s->eopt);
    }

    /* Options override the settings for this run only. */
    session tmp = *s;
    const char *v;
    if ((v = cmd_opt(argc, argv, "mode")) && (rc = setting_find("mode")->set(&tmp, (char **)&v)))
        return rc;
    if ((v = cmd_opt(argc, argv, "out")) && (rc = setting_find("out")->set(&tmp, (char **)&v)))
        return rc;
    if ((v = cmd_opt(argc, argv, "format")) &&
        (rc = setting_find("format")->set(&tmp, (char **)&v)))
        return rc;

    uint64_t minpts = 0;
    if ((v = cmd_opt(argc, argv, "minpts"))) {
        size_t m;
        if ((rc = cmd_parse_count(v, "minpts (it counts the point itself)", 1, SIZE_MAX, &m)))
            return rc;
        minpts = m;
        /* minpts asks for per-point counts; an explicit other mode is a
         * contradiction. */
        if (!cmd_opt(argc, argv, "mode"))
            tmp.mode = JOIN_PERPOINT;
        else if (tmp.mode != JOIN_PERPOINT)
            return err_set(TCJ_EINVAL, "minpts= needs mode=perpoint");
    }

    /* A count writes no file: out= on the line would be dropped without a
     * word. (A standing `set out` is for the modes that write.) */
    if (cmd_opt(argc, argv, "out") && tmp.mode == JOIN_COUNT)
        return err_set(TCJ_EINVAL, "out= needs mode=pairs or mode=perpoint (count mode writes "
                                   "no file)");

    join_spec spec;
    runner_progress pg;
    if ((rc = runner_spec(s, e, &spec, &pg)))
        return rc;
    if ((v = cmd_opt(argc, argv, "rows")) && (rc = runner_rows(v, s->ds.n, &spec)))
        return rc;
    spec.mode = tmp.mode;
    if (spec.mode == JOIN_PAIRS && !tmp.out_path[0])
        return err_set(TCJ_EINVAL, "mode pairs needs a file: out=FILE (or set out FILE)");

    size_t nq = spec.q1 - spec.q0;
    uint64_t *counts = NULL;
    sink_file *fs = NULL;
    ofile *cf = NULL;
    /* The counts file is checked before the run, not after it. */
    if (spec.mode == JOIN_PERPOINT && tmp.out_path[0] &&
        (rc = ofile_open(tmp.out_path, force, log_path, &cf)))
        return rc == TCJ_ECANCEL ? err_cancelled("run %s", e->name) : rc; /* a FIFO's wait */
    if (spec.mode == JOIN_PERPOINT) { /* zeroed, its pages faulted in on every core */
        spec.counts = counts =
            mem_alloc("run", "the per-point counts", nq ? nq : 1, sizeof *counts, 0);
        if (!counts) {
            ofile_abort(cf);
            return TCJ_ENOMEM;
        }
        par_zero(counts, (nq ? nq : 1) * sizeof *counts);
    }
    if (spec.mode == JOIN_PAIRS) {
        /* bin32/bin64 are the settings' names for the sink's u32/u64. */
        sink_format fmt = !strcmp(tmp.out_format, "csv")     ? SINK_CSV
                          : !strcmp(tmp.out_format, "bin64") ? SINK_U64
                                                             : SINK_U32;
        if ((rc = sink_file_open(tmp.out_path, fmt, force, log_path, &fs)))
            return rc == TCJ_ECANCEL ? err_cancelled("run %s", e->name) : rc;
        spec.sink = sink_file_pair_sink(fs);
    }

    join_result res;
    rc = engine_run(e, &spec, &res);
    if (fs) {
        int rc2 = sink_file_close(fs, rc == 0);
        if (!rc)
            rc = rc2;
    }
    if (cf && !rc)
        rc = write_counts(cf, counts, nq);
    else if (cf)
        ofile_abort(cf);
    if (rc) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", err_msg());
        int64_t id = runner_store(s, e, &spec, &res, rc, msg);
        if (id)
            s->last_run_id = id;
        free(counts);
        if (rc == TCJ_ECANCEL)
            return err_cancelled("run %s", e->name);
        return err_set(rc, "%s", msg);
    }
    int64_t id = runner_store(s, e, &spec, &res, 0, NULL);
    if (id)
        s->last_run_id = id;
    session_put(s, "pairs", &res.pairs, SESSION_U64, 1);
    perpoint_summary *pp = NULL;
    if (counts) {
        session_put(s, "counts", counts, SESSION_U64, nq);
        pp = xmalloc(sizeof *pp);
        rc = perpoint_summarize(counts, nq, minpts, pp);
        free(counts);
        if (rc) {
            free(pp);
            return rc;
        }
        if (s->db && id > 0 && (rc = store_perpoint(s->db, id, pp))) {
            free(pp);
            return rc;
        }
    }
    runner_report_ext(s, e, &spec, &res, id, pp ? pp_rec : NULL, pp);
    if (pp)
        perpoint_print(pp);
    free(pp);
    if (tmp.out_path[0] && spec.mode != JOIN_COUNT)
        out_printf("  written to %s\n", tmp.out_path);
    if (s->ui && s->ui->refresh)
        s->ui->refresh(s->ui_ctx);
    return 0;
}

static const char *const run_options[] = {"mode", "out", "format", "rows", "minpts", NULL};

const cmd cmd_run = {
    .name = "run",
    .usage = "run [ENGINE] [mode=count|perpoint|pairs] [out=FILE] [format=bin32|bin64|csv] "
             "[rows=Q0:Q1] [minpts=M] [force]",
    .summary = "join the current dataset at the current eps",
    .help = "Run one engine (default: fasted when a GPU is present, else cpu) over the\n"
            "current dataset and eps, store the run in the session log and print the pair\n"
            "count, the selectivity (pairs - nq)/nq, the time of each phase and the derived\n"
            "TFLOPS (2*nq*n*d_padded / kernel time; the unpadded figure uses d); where an\n"
            "index pruned, the pairs examined and pairs/s instead.\n"
            "  mode=count       only the number of pairs (default: set mode)\n"
            "  mode=perpoint    neighbours of each point: min, p10, median, p90, max (self\n"
            "                   excluded, nearest rank) and a histogram, stored with the run;\n"
            "                   with out=FILE also one count (self included) per line\n"
            "  minpts=M         (implies mode=perpoint) core points: those with at least M\n"
            "                   neighbours counting themselves, as DBSCAN's minPts and\n"
            "                   scikit-learn's min_samples count; the rest are noise candidates\n"
            "                   (noise or border points)\n"
            "  mode=pairs       every pair to out=FILE, streamed in batches\n"
            "  format=F         pair file: bin32 or bin64 (binary i, j pairs) or csv (i,j,dist)\n"
            "  rows=Q0:Q1       query rows Q0 to Q1-1 only (candidates are all rows)\n"
            "  force            replace an existing out= file (never the session log)\n"
            "out= in count mode is refused: a count writes no file.\n"
            "Ctrl-C stops a run within a second; a failed run is stored with its error.\n"
            "help engines lists the engines.",
    .min_args = 0,
    .max_args = 6,
    .options = run_options,
    .run = run_run,
};
