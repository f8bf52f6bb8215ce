#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"

const double cmp_rel_edges[CMP_REL_BINS + 1] = {
    -INFINITY, -1e-1, -1e-2, -1e-3, -1e-4, -1e-5, -1e-6,    0,
    1e-6,      1e-5,  1e-4,  1e-3,  1e-2,  1e-1,  INFINITY,
};

#define CMP_HALF (CMP_ERR_BINS / 2)

/* One side's pairs for the current block of rows. */
typedef struct cmp_pair {
    uint32_t i, j;
    double d2;
} cmp_pair;

typedef struct cmp_buf {
    cmp_pair *p, *tmp;
    size_t len, cap, tmpcap;
    size_t bound; /* most pairs this buffer may hold */
    int overflow;
} cmp_buf;

/* Grows on demand up to the bound, so small joins take little memory. */
static int cmp_buf_put(void *ctx, const pair_batch *b)
{
    cmp_buf *buf = ctx;
    if (buf->len + b->k > buf->bound) {
        buf->overflow = 1;
        return err_set(TCJ_ENOMEM, "comparison block buffer full");
    }
    if (buf->len + b->k > buf->cap) {
        size_t cap = buf->cap ? buf->cap * 2 : 4096;
        if (cap < buf->len + b->k)
            cap = buf->len + b->k;
        if (cap > buf->bound)
            cap = buf->bound;
        buf->p = xrealloc(buf->p, cap * sizeof *buf->p);
        buf->cap = cap;
    }
    for (size_t k = 0; k < b->k; k++) {
        cmp_pair *p = &buf->p[buf->len++];
        p->i = b->i[k];
        p->j = b->j[k];
        p->d2 = b->d2[k];
    }
    return 0;
}

static int cmp_by_j(const void *x, const void *y)
{
    uint32_t a = ((const cmp_pair *)x)->j, b = ((const cmp_pair *)y)->j;
    return (a > b) - (a < b);
}

/* Sort a block's pairs by (i, j): count rows (off has rows+1 entries), place
 * into tmp, then sort each row by j. The result is in b->p; off[r] .. off[r+1]
 * is row r0 + r. */
static void cmp_buf_sort(cmp_buf *b, size_t r0, size_t rows, size_t *off)
{
    if (b->tmpcap < b->cap) {
        b->tmp = xrealloc(b->tmp, b->cap * sizeof *b->tmp);
        b->tmpcap = b->cap;
    }
    memset(off, 0, (rows + 1) * sizeof *off);
    for (size_t k = 0; k < b->len; k++)
        off[b->p[k].i - r0 + 1]++;
    for (size_t r = 0; r < rows; r++)
        off[r + 1] += off[r];
    for (size_t k = 0; k < b->len; k++)
        b->tmp[off[b->p[k].i - r0]++] = b->p[k];
    for (size_t r = rows; r > 0; r--)
        off[r] = off[r - 1];
    off[0] = 0;
    cmp_pair *t = b->p;
    b->p = b->tmp;
    b->tmp = t;
    size_t c = b->cap;
    b->cap = b->tmpcap;
    b->tmpcap = c;
    for (size_t r = 0; r < rows; r++)
        if (off[r + 1] - off[r] > 1)
            qsort(b->p + off[r], off[r + 1] - off[r], sizeof *b->p, cmp_by_j);
}

/* The error histogram with a range that grows by thirds (see compare.h). */
typedef struct cmp_hist {
    double w; /* bin width; 0 until the first nonzero error */
    uint64_t c[CMP_ERR_BINS];
    uint64_t zeros; /* zero errors seen before the range was set */
} cmp_hist;

