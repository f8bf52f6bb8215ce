/* Benchmark driver for `set devices`: one generated dataset, eps chosen for
 * a target selectivity, then one COUNT run of an engine per device list,
 * all in the same process, each line with its kernel time (the longest
 * device's), wall time, and the speedup of its kernel time over the first
 * list's.
 *   bench_devices N D S KIND LIST...
 * LIST: default (the one device of `set device`) or a `set devices` value
 * (0,1 or all). $ENGINE (default fasted) is the engine timed; $EST_ENGINE
 * (default the same) picks eps: histograms of the first min(N, 2000) rows
 * against all rows, zoomed three times, until the mean neighbours per
 * point (self excluded) reaches S. Each list's first run is cold (the
 * device caches released before it). $REPS (default 0): warm runs after
 * the cold one, the median kept. One line a list:
 *   n d kind eps list devices pairs sel cold_s kernel_s warm_s speedup
 *   other_s (cold run less its kernels: upload, conversion) and each
 *   device's items:kernel seconds
 * Built by scripts/bench-devices against libtcjoin.a. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset.h"
#include "devices.h"
#include "engine.h"
#include "err.h"
#include "kernels.h"

#define NB 1024

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double metric(const join_result *r, const char *name)
{
    for (int k = 0; k < r->nmetric; k++)
        if (!strcmp(r->metric[k].name, name))
            return r->metric[k].value;
    return -1;
}

/* Pairs with d2 <= each edge, for rows [0, m), over [lo, hi] in NB bins:
 * cum[b] counts d2 <= edges[b]. */
static int hist_pass(const engine *e, const dataset *ds, size_t m, double lo, double hi,
                     double *edges, uint64_t *cum)
{
    uint64_t hist[NB], below = 0;
    for (int b = 0; b <= NB; b++)
        edges[b] = lo + (hi - lo) * b / NB;
    engine_opts o;
    engine_opts_default(&o);
    o.int8_scale = 1;
    join_spec s;
    memset(&s, 0, sizeof s);
    s.ds = ds;
    s.q0 = 0;
    s.q1 = m;
    s.mode = JOIN_HIST;
    s.opts = &o;
    s.hist_edges = edges;
    s.hist_nbins = NB;
    s.hist = hist;
    s.hist_below = &below;
    join_result r;
    if (engine_run(e, &s, &r))
        return -1;
    cum[0] = below;
    for (int b = 0; b < NB; b++)
        cum[b + 1] = cum[b] + hist[b];
    return 0;
}

/* eps with about S neighbours a point over the first m rows. */
static double pick_eps(const engine *e, const dataset *ds, double S)
{
    const size_t m = ds->n < 2000 ? ds->n : 2000;
    const uint64_t want = (uint64_t)ceil((S + 1) * (double)m);
    /* The top: the largest d2 from row 0 to a spread of rows, doubled
     * until the target is under it. */
    double hi = 0;
    double *r0 = malloc(2 * ds->d * sizeof *r0), *rj = r0 + ds->d;
    if (!r0)
        return -1;
    dataset_rows_f64(ds, 0, 1, r0);
    for (size_t j = 0; j < ds->n; j += ds->n / 1000 + 1) {
        dataset_rows_f64(ds, j, 1, rj);
        double s = 0;
        for (size_t k = 0; k < ds->d; k++) {
            double u = r0[k] - rj[k];
            s += u * u;
        }
        hi = s > hi ? s : hi;
    }
    free(r0);
    double lo = 0, edges[NB + 1];
    uint64_t cum[NB + 1];
    int grown = 0;
    for (int pass = 0; pass < 3; pass++) {
        if (hist_pass(e, ds, m, lo, hi, edges, cum))
            return -1;
        if (cum[NB] < want) {
            if (pass == 0 && grown++ < 30) {
                hi *= 2;
                pass--;
                continue;
            }
            break;
        }
        int b = 0;
        while (b < NB && cum[b] < want)
            b++;
        /* cum[b] >= want > cum[b-1]: the target's d2 lies in (edges[b-1], edges[b]]. */
        lo = b > 0 ? edges[b - 1] : 0;
        hi = edges[b];
    }
    return sqrt(hi);
}

