/* ablate: FASTED's leave-one-out table (the paper's Table 5) on the current
 * dataset, eps and GPU: all optimizations on, then each one off alone. Each
 * timed run (count mode) is stored; a second run per variant streams its
 * pairs into an order-independent fingerprint to say whether the pair set
 * equals the all-on one. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "err.h"
#include "fasted_opts.h"
#include "kernels.h"
#include "out.h"
#include "runner.h"

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

static int ablate_run(session *s, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const engine *e = engine_find("fasted");
    if (!e)
        return err_set(TCJ_EUNSUP, "this build has no fasted engine");
    join_spec spec;
    runner_progress pg;
    int rc = runner_spec(s, e, &spec, &pg);
    if (rc)
        return rc;
    if ((rc = engine_available(e)))
        return rc;
    out_printf("%-14s %10s %9s %9s %12s %s\n", "variant", "kernel ms", "TFLOPS", "slowdown",
               "pairs", "same pairs");
    out_rec *rec = out_rec_begin("ablate");
    out_rec_arr(rec, "rows");
    double base = 0;
    ablate_fp ref = {0, 0};
    /* row 0: the mma.sync kernel with every switch on (the paper's design,
     * which the teaching switches act on); then each switch off alone,
     * except that the wgmma row turns the Hopper kernel on (all on). */
    for (int k = -1; k < 0 || fasted_switches[k].name; k++) {
        session tmp = *s;
        const int wg = k >= 0 && fasted_switches[k].bit == FASTED_OFF_WGMMA;
        tmp.eopt.fasted_off = k < 0 ? FASTED_OFF_WGMMA : wg ? 0 : fasted_switches[k].bit;
        const char *name = k < 0 ? "mma.sync" : wg ? "wgmma (on)" : fasted_switches[k].name;
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
        if (k < 0) {
            base = res.kernel_seconds;
            ref = fp;
        }
        int same = fp.k == ref.k && fp.sum == ref.sum;
        double slow = base > 0 ? res.kernel_seconds / base : 0;
        /* wgmma sums in another FP32 order: pairs within rounding of eps
         * may differ (tests/gpu/g_fasted.c bounds them). */
        out_printf("%-14s %10.3f %9.1f %8.2fx %12llu %s\n", name, res.kernel_seconds * 1e3, tfl,
                   slow, (unsigned long long)res.pairs,
                   same ? "yes"
                   : wg ? "no (fp32 order)"
                        : "NO");
        out_rec_obj(rec, NULL);
        out_rec_str(rec, "variant", name);
        out_rec_int(rec, "run_id", id);
        out_rec_dbl(rec, "kernel_seconds", res.kernel_seconds);
        out_rec_dbl(rec, "tflops", tfl);
        out_rec_dbl(rec, "slowdown", slow);
        out_rec_int(rec, "pairs", (int64_t)res.pairs);
        out_rec_bool(rec, "same_pairs", same);
        out_rec_close(rec);
        if (s->cancel)
            break;
    }
    out_rec_close(rec);
    out_rec_end(rec);
    if (rc == 0 && s->cancel)
        rc = err_set(TCJ_ECANCEL, "ablate cancelled");
    return rc;
}

const cmd cmd_ablate = {
    .name = "ablate",
    .usage = "ablate",
    .summary = "FASTED leave-one-out table: each optimization off alone",
    .help = "Run fasted on the current dataset and eps with the mma.sync kernel and every\n"
            "optimization on, then with each one off alone (explain lists them), then the\n"
            "Hopper wgmma kernel, and print kernel time, derived TFLOPS (2*nq*n*d_padded /\n"
            "kernel time), the slowdown against the first row and whether the pair set\n"
            "equals its (a second, streamed run per variant). Each timed run is stored in\n"
            "the session log.",
    .min_args = 0,
    .max_args = 0,
    .options = NULL,
    .run = ablate_run,
};
