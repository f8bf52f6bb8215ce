/* Benchmark driver for the tensor-core engines (fasted and the other
 * formats): generated data, COUNT mode, one cold run (upload and conversion
 * included) and warm runs (the converted dataset cached on the device),
 * every phase printed.
 *   bench_fasted N D KIND EPS [SYM:OFF[:MODE[:ENGINE[:ACC]]] ...]
 * runs each SYM:OFF setting on the same generated data (MODE count, the
 * default, pairs with a 1000-pair batch, for the sanitizer, or pairs4m
 * with the default batch; ENGINE
 * fasted, the default, or another tensor-core engine such as bf16; ACC
 * fp32, the default, or fast: `set fp8-acc` for the FP8 engines) and
 * (MODE kdistK instead: the K-distance of every point, kdist_run, its
 * time as kernel_ms and warm) and prints one line each:
 *   n d kind eps sym variant pairs cold_s warm_s kernel_ms tflops_paper
 *   tflops_padded h2d convert norms ... launches (the cold run's) refine_ms
 * (kernel_ms and refine_ms: the median of the warm runs; exact's
 * refinement is a part of its kernel time; cold_kernel_ms: the cold run's)
 * BENCH_DTYPE=f32 keeps the generated values as f32 (the CLI's default),
 * else f64. Built against libtcjoin.a (scripts/gpu-check says how). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "exact_path.h"
#include "kdist.h"
#include "kernels.h"

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int count_sink(void *ctx, const pair_batch *b)
{
    *(uint64_t *)ctx += b->k;
    return 0;
}

static double metric(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (!strcmp(r->metric[k].name, name))
            return r->metric[k].value;
    return 0;
}

static double phase(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nphase; k++)
        if (!strcmp(r->phase[k].name, name))
            return r->phase[k].seconds;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_fasted N D KIND EPS [SYM:OFF[:MODE] ...]\n");
        return 2;
    }
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.n = strtoull(argv[1], NULL, 10);
    g.d = strtoull(argv[2], NULL, 10);
    g.kind = argv[3];
    g.seed = 42;
    /* BENCH_DTYPE=f32: the values kept as f32, as `gen` keeps them by
     * default; otherwise f64 (as docs/history's figures before 2026-11-23) */
    const char *bt = getenv("BENCH_DTYPE");
    g.dtype = bt && !strcmp(bt, "f32") ? DTYPE_F32 : DTYPE_F64;
    double eps = atof(argv[4]);
    dataset ds;
    memset(&ds, 0, sizeof ds);
    if (dataset_generate(&g, &ds)) {
        fprintf(stderr, "gen: %s\n", err_msg());
        return 1;
    }
    const int reps = 3;
    double kt[3], wt[3], rt[3];
    char *deflt[] = {"1:0"};
    char **specs = argc > 5 ? argv + 5 : deflt;
    int nspec = argc > 5 ? argc - 5 : 1;
    kern_fasted_release();
    for (int sp = 0; sp < nspec; sp++) {
        engine_opts o;
        engine_opts_default(&o);
        o.int8_scale = 1; /* int8 quantizes the generated reals */
        char mode[16] = "count", ename[32] = "fasted", acc[8] = "fp32";
        unsigned off = 0;
        sscanf(specs[sp], "%d:%i:%15[^:]:%31[^:]:%7s", &o.symmetric, (int *)&off, mode, ename, acc);
        o.fp8_acc_fast = strcmp(acc, "fast") == 0;
        const engine *e = engine_find(ename);
        if (!e) {
            fprintf(stderr, "bench_fasted: no engine %s\n", ename);
            return 2;
        }
        o.fasted_off = off;
        /* BENCH_EXACT_PATH=pass|grid|clusters: exact's path (default auto) */
        const char *ep = getenv("BENCH_EXACT_PATH");
        for (int k = EXACT_PATH_AUTO; ep && k <= EXACT_PATH_CLUSTERS; k++)
            if (!strcmp(ep, exact_path_name(k)))
                o.exact_path = k;
        uint64_t sunk = 0;
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.eps = eps;
        s.q1 = ds.n;
        s.mode = JOIN_COUNT;
        s.opts = &o;
        if (!strncmp(mode, "pairs", 5)) {
            /* pairs: 1000-pair batches (the sanitizer's many refills);
             * pairs4m: the default 4M-pair batches (timings) */
            s.mode = JOIN_PAIRS;
            if (!strcmp(mode, "pairs"))
                o.batch_pairs = 1000;
            s.sink.put = count_sink;
            s.sink.ctx = &sunk;
        }
        join_result cold, r;
        if (!strncmp(mode, "kdist", 5)) {
            kdist_spec ks;
            memset(&ks, 0, sizeof ks);
            ks.ds = &ds;
            ks.q1 = ds.n;
            ks.k = atoi(mode + 5);
            ks.opts = &o;
            ks.out = malloc(ds.n * sizeof *ks.out);
            for (int k = -1; k < reps; k++) {
                if (kdist_run(e, &ks, k < 0 ? &cold : &r)) {
                    fprintf(stderr, "%s: %s\n", ename, err_msg());
                    return 1;
                }
                if (k >= 0) {
                    kt[k] = r.kernel_seconds;
                    wt[k] = r.seconds;
                }
            }
            qsort(kt, reps, sizeof *kt, cmp_d);
            qsort(wt, reps, sizeof *wt, cmp_d);
            double med = 0;
            qsort(ks.out, ds.n, sizeof *ks.out, cmp_d);
            med = ks.out[ds.n / 2];
            printf("%zu %zu %s %g %s sym=%d %s %s pairs=0 cold=%.4f warm=%.4f kernel_ms=%.3f "
                   "median_kdist=%.6g\n",
                   ds.n, ds.d, g.kind, eps, ename, o.symmetric, r.variant, mode, cold.seconds,
                   wt[reps / 2], kt[reps / 2] * 1e3, sqrt(med));
            fflush(stdout);
            free(ks.out);
            continue;
        }
        if (engine_run(e, &s, &cold)) {
            fprintf(stderr, "%s: %s\n", ename, err_msg());
            return 1;
        }
        for (int k = 0; k < reps; k++) {
            if (engine_run(e, &s, &r)) {
                fprintf(stderr, "%s: %s\n", ename, err_msg());
                return 1;
            }
            kt[k] = r.kernel_seconds;
            wt[k] = r.seconds;
            rt[k] = metric(&r, "refine_kernel");
            if (r.pairs != cold.pairs)
                fprintf(stderr, "warning: run %d found %llu pairs, first run %llu\n", k,
                        (unsigned long long)r.pairs, (unsigned long long)cold.pairs);
        }
        qsort(kt, reps, sizeof *kt, cmp_d);
        qsort(wt, reps, sizeof *wt, cmp_d);
        qsort(rt, reps, sizeof *rt, cmp_d);
        double km = kt[reps / 2], wm = wt[reps / 2];
        double dp = (double)cold.d_padded, n = (double)ds.n;
        double paper = 2 * n * n * dp / km / 1e12;
        /* the work actually done: about half the tiles when symmetric */
        double work = paper * (o.symmetric ? 0.5 : 1.0);
        /* the kernel that ran (wgmma or an mma.sync variant), one word */
        char kern[sizeof r.variant];
        snprintf(kern, sizeof kern, "%s", r.variant);
        kern[strcspn(kern, ",")] = 0;
        for (char *q = kern; *q; q++)
            if (*q == ' ')
                *q = '_';
        printf("%zu %zu %s %g %s%s sym=%d %s %s pairs=%llu cold=%.4f warm=%.4f kernel_ms=%.3f "
               "tflops_paper=%.1f tflops_work=%.1f h2d=%.4f convert=%.4f norms=%.4f "
               "d2h=%.4f sink=%.4f cold_kernel_ms=%.3f sel=%.2f refills=%.0f launches=%.0f refine_ms=%.3f "
               "path=%.0f cluster_work=%.4f band=%.0f\n",
               ds.n, ds.d, g.kind, eps, ename, o.fp8_acc_fast ? ":fast" : "", o.symmetric, kern, mode,
               (unsigned long long)cold.pairs, cold.seconds, wm, km * 1e3, paper, work,
               phase(&cold, "h2d"), phase(&cold, "convert"), phase(&cold, "norms"),
               phase(&cold, "d2h"), phase(&cold, "sink"), cold.kernel_seconds * 1e3,
               ((double)cold.pairs - n) / n, metric(&cold, "buffer_refills"),
               metric(&cold, "launches"), rt[reps / 2] * 1e3, metric(&r, "path"),
               metric(&r, "cluster_work"), metric(&r, "band_pairs"));
        fflush(stdout);
    }
    dataset_free(&ds);
    kern_fasted_release();
    return 0;
}
