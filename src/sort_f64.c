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

void sort_f64(double *v, size_t n)
{
    if (n < 2)
        return;
    uint64_t *a = xmalloc(n * sizeof *a), *b = xmalloc(n * sizeof *b), *src = a, *dst = b;
    size_t *cnt = xmalloc(256 * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        a[i] = key_of(u);
    }
    for (int shift = 0; shift < 64; shift += 8) {
        memset(cnt, 0, 256 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(src[i] >> shift) & 0xff]++;
        if (cnt[(src[0] >> shift) & 0xff] == n)
            continue;
        size_t sum = 0;
        for (size_t k = 0; k < 256; k++) {
            size_t c = cnt[k];
            cnt[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
        uint64_t *t = src;
        src = dst;
        dst = t;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t u = bits_of(src[i]);
        memcpy(&v[i], &u, sizeof u);
    }
    free(cnt);
    free(a);
    free(b);
}

void sort_f64_order(const double *v, size_t n, uint32_t *order)
{
    if (n == 0)
        return;
    uint64_t *ka = xmalloc(n * sizeof *ka), *kb = xmalloc(n * sizeof *kb);
    uint32_t *ia = order, *ib = xmalloc(n * sizeof *ib);
    size_t *cnt = xmalloc(256 * sizeof *cnt);
    for (size_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        ka[i] = key_of(u);
        ia[i] = (uint32_t)i;
    }
    uint64_t *ks = ka, *kd = kb;
    uint32_t *is = ia, *id = ib;
    for (int shift = 0; shift < 64; shift += 8) {
        memset(cnt, 0, 256 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(ks[i] >> shift) & 0xff]++;
        if (cnt[(ks[0] >> shift) & 0xff] == n)
            continue;
        size_t sum = 0;
        for (size_t k = 0; k < 256; k++) {
            size_t c = cnt[k];
            cnt[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) {
            const size_t at = cnt[(ks[i] >> shift) & 0xff]++;
            kd[at] = ks[i];
            id[at] = is[i];
        }
        uint64_t *t = ks;
        ks = kd;
        kd = t;
        uint32_t *u = is;
        is = id;
        id = u;
    }
    if (is != order)
        memcpy(order, is, n * sizeof *order);
    free(cnt);
    free(ka);
    free(kb);
    free(ib);
}
