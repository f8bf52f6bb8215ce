/* `ted`: TED-Join brute force on FP64 tensor cores, d2 = |q|^2 + |c|^2 - 2 q.c.
 * (a) paper: the TED-Join form: one warp per 8 query rows, mma m8n8k4, A
 *     pre-scaled by -2, the accumulator seeded with the candidates' squared
 *     norms, the query's norm added on CUDA cores; operands from global
 *     memory through L1, any d (padded to a multiple of 4).
 * (b) redesigned (default, sm_90): FASTED's techniques on FP64: 128x64
 *     block tiles, 8 warps with 32x32 register-blocked warp tiles of
 *     m16n8k16 mma, cp.async double buffering into padded shared memory
 *     (conflict-free fragment loads), grouped block-tile ordering for L2
 *     reuse, and symmetric tiles (pairs i<j computed once and mirrored). */
#include <stdio.h>
#include <stdlib.h>

#include "f64_common.cuh"
#include "kern_util.cuh"
#include "ptx_f64.cuh"

/* Squared norm of each row (dp values, zero padded). */
__global__ void ted_norms_kernel(const double *__restrict__ x, size_t n, size_t dp,
                                 double *__restrict__ nrm)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const double *r = x + i * dp;
    double s = 0;
    for (size_t k = 0; k < dp; k++)
        s += r[k] * r[k];
    nrm[i] = s;
}

__global__ void ted_scale_kernel(const double *__restrict__ x, size_t m, double *__restrict__ xs)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m)
        xs[i] = -2.0 * x[i];
}

/* ---- (a) the paper's form ---- */
#define TED_PAPER_WARPS 8

__global__ void __launch_bounds__(TED_PAPER_WARPS * 32)
    ted_paper_kernel(const double *__restrict__ x, const double *__restrict__ xs,
                     const double *__restrict__ nrm, size_t dp, size_t qa, size_t qb, size_t ca,
                     size_t cb, f64_out o)
{
    const int lane = threadIdx.x & 31, g = f64_frag_g(lane), t = f64_frag_t(lane);
    const size_t warp = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const size_t qbase = qa + warp * 8;
    if (qbase >= qb)
        return; /* uniform over the warp */
    const size_t qrow = qbase + g;
    const bool qok = qrow < qb;
    const size_t qr = qok ? qrow : qb - 1;
    const double *arow = xs + qr * dp;
    const double qn = nrm[qr];
    unsigned long long local = 0;
    for (size_t c0 = ca; c0 < cb; c0 += 8) {
        size_t crow = c0 + g < cb ? c0 + g : cb - 1;
        const double *brow = x + crow * dp;
        size_t col0 = c0 + 2 * t, col1 = col0 + 1;
        double acc[2];
        acc[0] = nrm[col0 < cb ? col0 : cb - 1];
        acc[1] = nrm[col1 < cb ? col1 : cb - 1];
        for (size_t k = 0; k < dp; k += 4)
            mma_m8n8k4_f64(acc, arow[k + t], brow[k + t], acc);
        if (qok) {
            if (col0 < cb)
                f64_emit(o, (uint32_t)qrow, (uint32_t)col0, fmax(acc[0] + qn, 0.0), local);
            if (col1 < cb)
                f64_emit(o, (uint32_t)qrow, (uint32_t)col1, fmax(acc[1] + qn, 0.0), local);
        }
    }
    f64_flush(o, local);
}

/* ---- (b) redesigned ---- */
#define TR_BM 128          /* query rows per block tile */
#define TR_BN 64           /* candidate rows per block tile */
#define TR_BK 32           /* dimensions per pipeline stage */
#define TR_LDS (TR_BK + 4) /* padded row: fragment loads hit 32 distinct banks */
#define TR_WARPS 8         /* 4 x 2 warps of 32 x 32 */
#define TR_GROUP 8         /* block-tile rows per ordering group */
#define TR_SMEM (2 * (TR_BM + TR_BN) * TR_LDS * (int)sizeof(double))

