/* Host side of the wgmma kernel (fasted_wgmma.cuh): whether a device can
 * run it, its tile grid, the tensor map and the launch. Format-independent:
 * rows are described to the copy engine as 16-bit units. */
#include <string.h>

#include "fasted_wgmma.cuh"

/* Writes 1 where the driver loaded the sm_90a code, 0 elsewhere. */
__global__ void fasted_wg_probe(int *out)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    *out = 1;
#else
    *out = 0;
#endif
}

typedef CUresult (*fasted_encode_fn)(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,
                                     const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,
                                     const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle,
                                     CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

static fasted_encode_fn fasted_wg_encoder(void)
{
    static fasted_encode_fn fn = NULL;
    static int looked = 0;
    if (!looked) {
        looked = 1;
        void *f = NULL;
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault,
                                             &q) == cudaSuccess &&
            q == cudaDriverEntryPointSuccess)
            fn = (fasted_encode_fn)f;
        cudaGetLastError();
    }
    return fn;
}

int fasted_wg_usable(int dev)
{
    static signed char known[64];
    static bool init = false;
    if (!init) {
        memset(known, -1, sizeof known);
        init = true;
    }
    if (dev < 0 || dev >= 64)
        return 0;
    if (known[dev] >= 0)
        return known[dev];
    int ok = 0, major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
        kern_cc_has_wgmma(major * 10 + minor) && fasted_wg_encoder()) {
        int *d = NULL, h = 0, prev = 0;
        cudaGetDevice(&prev);
        if (cudaSetDevice(dev) == cudaSuccess && cudaMalloc(&d, sizeof(int)) == cudaSuccess) {
            fasted_wg_probe<<<1, 1>>>(d);
            if (cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess && h == 1)
                ok = 1;
            cudaFree(d);
        }
        cudaSetDevice(prev);
    }
    cudaGetLastError();
    known[dev] = (signed char)ok;
    return ok;
}

void fasted_wg_grid(fasted_params *p, size_t nq, size_t n)
{
    if (fasted_tri(*p)) {
        p->T = p->U = (unsigned)((n + 2 * FASTED_WG_BM - 1) / (2 * FASTED_WG_BM));
    } else {
        p->T = (unsigned)((nq + FASTED_WG_BM - 1) / FASTED_WG_BM);
        p->U = (unsigned)((n - p->c0 + FASTED_WG_BN - 1) / FASTED_WG_BN);
    }
}

unsigned long long fasted_wg_items(const fasted_params *p)
{
    return fasted_tri(*p) ? 2 * fasted_tiles_total(p->T, p->U, 1, p->order)
                          : fasted_tiles_total(p->T, p->U, 0, p->order);
}

cudaError_t fasted_wg_launch(const void *func, const fasted_params *p, size_t n_alloc, int widen,
                             int grid, size_t smem, cudaStream_t st)
{
    /* Per host thread: a run over several devices launches from a thread
     * per device, each with its own dataset copy (kern_multi.cuh). */
    static thread_local CUtensorMap map;
    static thread_local const void *map_x = NULL;
    static thread_local size_t map_ld = 0, map_rows = 0;
    static thread_local int map_widen = 0;
    if (map_x != p->X || map_ld != (size_t)p->ld || map_rows != n_alloc || map_widen != widen) {
        fasted_encode_fn enc = fasted_wg_encoder();
        if (!enc)
            return cudaErrorNotSupported;
        /* Rows of ld 16-bit units; 64x128 boxes (128-byte rows, the
         * swizzle's width); the B tile takes two boxes. Widening formats:
         * rows of 2 ld bytes, 64x128 boxes of bytes (one FP16 k slice),
         * unswizzled: the producer warps widen and swizzle them. */
        cuuint64_t dims[2] = {(cuuint64_t)p->ld * (widen ? 2 : 1), (cuuint64_t)n_alloc};
        cuuint64_t strides[1] = {(cuuint64_t)p->ld * 2};
        cuuint32_t box[2] = {WG_BK, FASTED_WG_BM};
        cuuint32_t estr[2] = {1, 1};
        if (enc(&map, widen ? CU_TENSOR_MAP_DATA_TYPE_UINT8 : CU_TENSOR_MAP_DATA_TYPE_UINT16, 2,
                (void *)p->X, dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
                widen ? CU_TENSOR_MAP_SWIZZLE_NONE : CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
            map_x = NULL;
            return cudaErrorInvalidValue;
        }
        map_x = p->X;
        map_ld = (size_t)p->ld;
        map_rows = n_alloc;
        map_widen = widen;
    }
    void *args[] = {(void *)&map, (void *)p};
    cudaError_t e = cudaLaunchKernel(func, dim3(grid), dim3(FASTED_WG_THREADS), args, smem, st);
    if (e != cudaSuccess)
        return e;
    return cudaGetLastError();
}
