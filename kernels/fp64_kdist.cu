/* exact's k-distance by brute force in FP64 on the CUDA cores, for small
 * data (kernels.h, kern_fp64_kdist_brute): every query row against every
 * row, each d2 the FP64 direct form of fp64.cu and cpu (sum over k in
 * order of (a_k - b_k)^2, __dsub_rn/__dmul_rn/__dadd_rn, no contraction),
 * and the K-th smallest over the rows other than the query itself (by
 * index: a duplicate is a neighbour at 0): cpu's k-distances exactly.
 *
 * Why: below some 2^34 products (KERN_KDIST_BRUTE_WORK) the tensor-core
 * passes' fixed costs (a bound pass, a histogram pass, the rows' FP64
 * decision, several launches and copies each) and the FP64 grid's index
 * builds and doubling passes cost more than the products themselves
 * (docs/BENCHMARKS.md, "The ε-choosing commands on real data").
 *
 * The tiling is fp64.cu's join: a thread a query row, 128 a block, 16
 * candidate rows a tile in shared memory, DC dimensions at a time (DC the
 * dimension rounded up to 4, 8 or 16, else 32), a dimension at a time over
 * the tile's candidates (16 independent sums in flight, each in k's
 * order), each thread's K smallest in registers (kd_top.cuh), the
 * entering sums inserted by one copy of the insertion (unrolled per
 * candidate, the code outgrew the instruction cache and the warps waited
 * on instruction fetch most of their cycles); a tile stops after a chunk
 * where no thread's partial sums can still enter. The candidates are cut into slices (blockIdx.y)
 * so that small query sets fill the device; each slice's K smallest go to a scratch array and one
 * thread a row takes the K smallest of its slices'. Memory: the rows as FP64 (n d 8 bytes) and the
 * slices' K smallest (S nq K 8), never pairs. The FP64 rows are kept on the device for the next
 * call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f64_common.cuh"
#include "f64_widen.cuh"
#include "kd_top.cuh"
#include "kern_multi.cuh"
#include "kern_pool.cuh"
#include "kern_util.cuh"

#define KB_QT 128          /* query rows a block, one a thread */
#define KB_CT 16           /* candidate rows a tile: 16 sums in registers */
#define KB_SLICE_WORK 4096 /* a slice's rows times d, at least: a block's work worth its launch */

