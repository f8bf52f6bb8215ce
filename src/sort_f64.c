#include "sort_f64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "par.h"

static uint64_t key_of(uint64_t b)
{
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}

static uint64_t bits_of(uint64_t k)
{
    return k >> 63 ? k & 0x7fffffffffffffffull : ~k;
}

/* One digit's pass split by par_for's ranges (fixed by n alone): each
 * range counts its keys' digits, the ranges' heads follow digit by digit
 * and range by range (so the scatter stays stable), then each range
 * scatters its own keys. */
typedef struct rx_pass {
    const uint64_t *ks;
    uint64_t *kd;
    const uint32_t *is;
    uint32_t *id;
    int shift;
    size_t (*head)[256]; /* PAR_MAX_THREADS x 256 */
} rx_pass;

static void rx_count(void *ctx, int t, size_t a, size_t b)
{
    const rx_pass *x = ctx;
    size_t *h = x->head[t];
    memset(h, 0, 256 * sizeof *h);
    for (size_t i = a; i < b; i++)
        h[(x->ks[i] >> x->shift) & 0xff]++;
}

static void rx_scatter(void *ctx, int t, size_t a, size_t b)
{
    const rx_pass *x = ctx;
    size_t *h = x->head[t];
    for (size_t i = a; i < b; i++) {
        const size_t at = h[(x->ks[i] >> x->shift) & 0xff]++;
        x->kd[at] = x->ks[i];
        if (x->is)
            x->id[at] = x->is[i];
    }
}

/* A stable LSD radix sort of the keys k[0..n) by 8-bit digits (a digit
 * every key shares is skipped), ix[0..n) carried along where not NULL;
 * kt and ixt scratch of n. *kout and *ixout: the buffers holding the
 * result (the inputs or the scratch). Above PAR_MIN keys a pass is split
 * over the cores (rx_pass): the curve's three sorts of 10^6 keys, a core
 * a sort, take longer than one after another on every core. */
static void radix_keys(uint64_t *k, uint64_t *kt, uint32_t *ix, uint32_t *ixt, size_t n,
                       uint64_t **kout, uint32_t **ixout)
{
    uint64_t *ks = k, *kd = kt;
    uint32_t *is = ix, *id = ixt;
    size_t(*head)[256] = xmalloc(PAR_MAX_THREADS * sizeof *head);
    for (int shift = 0; shift < 64; shift += 8) {
        rx_pass x = {ks, kd, is, id, shift, head};
        int nt;
        par_for(n, 4, rx_count, &x, &nt);
        const size_t first = (ks[0] >> shift) & 0xff;
        size_t all = 0;
        for (int t = 0; t < nt; t++)
            all += head[t][first];
        if (all == n)
            continue;
        size_t sum = 0;
        for (size_t b = 0; b < 256; b++)
            for (int t = 0; t < nt; t++) {
                const size_t c = head[t][b];
                head[t][b] = sum;
                sum += c;
            }
        par_for(n, 4, rx_scatter, &x, &nt);
        uint64_t *t = ks;
        ks = kd;
        kd = t;
        uint32_t *u = is;
        is = id;
        id = u;
    }
    free(head);
    *kout = ks;
    *ixout = is;
}

/* The keys of v (and order's indices where not NULL) on the cores, and
 * the values back from the sorted keys: with the passes split, these
 * loops on one thread were a third of a sort of 10^6. */
typedef struct rx_io {
    const double *in; /* rx_keys' */
    double *out;      /* rx_values' */
    uint64_t *k;
    uint32_t *order;
} rx_io;

static void rx_keys(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const rx_io *x = ctx;
    for (size_t i = a; i < b; i++) {
        uint64_t u;
        memcpy(&u, &x->in[i], sizeof u);
        x->k[i] = key_of(u);
        if (x->order)
            x->order[i] = (uint32_t)i;
    }
}

static void rx_values(void *ctx, int t, size_t a, size_t b)
{
    (void)t;
    const rx_io *x = ctx;
    for (size_t i = a; i < b; i++) {
        const uint64_t u = bits_of(x->k[i]);
        memcpy(&x->out[i], &u, sizeof u);
    }
}

void sort_f64(double *v, size_t n)
{
    if (n < 2)
        return;
    uint64_t *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b), *src;
    uint32_t *none;
    rx_io x = {v, v, a, NULL};
    int nt;
    par_for(n, 4, rx_keys, &x, &nt);
    radix_keys(a, b, NULL, NULL, n, &src, &none);
    x.k = src;
    par_for(n, 4, rx_values, &x, &nt);
    free(a);
    free(b);
}

void sort_f64_order(const double *v, size_t n, uint32_t *order)
{
    if (n == 0)
        return;
    uint64_t *ka = xmalloc(n * sizeof *ka), *kb = xmalloc(n * sizeof *kb), *ks;
    uint32_t *ib = xmalloc(n * sizeof *ib), *is;
    rx_io x = {v, NULL, ka, order};
    int nt;
    par_for(n, 4, rx_keys, &x, &nt);
    radix_keys(ka, kb, order, ib, n, &ks, &is);
    if (is != order)
        memcpy(order, is, n * sizeof *order);
    free(ka);
    free(kb);
    free(ib);
}
