#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "par.h"

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

/* Sort one row's pairs by j (par_for ranges of rows). */
typedef struct cmp_sort_job {
    cmp_pair *p;
    const size_t *off;
} cmp_sort_job;

static void cmp_sort_rows(void *ctx, int t, size_t a, size_t b)
{
    const cmp_sort_job *j = ctx;
    for (size_t r = a; r < b; r++) {
        cmp_pair *p = j->p + j->off[r];
        const size_t len = j->off[r + 1] - j->off[r];
        if (len > 48) {
            qsort(p, len, sizeof *p, cmp_by_j);
            continue;
        }
        /* A row of a few dozen pairs: insertion sort, no calls. */
        for (size_t x = 1; x < len; x++) {
            cmp_pair v = p[x];
            size_t y = x;
            for (; y > 0 && p[y - 1].j > v.j; y--)
                p[y] = p[y - 1];
            p[y] = v;
        }
    }
}

/* Sort a block's pairs by (i, j): count rows (off has rows+1 entries), place
 * into tmp, then sort each row by j, rows in parallel. The result is in
 * b->p; off[r] .. off[r+1] is row r0 + r. */
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
    cmp_sort_job job = {b->p, off};
    int nt;
    par_for(rows, b->len / (rows ? rows : 1) + 1, cmp_sort_rows, &job, &nt);
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

/* A pair only one side found, judged after the merge by its FP64
 * distance (in parallel: d operations each, the pass's costliest part
 * when a format loses many pairs). */
typedef struct cmp_one {
    uint32_t i, j;
    int ref; /* 1: only the reference found it */
} cmp_one;

typedef struct cmp_only_job {
    const dataset *ds;
    double eps;
    const cmp_one *one;
    double relmax[PAR_MAX_THREADS][2];
    uint64_t bins[PAR_MAX_THREADS][2][CMP_REL_BINS];
} cmp_only_job;

static void cmp_only_range(void *ctx, int t, size_t a, size_t b)
{
    cmp_only_job *j = ctx;
    for (size_t k = a; k < b; k++) {
        const cmp_one *o = &j->one[k];
        double rel = (cmp_dist64(j->ds, o->i, o->j) - j->eps) / j->eps;
        if (fabs(rel) > j->relmax[t][o->ref])
            j->relmax[t][o->ref] = fabs(rel);
        int bin = 0;
        while (bin < CMP_REL_BINS - 1 && rel >= cmp_rel_edges[bin + 1])
            bin++;
        j->bins[t][o->ref][bin]++;
    }
}

/* Counts and largest |rel| do not depend on the order, so the ranges'
 * results add up to what one thread would find. */
static void cmp_only_all(const dataset *ds, double eps, const cmp_one *one, size_t n, cmp_side *sd)
{
    if (!n)
        return;
    cmp_only_job *j = xcalloc(1, sizeof *j);
    j->ds = ds;
    j->eps = eps;
    j->one = one;
    int nt;
    par_for(n, ds->d, cmp_only_range, j, &nt);
    double *relmax[2] = {&sd->only_engine_rel_max, &sd->only_ref_rel_max};
    uint64_t *bins[2] = {sd->only_engine_rel, sd->only_ref_rel};
    for (int t = 0; t < nt; t++)
        for (int w = 0; w < 2; w++) {
            if (j->relmax[t][w] > *relmax[w])
                *relmax[w] = j->relmax[t][w];
            for (int b = 0; b < CMP_REL_BINS; b++)
                bins[w][b] += j->bins[t][w][b];
        }
    free(j);
}

/* Running state of one side's pair pass. */
typedef struct cmp_acc {
    double score_sum;
    uint64_t nerr;
    double mean, m2, min, max;
    cmp_hist hist;
} cmp_acc;

