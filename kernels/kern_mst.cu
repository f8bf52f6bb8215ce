/* HDBSCAN*'s Borůvka round on the device (kern_mst_round, kernels.h): for
 * every component but one, its lightest mutual-reachability edge to
 * another component, exactly, with no pair leaving the device.
 *
 *   pass       FASTED's kernels in the args' format (exact's FP16, its
 *              centre and scale; promoting at large d, exact_kern_pass,
 *              with the promoted bound) with the masked nearest-neighbour
 *              epilogue (epi_mrnn.cuh): each row's least estimate u_i of
 *              max(c_i, c_j, d2) over the columns of other components,
 *              and that column j_i. Every tile, not symmetric.
 *   bound      each component C's edge (i, j_i) of least FP64 weight: a
 *              real edge out of C, so its weight T2 bounds C's lightest.
 *   screen     a row whose estimate exceeds T2 (scaled) by exact's error
 *              bound at T (kernels/exact_bound.h, the row's norm and the
 *              largest; a core distance is rounded down to FP32, so it
 *              can only look lighter) has every edge heavier than T2: it
 *              cannot hold C's lightest, nor tie it. A row with c_i > T2
 *              neither. The rest are listed.
 *   FP64       each listed row against every column of another component,
 *              in fp64's direct form in dimension order (the host's
 *              src/cluster/hdbscan_mst.c, cpu's: bit for bit), edges by
 *              (w, a, b); each component's least of them and its bound's.
 *
 * So the answer is the FP64 one whatever the pass's errors, as exact's
 * joins are; the pass only decides how few rows FP64 visits. Memory:
 * about 80 bytes a row and the dataset as the host holds it. One device
 * (a list's first); the caller takes the host's rounds where the dataset
 * does not fit (KERN_ENOMEM) or its type is none the kernels read. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <vector>

#include <cuda_fp16.h>

#include "exact_bound.h"
#include "f64_widen.cuh" /* f64_direct_d2, f64_norm_kernel */
#include "epi_mrnn.cuh"  /* MRNN_SKIPPED */
#include "exact_kern.h"
#include "fasted_run.cuh"
#include "kern_drive.cuh"
#include "kern_pool.cuh"
#include "kern_util.cuh"
#include "kernels.h"

#define MS_THREADS 256
#define MS_NONE 0xffffffffu
/* At most this many listed rows go straight to FP64 over every column
 * (cheaper than a candidates pass); more take the candidates pass. */
#define MS_FEW_ROWS 256

namespace
{

struct ms_dev {
    float *core2f, *u2;
    unsigned long long *cand, *ncand;
    size_t cand_cap;
    uint32_t *comp, *rows, *nrows;
    unsigned long long *best, *nmax, *cw, *cab, *cw2, *cab2, *rab;
    double *core2, *nx, *w, *rw, *center;
    void *x;
    size_t bytes;
};

struct ms_ctx {
    ms_dev *dv;
    int mode; /* FASTED_KD_MRNN or _MRLIST */
};

int ms_params(void *vc, kern_run *k, fasted_params *p, int use_wg)
{
    (void)k;
    (void)use_wg;
    const ms_ctx *c = (const ms_ctx *)vc;
    p->mode = c->mode;
    p->kd.core2 = c->dv->core2f;
    p->kd.comp = c->dv->comp;
    p->kd.best = c->dv->best;
    p->kd.u2 = c->dv->u2;
    p->kd.cand = c->dv->cand;
    p->kd.ncand = c->dv->ncand;
    p->kd.cand_cap = c->dv->cand_cap;
    return 0;
}

unsigned ms_blocks(size_t n)
{
    return (unsigned)std::max((size_t)1, std::min((n + MS_THREADS - 1) / MS_THREADS, (size_t)8192));
}

} // namespace

__device__ __forceinline__ double ms_w(double d2, double ci, double cj)
{
    double w = d2 > ci ? d2 : ci;
    return w > cj ? w : cj;
}

