/* ablate: FASTED's leave-one-out table (the paper's Table 5). By default at
 * the paper's setting (Synth: uniform data, |D| = 10^5, d = 4096, symmetric
 * off, COUNT), beside the paper's A100 figures: all optimizations on, then
 * each one off alone, then the pair the paper turns off together
 * (memcpy_async with the pipeline) when this build has that variant, then
 * the Hopper kernel; ranked against the paper's order. Each timed run
 * (count mode) is stored; a second run per variant streams its pairs into
 * an order-independent fingerprint to say whether the pair set equals the
 * all-on one. Without a GPU it prints the stored tables instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "paper_tables.h"
#include "runner.h"
#include "teach.h"

/* The paper's setting (Table 5). */
#define ABLATE_PAPER_N 100000
#define ABLATE_PAPER_D 4096

/* eps for generated uniform data: a tenth of the RMS distance
 * (E|a-b|^2 = d/6 on [0,1]^d), so the pair fingerprint streams about the
 * self-pairs only at any d; COUNT's kernel time barely depends on eps. */
static double ablate_default_eps(size_t d)
{
    return 0.1 * sqrt((double)d / 6.0);
}

/* Pair-set fingerprint: count and sum of a 64-bit mix of each (i, j). */
typedef struct ablate_fp {
    uint64_t k, sum;
} ablate_fp;

static uint64_t ablate_mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static int ablate_put(void *ctx, const pair_batch *b)
{
    ablate_fp *f = ctx;
    for (size_t t = 0; t < b->k; t++)
        f->sum += ablate_mix((uint64_t)b->i[t] << 32 | b->j[t]);
    f->k += b->k;
    return 0;
}

/* One row of the table: a name and the off bits it runs (src/fasted_opts.c). */
typedef struct ablate_row {
    const char *name;
    unsigned off;
} ablate_row;

/* The rows in order: mma.sync all-on (the base the switches act on), each
 * teaching switch, the paper's combination, the Hopper kernel. */
static int ablate_rows(ablate_row *rows, int max)
{
    int n = 0;
    const unsigned wgmma = teach_off_bits("wgmma");
    rows[n++] = (ablate_row){"mma.sync", wgmma};
    for (const fasted_switch *w = fasted_switches; w->name && n < max - 2; w++)
        if (w->bit != wgmma)
            rows[n++] = (ablate_row){w->name, w->bit};
    rows[n++] = (ablate_row){"async-copy+pipeline", teach_off_bits("async-copy+pipeline")};
    rows[n++] = (ablate_row){"wgmma (on)", 0};
    return n;
}

static void ablate_paper_cells(const char *name, char *pt, char *ps, size_t z)
{
    const paper_t5_row *p = name ? paper_t5_find(name) : NULL;
    double tfl = !name ? PAPER_T5_ALL_ON : p ? p->tflops : 0;
    snprintf(pt, z, "—");
    snprintf(ps, z, "—");
    if (tfl > 0) {
        snprintf(pt, z, "%.1f", tfl);
        snprintf(ps, z, "%.2fx", PAPER_T5_ALL_ON / tfl);
    }
}

