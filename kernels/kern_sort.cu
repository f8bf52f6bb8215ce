/* Sorting doubles on a device (kern_sort.h): CUB's radix sort, the keys'
 * bits mapped so that they order as the values (its floating-point
 * traits), stable. DBSCAN's curve sorts its core distances, its
 * reachabilities and its forest's weights once each (10^6 values on gauss
 * 10^6 x 128): 48 ms on the H200 host's 16 cores (src/sort_f64.c, 8 bits
 * a pass), a fraction of that through the device and back. */
#include <limits.h>

#include <cub/cub.cuh>

#include "kern_consume.cuh"
#include "kern_sort.h"

static int ksort_run(char *base, size_t tmp, double *v, size_t n, uint32_t *order)
{
    double *k0 = (double *)base, *k1 = k0 + n;
    uint32_t *i0 = (uint32_t *)(k1 + n), *i1 = i0 + n;
    void *t = (void *)(i1 + n);
    KERN_CUDA(cudaMemcpy(k0, v, n * 8, cudaMemcpyHostToDevice));
    if (order) {
        const unsigned blocks = (unsigned)std::min((n + 255) / 256, (size_t)4096);
        kern_iota_kernel<<<blocks, 256>>>(i0, n);
        KERN_CUDA(cudaGetLastError());
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(t, tmp, k0, k1, i0, i1, (int)n));
        KERN_CUDA(cudaMemcpy(order, i1, n * 4, cudaMemcpyDeviceToHost));
    } else {
        KERN_CUDA(cub::DeviceRadixSort::SortKeys(t, tmp, k0, k1, (int)n));
        KERN_CUDA(cudaMemcpy(v, k1, n * 8, cudaMemcpyDeviceToHost));
    }
    return 0;
}

extern "C" int kern_sort_f64(int dev, double *v, size_t n, uint32_t *order)
{
    if (n > (size_t)INT_MAX)
        return kern_fail(KERN_EINVAL, "sort: %zu values (at most %d)", n, INT_MAX);
    if (n < 2) {
        if (order && n)
            order[0] = 0;
        return 0;
    }
    KERN_CUDA(cudaSetDevice(dev));
    size_t tmp = 0;
    if (order)
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, tmp, (double *)NULL, (double *)NULL,
                                                  (uint32_t *)NULL, (uint32_t *)NULL, (int)n));
    else
        KERN_CUDA(
            cub::DeviceRadixSort::SortKeys(NULL, tmp, (double *)NULL, (double *)NULL, (int)n));
    char *base = NULL;
    int rc = kern_consume_malloc(&base, n * 24 + tmp, "sort");
    if (rc)
        return rc;
    rc = ksort_run(base, tmp, v, n, order);
    const cudaError_t e = cudaFree(base);
    if (!rc && e != cudaSuccess)
        rc = kern_cuda_fail(e, "cudaFree", __FILE__, __LINE__);
    return rc;
}