__device__ __forceinline__ unsigned long long ms_ab(uint32_t i, uint32_t j)
{
    return i < j ? ((unsigned long long)i << 32 | j) : ((unsigned long long)j << 32 | i);
}

/* Each row's estimated edge in FP64, and each component's least weight. */
template <class T>
__global__ void ms_bound_kernel(const T *x, size_t n, size_t d, const double *core2,
                                const uint32_t *comp, uint32_t skip, const unsigned long long *best,
                                double *w, unsigned long long *cw)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long k = best[i];
        w[i] = INFINITY;
        if (k == ~0ull || comp[i] == skip)
            continue;
        const uint32_t j = (uint32_t)k;
        const double v = ms_w(f64_direct_d2(x, d, (uint32_t)i, j, INFINITY), core2[i], core2[j]);
        w[i] = v;
        atomicMin(&cw[comp[i]], (unsigned long long)__double_as_longlong(v));
    }
}

/* The ends of each component's least-weight estimated edge. */
__global__ void ms_bound_ends_kernel(size_t n, const uint32_t *comp, const unsigned long long *best,
                                     const double *w, const unsigned long long *cw,
                                     unsigned long long *cab)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        if (w[i] == INFINITY || w[i] != __longlong_as_double((long long)cw[comp[i]]))
            continue;
        atomicMin(&cab[comp[i]], ms_ab((uint32_t)i, (uint32_t)best[i]));
    }
}

/* The rows the estimate cannot rule out (the file's comment, screen). */
__global__ void ms_screen_kernel(size_t n, const uint32_t *comp, uint32_t skip, const double *core2,
                                 const unsigned long long *best, const double *nx,
                                 const unsigned long long *nmax, const unsigned long long *cw,
                                 exact_bound b, double sc, uint32_t *rows, uint32_t *nrows,
                                 float *u2)
{
    const double nm = __longlong_as_double((long long)*nmax);
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        u2[i] = -1.0f;
        if (comp[i] == skip)
            continue;
        const double t2 = __longlong_as_double((long long)cw[comp[i]]);
        if (core2[i] > t2)
            continue; /* every edge of i weighs at least c_i; none: t2 is infinite */
        double thr = INFINITY;
        if (t2 < INFINITY)
            thr = __dmul_ru(
                __dadd_ru(__dmul_ru(t2, sc * sc),
                          exact_bound_delta(&b, nx[i], nm, __dmul_ru(__dsqrt_ru(t2), sc))),
                1.0 + 0x1p-40);
        /* the row's estimate is its least over every column */
        if (best[i] != ~0ull && (double)__uint_as_float((unsigned)(best[i] >> 32)) > thr)
            continue;
        /* the candidates' bound, rounded up to FP32 */
        float f = (float)thr;
        if ((double)f < thr)
            f = nextafterf(f, INFINITY);
        u2[i] = f;
        rows[atomicAdd(nrows, 1u)] = (uint32_t)i;
    }
}

/* The candidates in FP64: each pair's weight where it is at most its
 * row's component's bound (INFINITY otherwise), in e's slot. */
template <class T>
__global__ void ms_cand_kernel(const T *x, size_t d, const double *core2, const uint32_t *comp,
                               const unsigned long long *cand, const unsigned long long *ncand,
                               const unsigned long long *cw, double *rw, unsigned long long *rab)
{
    const size_t m = (size_t)*ncand;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x) {
        const uint32_t i = (uint32_t)(cand[e] >> 32), j = (uint32_t)cand[e];
        const double lim = __longlong_as_double((long long)cw[comp[i]]);
        const double d2 = f64_direct_d2(x, d, i, j, lim);
        const double v = ms_w(d2, core2[i], core2[j]);
        rw[e] = d2 > lim || v > lim ? INFINITY : v;
        rab[e] = ms_ab(i, j);
    }
}

