/* What every pair consumer on the device shares (kern_join_args.pair_dev:
 * DBSCAN's passes, kernels/kern_dbscan.cu; the curve's rounds and core
 * distances, kern_curve.cu and kern_curve_core.cu): the run's devices, a
 * device's copy of a layout's row map, and device memory whose shortage
 * is the caller's cue to take its host route. */
#ifndef TCJ_KERN_CONSUME_CUH
#define TCJ_KERN_CONSUME_CUH

#include <initializer_list>
#include <vector>

#include "kern_drive.cuh" /* kern_now */
#include "kern_multi.cuh" /* KERN_DEV_SLOTS */
#include "kern_pool.cuh"
#include "kern_util.cuh"
#include "kernels.h"

/* An order-preserving map of doubles onto 64-bit unsigned keys (negative
 * values reversed below the positive ones), for atomicMin. */
__device__ __forceinline__ unsigned long long kern_f64_key(double v)
{
    const unsigned long long u = (unsigned long long)__double_as_longlong(v);
    return (u >> 63) ? ~u : (u | (1ull << 63));
}
__device__ __forceinline__ double kern_f64_unkey(unsigned long long k)
{
    return __longlong_as_double((long long)((k >> 63) ? (k & ~(1ull << 63)) : ~k));
}

/* Blocks of `threads` for a grid-stride loop over n items: one a
 * block's worth, at least one, at most 4096 (a larger grid only queues). */
static inline unsigned kern_grid_blocks(size_t n, unsigned threads)
{
    const size_t b = (n + threads - 1) / threads;
    return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

/* v[t] = t for t < n (a grid-stride loop: any grid). */
static __global__ void kern_iota_kernel(uint32_t *v, size_t n)
{
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < n;
         t += (size_t)gridDim.x * blockDim.x)
        v[t] = (uint32_t)t;
}

/* The run's devices into devs: a list of one becomes that device alone
 * (a run without the several-device queue), else the list, else
 * a->device. KERN_ENODEV for an ordinal without a slot. */
static inline int kern_consume_devices(kern_join_args *a, std::vector<int> &devs)
{
    if (a->ndevices == 1) {
        a->device = a->devices[0];
        a->ndevices = 0;
    }
    const int nd = a->ndevices > 0 ? a->ndevices : 1;
    devs.resize((size_t)nd);
    for (int t = 0; t < nd; t++) {
        devs[(size_t)t] = a->ndevices > 0 ? a->devices[t] : a->device;
        if (devs[(size_t)t] < 0 || devs[(size_t)t] >= KERN_DEV_SLOTS)
            return kern_fail(KERN_ENODEV, "CUDA device %d does not exist", devs[(size_t)t]);
    }
    return 0;
}

/* A device's copy of a layout's rows (run->rows: run row -> dataset row,
 * KERN_ROW_PAD for padding), uploaded on the launch's stream when the
 * run's map is not the one held. */
struct kern_rowmap {
    uint32_t *map;
    const uint32_t *src;
    size_t n, cap;
};

/* *out: the map for run's launch on stream st (NULL: the run has none). */
static inline int kern_rowmap_for(kern_rowmap *m, const kern_join_args *run, cudaStream_t st,
                                  const uint32_t **out)
{
    *out = NULL;
    if (!run->rows)
        return 0;
    if (m->src != run->rows || m->n != run->n) {
        if (m->cap < run->n) {
            KERN_CUDA(kern_pool_free(m->map));
            m->map = NULL;
            m->cap = 0;
            KERN_CUDA(kern_pool_malloc((void **)&m->map, run->n * 4));
            m->cap = run->n;
        }
        KERN_CUDA(cudaMemcpyAsync(m->map, run->rows, run->n * 4, cudaMemcpyHostToDevice, st));
        m->src = run->rows;
        m->n = run->n;
    }
    *out = m->map;
    return 0;
}

/* bytes for what from the device's pool (kern_pool.cuh), a device too
 * small for it KERN_ENOMEM (the caller's host route then), any other
 * failure the CUDA error. */
static inline int kern_consume_malloc(void *p, size_t bytes, const char *what)
{
    const cudaError_t e = kern_pool_malloc((void **)p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        return kern_fail(KERN_ENOMEM, "%s: %zu bytes of device memory", what, bytes);
    }
    return e == cudaSuccess ? 0 : kern_cuda_fail(e, "cudaMalloc", __FILE__, __LINE__);
}

/* One launch of a consumer's kernel for a run's pairs, on the launch's
 * stream st: launch(map) with the run's row map on the device (NULL: the
 * run has none). trace: the launch synchronised on both sides and its
 * time added to *seconds (TCJOIN_TRACE's benchmarks only). */
template <class Launch>
static inline int kern_consume_launch(kern_rowmap *rm, const kern_join_args *run, cudaStream_t st,
                                      int trace, double *seconds, Launch launch)
{
    const uint32_t *map;
    const int rc = kern_rowmap_for(rm, run, st, &map);
    if (rc)
        return rc;
    double t0 = 0;
    if (trace) {
        KERN_CUDA(cudaStreamSynchronize(st));
        t0 = kern_now();
    }
    launch(map);
    KERN_CUDA(cudaGetLastError());
    if (trace) {
        KERN_CUDA(cudaStreamSynchronize(st));
        *seconds += kern_now() - t0;
    }
    return 0;
}

/* A consumer's device arrays (kern_consume_malloc's) back to its
 * device's pool (NULLs skipped; a teardown: its errors are not the
 * run's). */
static inline void kern_consume_free(int device, std::initializer_list<void *> arrays)
{
    cudaSetDevice(device);
    for (void *q : arrays)
        kern_pool_free(q);
    (void)cudaGetLastError();
}

#endif