static void cmp_hist_add(cmp_hist *h, double v)
{
    if (h->w == 0) {
        if (v == 0) {
            h->zeros++;
            return;
        }
        /* First nonzero: |v| sits just inside the outermost bin. */
        h->w = fabs(v) / (CMP_HALF + 0.25);
        h->c[CMP_HALF] += h->zeros;
        h->zeros = 0;
    }
    for (;;) {
        double j = floor(v / h->w + 0.5);
        if (fabs(j) <= CMP_HALF) {
            h->c[(int)j + CMP_HALF]++;
            return;
        }
        /* Triple the width: new bin J gathers old bins 3J-1, 3J, 3J+1. */
        uint64_t c[CMP_ERR_BINS] = {0};
        for (int i = -CMP_HALF; i <= CMP_HALF; i++) {
            int jj = (int)floor(i / 3.0 + 0.5);
            c[jj + CMP_HALF] += h->c[i + CMP_HALF];
        }
        memcpy(h->c, c, sizeof c);
        h->w *= 3;
    }
}

/* Exact FP64 distance in the direct form, the judge of one-sided pairs. */
static double cmp_dist64(const dataset *ds, size_t i, size_t j)
{
    const double *a = ds->x + i * ds->d, *b = ds->x + j * ds->d;
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = a[k] - b[k];
        s += u * u;
    }
    return sqrt(s);
}

static void cmp_only(const cmp_spec *s, size_t i, size_t j, double *relmax, uint64_t *bins)
{
    double rel = (cmp_dist64(s->ds, i, j) - s->eps) / s->eps;
    if (fabs(rel) > *relmax)
        *relmax = fabs(rel);
    int b = 0;
    while (b < CMP_REL_BINS - 1 && rel >= cmp_rel_edges[b + 1])
        b++;
    bins[b]++;
}

/* Running state of the pair pass. */
typedef struct cmp_acc {
    double score_sum;
    uint64_t nerr;
    double mean, m2, min, max;
    cmp_hist hist;
} cmp_acc;

static void cmp_merge_row(const cmp_spec *s, cmp_side *r, cmp_acc *acc, size_t i, const cmp_pair *a,
                          size_t na, const cmp_pair *b, size_t nb)
{
    size_t x = 0, y = 0, inter = 0;
    while (x < na || y < nb) {
        if (y == nb || (x < na && a[x].j < b[y].j)) {
            r->only_engine++;
            cmp_only(s, i, a[x].j, &r->only_engine_rel_max, r->only_engine_rel);
            x++;
        } else if (x == na || b[y].j < a[x].j) {
            r->only_ref++;
            cmp_only(s, i, b[y].j, &r->only_ref_rel_max, r->only_ref_rel);
            y++;
        } else {
            double e = sqrt(a[x].d2) - sqrt(b[y].d2);
            acc->nerr++;
            if (acc->nerr == 1 || e < acc->min)
                acc->min = e;
            if (acc->nerr == 1 || e > acc->max)
                acc->max = e;
            double dm = e - acc->mean;
            acc->mean += dm / (double)acc->nerr;
            acc->m2 += dm * (e - acc->mean);
            cmp_hist_add(&acc->hist, e);
            inter++;
            x++;
            y++;
        }
    }
    size_t uni = na + nb - inter;
    acc->score_sum += uni ? (double)inter / (double)uni : 1.0;
    r->both += inter;
}

/* Progress of an inner run mapped onto [lo, lo + span) of the whole. */
typedef struct cmp_prog {
    const cmp_spec *s;
    double lo, span;
} cmp_prog;

static void cmp_prog_fn(void *ctx, double f)
{
    cmp_prog *p = ctx;
    p->s->progress(p->s->progress_ctx, p->lo + p->span * f);
}

static void cmp_spec_base(const cmp_spec *s, join_spec *js, cmp_prog *prog)
{
    memset(js, 0, sizeof *js);
    js->ds = s->ds;
    js->eps = s->eps;
    js->opts = s->opts;
    js->cancel = s->cancel;
    if (s->progress) {
        js->progress = cmp_prog_fn;
        js->progress_ctx = prog;
    }
}

/* Both sides' pairs for rows [r0, r1). Returns 0, 1 when a buffer overflowed
 * (nothing to keep), or an error code. */