/* The listed rows against every column in FP64, tiled as a product: a
 * block takes MS_TR rows and sweeps its share of the column tiles
 * (gridDim.y shares), MS_TC columns a tile, the d values in chunks of
 * MS_KC staged in shared memory as FP64; each thread sums four rows'
 * squared distances to its column in dimension order across the chunks
 * (fp64's direct form, bit for bit), then keeps, of the pairs within its
 * row's bound and of another component, the lightest by (w, a, b). Each
 * block's least a row goes to rw/rab[row * gridDim.y + share]; w
 * INFINITY where none. */
#define MS_TR 16
#define MS_TC 64
#define MS_KC 32
template <class T>
__global__ void __launch_bounds__(MS_THREADS)
    ms_exact_kernel(const T *x, size_t n, size_t d, const double *core2, const uint32_t *comp,
                    const uint32_t *rows, const uint32_t *nrows, const unsigned long long *cw,
                    double *rw, unsigned long long *rab)
{
    __shared__ double s_r[MS_TR][MS_KC], s_c[MS_KC][MS_TC];
    __shared__ double s_w[MS_THREADS / 32][4];
    __shared__ unsigned long long s_ab[MS_THREADS / 32][4];
    const uint32_t nr = *nrows;
    const size_t t0 = (size_t)blockIdx.x * MS_TR;
    if (t0 >= nr)
        return; /* the whole block */
    const unsigned tid = threadIdx.x, col = tid % MS_TC, rg = tid / MS_TC;
    uint32_t ri[4], rc[4];
    double lim[4], ci[4], bw[4];
    unsigned long long bab[4];
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const size_t t = t0 + rg * 4 + q;
        const bool in = t < nr;
        ri[q] = in ? rows[t] : 0;
        rc[q] = in ? comp[ri[q]] : MRNN_PAD;
        lim[q] = in ? __longlong_as_double((long long)cw[rc[q]]) : -1.0;
        ci[q] = in ? core2[ri[q]] : 0.0;
        bw[q] = INFINITY;
        bab[q] = ~0ull;
    }
    const size_t ntile = (n + MS_TC - 1) / MS_TC;
    const size_t tb = ntile * blockIdx.y / gridDim.y, te = ntile * (blockIdx.y + 1) / gridDim.y;
    for (size_t tile = tb; tile < te; tile++) {
        double s[4] = {0, 0, 0, 0};
        for (size_t k0 = 0; k0 < d; k0 += MS_KC) {
            const size_t kc = d - k0 < MS_KC ? d - k0 : MS_KC;
            __syncthreads();
            for (unsigned e = tid; e < MS_TR * MS_KC; e += MS_THREADS) {
                const unsigned r = e / MS_KC, k = e % MS_KC;
                const size_t t = t0 + r;
                s_r[r][k] = t < nr && k < kc ? exact_w(x[(size_t)rows[t] * d + k0 + k]) : 0.0;
            }
            for (unsigned e = tid; e < MS_TC * MS_KC; e += MS_THREADS) {
                const unsigned c = e / MS_KC, k = e % MS_KC;
                const size_t j = tile * MS_TC + c;
                s_c[k][c] = j < n && k < kc ? exact_w(x[j * d + k0 + k]) : 0.0;
            }
            __syncthreads();
            for (size_t k = 0; k < kc; k++) {
                const double b = s_c[k][col];
#pragma unroll
                for (int q = 0; q < 4; q++) {
                    const double u = __dsub_rn(s_r[rg * 4 + q][k], b);
                    s[q] = __dadd_rn(s[q], __dmul_rn(u, u));
                }
            }
        }
        const size_t j = tile * MS_TC + col;
        if (j >= n)
            continue;
        const uint32_t kj = comp[j];
        const double cj = core2[j];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            if (kj == rc[q] || cj > lim[q] || s[q] > lim[q])
                continue;
            const double v = ms_w(s[q], ci[q], cj);
            const unsigned long long ab = ms_ab(ri[q], (uint32_t)j);
            if (v < bw[q] || (v == bw[q] && ab < bab[q])) {
                bw[q] = v;
                bab[q] = ab;
            }
        }
    }
    /* each row's least over its MS_TC threads: two warps */
    const unsigned lane = tid & 31, warp = tid / 32;
