/* The body of one instruction set's kernels (see cpu_simd.h), included
 * once by each src/cpu_simd_<isa>.c after it defines:
 *   CS_VW   FP64 lanes per vector (the FP32 vectors are as wide in bytes)
 *   CS_R64  query rows per FP64 call, CS_R32 per FP32 call
 *   CS_FN(x) the path's function names
 *   CS_ABOVE(v, lim) a bit per lane of the cs_vd v, set where v > lim
 *            (NaN: clear), as an unsigned: the short-circuit test, which
 *            generic vector code turns into slow lane extraction
 *   CS_LE(v, lim)    likewise where v <= lim (NaN: clear), for counting
 *   CS_NGTF(v, lim)  a bit per lane of the cs_vf v where v > lim is false
 *            (NaN: set), for cpu-exact's screen
 * Written with GCC vector extensions so that the compiler, under the file's
 * target, picks the instructions; each lane is one candidate summed in k
 * order, so every path gives the scalar bits.
 *
 * Flops: the FP64 form costs 3 per dimension and pair (a-b, u*u, s+u) in
 * 3 vector instructions, none of them an FMA (fusing u*u + s would change
 * the bits of the ground truth). Peak counts an FMA as 2 flops per lane.
 * On a core with 2 FMA pipes and 2 separate add pipes (Zen 4/5) the 2 adds
 * and the multiply of one dimension issue in one cycle per vector: 3 flops
 * per lane where the FMA peak counts 4, so 75% of peak is this form's
 * limit (measured: docs/BENCHMARKS.md, CPU). Where adds share the 2
 * FMA pipes (Intel before Golden Cove) the 3 instructions take 1.5 cycles
 * per vector: 2 flops per lane and cycle against 4, 50%.
 */
#ifndef CS_VW
#error "define CS_VW, CS_R64, CS_R32 and CS_FN before including cpu_simd_body.h"
#endif

#include <string.h>

#include "cpu_join.h"
#include "cpu_simd.h"

typedef double cs_vd __attribute__((vector_size(CS_VW * 8)));
typedef float cs_vf __attribute__((vector_size(CS_VW * 8)));

#define CS_NV (CPU_GROUP / CS_VW)        /* FP64 vectors per group */
#define CS_NVF (CPU_GROUP / (2 * CS_VW)) /* FP32 vectors per group */
/* Dimensions between short-circuit checks (as the scalar code always did). */
#define CS_STEP 16

_Static_assert(CPU_GROUP % CS_VW == 0 && CS_NVF >= 1, "a group is whole vectors");
_Static_assert(CS_R64 <= CPU_SIMD_MAX_ROWS && CS_R32 <= CPU_SIMD_MAX_ROWS, "rows per call");

/* R rows x CS_NV vectors of independent sums: enough chains to hide the
 * adder's latency, and each candidate vector, loaded once, serves every
 * row. Rows past nr repeat row 0 (their results are not stored). R is a
 * constant in each caller's inlined copy: CS_R64, or 1 for one row (the
 * k-d tree's searches), which then does a quarter of the work, not all. */
static inline __attribute__((always_inline)) void
CS_FN(f64_r)(const double *a, size_t nr, size_t d, const double *p, size_t nc, double lim,
             double *out, size_t ostride, uint64_t *cnt, const size_t R)
{
    const double *ar[CS_R64];
    for (size_t r = 0; r < R; r++)
        ar[r] = a + (r < nr ? r : 0) * d;
    for (size_t g = 0; g * CPU_GROUP < nc; g++, p += d * CPU_GROUP, out += CPU_GROUP) {
        cs_vd s[CS_R64][CS_NV];
        /* assigned, not memset: a memset of the array became rep stos */
#pragma GCC unroll 8
        for (size_t r = 0; r < R; r++)
#pragma GCC unroll 8
            for (size_t v = 0; v < CS_NV; v++)
                s[r][v] = (cs_vd){0};
        size_t k = 0;
        while (k < d) {
            size_t kend = k + CS_STEP < d ? k + CS_STEP : d;
            for (; k < kend; k++) {
                const cs_vd *b = (const cs_vd *)(p + k * CPU_GROUP);
#pragma GCC unroll 8
                for (size_t r = 0; r < R; r++) {
                    const double ak = ar[r][k];
#pragma GCC unroll 8
                    for (size_t v = 0; v < CS_NV; v++) {
                        cs_vd u = ak - b[v];
                        s[r][v] += u * u;
                    }
                }
            }
            if (k < d) {
                unsigned all = (1u << CS_VW) - 1;
#pragma GCC unroll 8
                for (size_t r = 0; r < R; r++)
#pragma GCC unroll 8
                    for (size_t v = 0; v < CS_NV; v++)
                        all &= CS_ABOVE(s[r][v], lim);
                if (all == (1u << CS_VW) - 1)
                    break;
            }
        }
        if (cnt) {
            /* lanes past nc are padding */
            size_t left = nc - g * CPU_GROUP;
#pragma GCC unroll 8
            for (size_t v = 0; v < CS_NV; v++) {
                size_t in = left > v * CS_VW ? left - v * CS_VW : 0;
                unsigned valid = in >= CS_VW ? (1u << CS_VW) - 1 : (1u << in) - 1;
                for (size_t r = 0; r < nr; r++)
                    cnt[r] += (uint64_t)__builtin_popcount(CS_LE(s[r][v], lim) & valid);
            }
        } else {
            for (size_t r = 0; r < nr; r++)
                memcpy(out + r * ostride, s[r], sizeof s[r]);
        }
    }
}

