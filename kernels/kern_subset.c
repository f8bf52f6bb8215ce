/* Subset runs (kernels.h, kern_subset_run): a join over some of the
 * dataset's rows as a layout of one group with a tile list, so that the
 * engine joins only the pairs with a query row and, on one device, reads
 * the rows from its resident copy of the whole dataset. The clustering
 * layer's later joins query a few hundred to a few hundred thousand rows
 * of a dataset whose rows are on the device already; a copy of the rows
 * in another order made on the host, scanned, uploaded and converted
 * again costs a join that work over the whole dataset whatever its query
 * rows, and sends the whole dataset's copy out of the device caches for
 * the next run to make again. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_stream.h"
#include "kernels.h"

/* A message with values, kern_fail_msg's. */
static int sub_fail(int code, const char *fmt, ...)
{
    char m[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m, sizeof m, fmt, ap);
    va_end(ap);
    return kern_fail_msg(code, m);
}

static size_t sub_round(size_t m)
{
    return (m + KERN_STREAM_ALIGN - 1) / KERN_STREAM_ALIGN * KERN_STREAM_ALIGN;
}

void kern_subset_layout_free(kern_subset_layout *L)
{
    free(L->rows);
    free(L->origin_of);
    free(L->zero);
    free(L->blk);
    memset(L, 0, sizeof *L);
}

int kern_subset_layout_make(const kern_join_args *a, kern_subset_layout *L)
{
    memset(L, 0, sizeof *L);
    const size_t nq = a->sub_q, no = a->nsub - a->sub_q;
    if (!a->sub || a->nsub == 0 || a->sub_q == 0 || a->sub_q > a->nsub)
        return sub_fail(KERN_EINVAL, "subset run: %zu rows, %zu of them queries", a->nsub,
                        a->sub_q);
    const size_t qn = sub_round(nq), on = sub_round(no);
    if (qn + on > (size_t)UINT32_MAX - KERN_STREAM_ALIGN)
        return sub_fail(KERN_EINVAL, "subset run: %zu rows", a->nsub);
    L->n = qn + on;
    L->qb = qn / KERN_STREAM_ALIGN;
    const size_t ob = on / KERN_STREAM_ALIGN;
    /* every block pair with a query block: the query blocks' upper
     * triangle and each query block against every other block */
    L->nblk = L->qb * (L->qb + 1) / 2 + L->qb * ob;
    L->rows = malloc(L->n * sizeof *L->rows);
    L->origin_of = malloc(L->n);
    L->zero = calloc(a->d ? a->d : 1, sizeof *L->zero);
    L->blk = malloc(2 * L->nblk * sizeof *L->blk);
    if (!L->rows || !L->origin_of || !L->zero || !L->blk) {
        kern_subset_layout_free(L);
        return sub_fail(KERN_ENOMEM, "subset run: out of host memory for %zu rows", a->nsub);
    }
    /* FNV-1a over the rows and the split: the layout's content, mixed with
     * the dataset's hash (a device cache keyed by it holds these rows) */
    uint64_t h = 1469598103934665603ull;
    for (size_t v = 0; v < L->n; v++) {
        uint32_t row = KERN_ROW_PAD;
        if (v < nq)
            row = a->sub[v];
        else if (v >= qn && v - qn < no)
            row = a->sub[nq + (v - qn)];
        if (row != KERN_ROW_PAD && row >= a->n) {
            kern_subset_layout_free(L);
            return sub_fail(KERN_EINVAL, "subset run: row %u of %zu", row, a->n);
        }
        L->rows[v] = row;
        L->origin_of[v] = row == KERN_ROW_PAD ? KERN_ORIGIN_NONE : 0;
        h = (h ^ row) * 1099511628211ull;
    }
    L->hash = stream_hash(a->hash ^ 0x5b5e75b5e75b5e75ull, nq, no, (size_t)h);
    size_t t = 0;
    for (size_t i = 0; i < L->qb; i++)
        for (size_t j = i; j < L->qb + ob; j++) {
            L->blk[2 * t] = (uint32_t)i;
            L->blk[2 * t + 1] = (uint32_t)j;
            t++;
        }
    return 0;
}

int kern_subset_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    if (a->mode != KJOIN_COUNT && a->mode != KJOIN_PAIRS)
        return sub_fail(KERN_EINVAL, "subset run: pairs are counted or listed, not %s",
                        a->mode == KJOIN_HIST ? "binned" : "counted a row");
    if (a->q0 != 0 || a->q1 != a->n || a->c0 || a->rows || a->nclu || a->tiles || a->nblk)
        return sub_fail(KERN_EINVAL, "subset run: its rows are the subset's alone");
    kern_subset_layout L;
    int rc = kern_subset_layout_make(a, &L);
    if (rc)
        return rc;
    const size_t clu[2] = {0, L.n};
    kern_join_args s = *a;
    s.sub = NULL;
    s.nsub = s.sub_q = 0;
    s.n = L.n;
    s.rows = L.rows;
    s.origins = a->center ? a->center : L.zero;
    s.origin_of = L.origin_of;
    s.clu = clu;
    s.nclu = 1;
    s.blk = L.blk;
    s.nblk = L.nblk;
    /* The tile list names block pairs once (I <= J): a symmetric run's.
     * The pairs are the same either way; only the work differs. */
    s.symmetric = 1;
    s.hash = L.hash;
    /* one device: the rows gathered from its copy of the whole dataset;
     * several: each converts the layout's rows from the host */
    s.base_n = a->ndevices <= 1 ? a->n : 0;
    s.base_hash = a->hash;
    rc = stream_layout(fn, a, &s, "the subset", r);
    kern_subset_layout_free(&L);
    return rc;
}