__device__ __forceinline__ void tr_load_stage(double *As, double *Bs, const double *__restrict__ x,
                                              size_t dp, size_t r0, size_t rlim, size_t c0,
                                              size_t clim, size_t k0, int tid)
{
    /* 16-byte chunks: 8 per row of TR_BK doubles; rows past the range are
     * clamped to the last valid row (their results are never emitted). */
    for (int idx = tid; idx < (TR_BM + TR_BN) * (TR_BK / 2); idx += TR_WARPS * 32) {
        int row = idx / (TR_BK / 2), ch = idx % (TR_BK / 2);
        const double *src;
        double *dst;
        if (row < TR_BM) {
            size_t gr = r0 + row < rlim ? r0 + row : rlim - 1;
            src = x + gr * dp + k0 + 2 * ch;
            dst = As + row * TR_LDS + 2 * ch;
        } else {
            int br = row - TR_BM;
            size_t gr = c0 + br < clim ? c0 + br : clim - 1;
            src = x + gr * dp + k0 + 2 * ch;
            dst = Bs + br * TR_LDS + 2 * ch;
        }
        cp_async_cg_16(dst, src);
    }
}

/* Emit one pair found under the item's symmetry (see f64_item). Kept out
 * of line so the unrolled epilogue stays small and acc stays in registers. */
__device__ __noinline__ void tr_emit(const f64_out &o, int sym, size_t row, size_t col, double d2,
                                     unsigned long long &local)
{
    if (sym == 0) {
        f64_emit(o, (uint32_t)row, (uint32_t)col, d2, local);
    } else if (sym == 2 || row < col) {
        f64_emit(o, (uint32_t)row, (uint32_t)col, d2, local);
        f64_emit(o, (uint32_t)col, (uint32_t)row, d2, local);
    } else if (row == col) {
        f64_emit(o, (uint32_t)row, (uint32_t)col, d2, local);
    }
}

__global__ void __launch_bounds__(TR_WARPS * 32, 1)
    ted_redesigned_kernel(const double *__restrict__ x, const double *__restrict__ nrm, size_t dp,
                          size_t qa, size_t qb, size_t ca, size_t cb, int sym, f64_out o)
{
    extern __shared__ __align__(16) double tr_smem[];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const int g = f64_frag_g(lane), t = f64_frag_t(lane);
    const int wm = warp >> 1, wn = warp & 1;

    /* Grouped ordering: TR_GROUP row tiles sweep each column tile in turn,
     * so a wave of blocks shares its candidate tiles in L2. */
    const size_t rt_n = (qb - qa + TR_BM - 1) / TR_BM, ct_n = (cb - ca + TR_BN - 1) / TR_BN;
    const size_t bid = blockIdx.x, per = (size_t)TR_GROUP * ct_n;
    const size_t first = bid / per * TR_GROUP;
    const size_t gsz = rt_n - first < TR_GROUP ? rt_n - first : TR_GROUP;
    const size_t rt = first + (bid % per) % gsz, ct = (bid % per) / gsz;
    const size_t r0 = qa + rt * TR_BM, c0 = ca + ct * TR_BN;
    /* Diagonal item: a tile whose every column precedes every row holds
     * only pairs j < i, which are emitted as mirrors elsewhere. */
    if (sym == 1 && c0 + TR_BN <= r0)
        return;

    double *As0 = tr_smem, *Bs0 = tr_smem + TR_BM * TR_LDS;
    double *As1 = Bs0 + TR_BN * TR_LDS, *Bs1 = As1 + TR_BM * TR_LDS;

    double acc[2][4][4];
#pragma unroll
    for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int v = 0; v < 4; v++)
                acc[i][j][v] = 0.0;

    const size_t nk = dp / TR_BK;
    tr_load_stage(As0, Bs0, x, dp, r0, qb, c0, cb, 0, tid);
    cp_async_commit();
    for (size_t kt = 0; kt < nk; kt++) {
        double *As = (kt & 1) ? As1 : As0, *Bs = (kt & 1) ? Bs1 : Bs0;
        if (kt + 1 < nk) {
            tr_load_stage((kt & 1) ? As0 : As1, (kt & 1) ? Bs0 : Bs1, x, dp, r0, qb, c0, cb,
                          (kt + 1) * TR_BK, tid);
            cp_async_commit();
            cp_async_wait_group<1>();
        } else {
            cp_async_wait_group<0>();
        }
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < TR_BK; ks += 16) {
            double a[2][8];
#pragma unroll
            for (int mt = 0; mt < 2; mt++)
#pragma unroll
                for (int i = 0; i < 8; i++)
                    a[mt][i] =
                        As[(wm * 32 + mt * 16 + g + 8 * (i & 1)) * TR_LDS + ks + t + 4 * (i >> 1)];
#pragma unroll
            for (int nt = 0; nt < 4; nt++) {
                double b[4];
#pragma unroll
                for (int i = 0; i < 4; i++)
                    b[i] = Bs[(wn * 32 + nt * 8 + g) * TR_LDS + ks + t + 4 * i];
                mma_m16n8k16_f64(acc[0][nt], a[0], b, acc[0][nt]);
                mma_m16n8k16_f64(acc[1][nt], a[1], b, acc[1][nt]);
            }
        }
        __syncthreads();
    }

    unsigned long long local = 0;
