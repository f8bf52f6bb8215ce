/* `exact`: FASTED's pass decides which pairs can be in the join, FP64
 * decides which are. The FASTED kernels run in pairs mode at eps^2 + delta,
 * delta the bound of kernels/exact_bound.h taken at the dataset's largest
 * norm (so every pair whose exact d2 is <= eps^2 has d~2 <= eps^2 + delta,
 * docs/ACCURACY.md (4)). In COUNT mode the pass's epilogue bounds each
 * candidate with its own norms at once (p.bnd, FP32 rounded up): it counts
 * the pairs sure to be in and lists only the band. Otherwise, after each
 * launch the candidates are bounded again with each pair's own norms:
 * those the bound decides are taken (PERPOINT, and HIST when the pair's
 * interval lies in one bin) or dropped without FP64; the band, and in
 * PAIRS mode every kept pair (it carries its FP64 distance), is computed
 * again on the GPU with the fp64 engine's
 * arithmetic (direct (a-b)^2, dimension order, no FMA contraction) and
 * kept when d2 <= eps^2. So every mode equals fp64's. Symmetric tiles,
 * cancel, progress and refills are FASTED's; a symmetric run refines each
 * unordered pair once.
 *
 * The rows stay on the device in the dataset's own element type (f32, f16
 * or u8 values widen to FP64 exactly, in registers: the refinement reads
 * 4, 2 or 1 bytes a value instead of 8, and its arithmetic is fp64's all
 * the same), with the FP64 norms, a slot per device (g_x64_dev); the host
 * scan (g_scan) too; both across runs of one dataset. Over a device
 * list (kern_multi_run) each device refines the candidates of its own
 * launches against its own FP64 rows: the decision per pair does not
 * depend on the device, so every split gives fp64's result. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cuda_fp16.h>

#include "fasted_run.cuh"
#include "kern_hist.cuh"
#include "kern_util.cuh"

struct exact_dev {
    const void *x; /* n x d, as the host holds it (element type xt, KERN_X_*) */
    int xt;
    const double *nrm; /* n: the FP64 norms of the rows as converted (centred), unscaled */
    const double *rho; /* n: each row's FP16 rounding, ||x^ - v||, scaled, rounded up */
    size_t d, q0;
    int mode, sym; /* sym: a symmetric run emits (i, j) and (j, i) for each pair */
    double lim2;   /* eps^2, HIST: the top edge */
    double lim2s;  /* lim2 in the FASTED pass's units (times scale^2) */
    double sc;     /* the pass's scale (a power of two) */
    double eps_s;  /* the bound's threshold, sqrt(lim2) scaled */
    exact_bound b;
    const double *edges;
    int nbins;
    unsigned long long *count, *counts, *hist, *nout;
    unsigned long long *nlist, *band, *refined; /* this launch's list; the run's totals */
    uint32_t *li, *lj;                          /* the pairs FP64 must decide or measure */
    uint32_t *pi, *pj;                          /* PAIRS: the kept pairs, compacted */
    double *pd;
};

/* Value k of x as FP64, exactly: the rows in their own element type. */
__device__ __forceinline__ double exact_x(const double *x, size_t k)
{
    return x[k];
}
__device__ __forceinline__ double exact_x(const float *x, size_t k)
{
    return (double)x[k];
}
__device__ __forceinline__ double exact_x(const __half *x, size_t k)
{
    return (double)__half2float(x[k]);
}
__device__ __forceinline__ double exact_x(const uint8_t *x, size_t k)
{
    return (double)x[k];
}

/* A kept pair's outputs, weighted: w = 2 stands for (i, j) and (j, i) of
 * a symmetric run. */
__device__ __forceinline__ void exact_keep(const exact_dev &o, uint32_t i, uint32_t j, double s,
                                           int w)
{
    switch (o.mode) {
    case KJOIN_PERPOINT:
        atomicAdd(&o.counts[i - o.q0], 1ull);
        if (w == 2)
            atomicAdd(&o.counts[j - o.q0], 1ull);
        break;
    case KJOIN_HIST:
        atomicAdd(&o.hist[kern_hist_slot(s, o.edges, o.nbins)], (unsigned long long)w);
        break;
    case KJOIN_PAIRS: {
        const unsigned long long p = atomicAdd(o.nout, (unsigned long long)w);
        o.pi[p] = i;
        o.pj[p] = j;
        o.pd[p] = s;
        if (w == 2) {
            o.pi[p + 1] = j;
            o.pj[p + 1] = i;
            o.pd[p + 1] = s;
        }
        break;
    }
    default:
        break;
    }
}

/* Step 1, a thread per candidate: the bound with the pair's own norms
 * (docs/ACCURACY.md (4)) throws out d~2 > eps^2 + delta_ij and decides
 * d~2 < eps^2 - delta_ij as in; COUNT and PERPOINT take those without
 * FP64, HIST too when [d~2 - delta, d~2 + delta] lies in one bin. The
 * rest (the band, and every kept pair in PAIRS mode, which carries FP64
 * distances) is listed for step 2. A symmetric run's mirrored entries
 * (i > j; fasted emits them beside (i, j) with the same d~2) are skipped
 * and (i, j) stands for both. */