static int ablate_run(session *s, int argc, char **argv)
{
    char *pos[2];
    int np = cmd_positional(argc, argv, pos, 2);
    int current = np == 1 && strcmp(pos[0], "current") == 0;
    int stored = np == 1 && strcmp(pos[0], "stored") == 0;
    if (np > 1 || (np == 1 && !current && !stored))
        return err_set(TCJ_EINVAL, "Usage: %s", cmd_find("ablate")->usage);
    size_t n = ABLATE_PAPER_N, d = ABLATE_PAPER_D;
    const char *v;
    int rc;
    if ((v = cmd_opt(argc, argv, "n")) && (rc = cmd_parse_size(v, "n", &n)))
        return rc;
    if ((v = cmd_opt(argc, argv, "d")) && (rc = cmd_parse_size(v, "d", &d)))
        return rc;
    double eps = ablate_default_eps(d);
    if ((v = cmd_opt(argc, argv, "eps")) && (rc = cmd_parse_double(v, "eps", &eps)))
        return rc;
    if (n < 2 || d < 1 || !(eps >= 0))
        return err_set(TCJ_EINVAL, "ablate: need n >= 2, d >= 1 and eps >= 0");

    const engine *e = engine_find("fasted");
    if (stored) {
        teach_print_stored_t5(&teach_bench_doc, "ablate stored");
        return 0;
    }
    if (!e || engine_available(e, &s->eopt)) {
        char why[256];
        snprintf(why, sizeof why, "%s", e ? err_msg() : "this build has no fasted engine");
        err_clear();
        teach_print_stored_t5(&teach_bench_doc, why);
        return 0;
    }
    if (!current && (rc = cmd_gen_current(s, "uniform", n, d)))
        return rc == TCJ_ECANCEL ? err_cancelled("ablate") : rc;

    join_spec spec;
    runner_progress pg;
    const double keep_eps = s->eps;
    const int keep_have = s->have_eps;
    if (!current) {
        s->eps = eps;
        s->have_eps = 1;
    }
    rc = runner_spec(s, e, &spec, &pg);
    s->eps = keep_eps;
    s->have_eps = keep_have;
    if (rc)
        return rc;
    engine_opts eo = s->eopt;
    if (!current)
        eo.symmetric = 0;
    out_printf("ablate: %s n=%zu d=%zu eps=%g, symmetric %s, COUNT%s\n", s->ds.name, s->ds.n,
               s->ds.d, spec.eps, eo.symmetric ? "on" : "off",
               current ? ""
               : n == ABLATE_PAPER_N && d == ABLATE_PAPER_D
                   ? " (the paper's setting: Synth, |D|=1e5, d=4096)"
                   : " (the paper's setting at another shape; it has |D|=1e5, d=4096)");
    out_printf("%-20s %10s %9s %9s %8s %8s %12s %s\n", "switch off", "kernel ms", "TFLOPS",
               "slowdown", "paper", "paper", "pairs", "same pairs");
    out_printf("%-20s %10s %9s %9s %8s %8s\n", "", "", "", "", "TFLOPS", "slowdwn");
    out_rec *rec = out_rec_begin("ablate");
    out_rec_bool(rec, "paper_setting", !current);
    out_rec_arr(rec, "rows");
    double base = 0;
    ablate_fp ref = {0, 0};
    ablate_row rows[16];
    int nrows = ablate_rows(rows, 16);
    const char *rank_names[16];
    double rank_slow[16];
    int nrank = 0;
    for (int k = 0; k < nrows; k++) {
        const ablate_row *row = &rows[k];
        const int wg = row->off == 0;
        const char *label = k == 0 ? "(all on, mma.sync)" : row->name;
        char pt[16], ps[16];
        ablate_paper_cells(k == 0 ? NULL : row->name, pt, ps, sizeof pt);
        if (!wg && !teach_variant_compiled(kern_fasted_variant_name(row->off))) {
            char c[5][32];
            out_printf("%-20s %s %s %s %s %s  not compiled in this build\n", label,
                       teach_cell(c[0], 32, "—", 10), teach_cell(c[1], 32, "—", 9),
                       teach_cell(c[2], 32, "—", 9), teach_cell(c[3], 32, pt, 8),
                       teach_cell(c[4], 32, ps, 8));
            out_rec_obj(rec, NULL);
            out_rec_str(rec, "variant", row->name);
            out_rec_bool(rec, "compiled", 0);
            out_rec_close(rec);
            continue;
        }
        session tmp = *s;
        tmp.eopt = eo;
        tmp.eopt.fasted_off = row->off;
        join_spec sp = spec;
        sp.opts = &tmp.eopt;
        sp.mode = JOIN_COUNT;
        join_result res;
        rc = engine_run(e, &sp, &res);
        int64_t id = runner_store(&tmp, e, &sp, &res, rc, rc ? err_msg() : NULL);
        if (rc)
            break;
        ablate_fp fp = {0, 0};
        join_spec pp = sp;
        pp.mode = JOIN_PAIRS;
        pp.sink.put = ablate_put;
        pp.sink.ctx = &fp;
        join_result pres;
        if ((rc = engine_run(e, &pp, &pres)))
            break;
        double tfl, unp;
        runner_tflops(&sp, &res, &tfl, &unp);
        if (k == 0) {
            base = res.kernel_seconds;
            ref = fp;
        }
        int same = fp.k == ref.k && fp.sum == ref.sum;
        double slow = base > 0 ? res.kernel_seconds / base : 0;
        if (k > 0 && !wg && nrank < 16) {
            rank_names[nrank] = row->name;
            rank_slow[nrank++] = slow;
        }
        /* wgmma sums in another FP32 order: pairs within rounding of eps
         * may differ (tests/gpu/g_fasted.c bounds them). */
        out_printf("%-20s %10.3f %9.1f %8.2fx %8s %8s %12llu %s\n", label, res.kernel_seconds * 1e3,
                   tfl, slow, wg ? "" : pt, wg ? "" : ps, (unsigned long long)res.pairs,
                   same ? "yes"
                   : wg ? "no (fp32 order)"
                        : "NO");
        out_rec_obj(rec, NULL);
        out_rec_str(rec, "variant", k == 0 ? "mma.sync" : row->name);
        out_rec_bool(rec, "compiled", 1);
        out_rec_int(rec, "run_id", id);
        out_rec_dbl(rec, "kernel_s", res.kernel_seconds);
        out_rec_dbl(rec, "tflops", tfl);
        out_rec_dbl(rec, "slowdown", slow);
        const paper_t5_row *p = k == 0 ? NULL : paper_t5_find(row->name);
        double ptf = k == 0 ? PAPER_T5_ALL_ON : p ? p->tflops : 0;
        if (!wg && ptf > 0) {
            out_rec_dbl(rec, "paper_tflops", ptf);
            out_rec_dbl(rec, "paper_slowdown", PAPER_T5_ALL_ON / ptf);
        }
        out_rec_int(rec, "pairs", (int64_t)res.pairs);
        out_rec_bool(rec, "same_pairs", same);
        out_rec_close(rec);
        if (s->cancel)
            break;
    }
    out_rec_close(rec);
    out_rec_end(rec);
    if (rc == TCJ_ECANCEL || (rc == 0 && s->cancel))
        rc = err_cancelled_note(s->db ? ERR_NOTE_KEPT : NULL, "ablate");
    if (rc == 0) {
        teach_print_ranking(rank_names, rank_slow, nrank, "measured here");
        out_printf("Compare slowdowns, not TFLOPS: the paper ran an A100 (1.41 GHz boost, 164 KB\n"
                   "shared memory per SM); here the mma.sync kernel runs at this GPU's clocks and\n"
                   "shared memory, and on Hopper the all-on default is the wgmma kernel above.\n");
    }
    return rc;
}