static void CS_FN(f64)(const double *a, size_t nr, size_t d, const double *p, size_t nc, double lim,
                       double *out, size_t ostride, uint64_t *cnt)
{
    if (nr == 1)
        CS_FN(f64_r)(a, nr, d, p, nc, lim, out, ostride, cnt, 1);
    else
        CS_FN(f64_r)(a, nr, d, p, nc, lim, out, ostride, cnt, CS_R64);
}

/* The squared gap between point x and the box [lo, hi] (d values each):
 * per dimension how far x lies outside, squared, summed a vector at a time
 * (the order differs from a scalar loop's: kd_tree.shrink's margin holds
 * for any order). */
static double CS_FN(gap2)(const double *x, const double *lo, const double *hi, size_t d)
{
    typedef long long cs_vm __attribute__((vector_size(CS_VW * 8)));
    cs_vd acc = {0};
    size_t k = 0;
    for (; k + CS_VW <= d; k += CS_VW) {
        cs_vd vx, vl, vh;
        memcpy(&vx, x + k, sizeof vx);
        memcpy(&vl, lo + k, sizeof vl);
        memcpy(&vh, hi + k, sizeof vh);
        const cs_vd below = vl - vx, above = vx - vh;
        /* at most one of them is positive (lo <= hi) */
        const cs_vm mb = below > 0, ma = above > 0;
        cs_vm gi, bi, ai;
        memcpy(&bi, &below, sizeof bi);
        memcpy(&ai, &above, sizeof ai);
        gi = (bi & mb) | (ai & ma);
        cs_vd g;
        memcpy(&g, &gi, sizeof g);
        acc += g * g;
    }
    double s = 0;
    for (size_t v = 0; v < CS_VW; v++)
        s = s + acc[v];
    for (; k < d; k++) {
        const double g = lo[k] > x[k] ? lo[k] - x[k] : x[k] > hi[k] ? x[k] - hi[k] : 0;
        s = s + g * g;
    }
    return s;
}

/* The k-d tree's test for a batch of query rows (src/kd_tree.h): xt holds
 * row r's value k at xt[k * stride + r] (stride a multiple of CS_VW);
 * for the rows of mask, a vector of rows at a time, the squared gap to
 * the box [lo, hi] summed in dimension order; the rows whose gap times
 * shrink exceeds lim[r] leave the mask, which is returned. */
