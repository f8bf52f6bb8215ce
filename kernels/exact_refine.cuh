/* The exact engine's refinement on the device (kernels/exact.cu runs it
 * after each launch of the FASTED pass): step 1 bounds each candidate with
 * its own norms and lists the band; step 2, the screen, decides nearly all
 * of the band from a fast sum whose distance from fp64's own d2 is
 * bounded (kernels/exact_bound.h, exact_screen_range); step 3 sums what
 * is left, and in PAIRS mode every kept pair, in fp64's own arithmetic.
 * Every decision is the one fp64 makes (docs/ACCURACY.md). */
#ifndef TCJ_EXACT_REFINE_CUH
#define TCJ_EXACT_REFINE_CUH

#include <stdint.h>
#include <string.h>

#include <cuda_fp16.h>

#include "f64_widen.cuh" /* exact_w */
#include "kern_hist.cuh"
#include "kernels.h"
#include "ptx.cuh"

struct exact_dev {
    const void *x; /* n x d, as the host holds it (element type xt, KERN_X_*) */
    int xt;
    const double *nrm; /* n: the FP64 norms of the rows as converted (centred), unscaled */
    const double *rho; /* n: each row's FP16 rounding, ||x^ - v||, scaled, rounded up */
    size_t d, q0;
    int mode, sym; /* sym: a symmetric run emits (i, j) and (j, i) for each pair */
    int ids; /* PAIRS without d2 (kern_join_args.pair_dev_ids): the bound's ins go out as they are
              */
    double lim2;  /* eps^2, HIST: the top edge */
    double lim2s; /* lim2 in the FASTED pass's units (times scale^2) */
    double sc;    /* the pass's scale (a power of two) */
    double eps_s; /* the bound's threshold, sqrt(lim2) scaled */
    exact_bound b;
    const double *edges;
    int nbins;
    unsigned long long *count, *counts, *hist, *nout;
    unsigned long long *nlist, *band, *refined; /* this launch's list; the run's totals */
    unsigned long long *pads; /* the run's pads in the pass's lists (F::band_pad) */
    uint32_t *li, *lj;        /* the pairs FP64 must decide or measure */
    /* Not PAIRS: the pairs the screen left to fp64's order, how many this
     * launch, and the run's total of pairs summed in that order. */
    uint32_t *si, *sj;
    unsigned long long *nseq, *seq;
    uint32_t *pi, *pj; /* PAIRS: the kept pairs, compacted */
    double *pd;
    /* A cluster layout: each row's origin, KERN_ORIGIN_NONE for padding
     * rows, whose pair with themselves the pass lists (NULL: none). */
    const uint8_t *origin_of;
    /* The screen's rows when they are not the data's (FP64 rows screened
     * from their FP32 copies, x): each row's distance from the data's,
     * rounded up; NULL: x holds the data's own rows. */
    const double *r32;
};

/* v as FP64, exactly, on the integer and FP64 pipes instead of XU's
 * conversion (16 an SM a clock): the float's bits placed as a double's
 * (sign, exponent field, fraction shifted up 29) are v 2^-896 exactly,
 * subnormals and zeros included (a subnormal float's fraction becomes a
 * subnormal double's at the same scale), and the product by 2^896 is
 * exact. Other types as exact_w. */
template <class T> __device__ __forceinline__ double exact_w_int(T v)
{
    return exact_w(v);
}
template <> __device__ __forceinline__ double exact_w_int<float>(float v)
{
    const unsigned f = __float_as_uint(v);
    const int hi = (int)((unsigned)((int)f >> 3) & 0x8fffffffu), lo = (int)(f << 29);
    return __dmul_rn(__hiloint2double(hi, lo), 0x1p896);
}
/* Value k of x as FP64, exactly. */
template <class T> __device__ __forceinline__ double exact_x(const T *x, size_t k)
{
    return exact_w(x[k]);
}

/* PAIRS: a kept pair at output slot p, and in slot p + 1 its mirror
 * when w = 2 (a symmetric run's (j, i)). */