/* One pair both found: the error statistics. */
static void cmp_acc_add(cmp_acc *acc, double e)
{
    acc->nerr++;
    if (acc->nerr == 1 || e < acc->min)
        acc->min = e;
    if (acc->nerr == 1 || e > acc->max)
        acc->max = e;
    double dm = e - acc->mean;
    acc->mean += dm / (double)acc->nerr;
    acc->m2 += dm * (e - acc->mean);
    cmp_hist_add(&acc->hist, e);
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

/* ---- the pair pass: one reference, any number of judged engines ---- */

typedef struct cmp_pass_st {
    cmp_side side;
    cmp_acc acc;
    size_t blocks, redone;
    double seconds;
} cmp_pass_st;

struct cmp_pass {
    cmp_spec s; /* b is the reference; a unused */
    size_t n, rows, nsides;
    size_t r0, r1; /* the current block */
    int started;
    cmp_buf ref;  /* the reference's pairs of the block, sorted by (i, j) */
    size_t *roff; /* row r0 + r's pairs: ref.p[roff[r] .. roff[r + 1]) */
    size_t roffcap;
    size_t side_bound; /* most pairs one side may find that the reference has not */
    /* One side's run, looked up in ref as its pairs stream in (cmp_look):
     * per reference pair whether the side found it and its d2 there, per
     * row the side's count, and the pairs only one of them found. */
    uint8_t *hit;
    double *sd2;
    size_t hitcap;
    uint32_t *cnt;
    size_t cntcap;
    cmp_one *one;
    size_t onecap;
    size_t ref_blocks, ref_redone;
    double ref_seconds;
    double engine_seconds; /* wall time inside the engines' PAIRS runs */
    cmp_pass_st *sd;
};

cmp_pass *cmp_pass_new(const cmp_spec *s, uint64_t most_pairs, size_t nsides)
{
    cmp_pass *m = xcalloc(1, sizeof *m);
    m->s = *s;
    m->n = s->ds ? s->ds->n : 0;
    m->nsides = nsides;
    m->sd = xcalloc(nsides ? nsides : 1, sizeof *m->sd);
    size_t bound = s->block_pairs ? s->block_pairs : CMP_BLOCK_PAIRS;
    m->ref.bound = m->side_bound = bound;
    /* Every row at once when the pairs fit (an engine finds the same pairs
     * in PAIRS mode as in its COUNT run); else blocks the counts say fill
     * about half a buffer. A block that overflows is halved and redone. */
    if (most_pairs <= bound) {
        m->rows = m->n;
    } else {
        double per_row = m->n ? (double)most_pairs / (double)m->n : 1;
        m->rows = (size_t)((double)bound / (2 * per_row));
    }
    if (m->rows < 1)
        m->rows = 1;
    if (m->rows > m->n)
        m->rows = m->n;
    /* The reference's buffer at its likely size at once: growing it by
     * doubling copies and faults in its pages again. */
    size_t want = most_pairs + most_pairs / 16 + 4096;
    m->ref.cap = want < bound ? want : bound;
    m->ref.p = xmalloc(m->ref.cap * sizeof *m->ref.p);
    return m;
}

void cmp_pass_free(cmp_pass *m)
{
    if (!m)
        return;
    free(m->ref.p);
    free(m->ref.tmp);
    free(m->roff);
    free(m->hit);
    free(m->sd2);
    free(m->cnt);
    free(m->one);
    free(m->sd);
    free(m);
}

static void cmp_grow_off(size_t **off, size_t *cap, size_t rows)
{
    if (!*off || rows > *cap) {
        *off = xrealloc(*off, (rows + 1) * sizeof **off);
        *cap = rows;
    }
}

/* Progress of engine slot (0: the reference, k + 1: side k) within the
 * current block: the block's share of the rows, cut in equal slots. */
static void cmp_pass_prog(const cmp_pass *m, size_t q0, size_t q1, int slot, cmp_prog *pg)
{
    const double n = m->n ? (double)m->n : 1, per = (double)(q1 - q0) / (double)(m->nsides + 1);
    pg->s = &m->s;
    pg->lo = ((double)q0 + per * slot) / n;
    pg->span = per / n;
}

/* engine e's pairs of rows [q0, q1) into sink put(ctx): 0, 1 when *overflow
 * was set (nothing to keep), or an error code. */
static int cmp_pairs(cmp_pass *m, const engine *e, size_t q0, size_t q1, int slot,
                     int (*put)(void *, const pair_batch *), void *ctx, const int *overflow)
{
    cmp_prog pg;
    cmp_pass_prog(m, q0, q1, slot, &pg);
    join_spec js;
    join_result jr;
    cmp_spec_base(&m->s, &js, &pg);
    js.mode = JOIN_PAIRS;
    js.q0 = q0;
    js.q1 = q1;
    js.sink.put = put;
    js.sink.ctx = ctx;
    const double t0 = engine_now();
    int rc = engine_run(e, &js, &jr);
    m->engine_seconds += engine_now() - t0;
    if (*overflow)
        return 1;
    return rc;
}

/* After an overflow: halve the rows, or give a single row room for all
 * its pairs (at most n). */
static int cmp_shrink(size_t *rows, size_t *bound, size_t n, size_t row)
{
    if (*rows > 1) {
        *rows /= 2;
        return 0;
    }
    if (*bound < n) {
        *bound = *bound * 2 < n ? *bound * 2 : n;
        return 0;
    }
    return err_set(TCJ_EINVAL, "an engine reported more than %zu pairs for row %zu", n, row);
}

int cmp_pass_block(cmp_pass *m, size_t *r0_out, size_t *r1_out)
{
    if (m->n == 0 || (m->started && m->r1 >= m->n))
        return 0;
    const size_t r0 = m->started ? m->r1 : 0;
    m->started = 1;
    const double t0 = engine_now();
    for (;;) {
        if (m->s.cancel && *m->s.cancel)
            return err_set(TCJ_ECANCEL, "cancelled");
        const size_t r1 = r0 + m->rows < m->n ? r0 + m->rows : m->n;
        m->ref.len = 0;
        m->ref.overflow = 0;
        int rc = cmp_pairs(m, m->s.b, r0, r1, 0, cmp_buf_put, &m->ref, &m->ref.overflow);
        if (rc == 1) {
            m->ref_redone++;
            if ((rc = cmp_shrink(&m->rows, &m->ref.bound, m->n, r0)))
                return rc;
            continue;
        }
        if (rc)
            return rc;
        m->r0 = r0;
        m->r1 = r1;
        cmp_grow_off(&m->roff, &m->roffcap, r1 - r0);
        cmp_buf_sort(&m->ref, r0, r1 - r0, m->roff);
        m->ref_blocks++;
        /* Plenty of room left: try a larger block next. */
        if (m->ref.len < m->ref.bound / 4 && m->rows < m->n)
            m->rows = m->rows * 2 < m->n ? m->rows * 2 : m->n;
        m->ref_seconds += engine_now() - t0;
        *r0_out = r0;
        *r1_out = r1;
        return 1;
    }
}

/* One side's run over rows [q0, q1) of the block, as its pairs stream in. */
typedef struct cmp_look {
    cmp_pass *m;
    size_t q0, q1;
    size_t none; /* one-sided pairs so far */
    int overflow;
} cmp_look;

/* Find each pair in the reference's row (sorted by j): the first time
 * marks it found and keeps the side's d2; a pair the reference has not
 * (or a repeat) is the side's alone. */
static int cmp_look_put(void *ctx, const pair_batch *b)
{
    cmp_look *L = ctx;
    cmp_pass *m = L->m;
    for (size_t k = 0; k < b->k; k++) {
        const uint32_t i = b->i[k], j = b->j[k];
        if (i < L->q0 || i >= L->q1 || j >= m->n)
            return err_set(TCJ_EINVAL, "an engine reported the pair (%u, %u) outside rows %zu..%zu",
                           i, j, L->q0, L->q1 - 1);
        m->cnt[i - L->q0]++;
        const size_t end = m->roff[i - m->r0 + 1];
        size_t lo = m->roff[i - m->r0], hi = end;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->ref.p[mid].j < j)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo < end && m->ref.p[lo].j == j && !m->hit[lo]) {
            m->hit[lo] = 1;
            m->sd2[lo] = b->d2[k];
        } else {
            if (L->none == m->side_bound) {
                L->overflow = 1;
                return err_set(TCJ_ENOMEM, "comparison block buffer full");
            }
            m->one[L->none++] = (cmp_one){i, j, 0};
        }
    }
    return 0;
}

