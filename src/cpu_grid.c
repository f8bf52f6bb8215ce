#include "cpu_grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_simd.h"
#include "err.h"
#include "mem.h"

/* Cells per dimension at most: the cell of x is floor((x - lo) / side),
 * computed with a relative error near 2^-52 of the index, so below 2^24
 * cells it is off by far less than the 1e-6 of a side kept as margin. */
#define CG_MAX_CELLS 16777216.0

typedef struct cg_item {
    uint64_t key;
    uint32_t row;
} cg_item;

/* Sort by key, stable (rows stay ascending within a cell): least
 * significant 16 bits first, as many passes as the largest key needs. */
static void cg_sort(cg_item *it, cg_item *tmp, size_t n, uint64_t maxkey)
{
    static const int bits = 16;
    size_t *cnt = xmalloc(((size_t)1 << bits) * sizeof *cnt);
    for (int sh = 0; sh < 64 && (sh == 0 || maxkey >> sh); sh += bits) {
        memset(cnt, 0, ((size_t)1 << bits) * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(it[i].key >> sh) & 0xffff]++;
        size_t sum = 0;
        for (size_t b = 0; b < ((size_t)1 << bits); b++) {
            size_t c = cnt[b];
            cnt[b] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++)
            tmp[cnt[(it[i].key >> sh) & 0xffff]++] = it[i];
        memcpy(it, tmp, n * sizeof *it);
    }
    free(cnt);
}

/* A dimension's statistics over its finite values: a point with an
 * infinite or NaN coordinate is at infinite or NaN distance from every
 * point, itself included, so it joins nothing and may sit in any cell. */
typedef struct cg_dim {
    double mn, mx, var;
    int ok; /* some finite value, and a finite range */
} cg_dim;

/* Every dimension's stats in one pass over the rows (each widened to FP64
 * as it is read); st holds d entries. */
static void cg_stats(const dataset *ds, cg_dim *st)
{
    const size_t n = ds->n, d = ds->d;
    double *mean = xcalloc(d, sizeof *mean), *rb = xmalloc(d * sizeof *rb);
    size_t *m = xcalloc(d, sizeof *m);
    for (size_t j = 0; j < d; j++)
        st[j] = (cg_dim){0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        for (size_t j = 0; j < d; j++) {
            cg_dim *s = &st[j];
            double v = x[j];
            if (!isfinite(v))
                continue;
            if (m[j] == 0 || v < s->mn)
                s->mn = v;
            if (m[j] == 0 || v > s->mx)
                s->mx = v;
            m[j]++;
            /* Welford: no sum that overflows on huge coordinates. */
            double dv = v - mean[j];
            mean[j] += dv / (double)m[j];
            s->var += dv * (v - mean[j]);
        }
    }
    for (size_t j = 0; j < d; j++) {
        st[j].ok = m[j] > 0 && isfinite(st[j].mx - st[j].mn);
        if (!(st[j].var >= 0))
            st[j].var = 0;
    }
    free(mean);
    free(rb);
    free(m);
}

static long long cg_cell(const cpu_grid *g, int j, double v)
{
    double c = floor((v - g->lo[j]) / g->side[j]);
    if (!(c >= 0))
        return 0; /* below lo, or NaN: joins nothing */
    if (c >= (double)g->cnt[j])
        return g->cnt[j] - 1;
    return (long long)c;
}

/* Positions of cells with keys in [lo, hi]: [*b, *e) of the cell list. */
static void cg_find(const cpu_grid *g, long long lo, long long hi, size_t *b, size_t *e)
{
    size_t l = 0, h = g->ncell;
    while (l < h) {
        size_t m = l + (h - l) / 2;
        if (g->key[m] < lo)
            l = m + 1;
        else
            h = m;
    }
    size_t f = l;
    while (f < g->ncell && g->key[f] <= hi)
        f++;
    *b = l;
    *e = f;
}

