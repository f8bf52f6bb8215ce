/* `exact`: FASTED's pass decides which pairs can be in the join, FP64
 * decides which are. The FASTED kernels run in pairs mode at eps^2 + delta,
 * delta the bound of kernels/exact_bound.h taken at the dataset's largest
 * norm (so every pair whose exact d2 is <= eps^2 has d~2 <= eps^2 + delta,
 * docs/ACCURACY.md (4)). In COUNT mode the pass's epilogue bounds each
 * candidate with its own norms at once (p.band.bnd, FP32 rounded up): it counts
 * the pairs sure to be in and lists only the band. Otherwise, after each
 * launch the candidates are bounded again with each pair's own norms:
 * those the bound decides are taken (PERPOINT, and HIST when the pair's
 * interval lies in one bin) or dropped without FP64. The band is screened
 * (kernels/exact_refine.cuh): a fast FP32 sum whose distance from fp64's
 * own d2 is bounded decides almost all of it; what it leaves, and in
 * PAIRS mode every kept pair (it carries its FP64 distance), is computed
 * again on the GPU with the fp64 engine's arithmetic (direct (a-b)^2,
 * dimension order, no FMA contraction) and kept when d2 <= eps^2. So
 * every mode equals fp64's. Symmetric tiles,
 * cancel, progress and refills are FASTED's; a symmetric run refines each
 * unordered pair once.
 *
 * The rows stay on the device in the dataset's own element type (f32, f16
 * or u8 values widen to FP64 exactly, in registers: the refinement reads
 * 4, 2 or 1 bytes a value instead of 8, and its arithmetic is fp64's all
 * the same), with the FP64 norms, a slot per device (g_x64_dev); the host
 * scan (g_scan_s) too; both across runs of one dataset (two: a run's own
 * and the whole dataset a view gathers from). Over a device
 * list (kern_multi_run) each device refines the candidates of its own
 * launches against its own FP64 rows: the decision per pair does not
 * depend on the device, so every split gives fp64's result. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cuda_fp16.h>

#include "exact_kern.h"
#include "exact_refine.cuh"
#include "fasted_run.cuh"
#include "kern_gather.cuh"
#include "kern_pool.cuh"
#include "kern_util.cuh"

/* Row r's centre: its own origin in a cluster layout (KERN_ORIGIN_NONE:
 * none), else the run's (NULL: not centred). */
__device__ __forceinline__ const double *exact_row_centre(const double *center,
                                                          const double *origins,
                                                          const uint8_t *origin_of, size_t d,
                                                          size_t r)
{
    if (origin_of)
        return origin_of[r] == KERN_ORIGIN_NONE ? NULL : origins + d * origin_of[r];
    return center;
}

/* Each row's FP16 rounding as the pass holds it: rho_i = ||x^_i - v_i||,
 * v_i the row centred and scaled in FP64 exactly as the upload forms it
 * (kernels/fasted.cu, fasted_to_float: (x - c) * scale, then correctly
 * rounded to FP16 through FP32 round-to-odd), x^_i the FP16 values of the
 * pass (X, rows of ld 16-bit units). A warp per row; the FP64 sum and root
 * err by at most (d / 2 + 2) 2^-53 relative, so rho is rounded up by
 * d 2^-52 + 2^-40: the rest is room for delta's own evaluation, which
 * takes rho without a safety factor (kernels/exact_bound.h). A cluster
 * layout centres row r on origins + d * origin_of[r] (KERN_ORIGIN_NONE:
 * not centred) instead of center. */
template <class T>
__global__ void
exact_rho_kernel(const uint16_t *__restrict__ X, int ld, const T *__restrict__ x,
                 const double *__restrict__ center, const double *__restrict__ origins,
                 const uint8_t *__restrict__ origin_of, double sc, size_t n, size_t d, double *rho)
{
    const size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (r >= n)
        return;
    center = exact_row_centre(center, origins, origin_of, d, r);
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
        rho[r] = sqrt(acc) * (1.0 + 0x1p-40 + (double)d * 0x1p-52);
}

/* COUNT: each row's terms of delta_ij for the pass's epilogue
 * (fasted_int.cuh, p.band.bnd), in FP32 rounded up: x = rho + 2^-52 |v| (the
 * row's part of e), y = |v| + rho (its part of s), |v| the norm as
 * converted, scaled (exact_bound_delta_rho). A cluster layout's padding
 * row (origin_of KERN_ORIGIN_NONE) gets x = pad_e instead, which puts its
 * blo below 0 and its bhi, finite, far below its pairs' d~2 (its norm is
 * 3.39e38, fasted.cu): the epilogue lists its self-pair (d~2 = 0) as band, never
 * counts it, and exact's classify drops it as it drops the pads' pairs of
 * the other modes. So the padding is left out in one place, and the
 * epilogue, shared with fasted, tests nothing for it. */
__global__ void exact_bnd_kernel(const double *__restrict__ nrm, const double *__restrict__ rho,
                                 const uint8_t *__restrict__ origin_of, float pad_e, double sc,
                                 size_t n, float2 *bnd)
{
    const size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    if (origin_of && origin_of[i] == KERN_ORIGIN_NONE) {
        bnd[i] = make_float2(pad_e, 0.0f);
        return;
    }
    const double v = nrm[i] * sc, r = rho[i];
    bnd[i] = make_float2(__double2float_ru(r + 0x1p-52 * v), __double2float_ru(v + r));
}

/* The largest terms of each 256 rows (the rows past n are 0), padding
 * rows left out: their pad_e is their own row's, not their columns'. */
