/* Number formats of the tensor-core join. A format is a traits struct in
 * its instance file kernels/fmt_NAME.cu:
 *
 *   struct fmt_NAME {
 *       typedef ... elem;                    storage type on the device
 *       static constexpr const char *name;   "bf16"
 *       static constexpr int min_cc;         compute capability of its mma.sync
 *       __device__ static elem from_float(float x);  the format's rounding of
 *                                            an FP32 value (the host rounds FP64
 *                                            to FP32 to odd first, so the result
 *                                            is the format's rounding of the FP64
 *                                            value whenever the format has at
 *                                            most 22 significand bits)
 *       __device__ static float to_float(elem v);
 *       __device__ static float norm_add(float s, float v);  one step of the
 *                                            squared norm, in the arithmetic
 *                                            that matches the products
 *       __device__ static void mma(float (&d)[4], const uint32_t (&a)[4],
 *                                  const uint32_t (&b)[2]);  32 bytes of k
 *       __device__ static void wgmma(float (&d)[128], uint64_t da, uint64_t db);
 *       static constexpr int value_log2;     the device values are the data times
 *                                            2^value_log2 (kern_format.value_log2)
 *       static constexpr bool widen;         stored in 8 bits, multiplied as FP16
 *                                            (the unsigned formats, fmt_ue8.cu):
 *                                            mma gets 32 bytes of codes and widens
 *                                            them itself; the wgmma kernel stages
 *                                            the codes and widens them in shared
 *                                            memory (fasted_wgmma.cuh), wgmma then
 *                                            takes FP16 tiles
 *       (the accumulator and distance: fasted_fp32_acc below, or the
 *        integer formats' own)
 *       static constexpr const kern_format *rows_of;  optional, for kernels
 *                                            that change only the kernels
 *                                            (exact_kern.cuh): the handle whose
 *                                            rows they read, converted and
 *                                            normed by that one's ops
 *                                            (fasted_rows_of)
 *   };
 *
 * and one descriptor, kern_fmt_NAME (kernels.h's kern_format), built with
 * FASTED_FORMAT_OPS below. Nothing else in kernels/ names a format. */
#ifndef TCJ_FASTED_FORMAT_CUH
#define TCJ_FASTED_FORMAT_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#include <type_traits>

#include "fasted_int.cuh"
#include "kernels.h"
#include "ptx.cuh"

/* The accumulator and distance of the formats with FP32 accumulation
 * (every format but the integer ones derives from it):
 *   acc    the accumulator's register type;
 *   dist   the type d2 is formed and compared in;
 *   d2     from the dot product a and the squared norms (stored in p.s as
 *          the format's norm_add formed them): RN(RN(s_i + s_j) - 2a),
 *          clamped at 0;
 *   thr    the threshold a pair is kept at (d2 <= thr);
 *   le_mask  all ones when d2 <= t, else 0, without forming d2 (FP32
 *          accumulators only: the epilogue's interior counts subtract
 *          it, one compare a pair);
 *   to_f   the FP32 value written for a pair (PAIRS), binned (HIST) and
 *          ranked (k-distance);
 *   to_acc / from_acc  keep a d2 in an accumulator register (the mma.sync
 *          PAIRS pass does it in place).
 * promote  P > 0 when the wgmma kernel sums chunks of P k slices in the
 *          tensor core and adds each into FP32 registers (F::wgmma_half,
 *          an m64n128 instruction: fasted_wg_promote); 0 when the tensor
 *          core's own accumulation is FP32 (or, for a format's kernels
 *          without promotion, ops.wg_func_fast, when it is not).
 * int_dist 1 when d2 is an exact integer and thr is p.eps2_u (the host
 *          sets it), 0 when thr is p.eps2.
 *
 * Nothing here is an engine's choice: the kernels' options (the warpgroups'
 * turns, exact's band epilogue) are read through fasted_turns and
 * fasted_band below, false for every format, and set by the kernels that
 * choose them (exact's, kernels/exact_kern.cuh). */
