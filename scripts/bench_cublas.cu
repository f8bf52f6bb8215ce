/* The cuBLAS yardstick for the tensor-core engines: C = X * X^T for X of
 * n x d values of a dtype (random, never zeros); C is computed in column
 * blocks of at most 32768 so large n fits. Prints: dtype n d ms tflops
 * (2 n^2 d / time, median of 3 after a warm-up; for int8 the "tflops" are
 * tera integer ops).
 *   fp16, bf16, tf32: cublasGemmEx, FP32 accumulation, output in the
 *     input's type (FP32 for tf32).
 *   fp8-e4m3, fp8-e5m2, int8: cublasLtMatmul with the heuristic's first
 *     algorithm (32 MiB workspace), in the "TN" layout that FP8 and int8
 *     tensor-core kernels need (X row-major is k-contiguous on both sides).
 *     FP8: FP32 accumulation (fast-accumulation mode off), FP16 output as
 *     for fp16/bf16. cuBLASLt on Hopper has no e5m2 x e5m2 kernel, so
 *     fp8-e5m2 falls back to e5m2 x e4m3 (the same X rounded to e4m3 as B)
 *     and prints dtype fp8-e5m2xe4m3. int8: values in [-64, 63], INT32
 *     accumulation and output.
 *   When cuBLASLt has no algorithm for the shape or device the line says
 *   "unsupported" with the status, tflops=0, exit status 0.
 *   bench_cublas N D [fp16|bf16|tf32|fp8-e4m3|fp8-e5m2|int8]   (default fp16) */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

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
            fprintf(stderr, "%s: cublas status %d\n", #x, (int)s_);                                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)
#define CL(x)                                                                                      \
    do {                                                                                           \
        cublasStatus_t s_ = (x);                                                                   \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                         \
            fprintf(stderr, "%s: %s\n", #x, cublasLtGetStatusString(s_));                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__device__ unsigned fill_hash(size_t i)
{
    unsigned h = (unsigned)(i * 2654435761u) ^ (unsigned)(i >> 13);
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return h;
}

template <class T> __global__ void fill(T *x, size_t k)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k)
        x[i] = (T)((fill_hash(i) & 0xffff) / 65536.0f);
}

/* Small integers: |x.y| <= d * 64^2 stays inside int32 for any d we run. */
__global__ void fill_i8(int8_t *x, size_t k)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < k)
        x[i] = (int8_t)((int)(fill_hash(i) & 127) - 64);
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

/* One cuBLASLt configuration, A = X (all n rows), B = a column block of X.
 * Rows with the same arg are tried in order; the first one the heuristic
 * has an algorithm for is timed and printed under its name. */
struct lt_cfg {
    const char *arg, *name;
    cudaDataType_t a, b, cd;
    cublasComputeType_t ct;
    cudaDataType_t st;
};

/* FP16 output rather than FP32: the n x nb output is written once per
 * block, and at small d its traffic is a real share of the time, so this
 * keeps FP8 comparable with the fp16/bf16 rows (both allowed for FP8). */
static const lt_cfg lt_cfgs[] = {
    {"fp8-e4m3", "fp8-e4m3", CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16F, CUBLAS_COMPUTE_32F,
     CUDA_R_32F},
    {"fp8-e5m2", "fp8-e5m2", CUDA_R_8F_E5M2, CUDA_R_8F_E5M2, CUDA_R_16F, CUBLAS_COMPUTE_32F,
     CUDA_R_32F},
    {"fp8-e5m2", "fp8-e5m2xe4m3", CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16F, CUBLAS_COMPUTE_32F,
     CUDA_R_32F},
    {"int8", "int8", CUDA_R_8I, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I},
};

static size_t lt_size(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_8F_E4M3:
    case CUDA_R_8F_E5M2:
    case CUDA_R_8I:
        return 1;
    case CUDA_R_16F:
        return 2;
    default:
        return 4;
    }
}