__global__ void exact_bnd_max_kernel(const float2 *__restrict__ bnd,
                                     const uint8_t *__restrict__ origin_of, size_t n, size_t nb,
                                     float2 *cmax)
{
    const size_t b = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= nb)
        return;
    float2 m = make_float2(0.0f, 0.0f);
    for (size_t i = b * 256; i < b * 256 + 256; i++) {
        if (origin_of && i < n && origin_of[i] == KERN_ORIGIN_NONE)
            continue;
        const float2 v = bnd[i];
        m.x = fmaxf(m.x, v.x);
        m.y = fmaxf(m.y, v.y);
    }
    cmax[b] = m;
}

/* The screen's FP32 copies of FP64 rows, a warp a row, centred as the
 * pass centres them (d2 does not change under a translation, and the
 * copies of centred rows keep their differences' bits where a large
 * common offset would lose them): x32 = RN(w), w = RN(x - c), and r32
 * bounds ||x32 - (x - c)|| from above. x32 - w is exact in FP64 (the
 * low bits of w); its squares' sum errs by at most d 2^-53 relative (any
 * order) and d 2^-1075 from squares that underflow, the root by 2^-53,
 * hence (1 + d 2^-52), d 2^-1074 and 2^-50; each w errs by at most
 * 2^-53 |w| (2^-52 |w| covers it and the norm's own rounding). A row is
 * centred on its own origin in a cluster layout (KERN_ORIGIN_NONE: not
 * centred), as in exact_rho_kernel. A value beyond FP32's range copies
 * to Inf: its pairs' screen sums are not finite and go to fp64's order. */
__global__ void exact_copy_f32_kernel(const double *__restrict__ x,
                                      const double *__restrict__ center,
                                      const double *__restrict__ origins,
                                      const uint8_t *__restrict__ origin_of, size_t n, size_t d,
                                      float *x32, double *r32)
{
    const size_t r = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    const int lane = threadIdx.x & 31;
    if (r >= n)
        return;
    center = exact_row_centre(center, origins, origin_of, d, r);
    double acc = 0, w2 = 0;
    for (size_t k = lane; k < d; k += 32) {
        const double w = center ? __dsub_rn(x[r * d + k], center[k]) : x[r * d + k];
        const float f = __double2float_rn(w);
        x32[r * d + k] = f;
        const double u = w - (double)f;
        acc = __fma_rn(u, u, acc);
        w2 = __fma_rn(w, w, w2);
    }
    for (int m = 16; m; m >>= 1) {
        acc += __shfl_xor_sync(0xffffffffu, acc, m);
        w2 += __shfl_xor_sync(0xffffffffu, w2, m);
    }
    if (lane == 0) {
        const double up = 1.0 + (double)d * 0x1p-52, tiny = (double)d * 0x1p-1074;
        const double cen = center ? 0x1p-52 * sqrt(w2 * up + tiny) : 0.0;
        r32[r] = (sqrt(acc * up + tiny) + cen) * (1.0 + 0x1p-50);
    }
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

static const size_t exact_x_bytes[] = {8, 4, 2, 1}; /* KERN_X_F64 .. KERN_X_U8 */

/* The element type exact keeps a's rows in on the device: the dataset's
 * own where the kernels widen it (and its size agrees), else FP64 widened
 * on the host. */
static int exact_row_type(const kern_join_args *a)
{
    if (a->x_type == KERN_X_F64)
        return a->x_to_f64 ? -1 : KERN_X_F64;
    if (a->x_type > KERN_X_F64 && a->x_type <= KERN_X_U8 && a->x_bytes == exact_x_bytes[a->x_type])
        return a->x_type;
    return -1;
}

/* The caches below hold three datasets each: slot 0 an ordinary run's
 * rows, slot 1 the whole dataset a view's rows are gathered from
 * (kern_join_args.base_n), slot 2 a layout's (the cluster cut's, a->rows).
 * A subset run between two cut runs (the curve's rounds on a tile-cut
 * set) then converts nothing, nor does an ordinary run between two runs
 * over one cut (a k-distance, a count, then HDBSCAN*'s forest at the
 * cut's eps): with fewer slots each of them would gather and upload its
 * rows again, a cost on every run. */
#define EXACT_SLOTS 3
static int exact_slot(const kern_join_args *a)
{
    return a->base_n ? 1 : a->rows ? 2 : 0;
}

/* The host scan of the values FP16 will hold (largest |v|, each row's
 * norm, centred when the run centres), kept across runs of one dataset: a
 * sweep or a compare runs exact again and again on the same data. Done
 * once per run by the calling thread, before any device's thread reads it. */
struct exact_scan_t {
    const void *x;
    size_t n, d;
    uint64_t hash;
    int scanned;
    const double *center; /* the scan's */
    double vmax, nmax2;
    double *hn;        /* the scan's row norms (n) */
    unsigned long gen; /* a new scan's number: a device's norms say which they hold */
};
static exact_scan_t g_scan_s[EXACT_SLOTS];
static unsigned long g_scan_gen; /* the last scan's number: numbers are never reused */

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
static exact_x64 g_x64_dev[KERN_DEV_SLOTS][EXACT_SLOTS];

static void exact_release_dev(int dev, int slot)
{
    exact_x64 &s = g_x64_dev[dev][slot];
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

/* Slot s's scan and every device's rows of it. */
static void exact_release_slot(int slot)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++)
        exact_release_dev(d, slot);
    free(g_scan_s[slot].hn);
    memset(&g_scan_s[slot], 0, sizeof g_scan_s[slot]);
}

void exact_release(void)
{
    for (int s = 0; s < EXACT_SLOTS; s++)
        exact_release_slot(s);
}

static int exact_same_scan(const exact_scan_t &g_scan, const kern_join_args *a)
{
    return g_scan.x == a->x && g_scan.n == a->n && g_scan.d == a->d && g_scan.hash == a->hash;
}

