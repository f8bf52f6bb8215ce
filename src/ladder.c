/* The teaching ladder's results, sources and arithmetic (src/ladder.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kernels.h"
#include "ladder.h"
#include "ladder_src.h"
#include "out.h"

const char *const ladder_status_names[] = {"ok", "wrong", "not run", "failed"};

double ladder_peak_flops(int cc, const char *unit)
{
    /* FLOPs (INT8: operations) a multiprocessor a clock, dense: A100
     * (sm_80): 64 FP32 lanes, 1024 FP16 and 2048 INT8 MACs; H100/H200
     * (sm_90): 128 FP32 lanes, 2048 FP16, 4096 FP8 and INT8 MACs. */
    static const struct {
        int cc;
        const char *unit;
        double flops;
    } t[] = {
        {80, "cuda-fp32", 128}, {80, "tc-fp16", 2048}, {80, "tc-int8", 4096},
        {90, "cuda-fp32", 256}, {90, "tc-fp16", 4096}, {90, "tc-fp8", 8192},
        {90, "tc-int8", 8192},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++)
        if (t[k].cc == cc && strcmp(t[k].unit, unit) == 0)
            return t[k].flops;
    return 0;
}

double ladder_work_fraction(int symmetric, size_t n, int bm)
{
    if (!symmetric || bm <= 0 || n == 0)
        return 1;
    const double nt = ceil((double)n / bm);
    return (nt + 1) / (2 * nt);
}

void ladder_speedups(ladder_view *v)
{
    for (int k = 0; k < v->nrows; k++) {
        ladder_row *r = &v->row[k];
        const kern_ladder_rung *g = kern_ladder_find(r->rung);
        r->pct_blas = r->blas_tflops > 0 && r->tflops > 0 ? 100 * r->tflops / r->blas_tflops : NAN;
        r->speedup = NAN;
        for (int j = 0; g && j < v->nrows; j++)
            if (v->row[j].rung == g->prev && v->row[j].kernel_s > 0 && r->kernel_s > 0)
                r->speedup = v->row[j].kernel_s / r->kernel_s;
    }
}

void ladder_derive(ladder_view *v, int cc, int sms, double max_mhz)
{
    ladder_speedups(v);
    for (int k = 0; k < v->nrows; k++) {
        ladder_row *r = &v->row[k];
        const kern_ladder_rung *g = kern_ladder_find(r->rung);
        const double f = ladder_peak_flops(cc, r->unit);
        r->peak_max = r->peak_run = NAN;
        if (f > 0 && sms > 0 && r->tflops > 0 && g) {
            /* the work the kernel did: the symmetric rungs skip most of
             * the tiles below the diagonal */
            const double done = r->tflops * ladder_work_fraction(g->symmetric, v->n, g->bm) * 1e12;
            if (max_mhz > 0)
                r->peak_max = 100 * done / (f * sms * max_mhz * 1e6);
            if (r->sm_mhz > 0)
                r->peak_run = 100 * done / (f * sms * r->sm_mhz * 1e6);
        }
    }
}

/* A number in a cell of width w, "—" (or s) where unknown. */
static const char *cell(char *buf, size_t size, double x, const char *fmt)
{
    if (isnan(x))
        snprintf(buf, size, "—");
    else
        snprintf(buf, size, fmt, x);
    return buf;
}

/* printf's width counts bytes; "—" is 3 bytes shown as one column. */
static void pad(char *out, size_t size, const char *s, int w)
{
    int cols = 0;
    for (const char *p = s; *p; p++)
        cols += ((unsigned char)*p & 0xc0) != 0x80;
    int k = snprintf(out, size, "%*s", w - cols > 0 ? w - cols : 0, "");
    snprintf(out + k, size - (size_t)k, "%s", s);
}

#define CELL(x, fmt, w) (pad(c[nc], sizeof c[nc], cell(t, sizeof t, (x), (fmt)), (w)), c[nc++])

