/* Device memory for the pair consumers and the curve's device steps
 * (kern_consume.cuh's callers, kern_sort.cu, kern_curve_merge.cu), from
 * each device's stream-ordered pool (kernels/kern_pool.cu) with
 * cudaMalloc's and cudaFree's semantics: the memory usable on every stream
 * when kern_pool_malloc returns; kern_pool_free waits for the device as
 * cudaFree does. Freed memory stays in the pool for the next run, so a
 * run's dozen arrays cost far less than a cudaMalloc and a cudaFree each,
 * a fixed cost that shows on a small curve. What the pool keeps is
 * released where an allocation (the pool's, or a cudaMalloc made through
 * kern_pool_cuda_malloc) would otherwise fail, and counted free by a
 * free-memory reading (kern_pool_meminfo), so it never costs a run its
 * room. A pointer from
 * kern_pool_malloc goes to kern_pool_free, never to cudaFree. */
#ifndef TCJ_KERN_POOL_CUH
#define TCJ_KERN_POOL_CUH

#include <stddef.h>

#include <cuda_runtime.h>

/* bytes on the current device into *p (NULL for 0 bytes); cudaSuccess or
 * the error (cudaErrorMemoryAllocation: short even after the pool's idle
 * memory went back). */
cudaError_t kern_pool_malloc(void **p, size_t bytes);
/* p (NULL: nothing) back to its device's pool (whichever device is
 * current), after that device's work (cudaDeviceSynchronize). */
cudaError_t kern_pool_free(void *p);
/* The pool's idle memory on the current device back to the driver
 * (cudaMemPoolTrimTo): 1 where there was some. */
int kern_pool_trim(void);
/* cudaMalloc, once more with the current device's idle pool memory
 * released where it was short: for memory that is not the pool's. */
cudaError_t kern_pool_cuda_malloc(void **p, size_t bytes);
/* kern_pool_malloc as a kernels/ return code: 0; KERN_ENOMEM where the
 * device is short, saying "WHAT needs N MB of device memory" (N: total,
 * what the caller holds in all, or bytes where total is 0); the CUDA
 * error's code otherwise. A message left with kern_fail. */
int kern_pool_alloc(void **p, size_t bytes, const char *what, size_t total);
/* cudaMemGetInfo, the current device's idle pool memory counted free. */
cudaError_t kern_pool_meminfo(size_t *free_bytes, size_t *total);
/* Whether a device cache of several slots (exact's FP64 rows, fasted's
 * converted rows) may keep its other slots while one takes need bytes
 * more on the current device: free memory (kern_pool_meminfo) at least
 * twice need and a quarter of the device besides, so a run over data
 * near the device's size finds the room one slot left it. 0 where the
 * memory cannot be read. */
int kern_pool_cache_may_keep(size_t need);

#endif