static int exact_same_data(const exact_x64 &s, const kern_join_args *a)
{
    const int xt = exact_row_type(a);
    return s.x == a->x && s.n == a->n && s.d == a->d && s.hash == a->hash &&
           s.xt == (xt < 0 ? KERN_X_F64 : xt);
}

/* Rows of at least this many bytes: the list is sorted by its first row
 * before the FP64 stages (exact_sort_list), where the rows' reads are
 * their cost (measured at d = 784 and 4096). Shorter rows are left alone:
 * sorting from 1 KB (d = 128 on FP64 rows) is slower in PAIRS and COUNT
 * alike (expo 10^5 x 128 on an H100), the sort's three launches a fixed
 * cost on each of ~20 launches a run (docs/ACCURACY.md,
 * docs/history/BENCHMARKS-2026-11.md). EXACT_SORT_TMP: the sort's
 * scratch allowed a pair (CUB's onesweep wants well under 1). */
#define EXACT_SORT_ROW_BYTES 2048
#define EXACT_SORT_TMP 2

/* The run's counters, one device block (exact_dev's count, nlist, ...),
 * zeroed once and read back whole by exact_fetch. */
enum {
    EXACT_C_COUNT,   /* COUNT's pairs */
    EXACT_C_NLIST,   /* this launch's list */
    EXACT_C_BAND,    /* the band, unordered in a symmetric run */
    EXACT_C_REFINED, /* listed for FP64 */
    EXACT_C_NSEQ,    /* this launch's pairs left to fp64's order */
    EXACT_C_SEQ,     /* the run's pairs summed in fp64's order */
    EXACT_C_PADS,    /* pads in the pass's lists (F::band_pad) */
    EXACT_NCOUNT
};

struct exact_ctx {
    const kern_join_args *a;
    exact_dev o;
    int promoted;      /* the pass runs a promoting wgmma kernel (exact_kern.cuh) */
    const uint16_t *X; /* the pass's FP16 rows (its params) */
    int ld;
    double *rho, *center;      /* device: rho (n), the centre (d) */
    double *origins;           /* device, a cluster layout: its origins, then each row's */
    fasted_params *p;          /* the pass's parameters (COUNT: the epilogue's band) */
    float2 *bnd;               /* device, COUNT: each row's bound terms for the epilogue */
    double nmax, lim2sc;       /* the largest norm and lim2, scaled: the pass threshold's inputs */
    size_t cap;                /* the list's and the compaction buffers' pairs */
    unsigned long long listed; /* candidates the pass handed to the classify */
    /* Long rows: the list sorted by its first row before the FP64 stages
     * (exact_sort_list): its scratch, the sort's key bits, and in PAIRS
     * mode the second buffers (the others use the screen's si, sj). */
    int sort, sort_bits;
    uint32_t *li2, *lj2;
    void *sort_tmp;
    size_t sort_bytes;
    /* Long FP64 rows, not PAIRS: the screen reads their FP32 copies (half
     * the bytes) and each copy's distance from its row (exact_copy_f32). */
    float *x32;
    double *r32;
    /* A view (a->base_n): its FP64 rows, norms and row list on the
     * device, gathered from the whole dataset's (exact_view). */
    void *xv;
    double *nv;
    uint32_t *rv;
    cudaEvent_t ev[2]; /* around each launch's refinement: kernel time */
    int timed;         /* ev holds a refinement not yet added to t_kernel */
    int ready;
};

static int exact_noop_pairs(void *, size_t, const uint32_t *, const uint32_t *, const double *)
{
    return 0;
}

/* The FP64 rows and norms of a's rows in the device's slot (g_x64_dev),
 * made unless held. */