__global__ void exact_classify_kernel(const uint32_t *__restrict__ ci,
                                      const uint32_t *__restrict__ cj, const float *__restrict__ cd,
                                      unsigned long long np, exact_dev o)
{
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    bool list = false, band = false;
    int sure = 0; /* weight of a pair decided in without FP64 */
    uint32_t i = 0, j = 0;
    if (t < np) {
        i = ci[t];
        j = cj[t];
        if (!(o.sym && i > j)) {
            const int w = o.sym && i != j ? 2 : 1;
            const double dt = fmax((double)cd[t], 0.0);
            const double delta = exact_bound_delta_rho(&o.b, o.nrm[i] * o.sc, o.nrm[j] * o.sc,
                                                       o.rho[i], o.rho[j], o.eps_s);
            if (dt <= o.lim2s + delta) {
                band = dt >= o.lim2s - delta;
                bool need = band || o.mode == KJOIN_PAIRS;
                if (!need && o.mode == KJOIN_HIST) {
                    /* In, so |d~2 - d2| <= delta: one bin for the whole
                     * interval decides it (the slot is monotone in d2). */
                    const double inv = 1.0 / (o.sc * o.sc); /* a power of two */
                    const int s0 = kern_hist_slot((dt - delta) * inv, o.edges, o.nbins);
                    const int s1 = kern_hist_slot((dt + delta) * inv, o.edges, o.nbins);
                    need = s0 != s1;
                    if (!need)
                        atomicAdd(&o.hist[s0], (unsigned long long)w);
                } else if (!need) {
                    sure = w;
                    if (o.mode == KJOIN_PERPOINT) {
                        atomicAdd(&o.counts[i - o.q0], 1ull);
                        if (w == 2)
                            atomicAdd(&o.counts[j - o.q0], 1ull);
                    }
                }
                list = need;
            }
        }
    }
    if (o.mode == KJOIN_COUNT) {
        unsigned long long c = sure;
        for (int m = 16; m; m >>= 1)
            c += __shfl_xor_sync(0xffffffffu, c, m);
        if (lane == 0 && c)
            atomicAdd(o.count, c);
    }
    const unsigned bm = __ballot_sync(0xffffffffu, band);
    if (lane == 0 && bm)
        atomicAdd(o.band, (unsigned long long)__popc(bm));
    const unsigned lm = __ballot_sync(0xffffffffu, list);
    if (!lm)
        return;
    unsigned long long base = 0;
    if (lane == 0) {
        base = atomicAdd(o.nlist, (unsigned long long)__popc(lm));
        atomicAdd(o.refined, (unsigned long long)__popc(lm));
    }
    base = __shfl_sync(0xffffffffu, base, 0);
    if (list) {
        const unsigned long long at = base + __popc(lm & ((1u << lane) - 1u));
        o.li[at] = i;
        o.lj[at] = j;
    }
}

/* Step 2, a warp per 32 listed pairs: d2 with the fp64 engine's arithmetic
 * (direct (a-b)^2, dimension order, no contraction), so the decision is
 * fp64's. The warp reads each pair's two rows coalesced, 32 dimensions at
 * a time, into shared memory as (a-b)^2; then each lane adds its own
 * pair's 32 terms in order. (A thread per pair walking its own rows with
 * 16-byte loads measured 1.25-1.8x slower on FP64 rows: every load of a
 * warp then touches 64 different lines.) */
#define EXACT_WARPS 4
template <class T>
__global__ void __launch_bounds__(EXACT_WARPS * 32)
    exact_fp64_kernel(const unsigned long long *__restrict__ nlist, exact_dev o)
{
    const T *__restrict__ x = (const T *)o.x;
    __shared__ double u2[EXACT_WARPS][32][33];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const unsigned long long n = *nlist;
    const unsigned long long stride = (unsigned long long)gridDim.x * EXACT_WARPS * 32;
    double(*u)[33] = u2[wid];
    for (unsigned long long b = ((unsigned long long)blockIdx.x * EXACT_WARPS + wid) * 32; b < n;
         b += stride) {
        const int m = n - b < 32 ? (int)(n - b) : 32;
        const uint32_t i = lane < m ? o.li[b + lane] : 0, j = lane < m ? o.lj[b + lane] : 0;
        double s = 0;
        for (size_t k0 = 0; k0 < o.d; k0 += 32) {
            const size_t k = k0 + lane;
            const int kn = o.d - k0 < 32 ? (int)(o.d - k0) : 32;
            /* Eight pairs' loads issued before any is used: the kernel
             * waits on memory, so it keeps many reads in flight. */
            for (int p0 = 0; p0 < m; p0 += 8) {
                double va[8], vb[8];
#pragma unroll
                for (int q = 0; q < 8; q++) {
                    const size_t ip = __shfl_sync(0xffffffffu, i, p0 + q),
                                 jp = __shfl_sync(0xffffffffu, j, p0 + q);
                    const bool ok = p0 + q < m && k < o.d;
                    va[q] = ok ? exact_x(x, ip * o.d + k) : 0.0;
                    vb[q] = ok ? exact_x(x, jp * o.d + k) : 0.0;
                }
#pragma unroll
                for (int q = 0; q < 8; q++) {
                    const double v = __dsub_rn(va[q], vb[q]);
                    u[p0 + q][lane] = __dmul_rn(v, v);
                }
            }
            __syncwarp();
            if (lane < m)
                for (int q = 0; q < kn; q++)
                    s = __dadd_rn(s, u[lane][q]);
            __syncwarp();
        }
        const bool keep = lane < m && s <= o.lim2;
        if (o.mode == KJOIN_COUNT) {
            unsigned long long c = keep ? (o.sym && i != j ? 2 : 1) : 0;
            for (int sh = 16; sh; sh >>= 1)
                c += __shfl_xor_sync(0xffffffffu, c, sh);
            if (lane == 0 && c)
                atomicAdd(o.count, c);
        } else if (keep) {
            exact_keep(o, i, j, s, o.sym && i != j ? 2 : 1);
        }
    }
}