template <int DC, class Top>
__global__ void __launch_bounds__(KB_QT)
    kb_kernel(const double *__restrict__ x, size_t d, size_t n, size_t q0, size_t q1, size_t slice,
              int K, double *__restrict__ part, double *__restrict__ out)
{
    __shared__ double qs[DC][KB_QT];
    __shared__ double cs[KB_CT][DC + 1];
    const int t = threadIdx.x;
    const size_t qbase = q0 + (size_t)blockIdx.x * KB_QT, q = qbase + t;
    const bool qok = q < q1;
    const size_t ca = (size_t)blockIdx.y * slice, cb = ca + slice < n ? ca + slice : n;
    Top top;
    top.init(K);
    for (size_t c0 = ca; c0 < cb; c0 += KB_CT) {
        double acc[KB_CT];
#pragma unroll
        for (int j = 0; j < KB_CT; j++)
            acc[j] = 0.0;
        const double bound = top.kth(); /* fixed over the tile */
        for (size_t k0 = 0; k0 < d; k0 += DC) {
            __syncthreads();
            /* Coalesced loads; rows and dimensions out of range become
             * zeros, which add exactly nothing to a sum. */
            if (d > DC || c0 == ca)
                for (int idx = t; idx < KB_QT * DC; idx += KB_QT) {
                    const int r = idx / DC, kk = idx % DC;
                    const size_t row = qbase + r, k = k0 + kk;
                    qs[kk][r] = row < q1 && k < d ? x[row * d + k] : 0.0;
                }
            for (int idx = t; idx < KB_CT * DC; idx += KB_QT) {
                const int r = idx / DC, kk = idx % DC;
                const size_t row = c0 + r, k = k0 + kk;
                cs[r][kk] = row < cb && k < d ? x[row * d + k] : 0.0;
            }
            __syncthreads();
            /* dimension by dimension over the tile's candidates: KB_CT
             * independent sums in flight, each still in k's order; the
             * dimensions in a short loop, so the code stays small enough
             * for the instruction cache */
#pragma unroll 4
            for (int kk = 0; kk < DC; kk++) {
                const double qv = qs[kk][t];
#pragma unroll
                for (int j = 0; j < KB_CT; j++) {
                    const double u = __dsub_rn(qv, cs[j][kk]);
                    acc[j] = __dadd_rn(acc[j], __dmul_rn(u, u));
                }
            }
            if (k0 + DC >= d)
                break;
            /* more dimensions: on only while some sum can still enter
             * (partial sums only grow) */
            int alive = 0;
#pragma unroll
            for (int j = 0; j < KB_CT; j++)
                alive |= qok && c0 + j < cb && acc[j] <= bound;
            if (!__syncthreads_or(alive))
                break;
        }
        if (!qok)
            continue;
        /* the candidates that enter (a sum left partial is above the
         * bound, so above kth), then one copy of the insertion serving
         * each, its sum picked by a select chain (static indices) */
        unsigned enter = 0;
#pragma unroll
        for (int j = 0; j < KB_CT; j++)
            enter |= (unsigned)(c0 + j < cb && c0 + j != q && acc[j] < bound) << j;
#pragma unroll 1
        while (enter) {
            const int jj = __ffs(enter) - 1;
            enter &= enter - 1;
            double v = acc[0];
#pragma unroll
            for (int j = 1; j < KB_CT; j++)
                v = jj == j ? acc[j] : v;
            if (v < top.kth())
                top.add(v);
        }
    }
    if (!qok)
        return;
    if (out) { /* one slice: the answer */
        out[q - q0] = top.kth();
        return;
    }
    double *p = part + ((size_t)blockIdx.y * (q1 - q0) + (q - q0)) * (size_t)K;
    top.store(p);
}

/* One thread a query row: the K smallest of its slices' K smallest. */
template <class Top>
__global__ void kb_merge_kernel(const double *__restrict__ part, size_t nq, size_t S, int K,
                                double *__restrict__ out)
{
    const size_t r = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nq)
        return;
    Top top;
    top.init(K);
    for (size_t s = 0; s < S; s++) {
        const double *p = part + (s * nq + r) * (size_t)K;
        for (int i = 0; i < K; i++)
            if (p[i] < top.kth())
                top.add(p[i]);
    }
    out[r] = top.kth();
}

/* The rows as FP64, kept per device for the dataset (kb_release), so a
 * warm k-distance uploads nothing; under a cap (set gpu-mem) nothing is
 * kept. */
struct kb_slot {
    const void *host;
    size_t n, d;
    uint64_t hash;
    int xt;
    double *dx;
};
static kb_slot g_kb[KERN_DEV_SLOTS];

void kb_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++) {
        kern_pool_free(g_kb[d].dx);
        memset(&g_kb[d], 0, sizeof g_kb[d]);
    }
}

template <class T> __global__ void kb_widen_kernel(const T *x, size_t m, double *y)
{
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] = exact_w(x[i]);
}

/* a's rows as FP64 on its device: the kept copy, or uploaded in their own
 * type and widened there (*kept: whether dx is the slot's). */
