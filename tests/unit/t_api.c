/* libtcjoin's C face (include/tcjoin.h) against direct FP64 computation:
 * counts, per-point counts, the pairs streamed, the radius graph, the
 * k-distance; the records and arrays a command call leaves; progress,
 * cancellation and every refusal with its one line. The Python module's
 * tests (tests/python) check the same calls against scikit-learn. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tcjoin.h"

#define N 300
#define D 3

/* Points in four clumps and a few apart, FP32; the same every run. */
static float pts[N * D];
static void pts_fill(void)
{
    uint64_t st = 7;
    for (int i = 0; i < N; i++)
        for (int k = 0; k < D; k++)
            pts[i * D + k] = (float)((i % 4) * 3.0 + t_unit(&st) * (i % 10 == 9 ? 9.0 : 1.0));
}

static double d2_direct(int i, int j)
{
    double s = 0;
    for (int k = 0; k < D; k++) {
        double t = (double)pts[i * D + k] - (double)pts[j * D + k];
        s += t * t;
    }
    return s;
}

static int within(int i, int j, double eps)
{
    return d2_direct(i, j) <= eps * eps;
}

static tcj_ctx *open_ctx(void)
{
    tcj_ctx *c = NULL;
    if (tcj_open(NULL, NULL, &c))
        return NULL;
    return c;
}

/* A context without a log and the clumps wrapped in it; 0 or the wrap's code. */
static int open_pts(tcj_ctx **c, tcj_data **x)
{
    pts_fill();
    *x = NULL;
    if (!(*c = open_ctx()))
        return TCJOIN_EINVAL;
    return tcj_data_wrap(*c, pts, N, D, TCJ_F32, "clumps", x);
}

TEST(counts_equal_direct_fp64)
{
    tcj_ctx *c;
    tcj_data *x;
    CHECK_EQ_INT(open_pts(&c, &x), 0);
    const double eps = 0.45;
    uint64_t want = 0, pp[N], got = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            want += (uint64_t)within(i, j, eps);
    CHECK_EQ_INT(tcj_count(c, x, eps, "cpu", &got), 0);
    CHECK_MSG(got == want, "count %llu, direct %llu", (unsigned long long)got,
              (unsigned long long)want);
    CHECK_EQ_INT(tcj_perpoint(c, x, eps, "cpu", pp), 0);
    for (int i = 0; i < N; i++) {
        uint64_t w = 0;
        for (int j = 0; j < N; j++)
            w += (uint64_t)within(i, j, eps);
        CHECK_MSG(pp[i] == w, "row %d: %llu, direct %llu", i, (unsigned long long)pp[i],
                  (unsigned long long)w);
    }
    /* the command's record and text stay until the next call */
    CHECK(strstr(tcj_records(c), "\"type\":\"run\"") != NULL);
    CHECK(strstr(tcj_text(c), "pairs") != NULL);
    tcj_data_free(x);
    tcj_close(c);
}

typedef struct seen {
    unsigned char m[N][N];
    size_t k;
    int stop_after; /* batches; 0: never */
    int batches;
    double worst; /* largest |d2 - direct| / direct */
} seen;

static int on_pairs(void *user, size_t k, const uint32_t *i, const uint32_t *j, const double *d2)
{
    seen *s = user;
    for (size_t t = 0; t < k; t++) {
        s->m[i[t]][j[t]]++;
        const double w = d2_direct((int)i[t], (int)j[t]);
        const double e = w > 0 ? fabs(d2[t] - w) / w : fabs(d2[t]);
        s->worst = e > s->worst ? e : s->worst;
    }
    s->k += k;
    return s->stop_after && ++s->batches >= s->stop_after;
}