void ladder_print(const ladder_view *v)
{
    char t[64], c[16][64];
    int nc;
    out_printf("%-4s %-13s %-9s %10s %8s %11s %7s %s\n", "rung", "name", "unit", "kernel ms",
               "TFLOPS", "% cuBLAS", "x prev", "count");
    for (int k = 0; k < v->nrows; k++) {
        const ladder_row *r = &v->row[k];
        nc = 0;
        char pct[48];
        snprintf(pct, sizeof pct, "%s", "—");
        if (!isnan(r->pct_blas))
            snprintf(pct, sizeof pct, "%.1f %s", r->pct_blas, r->blas);
        if (r->status == LADDER_NOT_RUN || r->status == LADDER_FAILED) {
            out_printf("%-4d %-13s %-9s %s: %s\n", r->rung, r->name, r->unit,
                       ladder_status_names[r->status], r->note);
            continue;
        }
        if (r->status == LADDER_WRONG) {
            out_printf("%-4d %-13s %-9s WRONG: %llu pairs, the reference has %llu (not timed)\n",
                       r->rung, r->name, r->unit, (unsigned long long)r->pairs,
                       (unsigned long long)v->ref_pairs);
            continue;
        }
        const char *ms = CELL(r->kernel_s * 1e3, "%.3f", 10);
        const char *tf = CELL(r->tflops, "%.2f", 8);
        char pc[64];
        pad(pc, sizeof pc, pct, 11);
        const char *sp = CELL(r->speedup, "%.2fx", 7);
        out_printf("%-4d %-13s %-9s %s %s %s %s = ref\n", r->rung, r->name, r->unit, ms, tf, pc,
                   sp);
    }
    out_printf("\n%-4s %-13s %6s %6s %6s %6s %6s %6s %6s %5s %6s %6s\n", "rung", "evidence",
               "pipe%", "confl%", "DRAM%", "smem%", "L2hit%", "occup%", "MHz", "W", "pk@max",
               "pk@run");
    for (int k = 0; k < v->nrows; k++) {
        const ladder_row *r = &v->row[k];
        if (r->status != LADDER_OK)
            continue;
        nc = 0;
        const double pipe = r->unit[0] == 'c' ? r->fma_pct : r->tensor_pct;
        const char *a[11] = {
            CELL(pipe, "%.1f", 6),          CELL(r->conflicts_pct, "%.1f", 6),
            CELL(r->dram_pct, "%.1f", 6),   CELL(r->smem_pct, "%.1f", 6),
            CELL(r->l2_hit_pct, "%.1f", 6), CELL(r->occupancy_pct, "%.1f", 6),
            CELL(r->sm_mhz, "%.0f", 6),     CELL(r->power_w, "%.0f", 5),
            CELL(r->peak_max, "%.1f", 6),   CELL(r->peak_run, "%.1f", 6),
        };
        out_printf("%-4d %-13s %s %s %s %s %s %s %s %s %s %s\n", r->rung,
                   r->unit[0] == 'c' ? "fma pipe" : "tensor pipe", a[0], a[1], a[2], a[3], a[4],
                   a[5], a[6], a[7], a[8], a[9]);
    }
}

static void json_num(json_w *w, const char *key, double x)
{
    if (isnan(x))
        json_w_null(w, key);
    else
        json_w_dbl(w, key, x);
}

