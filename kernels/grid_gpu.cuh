/* The grid index of kernels/grid_index.cuh built on the device: the rows
 * uploaded in their stored type and widened there, each dimension's range
 * and variance reduced by blocks, cell keys in FP64 by the host build's
 * formula, a CUB radix sort of (key, row), cell ranges and query groups
 * from exclusive scans, and the rows gathered into cell order. The host
 * keeps only the few numbers that choose the cells (dimension order,
 * ranges); the index arrays a join kernel reads (grid_dev) never exist
 * on the host. Same cells, same keys, same groups as grid_build: the
 * join's pairs do not depend on which built it (tests/gpu/g_grid.c). */
#ifndef TCJ_GRID_GPU_CUH
#define TCJ_GRID_GPU_CUH

#include <cuda_fp16.h>
#include <limits.h>
#include <math.h>

#include <cub/cub.cuh>

#include "grid_index.cuh"

#define GG_THREADS 256
#define GG_STAT_BLOCKS 512 /* row blocks of the range/variance reduction */

/* The stored values widened to FP64 (exact: every type here embeds in it). */
template <typename T> __device__ __forceinline__ double gg_wide(T v)
{
    return (double)v;
}
template <> __device__ __forceinline__ double gg_wide<__half>(__half v)
{
    return (double)__half2float(v);
}

template <typename T>
static __global__ void gg_widen_kernel(const T *__restrict__ src, size_t m, double *dst)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (size_t)gridDim.x * blockDim.x)
        dst[i] = gg_wide<T>(src[i]);
}

struct gg_min {
    __device__ __forceinline__ double operator()(double a, double b) const
    {
        return fmin(a, b);
    }
};
struct gg_max {
    __device__ __forceinline__ double operator()(double a, double b) const
    {
        return fmax(a, b);
    }
};

/* One dimension (blockIdx.y) over a block's share of rows: min, max, and
 * the sums of (x - s) and (x - s)^2 with s the first row's value (the
 * shifted-data variance: offsets of 5e6 with a spread of 1e-2 keep their
 * digits); the first non-finite value, row-major, into *bad. */
static __global__ void gg_stats_kernel(const double *__restrict__ x, size_t n, size_t d,
                                       double *part, unsigned long long *bad)
{
    typedef cub::BlockReduce<double, GG_THREADS> red;
    __shared__ typename red::TempStorage tmp;
    const size_t j = blockIdx.y;
    const double s = x[j];
    double mn = INFINITY, mx = -INFINITY, s1 = 0, s2 = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const double v = x[i * d + j];
        if (!isfinite(v)) {
            atomicMin(bad, (unsigned long long)(i * d + j));
            continue;
        }
        mn = fmin(mn, v);
        mx = fmax(mx, v);
        const double t = v - s;
        s1 += t;
        s2 += t * t;
    }
    double *p = part + (j * gridDim.x + blockIdx.x) * 4;
    double v = red(tmp).Reduce(mn, gg_min());
    if (threadIdx.x == 0)
        p[0] = v;
    __syncthreads();
    v = red(tmp).Reduce(mx, gg_max());
    if (threadIdx.x == 0)
        p[1] = v;
    __syncthreads();
    v = red(tmp).Sum(s1);
    if (threadIdx.x == 0)
        p[2] = v;
    __syncthreads();
    v = red(tmp).Sum(s2);
    if (threadIdx.x == 0)
        p[3] = v;
}

/* Each row's cell key, as grid_build forms it. */
struct gg_cells {
    int k, dim[GRID_MAXK];
    double lo[GRID_MAXK], side;
    grid_dims grid;
    int sb; /* sub-cell bits a dimension (0: none): 2^sb sub-cells a side */
};