static int cmp_block_pairs(const cmp_spec *s, size_t r0, size_t r1, cmp_buf *ba, cmp_buf *bb,
                           cmp_prog *prog)
{
    const engine *eng[2] = {s->a, s->b};
    cmp_buf *buf[2] = {ba, bb};
    for (int side = 0; side < 2; side++) {
        join_spec js;
        join_result jr;
        cmp_spec_base(s, &js, prog);
        js.mode = JOIN_PAIRS;
        js.q0 = r0;
        js.q1 = r1;
        js.sink.put = cmp_buf_put;
        js.sink.ctx = buf[side];
        buf[side]->len = 0;
        buf[side]->overflow = 0;
        if (side == 1)
            prog->lo += prog->span;
        int rc = engine_run(eng[side], &js, &jr);
        if (buf[side]->overflow)
            return 1;
        if (rc)
            return rc;
    }
    return 0;
}

int cmp_run(const cmp_spec *s, cmp_result *r)
{
    memset(r, 0, sizeof *r);
    r->engine_a = s->a->name;
    r->engine_b = s->b->name;
    r->eps = s->eps;
    r->side.engine = s->a->name;
    r->side.judged = 1;
    double t0 = engine_now();
    const size_t n = s->ds ? s->ds->n : 0;
    cmp_prog prog = {.s = s, .lo = 0, .span = 0.1};

    /* 1. Clean timed runs that only count. */
    join_spec js;
    cmp_spec_base(s, &js, &prog);
    js.mode = JOIN_COUNT;
    js.q0 = 0;
    js.q1 = n;
    int rc = 0;
    if (s->reuse_a)
        r->run_a = *s->reuse_a;
    else if ((rc = engine_run(s->a, &js, &r->run_a)))
        return rc;
    prog.lo = 0.1;
    if (s->reuse_b)
        r->run_b = *s->reuse_b;
    else if ((rc = engine_run(s->b, &js, &r->run_b)))
        return rc;

    /* 2. Pairs block of rows by block of rows. Start from the block that
     * the counts say fills about half a buffer. */
    double tp = engine_now();
    size_t bound = s->block_pairs ? s->block_pairs : CMP_BLOCK_PAIRS;
    uint64_t most = r->run_a.pairs > r->run_b.pairs ? r->run_a.pairs : r->run_b.pairs;
    double per_row = n ? (double)most / (double)n : 1;
    size_t rows = per_row > 0 ? (size_t)((double)bound / (2 * per_row)) : n;
    if (rows < 1)
        rows = 1;
    if (rows > n)
        rows = n;
    cmp_buf ba = {.bound = bound}, bb = {.bound = bound};
    size_t *offa = xmalloc((rows + 1) * sizeof *offa);
    size_t *offb = xmalloc((rows + 1) * sizeof *offb);
    size_t offcap = rows;
    cmp_acc acc;
    memset(&acc, 0, sizeof acc);

    size_t r0 = 0;
    while (r0 < n) {
        if (s->cancel && *s->cancel) {
            rc = err_set(TCJ_ECANCEL, "cancelled");
            break;
        }
        size_t r1 = r0 + rows < n ? r0 + rows : n;
        prog.lo = 0.2 + 0.8 * (double)r0 / (double)n;
        prog.span = 0.8 * (double)(r1 - r0) / (double)n / 2;
        rc = cmp_block_pairs(s, r0, r1, &ba, &bb, &prog);
        if (rc == 1) {
            /* Too many pairs for the buffers: halve the block and redo it;
             * a single row gets room for all its pairs (at most n). */
            r->redone++;
            if (rows > 1) {
                rows /= 2;
            } else if (ba.bound < n) {
                ba.bound = bb.bound = ba.bound * 2 < n ? ba.bound * 2 : n;
            } else {
                rc = err_set(TCJ_EINVAL, "an engine reported more than %zu pairs for row %zu", n,
                             r0);
                break;
            }
            continue;
        }
        if (rc)
            break;
        size_t nr = r1 - r0;
        if (nr > offcap) {
            offa = xrealloc(offa, (nr + 1) * sizeof *offa);
            offb = xrealloc(offb, (nr + 1) * sizeof *offb);
            offcap = nr;
        }
        cmp_buf_sort(&ba, r0, nr, offa);
        cmp_buf_sort(&bb, r0, nr, offb);
        for (size_t k = 0; k < nr; k++)
            cmp_merge_row(s, &r->side, &acc, r0 + k, ba.p + offa[k], offa[k + 1] - offa[k],
                          bb.p + offb[k], offb[k + 1] - offb[k]);
        r->blocks++;
        r0 = r1;
        /* Plenty of room left: try a larger block next. */
        if (ba.len < bound / 4 && bb.len < bound / 4 && rows < n)
            rows = rows * 2 < n ? rows * 2 : n;
        if (offcap < rows) {
            offa = xrealloc(offa, (rows + 1) * sizeof *offa);
            offb = xrealloc(offb, (rows + 1) * sizeof *offb);
            offcap = rows;
        }
    }
    free(ba.p);
    free(ba.tmp);
    free(bb.p);
    free(bb.tmp);
    free(offa);
    free(offb);
    r->pair_seconds = engine_now() - tp;

    cmp_side *sd = &r->side;
    sd->overlap = n ? acc.score_sum / (double)n : 1.0;
    if (acc.nerr) {
        sd->err_mean = acc.mean;
        sd->err_std = sqrt(acc.m2 / (double)acc.nerr);
        sd->err_min = acc.min;
        sd->err_max = acc.max;
    }
    if (acc.hist.w > 0) {
        sd->nbins = CMP_ERR_BINS;
        for (int b = 0; b < CMP_ERR_BINS; b++) {
            sd->bin_lo[b] = (b - CMP_HALF - 0.5) * acc.hist.w;
            sd->bin_hi[b] = (b - CMP_HALF + 0.5) * acc.hist.w;
            sd->bin_count[b] = acc.hist.c[b];
        }
    } else if (acc.nerr) {
        sd->nbins = 1;
        sd->bin_count[0] = acc.hist.zeros;
    }
    r->seconds = engine_now() - t0;
    if (!rc && s->progress)
        s->progress(s->progress_ctx, 1.0);
    return rc;
}