__device__ __forceinline__ void exact_put_pair(const exact_dev &o, unsigned long long p, uint32_t i,
                                               uint32_t j, double s, int w)
{
    o.pi[p] = i;
    o.pj[p] = j;
    o.pd[p] = s;
    if (w == 2) {
        o.pi[p + 1] = j;
        o.pj[p + 1] = i;
        o.pd[p + 1] = s;
    }
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
    case KJOIN_PAIRS:
        exact_put_pair(o, atomicAdd(o.nout, (unsigned long long)w), i, j, s, w);
        break;
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
 * and (i, j) stands for both. A pad (i, i, +inf: slots a block reserved
 * and did not fill, epi_band.cuh) is out by any bound, and
 * counted. A cluster layout's padding row's pair with itself is dropped. */
#define EXACT_CLASSIFY_THREADS 256
__global__ void __launch_bounds__(EXACT_CLASSIFY_THREADS)
    exact_classify_kernel(const uint32_t *__restrict__ ci, const uint32_t *__restrict__ cj,
                          const float *__restrict__ cd, unsigned long long np, exact_dev o)
{
    constexpr int WARPS = EXACT_CLASSIFY_THREADS / 32;
    const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    /* The block's entries that need the bound (neither mirrored nor pads)
     * go to its first threads first, so that a warp's FP64 work is done
     * for 32 of them, not for the one or two among mirrored entries and
     * pads (the pads made the classify 3x slower on expo 10^5 x 128). */
    __shared__ uint32_t s_ci[EXACT_CLASSIFY_THREADS], s_cj[EXACT_CLASSIFY_THREADS];
    __shared__ float s_cd[EXACT_CLASSIFY_THREADS];
    __shared__ unsigned s_take[WARPS], s_pad[WARPS];
    bool take = false, pad = false;
    {
        uint32_t i = 0, j = 0;
        float c = 0.0f;
        if (t < np) {
            i = ci[t];
            j = cj[t];
            c = cd[t];
            pad = isinf(c);
            take = !pad && !(o.sym && i > j) &&
                   !(o.origin_of && o.origin_of[i] == KERN_ORIGIN_NONE); /* layout padding */
        }
        const unsigned tm = __ballot_sync(0xffffffffu, take);
        const unsigned pm = __ballot_sync(0xffffffffu, pad);
        if (lane == 0) {
            s_take[wid] = __popc(tm);
            s_pad[wid] = __popc(pm);
        }
        __syncthreads();
        unsigned at = __popc(tm & ((1u << lane) - 1u));
        for (int w = 0; w < wid; w++)
            at += s_take[w];
        if (take) {
            s_ci[at] = i;
            s_cj[at] = j;
            s_cd[at] = c;
        }
        __syncthreads();
    }
    unsigned ntake = 0;
    for (int w = 0; w < WARPS; w++)
        ntake += s_take[w];
    bool list = false, band = false;
    int sure = 0; /* weight of a pair decided in without FP64 */
    uint32_t i = 0, j = 0;
    if (threadIdx.x < ntake) {
        i = s_ci[threadIdx.x];
        j = s_cj[threadIdx.x];
        const int w = o.sym && i != j ? 2 : 1;
        const double dt = fmax((double)s_cd[threadIdx.x], 0.0);
        const double delta = exact_bound_delta_rho(&o.b, o.nrm[i] * o.sc, o.nrm[j] * o.sc, o.rho[i],
                                                   o.rho[j], o.eps_s);
        if (dt <= o.lim2s + delta) {
            band = dt >= o.lim2s - delta;
            bool need = band || (o.mode == KJOIN_PAIRS && !o.ids);
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
    /* The block's counts meet in shared memory and one thread adds them:
     * the counters are shared by the whole grid, and atomics from every
     * warp (some 220 K a run at 10^5 x 128) serialize in L2. */
    __shared__ unsigned s_list[WARPS], s_band[WARPS], s_sure[WARPS];
    __shared__ unsigned long long s_base;
    const unsigned lm = __ballot_sync(0xffffffffu, list), bm = __ballot_sync(0xffffffffu, band);
    unsigned c = sure;
    for (int m = 16; m; m >>= 1)
        c += __shfl_xor_sync(0xffffffffu, c, m);
    if (lane == 0) {
        s_list[wid] = __popc(lm);
        s_band[wid] = __popc(bm);
        s_sure[wid] = c;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned nl = 0, nb = 0, ns = 0, npad = 0;
        for (int w = 0; w < WARPS; w++) {
            const unsigned x = s_list[w];
            s_list[w] = nl; /* the warp's offset in the block's run */
            nl += x;
            nb += s_band[w];
            ns += s_sure[w];
            npad += s_pad[w];
        }
        if (npad)
            atomicAdd(o.pads, (unsigned long long)npad);
        s_base = nl ? atomicAdd(o.nlist, (unsigned long long)nl) : 0;
        if (nl)
            atomicAdd(o.refined, (unsigned long long)nl);
        if (nb)
            atomicAdd(o.band, (unsigned long long)nb);
        if (ns && o.mode == KJOIN_COUNT)
            atomicAdd(o.count, (unsigned long long)ns);
    }
    __syncthreads();
    if (list) {
        const unsigned long long at = s_base + s_list[wid] + __popc(lm & ((1u << lane) - 1u));
        o.li[at] = i;
        o.lj[at] = j;
    }
    /* PAIRS without d2: a pair the bound puts inside goes out now, its w
     * slots reserved once a block (a warp's inclusive sum of w, then the
     * warps' in shared memory); step 3 appends the band's kept pairs. */
    if (o.ids && o.mode == KJOIN_PAIRS) {
        __shared__ unsigned s_emit[WARPS];
        __shared__ unsigned long long s_ebase;
        const unsigned ew = (unsigned)sure;
        unsigned x = ew;
        for (int m = 1; m < 32; m <<= 1) {
            const unsigned y = __shfl_up_sync(0xffffffffu, x, m);
            if (lane >= m)
                x += y;
        }
        if (lane == 31)
            s_emit[wid] = x;
        __syncthreads();
        if (threadIdx.x == 0) {
            unsigned tot = 0;
            for (int w = 0; w < WARPS; w++) {
                const unsigned t = s_emit[w];
                s_emit[w] = tot;
                tot += t;
            }
            s_ebase = tot ? atomicAdd(o.nout, (unsigned long long)tot) : 0;
        }
        __syncthreads();
        if (ew)
            exact_put_pair(o, s_ebase + s_emit[wid] + x - ew, i, j, (double)NAN, (int)ew);
    }
}

/* Step 2, the screen (not PAIRS): each listed pair's d2 summed from its
 * differences in FP32 (long FP64 rows: from their FP32 copies, the
 * range widened by the copies' distances from the data, r32; short FP64
 * rows in FP64), in whatever order is fast:
 * L lanes a pair, each lane reading 16 bytes of each row at a time and
 * adding its squared differences with FMA, then a shuffle tree.
 * exact_screen_range bounds how far fp64's own d2 can lie from that sum
 * (for f32 rows and L = 32 about d / 32 + 7 roundings of 2^-24, relative,
 * where the band is some 10^-3 of eps^2 wide), so nearly every pair is
 * decided here: out, in (COUNT and PERPOINT), or in one histogram bin.
 * The rest go to fp64's order (step 3). This takes the band's FP64 sums
 * off the critical path: one FP32 subtract and FMA an element, no
 * conversion to FP64 (a quarter-rate instruction) and no transposition
 * through shared memory. */
struct exact_screen {
    int L;          /* lanes a pair (a power of two, at most 32) */
    double u, tiny; /* the arithmetic's unit roundoff and smallest subnormal */
    double h;       /* roundings a term passes through at most */
};

/* The screen's arithmetic for a row element type: FP32 holds f32, f16 and
 * u8 values exactly; FP64 rows stay FP64. */
__device__ __forceinline__ float exact_a(float v)
{
    return v;
}
__device__ __forceinline__ float exact_a(__half v)
{
    return __half2float(v);
}
__device__ __forceinline__ float exact_a(uint8_t v)
{
    return (float)v;
}
__device__ __forceinline__ double exact_a(double v)
{
    return v;
}
/* s + (a - b)^2: the difference rounded, then one FMA. */
__device__ __forceinline__ float exact_sq_add(float a, float b, float s)
{
    const float v = __fsub_rn(a, b);
    return __fmaf_rn(v, v, s);
}
__device__ __forceinline__ double exact_sq_add(double a, double b, double s)
{
    const double v = __dsub_rn(a, b);
    return __fma_rn(v, v, s);
}
__device__ __forceinline__ float exact_add(float a, float b)
{
    return __fadd_rn(a, b);
}
__device__ __forceinline__ double exact_add(double a, double b)
{
    return __dadd_rn(a, b);
}

/* V values of T: 16 bytes (p 16-byte aligned) or one. */
template <class T, int V> __device__ __forceinline__ void exact_ldv(const T *p, T (&v)[V])
{
    if constexpr (V == 1) {
        v[0] = p[0];
    } else {
        static_assert(V * sizeof(T) == 16, "a vector is 16 bytes");
        const uint4 w = __ldg((const uint4 *)p);
        memcpy(v, &w, 16);
    }
}

#define EXACT_SCREEN_P 4 /* pairs a lane group sums at once: 8 loads in flight */
template <class T, int V>
__global__ void __launch_bounds__(256) exact_screen_kernel(exact_dev o, exact_screen sc)
{
    typedef decltype(exact_a(T())) A;
    const T *__restrict__ x = (const T *)o.x;
    const int lane = threadIdx.x & 31, L = sc.L, g = lane / L, sub = lane % L, G = 32 / L;
    const unsigned long long n = *o.nlist;
    const size_t nv = o.d / V;
    const unsigned long long step = (unsigned long long)G * EXACT_SCREEN_P;
    const unsigned long long w0 = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned long long nw = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
    /* COUNT's pairs decided in, the lane's over the whole loop: added once
     * a warp at the end (once an iteration, 350 K atomics a run on one
     * counter at d = 784, serialize in L2). */
    unsigned long long c = 0;
    for (unsigned long long b = w0 * step; b < n; b += nw * step) {
        uint32_t pi[EXACT_SCREEN_P], pj[EXACT_SCREEN_P];
        bool ok[EXACT_SCREEN_P];
        A acc[EXACT_SCREEN_P];
#pragma unroll
        for (int p = 0; p < EXACT_SCREEN_P; p++) {
            const unsigned long long t = b + (unsigned long long)p * G + g;
            ok[p] = t < n;
            pi[p] = ok[p] ? o.li[t] : 0; /* row 0 stands in: read, never used */
            pj[p] = ok[p] ? o.lj[t] : 0;
            acc[p] = 0;
        }
        for (size_t v = sub; v < nv; v += L) {
            T va[EXACT_SCREEN_P][V], vb[EXACT_SCREEN_P][V];
#pragma unroll
            for (int p = 0; p < EXACT_SCREEN_P; p++) {
                exact_ldv<T, V>(x + (size_t)pi[p] * o.d + v * V, va[p]);
                exact_ldv<T, V>(x + (size_t)pj[p] * o.d + v * V, vb[p]);
            }
#pragma unroll
            for (int p = 0; p < EXACT_SCREEN_P; p++)
#pragma unroll
                for (int e = 0; e < V; e++)
                    acc[p] = exact_sq_add(exact_a(va[p][e]), exact_a(vb[p][e]), acc[p]);
        }
#pragma unroll
        for (int p = 0; p < EXACT_SCREEN_P; p++) {
            for (int m = L >> 1; m; m >>= 1)
                acc[p] = exact_add(acc[p], __shfl_xor_sync(0xffffffffu, acc[p], m));
            bool seq = false;
            if (ok[p] && sub == 0) {
                const uint32_t i = pi[p], j = pj[p];
                const int w = o.sym && i != j ? 2 : 1;
                const double s = (double)acc[p];
                double lo = -INFINITY, hi = INFINITY;
                /* FP32 copies: the two rows' distances from the data's,
                 * their sum rounded up. */
                const double r = o.r32 ? (o.r32[i] + o.r32[j]) * (1.0 + 0x1p-51) : 0.0;
                if (isfinite(s))
                    exact_screen_range_r(s, sc.u, sc.h, sc.tiny, o.d, r, &lo, &hi);
                if (lo > o.lim2) {
                    /* out */
                } else if (!(hi <= o.lim2)) {
                    seq = true;
                } else if (o.mode == KJOIN_HIST) {
                    /* fp64's d2 lies in [lo, hi]: one bin for all of it
                     * decides it (the slot is monotone in d2). */
                    const int s0 = kern_hist_slot(lo, o.edges, o.nbins);
                    if (s0 == kern_hist_slot(hi, o.edges, o.nbins))
                        atomicAdd(&o.hist[s0], (unsigned long long)w);
                    else
                        seq = true;
                } else if (o.mode == KJOIN_PERPOINT) {
                    atomicAdd(&o.counts[i - o.q0], 1ull);
                    if (w == 2)
                        atomicAdd(&o.counts[j - o.q0], 1ull);
                } else {
                    c += w;
                }
            }
            const unsigned sm = __ballot_sync(0xffffffffu, seq);
            if (sm) {
                unsigned long long base = 0;
                if (lane == 0)
                    base = atomicAdd(o.nseq, (unsigned long long)__popc(sm));
                base = __shfl_sync(0xffffffffu, base, 0);
                if (seq) {
                    const unsigned long long at = base + __popc(sm & ((1u << lane) - 1u));
                    o.si[at] = pi[p];
                    o.sj[at] = pj[p];
                }
            }
        }
    }
    if (o.mode == KJOIN_COUNT) { /* every lane ran the loop's iterations (b is the warp's) */
        for (int m = 16; m; m >>= 1)
            c += __shfl_xor_sync(0xffffffffu, c, m);
        if (lane == 0 && c)
            atomicAdd(o.count, c);
    }
}

/* A warp's 32 pairs decided (lanes past the list's end keep nothing):
 * COUNT adds the warp's weights once, the other modes keep each pair. */
__device__ __forceinline__ void exact_warp_out(const exact_dev &o, bool keep, uint32_t i,
                                               uint32_t j, double s)
{
    const int w = o.sym && i != j ? 2 : 1;
    const int lane = threadIdx.x & 31;
    if (o.mode == KJOIN_COUNT) {
        unsigned long long c = keep ? w : 0;
        for (int sh = 16; sh; sh >>= 1)
            c += __shfl_xor_sync(0xffffffffu, c, sh);
        if (lane == 0 && c)
            atomicAdd(o.count, c);
    } else if (o.mode == KJOIN_PAIRS) {
        /* Every kept pair of a PAIRS run passes here, so the output slots
         * are taken once a warp: an atomic a pair on the one counter
         * serializes in L2 (3.5 M a run at 10^5 x 128). A lane's slots
         * follow those of the lanes below it, so the warp writes one run. */
        const unsigned k1 = __ballot_sync(0xffffffffu, keep),
                       k2 = __ballot_sync(0xffffffffu, keep && w == 2);
        if (!k1)
            return;
        unsigned long long p = 0;
        if (lane == 0)
            p = atomicAdd(o.nout, (unsigned long long)(__popc(k1) + __popc(k2)));
        p = __shfl_sync(0xffffffffu, p, 0);
        if (!keep)
            return;
        const unsigned below = (1u << lane) - 1u;
        exact_put_pair(o, p + __popc(k1 & below) + __popc(k2 & below), i, j, s, w);
    } else if (keep) {
        exact_keep(o, i, j, s, w);
    }
}

/* Step 3 where a row may start unaligned (exact_fp64_cp_kernel below
 * takes rows that all start 16-byte aligned), a warp per 32 listed pairs:
 * d2 with the fp64 engine's arithmetic (direct (a-b)^2, dimension order,
 * no contraction), so the decision and the distance are fp64's. The warp
 * reads the pairs' rows EXACT_DIMS dimensions at a time, each lane V
 * values (EXACT_DIMS / V lanes a pair), writes their (a-b)^2 to shared
 * memory, and each lane then adds its own pair's terms in order. The
 * kernel waits on its rows' reads, so what counts is how
 * many reads an SM keeps in flight: 16 dimensions at a time need 18 KB of
 * shared memory a block, so 8 blocks fit (64 registers a thread; 32 at a
 * time fitted 6): exact PAIRS on FP64 rows took 12% less time at d = 784
 * and 4096 (H100, docs/ACCURACY.md), on f32 rows 2-4%. (A thread per pair walking
 * its own rows measured 1.25-1.8x slower on FP64 rows: every load of a
 * warp then touches 64 different lines; one value a lane, as before
 * 16-byte loads, issued four times the loads and shuffles.) */
#define EXACT_WARPS 4
#define EXACT_DIMS 16
#define EXACT_FP64_BLOCKS 8 /* blocks an SM: 64 registers a thread */
template <class T, int V>
__global__ void __launch_bounds__(EXACT_WARPS * 32, EXACT_FP64_BLOCKS)
    exact_fp64_kernel(const uint32_t *__restrict__ li, const uint32_t *__restrict__ lj,
                      const unsigned long long *__restrict__ nlist, unsigned long long few,
                      exact_dev o)
{
    const T *__restrict__ x = (const T *)o.x;
    /* Rows of C + 2: 16-byte aligned for two-term stores and reads, and a
     * quarter warp's 16-byte reads of 8 rows fall in distinct banks. */
    constexpr int C = EXACT_DIMS;
    static_assert(C % V == 0 && C % 2 == 0, "whole vectors and two-term reads a row");
    __shared__ __align__(16) double u2[EXACT_WARPS][32][C + 2];
    /* Lanes a pair's C values, pairs a load, loads for 32 pairs, and how
     * many of each row at once: eight of one value, four of 16 bytes
     * (more would cost occupancy in registers). */
    constexpr int LP = C / V, PL = 32 / LP, NI = 32 / PL;
    constexpr int IG = V == 1 ? 8 : NI < 4 ? NI : 4;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5, sub = lane % LP, pg = lane / LP;
    const unsigned long long n = *nlist;
    if (n <= few) /* exact_fp64_pair_kernel's */
        return;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(o.seq, n);
    const unsigned long long stride = (unsigned long long)gridDim.x * EXACT_WARPS * 32;
    double(*u)[C + 2] = u2[wid];
    for (unsigned long long b = ((unsigned long long)blockIdx.x * EXACT_WARPS + wid) * 32; b < n;
         b += stride) {
        const int m = n - b < 32 ? (int)(n - b) : 32;
        const uint32_t i = lane < m ? li[b + lane] : 0, j = lane < m ? lj[b + lane] : 0;
        double s = 0;
        for (size_t k0 = 0; k0 < o.d; k0 += C) {
            const int kn = o.d - k0 < C ? (int)(o.d - k0) : C;
            const bool kin = sub * V < kn; /* d is a multiple of V */
            /* IG loads of each row issued before any is used: the kernel
             * waits on memory, so it keeps many reads in flight. */
            for (int i0 = 0; i0 < NI && i0 * PL < m; i0 += IG) {
                T va[IG][V] = {}, vb[IG][V] = {}; /* zeros where nothing is read */
#pragma unroll
                for (int q = 0; q < IG; q++) {
                    const int p = (i0 + q) * PL + pg;
                    const size_t ip = __shfl_sync(0xffffffffu, i, p),
                                 jp = __shfl_sync(0xffffffffu, j, p);
                    if (p < m && kin) {
                        exact_ldv<T, V>(x + ip * o.d + k0 + sub * V, va[q]);
                        exact_ldv<T, V>(x + jp * o.d + k0 + sub * V, vb[q]);
                    }
                }
#pragma unroll
                for (int q = 0; q < IG; q++) {
                    const int p = (i0 + q) * PL + pg;
                    double t[V];
#pragma unroll
                    for (int e = 0; e < V; e++) {
                        const double v = __dsub_rn(exact_w(va[q][e]), exact_w(vb[q][e]));
                        t[e] = __dmul_rn(v, v);
                    }
                    if constexpr (V == 1) {
                        u[p][sub] = t[0];
                    } else {
#pragma unroll
                        for (int e = 0; e < V; e += 2)
                            *(double2 *)&u[p][sub * V + e] = make_double2(t[e], t[e + 1]);
                    }
                }
            }
            __syncwarp();
            if (lane < m) {
                const double *r = u[lane];
                int q = 0;
                for (; q + 1 < kn; q += 2) {
                    const double2 w = *(const double2 *)(r + q);
                    s = __dadd_rn(s, w.x);
                    s = __dadd_rn(s, w.y);
                }
                if (q < kn)
                    s = __dadd_rn(s, r[q]);
            }
            __syncwarp();
        }
        exact_warp_out(o, lane < m && s <= o.lim2, i, j, s);
    }
}

/* Step 3 where every row starts 16-byte aligned: a warp per 32 listed
 * pairs, each lane summing its own pair's terms in fp64's order from rows
 * the warp copies into shared memory a step ahead (cp.async, SEG bytes of
 * each of its 64 rows a step, STAGES steps in flight). Nothing is staged
 * in registers, so the copies of step s + 1 are in flight while step s is
 * summed; exact_fp64_kernel's loads into registers spilled at the
 * occupancy its waits on memory need (ncu, H200, PAIRS d = 4096 f32:
 * 5.3 M local requests a launch, L1 75% busy, DRAM 26%). A segment takes
 * SEG + 16 bytes, so the owners' 16-byte reads (lane p reads row p) fall
 * in distinct banks. Rows are read through L1 (.ca): in a sorted list
 * most of a warp's pairs share their first row, which the warp copies
 * once for all of them (the run's leader's segment, read by its lanes as
 * a broadcast). What bounded it (ncu, H200, the same launch): no single
 * unit, DRAM 51%, L2 72%, L1 69%, the XU pipe 60% (each (double) of a
 * float is an XU conversion, 16 an SM a clock); building both FP64
 * images from the floats' bits instead (exact_w_int: ALU and one FP64
 * multiply) empties the XU pipe but is slower at d = 4096, so one
 * conversion a term goes each way. On the MNIST-like curve's PAIRS run at
 * d = 784 (ncu, H200) copying the first rows once takes L1 from 76% to
 * 58% busy (XU 60% to 62%); one conversion a term on the integer and FP64
 * pipes then gives L1 63%, XU 34%, FP64 33%, issue 57%; each step makes
 * a launch a little faster (docs/history/BENCHMARKS-2026-11.md). */
template <int WARPS, int SEG, int STAGES> struct exact_cp_cfg {
    static constexpr int warps = WARPS, seg = SEG, stages = STAGES;
    static constexpr int rs = SEG + 16; /* a segment's bytes in shared memory */
    static constexpr int buf = 64 * rs; /* one step of one warp: 32 pairs, two rows */
    static constexpr int smem = WARPS * STAGES * buf;
};
template <class T, class G>
__global__ void __launch_bounds__(G::warps * 32)
    exact_fp64_cp_kernel(const uint32_t *__restrict__ li, const uint32_t *__restrict__ lj,
                         const unsigned long long *__restrict__ nlist, unsigned long long few,
                         exact_dev o)
{
    extern __shared__ __align__(16) unsigned char exact_cp_smem[];
    constexpr int V = 16 / (int)sizeof(T);     /* values a 16-byte copy */
    constexpr int C = G::seg / (int)sizeof(T); /* dimensions a step */
    constexpr int LP = G::seg / 16;            /* copies a segment */
    constexpr int NR = 64 * LP / 32;           /* copies a lane a step */
    const T *__restrict__ x = (const T *)o.x;
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    const int part = lane % LP;  /* the lane's 16 bytes of a segment */
    const int pl = lane / LP;    /* the lane's first segment */
    constexpr int SPR = 32 / LP; /* segments a round of copies */
    const unsigned long long n = *nlist;
    if (n <= few) /* exact_fp64_pair_kernel's */
        return;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(o.seq, n);
    const size_t d = o.d;
    const int steps = (int)((d + C - 1) / C);
    const uint32_t sw = smem_u32(exact_cp_smem) + (uint32_t)(wid * G::stages * G::buf);
    const unsigned char *swp = exact_cp_smem + wid * G::stages * G::buf;
    const unsigned long long stride = (unsigned long long)gridDim.x * G::warps * 32;
    for (unsigned long long b = ((unsigned long long)blockIdx.x * G::warps + wid) * 32; b < n;
         b += stride) {
        const int m = n - b < 32 ? (int)(n - b) : 32;
        const uint32_t i = lane < m ? li[b + lane] : 0, j = lane < m ? lj[b + lane] : 0;
        /* A first row is copied once for the pairs in a row that share it
         * (a sorted list's pairs mostly do): the lanes of such a run read
         * its leader's segment, a broadcast. */
        const uint32_t iup = __shfl_up_sync(0xffffffffu, i, 1);
        const unsigned leads = __ballot_sync(0xffffffffu, lane == 0 || i != iup);
        const int lead = 31 - __clz(leads & (0xffffffffu >> (31 - lane)));
        /* Copy r of a step: segment pl + SPR r, i.e. pair (that) mod 32, its
         * first row below 32 (a run's leader's only) and its second from 32. */
        const T *src[NR];
        uint32_t dst[NR];
        bool ok[NR];
#pragma unroll
        for (int r = 0; r < NR; r++) {
            const int sg = pl + SPR * r, pp = sg & 31;
            const uint32_t ri = __shfl_sync(0xffffffffu, i, pp),
                           rj = __shfl_sync(0xffffffffu, j, pp);
            src[r] = x + (size_t)(sg < 32 ? ri : rj) * d + part * V;
            dst[r] = (uint32_t)(sg * G::rs + part * 16);
            ok[r] = pp < m && (sg >= 32 || (leads >> pp & 1u));
        }
        auto issue = [&](int st) {
            if (st < steps) {
                const size_t k0 = (size_t)st * C;
                const uint32_t base = sw + (uint32_t)((st % G::stages) * G::buf);
                if (k0 + part * V < d) {
#pragma unroll
                    for (int r = 0; r < NR; r++)
                        if (ok[r])
                            cp_async_ca_16(base + dst[r], src[r] + k0);
                }
            }
            cp_async_commit(); /* empty past the last step: the count stays uniform */
        };
#pragma unroll
        for (int st = 0; st < G::stages - 1; st++)
            issue(st);
        double s = 0;
        for (int st = 0; st < steps; st++) {
            issue(st + G::stages - 1);
            cp_async_wait_group<G::stages - 1>();
            __syncwarp();
            if (lane < m) {
                const unsigned char *stage = swp + (st % G::stages) * G::buf;
                const unsigned char *ra = stage + lead * G::rs, *rb = stage + (32 + lane) * G::rs;
                const int kn = d - (size_t)st * C < (size_t)C ? (int)(d - (size_t)st * C) : C;
                for (int k = 0; k < kn; k += V) { /* d is a multiple of V */
                    const uint4 qa = *(const uint4 *)(ra + k * sizeof(T));
                    const uint4 qb = *(const uint4 *)(rb + k * sizeof(T));
                    T va[V], vb[V];
                    memcpy(va, &qa, 16);
                    memcpy(vb, &qb, 16);
#pragma unroll
                    for (int e = 0; e < V; e++) { /* the two conversions on two pipes */
                        const double v = __dsub_rn(exact_w_int(va[e]), exact_w(vb[e]));
                        s = __dadd_rn(s, __dmul_rn(v, v));
                    }
                }
            }
            __syncwarp(); /* every lane has read the stage before it is copied over */
        }
        exact_warp_out(o, lane < m && s <= o.lim2, i, j, s);
    }
}

/* Step 3 for a short list (the screen's leftovers: a few hundred pairs a
 * launch, each near a tie): a block a pair. The warp kernel above keeps a
 * warp's 32 pairs waiting one memory round trip per EXACT_DIMS dimensions, which
 * nothing hides when the list holds a few warps' pairs (at d = 4096, some
 * 10,000 pairs left from 1.4 million took longer than screening all of
 * them). Here the block's threads form a pair's terms for up to
 * EXACT_CHUNK dimensions at once, and one thread adds them in order: the
 * same arithmetic. */
#define EXACT_CHUNK 2048
/* One pair's d2 in fp64's arithmetic by the whole block (u: EXACT_CHUNK
 * doubles of shared memory), and its outputs. */
template <class T, int V>
__device__ __forceinline__ void exact_fp64_pair(const T *__restrict__ x, uint32_t i, uint32_t j,
                                                double *u, const exact_dev &o)
{
    const T *a = x + (size_t)i * o.d, *b = x + (size_t)j * o.d;
    double s = 0;
    for (size_t k0 = 0; k0 < o.d; k0 += EXACT_CHUNK) {
        const int kn = o.d - k0 < EXACT_CHUNK ? (int)(o.d - k0) : EXACT_CHUNK;
        for (int k = threadIdx.x * V; k < kn; k += blockDim.x * V) {
            T va[V], vb[V];
            exact_ldv<T, V>(a + k0 + k, va);
            exact_ldv<T, V>(b + k0 + k, vb);
#pragma unroll
            for (int e = 0; e < V; e++) {
                const double v = __dsub_rn(exact_w(va[e]), exact_w(vb[e]));
                u[k + e] = __dmul_rn(v, v);
            }
        }
        __syncthreads();
        if (threadIdx.x == 0)
            for (int k = 0; k < kn; k++)
                s = __dadd_rn(s, u[k]);
        __syncthreads();
    }
    if (threadIdx.x == 0 && s <= o.lim2) {
        const int w = o.sym && i != j ? 2 : 1;
        if (o.mode == KJOIN_COUNT)
            atomicAdd(o.count, (unsigned long long)w);
        else
            exact_keep(o, i, j, s, w);
    }
}
template <class T, int V>
__global__ void __launch_bounds__(128)
    exact_fp64_pair_kernel(const uint32_t *__restrict__ li, const uint32_t *__restrict__ lj,
                           const unsigned long long *__restrict__ nlist, unsigned long long few,
                           exact_dev o)
{
    const T *__restrict__ x = (const T *)o.x;
    __shared__ __align__(16) double u[EXACT_CHUNK];
    const unsigned long long n = *nlist;
    if (n > few || n == 0) /* exact_fp64_kernel's, or nothing */
        return;
    if (blockIdx.x == 0 && threadIdx.x == 0)
        atomicAdd(o.seq, n);
    for (unsigned long long t = blockIdx.x; t < n; t += gridDim.x)
        exact_fp64_pair<T, V>(x, li[t], lj[t], u, o);
}

#endif