/* Each row's FP16 rounding as the pass holds it: rho_i = ||x^_i - v_i||,
 * v_i the row centred and scaled in FP64 exactly as the upload forms it
 * (kernels/fasted.cu, fasted_to_float: (x - c) * scale, then correctly
 * rounded to FP16 through FP32 round-to-odd), x^_i the FP16 values of the
 * pass (X, rows of ld 16-bit units). A warp per row; the FP64 sum and root
 * are rounded up by 2^-40 relative, far above their own error. */
template <class T>
__global__ void exact_rho_kernel(const uint16_t *__restrict__ X, int ld, const T *__restrict__ x,
                                 const double *__restrict__ center, double sc, size_t n, size_t d,
                                 double *rho)
{
    const size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (r >= n)
        return;
    double acc = 0;
    for (size_t k = lane; k < d; k += 32) {
        const double xv = exact_x(x, r * d + k);
        const double v = (center ? __dsub_rn(xv, center[k]) : xv) * sc;
        const double h = (double)__half2float(__ushort_as_half(X[r * (size_t)ld + k]));
        const double u = h - v; /* exact: both are near each other (Sterbenz) or tiny */
        acc = __fma_rn(u, u, acc);
    }
    for (int m = 16; m; m >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, m);
    if (lane == 0)
        rho[r] = sqrt(acc) * (1.0 + 0x1p-40);
}

/* COUNT: each row's terms of delta_ij for the pass's epilogue
 * (fasted_int.cuh, p.bnd), in FP32 rounded up: x = rho + 2^-52 |v| (the
 * row's part of e), y = |v| + rho (its part of s), |v| the norm as
 * converted, scaled (exact_bound_delta_rho). */
__global__ void exact_bnd_kernel(const double *__restrict__ nrm, const double *__restrict__ rho,
                                 double sc, size_t n, float2 *bnd)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const double v = nrm[i] * sc, r = rho[i];
    bnd[i] = make_float2(__double2float_ru(r + 0x1p-52 * v), __double2float_ru(v + r));
}

/* The largest terms of each 256 rows (the rows past n are 0). */
__global__ void exact_bnd_max_kernel(const float2 *__restrict__ bnd, size_t nb, float2 *cmax)
{
    const size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb)
        return;
    float2 m = make_float2(0.0f, 0.0f);
    for (size_t i = b * 256; i < b * 256 + 256; i++) {
        const float2 v = bnd[i];
        m.x = fmaxf(m.x, v.x);
        m.y = fmaxf(m.y, v.y);
    }
    cmax[b] = m;
}

/* v in FP32, rounded up (down): the epilogue's coefficients and limits. */
static float exact_f32_up(double v)
{
    float f = (float)v;
    return (double)f < v ? nextafterf(f, INFINITY) : f;
}
static float exact_f32_down(double v)
{
    float f = (float)v;
    return (double)f > v ? nextafterf(f, -INFINITY) : f;
}

/* f(T *) for the rows' element type xt (KERN_X_*). */
template <class Fn> static void exact_by_type(int xt, const void *x, Fn f)
{
    switch (xt) {
    case KERN_X_F32:
        f((const float *)x);
        break;
    case KERN_X_F16:
        f((const __half *)x);
        break;
    case KERN_X_U8:
        f((const uint8_t *)x);
        break;
    default:
        f((const double *)x);
        break;
    }
}

/* The element type exact keeps a's rows in on the device: the dataset's
 * own where the kernels widen it (and its size agrees), else FP64 widened
 * on the host. */
static int exact_row_type(const kern_join_args *a)
{
    static const size_t bytes[] = {8, 4, 2, 1}; /* KERN_X_F64 .. KERN_X_U8 */
    if (a->x_type == KERN_X_F64)
        return a->x_to_f64 ? -1 : KERN_X_F64;
    if (a->x_type > KERN_X_F64 && a->x_type <= KERN_X_U8 && a->x_bytes == bytes[a->x_type])
        return a->x_type;
    return -1;
}