struct fasted_fp32_acc {
    typedef float acc;
    static constexpr int promote = 0;
    typedef float dist;
    static constexpr int int_dist = 0;
    static constexpr bool widen = false;
    static constexpr int value_log2 = 0;
    __device__ static float d2(float a, float si, float sj)
    {
        return fmaxf(__fmaf_rn(-2.0f, a, __fadd_rn(si, sj)), 0.0f);
    }
    __device__ static float thr(const fasted_params &p)
    {
        return p.eps2;
    }
    /* d2 <= t without the clamp: for t >= 0, max(x, 0) <= t is x <= t, or
     * x NaN (max takes the other operand), which is set.leu (true when
     * unordered); for t < 0 nothing is in, and x <= -Inf is false for
     * every finite x. A NaN or infinite x arises only from values FP16
     * cannot hold (fasted's threshold eps2 is never negative; exact's
     * pass holds only finite values), so the mask is d2 <= t exactly.
     * ptxas makes it FSETP + SEL, the count an IADD3 per two masks: the
     * clamp's FMNMX and the increment go (measured: docs/BENCHMARKS.md). */
    __device__ static unsigned le_mask(float a, float si, float sj, float t)
    {
        const float x = __fmaf_rn(-2.0f, a, __fadd_rn(si, sj));
        const float u = t >= 0.0f ? t : -__int_as_float(0x7f800000);
        return set_leu_u32_f32(x, u);
    }
    __device__ static float to_f(float d)
    {
        return d;
    }
    __device__ static float to_acc(float d)
    {
        return d;
    }
    __device__ static float from_acc(float a)
    {
        return a;
    }
};

/* Kernel options beside a format's traits (exact_kern.cuh sets them):
 * F::turns with promote, the two consumer warpgroups take turns issuing
 * their chunks (fasted_wg_promote), so one's wait and adds overlap the
 * other's products (it pays for FP16's chunks, not FP8's, half as long:
 * docs/BENCHMARKS.md); F::band, the PAIRS epilogue decides candidates by
 * exact's bound (epi_band.cuh), so fasted's kernels compile without
 * that code. Each false where F does not declare it. */
template <class F, class = void> struct fasted_turns {
    static constexpr bool value = false;
};
template <class F> struct fasted_turns<F, std::void_t<decltype(F::turns)>> {
    static constexpr bool value = F::turns;
};
template <class F, class = void> struct fasted_band {
    static constexpr bool value = false;
};
template <class F> struct fasted_band<F, std::void_t<decltype(F::band)>> {
    static constexpr bool value = F::band;
};

/* What the host driver (fasted.cu) calls for a format. */
struct fasted_fmt_ops {
    /* FP32 rows (d values each, rounded to odd from FP64) -> rows of the
     * format's values, zero-padded to dp values. */
    void (*convert)(const float *src, void *X, size_t rows, size_t d, size_t dp, cudaStream_t st);
    /* Squared norms of n_alloc stored rows of dp values. */
    void (*norms)(const void *X, float *s, size_t n_alloc, size_t dp, cudaStream_t st);
    /* The mma.sync kernels of the configuration that turns off `off`
     * (a kern_variant's off); NULL when that variant is not compiled. */
    void (*mma_kernels)(unsigned off, const void **func, const void **func_pairs);
    /* The wgmma kernels, NULL when the format has none. */
    const void *wg_func, *wg_func_pairs;
    /* Formats that promote (F::promote): the wgmma kernels that accumulate
     * in the tensor core alone (kern_join_args.acc_fast); else NULL. */
    const void *wg_func_fast, *wg_func_fast_pairs;
    /* The format whose rows and norms these are (F::rows_of: a format
     * that changes only the kernels, such as exact's, exact_kern.cuh), so the cached
     * dataset serves both and that format's convert and norms make it
     * (fasted.cu, fasted_rows_fmt); NULL: its own. */
    const kern_format *rows_of;
};