static uint32_t CS_FN(box_live)(const double *xt, size_t stride, uint32_t mask, const double *lo,
                                const double *hi, size_t d, const double *lim, double shrink)
{
    typedef long long cs_vm __attribute__((vector_size(CS_VW * 8)));
    enum { NV = 32 / CS_VW };
    const uint32_t lanes = (uint32_t)((1ull << CS_VW) - 1);
    /* the vectors of rows with a row in the mask, summed side by side
     * (independent chains: the adder's latency hidden) */
    size_t use[NV], nu = 0;
    for (size_t v = 0; v < NV && v * CS_VW < stride; v++)
        if ((mask >> (v * CS_VW)) & lanes)
            use[nu++] = v;
    cs_vd acc[NV];
    for (size_t u = 0; u < nu; u++)
        acc[u] = (cs_vd){0};
    for (size_t k = 0; k < d; k++) {
        const double l = lo[k], h = hi[k];
        for (size_t u = 0; u < nu; u++) {
            cs_vd x;
            memcpy(&x, xt + k * stride + use[u] * CS_VW, sizeof x);
            const cs_vd below = l - x, above = x - h;
            const cs_vm mb = below > 0, ma = above > 0;
            cs_vm bi, ai;
            memcpy(&bi, &below, sizeof bi);
            memcpy(&ai, &above, sizeof ai);
            const cs_vm gi = (bi & mb) | (ai & ma);
            cs_vd g;
            memcpy(&g, &gi, sizeof g);
            acc[u] = acc[u] + g * g;
        }
    }
    for (size_t u = 0; u < nu; u++) {
        const size_t v = use[u];
        for (uint32_t mm = (mask >> (v * CS_VW)) & lanes; mm; mm &= mm - 1) {
            const int l = __builtin_ctz(mm);
            if (acc[u][l] * shrink > lim[v * CS_VW + l])
                mask &= ~(1u << (v * CS_VW + l));
        }
    }
    return mask;
}

/* The FP32 dot product: acc + (a*b), product rounded first, k in order. */
static void CS_FN(f32)(const float *a, size_t nr, size_t d, const float *p, size_t ng, float *dot,
                       size_t ostride)
{
    const float *ar[CS_R32];
    for (size_t r = 0; r < CS_R32; r++)
        ar[r] = a + (r < nr ? r : 0) * d;
    for (size_t g = 0; g < ng; g++, p += d * CPU_GROUP, dot += CPU_GROUP) {
        cs_vf acc[CS_R32][CS_NVF];
#pragma GCC unroll 8
        for (size_t r = 0; r < CS_R32; r++)
#pragma GCC unroll 8
            for (size_t v = 0; v < CS_NVF; v++)
                acc[r][v] = (cs_vf){0};
        for (size_t k = 0; k < d; k++) {
            const cs_vf *b = (const cs_vf *)(p + k * CPU_GROUP);
#pragma GCC unroll 8
            for (size_t r = 0; r < CS_R32; r++) {
                const float ak = ar[r][k];
#pragma GCC unroll 8
                for (size_t v = 0; v < CS_NVF; v++)
                    acc[r][v] += ak * b[v];
            }
        }
        for (size_t r = 0; r < nr; r++)
            memcpy(dot + r * ostride, acc[r], sizeof acc[r]);
    }
}

/* cpu-exact's screen: the dot products of CS_FN(f32) for one group, then
 * d~2 = (sa + sb) - 2 dot per lane and the lanes not above the row's
 * limit, without a pass of scalar code over the 16 lanes. */
static void CS_FN(f32_screen)(const float *a, size_t nr, size_t d, const float *p, const float *sa,
                              const float *sb, const float *lim, float *dot, size_t ostride,
                              uint32_t *live)
{
    const float *ar[CS_R32];
    for (size_t r = 0; r < CS_R32; r++)
        ar[r] = a + (r < nr ? r : 0) * d;
    cs_vf acc[CS_R32][CS_NVF];
#pragma GCC unroll 8
    for (size_t r = 0; r < CS_R32; r++)
#pragma GCC unroll 8
        for (size_t v = 0; v < CS_NVF; v++)
            acc[r][v] = (cs_vf){0};
    for (size_t k = 0; k < d; k++) {
        const cs_vf *b = (const cs_vf *)(p + k * CPU_GROUP);
#pragma GCC unroll 8
        for (size_t r = 0; r < CS_R32; r++) {
            const float ak = ar[r][k];
#pragma GCC unroll 8
            for (size_t v = 0; v < CS_NVF; v++)
                acc[r][v] += ak * b[v];
        }
    }
    cs_vf bv[CS_NVF];
    memcpy(bv, sb, sizeof bv);
    for (size_t r = 0; r < nr; r++) {
        uint32_t m = 0;
#pragma GCC unroll 8
        for (size_t v = 0; v < CS_NVF; v++) {
            const cs_vf f = (sa[r] + bv[v]) - 2.0f * acc[r][v];
            m |= (uint32_t)CS_NGTF(f, lim[r]) << (v * 2 * CS_VW);
        }
        live[r] = m;
        memcpy(dot + r * ostride, acc[r], sizeof acc[r]);
    }
}