/* The host scan of the values FP16 will hold (largest |v|, each row's
 * norm, centred when the run centres), kept across runs of one dataset: a
 * sweep or a compare runs exact again and again on the same data. Done
 * once per run by the calling thread, before any device's thread reads it. */
static struct {
    const void *x;
    size_t n, d;
    uint64_t hash;
    int scanned;
    const double *center; /* the scan's */
    double vmax, nmax2;
    double *hn;        /* the scan's row norms (n) */
    unsigned long gen; /* a new scan's number: a device's norms say which they hold */
} g_scan;

/* The FP64 rows and norms on one device, kept across runs of one dataset:
 * one slot per device ordinal, touched only by the thread running on that
 * device (kernels/kern_multi.cuh). */
struct exact_x64 {
    const void *x; /* the host data the copy was made from */
    size_t n, d;
    uint64_t hash;
    void *dx; /* the rows, element type xt (KERN_X_*) */
    int xt;
    size_t bytes;
    double *dn;        /* the scan's norms on the device */
    unsigned long gen; /* the scan dn holds (0: none) */
};
static exact_x64 g_x64_dev[KERN_DEV_SLOTS];

static void exact_release_dev(int dev)
{
    exact_x64 &s = g_x64_dev[dev];
    if (s.dx || s.dn) {
        int cur = 0;
        cudaGetDevice(&cur);
        cudaSetDevice(dev);
        cudaFree(s.dx);
        cudaFree(s.dn);
        cudaSetDevice(cur);
    }
    memset(&s, 0, sizeof s);
    cudaGetLastError();
}

void exact_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        exact_release_dev(d);
    free(g_scan.hn);
    const unsigned long gen = g_scan.gen;
    memset(&g_scan, 0, sizeof g_scan);
    g_scan.gen = gen; /* numbers are never reused */
}

static int exact_same_scan(const kern_join_args *a)
{
    return g_scan.x == a->x && g_scan.n == a->n && g_scan.d == a->d && g_scan.hash == a->hash;
}

static int exact_same_data(const exact_x64 &s, const kern_join_args *a)
{
    const int xt = exact_row_type(a);
    return s.x == a->x && s.n == a->n && s.d == a->d && s.hash == a->hash &&
           s.xt == (xt < 0 ? KERN_X_F64 : xt);
}

struct exact_ctx {
    const kern_join_args *a;
    exact_dev o;
    int promoted;      /* the pass runs kern_fmt_fp16x's promoting wgmma kernel */
    const uint16_t *X; /* the pass's FP16 rows (its params) */
    int ld;
    double *rho, *center;      /* device: rho (n), the centre (d) */
    fasted_params *p;          /* the pass's parameters (COUNT: the epilogue's band) */
    float2 *bnd;               /* device, COUNT: each row's bound terms for the epilogue */
    double nmax, lim2sc;       /* the largest norm and lim2, scaled: the pass threshold's inputs */
    size_t cap;                /* the list's and the compaction buffers' pairs */
    unsigned long long listed; /* candidates the pass handed to the classify */
    cudaEvent_t ev[2];         /* around each launch's refinement: kernel time */
    int ready;
};

static int exact_noop_pairs(void *, size_t, const uint32_t *, const uint32_t *, const double *)
{
    return 0;
}

/* Before the first launch: the FP64 data, the norms and the outputs, on
 * the run's device and budget (before the pair buffers, which shrink to
 * fit). */
