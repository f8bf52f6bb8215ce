/* Rows of a device array gathered by index on the device (a layout that
 * views the dataset's rows: kern_join_args.base_n): fasted's converted
 * rows and norms, exact's FP64 rows and norms. */
#ifndef TCJ_KERN_GATHER_CUH
#define TCJ_KERN_GATHER_CUH

#include <stddef.h>
#include <stdint.h>

#include <algorithm>

#include <cuda_runtime.h>

#include "kernels.h"

/* dst row v (w words of W) = src row rows[v] for v < n; a padding row
 * (KERN_ROW_PAD) is zeros but for its first word, pad (a norm array's
 * marker; the values' rows take 0), and rows [n, total) are zeros. */
template <class W>
__global__ void kern_gather_kernel(const W *__restrict__ src, const uint32_t *__restrict__ rows,
                                   size_t n, size_t total, size_t w, W pad, W *__restrict__ dst)
{
    const size_t all = total * w;
    for (size_t t = (size_t)blockIdx.x * blockDim.x + threadIdx.x; t < all;
         t += (size_t)gridDim.x * blockDim.x) {
        const size_t v = t / w, k = t - v * w;
        W x = W(0);
        if (v < n) {
            const uint32_t r = rows[v];
            x = r != KERN_ROW_PAD ? src[(size_t)r * w + k] : k == 0 ? pad : W(0);
        }
        dst[t] = x;
    }
}

/* The launch on stream st: rows of row_bytes bytes, copied as 4-byte
 * words where the rows are whole words (every format's padded rows, FP64
 * and f32 values), else as bytes. */
static inline cudaError_t kern_gather_rows(const void *src, const uint32_t *rows, size_t n,
                                           size_t total, size_t row_bytes, void *dst,
                                           cudaStream_t st)
{
    const size_t words = row_bytes % 4 == 0 ? row_bytes / 4 : row_bytes;
    const size_t all = total * words;
    const unsigned threads = 256;
    const unsigned blocks = (unsigned)std::min<size_t>((all + threads - 1) / threads + 1, 65536);
    if (row_bytes % 4 == 0)
        kern_gather_kernel<uint32_t><<<blocks, threads, 0, st>>>((const uint32_t *)src, rows, n,
                                                                 total, words, 0u, (uint32_t *)dst);
    else
        kern_gather_kernel<uint8_t><<<blocks, threads, 0, st>>>(
            (const uint8_t *)src, rows, n, total, words, (uint8_t)0, (uint8_t *)dst);
    return cudaGetLastError();
}

/* A norm a row (T: float or double); padding rows take pad. */
template <class T>
static inline cudaError_t kern_gather_norms(const T *src, const uint32_t *rows, size_t n,
                                            size_t total, T pad, T *dst, cudaStream_t st)
{
    const unsigned threads = 256;
    const unsigned blocks = (unsigned)std::min<size_t>((total + threads - 1) / threads + 1, 65536);
    kern_gather_kernel<T><<<blocks, threads, 0, st>>>(src, rows, n, total, 1, pad, dst);
    return cudaGetLastError();
}

#endif
