/* HDBSCAN*'s Borůvka round on the device (kern_mst_round, kernels.h): for
 * the components that search, each one's lightest mutual-reachability
 * edge to another component, exactly, with no pair leaving the device.
 * The smallest search (at least half the components, and as many more as
 * keep to n / MS_PARTIAL rows; never the largest), so a forest's many
 * single points cost a round their rows, not every row; where 3 to
 * MS_PAIR_MAX components are left, ms_pair_round finishes the tree in one
 * round instead (its comment).
 *
 *   pass       FASTED's kernels in the args' format (exact's FP16, its
 *              centre and scale; promoting at large d, exact_kern_pass,
 *              with the promoted bound) with the masked nearest-neighbour
 *              epilogue (epi_mrnn.cuh): each row's least estimate u_i of
 *              max(c_i, c_j, d2) over the columns of other components,
 *              and that column j_i. Not symmetric: the searching rows
 *              against every column (ms_pass: the rows in an order of the
 *              pass's own, the searching ones first).
 *   bound      each component C's edge (i, j_i) of least FP64 weight: a
 *              real edge out of C, so its weight T2 bounds C's lightest.
 *   screen     a row whose estimate exceeds T2 (scaled) by exact's error
 *              bound at T (kernels/exact_bound.h, the row's norm and the
 *              largest; a core distance is rounded down to FP32, so it
 *              can only look lighter) has every edge heavier than T2: it
 *              cannot hold C's lightest, nor tie it. A row with c_i > T2
 *              neither. The rest are listed.
 *   candidates where more than MS_FEW_ROWS rows are listed, a second
 *              pass over their rows alone lists each one's pairs within
 *              its bound (epi_mrnn.cuh, FASTED_KD_MRLIST).
 *   FP64       each candidate, or each listed row against every column of
 *              another component,
 *              in fp64's direct form in dimension order (the host's
 *              src/cluster/hdbscan_mst.c, cpu's: bit for bit), edges by
 *              (w, a, b); each component's least of them and its bound's.
 *
 * So the answer is the FP64 one whatever the pass's errors, as exact's
 * joins are; the pass only decides how few rows FP64 visits. Memory:
 * about 125 bytes a row, the candidates' buffer, the dataset as the host
 * holds it with its norms (kd_exact_open's kept copy), the pass's view in
 * its format and, in the pair round, 32 bytes a pair of components. One device
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
#include "f64_widen.cuh" /* f64_direct_d2 */
#include "tile_sched.h"  /* TS_GROUP: the scheduler's squares */
#include "epi_mrnn.cuh"  /* MRNN_SKIPPED */
#include "exact_kern.h"
#include "fasted_kdist_exact.cuh" /* kd_exact_open: the rows and norms, kept */
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
/* The pair round where the components are 3 to this many (its tables
 * hold this many squared), and their square at most n / MS_PAIR_ROWS:
 * its host steps cost some K^2 bound evaluations, more than the few
 * rounds they save where the rows are few and a round's pass is cheap. */
#define MS_PAIR_MAX 1024
#define MS_PAIR_ROWS 4
/* A round's searching rows: at least half the components, and beyond
 * them as many of the smallest as keep to n / MS_PARTIAL rows. */
#define MS_PARTIAL 8
#define MS_DECLINED 1 /* ms_pair_round: a round as before instead */

