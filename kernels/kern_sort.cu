/* Sorting doubles on a device (kern_sort.h): CUB's radix sort, the keys'
 * bits mapped so that they order as the values (its floating-point
 * traits), stable. DBSCAN's curve sorts its core distances, its
 * reachabilities and its forest's weights once each (10^6 values on gauss
 * 10^6 x 128), through the device and back in a fraction of the time the
 * host's 16 cores take (src/sort_f64.c, 8 bits a pass). The jobs share
 * one allocation from the device's pool. */
#include <limits.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_sort.h"

/* A job's scratch: keys in and out, indices in and out, CUB's. */
struct ksort_room {
    double *k0, *k1;
    uint32_t *i0, *i1;
    void *t;
    size_t tmp;
};

static size_t ksort_up(size_t b)
{
    return (b + 255) / 256 * 256;
}

static int ksort_tmp(const kern_sort_job &j, size_t *tmp)
{
    *tmp = 0;
    if (j.order)
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, *tmp, (double *)NULL, (double *)NULL,
                                                  (uint32_t *)NULL, (uint32_t *)NULL, (int)j.n));
    else
        KERN_CUDA(
            cub::DeviceRadixSort::SortKeys(NULL, *tmp, (double *)NULL, (double *)NULL, (int)j.n));
    return 0;
}

static size_t ksort_bytes(const kern_sort_job &j, size_t tmp)
{
    return 2 * ksort_up(j.n * 8) + (j.order ? 2 * ksort_up(j.n * 4) : 0) + ksort_up(tmp);
}

static ksort_room ksort_carve(const kern_sort_job &j, size_t tmp, char *at)
{
    ksort_room r;
    r.k0 = (double *)at;
    at += ksort_up(j.n * 8);
    r.k1 = (double *)at;
    at += ksort_up(j.n * 8);
    r.i0 = r.i1 = NULL;
    if (j.order) {
        r.i0 = (uint32_t *)at;
        at += ksort_up(j.n * 4);
        r.i1 = (uint32_t *)at;
        at += ksort_up(j.n * 4);
    }
    r.t = at;
    r.tmp = tmp;
    return r;
}

/* The values there, sorted, back (the host's copies are pageable: each
 * copy back waits for its sort). */
static int ksort_one(const kern_sort_job &j, ksort_room &r)
{
    KERN_CUDA(cudaMemcpy(r.k0, j.v, j.n * 8, cudaMemcpyHostToDevice));
    if (j.order) {
        const unsigned blocks = (unsigned)std::min((j.n + 255) / 256, (size_t)4096);
        kern_iota_kernel<<<blocks, 256>>>(r.i0, j.n);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(r.t, r.tmp, r.k0, r.k1, r.i0, r.i1, (int)j.n));
        KERN_CUDA(cudaMemcpy(j.order, r.i1, j.n * 4, cudaMemcpyDeviceToHost));
    } else {
        KERN_CUDA(cub::DeviceRadixSort::SortKeys(r.t, r.tmp, r.k0, r.k1, (int)j.n));
        KERN_CUDA(cudaMemcpy(j.v, r.k1, j.n * 8, cudaMemcpyDeviceToHost));
    }
    return 0;
}

static int ksort_run(const kern_sort_job *jobs, size_t m, const size_t *tmp, char *base)
{
    char *at = base;
    for (size_t t = 0; t < m; t++) {
        if (jobs[t].n < 2)
            continue;
        ksort_room r = ksort_carve(jobs[t], tmp[t], at);
        at += ksort_bytes(jobs[t], tmp[t]);
        const int rc = ksort_one(jobs[t], r);
        if (rc)
            return rc;
        kern_trace_mark(jobs[t].order ? "sort: a job with its order" : "sort: a job");
    }
    return 0;
}

extern "C" int kern_sort_f64(int dev, const kern_sort_job *jobs, size_t m)
{
    std::vector<size_t> tmp(m, 0);
    size_t bytes = 0;
    for (size_t t = 0; t < m; t++) {
        const kern_sort_job &j = jobs[t];
        if (j.n > (size_t)INT_MAX)
            return kern_fail(KERN_EINVAL, "sort: %zu values (at most %d)", j.n, INT_MAX);
        if (j.n < 2) {
            if (j.order && j.n)
                j.order[0] = 0;
            continue;
        }
        if (bytes == 0)
            KERN_CUDA(cudaSetDevice(dev));
        const int rc = ksort_tmp(j, &tmp[t]);
        if (rc)
            return rc;
        bytes += ksort_bytes(j, tmp[t]);
    }
    if (bytes == 0)
        return 0;
    char *base = NULL;
    int rc = kern_consume_malloc(&base, bytes, "sort");
    if (rc)
        return rc;
    rc = ksort_run(jobs, m, tmp.data(), base);
    const cudaError_t e = kern_pool_free(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "kern_pool_free", __FILE__, __LINE__);
    return rc;
}
