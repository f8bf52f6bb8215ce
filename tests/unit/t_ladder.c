/* The teaching ladder's host side (src/ladder.c, store/store_ladder.c):
 *  - ladder_diff against an independent patch applier: the hunks it
 *    prints, applied to a, give b exactly (random line edits, equal files,
 *    empty files, every pair of consecutive rung files);
 *  - the embedded sources equal the files on disk (scripts/
 *    gen_ladder_src.sh), every rung's file is embedded, and ladder_why is
 *    the file's first comment;
 *  - ladder_peak_flops against NVIDIA's published dense peaks (A100 and
 *    H100 SXM data sheets at their boost clocks), ladder_work_fraction
 *    against counting tiles;
 *  - a ladder stored and read back field for field (NAN as NULL), and
 *    exported as CSV and JSON. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "err.h"
#include "kernels.h"
#include "ladder.h"
#include "ladder_src.h"
#include "store.h"

typedef struct diff_buf {
    char **line;
    int n, cap;
} diff_buf;

static void collect(void *ctx, const char *line)
{
    diff_buf *b = ctx;
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->line = realloc(b->line, (size_t)b->cap * sizeof *b->line);
    }
    b->line[b->n++] = strdup(line);
}

static void buf_free(diff_buf *b)
{
    for (int k = 0; k < b->n; k++)
        free(b->line[k]);
    free(b->line);
    memset(b, 0, sizeof *b);
}

/* Lines of text, each without its '\n', malloc'ed. */
static int split_lines(const char *t, char ***out)
{
    int n = 0, cap = 16;
    char **v = malloc((size_t)cap * sizeof *v);
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (n == cap)
            v = realloc(v, (size_t)(cap *= 2) * sizeof *v);
        v[n] = malloc(len + 1);
        memcpy(v[n], p, len);
        v[n++][len] = 0;
        p += len + (e != NULL);
    }
    *out = v;
    return n;
}

/* Apply a unified diff to a's lines; returns the result joined with '\n'
 * after every line, or NULL when a hunk does not match a (context or
 * removed lines differ, or counts disagree with the header). */
