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

/* CS_R64 rows x CS_NV vectors of independent sums: enough chains to hide
 * the adder's latency, and each candidate vector, loaded once, serves
 * every row. Rows past nr repeat row 0 (their results are not stored). */
static void CS_FN(f64)(const double *a, size_t nr, size_t d, const double *p, size_t nc, double lim,
                       double *out, size_t ostride, uint64_t *cnt)
{
    const double *ar[CS_R64];
    for (size_t r = 0; r < CS_R64; r++)
        ar[r] = a + (r < nr ? r : 0) * d;
    for (size_t g = 0; g * CPU_GROUP < nc; g++, p += d * CPU_GROUP, out += CPU_GROUP) {
        cs_vd s[CS_R64][CS_NV];
        /* assigned, not memset: a memset of the array became rep stos */
#pragma GCC unroll 8
        for (size_t r = 0; r < CS_R64; r++)
#pragma GCC unroll 8
            for (size_t v = 0; v < CS_NV; v++)
                s[r][v] = (cs_vd){0};
        size_t k = 0;
        while (k < d) {
            size_t kend = k + CS_STEP < d ? k + CS_STEP : d;
            for (; k < kend; k++) {
                const cs_vd *b = (const cs_vd *)(p + k * CPU_GROUP);
#pragma GCC unroll 8
                for (size_t r = 0; r < CS_R64; r++) {
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
                for (size_t r = 0; r < CS_R64; r++)
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
