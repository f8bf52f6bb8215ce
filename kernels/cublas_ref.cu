/* The cuBLAS yardstick of the teaching ladder (kernels.h, kern_cublas_gemm):
 * X*X^T at the ladder's n and d in one dtype, timed with events. cuBLAS is
 * a benchmark yardstick here, never a dependency: its libraries are opened
 * with dlopen at run time, and only their headers are read at build time
 * (without them this file reports the yardstick unavailable). The product
 * runs in column blocks of at most 8192, so C stays under 1 GiB. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kern_util.cuh"
#include "kernels.h"

#if __has_include(<cublasLt.h>) && __has_include(<cublas_v2.h>)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#define CUBLAS_REF 1
#endif

#ifdef CUBLAS_REF
namespace
{

/* The entry points the yardstick calls, looked up once. */
struct blas_api {
    void *lib, *lt;
    decltype(&cublasCreate_v2) create;
    decltype(&cublasDestroy_v2) destroy;
    /* cublasGemmEx is overloaded in C++: the C signature, spelled out */
    cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                              const void *, const void *, cudaDataType, int, const void *,
                              cudaDataType, int, const void *, void *, cudaDataType, int,
                              cublasComputeType_t, cublasGemmAlgo_t);
    decltype(&cublasLtCreate) lt_create;
    decltype(&cublasLtDestroy) lt_destroy;
    decltype(&cublasLtMatmulDescCreate) desc_create;
    decltype(&cublasLtMatmulDescDestroy) desc_destroy;
    decltype(&cublasLtMatmulDescSetAttribute) desc_set;
    decltype(&cublasLtMatrixLayoutCreate) layout_create;
    decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
    decltype(&cublasLtMatmulPreferenceCreate) pref_create;
    decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy;
    decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set;
    decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic;
    decltype(&cublasLtMatmul) matmul;
};

void *open_first(const char *const *names)
{
    for (const char *const *p = names; *p; p++) {
        void *h = dlopen(*p, RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

int blas_load(blas_api *a)
{
    static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                       "/usr/local/cuda/lib64/libcublas.so", NULL};
    static const char *const lts[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                      "/usr/local/cuda/lib64/libcublasLt.so", NULL};
    memset(a, 0, sizeof *a);
    if (!(a->lt = open_first(lts)) || !(a->lib = open_first(libs)))
        return kern_fail(KERN_ENODEV, "cuBLAS yardstick: libcublas/libcublasLt not found (%s)",
                         dlerror());
#define SYM(h, f, name)                                                                            \
    if (!(*(void **)&a->f = dlsym(a->h, name)))                                                    \
        return kern_fail(KERN_ENODEV, "cuBLAS yardstick: %s not in the library", name);
    SYM(lib, create, "cublasCreate_v2");
    SYM(lib, destroy, "cublasDestroy_v2");
    SYM(lib, gemm_ex, "cublasGemmEx");
    SYM(lt, lt_create, "cublasLtCreate");
    SYM(lt, lt_destroy, "cublasLtDestroy");
    SYM(lt, desc_create, "cublasLtMatmulDescCreate");
    SYM(lt, desc_destroy, "cublasLtMatmulDescDestroy");
    SYM(lt, desc_set, "cublasLtMatmulDescSetAttribute");
    SYM(lt, layout_create, "cublasLtMatrixLayoutCreate");
    SYM(lt, layout_destroy, "cublasLtMatrixLayoutDestroy");
    SYM(lt, pref_create, "cublasLtMatmulPreferenceCreate");
    SYM(lt, pref_destroy, "cublasLtMatmulPreferenceDestroy");
    SYM(lt, pref_set, "cublasLtMatmulPreferenceSetAttribute");
    SYM(lt, heuristic, "cublasLtMatmulAlgoGetHeuristic");
    SYM(lt, matmul, "cublasLtMatmul");
#undef SYM
    return 0;
}

/* Small values, so no format overflows; the time does not depend on them. */
__global__ void ref_fill(uint8_t *x, size_t bytes, int elem, int kind)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i * elem >= bytes)
        return;
    unsigned h = (unsigned)(i * 2654435761u) >> 24; /* 0..255 */
    float v = (float)(h & 7) - 4;
    switch (kind) {
    case 0:
        ((float *)x)[i] = v;
        break;
    case 1:
        ((__half *)x)[i] = __float2half(v);
        break;
    case 2:
        ((int8_t *)x)[i] = (int8_t)v;
        break;
    default:
        ((__nv_fp8_e4m3 *)x)[i] = __nv_fp8_e4m3(v);
        break;
    }
}