static char *apply(const char *a, const diff_buf *d)
{
    char **al;
    int na = split_lines(a, &al), ia = 0;
    size_t cap = (strlen(a) + 1) * 2, len = 0;
    char *out = malloc(cap);
    out[0] = 0;
#define PUT(s)                                                                                     \
    do {                                                                                           \
        size_t l_ = strlen(s);                                                                     \
        while (len + l_ + 2 > cap)                                                                 \
            out = realloc(out, cap *= 2);                                                          \
        memcpy(out + len, s, l_);                                                                  \
        len += l_;                                                                                 \
        out[len++] = '\n';                                                                         \
        out[len] = 0;                                                                              \
    } while (0)
    int ok = 1;
    for (int k = 0; k < d->n && ok; k++) {
        const char *h = d->line[k];
        if (!strncmp(h, "--- ", 4) || !strncmp(h, "+++ ", 4))
            continue;
        int s1, c1, s2, c2;
        if (sscanf(h, "@@ -%d,%d +%d,%d @@", &s1, &c1, &s2, &c2) != 4) {
            ok = 0;
            break;
        }
        int start = c1 ? s1 - 1 : s1; /* 0-based first line of a in the hunk */
        while (ia < start && ia < na) {
            PUT(al[ia]);
            ia++;
        }
        int seen_a = 0, seen_b = 0;
        for (k++; k < d->n && d->line[k][0] != '@'; k++) {
            const char *l = d->line[k];
            if (l[0] == '+') {
                PUT(l + 1);
                seen_b++;
            } else if (ia < na && !strcmp(al[ia], l + 1) && (l[0] == ' ' || l[0] == '-')) {
                if (l[0] == ' ') {
                    PUT(l + 1);
                    seen_b++;
                }
                ia++;
                seen_a++;
            } else {
                ok = 0;
                break;
            }
        }
        k--;
        if (seen_a != c1 || seen_b != c2)
            ok = 0;
    }
    while (ok && ia < na) {
        PUT(al[ia]);
        ia++;
    }
#undef PUT
    for (int k = 0; k < na; k++)
        free(al[k]);
    free(al);
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

static uint64_t rs = 0x1234567;
static unsigned rnd(unsigned m)
{
    rs ^= rs << 13, rs ^= rs >> 7, rs ^= rs << 17;
    return (unsigned)(rs % m);
}

/* The diff of a to b, checked by applying it; *changed: its changed
 * lines. */
static void check_diff_into(const char *a, const char *b, int *changed)
{
    diff_buf d = {0};
    int ch = ladder_diff(a, b, "a", "b", collect, &d);
    *changed = ch;
    CHECK_MSG(ch >= 0, "ladder_diff refused %zu and %zu bytes", strlen(a), strlen(b));
    char *got = apply(a, &d);
    CHECK_MSG(got != NULL, "a hunk of the diff does not apply to a");
    if (got)
        CHECK_MSG(strcmp(got, b) == 0, "a patched by the diff is not b");
    int pm = 0;
    for (int k = 2; k < d.n; k++)
        pm += d.line[k][0] == '+' || d.line[k][0] == '-';
    CHECK_EQ_INT(pm, ch);
    if (ch == 0)
        CHECK_EQ_INT(d.n, 0);
    free(got);
    buf_free(&d);
}

static int check_diff(const char *a, const char *b)
{
    int ch = -1;
    check_diff_into(a, b, &ch);
    return ch;
}

TEST(diff_applies_back)
{
    /* random files of lines "L<k>" and their edits: insert, delete, change */
    for (int t = 0; t < 300; t++) {
        int n = (int)rnd(60);
        char a[4096] = "", b[4096] = "";
        size_t la = 0, lb = 0;
        for (int k = 0; k < n; k++) {
            int v = (int)rnd(8); /* repeated lines make the LCS ambiguous */
            la += (size_t)snprintf(a + la, sizeof a - la, "L%d\n", v);
            switch (rnd(6)) {
            case 0:
                break; /* deleted */
            case 1:
                lb += (size_t)snprintf(b + lb, sizeof b - lb, "X%d\n", rnd(4));
                break;
            case 2:
                lb += (size_t)snprintf(b + lb, sizeof b - lb, "L%d\nN%d\n", v, rnd(3));
                break;
            default:
                lb += (size_t)snprintf(b + lb, sizeof b - lb, "L%d\n", v);
                break;
            }
        }
        check_diff(a, b);
        check_diff(b, a);
    }
    CHECK_EQ_INT(check_diff("x\ny\n", "x\ny\n"), 0);
    CHECK_EQ_INT(check_diff("", ""), 0);
    CHECK_EQ_INT(check_diff("", "a\nb\n"), 2);
    CHECK_EQ_INT(check_diff("a\nb\n", ""), 2);
    /* the LCS is minimal: one changed line in the middle is 2 lines */
    CHECK_EQ_INT(check_diff("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n"), 2);
}

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *t = malloc((size_t)n + 1);
    size_t got = fread(t, 1, (size_t)n, f);
    t[got] = 0;
    fclose(f);
    return t;
}

TEST(sources_embedded_as_on_disk)
{
    int own = 0;
    for (const kern_ladder_rung *r = kern_ladder_rungs; r->id; r++) {
        const char *t = ladder_src_find(r->file);
        CHECK_MSG(t != NULL, "rung %d's file %s is not embedded", r->id, r->file);
        char *disk = read_file(r->file);
        CHECK_MSG(disk != NULL, "%s not readable (tests run from the repo root)", r->file);
        if (t && disk)
            CHECK_MSG(strcmp(t, disk) == 0, "%s: embedded text differs from the file", r->file);
        char *why = ladder_why(r->id);
        CHECK_MSG(why && strlen(why) > 40, "rung %d has no why", r->id);
        /* the why's first line is in the file's first comment */
        if (why && disk) {
            char first[80];
            sscanf(why, "%79[^\n]", first);
            if (!r->engine)
                CHECK_MSG(strstr(disk, first) != NULL, "rung %d: why's line '%s' not in %s", r->id,
                          first, r->file);
        }
        free(why);
        free(disk);
        own += !r->engine;
        /* every rung names an earlier rung as the one it differs from */
        CHECK(r->prev < r->id);
        CHECK_EQ_INT(r->id, (int)(r - kern_ladder_rungs) + 1);
    }
    CHECK_EQ_INT(own, KERN_LADDER_OWN);
    CHECK(ladder_why(0) == NULL);
    CHECK(ladder_src_find("kernels/none.cu") == NULL);
    /* consecutive own rungs: the diff applies, and each adds something */
    for (int id = 2; id <= KERN_LADDER_OWN; id++) {
        const kern_ladder_rung *r = kern_ladder_find(id), *p = kern_ladder_find(r->prev);
        const char *a = ladder_src_find(p->file), *b = ladder_src_find(r->file);
        if (a && b)
            CHECK_MSG(check_diff(a, b) > 0, "rung %d equals rung %d", id, p->id);
    }
}

