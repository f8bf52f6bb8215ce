/* Each device's stream-ordered memory pool for the consumers' arrays
 * (kern_pool.cuh). The device's default pool, its release threshold
 * raised so that freed memory is kept between runs (the default, 0, gives
 * it back at every synchronisation: cudaMalloc's cost again); an
 * allocation made on a stream of the pool's own and synchronised there,
 * so that every stream may use it as it could cudaMalloc's. A device
 * without pools (cudaDevAttrMemoryPoolsSupported 0) gets cudaMalloc and
 * cudaFree, decided once a device so that frees match. */
#include <stdint.h>

#include <mutex>

#include "kern_multi.cuh" /* KERN_DEV_SLOTS */
#include "kern_pool.cuh"
#include "kern_util.cuh" /* kern_fail */
#include "kernels.h"     /* KERN_ENOMEM */

struct kpool_dev {
    int state; /* 0 not set up, 1 pool, 2 cudaMalloc */
    cudaStream_t st;
    cudaMemPool_t pool;
};

static std::mutex g_kpool_mu;
static kpool_dev g_kpool[KERN_DEV_SLOTS];

/* The current device's slot, set up at its first use; NULL where the
 * device has no slot (cudaMalloc's route then). */
static kpool_dev *kpool_of(cudaError_t *err)
{
    *err = cudaSuccess;
    int dev = -1;
    if ((*err = cudaGetDevice(&dev)) != cudaSuccess)
        return NULL;
    if (dev < 0 || dev >= KERN_DEV_SLOTS)
        return NULL;
    std::lock_guard<std::mutex> hold(g_kpool_mu);
    kpool_dev &k = g_kpool[dev];
    if (k.state)
        return &k;
    int ok = 0;
    k.state = 2;
    if (cudaDeviceGetAttribute(&ok, cudaDevAttrMemoryPoolsSupported, dev) != cudaSuccess || !ok) {
        (void)cudaGetLastError();
        return &k;
    }
    /* Kept: all the pool holds (its idle memory goes back where an
     * allocation or a free-memory reading needs it). */
    uint64_t keep = UINT64_MAX;
    if (cudaDeviceGetDefaultMemPool(&k.pool, dev) != cudaSuccess ||
        cudaMemPoolSetAttribute(k.pool, cudaMemPoolAttrReleaseThreshold, &keep) != cudaSuccess ||
        cudaStreamCreateWithFlags(&k.st, cudaStreamNonBlocking) != cudaSuccess) {
        (void)cudaGetLastError();
        return &k;
    }
    k.state = 1;
    return &k;
}

cudaError_t kern_pool_malloc(void **p, size_t bytes)
{
    *p = NULL;
    if (bytes == 0)
        return cudaSuccess;
    cudaError_t e;
    kpool_dev *k = kpool_of(&e);
    if (e != cudaSuccess)
        return e;
    if (!k || k->state != 1) {
        e = cudaMalloc(p, bytes);
        return e;
    }
    for (int t = 0; t < 2; t++) {
        e = cudaMallocAsync(p, bytes, k->st);
        if (e == cudaSuccess)
            return cudaStreamSynchronize(k->st);
        *p = NULL;
        if (e != cudaErrorMemoryAllocation || t > 0)
            return e;
        (void)cudaGetLastError(); /* short: the idle memory back, once */
        if (cudaStreamSynchronize(k->st) != cudaSuccess ||
            cudaMemPoolTrimTo(k->pool, 0) != cudaSuccess)
            return e;
    }
    return e;
}

cudaError_t kern_pool_free(void *p)
{
    if (!p)
        return cudaSuccess;
    /* on p's own device (the caller's current one may be another) */
    cudaPointerAttributes at;
    cudaError_t e = cudaPointerGetAttributes(&at, p);
    if (e != cudaSuccess)
        return e;
    int cur = -1;
    if ((e = cudaGetDevice(&cur)) != cudaSuccess)
        return e;
    if (at.device != cur && (e = cudaSetDevice(at.device)) != cudaSuccess)
        return e;
    kpool_dev *k = kpool_of(&e);
    if (e == cudaSuccess) {
        if (!k || k->state != 1)
            e = cudaFree(p);
        /* cudaFree's wait: the device's work that may still read p is
         * done before the pool may hand p out again (on k->st: the next
         * kern_pool_malloc's) */
        else if ((e = cudaDeviceSynchronize()) == cudaSuccess)
            e = cudaFreeAsync(p, k->st);
    }
    if (at.device != cur)
        cudaSetDevice(cur);
    return e;
}

/* The current device's pool's idle bytes (held, not in use); *k its
 * slot (NULL: no pool). */
static uint64_t kpool_idle(kpool_dev **kp)
{
    cudaError_t e;
    kpool_dev *k = kpool_of(&e);
    *kp = NULL;
    if (e != cudaSuccess || !k || k->state != 1) {
        (void)cudaGetLastError();
        return 0;
    }
    *kp = k;
    uint64_t held = 0, used = 0;
    if (cudaMemPoolGetAttribute(k->pool, cudaMemPoolAttrReservedMemCurrent, &held) != cudaSuccess ||
        cudaMemPoolGetAttribute(k->pool, cudaMemPoolAttrUsedMemCurrent, &used) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return held > used ? held - used : 0;
}

int kern_pool_trim(void)
{
    kpool_dev *k;
    if (kpool_idle(&k) == 0)
        return 0;
    if (cudaStreamSynchronize(k->st) != cudaSuccess ||
        cudaMemPoolTrimTo(k->pool, 0) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return 1;
}

cudaError_t kern_pool_cuda_malloc(void **p, size_t bytes)
{
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        if (kern_pool_trim())
            e = cudaMalloc(p, bytes);
    }
    return e;
}

int kern_pool_alloc(void **p, size_t bytes, const char *what, size_t total)
{
    const cudaError_t e = kern_pool_malloc(p, bytes ? bytes : 1);
    if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        return kern_fail(KERN_ENOMEM, "%s needs %.1f MB of device memory", what,
                         (double)(total ? total : bytes) / 1e6);
    }
    if (e != cudaSuccess)
        return kern_cuda_fail(e, what, __FILE__, __LINE__);
    return 0;
}

cudaError_t kern_pool_meminfo(size_t *free_bytes, size_t *total)
{
    const cudaError_t e = cudaMemGetInfo(free_bytes, total);
    kpool_dev *k;
    if (e == cudaSuccess)
        *free_bytes += (size_t)kpool_idle(&k);
    return e;
}

int kern_pool_cache_may_keep(size_t need)
{
    size_t fr = 0, tot = 0;
    if (kern_pool_meminfo(&fr, &tot) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return fr / 2 >= need && fr - 2 * need >= tot / 4;
}