static int exact_setup(exact_ctx *c, kern_run *k)
{
    const kern_join_args *a = c->a;
    exact_dev &o = c->o;
    double t0 = kern_now();
    int rc;
    const int xt = exact_row_type(a);
    const size_t vb = xt < 0 ? sizeof(double) : a->x_bytes;
    const size_t bytes = a->n * a->d * vb, nbytes = a->n * sizeof(double);
    exact_x64 &g_x64 = g_x64_dev[a->device];
    if (g_x64.dx && exact_same_data(g_x64, a)) {
        if ((rc = kern_charge(k, g_x64.bytes, "the exact rows")))
            return rc;
    } else {
        exact_release_dev(a->device);
        if ((rc = kern_malloc(k, &g_x64.dx, bytes, "the exact rows")) ||
            (rc = kern_malloc(k, (void **)&g_x64.dn, nbytes, "the exact rows (norms)")))
            return rc;
        if (xt >= 0) {
            /* As the host holds them: the kernels widen each value (a
             * cross run's rows in their runs, its padding zeros). */
            for (size_t i0 = 0; i0 < a->n;) {
                const void *src;
                const size_t m = kern_rows_span(a, i0, a->n - i0, &src);
                char *dst = (char *)g_x64.dx + i0 * a->d * vb;
                if (src)
                    KERN_CUDA(cudaMemcpy(dst, src, m * a->d * vb, cudaMemcpyHostToDevice));
                else
                    KERN_CUDA(cudaMemset(dst, 0, m * a->d * vb));
                i0 += m;
            }
        } else {
            /* Widened to FP64 in 4 MB blocks of rows: no host FP64 copy. */
            const size_t blk = std::max((size_t)1, ((size_t)1 << 19) / a->d);
            std::vector<double> hb(std::min(blk, a->n) * a->d);
            for (size_t i0 = 0; i0 < a->n; i0 += blk) {
                const size_t m = std::min(blk, a->n - i0);
                kern_rows_f64(a, i0, m, hb.data());
                KERN_CUDA(cudaMemcpy((double *)g_x64.dx + i0 * a->d, hb.data(),
                                     m * a->d * sizeof(double), cudaMemcpyHostToDevice));
            }
        }
        g_x64.xt = xt < 0 ? KERN_X_F64 : xt;
        g_x64.x = a->x;
        g_x64.n = a->n;
        g_x64.d = a->d;
        g_x64.hash = a->hash;
        g_x64.bytes = bytes + nbytes;
    }
    if (g_x64.gen != g_scan.gen) {
        KERN_CUDA(cudaMemcpy(g_x64.dn, g_scan.hn, nbytes, cudaMemcpyHostToDevice));
        g_x64.gen = g_scan.gen;
    }
    o.x = g_x64.dx;
    o.xt = g_x64.xt;
    o.nrm = g_x64.dn;
    /* The rows' FP16 rounding, from the pass's own values. */
    if ((rc = kern_malloc(k, (void **)&c->rho, a->n * sizeof(double), "the rows' rounding")))
        return rc;
    if (a->center) {
        if ((rc = kern_malloc(k, (void **)&c->center, a->d * sizeof(double), "the centre")))
            return rc;
        KERN_CUDA(cudaMemcpy(c->center, a->center, a->d * sizeof(double), cudaMemcpyHostToDevice));
    }
    {
        const unsigned threads = 256, rows = threads / 32;
        exact_by_type(o.xt, o.x, [&](auto x) {
            exact_rho_kernel<<<(unsigned)((a->n + rows - 1) / rows), threads, 0, k->st>>>(
                c->X, c->ld, x, c->center, o.sc, a->n, a->d, c->rho);
        });
        KERN_LAUNCH_CHECK("exact_rho_kernel");
    }
    o.rho = c->rho;
    if ((rc = kern_malloc(k, (void **)&o.count, 4 * sizeof(unsigned long long), "the count")))
        return rc;
    KERN_CUDA(cudaMemset(o.count, 0, 4 * sizeof(unsigned long long)));
    if (a->mode == KJOIN_COUNT && c->p) {
        /* The epilogue counts the pairs its bound puts in and lists only
         * the band (rounded up, so it is never narrower than the FP64
         * bound's). The other modes list every candidate: their pairs
         * carry per-point counts, bins or FP64 distances. */
        /* Rows as the pass pads them (fasted.cu's n_alloc), 0 past n. */
        const size_t nb = (a->n + 255) / 256 + 1, rows = nb * 256;
        if ((rc = kern_malloc(k, (void **)&c->bnd, (rows + nb) * sizeof(float2),
                              "the rows' bounds")))
            return rc;
        KERN_CUDA(cudaMemsetAsync(c->bnd, 0, rows * sizeof(float2), k->st));
        exact_bnd_kernel<<<(unsigned)((a->n + 255) / 256), 256, 0, k->st>>>(o.nrm, c->rho, o.sc,
                                                                            a->n, c->bnd);
        KERN_LAUNCH_CHECK("exact_bnd_kernel");
        exact_bnd_max_kernel<<<(unsigned)((nb + 127) / 128), 128, 0, k->st>>>(c->bnd, nb,
                                                                              c->bnd + rows);
        KERN_LAUNCH_CHECK("exact_bnd_max_kernel");
        fasted_params *p = c->p;
        p->bnd = c->bnd;
        p->bnd_cmax = c->bnd + rows;
        p->bnd_k1 = exact_f32_up(o.b.safety * 2.0 * o.eps_s);
        p->bnd_k2 = exact_f32_up(o.b.safety);
        p->bnd_k3 = exact_f32_up(o.b.safety * o.b.c_acc);
        p->bnd_lo = exact_f32_down(o.lim2s);
        p->bnd_hi = exact_f32_up(o.lim2s);
        p->bnd_count = o.count;
    }
    o.nlist = o.count + 1;
    o.band = o.count + 2;
    o.refined = o.count + 3;
    if (a->mode == KJOIN_PERPOINT) {
        const size_t b = (kern_count_rows(a) + 1) * sizeof(unsigned long long);
        if ((rc = kern_malloc(k, (void **)&o.counts, b, "the per-point counts")))
            return rc;
        KERN_CUDA(cudaMemset(o.counts, 0, b));
    } else if (a->mode == KJOIN_HIST) {
        const size_t nb = a->hist_nbins;
        if ((rc = kern_malloc(k, (void **)&o.edges, (nb + 1) * sizeof(double), "the histogram")) ||
            (rc = kern_malloc(k, (void **)&o.hist, (nb + 1) * 8, "the histogram")))
            return rc;
        KERN_CUDA(cudaMemcpy((void *)o.edges, a->hist_edges, (nb + 1) * sizeof(double),
                             cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMemset(o.hist, 0, (nb + 1) * 8));
    } else if (a->mode == KJOIN_PAIRS) {
        if ((rc = kern_malloc(k, (void **)&o.nout, 8, "the refined pairs")))
            return rc;
    }
    k->r->t_h2d += kern_now() - t0;
    c->ready = 1;
    return 0;
}

/* The list and the compacted pairs, once the pair buffer's size is known
 * (kern_drive left room for them: extra_per_pair). */
static int exact_list_alloc(exact_ctx *c, kern_run *k)
{
    exact_dev &o = c->o;
    c->cap = k->cap;
    int rc;
    if ((rc = kern_malloc(k, (void **)&o.li, c->cap * 4, "the refined pairs")) ||
        (rc = kern_malloc(k, (void **)&o.lj, c->cap * 4, "the refined pairs")))
        return rc;
    if (c->a->mode == KJOIN_PAIRS &&
        ((rc = kern_malloc(k, (void **)&o.pi, c->cap * 4, "the refined pairs")) ||
         (rc = kern_malloc(k, (void **)&o.pj, c->cap * 4, "the refined pairs")) ||
         (rc = kern_malloc(k, (void **)&o.pd, c->cap * 8, "the refined pairs"))))
        return rc;
    return 0;
}

static int exact_setup_cb(void *vc, kern_run *k)
{
    return exact_setup((exact_ctx *)vc, k);
}

/* The kernel is chosen: without wgmma (an older GPU, a teaching switch)
 * fp16x runs fp16's unpromoted mma.sync kernels, so the bound and the
 * pass's threshold go back to the unpromoted ones. */
static int exact_params(void *vc, kern_run *, fasted_params *p, int use_wg)
{
    exact_ctx *c = (exact_ctx *)vc;
    c->X = p->X;
    c->ld = p->ld;
    c->p = p;
    if (!c->promoted || use_wg)
        return 0;
    c->promoted = 0;
    exact_bound_init(&c->o.b, c->a->d);
    const double t = c->lim2sc + exact_bound_delta(&c->o.b, c->nmax, c->nmax, c->o.eps_s);
    p->eps2 = (float)t;
    if ((double)p->eps2 < t)
        p->eps2 = nextafterf(p->eps2, INFINITY);
    return 0;
}

static int exact_refine(void *vc, kern_run *k, kern_step *s)
{
    exact_ctx *c = (exact_ctx *)vc;
    exact_dev &o = c->o;
    int rc;
    if (!o.li && (rc = exact_list_alloc(c, k)) != 0)
        return rc;
    const unsigned long long np = s->np;
    c->listed += np;
    /* A symmetric run's pairs come in mirrored twos: its kept pairs fit
     * the compaction buffer as the candidates fit theirs. */
    o.sym = k->r->symmetric;
    KERN_CUDA(cudaMemsetAsync(o.nlist, 0, 8, k->st));
    if (c->a->mode == KJOIN_PAIRS)
        KERN_CUDA(cudaMemsetAsync(o.nout, 0, 8, k->st));
    if (np) {
        /* The refinement is the engine's kernel work as much as the pass
         * (kern_drive times the pass's launch alone). */
        if (!c->ev[0] && (cudaEventCreate(&c->ev[0]) != cudaSuccess ||
                          cudaEventCreate(&c->ev[1]) != cudaSuccess))
            return kern_fail(KERN_EGPU, "cudaEventCreate failed (the refinement's timer)");
        KERN_CUDA(cudaEventRecord(c->ev[0], k->st));
        const unsigned threads = 256;
        exact_classify_kernel<<<(unsigned)((np + threads - 1) / threads), threads, 0, k->st>>>(
            k->pi, k->pj, (const float *)k->pd, np, o);
        KERN_LAUNCH_CHECK("exact_classify_kernel");
        int sms = 0;
        KERN_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->a->device));
        const unsigned long long want = (np + EXACT_WARPS * 32 - 1) / (EXACT_WARPS * 32);
        const unsigned blocks = (unsigned)(want < (unsigned long long)sms * 16 ? want : sms * 16);
        exact_by_type(o.xt, o.x, [&](auto x) {
            exact_fp64_kernel<std::remove_const_t<std::remove_pointer_t<decltype(x)>>>
                <<<blocks, EXACT_WARPS * 32, 0, k->st>>>(o.nlist, o);
        });
        KERN_LAUNCH_CHECK("exact_fp64_kernel");
        KERN_CUDA(cudaEventRecord(c->ev[1], k->st));
        KERN_CUDA(cudaEventSynchronize(c->ev[1]));
        k->r->t_kernel += kern_event_s(c->ev[0], c->ev[1]);
    }
    s->np = 0;
    if (c->a->mode == KJOIN_PAIRS) {
        unsigned long long kept = 0;
        KERN_CUDA(cudaMemcpyAsync(&kept, o.nout, 8, cudaMemcpyDeviceToHost, k->st));
        KERN_CUDA(cudaStreamSynchronize(k->st));
        s->np = kept;
        s->pi = o.pi;
        s->pj = o.pj;
        s->pd = o.pd;
    }
    return 0;
}

