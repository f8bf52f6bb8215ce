/* kern_ladder_run (kernels.h, "The teaching ladder"): the driver of the
 * own rungs. It checks the rung, uploads the rows (FP32, padded with zeros
 * to LADDER_ROW_PAD rows and LADDER_K_PAD values), rounds them to FP16 on
 * the device for the tensor-core rungs, computes the norms, then launches
 * the rung once to warm up and reps times timed, keeping the fastest.
 * Memory is O(n d): the rows (FP32, plus FP16 for 5..10), n norms and the
 * counter. */
#include <chrono>
#include <stdio.h>
#include <string.h>

#include "ladder_common.cuh"

static const ladder_kernel *ladder_kernel_of(int id)
{
    static const ladder_kernel *const k[] = {&ladder_r01, &ladder_r02, &ladder_r03, &ladder_r04,
                                             &ladder_r05, &ladder_r06, &ladder_r07, &ladder_r08,
                                             &ladder_r09, &ladder_r10};
    static_assert(sizeof k / sizeof *k == KERN_LADDER_OWN, "one kernel file a own rung");
    return id >= 1 && id <= KERN_LADDER_OWN ? k[id - 1] : NULL;
}

/* Round to nearest (ties to even), as the host's fp16 does. */
__global__ void ladder_to_half(const float *x, __half *h, size_t count)
{
    for (size_t k = blockIdx.x * (size_t)blockDim.x + threadIdx.x; k < count;
         k += (size_t)gridDim.x * blockDim.x)
        h[k] = __float2half_rn(x[k]);
}

/* |x_i|^2 in FP32, a warp a row, of the values the kernel multiplies. */
template <class T> __global__ void ladder_norms(const T *x, size_t rows, size_t ld, float *norm)
{
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const int lane = threadIdx.x % 32;
    for (size_t r = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32; r < rows; r += warps) {
        float s = 0;
        for (size_t k = lane; k < ld; k += 32) {
            const float t = (float)x[r * ld + k];
            s = fmaf(t, t, s);
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0)
            norm[r] = s;
    }
}

static size_t ladder_round_up(size_t x, size_t m)
{
    return (x + m - 1) / m * m;
}

static bool ladder_cancelled(const kern_ladder_args *a)
{
    return a->cancel && *a->cancel;
}