void cmp_side_ref(cmp_side *side, const char *engine, int64_t run_id)
{
    memset(side, 0, sizeof *side);
    side->engine = engine;
    side->run_id = run_id;
}

/* One-sided pairs per (d - eps)/eps bin, bins holding pairs only. */
static void rel_json(json_w *w, const char *key, const uint64_t *bins)
{
    json_w_arr(w, key);
    for (int b = 0; b < CMP_REL_BINS; b++) {
        if (!bins[b])
            continue;
        json_w_obj(w, NULL);
        json_w_dbl(w, "lo", cmp_rel_edges[b]);
        json_w_dbl(w, "hi", cmp_rel_edges[b + 1]);
        json_w_uint(w, "count", bins[b]);
        json_w_close(w);
    }
    json_w_close(w);
}

void cmp_side_accuracy_json(const cmp_side *sd, json_w *w)
{
    if (!sd->judged) {
        json_w_null(w, "accuracy");
        return;
    }
    json_w_obj(w, "accuracy");
    json_w_dbl(w, "overlap", sd->overlap);
    json_w_uint(w, "both", sd->both);
    json_w_uint(w, "only_engine", sd->only_engine);
    json_w_uint(w, "only_ref", sd->only_ref);
    json_w_dbl(w, "err_mean", sd->err_mean);
    json_w_dbl(w, "err_std", sd->err_std);
    json_w_dbl(w, "err_min", sd->err_min);
    json_w_dbl(w, "err_max", sd->err_max);
    json_w_dbl(w, "only_engine_rel_max", sd->only_engine_rel_max);
    json_w_dbl(w, "only_ref_rel_max", sd->only_ref_rel_max);
    json_w_arr(w, "histogram");
    for (size_t k = 0; k < sd->nbins; k++) {
        json_w_obj(w, NULL);
        json_w_dbl(w, "lo", sd->bin_lo[k]);
        json_w_dbl(w, "hi", sd->bin_hi[k]);
        json_w_uint(w, "count", sd->bin_count[k]);
        json_w_close(w);
    }
    json_w_close(w);
    rel_json(w, "only_engine_rel", sd->only_engine_rel);
    rel_json(w, "only_ref_rel", sd->only_ref_rel);
    json_w_close(w);
}