/* Rows [q0, q1) once the side's run is in, in (i, j) order as a merge of
 * two sorted lists would visit them: errors of the pairs both found,
 * the reference's pairs the side missed, the overlap per row. */
static void cmp_look_rows(cmp_pass *m, cmp_pass_st *sd, cmp_look *L)
{
    for (size_t q = L->q0; q < L->q1; q++) {
        const size_t a = m->roff[q - m->r0], b = m->roff[q - m->r0 + 1];
        size_t inter = 0;
        for (size_t p = a; p < b; p++) {
            if (m->hit[p]) {
                cmp_acc_add(&sd->acc, sqrt(m->sd2[p]) - sqrt(m->ref.p[p].d2));
                inter++;
            } else {
                sd->side.only_ref++;
                m->one[L->none++] = (cmp_one){(uint32_t)q, m->ref.p[p].j, 1};
            }
        }
        const size_t na = m->cnt[q - L->q0], nb = b - a, uni = na + nb - inter;
        sd->side.only_engine += na - inter;
        sd->side.both += inter;
        sd->acc.score_sum += uni ? (double)inter / (double)uni : 1.0;
    }
}

int cmp_pass_side(cmp_pass *m, size_t k, const engine *a)
{
    cmp_pass_st *sd = &m->sd[k];
    const double t0 = engine_now();
    sd->side.engine = a->name;
    sd->side.judged = 1;
    const size_t nref = m->ref.len, nrows = m->r1 - m->r0;
    if (nref > m->hitcap) {
        free(m->hit);
        free(m->sd2);
        m->hit = xmalloc(nref * sizeof *m->hit);
        m->sd2 = xmalloc(nref * sizeof *m->sd2);
        m->hitcap = nref;
    }
    if (nrows > m->cntcap) {
        free(m->cnt);
        m->cnt = xmalloc(nrows * sizeof *m->cnt);
        m->cntcap = nrows;
    }
    size_t q0 = m->r0, rows = nrows;
    int rc = 0;
    while (q0 < m->r1) {
        if (m->s.cancel && *m->s.cancel) {
            rc = err_set(TCJ_ECANCEL, "cancelled");
            break;
        }
        const size_t q1 = q0 + rows < m->r1 ? q0 + rows : m->r1;
        const size_t a0 = m->roff[q0 - m->r0], a1 = m->roff[q1 - m->r0];
        /* Room for the side's own pairs and every reference pair it misses. */
        if (m->side_bound + (a1 - a0) > m->onecap) {
            free(m->one);
            m->onecap = m->side_bound + (a1 - a0);
            m->one = xmalloc(m->onecap * sizeof *m->one);
        }
        memset(m->hit + a0, 0, a1 - a0);
        memset(m->cnt, 0, (q1 - q0) * sizeof *m->cnt);
        cmp_look L = {m, q0, q1, 0, 0};
        rc = cmp_pairs(m, a, q0, q1, (int)k + 1, cmp_look_put, &L, &L.overflow);
        if (rc == 1) {
            /* More pairs of its own than the bound holds: split the block
             * for this engine only; the reference's pairs stay. */
            sd->redone++;
            if ((rc = cmp_shrink(&rows, &m->side_bound, m->n, q0)))
                break;
            continue;
        }
        if (rc)
            break;
        cmp_look_rows(m, sd, &L);
        cmp_only_all(m->s.ds, m->s.eps, m->one, L.none, &sd->side);
        sd->blocks++;
        q0 = q1;
    }
    sd->seconds += engine_now() - t0;
    return rc;
}