static __global__ void gg_key_kernel(const double *__restrict__ x, size_t n, size_t d, gg_cells g,
                                     unsigned long long *key, uint32_t *row)
{
    const long long m = 1ll << g.sb;
    const double fine = g.side / (double)m;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        long long kv = 0, sv = 0;
        for (int j = 0; j < g.k; j++) {
            long long ci;
            if (g.sb) { /* the fine index first; the cell is its quotient */
                const double u = floor((x[i * d + g.dim[j]] - g.lo[j]) / fine);
                long long ui = u < 0 ? 0 : (long long)u;
                if (ui >= g.grid.cnt[j] * m)
                    ui = g.grid.cnt[j] * m - 1;
                ci = ui >> g.sb;
                sv = (sv << g.sb) | (ui & (m - 1));
            } else {
                const double c = floor((x[i * d + g.dim[j]] - g.lo[j]) / g.side);
                ci = c < 0 ? 0 : (long long)c;
                if (ci >= g.grid.cnt[j])
                    ci = g.grid.cnt[j] - 1;
            }
            kv += ci * g.grid.stride[j];
        }
        key[i] = ((unsigned long long)kv << (g.sb * g.k)) | (unsigned long long)sv;
        row[i] = (uint32_t)i;
    }
}

/* head[s] = 1 where sorted position s starts a cell; qf[s] = 1 where its
 * row is a query row; entry n of both is 0 (the scans then give totals). */
static __global__ void gg_flag_kernel(const unsigned long long *__restrict__ key,
                                      const uint32_t *__restrict__ row, size_t n, size_t q0,
                                      size_t q1, int shift, size_t *head, size_t *qf)
{
    for (size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x; s <= n;
         s += (size_t)gridDim.x * blockDim.x) {
        head[s] = s < n && (s == 0 || key[s] >> shift != key[s - 1] >> shift);
        qf[s] = s < n && row[s] >= q0 && row[s] < q1;
    }
}

/* Cell c starts at the sorted position whose exclusive head sum is c;
 * query rank r is the position whose exclusive query sum is r. */
static __global__ void gg_scatter_kernel(const unsigned long long *__restrict__ key,
                                         const size_t *__restrict__ head,
                                         const size_t *__restrict__ hpos,
                                         const size_t *__restrict__ qf,
                                         const size_t *__restrict__ qpos_of, size_t n, int shift,
                                         long long *ukey, size_t *cstart, size_t *qpos)
{
    for (size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x; s < n;
         s += (size_t)gridDim.x * blockDim.x) {
        if (head[s]) {
            ukey[hpos[s]] = (long long)(key[s] >> shift);
            cstart[hpos[s]] = s;
        }
        if (qf[s])
            qpos[qpos_of[s]] = s;
    }
}

/* The sub-cells' runs: head[s] = 1 where sorted position s starts one
 * (its whole key differs from the one before); entry n is 0. */
static __global__ void gg_sub_flag_kernel(const unsigned long long *__restrict__ key, size_t n,
                                          uint32_t *head)
{
    for (size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x; s <= n;
         s += (size_t)gridDim.x * blockDim.x)
        head[s] = s < n && (s == 0 || key[s] != key[s - 1]);
}

/* Each position's run (sid) and each run's first position (sbeg, the
 * total at nsub = spos[n]). */
static __global__ void gg_sub_scatter_kernel(const uint32_t *__restrict__ head,
                                             const uint32_t *__restrict__ spos, size_t n,
                                             uint32_t *sid, uint32_t *sbeg)
{
    for (size_t s = (size_t)blockIdx.x * blockDim.x + threadIdx.x; s <= n;
         s += (size_t)gridDim.x * blockDim.x) {
        if (s == n) {
            sbeg[spos[n]] = (uint32_t)n;
            continue;
        }
        sid[s] = spos[s] + head[s] - 1;
        if (head[s])
            sbeg[spos[s]] = (uint32_t)s;
    }
}