/* F::rows_of where F declares one, else NULL. */
template <class F, class = void> struct fasted_rows_of {
    static constexpr const kern_format *value = nullptr;
};
template <class F> struct fasted_rows_of<F, std::void_t<decltype(F::rows_of)>> {
    static constexpr const kern_format *value = F::rows_of;
};

template <class F>
__global__ void fasted_convert_kernel(const float *src, typename F::elem *X, size_t rows, size_t d,
                                      size_t dp)
{
    size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= rows * dp)
        return;
    size_t r = idx / dp, k = idx % dp;
    X[idx] = F::from_float(k < d ? src[r * d + k] : 0.0f);
}

template <class F>
void fasted_convert(const float *src, void *X, size_t rows, size_t d, size_t dp, cudaStream_t st)
{
    const size_t cnt = rows * dp;
    fasted_convert_kernel<F>
        <<<(unsigned)((cnt + 255) / 256), 256, 0, st>>>(src, (typename F::elem *)X, rows, d, dp);
}

/* Squared norms of the stored rows, FP32, in coordinate order (the paper's
 * step 1). 128 rows per block; a 128x32 slice at a time is staged in
 * shared memory so the row reads coalesce. */
template <class F>
__global__ void fasted_norms_kernel(const typename F::elem *X, float *s, size_t n_alloc, size_t dp)
{
    __shared__ float sl[128][33];
    const size_t r0 = (size_t)blockIdx.x * 128;
    float acc = 0.0f;
    for (size_t k0 = 0; k0 < dp; k0 += 32) {
        for (int t = threadIdx.x; t < 128 * 32; t += 128) {
            int r = t / 32, k = t % 32;
            sl[r][k] = r0 + r < n_alloc ? F::to_float(X[(r0 + r) * dp + k0 + k]) : 0.0f;
        }
        __syncthreads();
        for (int k = 0; k < 32; k++)
            acc = F::norm_add(acc, sl[threadIdx.x][k]);
        __syncthreads();
    }
    if (r0 + threadIdx.x < n_alloc)
        s[r0 + threadIdx.x] = acc;
}

template <class F>
void fasted_norms(const void *X, float *s, size_t n_alloc, size_t dp, cudaStream_t st)
{
    fasted_norms_kernel<F>
        <<<(unsigned)(n_alloc / 128), 128, 0, st>>>((const typename F::elem *)X, s, n_alloc, dp);
}

/* A kern_format for traits F: its variant table, mma kernels getter and
 * (with WG) the wgmma kernels. */
#define FASTED_FORMAT(F, cname, variants, mma_kernels_fn, wg_fn, wg_fn_pairs, wg_smem)             \
    FASTED_FORMAT_ACC(F, cname, variants, mma_kernels_fn, wg_fn, wg_fn_pairs, NULL, NULL, wg_smem)
/* The same with the kernels without promotion (ops.wg_func_fast). */
#define FASTED_FORMAT_ACC(F, cname, variants, mma_kernels_fn, wg_fn, wg_fn_pairs, wg_fast,         \
                          wg_fast_pairs, wg_smem)                                                  \
    static const fasted_fmt_ops cname##_ops = {                                                    \
        fasted_convert<F>, fasted_norms<F>, mma_kernels_fn, wg_fn,                                 \
        wg_fn_pairs,       wg_fast,         wg_fast_pairs,  fasted_rows_of<F>::value};             \
    extern "C" const kern_format cname = {F::name,                                                 \
                                          (int)sizeof(typename F::elem),                           \
                                          F::min_cc,                                               \
                                          wg_smem,                                                 \
                                          F::int_dist,                                             \
                                          variants,                                                \
                                          (int)(sizeof(variants) / sizeof(variants[0])),           \
                                          &cname##_ops,                                            \
                                          F::widen,                                                \
                                          F::value_log2}

#endif
