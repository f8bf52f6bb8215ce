/* `ted-index`: TED-Join with GDS-Join's grid index. Dimensions are
 * reordered by variance (largest first); cells of side eps cover the first
 * k of them; points are sorted by cell, so a cell's points are one range.
 * Query points are grouped 8 to a warp within a cell, so the warp's queries
 * share their candidates: the 3^k neighbouring cells, found by binary search
 * in the sorted array of non-empty cell keys (the 3 neighbours along the
 * first indexed dimension are consecutive keys, one search covers them).
 * Distances on FP64 tensor cores (mma m8n8k4, A scaled by -2), with the
 * loop over dimensions cut short once every distance of the warp's 8x8 tile
 * has passed eps (partial sums against prefix norms every 32 dimensions). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>

#include "f64_common.cuh"
#include "kern_util.cuh"
#include "ptx_f64.cuh"

#define TI_MAXK 8   /* 3^8 neighbour cells at most */
#define TI_CHUNK 32 /* dimensions between short-circuit checks */
#define TI_WARPS 8

struct ti_grid {
    int k;
    long long cnt[TI_MAXK];    /* cells along indexed dimension j */
    long long stride[TI_MAXK]; /* key = sum idx_j * stride_j, stride_0 = 1 */
};

/* Prefix squared norms of each row at the end of each chunk of dims. */
__global__ void ti_prefix_kernel(const double *__restrict__ x, size_t n, size_t dp, int nch,
                                 double *__restrict__ pre)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const double *r = x + i * dp;
    double s = 0;
    for (int c = 0; c < nch; c++) {
        size_t k1 = (size_t)(c + 1) * TI_CHUNK < dp ? (size_t)(c + 1) * TI_CHUNK : dp;
        for (size_t k = (size_t)c * TI_CHUNK; k < k1; k++)
            s += r[k] * r[k];
        pre[i * nch + c] = s;
    }
}

__device__ __forceinline__ size_t ti_lower_bound(const long long *keys, size_t m, long long v)
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