int main(int argc, char **argv)
{
    if (argc < 6) {
        fprintf(stderr, "usage: bench_devices N D S KIND LIST...\n");
        return 2;
    }
    gen_opts g;
    memset(&g, 0, sizeof g);
    g.n = strtoull(argv[1], NULL, 10);
    g.d = strtoull(argv[2], NULL, 10);
    const double S = atof(argv[3]);
    g.kind = argv[4];
    g.seed = 42;
    const char *ename = getenv("ENGINE") ? getenv("ENGINE") : "fasted";
    const char *est = getenv("EST_ENGINE") ? getenv("EST_ENGINE") : ename;
    const int reps = getenv("REPS") ? atoi(getenv("REPS")) : 0;
    const engine *e = engine_find(ename), *ee = engine_find(est);
    if (!e || !ee) {
        fprintf(stderr, "bench_devices: no engine %s\n", e ? est : ename);
        return 2;
    }
    dataset ds;
    memset(&ds, 0, sizeof ds);
    if (dataset_generate(&g, &ds)) {
        fprintf(stderr, "gen: %s\n", err_msg());
        return 1;
    }
    double eps = pick_eps(ee, &ds, S);
    if (eps < 0) {
        fprintf(stderr, "eps: %s\n", err_msg());
        return 1;
    }
    double first = 0;
    for (int l = 5; l < argc; l++) {
        engine_opts o;
        engine_opts_default(&o);
        o.int8_scale = 1;
        if (devices_parse(argv[l], &o)) {
            fprintf(stderr, "%s\n", err_msg());
            return 2;
        }
        join_spec s;
        memset(&s, 0, sizeof s);
        s.ds = &ds;
        s.eps = eps;
        s.q1 = ds.n;
        s.mode = JOIN_COUNT;
        s.opts = &o;
        join_result cold, r;
        /* Every list starts cold: no device holds the dataset from the
         * eps passes or the list before, so the devices of a list start
         * together (each uploads its own copy at the same time). */
        kern_fasted_release();
        if (engine_run(e, &s, &cold)) {
            fprintf(stderr, "%s on %s: %s\n", ename, argv[l], err_msg());
            return 1;
        }
        double kt[16], wt[16];
        int nr = reps < 16 ? reps : 16;
        for (int k = 0; k < nr; k++) {
            if (engine_run(e, &s, &r)) {
                fprintf(stderr, "%s on %s: %s\n", ename, argv[l], err_msg());
                return 1;
            }
            kt[k] = r.kernel_seconds;
            wt[k] = r.seconds;
        }
        qsort(kt, nr, sizeof *kt, cmp_d);
        qsort(wt, nr, sizeof *wt, cmp_d);
        const double km = nr ? kt[nr / 2] : cold.kernel_seconds;
        const double wm = nr ? wt[nr / 2] : cold.seconds;
        if (l == 5)
            first = km;
        char shares[512] = "";
        size_t k = 0;
        for (int dv = 0; dv < 64 && k < sizeof shares; dv++) {
            char name[32];
            snprintf(name, sizeof name, "dev%d_items", dv);
            double it = metric(&cold, name);
            if (it < 0)
                continue;
            snprintf(name, sizeof name, "dev%d_kernel_s", dv);
            k += (size_t)snprintf(shares + k, sizeof shares - k, " dev%d=%.0f:%.3fs", dv, it,
                                  metric(&cold, name));
        }
        printf("%zu %zu %s eps=%.6g list=%s devices=%.0f pairs=%llu sel=%.2f cold_s=%.3f "
               "kernel_s=%.3f warm_s=%.3f speedup=%.3f other_s=%.3f%s [%s]\n",
               ds.n, ds.d, g.kind, eps, argv[l],
               metric(&cold, "devices") > 0 ? metric(&cold, "devices") : 1,
               (unsigned long long)cold.pairs, engine_selectivity(cold.pairs, ds.n), cold.seconds,
               km, wm, km > 0 ? first / km : 0, cold.seconds - cold.kernel_seconds, shares,
               cold.device);
        fflush(stdout);
    }
    dataset_free(&ds);
    kern_fasted_release();
    return 0;
}