size_t cpu_grid_ranges(const cpu_grid *g, size_t c, size_t (*rng)[2])
{
    const int k = g->k;
    const long long key = g->key[c];
    long long idx[CPU_GRID_MAXK] = {0};
    for (int j = 0; j < k; j++)
        idx[j] = key / g->stride[j] % g->cnt[j];
    /* Offsets of dimensions 1..k-1 as a counter, dimension 1 fastest: the
     * cells come in ascending key order; along dimension 0 the 3
     * neighbours are consecutive keys, one range. */
    int off[CPU_GRID_MAXK];
    for (int j = 0; j < k; j++)
        off[j] = -1;
    size_t nr = 0;
    for (;;) {
        int ok = 1;
        long long base = key;
        for (int j = 1; j < k; j++) {
            long long v = idx[j] + off[j];
            ok &= v >= 0 && v < g->cnt[j];
            base += off[j] * g->stride[j];
        }
        if (ok) {
            long long lo = base - (idx[0] > 0), hi = base + (idx[0] + 1 < g->cnt[0]);
            size_t b, e;
            cg_find(g, lo, hi, &b, &e);
            if (b < e) {
                size_t pb = g->start[b], pe = g->start[e];
                if (nr && rng[nr - 1][1] == pb)
                    rng[nr - 1][1] = pe;
                else {
                    rng[nr][0] = pb;
                    rng[nr][1] = pe;
                    nr++;
                }
            }
        }
        int j = 1;
        while (j < k && off[j] == 1)
            off[j++] = -1;
        if (j >= k)
            break;
        off[j]++;
    }
    return nr;
}

static size_t cg_round(size_t m)
{
    return (m + CPU_GROUP - 1) / CPU_GROUP * CPU_GROUP;
}

/* Sort rows by cell over the first k of dims and fill the cell list. */
static void cg_layout(const dataset *ds, cpu_grid *g, cg_item *it, cg_item *tmp, uint64_t maxkey)
{
    const size_t n = ds->n;
    double *rb = xmalloc(ds->d * sizeof *rb);
    for (size_t i = 0; i < n; i++) {
        const double *x = dataset_row_f64(ds, i, rb);
        long long kv = 0;
        for (int j = 0; j < g->k; j++)
            kv += cg_cell(g, j, x[g->dim[j]]) * g->stride[j];
        it[i].key = (uint64_t)kv;
        it[i].row = (uint32_t)i;
    }
    free(rb);
    cg_sort(it, tmp, n, maxkey);
    size_t nc = 0;
    for (size_t i = 0; i < n; i++) {
        g->order[i] = it[i].row;
        nc += i == 0 || it[i].key != it[i - 1].key;
    }
    g->ncell = nc;
    g->key = xrealloc(g->key, nc * sizeof *g->key);
    g->start = xrealloc(g->start, (nc + 1) * sizeof *g->start);
    nc = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || it[i].key != it[i - 1].key) {
            g->key[nc] = (long long)it[i].key;
            g->start[nc++] = i;
        }
    g->start[nc] = n;
}

/* The estimate of cpu_grid.h: each row of a cell pays for the candidates of
 * its ranges and a fixed cost per range. */
static double cg_cost(cpu_grid *g, size_t (*rng)[2])
{
    double cost = 0;
    size_t most = 0;
    for (size_t c = 0; c < g->ncell; c++) {
        size_t nr = cpu_grid_ranges(g, c, rng);
        double lanes = 0;
        for (size_t r = 0; r < nr; r++)
            lanes += (double)cg_round(rng[r][1] - rng[r][0]) + CPU_GRID_RANGE_COST;
        cost += lanes * (double)(g->start[c + 1] - g->start[c]);
        most = nr > most ? nr : most;
    }
    g->max_ranges = most;
    return cost;
}

uint64_t cpu_grid_row_bytes(void)
{
    /* the sort's two item arrays and, while a layout is tried against the
     * best, two orders and two cell lists */
    return 2 * (sizeof(cg_item) + sizeof(uint32_t) + sizeof(long long) + sizeof(size_t));
}