#pragma unroll
    for (int q = 0; q < 4; q++) {
        for (int o = 16; o > 0; o >>= 1) {
            const double ow = __shfl_xor_sync(0xffffffffu, bw[q], o);
            const unsigned long long oab = __shfl_xor_sync(0xffffffffu, bab[q], o);
            if (ow < bw[q] || (ow == bw[q] && oab < bab[q])) {
                bw[q] = ow;
                bab[q] = oab;
            }
        }
        if (lane == 0) {
            s_w[warp][q] = bw[q];
            s_ab[warp][q] = bab[q];
        }
    }
    __syncthreads();
    if (tid < MS_TR) {
        const unsigned g = tid / 4, q = tid % 4, w0 = g * (MS_TC / 32);
        double w = s_w[w0][q];
        unsigned long long ab = s_ab[w0][q];
        for (unsigned v = 1; v < MS_TC / 32; v++) {
            const double ow = s_w[w0 + v][q];
            const unsigned long long oab = s_ab[w0 + v][q];
            if (ow < w || (ow == w && oab < ab)) {
                w = ow;
                ab = oab;
            }
        }
        const size_t t = t0 + tid;
        if (t < nr) {
            rw[t * gridDim.y + blockIdx.y] = w;
            rab[t * gridDim.y + blockIdx.y] = ab;
        }
    }
}

/* The listed rows' edges into their components' least weights; then the
 * ends at that weight (a component whose least weight fell forgets its
 * bound's ends first). */
/* Entry e's row: the candidate's, or listed row e / split. */
__device__ __forceinline__ uint32_t ms_row_of(size_t e, const unsigned long long *cand,
                                              const uint32_t *rows, unsigned split)
{
    return cand ? (uint32_t)(cand[e] >> 32) : rows[e / split];
}

__global__ void ms_fold_kernel(const uint32_t *comp, const uint32_t *rows,
                               const unsigned long long *cand, size_t m, unsigned split,
                               const double *rw, unsigned long long *cw2)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x)
        if (rw[e] < INFINITY)
            atomicMin(&cw2[comp[ms_row_of(e, cand, rows, split)]],
                      (unsigned long long)__double_as_longlong(rw[e]));
}

__global__ void ms_forget_kernel(size_t n, const unsigned long long *cw,
                                 const unsigned long long *cw2, unsigned long long *cab2)
{
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < n;
         c += (size_t)gridDim.x * blockDim.x)
        if (cw2[c] != cw[c])
            cab2[c] = ~0ull;
}

__global__ void ms_fold_ends_kernel(const uint32_t *comp, const uint32_t *rows,
                                    const unsigned long long *cand, size_t m, unsigned split,
                                    const double *rw, const unsigned long long *rab,
                                    const unsigned long long *cw2, unsigned long long *cab2)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x) {
        const uint32_t c = comp[ms_row_of(e, cand, rows, split)];
        if (rw[e] < INFINITY && rw[e] == __longlong_as_double((long long)cw2[c]))
            atomicMin(&cab2[c], rab[e]);
    }
}

static int ms_alloc(void **p, size_t size, size_t total)
{
    return kern_pool_alloc(p, size, "an hdbscan round", total);
}

/* Every component's bound infinite (its bits above every finite
 * weight's) until an estimate lowers it. */
__global__ void ms_inf_kernel(unsigned long long *cw, size_t n)
{
    for (size_t c = (size_t)blockIdx.x * blockDim.x + threadIdx.x; c < n;
         c += (size_t)gridDim.x * blockDim.x)
        cw[c] = (unsigned long long)__double_as_longlong(INFINITY);
}

