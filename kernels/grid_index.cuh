/* GDS-Join's grid index, built on the host, shared by ted-index
 * (kernels/ted_index.cu) and the FP64 grid join (kernels/fp64_grid.cu).
 * Dimensions are ordered by variance (largest first); cells of side a hair
 * over eps cover the first k of them; points are sorted by cell, so a
 * cell's points are one range of positions; the query points (rows in
 * [q0, q1)) of each cell are cut into groups of at most `group`. A pair
 * within eps differs by at most one cell along every indexed dimension, so
 * a group's candidates are the 3^k cells around its own. The ordering by
 * variance picks the cells only: the caller decides whether the uploaded
 * rows keep their own dimension order. */
#ifndef TCJ_GRID_INDEX_CUH
#define TCJ_GRID_INDEX_CUH

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "f64_common.cuh"
#include "kern_dims.h"
#include "kern_util.cuh"

#define GRID_MAXK 8       /* 3^8 neighbour cells at most */
#define GRID_BLOCK 524288 /* values (4 MB) widened at a time while building */

struct grid_dims {
    int k;
    long long cnt[GRID_MAXK];    /* cells along indexed dimension j */
    long long stride[GRID_MAXK]; /* key = sum idx_j * stride_j, stride_0 = 1 */
};

/* The host-built index: points in cell order, cells, query groups. */
struct grid_index {
    int *perm;       /* dimensions by variance, descending */
    uint32_t *order; /* sorted position -> row */
    long long *ukey; /* non-empty cell keys, ascending */
    size_t *cstart;  /* ncell+1 positions */
    size_t ncell;
    size_t *gpos; /* group -> first entry in qpos */
    uint32_t *glen, *gcell;
    size_t ngroup;
    size_t *qpos; /* query positions, grouped by cell */
    size_t nqpos;
    grid_dims grid;
};

static inline void grid_free(grid_index *ix)
{
    free(ix->perm);
    free(ix->order);
    free(ix->ukey);
    free(ix->cstart);
    free(ix->gpos);
    free(ix->glen);
    free(ix->gcell);
    free(ix->qpos);
    memset(ix, 0, sizeof *ix);
}

/* LSD radix sort of (key, row) by key, 16 bits a pass over the used bits. */
static inline int grid_sort(unsigned long long *key, uint32_t *row, size_t n,
                            unsigned long long maxkey)
{
    unsigned long long *k2 = (unsigned long long *)malloc(n * sizeof *k2 + 8);
    uint32_t *r2 = (uint32_t *)malloc(n * sizeof *r2 + 4);
    size_t *cnt = (size_t *)malloc(65536 * sizeof *cnt);
    if (!k2 || !r2 || !cnt) {
        free(k2);
        free(r2);
        free(cnt);
        return kern_fail(KERN_ENOMEM, "out of host memory sorting the grid index");
    }
    for (int sh = 0; sh < 64 && (maxkey >> sh) != 0; sh += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++)
            cnt[(key[i] >> sh) & 0xffff]++;
        size_t s = 0;
        for (int b = 0; b < 65536; b++) {
            size_t c = cnt[b];
            cnt[b] = s;
            s += c;
        }
        for (size_t i = 0; i < n; i++) {
            size_t p = cnt[(key[i] >> sh) & 0xffff]++;
            k2[p] = key[i];
            r2[p] = row[i];
        }
        memcpy(key, k2, n * sizeof *key);
        memcpy(row, r2, n * sizeof *row);
    }
    free(k2);
    free(r2);
    free(cnt);
    return 0;
}

/* Build the index of job's rows at eps over the first k dimensions by
 * variance (capped by d and GRID_MAXK), query groups of at most `group`
 * points. max_cells > 0: a dimension that would need more cells than that
 * is left out of the index with those after it (0: no limit beyond keys
 * within 2^62); see fp64_grid.cu for why the FP64 join caps it. 0 or
 * KERN_ENOMEM; ix is then grid_free'd by the caller either way. */
