/* A dataset larger than the device (or `set gpu-mem`): the rows cut into
 * chunks, an engine run per chunk and per pair of chunks, their outputs
 * put together as the whole run's (kernels.h, kern_stream_run). Pure host
 * code over any engine entry: it only calls fn, so a CPU build and the
 * unit tests (tests/unit/t_stream.c, over an FP64 CPU engine that keeps
 * the same contract) run it as the GPU build does.
 *
 * Chunk k holds rows [kR, min(n, (k+1)R)). Chunk k's own pairs are an
 * ordinary run over its rows (x points into the dataset, no copy). The
 * pairs between chunks a and b are a cross run: queries are a's rows,
 * candidates b's, from c0 = R on, so the engine holds at most 2R rows.
 * A symmetric engine finds each such pair once and counts it in both
 * orders; one that runs it unsymmetric (fp64, ted's PAIRS) says so in its
 * result's symmetric, and the pair (b, a) is then run too. An engine that
 * takes no cross run (KERN_ECROSS: a grid index over every row) is cut in
 * slabs instead (kernels/kern_stream_slab.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_stream.h"
#include "kernels.h"

static int stream_pairs(void *ctx, size_t k, const uint32_t *i, const uint32_t *j, const double *d2)
{
    stream_ctx *c = ctx;
    const stream_map *m = &c->m;
    if (!m->map && m->a0 == 0 && (m->c0 == 0 || m->b0 == m->c0)) {
        /* Rows are the dataset's (the whole run, counted for its retry):
         * handed on as they are, since a copy into fresh buffers costs
         * more than the sink (measured: docs/history/ACCURACY-2026-11.md,
         * "exact over clusters"). */
        c->emitted++;
        return c->a->pair_fn(c->a->pair_ctx, k, i, j, d2);
    }
    if (k > c->tcap) {
        uint32_t *ti = realloc(c->ti, k * sizeof *ti),
                 *tj = ti ? realloc(c->tj, k * sizeof *tj) : 0;
        if (ti)
            c->ti = ti;
        if (!ti || !tj) {
            c->failed = 1;
            return 1;
        }
        c->tj = tj;
        c->tcap = k;
    }
    for (size_t t = 0; t < k; t++) {
        c->ti[t] = stream_row(&c->m, i[t]);
        c->tj[t] = stream_row(&c->m, j[t]);
    }
    c->emitted++;
    return c->a->pair_fn(c->a->pair_ctx, k, c->ti, c->tj, d2);
}

static void stream_progress(void *ctx, double frac)
{
    stream_ctx *c = ctx;
    if (c->a->progress && c->total > 0) {
        /* Never backwards: the total grows when an engine turns out to
         * run cross runs one way. */
        double f = (c->done + frac * c->work) / c->total;
        f = f < 1.0 ? f : 1.0;
        c->shown = f > c->shown ? f : c->shown;
        c->a->progress(c->a->progress_ctx, c->shown);
    }
}

/* A run's content hash: the dataset's, mixed with which rows it holds, so
 * no device cache mistakes one chunk (pair) for another or for the whole. */
uint64_t stream_hash(uint64_t h, size_t a, size_t b, size_t R)
{
    uint64_t v = h ^ (0x9e3779b97f4a7c15ull * (a + 1)) ^ (0xc2b2ae3d27d4eb4full * (b + 1)) ^ R;
    v ^= v >> 31;
    v *= 0xbf58476d1ce4e5b9ull;
    return v ^ (v >> 29);
}

void stream_merge(kern_join_result *r, const kern_join_result *x, int first)
{
    if (first) {
        const kern_join_result cut = *r;
        *r = *x;
        r->chunks = cut.chunks;
        r->chunk_rows = cut.chunk_rows;
        r->slabs = cut.slabs;
        r->slab_dim = cut.slab_dim;
        r->halo_rows = cut.halo_rows;
        r->chunk_runs = 1;
        return;
    }
    r->pairs += x->pairs;
    r->examined += x->examined;
    r->skipped += x->skipped;
    r->t_h2d += x->t_h2d;
    r->t_convert += x->t_convert;
    r->t_prep += x->t_prep;
    r->t_kernel += x->t_kernel;
    r->t_d2h += x->t_d2h;
    r->t_sink += x->t_sink;
    r->cache_hit = r->cache_hit && x->cache_hit;
    r->launches += x->launches;
    r->refills += x->refills;
    if (x->pair_cap && (!r->pair_cap || x->pair_cap < r->pair_cap))
        r->pair_cap = x->pair_cap;
    if (x->mem_peak > r->mem_peak)
        r->mem_peak = x->mem_peak;
    r->shrunk |= x->shrunk;
    kern_exact_add(&r->ex, &x->ex);
    r->centred |= x->centred;
    for (int t = 0; t < x->ndevices && t < r->ndevices; t++) {
        r->share[t].items += x->share[t].items;
        r->share[t].launches += x->share[t].launches;
        r->share[t].t_kernel += x->share[t].t_kernel;
        r->share[t].pairs += x->share[t].pairs;
    }
    r->chunk_runs++;
}