static void ms_free(ms_dev *dv)
{
    void *ps[] = {dv->core2f, dv->u2,   dv->cand, dv->ncand, dv->comp,   dv->rows, dv->nrows,
                  dv->best,   dv->nmax, dv->cw,   dv->cab,   dv->cw2,    dv->cab2, dv->rab,
                  dv->core2,  dv->nx,   dv->w,    dv->rw,    dv->center, dv->x};
    for (void *q : ps)
        kern_pool_free(q);
    memset(dv, 0, sizeof *dv);
}

/* The round's bounds and screen: each row's estimated edge weighed in
 * FP64, each component's bound, the rows listed with their candidates'
 * bounds; *nr of them. */
template <class T>
static int ms_screen_steps(const kern_join_args *a, ms_dev &dv, double sc, bool promoted,
                           uint32_t *nr)
{
    const size_t n = a->n, d = a->d;
    const unsigned g = ms_blocks(n);
    const T *x = (const T *)dv.x;
    exact_bound b;
    exact_kern_bound(d, promoted, &b);
    f64_norm_kernel<T><<<g, MS_THREADS>>>(x, n, d, dv.center, sc, dv.nx, dv.nmax);
    KERN_CUDA(cudaGetLastError());
    ms_bound_kernel<T>
        <<<g, MS_THREADS>>>(x, n, d, dv.core2, dv.comp, MRNN_SKIPPED, dv.best, dv.w, dv.cw);
    KERN_CUDA(cudaGetLastError());
    ms_bound_ends_kernel<<<g, MS_THREADS>>>(n, dv.comp, dv.best, dv.w, dv.cw, dv.cab);
    KERN_CUDA(cudaGetLastError());
    ms_screen_kernel<<<g, MS_THREADS>>>(n, dv.comp, MRNN_SKIPPED, dv.core2, dv.best, dv.nx, dv.nmax,
                                        dv.cw, b, sc, dv.rows, dv.nrows, dv.u2);
    KERN_CUDA(cudaGetLastError());
    KERN_CUDA(cudaMemcpy(nr, dv.nrows, 4, cudaMemcpyDeviceToHost));
    return 0;
}

/* The listed rows decided in FP64: ncand candidates where the candidate
 * pass kept them all (ncand <= cand_cap), else every column of each row
 * (ms_exact_kernel); then each component's least. */
template <class T>
static int ms_exact_steps(const kern_join_args *a, ms_dev &dv, uint32_t nr,
                          unsigned long long ncand)
{
    const size_t n = a->n, d = a->d;
    const unsigned g = ms_blocks(n);
    const T *x = (const T *)dv.x;
    const bool by_cand = ncand <= dv.cand_cap;
    unsigned split = 1;
    size_t m = by_cand ? (size_t)ncand : 0;
    if (!by_cand && nr) {
        /* at least four blocks an SM: a few rows share the columns out */
        int sms = 0;
        KERN_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, a->device));
        const size_t rb = ((size_t)nr + MS_TR - 1) / MS_TR, ntile = (n + MS_TC - 1) / MS_TC;
        split = (unsigned)std::max((size_t)1,
                                   std::min({(4 * (size_t)sms + rb - 1) / rb, ntile, (size_t)256}));
        m = (size_t)nr * split;
    }
    if (m) {
        int rc = ms_alloc((void **)&dv.rw, m * 8, dv.bytes);
        if (rc == 0)
            rc = ms_alloc((void **)&dv.rab, m * 8, dv.bytes);
        if (rc)
            return rc;
        if (by_cand)
            ms_cand_kernel<T><<<ms_blocks(m), MS_THREADS>>>(x, d, dv.core2, dv.comp, dv.cand,
                                                            dv.ncand, dv.cw, dv.rw, dv.rab);
        else
            ms_exact_kernel<T><<<dim3((unsigned)((nr + MS_TR - 1) / MS_TR), split), MS_THREADS>>>(
                x, n, d, dv.core2, dv.comp, dv.rows, dv.nrows, dv.cw, dv.rw, dv.rab);
        KERN_CUDA(cudaGetLastError());
    }
    KERN_CUDA(cudaMemcpy(dv.cw2, dv.cw, n * 8, cudaMemcpyDeviceToDevice));
    KERN_CUDA(cudaMemcpy(dv.cab2, dv.cab, n * 8, cudaMemcpyDeviceToDevice));
    if (m) {
        const unsigned long long *cand = by_cand ? dv.cand : NULL;
        ms_fold_kernel<<<ms_blocks(m), MS_THREADS>>>(dv.comp, dv.rows, cand, m, split, dv.rw,
                                                     dv.cw2);
        KERN_CUDA(cudaGetLastError());
        ms_forget_kernel<<<g, MS_THREADS>>>(n, dv.cw, dv.cw2, dv.cab2);
        KERN_CUDA(cudaGetLastError());
        ms_fold_ends_kernel<<<ms_blocks(m), MS_THREADS>>>(dv.comp, dv.rows, cand, m, split, dv.rw,
                                                          dv.rab, dv.cw2, dv.cab2);
        KERN_CUDA(cudaGetLastError());
    }
    KERN_CUDA(cudaDeviceSynchronize());
    return 0;
}

