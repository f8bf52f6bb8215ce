/* DBSCAN curve's end on the device (kern_curve_tail.cuh): later_rows's
 * first test over the merging's components, and where it leaves no join,
 * the three sorts of src/dbscan_curve.c's final_sorts on the values where
 * they are, only the sorted arrays crossing to the host. CUB's radix sort
 * as kern_sort.cu's (the same values, the same order: the forest's among
 * equal weights is free, replay_largest takes a weight's edges whole).
 * Every array from one allocation of the device's pool. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_curve_tail.cuh"

#define KCT_THREADS 256

static unsigned kct_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1,
                              std::min((n + KCT_THREADS - 1) / KCT_THREADS, (size_t)4096));
}

/* Row i is one a later join would query for: core within max, its
 * component open by its lists (later_rows's later_in). */
__device__ __forceinline__ bool kct_in_open(const kct_in &c, size_t i)
{
    return c.core[i] != INFINITY && c.bound[c.comp[i]].w != INFINITY;
}

/* Each part's least open component among its rows (part NULL: one). */
static __global__ void kct_first_kernel(kct_in c, const uint32_t *part, uint32_t *first)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x)
        if (kct_in_open(c, i))
            atomicMin(&first[part ? part[i] : 0], c.comp[i]);
}

/* *mixed = 1 where a part holds rows of two open components. */
static __global__ void kct_mixed_kernel(kct_in c, const uint32_t *part, const uint32_t *first,
                                        unsigned *mixed)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < c.n;
         i += (size_t)gridDim.x * blockDim.x)
        if (kct_in_open(c, i) && c.comp[i] != first[part ? part[i] : 0])
            *mixed = 1;
}

/* The forest's edges as keys (w) and values (the ends, a << 32 | b). */
static __global__ void kct_split_kernel(const kern_curve_edge *e, size_t m, double *w,
                                        unsigned long long *ab)
{
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (size_t)gridDim.x * blockDim.x) {
        w[k] = e[k].w;
        ab[k] = (unsigned long long)e[k].a << 32 | e[k].b;
    }
}

static __global__ void kct_join_kernel(const double *w, const unsigned long long *ab, size_t m,
                                       kern_curve_edge *e)
{
    for (size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x; k < m;
         k += (size_t)gridDim.x * blockDim.x) {
        kern_curve_edge x;
        x.w = w[k];
        x.a = (uint32_t)(ab[k] >> 32);
        x.b = (uint32_t)ab[k];
        e[k] = x;
    }
}

/* The arrays, carved from one allocation at 256-byte boundaries. */
struct kct_room {
    uint32_t *first, *part;
    unsigned *mixed;
    double *core, *reach, *w0, *w1;
    unsigned long long *ab0, *ab1;
    kern_curve_edge *edges;
    void *tmp[3]; /* CUB's, a sort each (they run side by side) */
};

static size_t kct_carve(kct_room *r, char *base, size_t n, size_t nf, int part, size_t tmp)
{
    size_t at = 0;
    auto take = [&](size_t bytes) {
        void *p = base ? base + at : NULL;
        at += (bytes + 255) / 256 * 256;
        return p;
    };
    r->first = (uint32_t *)take(n * 4);
    r->part = part ? (uint32_t *)take(n * 4) : NULL;
    r->mixed = (unsigned *)take(sizeof(unsigned));
    r->core = (double *)take(n * 8);
    r->reach = (double *)take(n * 8);
    r->w0 = (double *)take(nf * 8);
    r->w1 = (double *)take(nf * 8);
    r->ab0 = (unsigned long long *)take(nf * 8);
    r->ab1 = (unsigned long long *)take(nf * 8);
    r->edges = (kern_curve_edge *)take(nf * sizeof(kern_curve_edge));
    for (int q = 0; q < 3; q++)
        r->tmp[q] = take(tmp);
    return at;
}

/* CUB's temporary bytes for a sort (the largest of the three). */
static int kct_tmp(size_t n, size_t nf, size_t *tmp)
{
    size_t a = 0, b = 0;
    KERN_CUDA(
        cub::DeviceRadixSort::SortKeys(NULL, a, (const double *)NULL, (double *)NULL, (int)n));
    if (nf)
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, b, (const double *)NULL, (double *)NULL,
                                                  (const unsigned long long *)NULL,
                                                  (unsigned long long *)NULL, (int)nf));
    *tmp = std::max(a, b);
    return 0;
}

