/* The eps-search benchmark without the REPL, for machines that have a GPU
 * but not the REPL's libraries (readline, SQLite, HDF5): sweep (sample +
 * histogram passes) against bisection (a COUNT join per step) with one
 * engine, on generated data and the shared datasets. Prints the per-target
 * table that docs/BENCHMARKS.md sums ("The eps search"). Build and run: see scripts/bench_sweep.sh's header.
 * usage: bench_sweep_api ENGINE DATASETS_DIR [LIMIT] [GEN_N] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "sweep.h"

static const double targets[] = {1, 8, 64, 256, 1000};

static void bench(const char *name, const dataset *ds, const engine *e)
{
    sweep_sample smp;
    if (sweep_sample_build(ds, 0, &smp)) {
        printf("| %s | %s |\n", name, err_msg());
        return;
    }
    sweep_opts o;
    sweep_opts_default(&o);
    o.eng = e;
    for (size_t k = 0; k < sizeof targets / sizeof *targets; k++) {
        if (targets[k] >= (double)(ds->n - 1))
            continue;
        sweep_result h, b;
        if (sweep_solve(ds, &smp, targets[k], &o, &h) ||
            sweep_bisect(ds, &smp, targets[k], &o, &b)) {
            printf("| %s | %zu | %g | error: %s |\n", name, ds->n, targets[k], err_msg());
            continue;
        }
        const char *st[] = {"", " (unreachable)", " (unresolved)"};
        printf("| %s | %zu | %g | %d | %.6g%s | %.3f (+%.3f) | %d | %.6g%s | %.3f |\n", name, ds->n,
               targets[k], h.passes, h.selectivity, st[h.status], h.seconds, smp.seconds, b.passes,
               b.selectivity, st[b.status], b.seconds);
        fflush(stdout);
    }
    sweep_sample_free(&smp);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ENGINE DATASETS_DIR [LIMIT] [GEN_N]\n", argv[0]);
        return 2;
    }
    const engine *e = engine_find(argv[1]);
    if (!e) {
        fprintf(stderr, "unknown engine %s\n", argv[1]);
        return 2;
    }
    size_t limit = argc > 3 ? (size_t)atol(argv[3]) : 0;
    size_t gen_n = argc > 4 ? (size_t)atol(argv[4]) : 20000;
    printf("engine %s\n\n", e->name);
    printf("| data | n | target S | sweep: passes | sweep: S reached | sweep: s (+sample s) | "
           "bisect: passes | bisect: S reached | bisect: s |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    gen_opts g[2] = {{.kind = "uniform", .n = gen_n, .d = 16, .seed = 1},
                     {.kind = "gauss", .n = gen_n, .d = 32, .seed = 2}};
    const char *gname[2] = {"uniform16", "gauss32"};
    for (int k = 0; k < 2; k++) {
        dataset ds;
        if (dataset_generate(&g[k], &ds)) {
            printf("| %s | %s |\n", gname[k], err_msg());
            continue;
        }
        bench(gname[k], &ds, e);
        dataset_free(&ds);
    }
    struct {
        const char *name, *file, *format, *dtype, *cols;
        size_t dim;
        int header;
    } files[] = {
        {"letter", "letter.csv", NULL, NULL, "1-", 0, 1},
        {"htru2", "htru2.csv", NULL, NULL, "0-7", 0, 1},
        {"sift5k", "sift5k.fvecs", NULL, NULL, NULL, 0, -1},
        {"kitti", "kitti_000000_xyzr.f32", "raw", "f32", NULL, 4, -1},
    };
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", argv[2], files[k].file);
        load_opts lo;
        memset(&lo, 0, sizeof lo);
        lo.format = files[k].format;
        lo.dtype = files[k].dtype;
        lo.cols = files[k].cols;
        lo.dim = files[k].dim;
        lo.header = files[k].header;
        lo.limit = limit;
        dataset ds;
        if (dataset_load(path, &lo, &ds)) {
            printf("| %s | %s |\n", files[k].name, err_msg());
            continue;
        }
        bench(files[k].name, &ds, e);
        dataset_free(&ds);
    }
    return 0;
}
