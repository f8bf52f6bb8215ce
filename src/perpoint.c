#include "perpoint.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "mem.h"

int perpoint_bin_of(uint64_t v)
{
    int b = 0;
    while (v) {
        b++;
        v >>= 1;
    }
    return b;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the value at rank ceil(p*n) (1-based), rank 1 at p = 0.
 * p is a multiple of 1/10 here, so it is computed in tenths, exactly. */
static uint64_t rank_tenths(const uint64_t *sorted, size_t n, unsigned tenths)
{
    size_t r = (n * tenths + 9) / 10;
    return sorted[r ? r - 1 : 0];
}

int perpoint_summarize(const uint64_t *counts, size_t n, uint64_t minpts, perpoint_summary *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return err_set(TCJ_EINVAL, "per-point summary: no points");
    uint64_t *v = mem_alloc("per-point summary", "the sorted counts", n, sizeof *v, 0);
    if (!v)
        return TCJ_ENOMEM;
    uint64_t hist[PERPOINT_MAX_BINS] = {0};
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        if (counts[i] == 0) {
            free(v);
            return err_set(TCJ_EINVAL,
                           "per-point summary: point %zu has no neighbour, not even itself", i);
        }
        v[i] = counts[i] - 1;
        sum += (double)v[i];
        hist[perpoint_bin_of(v[i])]++;
        if (minpts && counts[i] >= minpts)
            out->core++;
    }
    qsort(v, n, sizeof *v, cmp_u64);
    out->npoints = n;
    out->min = v[0];
    out->p10 = rank_tenths(v, n, 1);
    out->median = rank_tenths(v, n, 5);
    out->p90 = rank_tenths(v, n, 9);
    out->max = v[n - 1];
    out->mean = sum / (double)n;
    free(v);
    for (int b = perpoint_bin_of(out->min); b <= perpoint_bin_of(out->max); b++) {
        perpoint_bin *o = &out->bin[out->nbins++];
        o->lo = b == 0 ? 0 : (uint64_t)1 << (b - 1);
        o->hi = b == 0 ? 0 : b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
        o->count = hist[b];
    }
    out->minpts = minpts;
    out->noise = minpts ? n - out->core : 0;
    return 0;
}