void ladder_json(json_w *w, const ladder_view *v)
{
    json_w_int(w, "ladder_id", v->id);
    json_w_str(w, "device", v->device);
    json_w_str(w, "dataset", v->dataset);
    json_w_uint(w, "n", v->n);
    json_w_uint(w, "d", v->d);
    json_w_dbl(w, "eps", v->eps);
    json_w_str(w, "reference_engine", v->ref_engine);
    json_w_uint(w, "reference_pairs", v->ref_pairs);
    json_w_arr(w, "rungs");
    for (int k = 0; k < v->nrows; k++) {
        const ladder_row *r = &v->row[k];
        json_w_obj(w, NULL);
        json_w_int(w, "rung", r->rung);
        json_w_str(w, "name", r->name);
        json_w_str(w, "unit", r->unit);
        json_w_str(w, "status", ladder_status_names[r->status]);
        json_w_str(w, "note", r->note[0] ? r->note : NULL);
        if (r->run_id)
            json_w_int(w, "run_id", r->run_id);
        else
            json_w_null(w, "run_id");
        json_w_uint(w, "pairs", r->pairs);
        json_num(w, "kernel_s", r->kernel_s);
        json_num(w, "tflops", r->tflops);
        json_w_str(w, "cublas_dtype", r->blas);
        json_num(w, "cublas_tflops", r->blas_tflops);
        json_num(w, "pct_cublas", r->pct_blas);
        json_num(w, "speedup_prev", r->speedup);
        json_num(w, "tensor_pipe_pct", r->tensor_pct);
        json_num(w, "fma_pipe_pct", r->fma_pct);
        json_num(w, "smem_bank_conflicts_pct", r->conflicts_pct);
        json_num(w, "dram_throughput_pct", r->dram_pct);
        json_num(w, "smem_throughput_pct", r->smem_pct);
        json_num(w, "l2_hit_pct", r->l2_hit_pct);
        json_num(w, "achieved_occupancy_pct", r->occupancy_pct);
        json_num(w, "sm_clock_mhz", r->sm_mhz);
        json_num(w, "power_w", r->power_w);
        json_num(w, "peak_pct_max_clock", r->peak_max);
        json_num(w, "peak_pct_run_clock", r->peak_run);
        json_w_close(w);
    }
    json_w_close(w);
}

const char *ladder_src_find(const char *path)
{
    for (const ladder_src_file *f = ladder_src_files; f->path; f++)
        if (strcmp(f->path, path) == 0)
            return f->text;
    return NULL;
}

/* The first comment block of text, with its markers and leading " * "
 * taken off, malloc'ed. */
static char *first_comment(const char *text)
{
    const char *a = text ? strstr(text, "/*") : NULL;
    const char *b = a ? strstr(a + 2, "*/") : NULL;
    if (!b)
        return NULL;
    char *out = malloc((size_t)(b - a) + 2), *o = out;
    if (!out)
        return NULL;
    for (const char *p = a + 2; p < b;) {
        const char *e = memchr(p, '\n', (size_t)(b - p));
        if (!e)
            e = b;
        const char *q = p;
        while (q < e && (*q == ' ' || *q == '\t'))
            q++;
        if (q < e && *q == '*' && (q + 1 == e || q[1] == ' ' || q[1] == '\n'))
            q += q + 1 < e ? 2 : 1;
        else if (p == a + 2 && *q == ' ')
            q++;
        memcpy(o, q, (size_t)(e - q));
        o += e - q;
        if (e < b)
            *o++ = '\n';
        p = e < b ? e + 1 : b;
    }
    while (o > out && (o[-1] == '\n' || o[-1] == ' '))
        o--;
    *o++ = '\n';
    *o = 0;
    return out;
}

char *ladder_why(int id)
{
    const kern_ladder_rung *r = kern_ladder_find(id);
    if (!r)
        return NULL;
    char *c = first_comment(ladder_src_find(r->file));
    if (!r->engine || !c)
        return c;
    size_t z = strlen(c) + strlen(r->idea) + 256;
    char *out = malloc(z);
    if (out)
        snprintf(out, z, "%s.\nIt is FASTED's own kernel (engine %s), %s:\n\n%s", r->idea,
                 r->engine, r->file, c);
    free(c);
    return out;
}

/* Lines of text as pointers into it (lengths without '\n'). */
typedef struct lines {
    const char **p;
    int *len;
    int n;
} lines;

static int split(const char *text, lines *l)
{
    int cap = 1;
    for (const char *s = text; *s; s++)
        cap += *s == '\n';
    l->p = malloc((size_t)cap * sizeof *l->p);
    l->len = malloc((size_t)cap * sizeof *l->len);
    l->n = 0;
    if (!l->p || !l->len)
        return -1;
    for (const char *s = text; *s;) {
        const char *e = strchr(s, '\n');
        int n = e ? (int)(e - s) : (int)strlen(s);
        l->p[l->n] = s;
        l->len[l->n++] = n;
        s += n + (e != NULL);
    }
    return 0;
}