static cudaError_t lt_fill(cudaDataType_t t, void *x, size_t k)
{
    unsigned g = (unsigned)((k + 255) / 256);
    if (t == CUDA_R_8F_E4M3)
        fill<__nv_fp8_e4m3><<<g, 256>>>((__nv_fp8_e4m3 *)x, k);
    else if (t == CUDA_R_8F_E5M2)
        fill<__nv_fp8_e5m2><<<g, 256>>>((__nv_fp8_e5m2 *)x, k);
    else
        fill_i8<<<g, 256>>>((int8_t *)x, k);
    return cudaGetLastError();
}

/* The layouts and algorithm for one block width m (the full width and the
 * last, narrower block differ, and the heuristic may pick differently). */
struct lt_plan {
    size_t m;
    cublasLtMatrixLayout_t b, c;
    cublasLtMatmulHeuristicResult_t h;
};

/* The heuristic's status for one width; CUBLAS_STATUS_NOT_SUPPORTED also
 * when it answers with no algorithm. */
static cublasStatus_t lt_plan_make(cublasLtHandle_t lh, cublasLtMatmulDesc_t op,
                                   cublasLtMatrixLayout_t la, cublasLtMatmulPreference_t pref,
                                   const lt_cfg *c, size_t n, size_t d, lt_plan *p)
{
    cublasStatus_t s = cublasLtMatrixLayoutCreate(&p->b, c->b, d, p->m, d);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatrixLayoutCreate(&p->c, c->cd, n, p->m, n);
    int got = 0;
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(lh, op, la, p->b, p->c, p->c, pref, 1, &p->h, &got);
    if (s == CUBLAS_STATUS_SUCCESS && got == 0)
        s = CUBLAS_STATUS_NOT_SUPPORTED;
    return s;
}