extern "C" int kern_ladder_run(const kern_ladder_args *a, kern_ladder_result *res)
{
    memset(res, 0, sizeof *res);
    const kern_ladder_rung *r = kern_ladder_find(a->rung);
    const ladder_kernel *lk = ladder_kernel_of(a->rung);
    if (!r || r->engine || !lk)
        return kern_fail(KERN_EINVAL, "ladder: rung %d is not one of the own rungs 1..%d", a->rung,
                         KERN_LADDER_OWN);
    if (a->d == 0 || a->n > 0x7fffffffu)
        return kern_fail(KERN_EINVAL,
                         "ladder: %zu rows of %zu values: need 1 to 2^31-1 rows of "
                         "at least one value",
                         a->n, a->d);
    const int ndev = kern_device_count();
    if (ndev == 0)
        return KERN_ENODEV; /* kern_device_count said why */
    if (a->device < 0 || a->device >= ndev)
        return kern_fail(KERN_ENODEV, "no CUDA device %d (%d present)", a->device, ndev);
    kern_device dv;
    int rc = kern_device_info(a->device, &dv);
    if (rc)
        return rc;
    char why[256];
    if ((rc = kern_ladder_check(r, &dv, why, sizeof why)))
        return kern_fail_msg(rc, why);

    const bool tensor = lk->fp16; /* FP16 rows for the tensor cores */
    const size_t n_pad = ladder_round_up(a->n ? a->n : 1, LADDER_ROW_PAD);
    const size_t ld = ladder_round_up(a->d, LADDER_K_PAD);
    const size_t smem = kern_ladder_smem(r);
    const int reps = a->reps < 1 ? 1 : a->reps;
    float *xf = NULL, *norm = NULL;
    __half *xh = NULL;
    unsigned long long *count = NULL, blocks = 0, pairs = 0;
    cudaEvent_t e0 = NULL, e1 = NULL;
    cudaFuncAttributes fa;
    int nb = 0;
    float best = -1, ms = 0;
    ladder_view v;

    KERN_CUDA(cudaSetDevice(a->device));
    if (smem > 48 * 1024) /* past the default limit a kernel must opt in */
        KERN_CUDA(
            cudaFuncSetAttribute(lk->func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    KERN_CUDA(cudaFuncGetAttributes(&fa, lk->func));
    KERN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, lk->func, r->threads, smem));
    if (nb == 0)
        return kern_fail(KERN_EINVAL,
                         "ladder rung %d (%s): the rung's block cannot be resident on %s", r->id,
                         r->name, dv.name);

    {
        const auto t0 = std::chrono::steady_clock::now();
        KERN_CUDA_GOTO(cudaMalloc(&xf, n_pad * ld * sizeof *xf), done);
        KERN_CUDA_GOTO(cudaMalloc(&norm, n_pad * sizeof *norm), done);
        KERN_CUDA_GOTO(cudaMalloc(&count, sizeof *count), done);
        KERN_CUDA_GOTO(cudaMemset(xf, 0, n_pad * ld * sizeof *xf), done);
        if (a->n)
            KERN_CUDA_GOTO(cudaMemcpy2D(xf, ld * sizeof *xf, a->x, a->d * sizeof *a->x,
                                        a->d * sizeof *a->x, a->n, cudaMemcpyHostToDevice),
                           done);
        KERN_CUDA_GOTO(cudaDeviceSynchronize(), done);
        res->t_h2d = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    KERN_CUDA_GOTO(cudaEventCreate(&e0), done);
    KERN_CUDA_GOTO(cudaEventCreate(&e1), done);
    KERN_CUDA_GOTO(cudaEventRecord(e0), done);
    if (tensor) {
        KERN_CUDA_GOTO(cudaMalloc(&xh, n_pad * ld * sizeof *xh), done);
        const size_t cnt = n_pad * ld;
        const unsigned g = (unsigned)(cnt / 256 < 65536 ? (cnt + 255) / 256 : 65536);
        ladder_to_half<<<g, 256>>>(xf, xh, cnt);
        KERN_CUDA_GOTO(cudaGetLastError(), done);
        ladder_norms<<<(unsigned)(n_pad / 8 < 65536 ? n_pad / 8 : 65536), 256>>>(xh, n_pad, ld,
                                                                                 norm);
    } else {
        ladder_norms<<<(unsigned)(n_pad / 8 < 65536 ? n_pad / 8 : 65536), 256>>>(xf, n_pad, ld,
                                                                                 norm);
    }
    KERN_CUDA_GOTO(cudaGetLastError(), done);
    KERN_CUDA_GOTO(cudaEventRecord(e1), done);
    KERN_CUDA_GOTO(cudaEventSynchronize(e1), done);
    KERN_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1), done);
    res->t_convert = ms * 1e-3;

    v.xf = xf;
    v.xh = xh;
    v.norm = norm;
    v.n = a->n;
    v.n_pad = n_pad;
    v.ld = ld;
    v.eps2 = (float)(a->eps * a->eps);
    v.count = count;
    for (int it = 0; it <= reps; it++) { /* it 0 warms up */
        if (ladder_cancelled(a)) {
            rc = kern_fail(KERN_ECANCEL, "cancelled");
            goto done;
        }
        KERN_CUDA_GOTO(cudaMemset(count, 0, sizeof *count), done);
        blocks = 0;
        KERN_CUDA_GOTO(cudaEventRecord(e0), done);
        if ((rc = lk->launch(v, smem, &blocks)))
            goto done;
        KERN_CUDA_GOTO(cudaEventRecord(e1), done);
        KERN_CUDA_GOTO(cudaEventSynchronize(e1), done);
        KERN_CUDA_GOTO(cudaEventElapsedTime(&ms, e0, e1), done);
        if (it > 0 && (best < 0 || ms < best))
            best = ms;
    }
    KERN_CUDA_GOTO(cudaMemcpy(&pairs, count, sizeof pairs, cudaMemcpyDeviceToHost), done);

    res->pairs = pairs;
    res->t_kernel = best * 1e-3;
    res->reps = reps;
    res->d_padded = ld;
    res->regs = fa.numRegs;
    res->blocks_per_sm = nb;
    res->blocks = blocks;
    {
        int k = snprintf(res->variant, sizeof res->variant, "r%02d %s %dx%d", r->id, r->name, r->bm,
                         r->bn);
        if (r->bk && k > 0 && (size_t)k < sizeof res->variant)
            k += snprintf(res->variant + k, sizeof res->variant - k, "x%d", r->bk);
        if (r->stages > 1 && k > 0 && (size_t)k < sizeof res->variant)
            snprintf(res->variant + k, sizeof res->variant - k, " %d stages", r->stages);
    }
done:
    if (e0)
        cudaEventDestroy(e0);
    if (e1)
        cudaEventDestroy(e1);
    cudaFree(xf);
    cudaFree(xh);
    cudaFree(norm);
    cudaFree(count);
    return rc;
}