TEST(peak_flops_match_data_sheets)
{
    /* NVIDIA's dense peaks: A100 SXM at 1410 MHz, 108 SMs: FP32 19.5,
     * FP16 tensor 312, INT8 624 TOPS; H100 SXM at 1830 MHz (the tensor
     * boost of the data sheet), 132 SMs: FP16 989.4, FP8 and INT8 1978.9;
     * FP32 66.9 at 1980 MHz. */
    const struct {
        int cc, sms;
        double mhz;
        const char *unit;
        double tflops;
    } t[] = {
        {80, 108, 1410, "cuda-fp32", 19.5}, {80, 108, 1410, "tc-fp16", 312},
        {80, 108, 1410, "tc-int8", 624},    {90, 132, 1830, "tc-fp16", 989.4},
        {90, 132, 1830, "tc-fp8", 1978.9},  {90, 132, 1830, "tc-int8", 1978.9},
        {90, 132, 1980, "cuda-fp32", 66.9},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        double got = ladder_peak_flops(t[k].cc, t[k].unit) * t[k].sms * t[k].mhz * 1e6 / 1e12;
        /* the data sheets round to 3 or 4 digits: 0.5% */
        CHECK_MSG(fabs(got - t[k].tflops) <= 0.005 * t[k].tflops, "%d %s: %.1f, sheet %.1f",
                  t[k].cc, t[k].unit, got, t[k].tflops);
    }
    CHECK(ladder_peak_flops(86, "tc-fp16") == 0);
    CHECK(ladder_peak_flops(90, "none") == 0);
}

TEST(work_fraction_counts_tiles)
{
    const size_t ns[] = {1, 127, 128, 129, 1000, 16384};
    for (size_t q = 0; q < sizeof ns / sizeof ns[0]; q++) {
        size_t nt = (ns[q] + 127) / 128, on = 0;
        for (size_t i = 0; i < nt; i++)
            for (size_t j = 0; j < nt; j++)
                on += i <= j;
        CHECK_NEAR(ladder_work_fraction(1, ns[q], 128), (double)on / (double)(nt * nt), 1e-12);
        CHECK(ladder_work_fraction(0, ns[q], 128) == 1);
    }
}

static ladder_view sample_view(void)
{
    ladder_view v;
    memset(&v, 0, sizeof v);
    snprintf(v.device, sizeof v.device, "NVIDIA H200 (sm_90, 132 SMs)");
    snprintf(v.ref_engine, sizeof v.ref_engine, "exact");
    v.n = 16384;
    v.d = 1024;
    v.eps = sqrt(12345.5);
    v.ref_pairs = 123456789;
    v.nrows = 3;
    const char *names[] = {"naive", "smem", "wgmma-int8"};
    const int ids[] = {1, 2, 13};
    for (int k = 0; k < 3; k++) {
        ladder_row *r = &v.row[k];
        r->rung = ids[k];
        snprintf(r->name, sizeof r->name, "%s", names[k]);
        snprintf(r->unit, sizeof r->unit, "%s", k == 2 ? "tc-int8" : "cuda-fp32");
        snprintf(r->blas, sizeof r->blas, "%s", k == 2 ? "int8" : "fp32");
        r->status = k == 2 ? LADDER_NOT_RUN : LADDER_OK;
        if (k == 2)
            snprintf(r->note, sizeof r->note, "needs compute capability 9.0, \"x\" has 8.0");
        r->pairs = k == 2 ? 0 : v.ref_pairs;
        double *f[] = {&r->kernel_s,   &r->tflops,        &r->blas_tflops, &r->tensor_pct,
                       &r->fma_pct,    &r->conflicts_pct, &r->dram_pct,    &r->smem_pct,
                       &r->l2_hit_pct, &r->occupancy_pct, &r->sm_mhz,      &r->power_w,
                       &r->peak_max,   &r->peak_run};
        for (size_t q = 0; q < sizeof f / sizeof f[0]; q++)
            *f[q] = k == 2 || q == 3 ? NAN : 1.5 + (double)q + 10.0 * k;
        r->run_id = k == 2 ? 0 : 7 + k;
    }
    return v;
}