#pragma unroll
    for (int mt = 0; mt < 2; mt++)
#pragma unroll
        for (int v2 = 0; v2 < 2; v2++) {
            const size_t row = r0 + wm * 32 + mt * 16 + g + 8 * v2;
            const bool rok = row < qb;
            const double qn = nrm[rok ? row : qb - 1];
#pragma unroll
            for (int nt = 0; nt < 4; nt++)
#pragma unroll
                for (int v1 = 0; v1 < 2; v1++) {
                    const size_t col = c0 + wn * 32 + nt * 8 + 2 * t + v1;
                    const double dot = acc[mt][nt][v2 * 2 + v1];
                    if (rok && col < cb) {
                        double d2 = fmax(fma(-2.0, dot, qn + nrm[col]), 0.0);
                        if (d2 <= o.eps2)
                            tr_emit(o, sym, row, col, d2, local);
                    }
                }
        }
    f64_flush(o, local);
}

struct ted_ctx {
    const double *dx, *dxs, *nrm;
    size_t dp;
    int paper;
};

static int ted_launch(f64_run *r, const f64_item *it, void *user)
{
    const ted_ctx *c = (const ted_ctx *)user;
    if (c->paper) {
        size_t warps = (it->qb - it->qa + 7) / 8;
        size_t blocks = (warps + TED_PAPER_WARPS - 1) / TED_PAPER_WARPS;
        ted_paper_kernel<<<(unsigned)blocks, TED_PAPER_WARPS * 32, 0, r->k.st>>>(
            c->dx, c->dxs, c->nrm, c->dp, it->qa, it->qb, it->ca, it->cb, r->out);
    } else {
        size_t rt = (it->qb - it->qa + TR_BM - 1) / TR_BM,
               ct = (it->cb - it->ca + TR_BN - 1) / TR_BN;
        ted_redesigned_kernel<<<(unsigned)(rt * ct), TR_WARPS * 32, TR_SMEM, r->k.st>>>(
            c->dx, c->nrm, c->dp, it->qa, it->qb, it->ca, it->cb, it->sym, r->out);
    }
    return 0;
}