int stream_out_open(const kern_join_args *a, stream_out *o, size_t run_rows, const char *what)
{
    memset(o, 0, sizeof *o);
    int oom = 0;
    if (a->mode == KJOIN_PERPOINT) {
        o->counts = calloc(a->n, sizeof *o->counts);
        o->rc = calloc(run_rows, sizeof *o->rc);
        oom = !o->counts || !o->rc;
    }
    if (a->mode == KJOIN_HIST) {
        o->hist = calloc(a->hist_nbins, sizeof *o->hist);
        o->rh = calloc(a->hist_nbins, sizeof *o->rh);
        oom = !o->hist || !o->rh;
    }
    if (!oom)
        return KERN_OK;
    stream_out_close(a, o, 0);
    char m[256];
    snprintf(m, sizeof m, "out of host memory for %s", what);
    return kern_fail_msg(KERN_ENOMEM, m);
}

void stream_out_close(const kern_join_args *a, stream_out *o, int ok)
{
    if (ok && a->mode == KJOIN_PERPOINT)
        memcpy(a->counts, o->counts, a->n * sizeof *o->counts);
    if (ok && a->mode == KJOIN_HIST) {
        memcpy(a->hist, o->hist, a->hist_nbins * sizeof *o->hist);
        *a->hist_below = o->below;
    }
    free(o->counts);
    free(o->rc);
    free(o->hist);
    free(o->rh);
    memset(o, 0, sizeof *o);
}

/* A fresh attempt at a cut of B chunks of R rows whose runs weigh total:
 * r, progress and o's whole-run arrays start from nothing, and what the
 * failed attempt left cached on the device makes room. */
void stream_begin(const kern_join_args *a, stream_ctx *c, stream_out *o, kern_join_result *r,
                  size_t B, size_t R, double total)
{
    memset(r, 0, sizeof *r);
    r->chunks = (unsigned)B;
    r->chunk_rows = R;
    c->done = c->shown = 0;
    c->one_way = 0;
    c->emitted = 0;
    c->total = total;
    if (o->counts)
        memset(o->counts, 0, a->n * sizeof *o->counts);
    if (o->hist)
        memset(o->hist, 0, a->hist_nbins * sizeof *o->hist);
    o->below = 0;
    kern_fasted_release();
}

/* fn over one run s of a cut (c->m and c->work say where its rows are
 * and what it weighs): the run's outputs go to o's per-run arrays and the
 * callbacks through c; on success they are added into o's whole-run
 * arrays. Its result x is added into r either way. */
int stream_call(kern_join_fn fn, const kern_join_args *a, kern_join_args *s, stream_ctx *c,
                stream_out *o, kern_join_result *r, kern_join_result *x)
{
    s->counts = o->rc;
    s->hist = o->rh;
    s->hist_below = &o->rb;
    s->pair_fn = a->pair_fn ? stream_pairs : NULL;
    s->pair_ctx = c;
    s->progress = stream_progress;
    s->progress_ctx = c;
    memset(x, 0, sizeof *x);
    int rc = fn(s, x);
    if (rc == KERN_ESINK && c->failed)
        rc = KERN_ENOMEM;
    stream_merge(r, x, r->chunk_runs == 0);
    if (rc)
        return rc;
    c->done += c->work;
    if (a->mode == KJOIN_PERPOINT) {
        /* counts[i] is run row q0 + i; a cross run's padding rows count none */
        const size_t m = kern_count_rows(s);
        for (size_t i = 0; i < m; i++) {
            const size_t v = s->q0 + i;
            const uint32_t row = stream_row(&c->m, (uint32_t)v);
            /* a cross run's or a layout's padding rows count none */
            if ((!s->c0 || v < s->q1 || v >= s->c0) && row != KERN_ROW_PAD)
                o->counts[row - a->q0] += o->rc[i];
        }
    }
    if (a->mode == KJOIN_HIST) {
        for (size_t b = 0; b < a->hist_nbins; b++)
            o->hist[b] += o->rh[b];
        o->below += o->rb;
    }
    return 0;
}

/* One engine run over chunk a's rows against chunk b's (a == b: chunk
 * a's own pairs), added into o and r. */