/* Groups a cell needs: its query rows in groups of at most `group`. */
static __global__ void gg_ngroup_kernel(const size_t *__restrict__ cstart,
                                        const size_t *__restrict__ qpos_of, size_t ncell,
                                        size_t group, size_t *ng)
{
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c <= ncell;
         c += (size_t)gridDim.x * blockDim.x)
        ng[c] = c < ncell ? (qpos_of[cstart[c + 1]] - qpos_of[cstart[c]] + group - 1) / group : 0;
}

/* Group t: its cell by a search of the groups' exclusive sums, then its
 * first query entry and length (a thread a group: a cell of 10^6
 * duplicates costs no single thread 3*10^4 writes). */
static __global__ void gg_group_kernel(const size_t *__restrict__ cstart,
                                       const size_t *__restrict__ qpos_of,
                                       const size_t *__restrict__ goff, size_t ncell, size_t ngroup,
                                       size_t group, size_t *gpos, uint32_t *glen, uint32_t *gcell)
{
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < ngroup;
         t += (size_t)gridDim.x * blockDim.x) {
        size_t lo = 0, hi = ncell; /* last c with goff[c] <= t */
        while (hi - lo > 1) {
            const size_t mid = (lo + hi) >> 1;
            if (goff[mid] <= t)
                lo = mid;
            else
                hi = mid;
        }
        const size_t qs = qpos_of[cstart[lo]], qe = qpos_of[cstart[lo + 1]];
        const size_t first = qs + (t - goff[lo]) * group;
        gpos[t] = first;
        glen[t] = (uint32_t)(qe - first < group ? qe - first : group);
        gcell[t] = (uint32_t)lo;
    }
}

/* out row s = x row row[s] (cell order), every column as it was. */
static __global__ void gg_gather_kernel(const double *__restrict__ x,
                                        const uint32_t *__restrict__ row, size_t n, size_t d,
                                        double *out)
{
    for (size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x; v < n * d;
         v += (size_t)gridDim.x * blockDim.x) {
        const size_t s = v / d, k = v - s * d;
        out[v] = x[(size_t)row[s] * d + k];
    }
}