static void exact_free(exact_ctx *c)
{
    cudaFree(c->rho);
    cudaFree(c->center);
    cudaFree(c->bnd);
    cudaFree(c->o.count);
    cudaFree(c->o.counts);
    cudaFree((void *)c->o.edges);
    cudaFree(c->o.hist);
    cudaFree(c->o.li);
    cudaFree(c->o.lj);
    cudaFree(c->o.pi);
    cudaFree(c->o.pj);
    cudaFree(c->o.pd);
    cudaFree(c->o.nout);
    for (int e = 0; e < 2; e++)
        if (c->ev[e])
            cudaEventDestroy(c->ev[e]);
    cudaGetLastError();
}

/* Copy the device accumulators into the caller's outputs. */
static int exact_fetch(exact_ctx *c, kern_join_result *r)
{
    const kern_join_args *a = c->a;
    double t0 = kern_now();
    unsigned long long v[4] = {0, 0, 0, 0};
    if (c->ready)
        KERN_CUDA(cudaMemcpy(v, c->o.count, sizeof v, cudaMemcpyDeviceToHost));
    r->band = v[2];
    r->refined = v[3];
    r->listed = c->listed;
    if (a->mode == KJOIN_COUNT) {
        r->pairs = v[0];
    } else if (a->mode == KJOIN_PERPOINT) {
        const size_t nq = kern_count_rows(a);
        if (c->ready && nq)
            KERN_CUDA(cudaMemcpy(a->counts, c->o.counts, nq * 8, cudaMemcpyDeviceToHost));
        else
            memset(a->counts, 0, nq * 8);
        r->pairs = 0;
        for (size_t q = 0; q < nq; q++)
            r->pairs += a->counts[q];
    } else if (a->mode == KJOIN_HIST) {
        const size_t nb = a->hist_nbins;
        unsigned long long *h = (unsigned long long *)calloc(nb + 1, 8);
        if (!h)
            return kern_fail(KERN_ENOMEM, "out of host memory for the histogram");
        if (c->ready) {
            cudaError_t e = cudaMemcpy(h, c->o.hist, (nb + 1) * 8, cudaMemcpyDeviceToHost);
            if (e != cudaSuccess) {
                free(h);
                return kern_cuda_fail(e, "cudaMemcpy(hist)", __FILE__, __LINE__);
            }
        }
        *a->hist_below = h[0];
        r->pairs = h[0];
        for (size_t b = 0; b < nb; b++) {
            a->hist[b] = h[b + 1];
            r->pairs += h[b + 1];
        }
        free(h);
    }
    r->t_d2h += kern_now() - t0;
    return 0;
}

