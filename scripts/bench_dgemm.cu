/* cuBLAS DGEMM on the shape of an n x n x d distance join, the ceiling the
 * FP64 tensor-core engines are compared with (Figure 9). The full n x n
 * output of n = 1e5 is 80 GB, so the product is timed on strips of
 * n x STRIP outputs: the same M and K, the same arithmetic per output.
 * Prints one line per d: "dgemm d=D tflops=T ms=M". Random inputs (never
 * zeros), warm-up, median of 5 with CUDA events.
 * usage: bench_dgemm N D [D ...] */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define STRIP 16384

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                               \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CB(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s: cuBLAS status %d\n", #x, (int)s_);                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void fill(double *p, size_t m, unsigned long long seed)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) {
        unsigned long long z = (i + 1) * 0x9e3779b97f4a7c15ULL ^ seed;
        z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ULL;
        p[i] = (double)(z >> 11) * 0x1.0p-53;
    }
}

static int cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_dgemm N D [D ...]\n");
        return 2;
    }
    size_t n = strtoull(argv[1], NULL, 10);
    cublasHandle_t h;
    CB(cublasCreate(&h));
    for (int a = 2; a < argc; a++) {
        size_t d = strtoull(argv[a], NULL, 10), strip = n < STRIP ? n : STRIP;
        double *A, *B, *C;
        CK(cudaMalloc(&A, n * d * sizeof(double)));
        CK(cudaMalloc(&B, strip * d * sizeof(double)));
        CK(cudaMalloc(&C, n * strip * sizeof(double)));
        fill<<<(unsigned)((n * d + 255) / 256), 256>>>(A, n * d, 1);
        fill<<<(unsigned)((strip * d + 255) / 256), 256>>>(B, strip * d, 2);
        CK(cudaGetLastError());
        const double one = 1, zero = 0;
        cudaEvent_t e0, e1;
        CK(cudaEventCreate(&e0));
        CK(cudaEventCreate(&e1));
        float ms[5];
        for (int r = -1; r < 5; r++) {
            CK(cudaEventRecord(e0));
            /* Row-major C (n x strip) = A B^T is column-major C^T = B A^T:
             * B is column-major d x strip (op T), A column-major d x n. */
            CB(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)strip, (int)n, (int)d, &one, B, (int)d,
                           A, (int)d, &zero, C, (int)strip));
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            if (r >= 0)
                CK(cudaEventElapsedTime(&ms[r], e0, e1));
        }
        qsort(ms, 5, sizeof *ms, cmp);
        double t = ms[2] * 1e-3;
        printf("dgemm n=%zu d=%zu strip=%zu tflops=%.2f ms=%.3f\n", n, d, strip,
               2.0 * n * strip * d / t / 1e12, ms[2]);
        fflush(stdout);
        cudaFree(A);
        cudaFree(B);
        cudaFree(C);
        cudaEventDestroy(e0);
        cudaEventDestroy(e1);
    }
    cublasDestroy(h);
    return 0;
}
