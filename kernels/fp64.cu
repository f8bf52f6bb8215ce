/* `fp64`: exact FP64 join on CUDA cores, the ground truth on the GPU.
 * d2 = sum over k = 0..d-1, in that order, of (a_k - b_k)^2, each step
 * rounded as s = s + (t * t) with t = a - b: __dsub_rn/__dmul_rn/__dadd_rn
 * forbid FMA contraction, so the result is bit-identical to the CPU's
 * plain C loop (gcc, -std=c11, x86-64: no contraction). A pair is in the
 * join when d2 <= eps*eps, as on the CPU. The per-pair loop stops once the
 * partial sum passes eps^2 (sums of non-negative terms only grow). */
#include <stdio.h>
#include <stdlib.h>

#include "f64_common.cuh"
#include "kern_util.cuh"

#define FP64_QT 128 /* query rows per block, one per thread */
#define FP64_CT 32  /* candidate rows per tile */
#define FP64_DC 32  /* dimensions per chunk */

__global__ void __launch_bounds__(FP64_QT)
    fp64_join_kernel(const double *__restrict__ x, size_t d, size_t qa, size_t qb, size_t ca,
                     size_t cb, f64_out o)
{
    __shared__ double qs[FP64_DC][FP64_QT];
    __shared__ double cs[FP64_CT][FP64_DC + 1];
    const int t = threadIdx.x;
    const size_t qbase = qa + (size_t)blockIdx.x * FP64_QT;
    const size_t q = qbase + t;
    const bool qok = q < qb;
    const double eps2 = o.eps2;
    unsigned long long local = 0;

    for (size_t c0 = ca; c0 < cb; c0 += FP64_CT) {
        double acc[FP64_CT];
#pragma unroll
        for (int j = 0; j < FP64_CT; j++)
            acc[j] = 0.0;
        for (size_t k0 = 0; k0 < d; k0 += FP64_DC) {
            __syncthreads();
            /* Coalesced loads; out-of-range rows and dims become zeros,
             * which add exactly nothing to a sum. */
            if (d > FP64_DC || c0 == ca) {
                for (int idx = t; idx < FP64_QT * FP64_DC; idx += FP64_QT) {
                    int r = idx / FP64_DC, kk = idx % FP64_DC;
                    size_t row = qbase + r, k = k0 + kk;
                    qs[kk][r] = (row < qb && k < d) ? x[row * d + k] : 0.0;
                }
            }
            for (int idx = t; idx < FP64_CT * FP64_DC; idx += FP64_QT) {
                int r = idx / FP64_DC, kk = idx % FP64_DC;
                size_t row = c0 + r, k = k0 + kk;
                cs[r][kk] = (row < cb && k < d) ? x[row * d + k] : 0.0;
            }
            __syncthreads();
            double qr[FP64_DC];
#pragma unroll
            for (int kk = 0; kk < FP64_DC; kk++)
                qr[kk] = qs[kk][t];
            int alive = 0;
#pragma unroll
            for (int j = 0; j < FP64_CT; j++) {
                if (acc[j] <= eps2) {
                    double s = acc[j];
#pragma unroll
                    for (int kk = 0; kk < FP64_DC; kk++) {
                        double diff = __dsub_rn(qr[kk], cs[j][kk]);
                        s = __dadd_rn(s, __dmul_rn(diff, diff));
                    }
                    acc[j] = s;
                    alive |= qok && (c0 + j < cb) && s <= eps2;
                }
            }
            if (!__syncthreads_or(alive))
                break;
        }
        if (qok) {
#pragma unroll
            for (int j = 0; j < FP64_CT; j++)
                if (c0 + j < cb)
                    f64_emit(o, (uint32_t)q, (uint32_t)(c0 + j), acc[j], local);
        }
    }
    f64_flush(o, local);
}

struct fp64_ctx {
    const double *dx;
    size_t d;
};

static int fp64_launch(f64_run *r, const f64_item *it, void *user)
{
    const fp64_ctx *c = (const fp64_ctx *)user;
    size_t blocks = (it->qb - it->qa + FP64_QT - 1) / FP64_QT;
    fp64_join_kernel<<<(unsigned)blocks, FP64_QT, 0, r->k.st>>>(c->dx, c->d, it->qa, it->qb, it->ca,
                                                                it->cb, r->out);
    return 0;
}

/* The whole item list on one device (q NULL), or one device's share of a
 * run over several (kern_multi_fn): the items it takes from q. */
static int fp64_run_q(const kern_join_args *a, kern_join_result *res, kern_queue *q,
                      unsigned long long *taken)
{
    f64_run r;
    int rc = f64_begin(&r, a, res, "fp64", 0);
    if (rc)
        return rc;
    r.q = q;
    fp64_ctx c = {NULL, a->d};
    double *dx = NULL;
    rc = f64_upload(&r, a, NULL, a->d, NULL, &dx);
    c.dx = dx;
    f64_item *items = NULL;
    if (rc == 0) {
        size_t nitems = f64_brute_items(a, f64_chunk(&r, (size_t)1 << 16, 4096), 0, &items);
        rc = items ? f64_drive(&r, items, nitems, fp64_launch, &c, "fp64")
                   : kern_fail(KERN_ENOMEM, "out of host memory for the work items");
    }
    if (rc == 0)
        rc = f64_finish(&r);
    free(items);
    cudaFree(dx);
    res->d_padded = a->d;
    snprintf(res->variant, sizeof res->variant,
             "cuda-cores direct (a-b)^2, %dx%d tiles, no FMA, short-circuit", FP64_QT, FP64_CT);
    if (taken)
        *taken = r.taken;
    f64_end(&r);
    return rc;
}

extern "C" int kern_fp64_run(const kern_join_args *a, kern_join_result *res)
{
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, res, fp64_run_q);
    return fp64_run_q(a, res, NULL, NULL);
}
