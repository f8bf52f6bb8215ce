#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
    size_t bound;     /* most pairs this buffer may hold */
    size_t q0, q1, n; /* the rows asked for, and the rows of the dataset */
    int overflow;
    uint32_t *at; /* the sort's per-range row counts, kept: fresh pages fault */
    size_t atcap;
} cmp_buf;

/* The pass's buffers hold millions of pairs and are written once through:
 * on 4 KiB pages the first touch of each page is a fault, which costs more
 * than the sorting. Large ones ask for transparent huge pages. */
static void *cmp_alloc(size_t bytes)
{
    const size_t huge = (size_t)2 << 20;
    if (bytes < 2 * huge)
        return xmalloc(bytes);
    void *p = NULL;
    if (posix_memalign(&p, huge, (bytes + huge - 1) / huge * huge) != 0)
        return xmalloc(bytes);
#ifdef MADV_HUGEPAGE
    madvise(p, (bytes + huge - 1) / huge * huge, MADV_HUGEPAGE);
#endif
    return p;
}

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
        cmp_pair *np = cmp_alloc(cap * sizeof *np);
        if (buf->len)
            memcpy(np, buf->p, buf->len * sizeof *np);
        free(buf->p);
        buf->p = np;
        buf->cap = cap;
    }
    for (size_t k = 0; k < b->k; k++) {
        if (b->i[k] < buf->q0 || b->i[k] >= buf->q1 || b->j[k] >= buf->n)
            return err_set(TCJ_EINVAL, "an engine reported the pair (%u, %u) outside rows %zu..%zu",
                           b->i[k], b->j[k], buf->q0, buf->q1 - 1);
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

/* Sorting a block's pairs by (i, j): a counting sort by row over fixed
 * ranges of the pairs (each range counts its rows, then places its pairs
 * after those of the ranges before it, so the result does not depend on
 * the threads), then each row by j. */
typedef struct cmp_sort_job {
    const cmp_pair *src;
    cmp_pair *dst;
    size_t r0, rows;
    uint32_t *at; /* [range][row]: its count, then its next place */
    size_t *off;
} cmp_sort_job;

static void cmp_sort_count(void *ctx, int t, size_t a, size_t b)
{
    cmp_sort_job *j = ctx;
    uint32_t *c = j->at + (size_t)t * j->rows;
    for (size_t k = a; k < b; k++)
        c[j->src[k].i - j->r0]++;
}

static void cmp_sort_place(void *ctx, int t, size_t a, size_t b)
{
    cmp_sort_job *j = ctx;
    uint32_t *c = j->at + (size_t)t * j->rows;
    for (size_t k = a; k < b; k++)
        j->dst[c[j->src[k].i - j->r0]++] = j->src[k];
}

static void cmp_sort_rows(void *ctx, int t, size_t a, size_t b)
{
    const cmp_sort_job *j = ctx;
    for (size_t r = a; r < b; r++) {
        cmp_pair *p = j->dst + j->off[r];
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

/* Sort b's pairs of rows r0 .. r0 + rows - 1 by (i, j) into b->p, with
 * off[r] .. off[r + 1] row r0 + r (off has rows + 1 entries). */
static void cmp_buf_sort(cmp_buf *b, size_t r0, size_t rows, size_t *off)
{
    if (b->tmpcap < b->cap) {
        free(b->tmp);
        b->tmp = cmp_alloc(b->cap * sizeof *b->tmp);
        b->tmpcap = b->cap;
    }
    /* One range when the per-range counts would be large (many rows). */
    int k = par_ranges(b->len, 1);
    if ((size_t)k * rows > ((size_t)1 << 24))
        k = 1;
    if ((size_t)k * rows > b->atcap) {
        free(b->at);
        b->atcap = (size_t)k * rows;
        b->at = xmalloc(b->atcap * sizeof *b->at);
    }
    memset(b->at, 0, (size_t)k * rows * sizeof *b->at);
    cmp_sort_job job = {b->p, b->tmp, r0, rows, b->at, off};
    int nt;
    if (k > 1)
        par_for(b->len, 1, cmp_sort_count, &job, &nt);
    else
        cmp_sort_count(&job, 0, 0, b->len);
    size_t pos = 0;
    for (size_t r = 0; r < rows; r++) {
        off[r] = pos;
        for (int t = 0; t < k; t++) {
            uint32_t c = job.at[(size_t)t * rows + r];
            job.at[(size_t)t * rows + r] = (uint32_t)pos;
            pos += c;
        }
    }
    off[rows] = pos;
    if (k > 1)
        par_for(b->len, 1, cmp_sort_place, &job, &nt);
    else
        cmp_sort_place(&job, 0, 0, b->len);
    cmp_pair *t = b->p;
    b->p = b->tmp;
    b->tmp = t;
    size_t c = b->cap;
    b->cap = b->tmpcap;
    b->tmpcap = c;
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
    /* The two rows widened to FP64 (on the stack unless d is large). */
    double sa[256], sb[256];
    double *ba = ds->d <= 256 ? sa : xmalloc(ds->d * sizeof *ba);
    double *bb = ds->d <= 256 ? sb : xmalloc(ds->d * sizeof *bb);
    const double *a = dataset_row_f64(ds, i, ba), *b = dataset_row_f64(ds, j, bb);
    double s = 0;
    for (size_t k = 0; k < ds->d; k++) {
        double u = a[k] - b[k];
        s += u * u;
    }
    if (ba != sa) {
        free(ba);
        free(bb);
    }
    return sqrt(s);
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
    cmp_buf side; /* one side's pairs of (part of) the block, sorted the same way */
    size_t *soff;
    size_t soffcap;
    double *score; /* the overlap of each row of the side's block */
    size_t scorecap;
    double *err[PAR_MAX_THREADS]; /* each merge range's errors, kept */
    size_t errcap[PAR_MAX_THREADS];
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
    m->ref.bound = m->side.bound = bound;
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
    m->ref.p = cmp_alloc(m->ref.cap * sizeof *m->ref.p);
    m->side.cap = m->ref.cap;
    m->side.p = cmp_alloc(m->side.cap * sizeof *m->side.p);
    return m;
}

void cmp_pass_free(cmp_pass *m)
{
    if (!m)
        return;
    free(m->ref.p);
    free(m->ref.tmp);
    free(m->roff);
    free(m->side.p);
    free(m->side.tmp);
    free(m->soff);
    free(m->score);
    free(m->ref.at);
    free(m->side.at);
    for (int t = 0; t < PAR_MAX_THREADS; t++)
        free(m->err[t]);
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

/* engine e's pairs of rows [q0, q1) into buf (emptied first): 0, 1 when buf
 * overflowed (nothing to keep), or an error code. */
static int cmp_pairs(cmp_pass *m, const engine *e, size_t q0, size_t q1, int slot, cmp_buf *buf)
{
    buf->len = 0;
    buf->overflow = 0;
    buf->q0 = q0;
    buf->q1 = q1;
    buf->n = m->n;
    cmp_prog pg;
    cmp_pass_prog(m, q0, q1, slot, &pg);
    join_spec js;
    join_result jr;
    cmp_spec_base(&m->s, &js, &pg);
    js.mode = JOIN_PAIRS;
    js.q0 = q0;
    js.q1 = q1;
    js.sink.put = cmp_buf_put;
    js.sink.ctx = buf;
    const double t0 = engine_now();
    int rc = engine_run(e, &js, &jr);
    m->engine_seconds += engine_now() - t0;
    if (buf->overflow)
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
            return err_set(TCJ_ECANCEL, ERR_CANCELLED);
        const size_t r1 = r0 + m->rows < m->n ? r0 + m->rows : m->n;
        int rc = cmp_pairs(m, m->s.b, r0, r1, 0, &m->ref);
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

/* Merging a side's sorted pairs with the reference's, over fixed ranges of
 * rows in parallel. Each range keeps its own counts, the errors of the
 * pairs both found in (i, j) order, and judges the one-sided pairs by
 * their FP64 distance (the costliest part when a format loses many); the
 * errors and the rows' overlaps are then added up in row order on one
 * thread, so every statistic is what one sequential merge would give. */
typedef struct cmp_merge_job {
    cmp_pass *m;
    size_t q0;        /* the side's first row */
    const size_t *ro; /* the reference's offsets from row q0 */
    double *score;    /* per row from q0 */
    uint64_t both[PAR_MAX_THREADS], only_e[PAR_MAX_THREADS], only_r[PAR_MAX_THREADS];
    double relmax[PAR_MAX_THREADS][2];
    uint64_t bins[PAR_MAX_THREADS][2][CMP_REL_BINS];
    double *err[PAR_MAX_THREADS];
    size_t nerr[PAR_MAX_THREADS];
} cmp_merge_job;

static void cmp_judge(cmp_merge_job *j, int t, size_t i, uint32_t jj, int ref)
{
    const cmp_pass *m = j->m;
    double rel = (cmp_dist64(m->s.ds, i, jj) - m->s.eps) / m->s.eps;
    if (fabs(rel) > j->relmax[t][ref])
        j->relmax[t][ref] = fabs(rel);
    int bin = 0;
    while (bin < CMP_REL_BINS - 1 && rel >= cmp_rel_edges[bin + 1])
        bin++;
    j->bins[t][ref][bin]++;
}

static void cmp_merge_range(void *ctx, int t, size_t r0, size_t r1)
{
    cmp_merge_job *j = ctx;
    cmp_pass *m = j->m;
    const size_t *so = m->soff, *ro = j->ro;
    size_t na_all = so[r1] - so[r0], nb_all = ro[r1] - ro[r0];
    size_t want = na_all < nb_all ? na_all : nb_all;
    if (want > m->errcap[t]) {
        free(m->err[t]);
        m->err[t] = cmp_alloc(want * sizeof *m->err[t]);
        m->errcap[t] = want;
    }
    double *err = m->err[t];
    size_t ne = 0;
    for (size_t r = r0; r < r1; r++) {
        const size_t i = j->q0 + r;
        const cmp_pair *a = m->side.p + so[r], *b = m->ref.p + ro[r];
        const size_t na = so[r + 1] - so[r], nb = ro[r + 1] - ro[r];
        size_t x = 0, y = 0, inter = 0;
        while (x < na || y < nb) {
            if (y == nb || (x < na && a[x].j < b[y].j)) {
                j->only_e[t]++;
                cmp_judge(j, t, i, a[x++].j, 0);
            } else if (x == na || b[y].j < a[x].j) {
                j->only_r[t]++;
                cmp_judge(j, t, i, b[y++].j, 1);
            } else {
                err[ne++] = sqrt(a[x].d2) - sqrt(b[y].d2);
                inter++;
                x++;
                y++;
            }
        }
        size_t uni = na + nb - inter;
        j->score[r] = uni ? (double)inter / (double)uni : 1.0;
        j->both[t] += inter;
    }
    j->err[t] = err;
    j->nerr[t] = ne;
}

static void cmp_merge(cmp_pass *m, cmp_pass_st *sd, size_t q0, size_t nr)
{
    if (nr > m->scorecap) {
        free(m->score);
        m->score = xmalloc(nr * sizeof *m->score);
        m->scorecap = nr;
    }
    cmp_merge_job *j = xcalloc(1, sizeof *j);
    j->m = m;
    j->q0 = q0;
    j->ro = m->roff + (q0 - m->r0);
    j->score = m->score;
    const size_t pairs = m->side.len + (j->ro[nr] - j->ro[0]);
    int nt;
    par_for(nr, pairs / (nr ? nr : 1) + 1, cmp_merge_range, j, &nt);
    cmp_side *s = &sd->side;
    double *relmax[2] = {&s->only_engine_rel_max, &s->only_ref_rel_max};
    uint64_t *bins[2] = {s->only_engine_rel, s->only_ref_rel};
    for (int t = 0; t < nt; t++) {
        s->both += j->both[t];
        s->only_engine += j->only_e[t];
        s->only_ref += j->only_r[t];
        for (int w = 0; w < 2; w++) {
            if (j->relmax[t][w] > *relmax[w])
                *relmax[w] = j->relmax[t][w];
            for (int b = 0; b < CMP_REL_BINS; b++)
                bins[w][b] += j->bins[t][w][b];
        }
        for (size_t e = 0; e < j->nerr[t]; e++)
            cmp_acc_add(&sd->acc, j->err[t][e]);
    }
    for (size_t r = 0; r < nr; r++)
        sd->acc.score_sum += m->score[r];
    free(j);
}

int cmp_pass_side(cmp_pass *m, size_t k, const engine *a)
{
    cmp_pass_st *sd = &m->sd[k];
    const double t0 = engine_now();
    sd->side.engine = a->name;
    sd->side.judged = 1;
    size_t q0 = m->r0, rows = m->r1 - m->r0;
    int rc = 0;
    while (q0 < m->r1) {
        if (m->s.cancel && *m->s.cancel) {
            rc = err_set(TCJ_ECANCEL, ERR_CANCELLED);
            break;
        }
        const size_t q1 = q0 + rows < m->r1 ? q0 + rows : m->r1;
        rc = cmp_pairs(m, a, q0, q1, (int)k + 1, &m->side);
        if (rc == 1) {
            /* More pairs than the bound holds: split the block for this
             * engine only; the reference's pairs stay sorted. */
            sd->redone++;
            if ((rc = cmp_shrink(&rows, &m->side.bound, m->n, q0)))
                break;
            continue;
        }
        if (rc)
            break;
        cmp_grow_off(&m->soff, &m->soffcap, q1 - q0);
        cmp_buf_sort(&m->side, q0, q1 - q0, m->soff);
        cmp_merge(m, sd, q0, q1 - q0);
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

/* The engines a[0..na) judged against s->b: their clean COUNT runs (or the
 * stored ones standing for them), the reference's, then one pair pass. */
static int cmp_run_sides(const cmp_spec *s, const engine *const *a, const join_result *const *reuse,
                         size_t na, cmp_result *const *out)
{
    double t0 = engine_now();
    const size_t n = s->ds ? s->ds->n : 0;
    for (size_t k = 0; k < na; k++) {
        cmp_result *r = out[k];
        memset(r, 0, sizeof *r);
        r->engine_a = a[k]->name;
        r->engine_b = s->b->name;
        r->eps = s->eps;
        r->side.engine = a[k]->name;
        r->side.judged = 1;
    }
    /* 1. Clean timed runs that only count: a tenth of the progress each. */
    const double share = 0.2 / (double)(na + 1);
    cmp_prog prog = {.s = s, .lo = 0, .span = share};
    join_spec js;
    cmp_spec_base(s, &js, &prog);
    js.mode = JOIN_COUNT;
    js.q0 = 0;
    js.q1 = n;
    int rc = 0;
    uint64_t most = 0;
    for (size_t k = 0; k < na; k++, prog.lo += share) {
        if (reuse[k])
            out[k]->run_a = *reuse[k];
        else if ((rc = engine_run(a[k], &js, &out[k]->run_a)))
            return rc;
        if (out[k]->run_a.pairs > most)
            most = out[k]->run_a.pairs;
    }
    if (s->reuse_b)
        out[0]->run_b = *s->reuse_b;
    else if ((rc = engine_run(s->b, &js, &out[0]->run_b)))
        return rc;
    for (size_t k = 1; k < na; k++)
        out[k]->run_b = out[0]->run_b;
    if (out[0]->run_b.pairs > most)
        most = out[0]->run_b.pairs;

    /* 2. The pair pass, block of rows by block of rows (its progress
     * mapped onto the last 80%). */
    cmp_spec ps = *s;
    cmp_prog outer = {.s = s, .lo = 0.2, .span = 0.8};
    if (s->progress) {
        ps.progress = cmp_prog_fn;
        ps.progress_ctx = &outer;
    }
    cmp_pass *m = cmp_pass_new(&ps, most, na);
    size_t r0, r1;
    while (!rc && (rc = cmp_pass_block(m, &r0, &r1)) == 1) {
        rc = 0;
        for (size_t k = 0; !rc && k < na; k++)
            rc = cmp_pass_side(m, k, a[k]);
    }
    for (size_t k = 0; k < na; k++) {
        cmp_pass_result(m, k, out[k]);
        out[k]->side.engine = a[k]->name;
        out[k]->seconds = engine_now() - t0;
    }
    cmp_pass_free(m);
    if (!rc && s->progress)
        s->progress(s->progress_ctx, 1.0);
    return rc;
}

int cmp_run(const cmp_spec *s, cmp_result *r)
{
    const engine *a[1] = {s->a};
    const join_result *reuse[1] = {s->reuse_a};
    cmp_result *out[1] = {r};
    return cmp_run_sides(s, a, reuse, 1, out);
}

int cmp_run2(const cmp_spec *s, const engine *a2, const join_result *reuse_a2, cmp_result *r,
             cmp_result *r2)
{
    const engine *a[2] = {s->a, a2};
    const join_result *reuse[2] = {s->reuse_a, reuse_a2};
    cmp_result *out[2] = {r, r2};
    return cmp_run_sides(s, a, reuse, 2, out);
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