static int same(const lines *a, int i, const lines *b, int j)
{
    return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], (size_t)a->len[i]) == 0;
}

static void emit_line(void (*emit)(void *, const char *), void *ctx, char tag, const char *p, int n)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%c%.*s", tag, n > 1000 ? 1000 : n, p);
    emit(ctx, buf);
}

int ladder_diff(const char *ta, const char *tb, const char *la, const char *lb,
                void (*emit)(void *ctx, const char *line), void *ctx)
{
    lines a, b;
    if (split(ta, &a) || split(tb, &b) || a.n > 4000 || b.n > 4000) {
        free(a.p), free(a.len), free(b.p), free(b.len);
        return -1;
    }
    /* L[i][j]: the longest common subsequence of a[i..] and b[j..] */
    const size_t W = (size_t)b.n + 1;
    unsigned short *L = calloc(((size_t)a.n + 1) * W, sizeof *L);
    /* op[k]: ' ' both, '-' a only, '+' b only; ia/ib: their line numbers */
    char *op = malloc((size_t)(a.n + b.n) + 1);
    int *ia = malloc(((size_t)(a.n + b.n) + 1) * sizeof *ia);
    int *ib = malloc(((size_t)(a.n + b.n) + 1) * sizeof *ib);
    if (!L || !op || !ia || !ib) {
        free(L), free(op), free(ia), free(ib);
        free(a.p), free(a.len), free(b.p), free(b.len);
        return -1;
    }
    for (int i = a.n - 1; i >= 0; i--)
        for (int j = b.n - 1; j >= 0; j--)
            L[i * W + j] = same(&a, i, &b, j)                       ? L[(i + 1) * W + j + 1] + 1
                           : L[(i + 1) * W + j] >= L[i * W + j + 1] ? L[(i + 1) * W + j]
                                                                    : L[i * W + j + 1];
    int n = 0, i = 0, j = 0, changed = 0;
    while (i < a.n || j < b.n) {
        /* Where the common lines allow either, a's line goes first: the
         * removed lines of a change before the added ones, as diff -u. */
        if (i < a.n && j < b.n && same(&a, i, &b, j)) {
            op[n] = ' ', ia[n] = i++, ib[n++] = j++;
        } else if (i < a.n && (j == b.n || L[(i + 1) * W + j] >= L[i * W + j + 1])) {
            op[n] = '-', ia[n] = i++, ib[n++] = j, changed++;
        } else {
            op[n] = '+', ia[n] = i, ib[n++] = j++, changed++;
        }
    }
    if (changed) {
        char head[600];
        snprintf(head, sizeof head, "--- %s", la);
        emit(ctx, head);
        snprintf(head, sizeof head, "+++ %s", lb);
        emit(ctx, head);
    }
    enum { CTX = 3 };
    for (int k = 0; k < n;) {
        if (op[k] == ' ') {
            k++;
            continue;
        }
        /* a hunk: from CTX lines before this change to CTX lines after the
         * last change closer than 2*CTX lines to the one before it */
        int s = k - CTX < 0 ? 0 : k - CTX, e = k;
        for (int q = k; q < n; q++) {
            if (op[q] != ' ')
                e = q;
            else if (q - e > 2 * CTX)
                break;
        }
        e = e + CTX + 1 > n ? n : e + CTX + 1;
        int na = 0, nb = 0;
        for (int q = s; q < e; q++)
            na += op[q] != '+', nb += op[q] != '-';
        char head[96];
        snprintf(head, sizeof head, "@@ -%d,%d +%d,%d @@", ia[s] + (na > 0), na, ib[s] + (nb > 0),
                 nb);
        emit(ctx, head);
        for (int q = s; q < e; q++) {
            if (op[q] == '+')
                emit_line(emit, ctx, '+', b.p[ib[q]], b.len[ib[q]]);
            else
                emit_line(emit, ctx, op[q], a.p[ia[q]], a.len[ia[q]]);
        }
        k = e;
    }
    free(L), free(op), free(ia), free(ib);
    free(a.p), free(a.len), free(b.p), free(b.len);
    return changed;
}