TEST(store_round_trip)
{
    store *st = NULL;
    char db[512];
    snprintf(db, sizeof db, "%s/ladder.db", t_tmpdir());
    remove(db);
    CHECK_MSG(store_open(db, &st) == 0, "store_open: %s", err_msg());
    if (!st)
        return;
    ladder_view v = sample_view(), got;
    /* runs 7 and 8 must exist for the foreign key: store two */
    int64_t sid = store_session_begin(st, "t_ladder", "test", "host");
    CHECK(sid > 0);
    int grc = store_ladder_get(st, 0, &got);
    CHECK_MSG(grc == TCJ_EINVAL, "empty log: %d %s", grc, err_msg());
    err_clear();
    for (int k = 0; k < 3; k++)
        v.row[k].run_id = 0;
    int64_t id = store_ladder(st, sid, 0, 0, &v);
    CHECK_MSG(id > 0, "store_ladder: %s", err_msg());
    CHECK(store_ladder_get(st, id, &got) == 0);
    CHECK_EQ_INT((int)got.id, (int)id);
    CHECK(strcmp(got.device, v.device) == 0 && strcmp(got.ref_engine, "exact") == 0);
    CHECK(got.n == v.n && got.d == v.d && got.eps == v.eps && got.ref_pairs == v.ref_pairs);
    CHECK_EQ_INT(got.nrows, 3);
    for (int k = 0; k < 3; k++) {
        const ladder_row *a = &v.row[k], *b = &got.row[k];
        CHECK(a->rung == b->rung && a->status == b->status && a->pairs == b->pairs);
        CHECK(!strcmp(a->name, b->name) && !strcmp(a->unit, b->unit) && !strcmp(a->blas, b->blas));
        CHECK(!strcmp(a->note, b->note));
        const double x[] = {a->kernel_s, a->tflops,   a->blas_tflops, a->tensor_pct,
                            a->fma_pct,  a->peak_run, a->power_w};
        const double y[] = {b->kernel_s, b->tflops,   b->blas_tflops, b->tensor_pct,
                            b->fma_pct,  b->peak_run, b->power_w};
        for (int q = 0; q < 7; q++)
            CHECK_MSG((isnan(x[q]) && isnan(y[q])) || x[q] == y[q], "rung %d field %d: %g vs %g",
                      a->rung, q, x[q], y[q]);
    }
    /* smem's speedup over naive from the stored times (its prev is 1) */
    CHECK_NEAR(got.row[1].speedup, v.row[0].kernel_s / v.row[1].kernel_s, 1e-12);
    CHECK(isnan(got.row[0].speedup));
    CHECK_NEAR(got.row[0].pct_blas, 100 * v.row[0].tflops / v.row[0].blas_tflops, 1e-9);
    /* the latest */
    CHECK(store_ladder_get(st, 0, &got) == 0 && got.id == id);
    CHECK(store_ladder_get(st, id + 5, &got) == TCJ_EINVAL);
    err_clear();

    char path[512];
    snprintf(path, sizeof path, "%s/l.csv", t_tmpdir());
    FILE *f = fopen(path, "w+");
    CHECK(store_ladder_export_f(st, id, "csv", f, path) == 0);
    rewind(f);
    char line[2048];
    int lines = 0, nulls = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        if (lines == 1)
            CHECK(strncmp(line, "ladder_id,device,", 17) == 0);
        if (strstr(line, "wgmma-int8"))
            nulls = strstr(line, ",,,,") != NULL; /* its unknown numbers are empty */
    }
    fclose(f);
    CHECK_EQ_INT(lines, 4);
    CHECK(nulls);
    f = fopen(path, "w+");
    CHECK(store_ladder_export_f(st, id, "json", f, path) == 0);
    rewind(f);
    size_t n = fread(line, 1, sizeof line - 1, f);
    line[n] = 0;
    fclose(f);
    CHECK_STR_CONTAINS(line, "\"ladder_id\":");
    CHECK_STR_CONTAINS(line, "\"status\":\"not run\"");
    CHECK_STR_CONTAINS(line, "\"kernel_s\":null");
    CHECK(store_ladder_export_f(st, id, "xml", stdout, "x") == TCJ_EINVAL);
    err_clear();
    store_close(st);
}
