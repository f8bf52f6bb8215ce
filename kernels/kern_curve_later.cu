/* The rows a later join of DBSCAN's curve must query, on the device
 * (kern_curve_later.cuh). The host's rules (src/cluster/curve_later.c),
 * each a pass over the rows:
 *  - a row is in where its core distance is within max and its
 *    component is open by its lists (bound below +inf);
 *  - a part is mixed where its in rows belong to two components or more
 *    (each part's least such component by atomicMin, then any other);
 *  - a component is open where one of its in rows lies in a mixed part;
 *  - the largest open component is the first to reach the greatest size
 *    in row order: of those of the greatest size, the one whose last row
 *    comes first, found as the greatest (size, ~last row) key;
 *  - the rows: the open components' but the largest's ascending, then
 *    the largest's ascending, placed by one scan of both counts packed in
 *    one 64-bit value (each below 2^32).
 * Every device array from one allocation of the device's pool. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_curve_later.cuh"

#define KCL_THREADS 256
#define KCL_BIG (1ull << 32)

__device__ __forceinline__ bool kcl_row_in(const kcl_in &c, size_t i)
{
    return c.core[i] != INFINITY && c.bound[c.comp[i]].w != INFINITY;
}

static __global__ void kcl_first_kernel(kcl_in c, const uint32_t *part, uint32_t *first)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x)
        if (kcl_row_in(c, i))
            atomicMin(&first[part ? part[i] : 0], c.comp[i]);
}

static __global__ void kcl_mixed_kernel(kcl_in c, const uint32_t *part, const uint32_t *first,
                                        uint8_t *mixed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t p = part ? part[i] : 0;
        if (kcl_row_in(c, i) && c.comp[i] != first[p])
            mixed[p] = 1;
    }
}

static __global__ void kcl_open_kernel(kcl_in c, const uint32_t *part, const uint8_t *mixed,
                                       uint8_t *open)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x)
        if (kcl_row_in(c, i) && mixed[part ? part[i] : 0])
            open[c.comp[i]] = 1;
}

/* Each open component's size and last row. */
static __global__ void kcl_size_kernel(kcl_in c, const uint8_t *open, uint32_t *size,
                                       uint32_t *last)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t r = c.comp[i];
        if (open[r]) {
            atomicAdd(&size[r], 1u);
            atomicMax(&last[r], (uint32_t)i);
        }
    }
}

/* The largest: the greatest (size, ~last) over the open roots. */
static __global__ void kcl_big_kernel(kcl_in c, const uint8_t *open, const uint32_t *size,
                                      const uint32_t *last, unsigned long long *big)
{
    for (size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x; r < c.n;
         r += (size_t)gridDim.x * blockDim.x)
        if (c.comp[r] == r && open[r])
            atomicMax(big, (unsigned long long)size[r] << 32 | (uint32_t)~last[r]);
}

/* The largest's root from its key (its last row's component). */
__device__ __forceinline__ uint32_t kcl_big_root(const kcl_in &c, unsigned long long big)
{
    return big ? c.comp[(uint32_t) ~(uint32_t)big] : UINT32_MAX;
}

/* Each row's counts: 1 an open row not the largest's, 2^32 the largest's. */
static __global__ void kcl_flag_kernel(kcl_in c, const uint8_t *open, const unsigned long long *big,
                                       unsigned long long *flag)
{
    const uint32_t b = kcl_big_root(c, *big);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x) {
        const uint32_t r = c.comp[i];
        flag[i] = !open[r] ? 0 : r == b ? KCL_BIG : 1;
    }
}

/* Each flagged row to its place; tot: the two counts. */
static __global__ void kcl_place_kernel(size_t n, const unsigned long long *flag,
                                        const unsigned long long *at, uint32_t *rows,
                                        unsigned long long *tot)
{
    const unsigned long long all = at[n - 1] + flag[n - 1];
    const uint32_t m = (uint32_t)all;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (i == 0)
            *tot = all;
        if (flag[i] == 1)
            rows[(uint32_t)at[i]] = (uint32_t)i;
        else if (flag[i])
            rows[m + (uint32_t)(at[i] >> 32)] = (uint32_t)i;
    }
}

struct kcl_room {
    uint32_t *first, *part, *size, *last, *rows;
    uint8_t *mixed, *open;
    unsigned long long *big, *tot, *flag, *at;
    void *tmp;
};

static size_t kcl_carve(kcl_room *r, char *base, size_t n, int part, size_t tmp)
{
    size_t at = 0;
    auto take = [&](size_t bytes) {
        void *p = base ? base + at : NULL;
        at += (bytes + 255) / 256 * 256;
        return p;
    };
    const size_t np = part ? n : 1;
    r->first = (uint32_t *)take(np * 4);
    r->part = part ? (uint32_t *)take(n * 4) : NULL;
    r->mixed = (uint8_t *)take(np);
    r->open = (uint8_t *)take(n);
    r->size = (uint32_t *)take(n * 4);
    r->last = (uint32_t *)take(n * 4);
    r->rows = (uint32_t *)take(n * 4);
    r->big = (unsigned long long *)take(8);
    r->tot = (unsigned long long *)take(8);
    r->flag = (unsigned long long *)take(n * 8);
    r->at = (unsigned long long *)take(n * 8);
    r->tmp = take(tmp);
    return at;
}

