/* The cuBLAS yardstick for the tensor-core engines: C = X * X^T for X of
 * n x d values of a dtype (random, never zeros), FP32 accumulation, output
 * in the input's type (FP32 for tf32), through cublasGemmEx; C is computed
 * in column blocks of at most 32768 so large n fits. Prints: dtype n d ms
 * tflops (2 n^2 d / time, median of 3 after a warm-up).
 *   bench_cublas N D [fp16|bf16|tf32]      (default fp16) */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                              \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s: cublas status %d\n", #x, (int)s_);                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

template <class T> __global__ void fill(T *x, size_t k)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13);
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = (T)((h & 0xffff) / 65536.0f);
    }
}

template <class T>
static int bench(const char *name, size_t n, size_t d, cudaDataType_t dt, cublasComputeType_t ct)
{
    size_t nb = std::min(n, (size_t)32768);
    T *X, *C;
    CK(cudaMalloc(&X, n * d * sizeof(T)));
    CK(cudaMalloc(&C, n * nb * sizeof(T)));
    fill<T><<<(unsigned)((n * d + 255) / 256), 256>>>(X, n * d);
    CK(cudaGetLastError());
    cublasHandle_t h;
    CB(cublasCreate(&h));
    float alpha = 1, beta = 0;
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[4];
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        for (size_t c0 = 0; c0 < n; c0 += nb) {
            size_t m = std::min(nb, n - c0);
            /* column-major view: X is d x n; C(:, c0..) = X^T X(:, c0..) */
            CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)d, &alpha, X, dt,
                            (int)d, X + c0 * d, dt, (int)d, &beta, C, dt, (int)n, ct,
                            CUBLAS_GEMM_DEFAULT));
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    std::sort(t + 1, t + 4);
    double ms = t[2];
    printf("cublas %s %zu %zu ms=%.3f tflops=%.1f\n", name, n, d, ms,
           2.0 * n * n * d / (ms * 1e-3) / 1e12);
    cublasDestroy(h);
    cudaFree(X);
    cudaFree(C);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_cublas N D [fp16|bf16|tf32]\n");
        return 2;
    }
    size_t n = strtoull(argv[1], 0, 10), d = strtoull(argv[2], 0, 10);
    const char *dt = argc > 3 ? argv[3] : "fp16";
    if (!strcmp(dt, "fp16"))
        return bench<__half>(dt, n, d, CUDA_R_16F, CUBLAS_COMPUTE_32F);
    if (!strcmp(dt, "bf16"))
        return bench<__nv_bfloat16>(dt, n, d, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
    if (!strcmp(dt, "tf32"))
        return bench<float>(dt, n, d, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
    fprintf(stderr, "bench_cublas: unknown dtype %s (fp16, bf16, tf32)\n", dt);
    return 2;
}
