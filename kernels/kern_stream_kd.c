/* The k-distance of a dataset larger than the device (or `set gpu-mem`):
 * the query rows cut into chunks, each chunk's k-distance computed over
 * the chunk itself and the rest of the rows in pieces (kernels.h,
 * kern_stream_kdist). Pure host code over any k-distance entry, so a CPU
 * build and the unit tests (tests/unit/t_stream_kd.c, over an FP64 CPU
 * entry that keeps the contract) run it as the GPU build does.
 *
 * Why this cut and not the join's chunk pairs: a row's k-distance is the
 * K-th smallest of all its d2 values, which no sum of per-run answers
 * gives; so one fn call keeps a chunk's per-row state (bounds, histograms,
 * kept values: kernels/fasted_kdist.cu) on the device while its passes
 * visit every piece. A run holds the chunk's rows and one piece: at most
 * 2R rows, as a chunk pair of the join. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_stream.h"
#include "kernels.h"

size_t kern_kd_pieces(size_t n, const kern_kd_cut *cut, size_t *b0, size_t *b1)
{
    size_t m = 0;
    const size_t R = cut->rows ? cut->rows : n;
    const size_t lo[2] = {0, cut->q1}, hi[2] = {cut->q0, n};
    for (int s = 0; s < 2; s++)
        for (size_t b = lo[s]; b < hi[s]; b += R) {
            b0[m] = b;
            b1[m] = b + R < hi[s] ? b + R : hi[s];
            m++;
        }
    return m;
}

uint64_t kern_kd_hash(uint64_t h, const kern_kd_cut *cut, size_t b0)
{
    /* Salted, so no run of the join's chunk pairs shares a cache key with
     * a k-distance run over other rows; the chunk's rows [q0, q1) first,
     * then the piece. */
    const uint64_t c = stream_hash(h ^ 0x6b2d6469737421ull, cut->q0, cut->q1, cut->rows);
    return stream_hash(c, b0, b0, cut->rows);
}

typedef struct kd_prog {
    const kern_join_args *a;
    double done, work, total, shown;
} kd_prog;

static void kd_stream_progress(void *ctx, double frac)
{
    kd_prog *p = ctx;
    double f = (p->done + frac * p->work) / p->total;
    f = f < 1.0 ? f : 1.0;
    p->shown = f > p->shown ? f : p->shown;
    p->a->progress(p->a->progress_ctx, p->shown);
}

/* Every chunk of one cut of the query rows into chunks of R rows; p's
 * largest fraction shown is kept from a failed attempt (never backwards). */
static int kd_chunks(kern_kd_fn fn, const kern_join_args *a, int K, double *out,
                     kern_join_result *r, size_t R, kd_prog *p)
{
    const size_t nq = a->q1 - a->q0, B = (nq + R - 1) / R;
    memset(r, 0, sizeof *r);
    r->chunks = (unsigned)B;
    r->chunk_rows = R;
    /* What the failed attempt left cached on the device makes room. */
    kern_fasted_release();
    p->done = 0;
    p->total = (double)nq * (double)a->n;
    kern_join_args s = *a;
    if (a->progress) {
        s.progress = kd_stream_progress;
        s.progress_ctx = p;
    }
    size_t runs = 0;
    for (size_t t = 0; t < B; t++) {
        const kern_kd_cut cut = {a->q0 + t * R,
                                 a->q0 + (t + 1) * R < a->q1 ? a->q0 + (t + 1) * R : a->q1, R};
        p->work = (double)(cut.q1 - cut.q0) * (double)a->n;
        kern_join_result x;
        memset(&x, 0, sizeof x);
        int rc = fn(&s, K, &cut, out + (cut.q0 - a->q0), &x);
        stream_merge(r, &x, t == 0);
        /* A chunk's runs: itself, and each piece of the other rows. */
        runs += 1 + (cut.q0 + R - 1) / R + (a->n - cut.q1 + R - 1) / R;
        r->chunk_runs = runs;
        if (rc)
            return rc;
        p->done += p->work;
    }
    return 0;
}

int kern_stream_kdist(kern_kd_fn fn, const kern_join_args *a, int K, double *out,
                      kern_join_result *r)
{
    int rc = fn(a, K, NULL, out, r);
    const size_t n = a->n;
    if (rc != KERN_ENOMEM || n <= 2 * KERN_STREAM_ALIGN)
        return rc;
    /* A run holds a chunk and a piece: thirds first (two halves would be
     * the whole again), then halved until the runs fit. */
    size_t R = ((n + 2) / 3 + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
    kd_prog p = {a, 0, 0, 1, 0};
    for (;;) {
        rc = kd_chunks(fn, a, K, out, r, R, &p);
        if (rc != KERN_ENOMEM || R <= KERN_STREAM_ALIGN)
            break;
        R = (R / 2 + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
    }
    if (rc == KERN_ENOMEM) {
        char m[1024];
        snprintf(m, sizeof m, "%s (streamed in chunks of %zu rows too)", kern_error(),
                 r->chunk_rows);
        rc = kern_fail_msg(KERN_ENOMEM, m);
    }
    return rc;
}