static const char *const ablate_options[] = {"n", "d", "eps", NULL};
static const char *const ablate_current_options[] = {"eps", NULL};
static const cmd_form ablate_forms[] = {
    {"current", ablate_current_options},
    {"stored", NULL},
    {NULL, ablate_options},
};

const cmd cmd_ablate = {
    .name = "ablate",
    .usage = "ablate [current|stored] [n=N] [d=D] [eps=E]",
    .summary = "FASTED leave-one-out table (the paper's Table 5): each optimization off alone",
    .help = "Run fasted at the paper's setting (Synth: uniform data, |D| = 100000,\n"
            "d = 4096, symmetric off, COUNT; the generated dataset becomes the current\n"
            "one) with the mma.sync kernel and every optimization on, then with each one\n"
            "off alone (explain lists them), then memcpy_async and the pipeline off\n"
            "together as the paper does (\"not compiled in this build\" when the kernels\n"
            "lack that variant), then the Hopper wgmma kernel. Prints kernel time, derived\n"
            "TFLOPS (2*nq*n*d_padded / kernel time), the slowdown against the first row,\n"
            "the paper's A100 TFLOPS and slowdown, whether the pair set equals the first\n"
            "row's (a second, streamed run per variant), and the switches ranked by\n"
            "slowdown beside the paper's rank with the likely cause where they differ.\n"
            "Each timed run is stored in the session log.\n"
            "  n=N d=D    another shape of generated uniform data\n"
            "  eps=E      the join radius (default 0.1*sqrt(d/6), a tenth of the RMS distance:\n"
            "             few pairs beyond the self-pairs at large d; COUNT time barely\n"
            "             depends on it)\n"
            "  current    the current dataset, eps and symmetric setting instead\n"
            "  stored     print the stored tables (the paper's, docs/BENCHMARKS.md's)\n"
            "Without a GPU, ablate prints the stored tables, marked as not measured here.",
    .min_args = 0,
    .max_args = 4,
    .options = ablate_options,
    .forms = ablate_forms,
    .run = ablate_run,
};