static int stream_one(kern_join_fn fn, const kern_join_args *a, stream_ctx *c, stream_out *o,
                      kern_join_result *r, size_t R, size_t ca, size_t cb, int sym, int *ran_sym)
{
    const size_t n = a->n, a0 = ca * R, b0 = cb * R;
    const size_t ra = (a0 + R < n ? R : n - a0), rb = (b0 + R < n ? R : n - b0);
    kern_join_args s = *a;
    s.hash = stream_hash(a->hash, ca, cb, R);
    s.x = (const char *)a->x + a0 * a->d * a->x_bytes;
    s.q0 = 0;
    s.q1 = ra;
    s.symmetric = sym;
    if (ca == cb) {
        s.n = ra;
        s.c0 = 0;
        s.xc = NULL;
        c->m = (stream_map){.a0 = a0};
        c->work = (double)ra * (double)ra * (sym && !c->one_way ? 0.5 : 1.0);
    } else {
        s.n = R + rb;
        s.c0 = R;
        s.xc = (const char *)a->x + b0 * a->d * a->x_bytes;
        c->m = (stream_map){.a0 = a0, .b0 = b0, .c0 = R};
        c->work = (double)ra * (double)rb;
    }
    kern_join_result x;
    int rc = stream_call(fn, a, &s, c, o, r, &x);
    if (!rc)
        *ran_sym = x.symmetric;
    return rc;
}

/* Every run of one cut into chunks of R rows. */
static int stream_chunks(kern_join_fn fn, const kern_join_args *a, stream_ctx *c, stream_out *o,
                         kern_join_result *r, size_t R)
{
    const size_t n = a->n, B = (n + R - 1) / R;
    const int sym = a->symmetric != 0;
    stream_begin(a, c, o, r, B, R, (sym ? 0.5 : 1.0) * (double)n * (double)n);
    /* The largest run first (a cross run holds 2R rows): when the device
     * cannot hold it, the attempt fails before any pair is sunk. */
    int all_sym = sym, rs = 0, rc;
    for (size_t ca = 0; ca < B; ca++)
        for (size_t cb = sym ? ca + 1 : 0; cb < B; cb++) {
            if (cb == ca)
                continue;
            if ((rc = stream_one(fn, a, c, o, r, R, ca, cb, sym, &rs)))
                return rc;
            if (sym && !rs) {
                /* The engine ran it one way: the other order too, and
                 * its runs are the unsymmetric amount of work. */
                c->one_way = 1;
                c->total = (double)n * (double)n;
                if ((rc = stream_one(fn, a, c, o, r, R, cb, ca, 0, &rs)))
                    return rc;
                all_sym = 0;
            }
        }
    for (size_t ca = 0; ca < B; ca++)
        if ((rc = stream_one(fn, a, c, o, r, R, ca, ca, sym, &rs)))
            return rc;
    r->symmetric = all_sym;
    return 0;
}

int kern_stream_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r)
{
    stream_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    kern_join_args w = *a;
    if (a->mode == KJOIN_PAIRS && a->pair_fn && !a->c0) {
        /* Count what reaches the sink: a run that sank pairs is not redone. */
        c.m = (stream_map){.a0 = 0};
        w.pair_fn = stream_pairs;
        w.pair_ctx = &c;
    }
    int rc = fn(&w, r);
    if (rc == KERN_ESINK && c.failed)
        rc = KERN_ENOMEM;
    const size_t n = a->n;
    if (rc != KERN_ENOMEM || c.emitted || a->c0 || a->q0 != 0 || a->q1 != n ||
        n <= 2 * KERN_STREAM_ALIGN) {
        free(c.ti);
        free(c.tj);
        return rc;
    }
    /* Why the whole run did not fit: said again if no cut runs either. */
    char whole[512];
    snprintf(whole, sizeof whole, "%s", kern_error());
    stream_out o;
    int slabbed = 0;
    /* A cross run's counts: 2R rows, R < n. */
    if (stream_out_open(a, &o, 2 * n, "the streamed run's outputs")) {
        char m[1024];
        snprintf(m, sizeof m, "%s; %s", whole, kern_error());
        free(c.ti);
        free(c.tj);
        return kern_fail_msg(KERN_ENOMEM, m);
    }
    /* A cross run of two chunks holds 2R rows: two halves would be the
     * whole again, so the first cut is in thirds; then halve the chunk
     * until the runs fit (or a run sank pairs). */
    size_t R = ((n + 2) / 3 + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
    for (;;) {
        rc = stream_chunks(fn, a, &c, &o, r, R);
        if (rc == KERN_OK || rc != KERN_ENOMEM || c.emitted || R <= KERN_STREAM_ALIGN)
            break;
        R = (R / 2 + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
    }
    if (rc == KERN_ECROSS) { /* its index covers every row: slabs of sorted rows */
        slabbed = 1;
        rc = stream_slabs(fn, a, &c, &o, r);
    }
    if (rc != KERN_OK && !c.emitted && (rc == KERN_ENOMEM || rc == KERN_EINVAL)) {
        /* Why the whole run did not fit, and why no cut ran either. */
        char m[1024];
        if (rc == KERN_EINVAL || slabbed)
            snprintf(m, sizeof m, "%s; %s", whole, kern_error());
        else
            snprintf(m, sizeof m, "%s (streamed in chunks of %zu rows too)", kern_error(),
                     r->chunk_rows);
        rc = kern_fail_msg(KERN_ENOMEM, m);
    }
    stream_out_close(a, &o, rc == KERN_OK);
    free(c.ti);
    free(c.tj);
    return rc;
}