/* Rows [r0, r1) of the scan: each row's norm into hn, the largest |v|
 * and squared norm into *vm, *nm2. Rows are widened a block at a time. */
static void exact_scan_rows(const kern_join_args *a, size_t r0, size_t r1, double *hn, double *vm,
                            double *nm2)
{
    const size_t d = a->d, blk = std::max((size_t)1, ((size_t)1 << 13) / d);
    std::vector<double> buf(std::min(blk, r1 - r0) * d);
    double m = 0, e2 = 0;
    for (size_t i0 = r0; i0 < r1; i0 += blk) {
        const size_t rows = std::min(blk, r1 - i0);
        kern_rows_f64(a, i0, rows, buf.data());
        for (size_t i = 0; i < rows; i++) {
            const double *xr = buf.data() + i * d;
            double e = 0;
            for (size_t k = 0; k < d; k++) {
                const double v = a->center ? xr[k] - a->center[k] : xr[k];
                /* A value that is not finite (Inf, or NaN from centring
                 * an Inf column) leaves no bound: vmax Inf refuses it. */
                m = isfinite(v) ? fmax(m, fabs(v)) : INFINITY;
                e += v * v;
            }
            hn[i0 + i] = sqrt(e);
            e2 = fmax(e2, e);
        }
    }
    *vm = m;
    *nm2 = e2;
}

/* FP16 must hold the data as converted (centred when a->center); the
 * bound is taken at the largest norm of what is converted. Scanned once per
 * dataset and centring, by host threads (a streamed run scans each of its
 * chunk runs' rows: kern_stream_run). */
