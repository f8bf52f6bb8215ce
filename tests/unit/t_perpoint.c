/* The per-point summary (src/perpoint.c) against values worked out here:
 * nearest-rank quantiles by a sort written here, the histogram by counting
 * each value's power-of-two bin directly, core points by a brute-force
 * FP64 join; and the summary's round trip through the session log. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>

#include "dataset.h"
#include "engine.h"
#include "err.h"
#include "perpoint.h"
#include "store.h"

extern const engine engine_cpu;

TEST(quantiles_nearest_rank)
{
    /* counts self included; neighbours are one less: 0..9 in a shuffled order */
    uint64_t c[10] = {4, 1, 10, 7, 2, 9, 3, 8, 6, 5};
    perpoint_summary p;
    CHECK_EQ_INT(perpoint_summarize(c, 10, 0, &p), 0);
    /* ranks ceil(0.1*10)=1, ceil(0.5*10)=5, ceil(0.9*10)=9 of 0..9 */
    CHECK_EQ_INT(p.min, 0);
    CHECK_EQ_INT(p.p10, 0);
    CHECK_EQ_INT(p.median, 4);
    CHECK_EQ_INT(p.p90, 8);
    CHECK_EQ_INT(p.max, 9);
    CHECK_NEAR(p.mean, 4.5, 0);
    CHECK_EQ_INT(p.minpts, 0);
    CHECK_EQ_INT(p.core, 0);
    /* bins {0} {1} {2,3} {4..7} {8..15}: 1, 1, 2, 4, 2 of 0..9 */
    CHECK_EQ_INT(p.nbins, 5);
    uint64_t want[5] = {1, 1, 2, 4, 2}, lo[5] = {0, 1, 2, 4, 8}, hi[5] = {0, 1, 3, 7, 15};
    for (int b = 0; b < 5; b++) {
        CHECK_EQ_INT(p.bin[b].count, want[b]);
        CHECK_EQ_INT(p.bin[b].lo, lo[b]);
        CHECK_EQ_INT(p.bin[b].hi, hi[b]);
    }
    /* one value: every quantile is it; 11 values: rank ceil(1.1)=2 */
    uint64_t one = 6;
    CHECK_EQ_INT(perpoint_summarize(&one, 1, 0, &p), 0);
    CHECK(p.min == 5 && p.p10 == 5 && p.median == 5 && p.p90 == 5 && p.max == 5);
    CHECK_EQ_INT(p.nbins, 1);
    CHECK_EQ_INT(p.bin[0].lo, 4);
    uint64_t e[11];
    for (int i = 0; i < 11; i++)
        e[i] = (uint64_t)(11 - i); /* neighbours 10..0 */
    CHECK_EQ_INT(perpoint_summarize(e, 11, 0, &p), 0);
    CHECK_EQ_INT(p.p10, 1);
    CHECK_EQ_INT(p.median, 5); /* rank ceil(5.5) = 6 of 0..10 */
    CHECK_EQ_INT(p.p90, 9);    /* rank ceil(9.9) = 10 */
}

TEST(bad_counts_refused)
{
    uint64_t c[3] = {1, 0, 2};
    perpoint_summary p;
    CHECK(perpoint_summarize(c, 3, 0, &p) == TCJ_EINVAL);
    CHECK_STR_CONTAINS(err_msg(), "point 1");
    CHECK(perpoint_summarize(c, 0, 0, &p) == TCJ_EINVAL);
}

/* Core points as DBSCAN counts them: |{j : d(i,j) <= eps}| >= minpts,
 * the point itself included, from a brute-force join. */
TEST(core_points_against_brute_force)
{
    size_t n = 300, d = 3;
    dataset ds = {0};
    ds.n = n;
    ds.d = d;
    ds.v = malloc(n * d * sizeof(double));
    uint64_t z = 7;
    for (size_t k = 0; k < n * d; k++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        ((double *)ds.v)[k] = (double)(z >> 40) / (double)(1ull << 24);
    }
    double eps = 0.15;
    engine_opts o;
    engine_opts_default(&o);
    uint64_t *counts = calloc(n, sizeof *counts);
    join_spec spec = {.ds = &ds,
                      .eps = eps,
                      .q0 = 0,
                      .q1 = n,
                      .mode = JOIN_PERPOINT,
                      .opts = &o,
                      .counts = counts};
    join_result res;
    CHECK_EQ_INT(engine_run(&engine_cpu, &spec, &res), 0);
    for (uint64_t minpts = 1; minpts <= 12; minpts += 3) {
        uint64_t core = 0, maxnb = 0;
        for (size_t i = 0; i < n; i++) {
            uint64_t c = 0;
            for (size_t j = 0; j < n; j++) {
                double s = 0;
                for (size_t k = 0; k < d; k++) {
                    double u = ((double *)ds.v)[i * d + k] - ((double *)ds.v)[j * d + k];
                    s += u * u;
                }
                c += s <= eps * eps;
            }
            core += c >= minpts;
            maxnb = c - 1 > maxnb ? c - 1 : maxnb;
        }
        perpoint_summary p;
        CHECK_EQ_INT(perpoint_summarize(counts, n, minpts, &p), 0);
        CHECK_EQ_INT(p.core, core);
        CHECK_EQ_INT(p.noise, n - core);
        CHECK_EQ_INT(p.max, maxnb);
        uint64_t tot = 0;
        for (int b = 0; b < p.nbins; b++)
            tot += p.bin[b].count;
        CHECK_EQ_INT(tot, n);
        /* the mean of neighbours is the selectivity */
        CHECK_NEAR(p.mean, engine_selectivity(res.pairs, n), 1e-12 * p.mean);
    }
    free(counts);
    free(ds.v);
}

TEST(store_round_trip)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/pp.db", t_tmpdir());
    store *st;
    CHECK_EQ_INT(store_open(path, &st), 0);
    join_result res = {0};
    store_run_rec r = {.engine = "cpu", .mode = "perpoint", .n = 10, .d = 1, .res = &res};
    int64_t run = store_run(st, &r);
    CHECK(run > 0);
    uint64_t c[10] = {4, 1, 10, 7, 2, 9, 3, 8, 6, 5};
    perpoint_summary p, q;
    CHECK_EQ_INT(perpoint_summarize(c, 10, 5, &p), 0);
    CHECK_EQ_INT(p.core, 6); /* counts 5..10 */
    CHECK_EQ_INT(store_perpoint(st, run, &p), 0);
    CHECK_EQ_INT(store_perpoint_get(st, run, &q), 0);
    CHECK_EQ_INT(q.npoints, 10);
    CHECK(q.min == p.min && q.p10 == p.p10 && q.median == p.median && q.p90 == p.p90 &&
          q.max == p.max);
    CHECK(q.minpts == 5 && q.core == 6 && q.noise == 4);
    CHECK_EQ_INT(q.nbins, p.nbins);
    for (int b = 0; b < p.nbins; b++)
        CHECK(q.bin[b].lo == p.bin[b].lo && q.bin[b].hi == p.bin[b].hi &&
              q.bin[b].count == p.bin[b].count);
    CHECK(store_perpoint_get(st, run + 1, &q) == TCJ_EINVAL);
    store_close(st);
}