/* One FASTED pass over every tile, not symmetric, in mode (the masked
 * nearest neighbour or its candidates); its record into r (the first's)
 * or added to it. */
static int ms_pass(const kern_join_args &a, ms_dev &dv, int mode, kern_join_result *r, bool first)
{
    ms_ctx c = {&dv, mode};
    kern_join_args pa = a;
    pa.mode = KJOIN_COUNT;
    pa.symmetric = 0;
    pa.counts = NULL;
    pa.pair_fn = NULL;
    pa.pair_dev = NULL;
    pa.hist = pa.hist_below = NULL;
    pa.hist_edges = NULL;
    pa.hist_nbins = 0;
    pa.mem_cap = a.mem_cap ? a.mem_cap - dv.bytes : 0;
    const fasted_post post = {&c, 4, 0.0, 0, NULL, NULL, ms_params};
    kern_join_result pr;
    const int rc = fasted_run(&pa, &pr, &post);
    if (first) {
        const double h2d = r->t_h2d;
        *r = pr;
        r->t_h2d += h2d;
    } else {
        r->t_h2d += pr.t_h2d;
        r->t_convert += pr.t_convert;
        r->t_prep += pr.t_prep;
        r->t_kernel += pr.t_kernel;
        r->t_d2h += pr.t_d2h;
        r->launches += pr.launches;
    }
    return rc;
}