static int exact_hold(kern_run *k, const kern_join_args *a, int slot)
{
    int rc;
    const int xt = exact_row_type(a);
    const size_t vb = xt < 0 ? sizeof(double) : a->x_bytes;
    const size_t bytes = a->n * a->d * vb, nbytes = a->n * sizeof(double);
    exact_x64 &g_x64 = g_x64_dev[a->device][slot];
    const exact_scan_t &g_scan = g_scan_s[slot];
    if (g_x64.dx && exact_same_data(g_x64, a)) {
        if ((rc = kern_charge(k, g_x64.bytes, "the exact rows")))
            return rc;
    } else {
        exact_release_dev(a->device, slot);
        /* the other slots are a cache: the run's room comes first */
        if (!kern_pool_cache_may_keep(bytes + nbytes))
            for (int o = 0; o < EXACT_SLOTS; o++)
                if (o != slot)
                    exact_release_dev(a->device, o);
        if ((rc = kern_malloc(k, &g_x64.dx, bytes, "the exact rows")) ||
            (rc = kern_malloc(k, (void **)&g_x64.dn, nbytes, "the exact rows (norms)")))
            return rc;
        if (xt >= 0 && a->rows) {
            /* A layout's rows gathered from the dataset in 4 MB blocks
             * (its padding zeros), as the host holds them. */
            const size_t rb = a->d * vb, blk = std::max((size_t)1, ((size_t)1 << 22) / rb);
            std::vector<char> hb(std::min(blk, a->n) * rb);
            for (size_t i0 = 0; i0 < a->n; i0 += blk) {
                const size_t m = std::min(blk, a->n - i0);
                for (size_t i = 0; i < m; i++) {
                    const void *src = kern_row_ptr(a, i0 + i);
                    if (src)
                        memcpy(hb.data() + i * rb, src, rb);
                    else
                        memset(hb.data() + i * rb, 0, rb);
                }
                KERN_CUDA(cudaMemcpy((char *)g_x64.dx + i0 * rb, hb.data(), m * rb,
                                     cudaMemcpyHostToDevice));
            }
        } else if (xt >= 0) {
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
    return 0;
}

/* A view's rows (a->base_n): the whole dataset's FP64 rows and norms held,
 * then the view's gathered from them on the device (a padding row zeros,
 * norm 0, as the host's copy of a layout has it). */
static int exact_view(exact_ctx *c, kern_run *k)
{
    const kern_join_args *a = c->a;
    const kern_join_args b = kern_base_args(a);
    int rc = exact_hold(k, &b, 1);
    if (rc)
        return rc;
    const exact_x64 &g = g_x64_dev[a->device][1];
    const size_t rb = a->d * exact_x_bytes[g.xt];
    if ((rc = kern_malloc_pooled(k, &c->xv, a->n * rb, "the subset's FP64 rows")) ||
        (rc = kern_malloc_pooled(k, (void **)&c->nv, a->n * sizeof(double),
                                 "the subset's FP64 rows")) ||
        (rc = kern_malloc_pooled(k, (void **)&c->rv, a->n * 4, "the subset's FP64 rows")))
        return rc;
    KERN_CUDA(cudaMemcpyAsync(c->rv, a->rows, a->n * 4, cudaMemcpyHostToDevice, k->st));
    KERN_CUDA(kern_gather_rows(g.dx, c->rv, a->n, a->n, rb, c->xv, k->st));
    KERN_CUDA(kern_gather_norms<double>(g.dn, c->rv, a->n, a->n, 0.0, c->nv, k->st));
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
    if (a->base_n) {
        if ((rc = exact_view(c, k)))
            return rc;
        o.x = c->xv;
        o.nrm = c->nv;
    } else {
        const int slot = exact_slot(a);
        if ((rc = exact_hold(k, a, slot)))
            return rc;
        o.x = g_x64_dev[a->device][slot].dx;
        o.nrm = g_x64_dev[a->device][slot].dn;
    }
    kern_trace_mark("exact setup: rows");
    o.xt = g_x64_dev[a->device][exact_slot(a)].xt;
    /* The rows' FP16 rounding, from the pass's own values. */
    if ((rc = kern_malloc_pooled(k, (void **)&c->rho, a->n * sizeof(double), "the rows' rounding")))
        return rc;
    if (a->center) {
        if ((rc = kern_malloc_pooled(k, (void **)&c->center, a->d * sizeof(double), "the centre")))
            return rc;
        KERN_CUDA(cudaMemcpy(c->center, a->center, a->d * sizeof(double), cudaMemcpyHostToDevice));
    }
    if (a->origin_of) {
        /* A cluster layout's origins (nclu x d) and each row's. */
        const size_t ob = (size_t)a->nclu * a->d * sizeof(double);
        if ((rc = kern_malloc_pooled(k, (void **)&c->origins, ob + a->n, "the layout's origins")))
            return rc;
        KERN_CUDA(cudaMemcpy(c->origins, a->origins, ob, cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMemcpy((char *)c->origins + ob, a->origin_of, a->n, cudaMemcpyHostToDevice));
        o.origin_of = (const uint8_t *)c->origins + ob;
    }
    {
        const unsigned threads = 256, rows = threads / 32;
        exact_by_type(o.xt, o.x, [&](auto x) {
            const uint8_t *of = o.origin_of;
            exact_rho_kernel<<<(unsigned)((a->n + rows - 1) / rows), threads, 0, k->st>>>(
                c->X, c->ld, x, c->center, c->origins, of, o.sc, a->n, a->d, c->rho);
        });
        KERN_LAUNCH_CHECK("exact_rho_kernel");
    }
    o.rho = c->rho;
    kern_trace_mark("exact setup: rounding");
    if ((rc = kern_malloc_pooled(k, (void **)&o.count, EXACT_NCOUNT * sizeof(unsigned long long),
                                 "the count")))
        return rc;
    KERN_CUDA(cudaMemset(o.count, 0, EXACT_NCOUNT * sizeof(unsigned long long)));
    if (a->mode == KJOIN_COUNT && c->p) {
        /* The epilogue counts the pairs its bound puts in and lists only
         * the band (rounded up, so it is never narrower than the FP64
         * bound's). The other modes list every candidate: their pairs
         * carry per-point counts, bins or FP64 distances. */
        /* Rows as the pass pads them (fasted.cu's n_alloc), 0 past n. */
        const size_t nb = (a->n + 255) / 256 + 1, rows = nb * 256;
        if ((rc = kern_malloc_pooled(k, (void **)&c->bnd, (rows + nb) * sizeof(float2),
                                     "the rows' bounds")))
            return rc;
        fasted_params *p = c->p;
        p->band.bnd = c->bnd;
        p->band.cmax = c->bnd + rows;
        p->band.k1 = exact_f32_up(2.0 * o.eps_s);
        p->band.k2 = 1.0f; /* e^2's coefficient (exact_bound_delta_rho) */
        p->band.k3 = exact_f32_up(o.b.safety * o.b.c_acc);
        p->band.lo = exact_f32_down(o.lim2s);
        p->band.hi = exact_f32_up(o.lim2s);
        /* A padding row's e (exact_bnd_kernel): e >= pad_e gives
         * delta >= RU(k2 e) e >= k2 pad_e^2 >= 2 lo + 1 > lo, so its blo
         * = RD(lo - delta) < 0 <= its self-pair's d~2. */
        const float pad_e = exact_f32_up(
            sqrt((2.0 * (double)p->band.lo + 1.0) / (double)p->band.k2) * (1.0 + 0x1p-20));
        KERN_CUDA(cudaMemsetAsync(c->bnd, 0, rows * sizeof(float2), k->st));
        exact_bnd_kernel<<<(unsigned)((a->n + 255) / 256), 256, 0, k->st>>>(
            o.nrm, c->rho, o.origin_of, pad_e, o.sc, a->n, c->bnd);
        KERN_LAUNCH_CHECK("exact_bnd_kernel");
        exact_bnd_max_kernel<<<(unsigned)((nb + 127) / 128), 128, 0, k->st>>>(
            c->bnd, o.origin_of, a->n, nb, c->bnd + rows);
        KERN_LAUNCH_CHECK("exact_bnd_max_kernel");
        p->band.count = o.count;
    }
    o.nlist = o.count + EXACT_C_NLIST;
    o.band = o.count + EXACT_C_BAND;
    o.refined = o.count + EXACT_C_REFINED;
    o.nseq = o.count + EXACT_C_NSEQ;
    o.seq = o.count + EXACT_C_SEQ;
    o.pads = o.count + EXACT_C_PADS;
    if (a->mode == KJOIN_PERPOINT) {
        const size_t b = (kern_count_rows(a) + 1) * sizeof(unsigned long long);
        if ((rc = kern_malloc_pooled(k, (void **)&o.counts, b, "the per-point counts")))
            return rc;
        KERN_CUDA(cudaMemset(o.counts, 0, b));
    } else if (a->mode == KJOIN_HIST) {
        const size_t nb = a->hist_nbins;
        if ((rc = kern_malloc_pooled(k, (void **)&o.edges, (nb + 1) * sizeof(double),
                                     "the histogram")) ||
            (rc = kern_malloc_pooled(k, (void **)&o.hist, (nb + 1) * 8, "the histogram")))
            return rc;
        KERN_CUDA(cudaMemcpy((void *)o.edges, a->hist_edges, (nb + 1) * sizeof(double),
                             cudaMemcpyHostToDevice));
        KERN_CUDA(cudaMemset(o.hist, 0, (nb + 1) * 8));
    } else if (a->mode == KJOIN_PAIRS) {
        if ((rc = kern_malloc_pooled(k, (void **)&o.nout, 8, "the refined pairs")))
            return rc;
    }
    if (a->mode != KJOIN_PAIRS && o.xt == KERN_X_F64 && a->d * 8 >= EXACT_SORT_ROW_BYTES &&
        (a->d * 4) % 16 == 0) {
        /* Left out, not failed, where they would take more than half of
         * the room left (the cap's, the device's): the pair buffers come
         * after them and shrink to fit; the screen then reads the FP64
         * rows. */
        const size_t xb = a->n * a->d * 4, need = xb + a->n * 8;
        size_t fr = 0, tot = 0;
        KERN_CUDA(kern_pool_meminfo(&fr, &tot));
        rc = 2 * need > fr || (k->mem_cap && k->mem_used + 2 * need > k->mem_cap) ? KERN_ENOMEM : 0;
        if (rc == 0 &&
            (rc = kern_malloc_pooled(k, (void **)&c->x32, xb, "the screen's FP32 rows")) == 0 &&
            (rc = kern_malloc_pooled(k, (void **)&c->r32, a->n * 8, "the screen's FP32 rows")) !=
                0) {
            kern_free_pooled(k, c->x32, xb);
            c->x32 = NULL;
        }
        if (rc && rc != KERN_ENOMEM)
            return rc;
        if (c->x32) {
            exact_copy_f32_kernel<<<(unsigned)((a->n + 7) / 8), 256, 0, k->st>>>(
                (const double *)o.x, c->center, c->origins, o.origin_of, a->n, a->d, c->x32,
                c->r32);
            KERN_LAUNCH_CHECK("exact_copy_f32_kernel");
        }
    }
    k->r->t_h2d += kern_now() - t0;
    c->ready = 1;
    kern_trace_mark("exact setup: outputs");
    return 0;
}

/* The list and the compacted pairs, once the pair buffer's size is known
 * (kern_drive left room for them: extra_per_pair). */
static int exact_list_alloc(exact_ctx *c, kern_run *k)
{
    exact_dev &o = c->o;
    c->cap = k->cap;
    int rc;
    if ((rc = kern_malloc_pooled(k, (void **)&o.li, c->cap * 4, "the refined pairs")) ||
        (rc = kern_malloc_pooled(k, (void **)&o.lj, c->cap * 4, "the refined pairs")))
        return rc;
    if (c->a->mode == KJOIN_PAIRS &&
        ((rc = kern_malloc_pooled(k, (void **)&o.pi, c->cap * 4, "the refined pairs")) ||
         (rc = kern_malloc_pooled(k, (void **)&o.pj, c->cap * 4, "the refined pairs")) ||
         (rc = kern_malloc_pooled(k, (void **)&o.pd, c->cap * 8, "the refined pairs"))))
        return rc;
    if (c->a->mode != KJOIN_PAIRS &&
        ((rc = kern_malloc_pooled(k, (void **)&o.si, c->cap * 4, "the screened pairs")) ||
         (rc = kern_malloc_pooled(k, (void **)&o.sj, c->cap * 4, "the screened pairs"))))
        return rc;
    if (c->sort && c->cap <= (size_t)INT_MAX) {
        if (c->a->mode == KJOIN_PAIRS &&
            ((rc = kern_malloc_pooled(k, (void **)&c->li2, c->cap * 4, "the sorted pairs")) ||
             (rc = kern_malloc_pooled(k, (void **)&c->lj2, c->cap * 4, "the sorted pairs"))))
            return rc;
        uint32_t *ai = c->li2 ? c->li2 : o.si, *aj = c->lj2 ? c->lj2 : o.sj;
        cub::DoubleBuffer<uint32_t> ki(o.li, ai), kj(o.lj, aj);
        KERN_CUDA(cub::DeviceRadixSort::SortPairs(NULL, c->sort_bytes, ki, kj, (int)c->cap, 0,
                                                  c->sort_bits, k->st));
        /* kern_drive left EXACT_SORT_TMP bytes a pair for the scratch; a
         * sort that wants more is left out (the result is the same). */
        if (c->sort_bytes <= c->cap * EXACT_SORT_TMP)
            return kern_malloc_pooled(k, &c->sort_tmp, c->sort_bytes, "the sort's scratch");
    }
    c->sort = 0;
    return 0;
}

/* The listed pairs [0, np) by their first row (stable, so each row's pairs
 * keep the pass's order), into *od's li, lj; in COUNT, PERPOINT and HIST
 * the screen's leftovers then go to the other buffers. A warp of the
 * screen or of fp64's order then reads mostly one first row for its
 * pairs, from L1 (H200: COUNT 4-6% faster on FP64 rows at d = 784 and
 * 4096; the pass's tile order had kept most first rows in L2 already).
 * Entries past the list's count were set to ~0 before the classify: with
 * sort_bits > the bits of any row index they sort last. */
static int exact_sort_list(exact_ctx *c, kern_run *k, unsigned long long np, exact_dev &od)
{
    const int pairs = c->a->mode == KJOIN_PAIRS;
    cub::DoubleBuffer<uint32_t> ki(od.li, pairs ? c->li2 : od.si),
        kj(od.lj, pairs ? c->lj2 : od.sj);
    size_t bytes = c->sort_bytes;
    KERN_CUDA(cub::DeviceRadixSort::SortPairs(c->sort_tmp, bytes, ki, kj, (int)np, 0, c->sort_bits,
                                              k->st));
    od.li = ki.Current();
    od.lj = kj.Current();
    if (!pairs) {
        od.si = ki.Alternate();
        od.sj = kj.Alternate();
    }
    return 0;
}

static int exact_setup_cb(void *vc, kern_run *k)
{
    return exact_setup((exact_ctx *)vc, k);
}

/* The kernel is chosen: without wgmma (an older GPU, a teaching switch)
 * the promoting kernels run fp16's unpromoted mma.sync kernels, so the bound and the
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

/* A list of at most this many pairs an SM goes a block a pair
 * (exact_fp64_pair_kernel): the warp kernel would have too few warps to
 * hide its memory round trips, while a block a pair forms all its terms
 * at once and pays only the in-order adds (d of them). */
#define EXACT_FEW_PER_SM 64

/* The screen over the list of at most np pairs: 16-byte loads where every
 * row starts 16-byte aligned, L lanes a pair (fewer for short rows), and
 * the roundings a term can pass through for exact_screen_range. */
template <class T>
static void exact_screen_launch(const exact_dev &o, unsigned long long np, int sms, cudaStream_t st)
{
    exact_screen sc;
    int V = 1;
    exact_screen_shape(o.d, sizeof(T), &V, &sc.L, &sc.h);
    const int f64 = std::is_same<T, double>::value;
    sc.u = f64 ? 0x1p-53 : 0x1p-24;
    sc.tiny = f64 ? 0x1p-1074 : 0x1p-149;
    const unsigned threads = 256;
    const unsigned long long per =
        (unsigned long long)(threads / 32) * (32 / sc.L) * EXACT_SCREEN_P;
    const unsigned long long want = (np + per - 1) / per;
    const unsigned blocks = (unsigned)(want < (unsigned long long)sms * 8 ? want : sms * 8);
    if (V > 1)
        exact_screen_kernel<T, 16 / sizeof(T)><<<blocks, threads, 0, st>>>(o, sc);
    else
        exact_screen_kernel<T, 1><<<blocks, threads, 0, st>>>(o, sc);
}

/* fp64's order over aligned rows: 4 warps a block, 128 bytes of each row
 * a step, two steps in flight (73 KB a block, 3 blocks an SM). Against
 * exact_fp64_kernel (PAIRS, warm kernel time) it is faster on f32 rows, by
 * about a tenth at d = 4096 and less at d = 784, and about even on FP64
 * rows. 64 bytes a step is slower on FP64 rows, 256 bytes at 2 warps a
 * block or three steps in flight no faster (docs/ACCURACY.md,
 * docs/history/BENCHMARKS-2026-11.md). */
typedef exact_cp_cfg<4, 128, 2> exact_cp;

/* Step 3 over rows that start 16-byte aligned (exact_fp64_cp_kernel): as
 * many blocks as fit on the device (asked of the current one each launch:
 * a run may span several), its shared memory limit raised first. */
template <class T>
static int exact_fp64_cp_launch(const uint32_t *li, const uint32_t *lj,
                                const unsigned long long *nl, unsigned long long few,
                                const exact_dev &o, unsigned long long np, int sms, cudaStream_t st)
{
    typedef exact_cp G;
    const void *f = (const void *)exact_fp64_cp_kernel<T, G>;
    int per = 0; /* per device: a run may use several */
    KERN_CUDA(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, G::smem));
    KERN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per, f, G::warps * 32, G::smem));
    if (per < 1)
        per = 1;
    const unsigned long long want = (np + G::warps * 32 - 1) / (G::warps * 32);
    const unsigned long long most = (unsigned long long)sms * per;
    const unsigned blocks = (unsigned)(want < most ? want : most);
    exact_fp64_cp_kernel<T, G>
        <<<blocks ? blocks : 1, G::warps * 32, G::smem, st>>>(li, lj, nl, few, o);
    return 0;
}