static int kcl_run(const kcl_in *in, kcl_room &r, size_t tmp, uint32_t *rows, size_t *m, size_t *mb)
{
    const size_t n = in->n, np = r.part ? n : 1;
    const unsigned blocks = kern_grid_blocks(n, KCL_THREADS);
    if (r.part)
        KERN_CUDA(cudaMemcpy(r.part, in->part, n * 4, cudaMemcpyHostToDevice));
    KERN_CUDA(cudaMemset(r.first, 0xff, np * 4));
    KERN_CUDA(cudaMemset(r.mixed, 0, np));
    KERN_CUDA(cudaMemset(r.open, 0, n));
    KERN_CUDA(cudaMemset(r.size, 0, n * 4));
    KERN_CUDA(cudaMemset(r.last, 0, n * 4));
    KERN_CUDA(cudaMemset(r.big, 0, 8));
    kcl_first_kernel<<<blocks, KCL_THREADS>>>(*in, r.part, r.first);
    kcl_mixed_kernel<<<blocks, KCL_THREADS>>>(*in, r.part, r.first, r.mixed);
    kcl_open_kernel<<<blocks, KCL_THREADS>>>(*in, r.part, r.mixed, r.open);
    kcl_size_kernel<<<blocks, KCL_THREADS>>>(*in, r.open, r.size, r.last);
    kcl_big_kernel<<<blocks, KCL_THREADS>>>(*in, r.open, r.size, r.last, r.big);
    kcl_flag_kernel<<<blocks, KCL_THREADS>>>(*in, r.open, r.big, r.flag);
    KERN_CUDA(cudaGetLastError());
    size_t t = tmp;
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(r.tmp, t, r.flag, r.at, (int)n));
    kcl_place_kernel<<<blocks, KCL_THREADS>>>(n, r.flag, r.at, r.rows, r.tot);
    KERN_CUDA(cudaGetLastError());
    unsigned long long tot = 0;
    KERN_CUDA(cudaMemcpy(&tot, r.tot, 8, cudaMemcpyDeviceToHost));
    *m = (uint32_t)tot;
    *mb = *m ? (size_t)(tot >> 32) : 0;
    if (*m)
        KERN_CUDA(cudaMemcpy(rows, r.rows, (*m + *mb) * 4, cudaMemcpyDeviceToHost));
    return 0;
}

int kcl_rows(const kcl_in *in, uint32_t *rows, size_t *m, size_t *mb)
{
    *m = *mb = 0;
    const size_t n = in->n;
    if (n == 0)
        return 0;
    if (n > (size_t)INT_MAX)
        return kern_fail(KERN_ENOMEM, "dbscan curve's later rows: %zu rows", n);
    size_t tmp = 0;
    KERN_CUDA(cub::DeviceScan::ExclusiveSum(NULL, tmp, (const unsigned long long *)NULL,
                                            (unsigned long long *)NULL, (int)n));
    kcl_room r;
    const size_t bytes = kcl_carve(&r, NULL, n, in->part != NULL, tmp);
    char *base = NULL;
    int rc = kern_consume_malloc(&base, bytes, "dbscan curve's later rows");
    if (rc)
        return rc;
    kcl_carve(&r, base, n, in->part != NULL, tmp);
    rc = kcl_run(in, r, tmp, rows, m, mb);
    const cudaError_t e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    return rc;
}

extern "C" int kern_curve_later_rows(size_t n, const double *core, const uint32_t *comp,
                                     const curve_edge *bound, const uint32_t *part, uint32_t *rows,
                                     size_t *m, size_t *mb)
{
    *m = *mb = 0;
    if (n == 0)
        return 0;
    char *base = NULL;
    const size_t cb = (n * 8 + 255) / 256 * 256, pb = (n * 4 + 255) / 256 * 256;
    int rc = kern_consume_malloc(&base, cb + pb + n * sizeof(curve_edge), "the later rows' test");
    if (rc)
        return rc;
    kcl_in in = {n, (const double *)base, (const uint32_t *)(base + cb),
                 (const curve_edge *)(base + cb + pb), part};
    cudaError_t e;
    if ((e = cudaMemcpy(base, core, n * 8, cudaMemcpyHostToDevice)) ||
        (e = cudaMemcpy(base + cb, comp, n * 4, cudaMemcpyHostToDevice)) ||
        (e = cudaMemcpy(base + cb + pb, bound, n * sizeof(curve_edge), cudaMemcpyHostToDevice)))
        rc = kern_cuda_fail(e, "cudaMemcpy", __FILE__, __LINE__);
    if (!rc)
        rc = kcl_rows(&in, rows, m, mb);
    e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    return rc;
}