namespace
{

struct ms_dev {
    float *core2f, *u2;
    unsigned long long *cand, *ncand;
    size_t cand_cap;
    uint32_t *comp, *rows, *nrows;
    unsigned long long *best, *cw, *cab, *cw2, *cab2, *rab;
    double *core2, *w, *rw;
    /* The dataset's rows and their norms (centred and scaled as the pass
     * sees them), the largest: the device's kept copy (kd_exact_open),
     * shared with exact's k-distance and every round. */
    const void *x;
    const double *nx;
    unsigned long long *nmax;
    /* A pass's own order (ms_pass): run row v is the dataset's row
     * perm[v], the rows wanting an answer first; comp, core2f, u2 and
     * best by run row, the epilogue's. */
    uint32_t *perm, *rcomp;
    float *rcore2f, *ru2;
    unsigned long long *rbest;
    /* The pair round (ms_pair_round): npair components, the pair tables,
     * the list pass's work items and the kernel their tiles are for. */
    unsigned npair;
    unsigned *pmin;
    float *pbound;
    uint2 *items;
    size_t nitems;
    bool items_wg;
    size_t bytes;
};

struct ms_ctx {
    ms_dev *dv;
    int mode; /* FASTED_KD_MR* */
};

int ms_params(void *vc, kern_run *k, fasted_params *p, int use_wg)
{
    (void)k;
    const ms_ctx *c = (const ms_ctx *)vc;
    if (c->dv->items) {
        if ((use_wg != 0) != c->dv->items_wg)
            return kern_fail(KERN_EINVAL, "hdbscan round: the pass's kernel is not the one its "
                                          "work items are for");
        p->tiles = ts_table{(const uint32_t *)c->dv->items, c->dv->nitems};
    }
    p->kd.npair = c->dv->npair;
    p->kd.pmin = c->dv->pmin;
    p->kd.pbound = c->dv->pbound;
    p->mode = c->mode;
    p->kd.core2 = c->dv->rcore2f;
    p->kd.comp = c->dv->rcomp;
    p->kd.best = c->dv->rbest;
    p->kd.u2 = c->dv->ru2;
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

/* The pass's arrays in its order (run row v the dataset's perm[v]; rows
 * from n on padding): the epilogue's components, core distances and
 * bounds (u2 NULL: none, as a row that wants no candidates), and each
 * row's answer cleared. */
__global__ void ms_gather_kernel(size_t n, size_t na, const uint32_t *perm, const uint32_t *comp,
                                 const float *core2f, const float *u2, uint32_t *rcomp,
                                 float *rcore2f, float *ru2, unsigned long long *rbest)
{
    for (size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x; v < na;
         v += (size_t)gridDim.x * blockDim.x) {
        const bool in = v < n;
        const uint32_t i = in ? perm[v] : 0;
        rcomp[v] = in ? comp[i] : MRNN_PAD;
        rcore2f[v] = in ? core2f[i] : 0.0f;
        ru2[v] = in && u2 ? u2[i] : -1.0f;
        rbest[v] = ~0ull;
    }
}

/* The masked nearest neighbours back in the dataset's rows and columns. */
__global__ void ms_scatter_best_kernel(size_t n, const uint32_t *perm,
                                       const unsigned long long *rbest, unsigned long long *best)
{
    for (size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x; v < n;
         v += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long k = rbest[v];
        best[perm[v]] = k == ~0ull ? ~0ull : (k & 0xffffffff00000000ull) | perm[(uint32_t)k];
    }
}

/* The candidates' rows and columns back in the dataset's. */
__global__ void ms_map_cand_kernel(const uint32_t *perm, const unsigned long long *ncand,
                                   size_t cap, unsigned long long *cand)
{
    const size_t m = (size_t)*ncand < cap ? (size_t)*ncand : cap;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long k = cand[e];
        cand[e] = (unsigned long long)perm[k >> 32] << 32 | perm[(uint32_t)k];
    }
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
    void *ps[] = {dv->core2f,  dv->u2,    dv->cand,  dv->ncand, dv->comp,   dv->rows,
                  dv->nrows,   dv->best,  dv->cw,    dv->cab,   dv->cw2,    dv->cab2,
                  dv->rab,     dv->core2, dv->w,     dv->rw,    dv->perm,   dv->rcomp,
                  dv->rcore2f, dv->ru2,   dv->rbest, dv->pmin,  dv->pbound, dv->items};
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

/* One FASTED pass, not symmetric, in mode (the masked nearest neighbour
 * or its candidates) over the rows wanting an answer against every
 * column: want[i] marks them (dataset rows). The pass runs on a view of
 * the dataset (kern_join_args.base_n: its rows gathered on the device
 * from the slot an ordinary run converts, so every estimate is the one an
 * ordinary pass computes) in an order of its own, those rows first, and
 * stops its row tiles there: a round whose largest component holds most
 * rows, or whose candidates' rows are few, pays for its own rows alone.
 * Its answers come back in the dataset's rows (best; cand's entries). Its
 * record into r (the first's) or added to it. */
static size_t ms_order_want(const std::vector<uint8_t> &want, std::vector<uint32_t> &perm)
{
    const size_t n = want.size();
    size_t nw = 0;
    for (size_t i = 0; i < n; i++)
        if (want[i])
            perm[nw++] = (uint32_t)i;
    for (size_t i = 0, t = nw; i < n; i++)
        if (!want[i])
            perm[t++] = (uint32_t)i;
    return nw;
}

/* The pass over the view perm (the rows ms_order_want or the pair round
 * orders), its first nw rows asking. */
static int ms_pass(const kern_join_args &a, ms_dev &dv, int mode, const std::vector<uint32_t> &perm,
                   size_t nw, kern_join_result *r, bool first)
{
    const size_t n = a.n, na = (n + 255) / 256 * 256 + 256;
    if (nw == 0)
        return 0;
    KERN_CUDA(cudaMemcpy(dv.perm, perm.data(), n * 4, cudaMemcpyHostToDevice));
    const bool lists = mode == FASTED_KD_MRLIST || mode == FASTED_KD_MRPLIST;
    ms_gather_kernel<<<ms_blocks(na), MS_THREADS>>>(n, na, dv.perm, dv.comp, dv.core2f,
                                                    lists ? dv.u2 : NULL, dv.rcomp, dv.rcore2f,
                                                    dv.ru2, dv.rbest);
    KERN_CUDA(cudaGetLastError());
    ms_ctx c = {&dv, mode};
    kern_join_args pa = a;
    pa.mode = KJOIN_COUNT;
    pa.symmetric = 0;
    pa.q0 = 0;
    pa.q1 = nw;
    pa.base_n = n;
    pa.base_hash = a.hash;
    pa.rows = perm.data();
    pa.hash = a.hash ^ 0x6d7374206f726465ull; /* a view: no slot of its own */
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
    if (rc == 0 && mode == FASTED_KD_MRNN) {
        ms_scatter_best_kernel<<<ms_blocks(n), MS_THREADS>>>(n, dv.perm, dv.rbest, dv.best);
        KERN_CUDA(cudaGetLastError());
    } else if (rc == 0 && (mode == FASTED_KD_MRLIST || mode == FASTED_KD_MRPLIST)) {
        ms_map_cand_kernel<<<ms_blocks(dv.cand_cap), MS_THREADS>>>(dv.perm, dv.ncand, dv.cand_cap,
                                                                   dv.cand);
        KERN_CUDA(cudaGetLastError());
    }
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

/* The most components the pair round takes: MS_PAIR_MAX, or for tests
 * TCJOIN_MST_ROUNDS=N (at most MS_PAIR_MAX, *forced set): 0 makes every
 * round a whole Borůvka round (every component but the largest
 * searching) and no pair round; a small N sends the rounds through the
 * partial ones first; any N takes the pair round at N or fewer
 * components however few the rows (no MS_PAIR_ROWS rule), its pass one
 * group row a band (as a large set's bands). */
static size_t ms_pair_max(bool *forced)
{
    const char *e = getenv("TCJOIN_MST_ROUNDS");
    *forced = e && *e;
    if (!*forced)
        return MS_PAIR_MAX;
    const long v = strtol(e, NULL, 10);
    return v <= 0 ? 0 : std::min((size_t)v, (size_t)MS_PAIR_MAX);
}

/* Room for the candidates of rows listed rows: some 64 a row, within an
 * eighth of what the device has free (more: the caller's fallback). */
static int ms_cand_room(const kern_join_args &a, ms_dev &dv, size_t rows)
{
    size_t fr = 0, tot = 0;
    KERN_CUDA(kern_pool_meminfo(&fr, &tot));
    size_t cap = std::max(rows * 64, (size_t)1 << 22);
    cap = std::min(cap, fr / 8 / 8);
    if (a.mem_cap)
        cap = std::min(cap, a.mem_cap / 8 / 8);
    if (cap > dv.cand_cap) {
        kern_pool_free(dv.cand);
        dv.cand = NULL;
        dv.cand_cap = 0;
        int rc = ms_alloc((void **)&dv.cand, cap * 8, dv.bytes + cap * 8);
        if (rc)
            return rc;
        dv.cand_cap = cap;
        dv.bytes += cap * 8;
    }
    KERN_CUDA(cudaMemset(dv.ncand, 0, 8));
    return 0;
}

/* The pair round's candidates in FP64 (fp64's direct form, as
 * ms_cand_kernel): each candidate's weight where it is at most its pair
 * of components' upper bound plim (data units; negative: a pair left
 * out), else INFINITY, with its ends and its pair's slot. */
template <class T>
__global__ void ms_pair_cand_kernel(const T *x, size_t d, const double *core2, const uint32_t *cid,
                                    unsigned K, const unsigned long long *cand, size_t m,
                                    const double *plim, double *rw, unsigned long long *rab,
                                    uint32_t *rslot)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x) {
        const uint32_t i = (uint32_t)(cand[e] >> 32), j = (uint32_t)cand[e];
        const uint32_t ka = cid[i], kb = cid[j];
        rw[e] = INFINITY;
        rab[e] = ms_ab(i, j);
        rslot[e] = 0;
        if (ka == kb)
            continue;
        const uint32_t s = ka < kb ? ka * K + kb : kb * K + ka;
        const double lim = plim[s];
        if (!(lim >= 0))
            continue;
        const double d2 = f64_direct_d2(x, d, i, j, lim);
        const double v = ms_w(d2, core2[i], core2[j]);
        rw[e] = d2 > lim || v > lim ? INFINITY : v;
        rslot[e] = s;
    }
}

/* Each pair of components' least (w, a, b) over the candidates: the
 * weight first, then the ends at that weight. */
__global__ void ms_pair_fold_kernel(size_t m, const double *rw, const uint32_t *rslot,
                                    unsigned long long *pw)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x)
        if (rw[e] < INFINITY)
            atomicMin(&pw[rslot[e]], (unsigned long long)__double_as_longlong(rw[e]));
}