static inline unsigned gg_blocks(size_t m)
{
    size_t b = (m + GG_THREADS - 1) / GG_THREADS;
    return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* Device scratch of one build, given back (and uncharged) at the end. */
#define GG_TMP_MAX                                                                                 \
    16 /* the build's scratch arrays: 14 at most (gg_rows' 2, ranges 2, keys 3,                    \
        * sort 1, cells 4, sub-cells 2) */
struct gg_tmp {
    kern_run *k;
    void *p[GG_TMP_MAX];
    size_t b[GG_TMP_MAX];
    int np;
};

static int gg_alloc(gg_tmp &t, void **p, size_t bytes, const char *what)
{
    if (t.np == GG_TMP_MAX)
        return kern_fail(KERN_EINVAL, "the grid build's scratch list is full (%s)", what);
    int rc = kern_malloc(t.k, p, bytes ? bytes : 1, what);
    if (rc == 0) {
        t.p[t.np] = *p;
        t.b[t.np++] = bytes ? bytes : 1;
    }
    return rc;
}

static void gg_release(gg_tmp &t)
{
    for (int i = 0; i < t.np; i++)
        kern_free(t.k, t.p[i], t.b[i]);
    t.np = 0;
}

/* The run's rows as n x d FP64 on the device, in row order: the stored
 * values uploaded and widened there where the device knows their type
 * (kern_join_args.x_type), else widened on the host (f64_upload). */
static int gg_rows(f64_run *r, const kern_join_args *a, gg_tmp &t, double **xw)
{
    const size_t n = a->n, d = a->d, m = n * d;
    if (a->x_to_f64 && (a->x_type < KERN_X_F32 || a->x_type > KERN_X_U8)) {
        int rc = f64_upload(r, a, NULL, d, NULL, xw);
        if (rc == 0) {
            t.p[t.np] = *xw;
            t.b[t.np++] = m * sizeof(double) + 64;
        }
        return rc;
    }
    int rc = gg_alloc(t, (void **)xw, m * sizeof(double), "the grid's FP64 rows");
    if (rc || !a->x_to_f64) { /* FP64 already */
        if (rc == 0) {
            double t0 = kern_now();
            KERN_CUDA(cudaMemcpy(*xw, a->x, m * sizeof(double), cudaMemcpyHostToDevice));
            r->res->t_h2d += kern_now() - t0;
        }
        return rc;
    }
    void *raw;
    if ((rc = gg_alloc(t, &raw, m * a->x_bytes, "the grid's stored rows")))
        return rc;
    double t0 = kern_now();
    KERN_CUDA(cudaMemcpy(raw, a->x, m * a->x_bytes, cudaMemcpyHostToDevice));
    r->res->t_h2d += kern_now() - t0;
    cudaStream_t st = r->k.st;
    switch (a->x_type) {
    case KERN_X_F32:
        gg_widen_kernel<float><<<gg_blocks(m), GG_THREADS, 0, st>>>((const float *)raw, m, *xw);
        break;
    case KERN_X_F16:
        gg_widen_kernel<__half><<<gg_blocks(m), GG_THREADS, 0, st>>>((const __half *)raw, m, *xw);
        break;
    default:
        gg_widen_kernel<unsigned char>
            <<<gg_blocks(m), GG_THREADS, 0, st>>>((const unsigned char *)raw, m, *xw);
        break;
    }
    KERN_LAUNCH_CHECK("gg_widen_kernel");
    return 0;
}

/* Choose the cells from the rows' ranges, as grid_build does; perm gets
 * the dimensions by variance (or a->dim_order). KERN_EINVAL naming the
 * first value that is not finite (no cell holds it). */
static int gg_choose(f64_run *r, const kern_join_args *a, const double *xw, gg_tmp &t, double eps,
                     int k, double max_cells, gg_cells &g, int *perm, const char *who)
{
    const size_t n = a->n, d = a->d;
    const unsigned nb = gg_blocks(n) < GG_STAT_BLOCKS ? gg_blocks(n) : GG_STAT_BLOCKS;
    double *dpart;
    unsigned long long *dbad;
    int rc;
    if ((rc = gg_alloc(t, (void **)&dpart, (size_t)nb * d * 4 * sizeof(double),
                       "the grid's ranges")) ||
        (rc = gg_alloc(t, (void **)&dbad, sizeof *dbad, "the grid's ranges")))
        return rc;
    cudaStream_t st = r->k.st;
    KERN_CUDA(cudaMemsetAsync(dbad, 0xff, sizeof *dbad, st));
    if (d > 65535)
        return kern_fail(KERN_EINVAL, "%s: %zu dimensions (the index takes at most 65535)", who, d);
    gg_stats_kernel<<<dim3(nb, (unsigned)d), GG_THREADS, 0, st>>>(xw, n, d, dpart, dbad);
    KERN_LAUNCH_CHECK("gg_stats_kernel");
    double *part = (double *)malloc((size_t)nb * d * 4 * sizeof(double) + 3 * d * sizeof(double));
    if (!part)
        return kern_fail(KERN_ENOMEM, "out of host memory for the grid's ranges");
    unsigned long long bad;
    cudaError_t e = cudaMemcpyAsync(part, dpart, (size_t)nb * d * 4 * sizeof(double),
                                    cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(&bad, dbad, sizeof bad, cudaMemcpyDeviceToHost, st);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(st);
    if (e != cudaSuccess) {
        free(part);
        return kern_cuda_fail(e, "the grid's ranges", __FILE__, __LINE__);
    }
    if (bad != ~0ull) {
        free(part);
        return kern_fail(KERN_EINVAL,
                         "%s: row %llu, column %llu is not finite (no grid cell holds it); "
                         "set exact-path pass, or run fp64",
                         who, bad / d, bad % d);
    }
    double *mn = part + (size_t)nb * d * 4, *mx = mn + d, *var = mx + d;
    for (size_t j = 0; j < d; j++) {
        double lo = INFINITY, hi = -INFINITY, s1 = 0, s2 = 0;
        for (unsigned b = 0; b < nb; b++) {
            const double *p = part + (j * nb + b) * 4;
            lo = fmin(lo, p[0]);
            hi = fmax(hi, p[1]);
            s1 += p[2];
            s2 += p[3];
        }
        mn[j] = lo;
        mx[j] = hi;
        var[j] = s2 - s1 * (s1 / (double)n); /* n times the variance: the order is the same */
    }
    if (a->dim_order)
        memcpy(perm, a->dim_order, d * sizeof(int));
    else
        for (size_t j = 0; j < d; j++) { /* descending, ties by index: kern_dims_by_variance's */
            size_t m = j;
            while (m > 0 && var[perm[m - 1]] < var[j]) {
                perm[m] = perm[m - 1];
                m--;
            }
            perm[m] = (int)j;
        }

    /* Cells a hair over eps and the keys' strides: grid_build's rules. */
    memset(&g, 0, sizeof g);
    g.side = eps * (1.0 + 1e-6);
    if (k > GRID_MAXK)
        k = GRID_MAXK;
    if ((size_t)k > d)
        k = (int)d;
    long long total = 1;
    int kk = 0;
    for (; kk < k; kk++) {
        const int dim = perm[kk];
        double c = floor((mx[dim] - mn[dim]) / g.side) + 1;
        if (!(c >= 1))
            c = 1;
        if (max_cells > 0 && c > max_cells)
            break;
        if (c > 4e18 / (double)total)
            break;
        g.dim[kk] = dim;
        g.lo[kk] = mn[dim];
        g.grid.cnt[kk] = (long long)c;
        g.grid.stride[kk] = total;
        total *= (long long)c;
    }
    free(part);
    g.k = kk;
    g.grid.k = kk > 0 ? kk : 1;
    if (kk == 0) {
        g.grid.cnt[0] = 1;
        g.grid.stride[0] = 1;
    }
    return 0;
}

/* Build the index of a's rows at eps on this run's device: c.g gets the
 * arrays a join kernel reads and *xs the rows (n x d FP64) in cell order,
 * all charged to the run and kept by the caller; *ngroup the query
 * groups. The time goes to t_prep (index) and t_h2d (upload). */
static int grid_build_gpu(f64_run *r, const kern_join_args *a, double eps, int k, double max_cells,
                          int sub, size_t group, grid_dev *v, size_t *ngroup, double **xs,
                          const char *who)
{
    const size_t n = a->n, d = a->d;
    memset(v, 0, sizeof *v);
    *xs = NULL;
    *ngroup = 0;
    if (n > (size_t)INT_MAX)
        return kern_fail(KERN_EINVAL, "%s: %zu rows (the device index takes at most %d)", who, n,
                         INT_MAX);
    gg_tmp t;
    memset(&t, 0, sizeof t);
    t.k = &r->k;
    cudaStream_t st = r->k.st;
    int *perm = (int *)malloc(d * sizeof(int));
    if (!perm)
        return kern_fail(KERN_ENOMEM, "out of host memory for the grid index");
    double *xw = NULL;
    unsigned long long *key = NULL, *key2 = NULL;
    uint32_t *row = NULL;
    size_t *head, *hpos, *qf, *qpos_of, *ng, *goff;
    void *cub_tmp = NULL;
    size_t cub_bytes = 0, sort_bytes = 0, scan_bytes = 0, nc = 0, ngr = 0;
    gg_cells g;
    double t0;
    int end_bit = 1, shift = 0;
    uint32_t *shead = NULL, *spos = NULL;
    size_t sscan_bytes = 0;
    unsigned long long cells;
    int rc = gg_rows(r, a, t, &xw);
    t0 = kern_now();
    if (rc == 0)
        rc = gg_choose(r, a, xw, t, eps, k, max_cells, g, perm, who);
    if (rc)
        goto out;
    cells = (unsigned long long)(g.grid.cnt[g.grid.k - 1] * g.grid.stride[g.grid.k - 1]);
    /* Sub-cells where every dimension is indexed and the keys have room. */
    g.sb = sub && g.k == (int)d && g.k * sub < 16 && cells <= (1ull << 62) >> (g.k * sub) ? sub : 0;
    shift = g.sb * g.k;
    while (end_bit < 64 && ((cells << shift) - 1) >> end_bit)
        end_bit++;
    if ((rc = gg_alloc(t, (void **)&key, n * sizeof *key, "the grid's keys")) ||
        (rc = gg_alloc(t, (void **)&key2, n * sizeof *key2, "the grid's keys")) ||
        (rc = gg_alloc(t, (void **)&row, n * sizeof *row, "the grid's keys")) ||
        (rc = f64_malloc(r, (void **)&v->ids, n * sizeof *v->ids, "the grid index")))
        goto out;
    gg_key_kernel<<<gg_blocks(n), GG_THREADS, 0, st>>>(xw, n, d, g, key, row);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(NULL, sort_bytes, key, key2, row, v->ids, (int)n,
                                                   0, end_bit, st),
                   out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(NULL, scan_bytes, (size_t *)NULL, (size_t *)NULL,
                                                 (int)n + 1, st),
                   out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(NULL, sscan_bytes, (uint32_t *)NULL,
                                                 (uint32_t *)NULL, (int)n + 1, st),
                   out);
    cub_bytes = sort_bytes > scan_bytes ? sort_bytes : scan_bytes;
    cub_bytes = cub_bytes > sscan_bytes ? cub_bytes : sscan_bytes;
    if ((rc = gg_alloc(t, &cub_tmp, cub_bytes, "the grid's sort")))
        goto out;
    KERN_CUDA_GOTO(cub::DeviceRadixSort::SortPairs(cub_tmp, cub_bytes, key, key2, row, v->ids,
                                                   (int)n, 0, end_bit, st),
                   out);

    /* Cells and query ranks by exclusive sums over flags. */
    if ((rc = gg_alloc(t, (void **)&head, (n + 1) * sizeof(size_t), "the grid's cells")) ||
        (rc = gg_alloc(t, (void **)&hpos, (n + 1) * sizeof(size_t), "the grid's cells")) ||
        (rc = gg_alloc(t, (void **)&qf, (n + 1) * sizeof(size_t), "the grid's cells")) ||
        (rc = gg_alloc(t, (void **)&qpos_of, (n + 1) * sizeof(size_t), "the grid's cells")))
        goto out;
    gg_flag_kernel<<<gg_blocks(n + 1), GG_THREADS, 0, st>>>(key2, v->ids, n, a->q0, a->q1, shift,
                                                            head, qf);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(cub_tmp, cub_bytes, head, hpos, (int)n + 1, st),
                   out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(cub_tmp, cub_bytes, qf, qpos_of, (int)n + 1, st),
                   out);
    KERN_CUDA_GOTO(cudaMemcpyAsync(&nc, hpos + n, sizeof nc, cudaMemcpyDeviceToHost, st), out);
    KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
    v->ncell = nc;
    v->grid = g.grid;
    if ((rc = f64_malloc(r, (void **)&v->ukey, (nc ? nc : 1) * sizeof(long long),
                         "the grid index")) ||
        (rc = f64_malloc(r, (void **)&v->cstart, (nc + 1) * sizeof(size_t), "the grid index")) ||
        (rc = f64_malloc(r, (void **)&v->qpos, (n ? n : 1) * sizeof(size_t), "the grid index")))
        goto out;
    gg_scatter_kernel<<<gg_blocks(n), GG_THREADS, 0, st>>>(key2, head, hpos, qf, qpos_of, n, shift,
                                                           v->ukey, v->cstart, v->qpos);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cudaMemcpyAsync(v->cstart + nc, &n, sizeof n, cudaMemcpyHostToDevice, st), out);

    /* The sub-cells' runs: a position's run and each run's first position
     * (the dense-cell shortcuts of kernels/fp64_grid.cu). */
    if (g.sb) {
        size_t ns = 0;
        uint32_t ns32 = 0;
        if ((rc = gg_alloc(t, (void **)&shead, (n + 1) * sizeof *shead, "the grid's sub-cells")) ||
            (rc = gg_alloc(t, (void **)&spos, (n + 1) * sizeof *spos, "the grid's sub-cells")) ||
            (rc = f64_malloc(r, (void **)&v->sid, n * sizeof *v->sid, "the grid index")))
            goto out;
        gg_sub_flag_kernel<<<gg_blocks(n + 1), GG_THREADS, 0, st>>>(key2, n, shead);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        KERN_CUDA_GOTO(
            cub::DeviceScan::ExclusiveSum(cub_tmp, cub_bytes, shead, spos, (int)n + 1, st), out);
        KERN_CUDA_GOTO(cudaMemcpyAsync(&ns32, spos + n, sizeof ns32, cudaMemcpyDeviceToHost, st),
                       out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
        ns = ns32;
        if ((rc = f64_malloc(r, (void **)&v->sbeg, (ns + 1) * sizeof *v->sbeg, "the grid index")))
            goto out;
        gg_sub_scatter_kernel<<<gg_blocks(n + 1), GG_THREADS, 0, st>>>(shead, spos, n, v->sid,
                                                                       v->sbeg);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        v->nsub = ns;
        v->sub = g.sb;
    }

    /* Query groups: each cell's query rows cut into groups of `group`. */
    ng = head; /* reused: ncell + 1 <= n + 1 entries */
    goff = hpos;
    gg_ngroup_kernel<<<gg_blocks(nc + 1), GG_THREADS, 0, st>>>(v->cstart, qpos_of, nc, group, ng);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cub::DeviceScan::ExclusiveSum(cub_tmp, cub_bytes, ng, goff, (int)nc + 1, st),
                   out);
    KERN_CUDA_GOTO(cudaMemcpyAsync(&ngr, goff + nc, sizeof ngr, cudaMemcpyDeviceToHost, st), out);
    KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
    if ((rc = f64_malloc(r, (void **)&v->gpos, (ngr ? ngr : 1) * sizeof(size_t),
                         "the grid index")) ||
        (rc = f64_malloc(r, (void **)&v->glen, (ngr ? ngr : 1) * sizeof(uint32_t),
                         "the grid index")) ||
        (rc = f64_malloc(r, (void **)&v->gcell, (ngr ? ngr : 1) * sizeof(uint32_t),
                         "the grid index")))
        goto out;
    if (ngr) {
        gg_group_kernel<<<gg_blocks(ngr), GG_THREADS, 0, st>>>(v->cstart, qpos_of, goff, nc, ngr,
                                                               group, v->gpos, v->glen, v->gcell);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
    }
    *ngroup = ngr;

    /* The rows in cell order, each in its own dimension order. */
    if ((rc = f64_malloc(r, (void **)xs, n * d * sizeof(double) + 64, "the dataset (FP64)")))
        goto out;
    gg_gather_kernel<<<gg_blocks(n * d), GG_THREADS, 0, st>>>(xw, v->ids, n, d, *xs);
    KERN_CUDA_GOTO(cudaGetLastError(), out);
    KERN_CUDA_GOTO(cudaStreamSynchronize(st), out);
out:
    r->res->t_prep += kern_now() - t0;
    gg_release(t);
    free(perm);
    return rc;
}

#endif