/* The last refinement's kernel time into r: read once it is done (the
 * next launch's or the run's end's synchronisation has waited for it), so
 * the host never waits for the refinement alone. */
static int exact_timer_take(exact_ctx *c, kern_join_result *r)
{
    if (!c->timed)
        return 0;
    c->timed = 0;
    KERN_CUDA(cudaEventSynchronize(c->ev[1]));
    const double t = kern_event_s(c->ev[0], c->ev[1]);
    r->t_kernel += t;
    r->ex.t_refine += t;
    return 0;
}

static int exact_refine(void *vc, kern_run *k, kern_step *s)
{
    exact_ctx *c = (exact_ctx *)vc;
    exact_dev &o = c->o;
    int rc;
    if ((rc = exact_timer_take(c, k->r)) != 0)
        return rc;
    if (!o.li && (rc = exact_list_alloc(c, k)) != 0)
        return rc;
    const unsigned long long np = s->np;
    c->listed += np;
    /* A symmetric run's pairs come in mirrored twos: its kept pairs fit
     * the compaction buffer as the candidates fit theirs. */
    o.sym = k->r->symmetric;
    KERN_CUDA(cudaMemsetAsync(o.nlist, 0, 8, k->st));
    KERN_CUDA(cudaMemsetAsync(o.nseq, 0, 8, k->st));
    if (c->a->mode == KJOIN_PAIRS)
        KERN_CUDA(cudaMemsetAsync(o.nout, 0, 8, k->st));
    if (np) {
        /* The refinement is the engine's kernel work as much as the pass
         * (kern_drive times the pass's launch alone). */
        if (!c->ev[0] && (cudaEventCreate(&c->ev[0]) != cudaSuccess ||
                          cudaEventCreate(&c->ev[1]) != cudaSuccess))
            return kern_fail(KERN_EGPU, "cudaEventCreate failed (the refinement's timer)");
        KERN_CUDA(cudaEventRecord(c->ev[0], k->st));
        if (c->sort) /* what the classify leaves unwritten sorts last */
            KERN_CUDA(cudaMemsetAsync(o.li, 0xff, np * 4, k->st));
        const unsigned threads = EXACT_CLASSIFY_THREADS;
        exact_classify_kernel<<<(unsigned)((np + threads - 1) / threads), threads, 0, k->st>>>(
            k->pi, k->pj, (const float *)k->pd, np, o);
        KERN_LAUNCH_CHECK("exact_classify_kernel");
        exact_dev od = o; /* the FP64 stages' view: the list sorted or not */
        if (c->sort && (rc = exact_sort_list(c, k, np, od)) != 0)
            return rc;
        int sms = 0;
        KERN_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, c->a->device));
        const unsigned long long want = (np + EXACT_WARPS * 32 - 1) / (EXACT_WARPS * 32);
        const unsigned blocks = (unsigned)(want < (unsigned long long)sms * EXACT_FP64_BLOCKS
                                               ? want
                                               : sms * EXACT_FP64_BLOCKS);
        const int pairs = c->a->mode == KJOIN_PAIRS;
        /* What the screen leaves is short: a block a pair takes it when it
         * holds at most `few` pairs, the warp kernel otherwise (each
         * kernel reads the count and returns at once if it is not its). */
        const unsigned long long few = pairs ? 0 : (unsigned long long)sms * EXACT_FEW_PER_SM;
        exact_by_type(o.xt, o.x, [&](auto x) {
            typedef std::remove_const_t<std::remove_pointer_t<decltype(x)>> T;
            const uint32_t *li = pairs ? od.li : od.si, *lj = pairs ? od.lj : od.sj;
            const unsigned long long *nl = pairs ? o.nlist : o.nseq;
            const unsigned pb = (unsigned)std::min(np, few);
            if ((o.d * sizeof(T)) % 16 == 0) { /* every row 16-byte aligned */
                constexpr int V = 16 / sizeof(T);
                if (!pairs) {
                    if (std::is_same<T, double>::value && c->x32) {
                        exact_dev os = od; /* the FP32 copies (exact_copy_f32_kernel) */
                        os.x = c->x32;
                        os.r32 = c->r32;
                        exact_screen_launch<float>(os, np, sms, k->st);
                    } else {
                        exact_screen_launch<T>(od, np, sms, k->st);
                    }
                    exact_fp64_pair_kernel<T, V><<<pb, 128, 0, k->st>>>(li, lj, nl, few, od);
                }
                rc = exact_fp64_cp_launch<T>(li, lj, nl, few, od, np, sms, k->st);
            } else {
                if (!pairs) {
                    exact_screen_launch<T>(od, np, sms, k->st);
                    exact_fp64_pair_kernel<T, 1><<<pb, 128, 0, k->st>>>(li, lj, nl, few, od);
                }
                exact_fp64_kernel<T, 1>
                    <<<blocks, EXACT_WARPS * 32, 0, k->st>>>(li, lj, nl, few, od);
            }
        });
        if (rc)
            return rc;
        KERN_LAUNCH_CHECK("exact_screen_kernel, exact_fp64_kernel");
        KERN_CUDA(cudaEventRecord(c->ev[1], k->st));
        /* Not waited for here: COUNT, PERPOINT and HIST need nothing back,
         * so the next launch of the pass is queued behind the refinement
         * at once, and the GPU does not idle while the host turns round. */
        c->timed = 1;
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