static int kct_run(const kct_in *in, kct_room &r, size_t tmp, double *core_out, double *reach_out,
                   kern_curve_edge *forest_out, int *finished)
{
    const size_t n = in->n, nf = in->nf;
    if (in->open > 1) { /* later_rows's first test */
        if (r.part)
            KERN_CUDA(cudaMemcpy(r.part, in->part, n * 4, cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMemset(r.first, 0xff, (r.part ? n : 1) * 4));
        KERN_CUDA(cudaMemset(r.mixed, 0, sizeof(unsigned)));
        kct_first_kernel<<<kct_blocks(n), KCT_THREADS>>>(*in, r.part, r.first);
        kct_mixed_kernel<<<kct_blocks(n), KCT_THREADS>>>(*in, r.part, r.first, r.mixed);
        KERN_CUDA(cudaGetLastError());
        unsigned mixed = 0;
        KERN_CUDA(cudaMemcpy(&mixed, r.mixed, sizeof mixed, cudaMemcpyDeviceToHost));
        if (mixed)
            return 0; /* a later join has rows: the host's rounds go on */
    }
    /* the three on streams of their own: at 60,000 values each sort is
     * a few blocks' latency, 0.09 ms one after another (H200). What they
     * read is done: the default stream's last work before here (the
     * merging's passes, the test above) ended in a copy to the host. */
    cudaStream_t st[3] = {NULL, NULL, NULL};
    int rc = 0;
    for (int q = 0; q < 3 && !rc; q++)
        if (cudaStreamCreateWithFlags(&st[q], cudaStreamNonBlocking) != cudaSuccess) {
            (void)cudaGetLastError();
            st[q] = NULL; /* the default stream: one after another */
        }
    size_t t[3] = {tmp, tmp, tmp};
    cudaError_t e;
    if ((e = cub::DeviceRadixSort::SortKeys(r.tmp[0], t[0], in->core, r.core, (int)n, 0, 64,
                                            st[0])) ||
        (e = cub::DeviceRadixSort::SortKeys(r.tmp[1], t[1], in->reach, r.reach, (int)n, 0, 64,
                                            st[1])))
        rc = kern_cuda_fail(e, "cub::DeviceRadixSort::SortKeys", __FILE__, __LINE__);
    if (!rc && nf) {
        kct_split_kernel<<<kct_blocks(nf), KCT_THREADS, 0, st[2]>>>(in->forest, nf, r.w0, r.ab0);
        if ((e = cudaGetLastError()) ||
            (e = cub::DeviceRadixSort::SortPairs(r.tmp[2], t[2], r.w0, r.w1, r.ab0, r.ab1, (int)nf,
                                                 0, 64, st[2])))
            rc = kern_cuda_fail(e, "cub::DeviceRadixSort::SortPairs", __FILE__, __LINE__);
        if (!rc) {
            kct_join_kernel<<<kct_blocks(nf), KCT_THREADS, 0, st[2]>>>(r.w1, r.ab1, nf, r.edges);
            if ((e = cudaGetLastError()))
                rc = kern_cuda_fail(e, "kct_join_kernel", __FILE__, __LINE__);
        }
    }
    if (!rc && ((e = cudaMemcpyAsync(core_out, r.core, n * 8, cudaMemcpyDeviceToHost, st[0])) ||
                (e = cudaMemcpyAsync(reach_out, r.reach, n * 8, cudaMemcpyDeviceToHost, st[1])) ||
                (nf && (e = cudaMemcpyAsync(forest_out, r.edges, nf * sizeof(kern_curve_edge),
                                            cudaMemcpyDeviceToHost, st[2])))))
        rc = kern_cuda_fail(e, "cudaMemcpyAsync", __FILE__, __LINE__);
    for (int q = 0; q < 3; q++) {
        if ((e = cudaStreamSynchronize(st[q])) && !rc)
            rc = kern_cuda_fail(e, "cudaStreamSynchronize", __FILE__, __LINE__);
        if (st[q])
            cudaStreamDestroy(st[q]);
    }
    if (rc)
        return rc;
    *finished = 1;
    return 0;
}

int kct_finish(const kct_in *in, double *core_out, double *reach_out, kern_curve_edge *forest_out,
               int *finished)
{
    *finished = 0;
    const size_t n = in->n, nf = in->nf;
    if (n == 0 || n > (size_t)INT_MAX)
        return 0; /* CUB counts in int: the host's sorts */
    size_t tmp = 0;
    int rc = kct_tmp(n, nf, &tmp);
    if (rc)
        return rc;
    kct_room r;
    const size_t bytes = kct_carve(&r, NULL, n, nf, in->part != NULL, tmp);
    char *base = NULL;
    if ((rc = kern_consume_malloc(&base, bytes, "dbscan curve's end")))
        return rc;
    kct_carve(&r, base, n, nf, in->part != NULL, tmp);
    rc = kct_run(in, r, tmp, core_out, reach_out, forest_out, finished);
    const cudaError_t e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    if (rc)
        *finished = 0;
    return rc;
}
