/* The CPU engines' inner kernels, one set per instruction set (scalar C,
 * AVX2, AVX-512), chosen at run time from what the CPU has. Every path
 * computes the same bits: one SIMD lane per candidate, each lane summed in
 * dimension order with the operations of the scalar code (no FMA
 * contraction: the build is ISO C11, -ffp-contract=off), so a lane is the
 * scalar chain. The paths differ only in vector width and in how many query
 * rows share each candidate load.
 *
 * Candidates come in the layout of cpu_join_transpose: groups of CPU_GROUP
 * rows transposed to [k][lane], padded with zeros to a whole group. */
#ifndef TCJ_CPU_SIMD_H
#define TCJ_CPU_SIMD_H

#include <stddef.h>
#include <stdint.h>

/* Candidates are computed in groups of CPU_GROUP lanes (one lane per
 * candidate, each summed in dimension order, so vector lanes give the same
 * bits as a scalar loop); the join driver (src/cpu_join.h) and the grid
 * index's cells (src/cpu_grid.c) pad to it. */
#define CPU_GROUP 16

/* Most query rows one kernel call takes (the driver's out buffer holds this
 * many rows). */
#define CPU_SIMD_MAX_ROWS 8

typedef enum cpu_simd_isa {
    CPU_SIMD_AUTO, /* the widest the CPU has */
    CPU_SIMD_SCALAR,
    CPU_SIMD_AVX2,
    CPU_SIMD_AVX512,
    CPU_SIMD_NISA,
} cpu_simd_isa;

/* FP64 direct form: for r < nr, query row a + r*d against the nc
 * candidates at p (groups of CPU_GROUP, the last one padded):
 * out[r*ostride + c] = sum over k, in order, of (a_k - b_k)^2, s = s + u*u
 * with u = a_k - b_k, each step rounded (whole groups are stored). A group
 * may stop early once every partial sum of it (all nr rows) is above lim;
 * its values are then some partial sums, above lim. With cnt (nr entries)
 * nothing is stored: cnt[r] += how many of the nc values are <= lim (NaN
 * is not), the COUNT and PERPOINT modes without a pass over out. */
typedef void cpu_simd_f64_fn(const double *a, size_t nr, size_t d, const double *p, size_t nc,
                             double lim, double *out, size_t ostride, uint64_t *cnt);
/* FP32 dot product: dot[r*ostride + lane] = sum over k, in order, of
 * a_k*b_k, acc = acc + p with p = a_k*b_k rounded to FP32 first (never an
 * FMA: the emulation rounds the product, which matters when it leaves
 * FP32's normal range). */
typedef void cpu_simd_f32_fn(const float *a, size_t nr, size_t d, const float *p, size_t ng,
                             float *dot, size_t ostride);

/* cpu-exact's screen (src/engine_cpu_exact.c), one group: for r < nr the
 * FP32 dot products of cpu_simd_f32_fn (into dot[r*ostride + lane]), then
 * f = (sa[r] + sb[lane]) - 2 dot in FP32, each step rounded to nearest, and
 * live[r] a bit per lane where f > lim[r] is false (NaN: set). sb holds
 * CPU_GROUP values (padding lanes included). */
typedef void cpu_simd_f32_screen_fn(const float *a, size_t nr, size_t d, const float *p,
                                    const float *sa, const float *sb, const float *lim, float *dot,
                                    size_t ostride, uint32_t *live);

typedef struct cpu_simd_ops {
    const char *name; /* "scalar", "avx2", "avx512" */
    cpu_simd_isa isa;
    cpu_simd_f64_fn *f64;
    size_t f64_rows; /* query rows per call, at most CPU_SIMD_MAX_ROWS */
    cpu_simd_f32_fn *f32;
    size_t f32_rows;
    cpu_simd_f32_screen_fn *f32_screen; /* f32_rows rows per call */
    /* The squared gap between point x and the box [lo, hi] (d values
     * each), for the k-d tree's searches (src/kd_tree.h); summed in an
     * order of the path's own. */
    double (*gap2)(const double *x, const double *lo, const double *hi, size_t d);
    /* The same for up to 32 query rows at once, row r's value k at
     * xt[k * stride + r] (stride a multiple of the vector width): the
     * rows of mask whose gap times shrink is not above lim[r] (each gap
     * summed in dimension order). */
    uint32_t (*box_live)(const double *xt, size_t stride, uint32_t mask, const double *lo,
                         const double *hi, size_t d, const double *lim, double shrink);
    /* FP64 lanes of one vector instruction, for the peak arithmetic */
    int f64_lanes;
} cpu_simd_ops;

/* 1 when the CPU and this build can run isa's kernels. */
int cpu_simd_has(cpu_simd_isa isa);
/* The kernels for want (engine_opts.cpu_simd, `set cpu-simd`): AUTO is
 * the widest available. A path the CPU lacks falls back to the widest
 * available below it. Never NULL. */
const cpu_simd_ops *cpu_simd_get(cpu_simd_isa want);
/* "auto", "scalar", "avx2", "avx512" to an isa; -1 when unknown. */
int cpu_simd_parse(const char *name);
const char *cpu_simd_name(cpu_simd_isa isa);

/* The per-path tables (src/cpu_simd_<isa>.c); NULL members where the build
 * cannot target the instruction set. */
extern const cpu_simd_ops cpu_simd_scalar;
extern const cpu_simd_ops cpu_simd_avx2;
extern const cpu_simd_ops cpu_simd_avx512;

#endif
