/* kern_stream_run's slab cut, for an engine that takes no cross run
 * because its grid index covers every row it holds (ted-index, exact's
 * FP64 grid path: KERN_ECROSS). Such an engine does take a range of query
 * rows [q0, q1) against every row of its run, so: the rows are sorted
 * along one dimension p (the one of largest variance, where the fewest
 * rows are within reach of a slab, the first of the whole run's dimension
 * order, which every slab's run is handed: kern_join_args.dim_order); slab s is sorted positions
 * [sR, min(n, (s+1)R)); its run holds the sorted positions whose value in
 * p lies within w of the slab's range, the slab itself in the middle as
 * the query rows. Every ordered pair (i, j) of the join has i in exactly
 * one slab and j within w of it, so the runs give each pair of the whole
 * run once, in every mode, with no cross run and no second order.
 *
 * The reach w. The engine keeps a pair when its d2, computed in FP64,
 * is at most eps^2. Computed from the norms and a dot product (ted-index)
 * or from the differences (the grid path), d2 is within
 * E = 4 gamma_{d+3} M of the real one: |d2' - d2| <= gamma_{d+3}
 * (|a|^2 + |b|^2 + 2 |a.b|) <= 2 gamma_{d+3} (|a|^2 + |b|^2), with
 * gamma_k = k u / (1 - k u), u = 2^-53 and M the largest squared row norm
 * (about the args' centre when there is one). A pair whose values in p
 * differ by more than w = sqrt(eps^2 + E) has a real d2 above
 * eps^2 + E, so the engine's d2 is above eps^2: no run needs it. E is
 * taken as 8 (d + 3) u M (gamma's denominator, with room), w 2^-40
 * larger (eps^2's and the square root's rounding), and each end of the
 * slab's range is moved out by 2^-50 of its magnitude for the rounding of
 * end -/+ w. An engine of lower precision must not answer KERN_ECROSS.
 *
 * Memory on the host: the sort keys and the permutation, 12 bytes a row
 * (24 while sorting), and one run's rows gathered in their own type. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kern_dims.h"
#include "kern_stream.h"
#include "kernels.h"

/* Doubles as integers of the same order (finite values; -0 as +0). */
static uint64_t slab_key(double v)
{
    uint64_t u;
    if (v == 0)
        v = 0;
    memcpy(&u, &v, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

static double slab_value(uint64_t k)
{
    const uint64_t u = k >> 63 ? k & ~(1ull << 63) : ~k;
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* LSD radix sort of key with row, 16 bits a pass; a pass whose digit
 * every key shares is skipped. -1 when host memory runs out. */
static int slab_sort(uint64_t *key, uint32_t *row, size_t n)
{
    uint64_t *k2 = malloc(n * sizeof *k2);
    uint32_t *r2 = malloc(n * sizeof *r2);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    int rc = !k2 || !r2 || !cnt ? -1 : 0;
    uint64_t *ka = key, *kb = k2;
    uint32_t *ra = row, *rb = r2;
    for (int sh = 0; sh < 64 && !rc; sh += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(ka[i] >> sh) & 0xffff]++;
        if (cnt[(ka[0] >> sh) & 0xffff] == n)
            continue;
        size_t s = 0;
        for (size_t b = 0; b < 65536; b++) {
            const size_t t = cnt[b];
            cnt[b] = s;
            s += t;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t t = cnt[(ka[i] >> sh) & 0xffff]++;
            kb[t] = ka[i];
            rb[t] = ra[i];
        }
        uint64_t *kt = ka;
        uint32_t *rt = ra;
        ka = kb, kb = kt;
        ra = rb, rb = rt;
    }
    if (!rc && ka != key) {
        memcpy(key, ka, n * sizeof *key);
        memcpy(row, ra, n * sizeof *row);
    }
    free(k2);
    free(r2);
    free(cnt);
    return rc;
}

/* Rows a block at a time as FP64 (at most 64K values) into buf. */
static size_t slab_block_rows(size_t d)
{
    return d < 65536 ? 65536 / d : 1;
}

/* One pass over the rows: the largest squared norm (about the centre
 * when there is one); a non-finite value fails. */
static int slab_scan(const kern_join_args *a, double *buf, double *maxsq)
{
    const size_t n = a->n, d = a->d, blk = slab_block_rows(d);
    double m = 0;
    for (size_t i0 = 0; i0 < n; i0 += blk) {
        const size_t cnt = i0 + blk < n ? blk : n - i0;
        kern_rows_f64(a, i0, cnt, buf);
        for (size_t t = 0; t < cnt; t++) {
            const double *v = buf + t * d;
            double q = 0;
            for (size_t k = 0; k < d; k++) {
                if (!isfinite(v[k])) {
                    char msg[160];
                    snprintf(msg, sizeof msg,
                             "row %zu, column %zu is not finite and no slab can hold it", i0 + t,
                             k);
                    return kern_fail_msg(KERN_EINVAL, msg);
                }
                const double z = a->center ? v[k] - a->center[k] : v[k];
                q += z * z;
            }
            m = q > m ? q : m;
        }
    }
    *maxsq = m;
    return 0;
}

/* key[i] = row i's value in dimension dim, row[i] = i. */
static void slab_keys(const kern_join_args *a, double *buf, int dim, uint64_t *key, uint32_t *row)
{
    const size_t n = a->n, d = a->d, blk = slab_block_rows(d);
    for (size_t i0 = 0; i0 < n; i0 += blk) {
        const size_t cnt = i0 + blk < n ? blk : n - i0;
        kern_rows_f64(a, i0, cnt, buf);
        for (size_t t = 0; t < cnt; t++) {
            key[i0 + t] = slab_key(buf[t * d + (size_t)dim]);
            row[i0 + t] = (uint32_t)(i0 + t);
        }
    }
}

/* First position whose key is >= t (upper: > t). */
static size_t slab_find(const uint64_t *key, size_t n, uint64_t t, int upper)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (key[mid] < t || (upper && key[mid] == t))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Slab b: its query positions [p0, p1), its run's positions [h0, h1). */
typedef struct slab {
    size_t b, p0, p1, h0, h1;
} slab;

static int slab_larger(const void *x, const void *y)
{
    const slab *s = x, *t = y;
    const size_t m = s->h1 - s->h0, k = t->h1 - t->h0;
    return m != k ? (m > k ? -1 : 1) : (s->b > t->b) - (s->b < t->b);
}

/* The B slabs of R rows with reach w, largest run first. */
static void slab_plan(const uint64_t *key, size_t n, size_t R, double w, slab *sl, size_t B)
{
    for (size_t b = 0; b < B; b++) {
        slab *s = &sl[b];
        s->b = b;
        s->p0 = b * R;
        s->p1 = s->p0 + R < n ? s->p0 + R : n;
        const double lo = slab_value(key[s->p0]), hi = slab_value(key[s->p1 - 1]);
        s->h0 = slab_find(key, n, slab_key(lo - w - fabs(lo) * 0x1p-50), 0);
        s->h1 = slab_find(key, n, slab_key(hi + w + fabs(hi) * 0x1p-50), 1);
    }
    qsort(sl, B, sizeof *sl, slab_larger);
}

/* One slab's run: its rows gathered (in their own type) into *buf, the
 * slab's as the query rows; its outputs added into o and r. */
static int slab_run(kern_join_fn fn, const kern_join_args *a, stream_ctx *c, stream_out *o,
                    kern_join_result *r, const uint32_t *perm, const int *order, const slab *sl,
                    size_t B, size_t R, char **buf, size_t *cap)
{
    const size_t m = sl->h1 - sl->h0, nq = sl->p1 - sl->p0, rowb = a->d * a->x_bytes;
    if (m * rowb > *cap) {
        char *p = realloc(*buf, m * rowb);
        if (!p)
            return kern_fail_msg(KERN_ENOMEM, "out of host memory gathering a slab's rows");
        *buf = p;
        *cap = m * rowb;
    }
    for (size_t t = 0; t < m; t++)
        memcpy(*buf + t * rowb, (const char *)a->x + (size_t)perm[sl->h0 + t] * rowb, rowb);
    kern_join_args s = *a;
    s.x = *buf;
    s.n = m;
    s.q0 = sl->p0 - sl->h0;
    s.q1 = sl->p1 - sl->h0;
    s.c0 = 0;
    s.xc = NULL;
    s.dim_order = order;
    s.hash = stream_hash(a->hash ^ 0x5eedf00dd1ce5ab5ull, sl->b, B, R);
    c->m = (stream_map){.map = perm + sl->h0};
    c->work = (double)nq * (double)m;
    kern_join_result x;
    int rc = stream_call(fn, a, &s, c, o, r, &x);
    if (!rc)
        r->halo_rows += m - nq;
    return rc;
}

int stream_slabs(kern_join_fn fn, const kern_join_args *a, stream_ctx *c, stream_out *o,
                 kern_join_result *r)
{
    const size_t n = a->n, A = KERN_STREAM_ALIGN;
    memset(r, 0, sizeof *r);
    double *buf = malloc(slab_block_rows(a->d) * a->d * sizeof *buf);
    uint64_t *key = malloc(n * sizeof *key);
    uint32_t *perm = malloc(n * sizeof *perm);
    slab *sl = malloc((n + A - 1) / A * sizeof *sl);
    char *rows = NULL;
    size_t cap = 0, R = ((n + 1) / 2 + A - 1) / A * A, big = 0;
    int dim = 0, rc = 0;
    double maxsq = 0;
    if (!buf || !key || !perm || !sl)
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory for the slab cut");
    int *order = malloc(a->d * sizeof *order);
    if (!rc && !order)
        rc = kern_fail_msg(KERN_ENOMEM, "out of host memory for the slab cut");
    if (!rc)
        rc = slab_scan(a, buf, &maxsq);
    /* The whole run's dimension order: the slab runs take it (their d2
     * summed in the same order) and the cut is along its first. */
    if (!rc)
        rc = kern_dims_by_variance(a, order, NULL, NULL);
    if (!rc) {
        dim = order[0];
        slab_keys(a, buf, dim, key, perm);
        if (slab_sort(key, perm, n))
            rc = kern_fail_msg(KERN_ENOMEM, "out of host memory sorting the rows for the slab cut");
    }
    const double eps2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    const double w = sqrt(eps2 + 8.0 * (double)(a->d + 3) * 0x1p-53 * maxsq) * (1 + 0x1p-40);
    while (!rc) {
        const size_t B = (n + R - 1) / R;
        slab_plan(key, n, R, w, sl, B);
        big = sl[0].h1 - sl[0].h0;
        double total = 0;
        for (size_t b = 0; b < B; b++)
            total += (double)(sl[b].p1 - sl[b].p0) * (double)(sl[b].h1 - sl[b].h0);
        stream_begin(a, c, o, r, B, R, total);
        r->slabs = 1;
        r->slab_dim = dim;
        for (size_t b = 0; b < B && !rc; b++)
            rc = slab_run(fn, a, c, o, r, perm, order, &sl[b], B, R, &rows, &cap);
        if (rc != KERN_ENOMEM || c->emitted || R <= A)
            break;
        R = (R / 2 + A - 1) / A * A;
        rc = 0;
    }
    if (rc == KERN_ENOMEM && !c->emitted && r->slabs) {
        char m[512];
        snprintf(m, sizeof m,
                 "cut in slabs of %zu rows along dimension %d, the largest run (%zu rows within "
                 "%.6g of its slab) does not fit either",
                 R, dim, big, w);
        kern_fail_msg(rc, m);
    }
    free(buf);
    free(order);
    free(key);
    free(perm);
    free(sl);
    free(rows);
    return rc;
}