__global__ void ms_pair_ends_kernel(size_t m, const double *rw, const unsigned long long *rab,
                                    const uint32_t *rslot, const unsigned long long *pw,
                                    unsigned long long *pab)
{
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < m;
         e += (size_t)gridDim.x * blockDim.x)
        if (rw[e] < INFINITY && rw[e] == __longlong_as_double((long long)pw[rslot[e]]))
            atomicMin(&pab[rslot[e]], rab[e]);
}

template <class T>
static int ms_pair_fp64(const kern_join_args &a, ms_dev &dv, unsigned K, size_t m,
                        const double *plim, double *rw, unsigned long long *rab, uint32_t *rslot,
                        unsigned long long *pw, unsigned long long *pab)
{
    const unsigned g = ms_blocks(m);
    ms_pair_cand_kernel<T><<<g, MS_THREADS>>>((const T *)dv.x, a.d, dv.core2, dv.comp, K, dv.cand,
                                              m, plim, rw, rab, rslot);
    KERN_CUDA(cudaGetLastError());
    ms_pair_fold_kernel<<<g, MS_THREADS>>>(m, rw, rslot, pw);
    KERN_CUDA(cudaGetLastError());
    ms_pair_ends_kernel<<<g, MS_THREADS>>>(m, rw, rab, rslot, pw, pab);
    KERN_CUDA(cudaGetLastError());
    return 0;
}

/* A walk over a tree (adj: each node's neighbours and the edge's
 * payload) from root: fn(v, u, w) for each node v reached from u over
 * the edge of payload w, a parent before its children. */
template <class W, class Fn>
static void ms_walk(const std::vector<std::vector<std::pair<uint32_t, W>>> &adj, uint32_t root,
                    Fn fn)
{
    std::vector<uint8_t> seen(adj.size(), 0);
    std::vector<uint32_t> stack(1, root);
    seen[root] = 1;
    while (!stack.empty()) {
        const uint32_t u = stack.back();
        stack.pop_back();
        for (const auto &e : adj[u])
            if (!seen[e.first]) {
                seen[e.first] = 1;
                fn(e.first, u, e.second);
                stack.push_back(e.first);
            }
    }
}