static int kb_rows(const kern_join_args *a, cudaStream_t st, double **dx, bool *kept)
{
    kb_slot &s = g_kb[a->device];
    const size_t m = a->n * a->d;
    *kept = false;
    if (s.dx && s.host == a->x && s.n == a->n && s.d == a->d && s.hash == a->hash &&
        s.xt == a->x_type) {
        *dx = s.dx;
        *kept = true;
        return 0;
    }
    if (a->x_type < KERN_X_F64 || a->x_type > KERN_X_U8)
        return kern_fail(KERN_EINVAL,
                         "fp64 k-distance: the data's type is not one the device reads");
    const bool keep = a->mem_cap == 0;
    if (keep) {
        kern_pool_free(s.dx);
        memset(&s, 0, sizeof s);
    }
    void *raw = NULL;
    int rc = kern_pool_alloc((void **)dx, m * sizeof(double), "the k-distance's rows (FP64)", 0);
    if (rc == 0)
        rc = kern_pool_alloc(&raw, m * a->x_bytes, "the k-distance's rows", 0);
    if (rc) {
        kern_pool_free(*dx);
        *dx = NULL;
        return rc;
    }
    cudaError_t ce = cudaMemcpyAsync(raw, a->x, m * a->x_bytes, cudaMemcpyHostToDevice, st);
    const unsigned g = (unsigned)((m + 255) / 256 < 4096 ? (m + 255) / 256 : 4096);
    if (ce == cudaSuccess) {
        switch (a->x_type) {
        case KERN_X_F64:
            kb_widen_kernel<double><<<g, 256, 0, st>>>((const double *)raw, m, *dx);
            break;
        case KERN_X_F32:
            kb_widen_kernel<float><<<g, 256, 0, st>>>((const float *)raw, m, *dx);
            break;
        case KERN_X_F16:
            kb_widen_kernel<__half><<<g, 256, 0, st>>>((const __half *)raw, m, *dx);
            break;
        default:
            kb_widen_kernel<uint8_t><<<g, 256, 0, st>>>((const uint8_t *)raw, m, *dx);
            break;
        }
        ce = cudaGetLastError();
    }
    if (ce == cudaSuccess)
        ce = cudaStreamSynchronize(st);
    kern_pool_free(raw);
    if (ce != cudaSuccess) {
        kern_pool_free(*dx);
        *dx = NULL;
        KERN_CUDA(ce);
    }
    if (keep) {
        s.host = a->x;
        s.n = a->n;
        s.d = a->d;
        s.hash = a->hash;
        s.xt = a->x_type;
        s.dx = *dx;
        *kept = true;
    }
    return 0;
}

struct kb_args {
    const double *x;
    size_t d, n, q0, q1, slice, S;
    int K;
    double *part, *out;
};

template <int DC, class Top> static void kb_launch_top(const kb_args &g, cudaStream_t st)
{
    const dim3 grid((unsigned)((g.q1 - g.q0 + KB_QT - 1) / KB_QT), (unsigned)g.S);
    kb_kernel<DC, Top><<<grid, KB_QT, 0, st>>>(g.x, g.d, g.n, g.q0, g.q1, g.slice, g.K, g.part,
                                               g.S == 1 ? g.out : NULL);
    if (g.S > 1)
        kb_merge_kernel<Top><<<(unsigned)((g.q1 - g.q0 + 127) / 128), 128, 0, st>>>(
            g.part, g.q1 - g.q0, g.S, g.K, g.out);
}

template <int DC> static void kb_launch_dc(const kb_args &g, cudaStream_t st)
{
    if (g.K <= 4)
        kb_launch_top<DC, kd_top_reg<4>>(g, st);
    else if (g.K <= 8)
        kb_launch_top<DC, kd_top_reg<8>>(g, st);
    else if (g.K <= 16)
        kb_launch_top<DC, kd_top_reg<16>>(g, st);
    else
        kb_launch_top<DC, kd_top_heap>(g, st);
}