/* The run's state back to the device's pool (kern_malloc_pooled). */
static void exact_free(exact_ctx *c)
{
    kern_pool_free(c->rho);
    kern_pool_free(c->center);
    kern_pool_free(c->origins);
    kern_pool_free(c->bnd);
    kern_pool_free(c->o.count);
    kern_pool_free(c->o.counts);
    kern_pool_free((void *)c->o.edges);
    kern_pool_free(c->o.hist);
    kern_pool_free(c->o.li);
    kern_pool_free(c->o.lj);
    kern_pool_free(c->o.pi);
    kern_pool_free(c->o.pj);
    kern_pool_free(c->o.pd);
    kern_pool_free(c->o.si);
    kern_pool_free(c->o.sj);
    kern_pool_free(c->o.nout);
    kern_pool_free(c->li2);
    kern_pool_free(c->lj2);
    kern_pool_free(c->sort_tmp);
    kern_pool_free(c->x32);
    kern_pool_free(c->r32);
    kern_pool_free(c->xv);
    kern_pool_free(c->nv);
    kern_pool_free(c->rv);
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
    unsigned long long v[EXACT_NCOUNT] = {0};
    if (c->ready)
        KERN_CUDA(cudaMemcpy(v, c->o.count, sizeof v, cudaMemcpyDeviceToHost));
    r->ex.band = v[EXACT_C_BAND];
    r->ex.refined = v[EXACT_C_REFINED];
    r->ex.sequential = v[EXACT_C_SEQ];
    r->ex.listed = c->listed - v[EXACT_C_PADS]; /* the pass's pairs, its pads left out */
    if (a->mode == KJOIN_COUNT) {
        r->pairs = v[EXACT_C_COUNT];
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
            const double *center = kern_row_center(a, i0 + i);
            double e = 0;
            for (size_t k = 0; k < d; k++) {
                const double v = center ? xr[k] - center[k] : xr[k];
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
static int exact_scan_in(int slot, const kern_join_args *a)
{
    exact_scan_t &g_scan = g_scan_s[slot];
    if (!(g_scan.scanned && exact_same_scan(g_scan, a) && g_scan.center == a->center)) {
        if (!exact_same_scan(g_scan, a))
            exact_release_slot(slot);
        double *hn = (double *)realloc(g_scan.hn, a->n * sizeof(double));
        if (!hn)
            return kern_fail(KERN_ENOMEM, "exact: out of host memory for %zu row norms", a->n);
        g_scan.hn = hn;
        g_scan.gen = ++g_scan_gen; /* the devices' norms are stale */
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

/* A view's bound is the whole dataset's (its rows among them), scanned in
 * slot 1. */
static int exact_scan(const kern_join_args *a)
{
    if (a->base_n) {
        const kern_join_args b = kern_base_args(a);
        return exact_scan_in(1, &b);
    }
    return exact_scan_in(exact_slot(a), a);
}

/* One device's run: the whole list (q NULL) or, as one device's share of
 * a run over several (kern_multi_fn), the ranges it takes from q, refined
 * against its own FP64 rows. Reads the scan only. */
static int exact_run_q(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                       unsigned long long *items)
{
    const double nmax2 = g_scan_s[exact_slot(a)].nmax2;
    const double sc = a->scale ? a->scale : 1.0;
    const double lim2 = a->mode == KJOIN_HIST ? a->hist_edges[a->hist_nbins] : a->eps * a->eps;
    /* At large d the pass promotes its sums (exact_kern.cuh), and the
     * bound no longer grows with d; below that, and with a teaching
     * switch off (the promoting kernels are all-on only), fp16's. */
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
    c.o.ids = a->mode == KJOIN_PAIRS && a->pair_dev && a->pair_dev_ids;
    c.o.lim2 = lim2;
    c.o.nbins = (int)a->hist_nbins;
    c.o.b = b;
    c.o.sc = sc;
    c.o.lim2s = lim2 * sc * sc;
    c.o.eps_s = sqrt(lim2) * sc;
    c.promoted = promoted;
    c.nmax = nmax;
    c.lim2sc = lim2 * sc * sc;
    /* Sort the list by row where rows are long enough for their reads to
     * be the refinement's cost (exact_sort_list). */
    const int xt = exact_row_type(a);
    c.sort = a->d * exact_x_bytes[xt < 0 ? KERN_X_F64 : xt] >= EXACT_SORT_ROW_BYTES;
    c.sort_bits = 1;
    while (c.sort_bits < 32 && (a->n >> c.sort_bits) != 0)
        c.sort_bits++; /* 2^bits > n: every row index sorts below ~0 */
    kern_join_args f = *a;
    f.mode = KJOIN_PAIRS;
    /* FP16, the format the bound is derived for, on exact's own kernels
     * (exact_kern.cuh): COUNT lists only its band (the band epilogue); the
     * other modes list every candidate, which fp16's own PAIRS kernel does
     * as fast as fasted (the band's kernel measured slower there:
     * docs/ACCURACY.md), and when promoted, the promoting mainloop with
     * the join's epilogue. fp16's own with a teaching switch off, which
     * has its variants. */
    const int count = a->mode == KJOIN_COUNT;
    f.format = a->off     ? NULL
               : promoted ? (count ? &exact_kern_promoted_band : &exact_kern_promoted)
               : count    ? &exact_kern_band
                          : &kern_fmt_fp16;
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
     * bytes) and, in PAIRS mode, the kept pairs with FP64 d2 (16), else
     * what the screen leaves (8); sorted, the sort's scratch and in PAIRS
     * mode its second list (8). */
    const size_t extra = (a->mode == KJOIN_PAIRS ? 24 : 16) +
                         (c.sort ? EXACT_SORT_TMP + (a->mode == KJOIN_PAIRS ? 8 : 0) : 0);
    const fasted_post post = {&c,           8,           lim2 + delta, extra, exact_setup_cb,
                              exact_refine, exact_params};
    int rc = fasted_run_q(&f, r, &post, q, items);
    if (rc == 0)
        rc = exact_timer_take(&c, r);
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
    if (a->sub)
        return kern_subset_run(kern_exact_run, a, r);
    int rc = exact_scan(a);
    if (rc)
        return rc;
    kern_trace_mark("exact: scan");
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, r, exact_run_q);
    return exact_run_q(a, r, NULL, NULL);
}