void cmp_pass_result(const cmp_pass *m, size_t k, cmp_result *r)
{
    const cmp_pass_st *ps = &m->sd[k];
    const cmp_acc *acc = &ps->acc;
    cmp_side *sd = &r->side;
    *sd = ps->side;
    sd->judged = 1;
    sd->overlap = m->n ? acc->score_sum / (double)m->n : 1.0;
    if (acc->nerr) {
        sd->err_mean = acc->mean;
        sd->err_std = sqrt(acc->m2 / (double)acc->nerr);
        sd->err_min = acc->min;
        sd->err_max = acc->max;
    }
    if (acc->hist.w > 0) {
        sd->nbins = CMP_ERR_BINS;
        for (int b = 0; b < CMP_ERR_BINS; b++) {
            sd->bin_lo[b] = (b - CMP_HALF - 0.5) * acc->hist.w;
            sd->bin_hi[b] = (b - CMP_HALF + 0.5) * acc->hist.w;
            sd->bin_count[b] = acc->hist.c[b];
        }
    } else if (acc->nerr) {
        sd->nbins = 1;
        sd->bin_count[0] = acc->hist.zeros;
    }
    r->blocks = ps->blocks;
    r->redone = m->ref_redone + ps->redone;
    r->pair_seconds = m->ref_seconds + ps->seconds;
}

void cmp_pass_times(const cmp_pass *m, double *seconds, double *engine_seconds)
{
    double t = m->ref_seconds;
    for (size_t k = 0; k < m->nsides; k++)
        t += m->sd[k].seconds;
    *seconds = t;
    *engine_seconds = m->engine_seconds;
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

    /* 2. The pair pass, block of rows by block of rows (its progress
     * mapped onto the last 80%). */
    cmp_spec ps = *s;
    cmp_prog outer = {.s = s, .lo = 0.2, .span = 0.8};
    if (s->progress) {
        ps.progress = cmp_prog_fn;
        ps.progress_ctx = &outer;
    }
    uint64_t most = r->run_a.pairs > r->run_b.pairs ? r->run_a.pairs : r->run_b.pairs;
    cmp_pass *m = cmp_pass_new(&ps, most, 1);
    size_t r0, r1;
    while ((rc = cmp_pass_block(m, &r0, &r1)) == 1)
        if ((rc = cmp_pass_side(m, 0, s->a)))
            break;
    cmp_pass_result(m, 0, r);
    r->side.engine = s->a->name;
    cmp_pass_free(m);
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