static inline int grid_build(const kern_join_args *job, double eps, int k, double max_cells,
                             size_t group, grid_index *ix)
{
    size_t n = job->n, d = job->d;
    memset(ix, 0, sizeof *ix);
    /* The dimensions by variance (the caller's order when the run is
     * a slab of a larger one: kern_join_args.dim_order) and their ranges. */
    double *mn = (double *)malloc(d * sizeof *mn), *mx = (double *)malloc(d * sizeof *mx);
    ix->perm = (int *)malloc(d * sizeof(int));
    int rc = !mn || !mx || !ix->perm
                 ? kern_fail(KERN_ENOMEM, "out of host memory for the grid index")
                 : kern_dims_by_variance(job, ix->perm, mn, mx);
    if (rc) {
        free(mn);
        free(mx);
        return rc;
    }
    if (job->dim_order)
        memcpy(ix->perm, job->dim_order, d * sizeof(int));

    /* Cells of side a hair over eps: a pair within eps then differs by at
     * most one cell along every dimension despite rounding in the division. */
    double side = eps * (1.0 + 1e-6);
    if (k > GRID_MAXK)
        k = GRID_MAXK;
    if ((size_t)k > d)
        k = (int)d;
    double lo[GRID_MAXK];
    long long total = 1;
    int kk = 0;
    for (; kk < k; kk++) {
        int dim = ix->perm[kk];
        double c = floor((mx[dim] - mn[dim]) / side) + 1;
        if (!(c >= 1))
            c = 1;
        if (max_cells > 0 && c > max_cells)
            break;
        /* Keep every key within 2^62 (drop the dimensions that do not fit). */
        if (c > 4e18 / (double)total)
            break;
        lo[kk] = mn[dim];
        ix->grid.cnt[kk] = (long long)c;
        ix->grid.stride[kk] = total;
        total *= (long long)c;
    }
    free(mn);
    free(mx);
    ix->grid.k = kk > 0 ? kk : 1;
    if (kk == 0) {
        ix->grid.cnt[0] = 1;
        ix->grid.stride[0] = 1;
        lo[0] = 0;
    }
    k = ix->grid.k;

    /* The cell keys: the rows widened a block at a time once more. */
    size_t blk = GRID_BLOCK / d > 0 ? GRID_BLOCK / d : 1;
    blk = n < blk ? n : blk;
    double *rbuf = (double *)malloc((blk ? blk : 1) * d * sizeof *rbuf);
    const double *x;
    unsigned long long *key = (unsigned long long *)malloc((n ? n : 1) * sizeof *key);
    ix->order = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    if (!rbuf || !key || !ix->order) {
        free(key);
        free(rbuf);
        return kern_fail(KERN_ENOMEM, "out of host memory for the grid index");
    }
    for (size_t i0 = 0; i0 < n; i0 += blk) {
        const size_t m = n - i0 < blk ? n - i0 : blk;
        kern_rows_f64(job, i0, m, rbuf);
        for (size_t i = i0; i < i0 + m; i++) {
            long long kv = 0;
            x = rbuf + (i - i0) * d;
            for (int j = 0; j < k && kk > 0; j++) {
                double c = floor((x[ix->perm[j]] - lo[j]) / side);
                long long ci = c < 0 ? 0 : (long long)c;
                if (ci >= ix->grid.cnt[j])
                    ci = ix->grid.cnt[j] - 1;
                kv += ci * ix->grid.stride[j];
            }
            key[i] = (unsigned long long)kv;
            ix->order[i] = (uint32_t)i;
        }
    }
    free(rbuf);
    rc = grid_sort(key, ix->order, n, (unsigned long long)(total - 1));
    if (rc) {
        free(key);
        return rc;
    }

    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[i] != key[i - 1])
            nc++;
    ix->ncell = nc;
    ix->ukey = (long long *)malloc((nc ? nc : 1) * sizeof(long long));
    ix->cstart = (size_t *)malloc((nc + 1) * sizeof(size_t));
    if (!ix->ukey || !ix->cstart) {
        free(key);
        return kern_fail(KERN_ENOMEM, "out of host memory for the grid index");
    }
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[i] != key[i - 1]) {
            ix->ukey[c] = (long long)key[i];
            ix->cstart[c++] = i;
        }
    ix->cstart[nc] = n;
    free(key);

    /* Query groups: up to `group` query points of one cell. */
    ix->qpos = (size_t *)malloc((n ? n : 1) * sizeof(size_t));
    ix->gpos = (size_t *)malloc((n ? n : 1) * sizeof(size_t));
    ix->glen = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    ix->gcell = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    if (!ix->qpos || !ix->gpos || !ix->glen || !ix->gcell)
        return kern_fail(KERN_ENOMEM, "out of host memory for the grid index");
    size_t nq = 0, ng = 0;
    for (size_t ci = 0; ci < nc; ci++) {
        size_t first = nq;
        for (size_t s = ix->cstart[ci]; s < ix->cstart[ci + 1]; s++)
            if (ix->order[s] >= job->q0 && ix->order[s] < job->q1)
                ix->qpos[nq++] = s;
        for (size_t s = first; s < nq; s += group) {
            ix->gpos[ng] = s;
            ix->glen[ng] = (uint32_t)(nq - s < group ? nq - s : group);
            ix->gcell[ng] = (uint32_t)ci;
            ng++;
        }
    }
    ix->nqpos = nq;
    ix->ngroup = ng;
    return 0;
}

