/* The CPU emulation of a tensor-core join with FP32 accumulation, shared by
 * the cpu-<format> engines (cpu-fp16, cpu-bf16, cpu-tf32): the converted
 * dataset (cached), the FP32 row kernel, dist2 formation, on the cpu_join
 * driver. A format supplies only how one coordinate is rounded.
 *
 * What is emulated, step by step, for a format F:
 *  1. every coordinate is rounded from its FP64 value straight to F (the
 *     format's round function: to nearest, ties to even);
 *  2. squared norms s_i = sum_k h_ik^2 in FP32 in coordinate order, each step
 *     rounded toward zero (__fmaf_rz(h, h, s)); h^2 is exact in FP32 when
 *     F has at most 12 significand bits and h^2 stays in FP32's range;
 *  3. the dot product a_ij = sum_k h_ik h_jk accumulated in FP32 in k order,
 *     one rounding to nearest per step: the product of two F values is exact
 *     in FP32 (again at most 12 bits each, in range), so acc + p rounds once,
 *     as fmaf(h, h, acc) would;
 *  4. dist2 = (s_i + s_j) - 2 a_ij in FP32, rounded to nearest (2a is exact,
 *     so this equals fmaf(-2, a, s_i + s_j)); negative results are clamped
 *     to 0 and the diagonal i == j is exactly 0;
 *  5. the comparison dist2 <= (float)(eps * eps); histogram edges are
 *     rounded to float the same way.
 * Where a real tensor core may differ: an MMA sums the products of one
 * k-slice (and adds them to the accumulator) in an order and with internal
 * precision and rounding that NVIDIA does not specify, so the GPU's a_ij can
 * differ from step 3 in the last bits of FP32; step 2 on the GPU may use
 * another summation order. Both move dist2 by a few FP32 ulps of s_i + s_j,
 * which matters only for pairs within that of eps. For formats with FP32's
 * exponent range (BF16, TF32) a product below 2^-126 or above FLT_MAX is
 * rounded (to an FP32 subnormal, 0 or Inf) before the add here; a tensor
 * core may flush or keep it. Data that needs it has distances no join uses. */
#ifndef TCJ_CPU_EMUL_H
#define TCJ_CPU_EMUL_H

#include "cpu_grid.h"
#include "engine.h"
#include "format.h"

/* A format's row (src/format.h): the emulation reads its name, round,
 * min_sub, saturates_at and is_unsigned (negative data refused with one
 * line unless `set shift on` translates each column by its minimum,
 * src/shift.h; the run then records metric "shifted"). */
typedef struct tc_format cpu_emul_format;
/* The format's absolute rounding error below its normal range, for the
 * grid index's radius: half its smallest subnormal (in the scaled units
 * for a scaled format). */
static inline double cpu_emul_abs_err(const cpu_emul_format *f)
{
    return 0.5 * f->min_sub;
}
/* A format whose row is .scaled (FP8) is
 * emulated on the data times the power of two its GPU engine applies
 * (fmt_fit_engine), and widened back; cpu_emul_abs_err is then in the scaled
 * units. The run records metrics scale_log2 and underflow_values. */

/* Run spec with format f's arithmetic. The converted dataset is cached
 * (keyed by format, content hash, n and d; a dataset without a hash is
 * converted every run) because the comparer runs an engine once per block
 * of rows. Returns 0 or a TCJ_E* code with err_msg. */
int cpu_emul_run(const cpu_emul_format *f, const join_spec *spec, join_result *res);
/* The same with `set center local` (src/cpu_emul_local.c): over the grid
 * index, each pair relative to an origin of the query row's cell.
 * cpu_emul_run calls it for that setting. */
int cpu_emul_run_local(const cpu_emul_format *f, const join_spec *spec, join_result *res);
/* The grid index's radius for an emulation's arithmetic (src/cpu_emul.c
 * says how it is derived): smax and xmax the largest squared norm and
 * |value| of the converted rows, q the format's absolute rounding, lim
 * the FP32 limit compared with. 0 when no safe radius exists. */
double cpu_emul_radius_of(const cpu_emul_format *f, int in_bits, size_t d, double lim, double smax,
                          double xmax, double q);
/* HIST: the spec's edges as the emulations compare them (rounded to
 * float), malloc'd; NULL in the other modes. */
double *cpu_emul_edges(const join_spec *s);
/* The grid index cpu_emul_run_local joins over (its cells give the
 * origins: the lower corner along g->dim[j], the column mean along the
 * others). Returns 0, or TCJ_EINVAL with a line when there is none. */
int cpu_emul_local_index(const cpu_emul_format *f, const join_spec *spec, struct cpu_grid *g);

#endif