/* Union-find over the K components of the pair round. */
static uint32_t ms_find(std::vector<uint32_t> &up, uint32_t x)
{
    while (up[x] != x)
        x = up[x] = up[up[x]];
    return x;
}

/* The most work items a pass of the pair round takes: its upper
 * triangle, some (n / 128)^2 / 2 tiles, goes in bands of group rows
 * within this (32 MB of items on the device and on the host), not in
 * one list that grows with n^2. */
#define MS_TRI_ITEMS ((size_t)1 << 22)

/* The pair pass's work items: the view's upper triangle by tiles, each
 * tile holding a pair i < j with i among the first nw rows. The table is
 * one entry for a pair of components whichever is the row, and every pair
 * it needs has a row among the first nw (the largest component's rows
 * come last, and pairs within it are none of the table's): half the
 * products of the rows against every column. In TS_GROUP squares, as
 * the scheduler walks its grid, so blocks running together share rows
 * and columns in L2: the group rows from *sr on whose items fit in cap
 * (one group row at least), *sr moved past them. */
static void ms_tri_items(size_t nw, size_t n, size_t bm, size_t bn, size_t *sr, size_t cap,
                         std::vector<uint2> &it)
{
    const size_t T = (nw + bm - 1) / bm, U = (n + bn - 1) / bn, G = TS_GROUP;
    it.clear();
    for (; *sr < T; *sr += G) {
        const size_t s = *sr, s1 = std::min(s + G, T);
        size_t cnt = 0;
        for (size_t bi = s; bi < s1; bi++)
            cnt += U - bi * bm / bn;
        if (!it.empty() && it.size() + cnt > cap)
            return;
        for (size_t sc = s * bm / bn / G * G; sc < U; sc += G)
            for (size_t bi = s; bi < s1; bi++)
                for (size_t bj = std::max(sc, bi * bm / bn); bj < std::min(sc + G, U); bj++)
                    it.push_back(make_uint2((unsigned)bi, (unsigned)bj));
    }
}

/* The work items into dv.items for the next pass (their kernel's tiles:
 * wg). */
static void ms_drop_items(ms_dev &dv)
{
    kern_pool_free(dv.items);
    dv.items = NULL;
    dv.nitems = 0;
}

static int ms_put_items(ms_dev &dv, const std::vector<uint2> &it, bool wg)
{
    ms_drop_items(dv);
    int rc = ms_alloc((void **)&dv.items, std::max(it.size(), (size_t)1) * sizeof(uint2), dv.bytes);
    if (rc)
        return rc;
    KERN_CUDA(cudaMemcpy(dv.items, it.data(), it.size() * sizeof(uint2), cudaMemcpyHostToDevice));
    dv.nitems = it.size();
    dv.items_wg = wg;
    return 0;
}

/* The rest of the tree at once, where the components are few (K of them,
 * roots[k] component k's root; the largest io->skip): the tree over the
 * components whose edge between two of them is their lightest, which with
 * the forest is the whole tree (Borůvka's rounds find the same edges).
 *
 *   pass     one pass over the upper triangle of every row but the
 *            largest component's against every column (ms_tri_items, in
 *            bands of MS_TRI_ITEMS tiles), in the order of their
 *            components (epi_mrnn.cuh, FASTED_KD_MRPAIR): each pair's
 *            least estimate E.
 *   bounds   the pair's lightest weight W (pass units) lies in [L, U]:
 *            every pair's estimate is at most its weight plus exact's
 *            bound at its distance, so (sqrt W + e)^2 + a >= E (e, a:
 *            exact_bound_delta's terms at the largest norm); the pair
 *            that gave E lies within exact_bound_within(E), its core
 *            distances at most E rounded up from FP32.
 *   prune    the spanning tree least by U: a pair whose L exceeds every U
 *            on its path in that tree weighs more than every edge of that
 *            cycle, so it is in no minimum spanning tree. The rest are
 *            kept.
 *   list     a second pass over the kept pairs' tiles alone (one
 *            component's rows against the other's columns) lists every
 *            pair whose estimate is at most U + exact's bound at U: every
 *            pair of weight at most U, the lightest among them.
 *   FP64     each candidate in fp64's direct form; each kept pair's least
 *            (w, a, b), and their tree (Kruskal's, by (w, a, b)), which
 *            io->best hands out as each component's edge towards the
 *            largest.
 *
 * The pass's bands hold at most band items (1: one group row a band).
 * MS_DECLINED (io untouched) where an estimate is not finite or the
 * candidates overflow their buffer. */