extern "C" int kern_fp64_kdist_brute(const kern_join_args *a0, int K, double *out,
                                     kern_join_result *res)
{
    memset(res, 0, sizeof *res);
    if (!a0->x || a0->n < 2 || a0->d == 0 || a0->c0 || a0->q0 >= a0->q1 || a0->q1 > a0->n)
        return kern_fail(KERN_EINVAL, "fp64 k-distance: bad run (n %zu, d %zu, rows [%zu, %zu))",
                         a0->n, a0->d, a0->q0, a0->q1);
    if (K < 1 || K > 256 || (size_t)K > a0->n - 1)
        return kern_fail(KERN_EINVAL, "fp64 k-distance: K=%d outside 1..min(256, n-1)", K);
    kern_join_args a = *a0;
    a.mode = KJOIN_COUNT;
    if (a.ndevices > 0) /* small work: the first device */
        a.device = a.devices[0];
    a.ndevices = 0;
    const size_t nq = a.q1 - a.q0, n = a.n, d = a.d;
    f64_run r;
    int rc = f64_begin(&r, &a, res, "fp64 k-distance", 0);
    if (rc)
        return rc;
    double *dx = NULL, *part = NULL, *dout = NULL;
    size_t part_bytes = 0;
    bool kept = false;
    kb_args g;
    memset(&g, 0, sizeof g);
    {
        const double t0 = kern_now();
        rc = kb_rows(&a, r.k.st, &dx, &kept);
        res->t_h2d += kern_now() - t0;
    }
    if (rc || (rc = f64_malloc(&r, (void **)&dout, nq * sizeof *dout, "the k-distances")) != 0)
        goto out;
    {
        /* Slices: about eight blocks an SM, each slice's rows times d at
         * least KB_SLICE_WORK (and a tile), within an eighth of the free
         * memory. */
        const size_t qb = (nq + KB_QT - 1) / KB_QT, want = 8 * (size_t)r.k.prop.multiProcessorCount;
        size_t minrows = (KB_SLICE_WORK + d - 1) / d;
        minrows = minrows > KB_CT ? minrows : KB_CT;
        size_t S = (want + qb - 1) / qb;
        S = S < n / minrows ? S : n / minrows;
        S = S < 64 ? S : 64;
        size_t fr = 0, tot = 0;
        KERN_CUDA_GOTO(kern_pool_meminfo(&fr, &tot), out);
        while (S > 1 && S * nq * (size_t)K * sizeof(double) > fr / 8)
            S /= 2;
        g.S = S < 1 ? 1 : S;
        g.slice = (n + g.S - 1) / g.S;
    }
    if (g.S > 1) {
        part_bytes = g.S * nq * (size_t)K * sizeof(double);
        if ((rc = f64_malloc(&r, (void **)&part, part_bytes, "the slices' k smallest")) != 0)
            goto out;
    }
    g.x = dx;
    g.d = d;
    g.n = n;
    g.q0 = a.q0;
    g.q1 = a.q1;
    g.K = K;
    g.part = part;
    g.out = dout;
    {
        const double t0 = kern_now();
        if (d <= 4)
            kb_launch_dc<4>(g, r.k.st);
        else if (d <= 8)
            kb_launch_dc<8>(g, r.k.st);
        else if (d <= 16)
            kb_launch_dc<16>(g, r.k.st);
        else
            kb_launch_dc<32>(g, r.k.st);
        KERN_CUDA_GOTO(cudaGetLastError(), out);
        KERN_CUDA_GOTO(cudaStreamSynchronize(r.k.st), out);
        res->t_kernel += kern_now() - t0;
        res->launches += g.S > 1 ? 2 : 1;
        const double t1 = kern_now();
        KERN_CUDA_GOTO(cudaMemcpy(out, dout, nq * sizeof *out, cudaMemcpyDeviceToHost), out);
        res->t_d2h += kern_now() - t1;
    }
out:
    res->d_padded = d;
    snprintf(res->variant, sizeof res->variant,
             "fp64 brute force, %zu slice%s, direct (a-b)^2, no FMA", g.S, g.S == 1 ? "" : "s");
    if (!kept)
        kern_pool_free(dx);
    kern_free(&r.k, dout, nq * sizeof *dout);
    kern_free(&r.k, part, part_bytes);
    f64_end(&r);
    return rc;
}
