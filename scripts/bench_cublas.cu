/* The cuBLAS yardstick for FASTED: C = X * X^T for X of n x d FP16 values
 * (random, never zeros), FP32 accumulation, FP16 output, through
 * cublasGemmEx; C is computed in column blocks of at most 32768 so large n
 * fits. Prints: n d ms tflops (2 n^2 d / time, median of 3 after a warm-up).
 *   bench_cublas N D */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <stdio.h>
#include <stdlib.h>

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

__global__ void fill(__half *x, size_t k)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k) {
        unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13);
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = __float2half((h & 0xffff) / 65536.0f);
    }
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    size_t n = strtoull(argv[1], 0, 10), d = strtoull(argv[2], 0, 10);
    size_t nb = std::min(n, (size_t)32768);
    __half *X, *C;
    CK(cudaMalloc(&X, n * d * 2));
    CK(cudaMalloc(&C, n * nb * 2));
    fill<<<(unsigned)((n * d + 255) / 256), 256>>>(X, n * d);
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
            CB(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)d, &alpha, X,
                            CUDA_R_16F, (int)d, X + c0 * d, CUDA_R_16F, (int)d, &beta, C,
                            CUDA_R_16F, (int)n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    std::sort(t + 1, t + 4);
    double ms = t[2];
    printf("cublas %zu %zu ms=%.3f tflops=%.1f\n", n, d, ms, 2.0 * n * n * d / (ms * 1e-3) / 1e12);
    return 0;
}