static int ms_pair_round(const kern_join_args &a, ms_dev &dv, mst_round_io *io,
                         const std::vector<uint32_t> &roots, const std::vector<uint32_t> &csz,
                         double sc, bool promoted, double nm, std::vector<uint32_t> &perm,
                         size_t band, kern_join_result *r)
{
    const size_t n = a.n, K = roots.size(), KK = K * K;
    const double tp = kern_now();
    std::vector<uint32_t> cidx(n), kid(n, MS_NONE), off(K + 1, 0);
    uint32_t big = 0;
    for (size_t k = 0; k < K; k++) {
        kid[roots[k]] = (uint32_t)k;
        if (roots[k] == io->skip)
            big = (uint32_t)k;
    }
    /* the rows by component, the largest's last */
    std::vector<uint32_t> place(K);
    {
        size_t o = 0;
        for (size_t k = 0; k < K; k++)
            if (k != big) {
                place[k] = (uint32_t)o;
                o += csz[roots[k]];
            }
        place[big] = (uint32_t)o;
        for (size_t k = 0; k < K; k++)
            off[k] = place[k];
    }
    for (size_t i = 0; i < n; i++) {
        const uint32_t k = kid[io->comp[i]];
        cidx[i] = k;
        perm[place[k]++] = (uint32_t)i;
    }
    KERN_CUDA(cudaMemcpy(dv.comp, cidx.data(), n * 4, cudaMemcpyHostToDevice));
    std::vector<unsigned> hmin(KK);
    std::vector<float> hbound(KK, -1.0f);
    std::vector<double> hlim(KK, -1.0);
    int rc = ms_alloc((void **)&dv.pmin, KK * 4, dv.bytes + KK * 8);
    if (rc == 0)
        rc = ms_alloc((void **)&dv.pbound, KK * 4, dv.bytes + KK * 8);
    if (rc)
        return rc;
    dv.bytes += KK * 8;
    dv.npair = (unsigned)K;
    KERN_CUDA(cudaMemset(dv.pmin, 0xff, KK * 4));
    const size_t nw = n - csz[roots[big]];
    /* the tiles of the kernel the passes run */
    size_t bm = 0, bn = 0;
    bool wg = false;
    if ((rc = exact_kern_tiles(&a, a.format, &bm, &bn, &wg)) != 0)
        return rc;
    std::vector<uint2> it;
    for (size_t sr = 0, T = (nw + bm - 1) / bm; sr < T;) {
        const bool first = sr == 0;
        ms_tri_items(nw, n, bm, bn, &sr, band, it);
        if ((rc = ms_put_items(dv, it, wg)) != 0)
            return rc;
        rc = ms_pass(a, dv, FASTED_KD_MRPAIR, perm, nw, r, first);
        ms_drop_items(dv);
        if (rc)
            return rc;
    }
    KERN_CUDA(cudaMemcpy(hmin.data(), dv.pmin, KK * 4, cudaMemcpyDeviceToHost));
    io->pass_s = kern_now() - tp;

    /* the bounds (pass units); a pair's estimate must be finite */
    const double tb = kern_now();
    exact_bound b;
    exact_kern_bound(a.d, promoted, &b);
    const double e = b.c_in * (2 * nm) + b.c_sub;
    const double ea = exact_bound_delta(&b, nm, nm, 0.0) - e * e; /* the term a */
    std::vector<double> lo(KK, 0.0), hi(KK, 0.0);
    for (uint32_t x = 0; x < K; x++)
        for (uint32_t y = x + 1; y < K; y++) {
            float E;
            memcpy(&E, &hmin[x * K + y], 4);
            if (!(E >= 0.0f && E < INFINITY))
                return MS_DECLINED;
            const double Ed = E;
            const double s = sqrt(std::max(0.0, Ed - ea)) - e;
            const double t = exact_bound_within(&b, nm, nm, Ed);
            lo[x * K + y] = s > 0 ? s * s * (1.0 - 0x1p-30) : 0.0;
            hi[x * K + y] = std::max(Ed * (1.0 + 0x1p-22) + 0x1p-148, t * t) * (1.0 + 0x1p-30);
        }
    /* the spanning tree least by U (Prim's over the dense table, O(K^2);
     * any spanning tree would prune soundly, the least prunes most), and
     * each pair's heaviest U on its path in it */
    std::vector<std::vector<std::pair<uint32_t, double>>> adj(K);
    {
        std::vector<double> key(K, INFINITY);
        std::vector<uint32_t> from(K, MS_NONE);
        std::vector<uint8_t> in(K, 0);
        key[big] = 0;
        for (size_t step = 0; step < K; step++) {
            uint32_t v = MS_NONE;
            for (uint32_t u = 0; u < K; u++)
                if (!in[u] && (v == MS_NONE || key[u] < key[v]))
                    v = u;
            in[v] = 1;
            if (from[v] != MS_NONE) {
                adj[v].push_back({from[v], key[v]});
                adj[from[v]].push_back({v, key[v]});
            }
            for (uint32_t u = 0; u < K; u++) {
                const double w = u < v ? hi[(size_t)u * K + v] : hi[(size_t)v * K + u];
                if (!in[u] && w < key[u]) {
                    key[u] = w;
                    from[u] = v;
                }
            }
        }
    }
    std::vector<uint32_t> up(K);
    std::vector<double> mp(K);
    size_t kept = 0;
    for (uint32_t s0 = 0; s0 < K; s0++) {
        mp[s0] = 0;
        ms_walk(adj, s0, [&](uint32_t v, uint32_t u, double w) { mp[v] = std::max(mp[u], w); });
        for (uint32_t y = s0 + 1; y < K; y++) {
            const size_t s = (size_t)s0 * K + y;
            if (lo[s] > mp[y])
                continue; /* heavier than its cycle's every edge */
            const double u = hi[s];
            const double bd = (u + exact_bound_delta(&b, nm, nm, sqrt(u))) * (1.0 + 0x1p-30);
            float f = (float)bd;
            if ((double)f < bd)
                f = nextafterf(f, INFINITY);
            hbound[s] = f;
            hlim[s] = u / (sc * sc) * (1.0 + 0x1p-40);
            kept++;
        }
    }
    /* Each kept pair's rows: one side's, against the other's columns. A
     * row's bound is the largest of its component's pairs (the pass lists
     * by the row; FP64 keeps each pair to its own), so each component
     * takes the pair to its parent in the tree by U, rooted at the
     * largest, and the pairs off that tree the side of fewer rows. */
    std::vector<uint32_t> parent(K, MS_NONE);
    ms_walk(adj, big, [&](uint32_t v, uint32_t u, double) { parent[v] = u; });
    std::vector<float> rowb(K, -1.0f);
    std::vector<uint32_t> side(KK, MS_NONE);
    for (uint32_t x = 0; x < K; x++)
        for (uint32_t y = x + 1; y < K; y++) {
            const size_t s = (size_t)x * K + y;
            if (hbound[s] < 0)
                continue;
            const uint32_t rs = parent[x] == y                   ? x
                                : parent[y] == x                 ? y
                                : x == big                       ? y
                                : y == big                       ? x
                                : csz[roots[x]] <= csz[roots[y]] ? x
                                                                 : y;
            side[s] = rs;
            rowb[rs] = std::max(rowb[rs], hbound[s]);
        }
    /* the list pass's items: each kept pair's row tiles against its column tiles; a row tile two
     * components share takes the union of their column ranges, once */
    struct rng {
        size_t r0, r1, c0, c1;
    };
    std::vector<rng> rs_rng;
    size_t nrows = 0;
    for (uint32_t x = 0; x < K; x++)
        for (uint32_t y = x + 1; y < K; y++) {
            if (hbound[(size_t)x * K + y] < 0)
                continue;
            const uint32_t rs = side[(size_t)x * K + y], cs = rs == x ? y : x;
            rs_rng.push_back({off[rs] / bm, (off[rs] + csz[roots[rs]] - 1) / bm, off[cs] / bn,
                              (off[cs] + csz[roots[cs]] - 1) / bn});
            nrows += csz[roots[rs]];
        }
    std::sort(rs_rng.begin(), rs_rng.end(), [](const rng &p, const rng &q) { return p.r0 < q.r0; });
    it.clear();
    if (!rs_rng.empty()) {
        std::vector<std::pair<size_t, size_t>> act;
        size_t q = 0, rmax = 0;
        for (const rng &g : rs_rng)
            rmax = std::max(rmax, g.r1);
        std::vector<size_t> live; /* ranges whose rows reach the tile */
        for (size_t t = rs_rng[0].r0; t <= rmax; t++) {
            while (q < rs_rng.size() && rs_rng[q].r0 <= t)
                live.push_back(q++);
            act.clear();
            size_t keep = 0;
            for (size_t g : live)
                if (rs_rng[g].r1 >= t) {
                    live[keep++] = g;
                    act.push_back({rs_rng[g].c0, rs_rng[g].c1});
                }
            live.resize(keep);
            std::sort(act.begin(), act.end());
            size_t next = 0; /* the first column tile not yet listed */
            for (const auto &c : act) {
                for (size_t tj = std::max(c.first, next); tj <= c.second; tj++)
                    it.push_back(make_uint2((unsigned)t, (unsigned)tj));
                next = std::max(next, c.second + 1);
            }
        }
    }
    const double tl = kern_now();
    if ((rc = ms_cand_room(a, dv, nrows)) != 0)
        return rc;
    if ((rc = ms_put_items(dv, it, wg)) != 0)
        return rc;
    KERN_CUDA(cudaMemcpy(dv.pbound, hbound.data(), KK * 4, cudaMemcpyHostToDevice));
    {
        std::vector<float> hu(n);
        for (size_t i = 0; i < n; i++)
            hu[i] = rowb[cidx[i]];
        KERN_CUDA(cudaMemcpy(dv.u2, hu.data(), n * 4, cudaMemcpyHostToDevice));
    }
    unsigned long long ncand = 0;
    if (!it.empty()) {
        rc = ms_pass(a, dv, FASTED_KD_MRPLIST, perm, n, r, false);
        ms_drop_items(dv);
        if (rc)
            return rc;
        KERN_CUDA(cudaMemcpy(&ncand, dv.ncand, 8, cudaMemcpyDeviceToHost));
    }
    ms_drop_items(dv);
    if (ncand > dv.cand_cap) {
        if (kern_trace_on())
            fprintf(stderr,
                    "hdbscan device pair round: %zu components, %llu candidates beyond %zu: "
                    "a round instead\n",
                    K, ncand, dv.cand_cap);
        return MS_DECLINED;
    }
    /* FP64 over the candidates: each kept pair's least (w, a, b) */
    const double tf = kern_now();
    const size_t m = (size_t)ncand;
    double *plim = NULL, *rw = NULL;
    unsigned long long *rab = NULL, *pw = NULL, *pab = NULL;
    uint32_t *rslot = NULL;
    std::vector<unsigned long long> hw(KK), hab(KK);
    struct {
        void **p;
        size_t size;
    } al[] = {{(void **)&plim, KK * 8},
              {(void **)&pw, KK * 8},
              {(void **)&pab, KK * 8},
              {(void **)&rw, std::max(m, (size_t)1) * 8},
              {(void **)&rab, std::max(m, (size_t)1) * 8},
              {(void **)&rslot, std::max(m, (size_t)1) * 4}};
    for (size_t k = 0; k < sizeof al / sizeof *al && rc == 0; k++)
        rc = ms_alloc(al[k].p, al[k].size, dv.bytes);
#define MS_PTRY(call) KERN_CUDA_GOTO(call, pout)
    if (rc)
        goto pout;
    MS_PTRY(cudaMemcpy(plim, hlim.data(), KK * 8, cudaMemcpyHostToDevice));
    ms_inf_kernel<<<ms_blocks(KK), MS_THREADS>>>(pw, KK);
    MS_PTRY(cudaGetLastError());
    MS_PTRY(cudaMemset(pab, 0xff, KK * 8));
    if (m) {
        switch (a.x_type) {
        case KERN_X_F64:
            rc = ms_pair_fp64<double>(a, dv, (unsigned)K, m, plim, rw, rab, rslot, pw, pab);
            break;
        case KERN_X_F32:
            rc = ms_pair_fp64<float>(a, dv, (unsigned)K, m, plim, rw, rab, rslot, pw, pab);
            break;
        case KERN_X_F16:
            rc = ms_pair_fp64<__half>(a, dv, (unsigned)K, m, plim, rw, rab, rslot, pw, pab);
            break;
        default:
            rc = ms_pair_fp64<uint8_t>(a, dv, (unsigned)K, m, plim, rw, rab, rslot, pw, pab);
            break;
        }
        if (rc)
            goto pout;
    }
    MS_PTRY(cudaMemcpy(hw.data(), pw, KK * 8, cudaMemcpyDeviceToHost));
    MS_PTRY(cudaMemcpy(hab.data(), pab, KK * 8, cudaMemcpyDeviceToHost));
    {
        /* the kept pairs' tree by (w, a, b), rooted at the largest */
        struct ed {
            double w;
            unsigned long long ab;
            uint32_t x, y;
        };
        std::vector<ed> es;
        for (uint32_t x = 0; x < K; x++)
            for (uint32_t y = x + 1; y < K; y++) {
                const size_t s = (size_t)x * K + y;
                if (hbound[s] < 0)
                    continue;
                double w;
                memcpy(&w, &hw[s], 8);
                if (!(w < INFINITY) || hab[s] == ~0ull) {
                    rc = kern_fail(KERN_EINVAL,
                                   "hdbscan round: components %u and %u kept with no candidate "
                                   "within their bound",
                                   roots[x], roots[y]);
                    goto pout;
                }
                es.push_back({w, hab[s], x, y});
            }
        std::sort(es.begin(), es.end(),
                  [](const ed &p, const ed &q) { return p.w != q.w ? p.w < q.w : p.ab < q.ab; });
        for (size_t k = 0; k < K; k++)
            up[k] = (uint32_t)k;
        std::vector<std::vector<std::pair<uint32_t, size_t>>> tadj(K);
        size_t nt = 0;
        for (size_t q = 0; q < es.size(); q++) {
            const uint32_t ra = ms_find(up, es[q].x), rb = ms_find(up, es[q].y);
            if (ra == rb)
                continue;
            up[ra] = rb;
            tadj[es[q].x].push_back({es[q].y, q});
            tadj[es[q].y].push_back({es[q].x, q});
            nt++;
        }
        if (nt + 1 != K) {
            rc = kern_fail(KERN_EINVAL,
                           "hdbscan round: the kept pairs of %zu components span %zu "
                           "edges",
                           K, nt);
            goto pout;
        }
        io->best[roots[big]] = {INFINITY, MS_NONE, MS_NONE};
        ms_walk(tadj, big, [&](uint32_t v, uint32_t, size_t e) {
            io->best[roots[v]] = {es[e].w, (uint32_t)(es[e].ab >> 32), (uint32_t)es[e].ab};
        });
    }
    io->rows_fp64 = m;
    io->fp64_s = kern_now() - tb;
    r->t_sink += io->fp64_s;
    if (kern_trace_on())
        fprintf(stderr,
                "hdbscan device pair round: %zu components; pass %.3f s; bounds %.3f s, %zu of "
                "%zu pairs kept; list pass %.3f s over %zu items, %llu candidates; FP64 %.3f s\n",
                K, io->pass_s, tl - tb, kept, K * (K - 1) / 2, tf - tl, it.size(), ncand,
                kern_now() - tf);
pout:
#undef MS_PTRY
    kern_pool_free(plim);
    kern_pool_free(rw);
    kern_pool_free(rab);
    kern_pool_free(pw);
    kern_pool_free(pab);
    kern_pool_free(rslot);
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
    if (!io->best)
        return 0; /* a probe: the rounds are the device's */
    /* the promoting kernel at large d, as exact's join (exact_kern_pass) */
    bool promoted = false;
    a.format = exact_kern_pass(&a, &promoted);
    const double sc = fasted_scale(&a, a.format);
    const double t0 = kern_now();

    ms_dev dv;
    memset(&dv, 0, sizeof dv);
    const size_t na = (n + 255) / 256 * 256 + 256; /* as the dataset's rows: tiles read past n */
    const size_t xbytes = n * d * a.x_bytes;
    kd_exact ex = {};
    dv.bytes = na * 40 + n * 76 + xbytes + n * 8 + 24;
    if (a.mem_cap && dv.bytes >= a.mem_cap)
        return kern_fail(KERN_ENOMEM, "hdbscan round: %.1f MB beyond the cap (set gpu-mem)",
                         (double)dv.bytes / 1e6);
    int rc = 0;
    std::vector<float> hc(na, 0.0f);
    std::vector<uint32_t> hk(na, MS_NONE);
    std::vector<unsigned long long> hw(n), hab(n);
    std::vector<uint8_t> want(n), srch(n, 0);
    std::vector<uint32_t> perm(n), csz(n, 0), roots;
    bool forced = false;
    const size_t pair_max = ms_pair_max(&forced);
    const bool whole = pair_max == 0;
    uint32_t nr = 0;
#define MS_TRY(call) KERN_CUDA_GOTO(call, out)
    {
        struct {
            void **p;
            size_t size;
        } al[] = {{(void **)&dv.core2f, na * 4}, {(void **)&dv.u2, na * 4},
                  {(void **)&dv.ncand, 8},       {(void **)&dv.comp, na * 4},
                  {(void **)&dv.best, na * 8},   {(void **)&dv.core2, n * 8},
                  {(void **)&dv.w, n * 8},       {(void **)&dv.cw, n * 8},
                  {(void **)&dv.cab, n * 8},     {(void **)&dv.cw2, n * 8},
                  {(void **)&dv.cab2, n * 8},    {(void **)&dv.rows, n * 4},
                  {(void **)&dv.nrows, 4},       {(void **)&dv.perm, n * 4},
                  {(void **)&dv.rcomp, na * 4},  {(void **)&dv.rcore2f, na * 4},
                  {(void **)&dv.ru2, na * 4},    {(void **)&dv.rbest, na * 8}};
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
        csz[io->comp[i]]++;
    }
    for (size_t c = 0; c < n; c++)
        if (io->comp[c] == c)
            roots.push_back((uint32_t)c);
    MS_TRY(cudaMemcpy(dv.core2f, hc.data(), na * 4, cudaMemcpyHostToDevice));
    MS_TRY(cudaMemcpy(dv.core2, io->core2, n * 8, cudaMemcpyHostToDevice));
    /* the rows as the host holds them and their norms: kept on the device
     * from the k-distance or the last round, else uploaded and kept */
    if ((rc = kd_exact_open(&a, sc, 1, promoted, &ex)) != 0)
        goto out;
    dv.x = ex.x;
    dv.nx = ex.nx;
    dv.nmax = ex.nmax;
    r->t_h2d = kern_now() - t0;
    /* Few components: the rest of the tree at once (ms_pair_round),
     * unless its candidates overflow (a round as below then). */
    if (!whole && roots.size() >= 3 && roots.size() <= pair_max &&
        (forced || roots.size() * roots.size() <= n / MS_PAIR_ROWS) && io->skip < n) {
        rc = ms_pair_round(a, dv, io, roots, csz, sc, promoted, ex.nm, perm,
                           forced ? 1 : MS_TRI_ITEMS, r);
        if (rc != MS_DECLINED)
            goto out;
        rc = 0;
    }
    {
        /* The components that search: every one but the largest, or (not
         * whole) the smallest first, at least half of them and as many
         * more as keep to n / MS_PARTIAL rows: where the forest leaves
         * many small components beside large ones, a round pays for their
         * rows alone, and the large ones wait until they are few. */
        size_t take = 0, cum = 0, K = roots.size();
        std::vector<uint32_t> ord(roots);
        if (!whole)
            std::sort(ord.begin(), ord.end(), [&](uint32_t x, uint32_t y) {
                return csz[x] != csz[y] ? csz[x] < csz[y] : x < y;
            });
        for (uint32_t c : ord) {
            if (c == io->skip)
                continue;
            if (!whole && take >= K / 2 && cum + csz[c] > n / MS_PARTIAL)
                break;
            srch[c] = 1;
            take++;
            cum += csz[c];
        }
        for (size_t i = 0; i < n; i++) {
            want[i] = srch[io->comp[i]];
            hk[i] = want[i] ? io->comp[i] : MRNN_SKIPPED;
        }
        MS_TRY(cudaMemcpy(dv.comp, hk.data(), na * 4, cudaMemcpyHostToDevice));
        if (kern_trace_on())
            fprintf(stderr, "hdbscan device round: %zu of %zu components search, %zu rows\n", take,
                    K, cum);
    }
    MS_TRY(cudaMemset(dv.best, 0xff, na * 8));
    ms_inf_kernel<<<ms_blocks(n), MS_THREADS>>>(dv.cw, n);
    MS_TRY(cudaGetLastError());
    MS_TRY(cudaMemset(dv.cab, 0xff, n * 8));
    MS_TRY(cudaMemset(dv.nrows, 0, 4));
    {
        const double tp = kern_now();
        rc = ms_pass(a, dv, FASTED_KD_MRNN, perm, ms_order_want(want, perm), r, true);
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
            if ((rc = ms_cand_room(a, dv, nr)) != 0)
                goto out;
            /* the listed rows alone ask (in the dataset's order) */
            MS_TRY(cudaMemcpy(perm.data(), dv.rows, (size_t)nr * 4, cudaMemcpyDeviceToHost));
            std::fill(want.begin(), want.end(), (uint8_t)0);
            for (uint32_t t = 0; t < nr; t++)
                want[perm[t]] = 1;
            rc = ms_pass(a, dv, FASTED_KD_MRLIST, perm, ms_order_want(want, perm), r, false);
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
            if (io->comp[c] != c)
                continue;
            if (!srch[c]) {
                io->best[c] = {INFINITY, MS_NONE, MS_NONE};
                continue;
            }
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
    kd_exact_close(&ex);
    cudaGetLastError();
    return rc;
}