/* Destroys the layouts that were made (a failed plan may hold some). */
static cublasStatus_t lt_plans_free(lt_plan plan[2])
{
    cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
    for (int i = 0; i < 2; i++) {
        if (plan[i].b && s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatrixLayoutDestroy(plan[i].b);
        if (plan[i].c && s == CUBLAS_STATUS_SUCCESS)
            s = cublasLtMatrixLayoutDestroy(plan[i].c);
        plan[i].b = plan[i].c = 0;
    }
    return s;
}

static int bench_lt(const char *arg, size_t n, size_t d)
{
    const size_t nb = std::min(n, (size_t)32768), ws_bytes = (size_t)32 << 20;
    cublasLtHandle_t lh;
    CL(cublasLtCreate(&lh));
    cublasLtMatmulPreference_t pref;
    CL(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t ws_max = ws_bytes;
    CL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_max,
                                            sizeof(ws_max)));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    const lt_cfg *cfg = 0;
    cublasLtMatmulDesc_t op = 0;
    cublasLtMatrixLayout_t la = 0;
    lt_plan plan[2] = {};
    int nplan = n % nb ? 2 : 1;
    char why[512] = "";
    size_t wl = 0;
    for (const lt_cfg &c : lt_cfgs) {
        if (strcmp(c.arg, arg))
            continue;
        CL(cublasLtMatmulDescCreate(&op, c.ct, c.st));
        CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
        CL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
        /* column-major view: X is d x n with ld d, used as op(A) = A^T */
        CL(cublasLtMatrixLayoutCreate(&la, c.a, d, n, d));
        plan[0].m = nb;
        plan[1].m = n % nb;
        cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
        for (int i = 0; i < nplan && s == CUBLAS_STATUS_SUCCESS; i++)
            s = lt_plan_make(lh, op, la, pref, &c, n, d, &plan[i]);
        if (s == CUBLAS_STATUS_SUCCESS) {
            cfg = &c;
            break;
        }
        if (wl < sizeof(why))
            wl += snprintf(why + wl, sizeof(why) - wl, "%s%s: %s", wl ? "; " : "", c.name,
                           cublasLtGetStatusString(s));
        CL(lt_plans_free(plan));
        CL(cublasLtMatrixLayoutDestroy(la));
        CL(cublasLtMatmulDescDestroy(op));
    }
    if (!cfg) {
        /* a result, not a failure: this cuBLASLt has no kernel for it here */
        printf("cublas %s %zu %zu ms=0.000 tflops=0.0 unsupported (no cublasLt algorithm: %s)\n",
               arg, n, d, why);
        /* the likeliest cause on a GPU that has the kernels */
        if (d % 16 || n % 8)
            fprintf(stderr, "bench_cublas: cuBLASLt's 8-bit tensor-core kernels want 16-byte "
                            "aligned leading dimensions: d a multiple of 16, n of 8\n");
        CL(cublasLtMatmulPreferenceDestroy(pref));
        CL(cublasLtDestroy(lh));
        return 0;
    }
    int32_t algo_id = -1;
    CL(cublasLtMatmulAlgoConfigGetAttribute(&plan[0].h.algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id,
                                            sizeof(algo_id), 0));
    fprintf(stderr,
            "bench_cublas: %s via cublasLtMatmul, algo id %d, workspace %zu B, waves %.2f\n",
            cfg->name, (int)algo_id, plan[0].h.workspaceSize, plan[0].h.wavesCount);

    void *X, *XB, *C, *ws;
    CK(cudaMalloc(&X, n * d * lt_size(cfg->a)));
    CK(lt_fill(cfg->a, X, n * d));
    XB = X;
    if (cfg->b != cfg->a) {
        /* the same hashed values, rounded to B's type */
        CK(cudaMalloc(&XB, n * d * lt_size(cfg->b)));
        CK(lt_fill(cfg->b, XB, n * d));
    }
    CK(cudaMalloc(&C, n * nb * lt_size(cfg->cd)));
    CK(cudaMalloc(&ws, ws_bytes));
    float af = 1, bf = 0;
    int32_t ai = 1, bi = 0;
    const void *alpha = cfg->st == CUDA_R_32I ? (const void *)&ai : (const void *)&af;
    const void *beta = cfg->st == CUDA_R_32I ? (const void *)&bi : (const void *)&bf;
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float t[4];
    for (int r = 0; r < 4; r++) {
        CK(cudaEventRecord(e0));
        for (size_t c0 = 0; c0 < n; c0 += nb) {
            const lt_plan &p = plan[c0 + nb <= n ? 0 : 1];
            const char *b = (const char *)XB + c0 * d * lt_size(cfg->b);
            CL(cublasLtMatmul(lh, op, alpha, X, la, b, p.b, beta, C, p.c, C, p.c, &p.h.algo, ws,
                              ws_bytes, 0));
        }
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&t[r], e0, e1));
    }
    std::sort(t + 1, t + 4);
    double ms = t[2];
    printf("cublas %s %zu %zu ms=%.3f tflops=%.1f\n", cfg->name, n, d, ms,
           2.0 * n * n * d / (ms * 1e-3) / 1e12);
    CL(lt_plans_free(plan));
    CL(cublasLtMatrixLayoutDestroy(la));
    CL(cublasLtMatmulDescDestroy(op));
    CL(cublasLtMatmulPreferenceDestroy(pref));
    CL(cublasLtDestroy(lh));
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    if (XB != X)
        CK(cudaFree(XB));
    CK(cudaFree(X));
    CK(cudaFree(C));
    CK(cudaFree(ws));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_cublas N D [fp16|bf16|tf32|fp8-e4m3|fp8-e5m2|int8]\n");
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
    for (const lt_cfg &c : lt_cfgs)
        if (!strcmp(c.arg, dt))
            return bench_lt(dt, n, d);
    fprintf(stderr, "bench_cublas: unknown dtype %s (fp16, bf16, tf32, fp8-e4m3, fp8-e5m2, int8)\n",
            dt);
    return 2;
}