extern "C" int kern_mst_round(const kern_join_args *a0, mst_round_io *io, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    io->rows_fp64 = 0;
    io->pass_s = io->fp64_s = 0;
    const size_t n = a0->n, d = a0->d;
    if (io->n != n || n < 2 || n >= ((size_t)1 << 31) || a0->q0 != 0 || a0->q1 != n || a0->rows ||
        a0->c0)
        return kern_fail(KERN_EINVAL, "hdbscan round: %zu rows of a dataset of %zu", io->n, n);
    if (a0->x_type < KERN_X_F64 || a0->x_type > KERN_X_U8)
        return kern_fail(KERN_ENOMEM, "hdbscan round: the data's type is not one the device reads");
    kern_join_args a = *a0;
    if (a.ndevices > 0) { /* one device: the list's first */
        a.device = a.devices[0];
        a.ndevices = 0;
    }
    const int ndev = kern_device_count();
    if (ndev <= 0)
        return KERN_ENODEV;
    if (a.device < 0 || a.device >= ndev)
        return kern_fail(KERN_ENODEV, "no CUDA device %d", a.device);
    KERN_CUDA(cudaSetDevice(a.device));
    /* the promoting kernel at large d, as exact's join (exact_kern_pass) */
    bool promoted = false;
    a.format = exact_kern_pass(&a, &promoted);
    const double sc = fasted_scale(&a, a.format);
    const double t0 = kern_now();

    ms_dev dv;
    memset(&dv, 0, sizeof dv);
    const size_t na = (n + 255) / 256 * 256 + 256; /* as the dataset's rows: tiles read past n */
    const size_t xbytes = n * d * a.x_bytes;
    dv.bytes = na * 20 + n * 80 + xbytes + d * 8 + 24;
    if (a.mem_cap && dv.bytes >= a.mem_cap)
        return kern_fail(KERN_ENOMEM, "hdbscan round: %.1f MB beyond the cap (set gpu-mem)",
                         (double)dv.bytes / 1e6);
    int rc = 0;
    std::vector<float> hc(na, 0.0f);
    std::vector<uint32_t> hk(na, MS_NONE);
    std::vector<unsigned long long> hw(n), hab(n);
    uint32_t nr = 0;
#define MS_TRY(call) KERN_CUDA_GOTO(call, out)
    {
        struct {
            void **p;
            size_t size;
        } al[] = {{(void **)&dv.core2f, na * 4},
                  {(void **)&dv.u2, na * 4},
                  {(void **)&dv.ncand, 8},
                  {(void **)&dv.comp, na * 4},
                  {(void **)&dv.best, na * 8},
                  {(void **)&dv.core2, n * 8},
                  {(void **)&dv.nx, n * 8},
                  {(void **)&dv.w, n * 8},
                  {(void **)&dv.cw, n * 8},
                  {(void **)&dv.cab, n * 8},
                  {(void **)&dv.cw2, n * 8},
                  {(void **)&dv.cab2, n * 8},
                  {(void **)&dv.rows, n * 4},
                  {(void **)&dv.nrows, 4},
                  {(void **)&dv.nmax, 8},
                  {(void **)&dv.x, xbytes},
                  {(void **)&dv.center, a.center ? d * 8 : 0}};
        for (size_t k = 0; k < sizeof al / sizeof *al; k++)
            if (al[k].size && (rc = ms_alloc(al[k].p, al[k].size, dv.bytes)) != 0)
                goto out;
    }
    /* Core distances in the pass's units rounded down to FP32 (a row can
     * only look lighter than it is: the screen stays sound). */
    for (size_t i = 0; i < n; i++) {
        const double v = io->core2[i] * sc * sc;
        float f = (float)v;
        if ((double)f > v)
            f = nextafterf(f, 0.0f);
        hc[i] = f;
        hk[i] = io->comp[i] == io->skip ? MRNN_SKIPPED : io->comp[i];
    }
    MS_TRY(cudaMemcpy(dv.core2f, hc.data(), na * 4, cudaMemcpyHostToDevice));
    MS_TRY(cudaMemcpy(dv.comp, hk.data(), na * 4, cudaMemcpyHostToDevice));
    MS_TRY(cudaMemcpy(dv.core2, io->core2, n * 8, cudaMemcpyHostToDevice));
    MS_TRY(cudaMemcpy(dv.x, a.x, xbytes, cudaMemcpyHostToDevice));
    if (a.center)
        MS_TRY(cudaMemcpy(dv.center, a.center, d * 8, cudaMemcpyHostToDevice));
    MS_TRY(cudaMemset(dv.best, 0xff, na * 8));
    ms_inf_kernel<<<ms_blocks(n), MS_THREADS>>>(dv.cw, n);
    MS_TRY(cudaGetLastError());
    MS_TRY(cudaMemset(dv.cab, 0xff, n * 8));
    MS_TRY(cudaMemset(dv.nrows, 0, 4));
    MS_TRY(cudaMemset(dv.nmax, 0, 8));
    r->t_h2d = kern_now() - t0;
    {
        const double tp = kern_now();
        rc = ms_pass(a, dv, FASTED_KD_MRNN, r, true);
        io->pass_s = kern_now() - tp;
        if (rc)
            goto out;
    }
    {
        const double tf = kern_now();
        unsigned long long ncand = 0;
        switch (a.x_type) {
        case KERN_X_F64:
            rc = ms_screen_steps<double>(&a, dv, sc, promoted, &nr);
            break;
        case KERN_X_F32:
            rc = ms_screen_steps<float>(&a, dv, sc, promoted, &nr);
            break;
        case KERN_X_F16:
            rc = ms_screen_steps<__half>(&a, dv, sc, promoted, &nr);
            break;
        default:
            rc = ms_screen_steps<uint8_t>(&a, dv, sc, promoted, &nr);
            break;
        }
        if (rc)
            goto out;
        /* The listed rows' candidates: a second pass where they are many
         * (a few rows: every column in FP64 costs less than a pass). */
        const double tc = kern_now();
        if (nr > MS_FEW_ROWS) {
            /* room for some 64 candidates a row, within an eighth of
             * what the device has free (more: every column instead) */
            size_t fr = 0, tot = 0;
            MS_TRY(kern_pool_meminfo(&fr, &tot));
            size_t cap = std::max((size_t)nr * 64, (size_t)1 << 22);
            cap = std::min(cap, fr / 8 / 8);
            if (a.mem_cap)
                cap = std::min(cap, a.mem_cap / 8 / 8);
            if (cap > dv.cand_cap) {
                kern_pool_free(dv.cand);
                dv.cand = NULL;
                dv.cand_cap = 0;
                if ((rc = ms_alloc((void **)&dv.cand, cap * 8, dv.bytes + cap * 8)) != 0)
                    goto out;
                dv.cand_cap = cap;
                dv.bytes += cap * 8;
            }
            MS_TRY(cudaMemset(dv.ncand, 0, 8));
            rc = ms_pass(a, dv, FASTED_KD_MRLIST, r, false);
            if (rc)
                goto out;
            MS_TRY(cudaMemcpy(&ncand, dv.ncand, 8, cudaMemcpyDeviceToHost));
        } else {
            ncand = ~0ull; /* every column */
        }
        const double te = kern_now();
        switch (a.x_type) {
        case KERN_X_F64:
            rc = ms_exact_steps<double>(&a, dv, nr, ncand);
            break;
        case KERN_X_F32:
            rc = ms_exact_steps<float>(&a, dv, nr, ncand);
            break;
        case KERN_X_F16:
            rc = ms_exact_steps<__half>(&a, dv, nr, ncand);
            break;
        default:
            rc = ms_exact_steps<uint8_t>(&a, dv, nr, ncand);
            break;
        }
        if (rc)
            goto out;
        if (kern_trace_on())
            fprintf(stderr,
                    "hdbscan device round: pass %.3f s; screen %.3f s, %u rows listed; "
                    "candidates pass %.3f s, %llu candidates%s; FP64 %.3f s\n",
                    io->pass_s, tc - tf, nr, te - tc, ncand == ~0ull ? 0ull : ncand,
                    ncand <= dv.cand_cap ? "" : " (every column instead)", kern_now() - te);
        io->rows_fp64 = nr;
        MS_TRY(cudaMemcpy(hw.data(), dv.cw2, n * 8, cudaMemcpyDeviceToHost));
        MS_TRY(cudaMemcpy(hab.data(), dv.cab2, n * 8, cudaMemcpyDeviceToHost));
        for (size_t c = 0; c < n; c++) {
            if (io->comp[c] != c || c == io->skip)
                continue;
            double w;
            memcpy(&w, &hw[c], 8);
            const bool some = hab[c] != ~0ull && w < INFINITY;
            io->best[c].w = some ? w : INFINITY;
            io->best[c].a = some ? (uint32_t)(hab[c] >> 32) : MS_NONE;
            io->best[c].b = some ? (uint32_t)hab[c] : MS_NONE;
        }
        io->fp64_s = kern_now() - tf;
        r->t_sink += io->fp64_s;
    }
out:
#undef MS_TRY
    r->mem_peak += dv.bytes;
    ms_free(&dv);
    cudaGetLastError();
    return rc;
}