/* First of the m ascending keys that is >= v (m when none). */
__device__ __forceinline__ size_t grid_lower_bound(const long long *keys, size_t m, long long v)
{
    size_t lo = 0, hi = m;
    while (lo < hi) {
        size_t mid = (lo + hi) >> 1;
        if (keys[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A query cell's neighbours, as the join kernels walk them: offsets
 * -1..1 along dimensions 1..k-1 (nnb = 3^(k-1) of them), dimension 0 as
 * one range of keys (its three neighbours are consecutive keys, one
 * search covers them). */
struct grid_walk {
    long long key, lo0, hi0;
    long long idx[GRID_MAXK];
    int nnb;
};

__device__ __forceinline__ void grid_walk_init(const grid_dims &grid, long long key, grid_walk &w)
{
    w.key = key;
    for (int j = 0; j < grid.k; j++)
        w.idx[j] = key / grid.stride[j] % grid.cnt[j];
    w.lo0 = w.idx[0] > 0 ? -1 : 0;
    w.hi0 = w.idx[0] + 1 < grid.cnt[0] ? 1 : 0;
    w.nnb = 1;
    for (int j = 1; j < grid.k; j++)
        w.nnb *= 3;
}

/* Neighbour nb's candidate positions [cs, ce), clipped to [pa, pb);
 * false when it lies outside the grid or holds none of them. */
__device__ __forceinline__ bool grid_walk_range(const grid_dims &grid, const grid_walk &w, int nb,
                                                const long long *__restrict__ ukey, size_t ncell,
                                                const size_t *__restrict__ cstart, size_t pa,
                                                size_t pb, size_t &cs, size_t &ce)
{
    long long base = w.key;
    int rem = nb;
    for (int j = 1; j < grid.k; j++) {
        const int off = rem % 3 - 1;
        rem /= 3;
        const long long v = w.idx[j] + off;
        if (v < 0 || v >= grid.cnt[j])
            return false;
        base += off * grid.stride[j];
    }
    const size_t f = grid_lower_bound(ukey, ncell, base + w.lo0);
    size_t e = f;
    while (e < ncell && ukey[e] <= base + w.hi0)
        e++;
    if (f == e)
        return false;
    cs = cstart[f] > pa ? cstart[f] : pa;
    ce = cstart[e] < pb ? cstart[e] : pb;
    return cs < ce;
}

/* Device copies of the index arrays a join kernel reads. */
struct grid_dev {
    uint32_t *ids; /* sorted position -> row */
    long long *ukey;
    size_t *cstart, *gpos, *qpos;
    uint32_t *glen, *gcell;
    size_t ncell;
    grid_dims grid;
    /* Sub-cells (the device build at d <= 3, kernels/grid_gpu.cuh): each
     * cell's positions ordered by sub-cells of side 1/2^sub of its own,
     * so that every pair within one is within eps; sid[p] the run of
     * position p, sbeg[r] run r's first position (sbeg[nsub] = n). NULL
     * and 0 where the index has none. */
    uint32_t *sid, *sbeg;
    size_t nsub;
    int sub;
    size_t own_rows; /* rows in sub-cells of KERN_GRID_OWN_MIN rows or more */
};

template <typename T> static int grid_put(f64_run *r, T **dst, const T *src, size_t m)
{
    int rc = f64_malloc(r, (void **)dst, (m ? m : 1) * sizeof(T), "the grid index");
    if (rc)
        return rc;
    if (m)
        KERN_CUDA(cudaMemcpy(*dst, src, m * sizeof(T), cudaMemcpyHostToDevice));
    return 0;
}

static inline int grid_upload(f64_run *r, const grid_index *ix, grid_dev *v)
{
    int rc;
    v->ncell = ix->ncell;
    v->grid = ix->grid;
    if ((rc = grid_put(r, &v->ids, ix->order, r->a->n)) ||
        (rc = grid_put(r, &v->ukey, ix->ukey, ix->ncell)) ||
        (rc = grid_put(r, &v->cstart, ix->cstart, ix->ncell + 1)) ||
        (rc = grid_put(r, &v->gpos, ix->gpos, ix->ngroup)) ||
        (rc = grid_put(r, &v->glen, ix->glen, ix->ngroup)) ||
        (rc = grid_put(r, &v->gcell, ix->gcell, ix->ngroup)) ||
        (rc = grid_put(r, &v->qpos, ix->qpos, ix->nqpos)))
        return rc;
    return 0;
}

static inline void grid_dev_free(grid_dev *v)
{
    cudaFree(v->ids);
    cudaFree(v->ukey);
    cudaFree(v->cstart);
    cudaFree(v->gpos);
    cudaFree(v->glen);
    cudaFree(v->gcell);
    cudaFree(v->qpos);
    cudaFree(v->sid);
    cudaFree(v->sbeg);
    memset(v, 0, sizeof *v);
}

/* A built index and its device arrays, kept on a device across runs: one
 * slot per engine and device ordinal, touched only by the thread running
 * on that device. A run over the same rows, eps, query rows and index
 * choice builds and uploads nothing (the host index is most of a grid
 * run's time: docs/ACCURACY.md, "The FP64 grid path"); the run's budget
 * is charged its bytes. */
struct grid_cache {
    const void *x; /* the key */
    size_t n, d, q0, q1, group;
    uint64_t hash;
    double eps;
    int k, dev;
    grid_dev g; /* what a run reads */
    size_t ngroup;
    void *rows[2]; /* the engine's device rows (ted-index: and its prefix norms) */
    size_t bytes;  /* device bytes held */
};

static inline bool grid_cache_is(const grid_cache &c, const kern_join_args *a, double eps, int k,
                                 size_t group)
{
    return c.g.ids && c.x == a->x && c.n == a->n && c.d == a->d && c.hash == a->hash &&
           c.eps == eps && c.q0 == a->q0 && c.q1 == a->q1 && c.k == k && c.group == group &&
           c.dev == a->device;
}

/* Give back what the slot holds (on its own device). */
static inline void grid_cache_free(grid_cache &c)
{
    if (c.g.ids || c.rows[0] || c.rows[1]) {
        int cur = 0;
        cudaGetDevice(&cur);
        cudaSetDevice(c.dev);
        grid_dev_free(&c.g);
        cudaFree(c.rows[0]);
        cudaFree(c.rows[1]);
        cudaSetDevice(cur);
        cudaGetLastError();
    }
    memset(&c, 0, sizeof c);
}

/* Fill the slot's key after a build and upload whose allocations the run
 * charged (bytes: what they came to). */
static inline void grid_cache_keep(grid_cache &c, const kern_join_args *a, double eps, int k,
                                   size_t group, size_t ngroup, size_t bytes)
{
    c.x = a->x;
    c.n = a->n;
    c.d = a->d;
    c.q0 = a->q0;
    c.q1 = a->q1;
    c.group = group;
    c.hash = a->hash;
    c.eps = eps;
    c.k = k;
    c.dev = a->device;
    c.ngroup = ngroup;
    c.bytes = bytes;
}

/* Run the join over items of query-group ranges, each against every
 * candidate position (a PAIRS item that overflows is split by groups, then
 * by positions: the kernel clamps its candidates to [ca, cb)). Through
 * the queue (r->q) 16 ranges of at least 1024 groups, the same list for
 * any number of devices. */
static inline int grid_drive(f64_run *r, size_t ngroup, f64_launch_fn fn, void *user,
                             const char *what)
{
    if (ngroup == 0)
        return 0;
    size_t chunk = (size_t)1 << 16;
    if (r->q) {
        size_t c = ngroup / 16;
        c = c < 1024 ? 1024 : c;
        chunk = c < chunk ? c : chunk;
    }
    size_t nit = (ngroup + chunk - 1) / chunk;
    f64_item *items = (f64_item *)malloc(nit * sizeof *items);
    if (!items)
        return kern_fail(KERN_ENOMEM, "out of host memory for the work items");
    for (size_t i = 0; i < nit; i++) {
        size_t lo = i * chunk, hi = lo + chunk < ngroup ? lo + chunk : ngroup;
        items[i] = f64_item{lo, hi, 0, r->a->n, 0};
    }
    int rc = f64_drive(r, items, nit, fn, user, what);
    free(items);
    return rc;
}

#endif