__global__ void __launch_bounds__(TI_WARPS * 32)
    ti_join_kernel(const double *__restrict__ x, const double *__restrict__ pre, int nch, size_t dp,
                   const uint32_t *__restrict__ ids, const long long *__restrict__ ukey,
                   const size_t *__restrict__ cstart, size_t ncell, const size_t *__restrict__ gpos,
                   const uint32_t *__restrict__ glen, const uint32_t *__restrict__ gcell,
                   const size_t *__restrict__ qpos, ti_grid grid, size_t ga, size_t gb, size_t pa,
                   size_t pb, f64_out o)
{
    const int lane = threadIdx.x & 31, g = f64_frag_g(lane), t = f64_frag_t(lane);
    const size_t grp = ga + (((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    if (grp >= gb)
        return; /* uniform over the warp */
    const unsigned len = glen[grp];
    const bool qok = (unsigned)g < len;
    const size_t qp = qpos[gpos[grp] + (qok ? g : len - 1)];
    const double *arow = x + qp * dp;
    const double *qpre = pre + qp * nch;
    const uint32_t qid = ids[qp];
    const double eps2 = o.eps2;
    unsigned long long local = 0;

    long long idx[TI_MAXK];
    const long long key = ukey[gcell[grp]];
    for (int j = 0; j < grid.k; j++)
        idx[j] = key / grid.stride[j] % grid.cnt[j];
    const long long lo0 = idx[0] > 0 ? -1 : 0, hi0 = idx[0] + 1 < grid.cnt[0] ? 1 : 0;

    int nnb = 1;
    for (int j = 1; j < grid.k; j++)
        nnb *= 3;
    for (int nb = 0; nb < nnb; nb++) {
        /* Offsets -1..1 in dimensions 1..k-1; dimension 0 as one key range. */
        long long base = key;
        bool inside = true;
        int rem = nb;
        for (int j = 1; j < grid.k; j++) {
            int off = rem % 3 - 1;
            rem /= 3;
            long long v = idx[j] + off;
            if (v < 0 || v >= grid.cnt[j])
                inside = false;
            base += off * grid.stride[j];
        }
        if (!inside)
            continue;
        size_t f = ti_lower_bound(ukey, ncell, base + lo0);
        size_t e = f;
        while (e < ncell && ukey[e] <= base + hi0)
            e++;
        if (f == e)
            continue;
        size_t cs = cstart[f], ce = cstart[e];
        cs = cs > pa ? cs : pa;
        ce = ce < pb ? ce : pb;
        for (size_t c0 = cs; c0 < ce; c0 += 8) {
            const size_t crow = c0 + g < ce ? c0 + g : ce - 1;
            const double *brow = x + crow * dp;
            const size_t col0 = c0 + 2 * t, col1 = col0 + 1;
            const bool ok0 = qok && col0 < ce, ok1 = qok && col1 < ce;
            const size_t cc0 = ok0 ? col0 : ce - 1, cc1 = ok1 ? col1 : ce - 1;
            double acc[2] = {0.0, 0.0};
            bool done = false;
            for (int c = 0; c < nch && !done; c++) {
                size_t k1 = (size_t)(c + 1) * TI_CHUNK < dp ? (size_t)(c + 1) * TI_CHUNK : dp;
                for (size_t k = (size_t)c * TI_CHUNK; k < k1; k += 4)
                    mma_m8n8k4_f64(acc, -2.0 * arow[k + t], brow[k + t], acc);
                double p0 = acc[0] + qpre[c] + pre[cc0 * nch + c];
                double p1 = acc[1] + qpre[c] + pre[cc1 * nch + c];
                bool live = (ok0 && p0 <= eps2) || (ok1 && p1 <= eps2);
                if (!__any_sync(0xffffffffu, live))
                    done = true;
                else if (c == nch - 1) {
                    if (ok0)
                        f64_emit(o, qid, ids[col0], fmax(p0, 0.0), local);
                    if (ok1)
                        f64_emit(o, qid, ids[col1], fmax(p1, 0.0), local);
                }
            }
        }
    }
    f64_flush(o, local);
}

/* The host-built index: points in cell order, cells, query groups. */
struct ti_index {
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
    ti_grid grid;
};

static void ti_free(ti_index *ix)
{
    free(ix->perm);
    free(ix->order);
    free(ix->ukey);
    free(ix->cstart);
    free(ix->gpos);
    free(ix->glen);
    free(ix->gcell);
    free(ix->qpos);
}

/* LSD radix sort of (key, row) by key, 16 bits a pass over the used bits. */
static void ti_sort(unsigned long long *key, uint32_t *row, size_t n, unsigned long long maxkey)
{
    unsigned long long *k2 = (unsigned long long *)malloc(n * sizeof *k2 + 8);
    uint32_t *r2 = (uint32_t *)malloc(n * sizeof *r2 + 4);
    size_t *cnt = (size_t *)malloc(65536 * sizeof *cnt);
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
}

static int ti_build(const kern_join_args *job, double eps, ti_index *ix)
{
    size_t n = job->n, d = job->d;
    memset(ix, 0, sizeof *ix);
    /* Each row widened to FP64 as it is read (the dataset's own type). */
    double *rbuf = (double *)malloc(d * sizeof *rbuf);
    const double *x;
    /* Variance per dimension (two passes, FP64). */
    double *mean = (double *)calloc(d, sizeof *mean), *var = (double *)calloc(d, sizeof *var);
    for (size_t i = 0; i < n; i++) {
        x = kern_row_f64(job, i, rbuf);
        for (size_t k = 0; k < d; k++)
            mean[k] += x[k];
    }
    for (size_t k = 0; k < d; k++)
        mean[k] /= (double)n;
    for (size_t i = 0; i < n; i++) {
        x = kern_row_f64(job, i, rbuf);
        for (size_t k = 0; k < d; k++) {
            double v = x[k] - mean[k];
            var[k] += v * v;
        }
    }
    /* Insertion sort, stable: largest variance first, ties by index. */
    ix->perm = (int *)malloc(d * sizeof(int));
    for (size_t k = 0; k < d; k++) {
        size_t j = k;
        while (j > 0 && var[ix->perm[j - 1]] < var[k]) {
            ix->perm[j] = ix->perm[j - 1];
            j--;
        }
        ix->perm[j] = (int)k;
    }
    free(mean);
    free(var);

    /* Cells of side a hair over eps: a pair within eps then differs by at
     * most one cell along every dimension despite rounding in the division. */
    double side = eps * (1.0 + 1e-6);
    int k = job->index_k > 0 ? job->index_k : 6;
    if (k > TI_MAXK)
        k = TI_MAXK;
    if ((size_t)k > d)
        k = (int)d;
    double lo[TI_MAXK];
    long long total = 1;
    int kk = 0;
    for (; kk < k; kk++) {
        int dim = ix->perm[kk];
        x = kern_row_f64(job, 0, rbuf);
        double mn = x[dim], mx = x[dim];
        for (size_t i = 1; i < n; i++) {
            double v = kern_row_f64(job, i, rbuf)[dim];
            mn = v < mn ? v : mn;
            mx = v > mx ? v : mx;
        }
        double c = floor((mx - mn) / side) + 1;
        if (!(c >= 1))
            c = 1;
        /* Keep every key within 2^62 (drop the dimensions that do not fit). */
        if (c > 4e18 / (double)total)
            break;
        lo[kk] = mn;
        ix->grid.cnt[kk] = (long long)c;
        ix->grid.stride[kk] = total;
        total *= (long long)c;
    }
    ix->grid.k = kk > 0 ? kk : 1;
    if (kk == 0) {
        ix->grid.cnt[0] = 1;
        ix->grid.stride[0] = 1;
        lo[0] = 0;
    }
    k = ix->grid.k;

    unsigned long long *key = (unsigned long long *)malloc(n * sizeof *key);
    ix->order = (uint32_t *)malloc(n * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        long long kv = 0;
        x = kern_row_f64(job, i, rbuf);
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
    ti_sort(key, ix->order, n, (unsigned long long)(total - 1));

    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[i] != key[i - 1])
            nc++;
    ix->ncell = nc;
    ix->ukey = (long long *)malloc(nc * sizeof(long long));
    ix->cstart = (size_t *)malloc((nc + 1) * sizeof(size_t));
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || key[i] != key[i - 1]) {
            ix->ukey[c] = (long long)key[i];
            ix->cstart[c++] = i;
        }
    ix->cstart[nc] = n;
    free(key);
    free(rbuf);

    /* Query groups: up to 8 query points of one cell. */
    ix->qpos = (size_t *)malloc((n ? n : 1) * sizeof(size_t));
    ix->gpos = (size_t *)malloc((n ? n : 1) * sizeof(size_t));
    ix->glen = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    ix->gcell = (uint32_t *)malloc((n ? n : 1) * sizeof(uint32_t));
    size_t nq = 0, ng = 0;
    for (size_t ci = 0; ci < nc; ci++) {
        size_t first = nq;
        for (size_t s = ix->cstart[ci]; s < ix->cstart[ci + 1]; s++)
            if (ix->order[s] >= job->q0 && ix->order[s] < job->q1)
                ix->qpos[nq++] = s;
        for (size_t s = first; s < nq; s += 8) {
            ix->gpos[ng] = s;
            ix->glen[ng] = (uint32_t)(nq - s < 8 ? nq - s : 8);
            ix->gcell[ng] = (uint32_t)ci;
            ng++;
        }
    }
    ix->nqpos = nq;
    ix->ngroup = ng;
    return 0;
}

struct ti_dev {
    double *x, *pre;
    uint32_t *ids;
    long long *ukey;
    size_t *cstart, *gpos, *qpos;
    uint32_t *glen, *gcell;
    int nch;
    size_t dp, ncell;
    ti_grid grid;
};

static int ti_launch(f64_run *r, const f64_item *it, void *user)
{
    const ti_dev *v = (const ti_dev *)user;
    size_t blocks = (it->qb - it->qa + TI_WARPS - 1) / TI_WARPS;
    ti_join_kernel<<<(unsigned)blocks, TI_WARPS * 32, 0, r->k.st>>>(
        v->x, v->pre, v->nch, v->dp, v->ids, v->ukey, v->cstart, v->ncell, v->gpos, v->glen,
        v->gcell, v->qpos, v->grid, it->qa, it->qb, it->ca, it->cb, r->out);
    return 0;
}

template <typename T> static int ti_put(f64_run *r, T **dst, const T *src, size_t m)
{
    int rc = f64_malloc(r, (void **)dst, (m ? m : 1) * sizeof(T), "the grid index");
    if (rc)
        return rc;
    if (m)
        KERN_CUDA(cudaMemcpy(*dst, src, m * sizeof(T), cudaMemcpyHostToDevice));
    return 0;
}

static int ti_upload(f64_run *r, const ti_index *ix, ti_dev *v)
{
    const kern_join_args *a = r->a;
    size_t n = a->n;
    /* Points in cell order with dimensions by variance, gathered a slab
     * at a time. */
    int rc = f64_upload(r, a, ix->order, v->dp, ix->perm, &v->x);
    if (rc)
        return rc;
    double t0 = kern_now();
    if ((rc = ti_put(r, &v->ids, ix->order, n)) ||
        (rc = ti_put(r, &v->ukey, ix->ukey, ix->ncell)) ||
        (rc = ti_put(r, &v->cstart, ix->cstart, ix->ncell + 1)) ||
        (rc = ti_put(r, &v->gpos, ix->gpos, ix->ngroup)) ||
        (rc = ti_put(r, &v->glen, ix->glen, ix->ngroup)) ||
        (rc = ti_put(r, &v->gcell, ix->gcell, ix->ngroup)) ||
        (rc = ti_put(r, &v->qpos, ix->qpos, ix->nqpos)))
        return rc;
    if ((rc = f64_malloc(r, (void **)&v->pre, n * v->nch * sizeof(double), "the prefix norms")))
        return rc;
    ti_prefix_kernel<<<(unsigned)((n + 255) / 256), 256, 0, r->k.st>>>(v->x, n, v->dp, v->nch,
                                                                       v->pre);
    KERN_LAUNCH_CHECK("ti_prefix_kernel");
    KERN_CUDA(cudaStreamSynchronize(r->k.st));
    r->res->t_h2d += kern_now() - t0;
    return 0;
}

/* The whole item list on one device (q NULL), or one device's share of a
 * run over several (kern_multi_fn): each device builds the same index (in
 * parallel, on the host) and takes ranges of query groups from q. A
 * group's candidates and arithmetic do not depend on the range it is in. */
static int ted_index_run_q(const kern_join_args *a, kern_join_result *res, kern_queue *q,
                           unsigned long long *taken)
{
    f64_run r;
    int rc = f64_begin(&r, a, res, "ted-index", 1);
    if (rc)
        return rc;
    r.q = q;
    res->prep_name = "index";
    double eps = a->mode == KJOIN_HIST ? sqrt(a->hist_edges[a->hist_nbins]) : a->eps;
    ti_index ix;
    double t0 = kern_now();
    if (!(eps > 0) || !isfinite(eps)) {
        f64_end(&r);
        return kern_fail(KERN_EINVAL, "ted-index needs a positive finite eps (got %g)", eps);
    }
    ti_build(a, eps, &ix);
    res->t_prep += kern_now() - t0;

    ti_dev v;
    memset(&v, 0, sizeof v);
    v.dp = (a->d + 3) / 4 * 4;
    v.nch = (int)((v.dp + TI_CHUNK - 1) / TI_CHUNK);
    v.ncell = ix.ncell;
    v.grid = ix.grid;
    rc = ti_upload(&r, &ix, &v);
    if (rc == 0 && ix.ngroup > 0) {
        /* Items of group ranges, all candidate positions. */
        size_t chunk = (size_t)1 << 16;
        if (q) /* 16 ranges, of at least 1024 groups: the same for any number of devices */
            chunk = std::min(chunk, std::max((size_t)1024, ix.ngroup / 16));
        size_t nit = (ix.ngroup + chunk - 1) / chunk;
        f64_item *items = (f64_item *)malloc(nit * sizeof *items);
        if (!items) {
            rc = kern_fail(KERN_ENOMEM, "out of host memory for the work items");
        } else {
            for (size_t i = 0; i < nit; i++) {
                size_t lo = i * chunk, hi = lo + chunk < ix.ngroup ? lo + chunk : ix.ngroup;
                items[i] = f64_item{lo, hi, 0, a->n, 0};
            }
            rc = f64_drive(&r, items, nit, ti_launch, &v, "ted-index");
            free(items);
        }
    }
    if (rc == 0)
        rc = f64_finish(&r);
    res->d_padded = v.dp;
    snprintf(res->variant, sizeof res->variant,
             "index k=%d, %zu cells, %zu groups, mma m8n8k4, 8 queries/warp", ix.grid.k, ix.ncell,
             ix.ngroup);
    cudaFree(v.x);
    cudaFree(v.pre);
    cudaFree(v.ids);
    cudaFree(v.ukey);
    cudaFree(v.cstart);
    cudaFree(v.gpos);
    cudaFree(v.glen);
    cudaFree(v.gcell);
    cudaFree(v.qpos);
    ti_free(&ix);
    if (taken)
        *taken = r.taken;
    f64_end(&r);
    return rc;
}

extern "C" int kern_ted_index_run(const kern_join_args *a, kern_join_result *res)
{
    if (a->ndevices > 0)
        return kern_multi_run(a, res, ted_index_run_q);
    return ted_index_run_q(a, res, NULL, NULL);
}