const size_t REF_NB = 8192, REF_WS = (size_t)32 << 20;

} // namespace

extern "C" int kern_cublas_gemm(int device, const char *dtype, size_t n, size_t d, int reps,
                                double *seconds)
{
    *seconds = 0;
    static blas_api api;
    static int loaded = 0;
    if (!loaded) {
        int rc = blas_load(&api);
        if (rc)
            return rc;
        loaded = 1;
    }
    int kind = !strcmp(dtype, "fp32")   ? 0
               : !strcmp(dtype, "fp16") ? 1
               : !strcmp(dtype, "int8") ? 2
               : !strcmp(dtype, "fp8")  ? 3
                                        : -1;
    if (kind < 0)
        return kern_fail(KERN_EINVAL, "cuBLAS yardstick: no dtype '%s'", dtype);
    if (n > INT32_MAX || d > INT32_MAX)
        return kern_fail(KERN_EINVAL, "cuBLAS yardstick: n and d must fit in int");
    KERN_CUDA(cudaSetDevice(device));
    const int elem = kind == 0 ? 4 : kind == 1 ? 2 : 1;
    const size_t nb = n < REF_NB ? n : REF_NB;
    /* 8-bit GEMMs want leading dimensions that are multiples of 16 */
    const size_t ld = kind >= 2 ? (d + 15) / 16 * 16 : d;
    const int out_elem = kind == 0 ? 4 : kind == 2 ? 4 : 2; /* fp32, fp16, int32, fp16 */
    uint8_t *X = NULL, *C = NULL, *ws = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cublasHandle_t h = NULL;
    cublasLtHandle_t lh = NULL;
    cublasLtMatmulDesc_t op = NULL;
    cublasLtMatrixLayout_t la = NULL, lb[2] = {NULL, NULL}, lc[2] = {NULL, NULL};
    cublasLtMatmulPreference_t pref = NULL;
    cublasLtMatmulHeuristicResult_t heur[2];
    float best = -1;
    int rc = 0;
    KERN_CUDA_GOTO(cudaMalloc(&X, n * ld * elem), done);
    KERN_CUDA_GOTO(cudaMemset(X, 0, n * ld * elem), done);
    ref_fill<<<(unsigned)((n * ld + 255) / 256), 256>>>(X, n * ld * elem, elem, kind);
    KERN_CUDA_GOTO(cudaGetLastError(), done);
    KERN_CUDA_GOTO(cudaMalloc(&C, n * nb * out_elem), done);
    KERN_CUDA_GOTO(cudaEventCreate(&e0), done);
    KERN_CUDA_GOTO(cudaEventCreate(&e1), done);
    if (kind <= 1) {
        if (api.create(&h) != CUBLAS_STATUS_SUCCESS) {
            rc = kern_fail(KERN_EGPU, "cuBLAS yardstick: cublasCreate failed");
            goto done;
        }
    } else {
        KERN_CUDA_GOTO(cudaMalloc(&ws, REF_WS), done);
        const cudaDataType_t t = kind == 2 ? CUDA_R_8I : CUDA_R_8F_E4M3;
        const cudaDataType_t tc = kind == 2 ? CUDA_R_32I : CUDA_R_16F;
        const cublasComputeType_t ct = kind == 2 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F;
        const cudaDataType_t st = kind == 2 ? CUDA_R_32I : CUDA_R_32F;
        const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
        uint64_t wsb = REF_WS;
        int got = 0;
        if (api.lt_create(&lh) || api.desc_create(&op, ct, st) ||
            api.desc_set(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta) ||
            api.desc_set(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb) ||
            api.layout_create(&la, t, ld, n, ld) || api.pref_create(&pref) ||
            api.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb)) {
            rc = kern_fail(KERN_EGPU, "cuBLAS yardstick: cublasLt set-up failed");
            goto done;
        }
        for (int p = 0; p < 2; p++) {
            const size_t m = p == 0 ? nb : n % nb;
            if (m == 0)
                continue;
            if (api.layout_create(&lb[p], t, ld, m, ld) || api.layout_create(&lc[p], tc, n, m, n) ||
                api.heuristic(lh, op, la, lb[p], lc[p], lc[p], pref, 1, &heur[p], &got) ||
                got < 1) {
                rc = kern_fail(KERN_ENODEV,
                               "cuBLAS yardstick: cublasLt has no %s algorithm on this device",
                               dtype);
                goto done;
            }
        }
    }
    for (int r = 0; r <= (reps < 1 ? 1 : reps); r++) {
        KERN_CUDA_GOTO(cudaEventRecord(e0), done);
        for (size_t c0 = 0; c0 < n; c0 += nb) {
            const size_t m = n - c0 < nb ? n - c0 : nb;
            const uint8_t *B = X + c0 * ld * elem;
            cublasStatus_t s;
            if (kind <= 1) {
                const float one = 1, zero = 0;
                const cudaDataType_t t = kind == 0 ? CUDA_R_32F : CUDA_R_16F;
                s = api.gemm_ex(h, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)m, (int)d, &one, X, t,
                                (int)ld, B, t, (int)ld, &zero, C, t, (int)n, CUBLAS_COMPUTE_32F,
                                CUBLAS_GEMM_DEFAULT);
            } else {
                const int p = m == nb ? 0 : 1;
                const float af = 1, bf = 0;
                const int32_t ai = 1, bi = 0;
                const void *al = kind == 2 ? (const void *)&ai : (const void *)&af;
                const void *be = kind == 2 ? (const void *)&bi : (const void *)&bf;
                s = api.matmul(lh, op, al, X, la, B, lb[p], be, C, lc[p], C, lc[p], &heur[p].algo,
                               ws, REF_WS, 0);
            }
            if (s != CUBLAS_STATUS_SUCCESS) {
                rc = kern_fail(KERN_EGPU, "cuBLAS yardstick: the %s GEMM failed (status %d)", dtype,
                               (int)s);
                goto done;
            }
        }
        KERN_CUDA_GOTO(cudaEventRecord(e1), done);
        KERN_CUDA_GOTO(cudaEventSynchronize(e1), done);
        float ms = 0;
        KERN_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1), done);
        if (r > 0 && (best < 0 || ms < best)) /* launch 0 warms up */
            best = ms;
    }
    *seconds = best * 1e-3;
done:
    if (h)
        api.destroy(h);
    for (int p = 0; p < 2; p++) {
        if (lb[p])
            api.layout_destroy(lb[p]);
        if (lc[p])
            api.layout_destroy(lc[p]);
    }
    if (la)
        api.layout_destroy(la);
    if (pref)
        api.pref_destroy(pref);
    if (op)
        api.desc_destroy(op);
    if (lh)
        api.lt_destroy(lh);
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(X);
    cudaFree(C);
    cudaFree(ws);
    return rc;
}

#else

extern "C" int kern_cublas_gemm(int device, const char *dtype, size_t n, size_t d, int reps,
                                double *seconds)
{
    (void)device, (void)dtype, (void)n, (void)d, (void)reps;
    *seconds = 0;
    return kern_fail(KERN_ENODEV, "cuBLAS yardstick: this build had no cuBLAS headers");
}

#endif