static int exact_scan(const kern_join_args *a)
{
    if (!(g_scan.scanned && exact_same_scan(a) && g_scan.center == a->center)) {
        if (!exact_same_scan(a))
            exact_release();
        double *hn = (double *)realloc(g_scan.hn, a->n * sizeof(double));
        if (!hn)
            return kern_fail(KERN_ENOMEM, "exact: out of host memory for %zu row norms", a->n);
        g_scan.hn = hn;
        g_scan.gen++; /* the devices' norms are stale */
        /* The maxima do not depend on the split: the same bound on any
         * host. */
        std::vector<double> vms(16, 0.0), nms(16, 0.0);
        kern_par_rows(a->n, a->d, [&](unsigned t, size_t r0, size_t r1) {
            exact_scan_rows(a, r0, r1, hn, &vms[t], &nms[t]);
        });
        double vm = 0, nm2 = 0;
        for (unsigned t = 0; t < 16; t++) {
            vm = isfinite(vms[t]) ? fmax(vm, vms[t]) : INFINITY;
            nm2 = fmax(nm2, nms[t]);
        }
        g_scan.x = a->x;
        g_scan.n = a->n;
        g_scan.d = a->d;
        g_scan.hash = a->hash;
        g_scan.scanned = 1;
        g_scan.center = a->center;
        g_scan.vmax = vm;
        g_scan.nmax2 = nm2;
    }
    const double vmax = g_scan.vmax;
    /* The host scales data beyond FP16's range down by a power of two
     * (a->scale, exact): the bound's relative terms are unchanged, so it is
     * taken in the scaled units and brought back (the FASTED pass scales
     * its threshold again); the refinement uses the FP64 data as loaded. */
    const double sc = a->scale ? a->scale : 1.0;
    if (!isfinite(vmax))
        return kern_fail(KERN_EINVAL,
                         "a value is not finite%s, which FP16 cannot bound; use fp64 or ted",
                         a->center ? " (centred)" : "");
    if (!(vmax * sc <= EXACT_FP16_MAX))
        return kern_fail(KERN_EINVAL,
                         "values up to |v| = %g%s are beyond FP16's 65504 at scale %g; use fp64 "
                         "or ted",
                         vmax, a->center ? " (centred)" : "", sc);
    return 0;
}

/* One device's run: the whole list (q NULL) or, as one device's share of
 * a run over several (kern_multi_fn), the ranges it takes from q, refined
 * against its own FP64 rows. Reads the scan only. */
static int exact_run_q(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                       unsigned long long *items)
{
    const double nmax2 = g_scan.nmax2;
    const double sc = a->scale ? a->scale : 1.0;
    const double lim2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    /* At large d the pass promotes its sums (kern_fmt_fp16x), and the
     * bound no longer grows with d; below that, and with a teaching
     * switch off (fp16x has only the all-on kernels), fp16's. */
    const int promoted = a->d > 2 * KERN_FP16X_PROMOTE_VALUES && a->off == 0;
    exact_bound b;
    if (promoted)
        exact_bound_init_promoted(&b, a->d, KERN_FP16X_PROMOTE_VALUES);
    else
        exact_bound_init(&b, a->d);
    const double nmax = sqrt(nmax2) * sc;
    const double delta = exact_bound_delta(&b, nmax, nmax, sqrt(lim2) * sc) / (sc * sc);

    exact_ctx c;
    memset(&c, 0, sizeof c);
    c.a = a;
    c.o.d = a->d;
    c.o.q0 = a->q0;
    c.o.mode = a->mode;
    c.o.lim2 = lim2;
    c.o.nbins = (int)a->hist_nbins;
    c.o.b = b;
    c.o.sc = sc;
    c.o.lim2s = lim2 * sc * sc;
    c.o.eps_s = sqrt(lim2) * sc;
    c.promoted = promoted;
    c.nmax = nmax;
    c.lim2sc = lim2 * sc * sc;
    kern_join_args f = *a;
    f.mode = KJOIN_PAIRS;
    /* FP16: the format the bound is derived for, in exact's own
     * instances (their wgmma epilogue lists only the band in COUNT mode);
     * fp16's with a teaching switch off, which has its variants. */
    f.format = a->off ? NULL : promoted ? &kern_fmt_fp16x : &kern_fmt_fp16b;
    if (a->mode != KJOIN_PAIRS) {
        f.pair_fn = exact_noop_pairs; /* nothing is drained */
        f.pair_ctx = NULL;
    }
    f.counts = NULL;
    f.hist = f.hist_below = NULL;
    f.hist_edges = NULL;
    f.hist_nbins = 0;
    /* The pass keeps every pair the largest norm's bound may let in; the
     * refinement bounds each with its own norms. Per pair: the list (8
     * bytes) and, in PAIRS mode, the kept pairs with FP64 d2 (16). */
    const fasted_post post = {&c,
                              8,
                              lim2 + delta,
                              a->mode == KJOIN_PAIRS ? (size_t)24 : 8,
                              exact_setup_cb,
                              exact_refine,
                              exact_params};
    int rc = fasted_run_q(&f, r, &post, q, items);
    if (rc == 0)
        rc = exact_fetch(&c, r);
    char v[sizeof r->variant];
    snprintf(v, sizeof v, "%s", r->variant);
    snprintf(r->variant, sizeof r->variant, "%.50s%s + fp64 refine", v,
             c.promoted ? " fp32-promoted" : "");
    exact_free(&c);
    return rc;
}

extern "C" int kern_exact_run(const kern_join_args *a, kern_join_result *r)
{
    memset(r, 0, sizeof *r);
    if (!a->x || a->n == 0 || a->d == 0)
        return kern_fail(KERN_EINVAL, "exact: bad sizes (n %zu, d %zu)", a->n, a->d);
    int rc = exact_scan(a);
    if (rc)
        return rc;
    if (a->ndevices > 0)
        return kern_multi_run(a, r, exact_run_q);
    return exact_run_q(a, r, NULL, NULL);
}