TEST(pairs_stream_every_pair_once)
{
    tcj_ctx *c;
    tcj_data *x;
    CHECK_EQ_INT(open_pts(&c, &x), 0);
    seen *s = calloc(1, sizeof *s);
    const double eps = 0.6;
    CHECK_EQ_INT(tcj_pairs(c, x, eps, "cpu", on_pairs, s), 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            CHECK_MSG(s->m[i][j] == within(i, j, eps), "pair %d %d seen %d times", i, j,
                      s->m[i][j]);
    /* cpu's d2 is FP64's direct form: as the loop above sums it */
    CHECK_MSG(s->worst == 0, "d2 off by %g", s->worst);
    /* a nonzero return stops the run */
    memset(s, 0, sizeof *s);
    s->stop_after = 1;
    CHECK_EQ_INT(tcj_pairs(c, x, 100.0, "cpu", on_pairs, s), TCJOIN_ECANCEL);
    CHECK_EQ_INT(s->batches, 1); /* no batch after the one that said stop */
    CHECK(strstr(tcj_error(c), "stopped") != NULL);
    free(s);
    tcj_data_free(x);
    tcj_close(c);
}

TEST(graph_rows_sorted_and_checked)
{
    tcj_ctx *c;
    tcj_data *x;
    CHECK_EQ_INT(open_pts(&c, &x), 0);
    const double eps = 0.5;
    int64_t ip[N + 1];
    CHECK_EQ_INT(tcj_graph_rows(c, x, eps, "cpu", 0, ip), 0);
    int32_t *ix = malloc((size_t)ip[N] * sizeof *ix);
    double *dist = malloc((size_t)ip[N] * sizeof *dist);
    CHECK_EQ_INT(tcj_graph_fill(c, x, eps, "cpu", 0, ip, ix, dist), 0);
    for (int i = 0; i < N; i++) {
        int64_t p = ip[i];
        for (int j = 0; j < N; j++) {
            if (j == i || !within(i, j, eps))
                continue;
            CHECK_MSG(p < ip[i + 1] && ix[p] == j, "row %d: entry %lld is %d, want %d", i,
                      (long long)p, p < ip[i + 1] ? ix[p] : -1, j);
            CHECK_MSG(dist[p] == sqrt(d2_direct(i, j)), "row %d col %d: %.17g", i, j, dist[p]);
            p++;
        }
        CHECK_EQ_INT(p, ip[i + 1]);
    }
    /* rows longer than the insertion sort takes (256): every other point */
    int64_t all[N + 1];
    CHECK_EQ_INT(tcj_graph_rows(c, x, 100.0, "cpu", 0, all), 0);
    CHECK(all[N] == (int64_t)N * (N - 1));
    int32_t *ax = malloc((size_t)all[N] * sizeof *ax);
    double *ad = malloc((size_t)all[N] * sizeof *ad);
    CHECK_EQ_INT(tcj_graph_fill(c, x, 100.0, "cpu", 0, all, ax, ad), 0);
    for (int i = 0; i < N; i++)
        for (int j = 0, p = (int)all[i]; j < N; j++) {
            if (j == i)
                continue;
            CHECK_MSG(ax[p] == j && ad[p] == sqrt(d2_direct(i, j)), "row %d: %d at %d", i, ax[p],
                      p);
            p++;
        }
    free(ax);
    free(ad);
    /* lengths from another eps: refused with the reason, nothing written past them */
    int64_t small[N + 1];
    CHECK_EQ_INT(tcj_graph_rows(c, x, eps / 2, "cpu", 0, small), 0);
    CHECK_EQ_INT(tcj_graph_fill(c, x, eps, "cpu", 0, small, ix, NULL), TCJOIN_EINVAL);
    CHECK(strstr(tcj_error(c), "where its length says") != NULL);
    free(ix);
    free(dist);
    tcj_data_free(x);
    tcj_close(c);
}

TEST(kdist_and_dbscan_arrays)
{
    tcj_ctx *c;
    tcj_data *x;
    CHECK_EQ_INT(open_pts(&c, &x), 0);
    double kd[N];
    CHECK_EQ_INT(tcj_kdist(c, x, 3, "cpu", kd), 0);
    for (int i = 0; i < N; i++) { /* the 3rd smallest d2 over j != i */
        double b[3] = {INFINITY, INFINITY, INFINITY};
        for (int j = 0; j < N; j++) {
            if (j == i)
                continue;
            double v = d2_direct(i, j);
            for (int t = 0; t < 3; t++)
                if (v < b[t]) {
                    double u = b[t];
                    b[t] = v;
                    v = u;
                }
        }
        CHECK_MSG(kd[i] == sqrt(b[2]), "row %d: %.17g, direct %.17g", i, kd[i], sqrt(b[2]));
    }
    int32_t lab[N];
    uint8_t core[N];
    size_t nc = 0;
    CHECK_EQ_INT(tcj_dbscan(c, x, 0.5, 5, "cpu", lab, core, &nc), 0);
    CHECK(nc >= 1);
    for (int i = 0; i < N; i++) { /* core: at least 5 within eps, itself counted */
        int m = 0;
        for (int j = 0; j < N; j++)
            m += within(i, j, 0.5);
        CHECK_EQ_INT(core[i], m >= 5);
        CHECK(lab[i] >= -1 && lab[i] < (int32_t)nc);
        CHECK(!core[i] || lab[i] >= 0);
    }
    const void *a;
    tcj_atype t;
    size_t n;
    CHECK_EQ_INT(tcj_array(c, "labels", &a, &t, &n), 0);
    CHECK(t == TCJ_A_I32 && n == N && !memcmp(a, lab, sizeof lab));
    CHECK_EQ_INT(tcj_array(c, "probabilities", &a, &t, &n), TCJOIN_EINVAL);
    tcj_data_free(x);
    tcj_close(c);
}

/* The integer after key in a record, or -1. */
static long rec_int(const char *json, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(json, k);
    return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

TEST(curve_and_compare_records)
{
    tcj_ctx *c;
    tcj_data *x;
    CHECK_EQ_INT(open_pts(&c, &x), 0);
    const char *json;
    CHECK_EQ_INT(tcj_curve(c, x, 5, 0.5, "cpu", &json), 0);
    CHECK_MSG(!strncmp(json, "{\"type\":\"dbscan_curve\"", 22) && !strchr(json, '\n'), "%s", json);
    /* its last point is eps = max: DBSCAN's own clusters there */
    const char *last = strstr(json, "{\"eps\":0.5,");
    CHECK_MSG(last, "%s", json);
    const long at_max = rec_int(last, "clusters");
    int32_t lab[N];
    size_t nc;
    CHECK_EQ_INT(tcj_dbscan(c, x, 0.5, 5, "cpu", lab, NULL, &nc), 0);
    CHECK_MSG(at_max == (long)nc, "curve %ld clusters at 0.5, dbscan %zu", at_max, nc);
    CHECK_EQ_INT(tcj_compare(c, x, 0.5, "cpu", "cpu-fp16", &json), 0);
    CHECK_MSG(!strncmp(json, "{\"type\":\"compare\"", 17), "%s", json);
    CHECK(strstr(json, "cpu-fp16") != NULL);
    CHECK_EQ_INT(tcj_compare(c, x, 0.5, "cpu", NULL, &json), TCJOIN_EINVAL);
    tcj_data_free(x);
    tcj_close(c);
}

TEST(int8_wraps_as_its_values)
{
    int8_t v[40 * 2];
    double w[40 * 2];
    for (int k = 0; k < 80; k++) {
        v[k] = (int8_t)((k * 37) % 256 - 128);
        w[k] = v[k];
    }
    tcj_ctx *c = open_ctx();
    tcj_data *a, *b;
    CHECK_EQ_INT(tcj_data_wrap(c, v, 40, 2, TCJ_I8, NULL, &a), 0);
    CHECK_EQ_INT(tcj_data_wrap(c, w, 40, 2, TCJ_F64, NULL, &b), 0);
    uint64_t pa = 0, pb = 0;
    CHECK_EQ_INT(tcj_count(c, a, 60, "cpu", &pa), 0);
    CHECK_EQ_INT(tcj_count(c, b, 60, "cpu", &pb), 0);
    CHECK(pa == pb && pa > 40);
    tcj_data_free(a);
    tcj_data_free(b);
    tcj_close(c);
}

typedef struct prog {
    int calls, cancel_at;
    double last;
} prog;

static int on_progress(void *user, const char *what, double frac)
{
    prog *p = user;
    p->calls++;
    p->last = frac;
    return p->cancel_at && p->calls >= p->cancel_at;
}

TEST(progress_and_cancel)
{
    /* a join of seconds (60,000^2 pairs of 16 values on the CPU), which
     * the callback stops at its second report (they come every 0.1 s) */
    enum { M = 60000, E = 16 };
    float *v = malloc(sizeof(float) * M * E);
    uint64_t st = 3;
    for (int k = 0; k < M * E; k++)
        v[k] = (float)t_unit(&st);
    tcj_ctx *c = open_ctx();
    tcj_data *x, *few;
    CHECK_EQ_INT(tcj_data_wrap(c, v, M, E, TCJ_F32, NULL, &x), 0);
    CHECK_EQ_INT(tcj_data_wrap(c, v, 100, E, TCJ_F32, NULL, &few), 0);
    prog p = {.cancel_at = 2};
    tcj_set_progress(c, on_progress, &p);
    uint64_t pairs;
    CHECK_EQ_INT(tcj_count(c, x, 0.5, "cpu", &pairs), TCJOIN_ECANCEL);
    CHECK_MSG(p.calls >= 2 && p.last >= 0 && p.last < 1, "%d reports, last %g", p.calls, p.last);
    CHECK_MSG(strstr(tcj_error(c), "cancelled"), "%s", tcj_error(c));
    CHECK(tcj_progress(c) == -1); /* no call in flight */
    tcj_set_progress(c, NULL, NULL);
    CHECK_EQ_INT(tcj_count(c, few, 0.5, "cpu", &pairs), 0); /* it goes on */
    CHECK(pairs >= 100);
    tcj_data_free(x);
    tcj_data_free(few);
    tcj_close(c);
    free(v);
}

TEST(refusals_say_why)
{
    tcj_ctx *c = open_ctx();
    tcj_data *x = NULL;
    double bad[4] = {0, 1, NAN, 2};
    CHECK_EQ_INT(tcj_data_wrap(c, bad, 2, 2, TCJ_F64, "b", &x), TCJOIN_EINVAL);
    CHECK_MSG(strstr(tcj_error(c), "row 1, column 0 is NaN"), "%s", tcj_error(c));
    CHECK(x == NULL);
    CHECK_EQ_INT(tcj_data_wrap(c, bad, 0, 2, TCJ_F64, "b", &x), TCJOIN_EINVAL);
    CHECK_EQ_INT(tcj_data_wrap(c, bad, 2, 2, (tcj_dtype)9, "b", &x), TCJOIN_EINVAL);
    double ok[4] = {0, 1, 1, 2};
    CHECK_EQ_INT(tcj_data_wrap(c, ok, 2, 2, TCJ_F64, "b", &x), 0);
    uint64_t p;
    CHECK_EQ_INT(tcj_count(c, x, -1, NULL, &p), TCJOIN_EINVAL);
    CHECK_EQ_INT(tcj_count(c, x, 1, "no such", &p), TCJOIN_EINVAL);
    CHECK_EQ_INT(tcj_count(c, x, 1, "cpux", &p), TCJOIN_EINVAL);
    CHECK_MSG(strstr(tcj_error(c), "did you mean cpu"), "%s", tcj_error(c));
    CHECK_EQ_INT(tcj_exec(c, x, 0, "eps 1; gen uniform n=10"), TCJOIN_EINVAL);
    CHECK_MSG(strstr(tcj_error(c), "gen: not through the library"), "%s", tcj_error(c));
    CHECK_EQ_INT(tcj_exec(c, x, 1, "run cpu"), 0);
    CHECK_EQ_INT(tcj_error(c)[0], 0);
    CHECK_EQ_INT(tcj_set(c, "no-such", "1"), TCJOIN_EINVAL);
    CHECK_EQ_INT(tcj_set(c, "threads", "1"), 0);
    char buf[32];
    CHECK_EQ_INT(tcj_get(c, "threads", buf, sizeof buf), 0);
    CHECK_MSG(!strcmp(buf, "1"), "threads %s", buf);
    tcj_data_free(x);
    tcj_close(c);
    tcj_ctx *none = NULL;
    CHECK(tcj_open(t_path("no/such/dir/log.db"), NULL, &none) != 0);
    CHECK(none == NULL && tcj_error(NULL)[0]);
}