static int ted_prepare(f64_run *r, ted_ctx *c, double **dnrm, double **dxs)
{
    const kern_join_args *a = r->a;
    cudaStream_t st = r->k.st;
    int rc;
    if ((rc = f64_malloc(r, (void **)dnrm, a->n * sizeof(double), "the squared norms")))
        return rc;
    if (c->paper &&
        (rc = f64_malloc(r, (void **)dxs, a->n * c->dp * sizeof(double), "the scaled dataset")))
        return rc;
    KERN_CUDA(cudaEventRecord(r->k.e0, st));
    ted_norms_kernel<<<(unsigned)((a->n + 255) / 256), 256, 0, st>>>(c->dx, a->n, c->dp, *dnrm);
    KERN_LAUNCH_CHECK("ted_norms_kernel");
    c->nrm = *dnrm;
    if (c->paper) {
        size_t m = a->n * c->dp;
        ted_scale_kernel<<<(unsigned)((m + 255) / 256), 256, 0, st>>>(c->dx, m, *dxs);
        KERN_LAUNCH_CHECK("ted_scale_kernel");
        c->dxs = *dxs;
    } else {
        KERN_CUDA(cudaFuncSetAttribute(ted_redesigned_kernel,
                                       cudaFuncAttributeMaxDynamicSharedMemorySize, TR_SMEM));
    }
    KERN_CUDA(cudaEventRecord(r->k.e1, st));
    KERN_CUDA(cudaEventSynchronize(r->k.e1));
    r->res->t_prep += kern_event_s(r->k.e0, r->k.e1);
    return 0;
}

/* The whole item list on one device (q NULL), or one device's share of a
 * run over several (kern_multi_fn): the items it takes from q. */
static int ted_run_q(const kern_join_args *a, kern_join_result *res, kern_queue *q,
                     unsigned long long *taken)
{
    f64_run r;
    int rc = f64_begin(&r, a, res, "ted", 1);
    if (rc)
        return rc;
    r.q = q;
    res->prep_name = "norms";
    ted_ctx c = {NULL, NULL, NULL, 0, a->ted_paper ? 1 : 0};
    /* The m16n8k16 shape needs sm_90; an A100 runs the paper form. */
    int fell_back = !c.paper && r.k.cc < 90;
    if (fell_back)
        c.paper = 1;
    size_t mult = c.paper ? 4 : TR_BK;
    c.dp = (a->d + mult - 1) / mult * mult;
    double *dx = NULL, *dnrm = NULL, *dxs = NULL;
    rc = f64_upload(&r, a, NULL, c.dp, NULL, &dx);
    c.dx = dx;
    if (rc == 0)
        rc = ted_prepare(&r, &c, &dnrm, &dxs);
    f64_item *items = NULL;
    int sym = !c.paper && a->symmetric;
    if (rc == 0) {
        /* Whole tiles of both kernels (TR_BM, TR_BN and 8 queries a warp
         * divide 128): a pair's tile, and so its arithmetic, is the same
         * whatever the chunk. */
        size_t nitems = f64_brute_items(a, f64_chunk(&r, (size_t)1 << 15, 2048), sym, &items);
        rc = items ? f64_drive(&r, items, nitems, ted_launch, &c,
                               c.paper ? "ted paper"
                               : sym   ? "ted symmetric"
                                       : "ted")
                   : kern_fail(KERN_ENOMEM, "out of host memory for the work items");
    }
    if (rc == 0)
        rc = f64_finish(&r);
    free(items);
    cudaFree(dx);
    cudaFree(dnrm);
    cudaFree(dxs);
    res->d_padded = c.dp;
    res->symmetric = sym && a->mode != KJOIN_PAIRS;
    if (c.paper)
        snprintf(res->variant, sizeof res->variant, "paper%s: mma m8n8k4, 8 queries/warp",
                 fell_back ? " (redesigned needs sm_90)" : "");
    else
        snprintf(res->variant, sizeof res->variant,
                 "redesigned: m16n8k16, %dx%d tiles, cp.async x2%s", TR_BM, TR_BN,
                 res->symmetric ? ", symmetric" : "");
    if (taken)
        *taken = r.taken;
    f64_end(&r);
    return rc;
}

extern "C" int kern_ted_run(const kern_join_args *a, kern_join_result *res)
{
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, res, ted_run_q);
    return ted_run_q(a, res, NULL, NULL);
}
