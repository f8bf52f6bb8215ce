#include "sort_f64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static uint64_t key_of(uint64_t b)
{
    return b >> 63 ? ~b : b | 0x8000000000000000ull;
}

static uint64_t bits_of(uint64_t k)
{
    return k >> 63 ? k & 0x7fffffffffffffffull : ~k;
}

/* A stable LSD radix sort of the keys k[0..n) by 8-bit digits (a digit
 * every key shares is skipped), ix[0..n) carried along where not NULL;
 * kt and ixt scratch of n. *kout and *ixout: the buffers holding the
 * result (the inputs or the scratch). */
static void radix_keys(uint64_t *k, uint64_t *kt, uint32_t *ix, uint32_t *ixt, size_t n,
                       uint64_t **kout, uint32_t **ixout)
{
    size_t cnt[256];
    uint64_t *ks = k, *kd = kt;
    uint32_t *is = ix, *id = ixt;
    for (int shift = 0; shift < 64; shift += 8) {
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(ks[i] >> shift) & 0xff]++;
        if (cnt[(ks[0] >> shift) & 0xff] == n)
            continue;
        size_t sum = 0;
        for (size_t b = 0; b < 256; b++) {
            const size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t at = cnt[(ks[i] >> shift) & 0xff]++;
            kd[at] = ks[i];
            if (is)
                id[at] = is[i];
        }
        uint64_t *t = ks;
        ks = kd;
        kd = t;
        uint32_t *u = is;
        is = id;
        id = u;
    }
    *kout = ks;
    *ixout = is;
}

void sort_f64(double *v, size_t n)
{
    if (n < 2)
        return;
    uint64_t *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b), *src;
    uint32_t *none;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        a[i] = key_of(u);
    }
    radix_keys(a, b, NULL, NULL, n, &src, &none);
    for (size_t i = 0; i < n; i++) {
        uint64_t u = bits_of(src[i]);
        memcpy(&v[i], &u, sizeof u);
    }
    free(a);
    free(b);
}

void sort_f64_order(const double *v, size_t n, uint32_t *order)
{
    if (n == 0)
        return;
    uint64_t *ka = xmalloc(n * sizeof *ka), *kb = xmalloc(n * sizeof *kb), *ks;
    uint32_t *ib = xmalloc(n * sizeof *ib), *is;
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        ka[i] = key_of(u);
        order[i] = (uint32_t)i;
    }
    radix_keys(ka, kb, order, ib, n, &ks, &is);
    if (is != order)
        memcpy(order, is, n * sizeof *order);
    free(ka);
    free(kb);
    free(ib);
}