int cpu_grid_build(const dataset *ds, double r, int kmax, cpu_grid *g)
{
    const size_t n = ds->n, d = ds->d;
    memset(g, 0, sizeof *g);
    g->n = n;
    g->d = d;
    g->cost_brute = (double)n * (double)cg_round(n);
    g->cost = g->cost_brute;
    if (kmax > CPU_GRID_MAXK)
        kmax = CPU_GRID_MAXK;
    /* Below 2^-450 a squared difference can underflow, and then a pair
     * farther apart than r along one dimension could still join. */
    if (n < 2 || d == 0 || kmax < 1 || !(r >= 0x1p-450) || !isfinite(r) || n > UINT32_MAX)
        return 0;
    if (mem_check(ds->name ? ds->name : "dataset", "the grid index", n, cpu_grid_row_bytes(), 0))
        return TCJ_ENOMEM;
    const double side = r * (1.0 + 1e-6);

    /* Dimensions that can be indexed, largest variance first (ties: the
     * lower index), as ted-index orders them. */
    cg_dim *st = xmalloc(d * sizeof *st);
    int *by = xmalloc(d * sizeof *by);
    size_t nd = 0;
    cg_stats(ds, st);
    for (size_t j = 0; j < d; j++) {
        if (!st[j].ok || (st[j].mx - st[j].mn) / side < 1.0)
            continue; /* one cell: prunes nothing */
        size_t p = nd++;
        while (p > 0 && st[by[p - 1]].var < st[j].var) {
            by[p] = by[p - 1];
            p--;
        }
        by[p] = (int)j;
    }
    if ((size_t)kmax > nd)
        kmax = (int)nd;

    cg_item *it = xmalloc(n * sizeof *it), *tmp = xmalloc(n * sizeof *tmp);
    size_t(*rng)[2] = NULL;
    cpu_grid best = *g, cur = *g;
    long long total = 1;
    for (int k = 1; k <= kmax; k++) {
        const int j = by[k - 1];
        double s = side, range = st[j].mx - st[j].mn;
        if (range / s >= CG_MAX_CELLS)
            s = range / CG_MAX_CELLS * (1.0 + 1e-6); /* wider cells stay correct */
        double c = floor(range / s) + 1;
        /* Keys stay below 2^62. */
        if (c > 4e18 / (double)total)
            break;
        cur.dim[k - 1] = j;
        cur.lo[k - 1] = st[j].mn;
        cur.side[k - 1] = s;
        cur.cnt[k - 1] = (long long)c;
        cur.stride[k - 1] = total;
        total *= (long long)c;
        cur.k = k;
        /* Enumerating 3^(k-1) neighbours for every cell would cost more
         * than the rows it saves. */
        size_t nrange = 1;
        for (int i = 1; i < k; i++)
            nrange *= 3;
        cur.order = xmalloc(n * sizeof *cur.order);
        cur.key = NULL;
        cur.start = NULL;
        cg_layout(ds, &cur, it, tmp, (uint64_t)(total - 1));
        if ((double)cur.ncell * (double)nrange > 64.0 * (double)n) {
            cpu_grid_free(&cur);
            break;
        }
        rng = xrealloc(rng, nrange * sizeof *rng);
        cur.cost = cg_cost(&cur, rng);
        if (cur.cost < best.cost) {
            cpu_grid_free(&best);
            best = cur;
        } else {
            cpu_grid_free(&cur);
            if (best.k)
                break; /* one more dimension no longer pays */
        }
        cur.order = NULL;
        cur.key = NULL;
        cur.start = NULL;
    }
    free(rng);
    free(it);
    free(tmp);
    free(st);
    free(by);
    *g = best;
    return 0;
}

int cpu_grid_prunes(const cpu_grid *g)
{
    return g->k > 0 && g->cost <= 0.5 * g->cost_brute;
}

void cpu_grid_gather(const cpu_grid *g, const void *src, size_t row_bytes, void *dst)
{
    for (size_t i = 0; i < g->n; i++)
        memcpy((char *)dst + i * row_bytes, (const char *)src + (size_t)g->order[i] * row_bytes,
               row_bytes);
}

void cpu_grid_free(cpu_grid *g)
{
    free(g->order);
    free(g->key);
    free(g->start);
    g->order = NULL;
    g->key = NULL;
    g->start = NULL;
}
