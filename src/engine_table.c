/* The engine table: one row per engine. A new engine is one new file and
 * one row here. */
#include <string.h>

#include "engine.h"
#include "kernels.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;
extern const engine engine_cpu_exact;
extern const engine engine_cpu_bf16;
extern const engine engine_cpu_tf32;
extern const engine engine_cpu_ue5m3;
extern const engine engine_cpu_ue4m4;
extern const engine engine_cpu_fp8_e4m3;
extern const engine engine_cpu_fp8_e5m2;
extern const engine engine_cpu_int8;
extern const engine engine_int8;
extern const engine engine_fp64;
extern const engine engine_exact;
extern const engine engine_ted;
extern const engine engine_ted_index;

/* Tensor-core formats: one row each, all run by kern_fasted_run in the
 * format the row names (kernels/fmt_NAME.cu, KERN_FORMAT); engine_available
 * checks the device and its compute capability for them. */
#define TC_ENGINE(nm, fmt, prec, bits, rank_default, labf, labbits, cauto, sum)                    \
    TC_ROW(nm, fmt, prec, bits, rank_default, labf, labbits, cauto, 0, sum)
/* The unsigned formats: no centring (it makes values negative); shift. */
#define TC_UNSIGNED(nm, fmt, prec, bits, sum) TC_ROW(nm, fmt, prec, bits, 0, nm, 8, 0, 1, sum)
#define TC_ROW(nm, fmt, prec, bits, rank_default, labf, labbits, cauto, uns, sum)                  \
    {                                                                                              \
        .name = nm, .precision = prec, .summary = sum, .gpu = 1, .run = engine_gpu_run,            \
        .kjoin = kern_fasted_run, .format = fmt, .dist = ENGINE_DIST_FP32, .exact = 0,             \
        .in_bits = bits, .rank = {[ENGINE_ROLE_DEFAULT] = rank_default},                           \
        .kdist = engine_gpu_kdist, .centers = !(uns), .lab = labf, .lab_bits = labbits,            \
        .center_auto = cauto, .shifts = uns,                                                       \
    }
KERN_FORMAT_DECL(bf16);
KERN_FORMAT_DECL(tf32);
KERN_FORMAT_DECL(fp8_e4m3);
KERN_FORMAT_DECL(fp8_e5m2);
KERN_FORMAT_DECL(ue5m3);
KERN_FORMAT_DECL(ue4m4);

static const engine engine_fasted = TC_ENGINE(
    "fasted", KERN_FORMAT(fp16), "fp16-32", 11, 2, "fp16", 16, 0,
    "FASTED: FP16 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else mma.sync)");
static const engine engine_bf16 =
    TC_ENGINE("bf16", KERN_FORMAT(bf16), "bf16-32", 8, 0, "bf16", 16, 0,
              "BF16 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else mma.sync)");
static const engine engine_tf32 =
    TC_ENGINE("tf32", KERN_FORMAT(tf32), "tf32-32", 11, 0, "tf32", 32, 0,
              "TF32 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else mma.sync)");

/* The FP8 rows centre by default (auto), as their CPU twins do. */
static const engine engine_fp8_e4m3 = TC_ENGINE(
    "fp8-e4m3", KERN_FORMAT(fp8_e4m3), "e4m3-32", 4, 0, "fp8-e4m3", 8, 1,
    "FP8 E4M3 inputs scaled by a power of two; on Hopper (wgmma) tensor-core sums of 256 "
    "products added in FP32 (set fp8-acc), on sm_89 (mma.sync) accumulation narrower than FP32");
static const engine engine_fp8_e5m2 = TC_ENGINE(
    "fp8-e5m2", KERN_FORMAT(fp8_e5m2), "e5m2-32", 3, 0, "fp8-e5m2", 8, 1,
    "FP8 E5M2 inputs scaled by a power of two; on Hopper (wgmma) tensor-core sums of 256 "
    "products added in FP32 (set fp8-acc), on sm_89 (mma.sync) accumulation narrower than FP32");

/* Stored in 8 bits, widened to FP16 in the kernels (kernels/fmt_ue8.cu). */
static const engine engine_ue5m3 = TC_UNSIGNED(
    "ue5m3", KERN_FORMAT(ue5m3), "ue5m3-32", 4,
    "Unsigned E5M3 inputs (FP16's top bits, no sign) stored in 8 bits, widened to FP16 on tensor "
    "cores, FP32 accumulation; non-negative data (wgmma on Hopper)");
static const engine engine_ue4m4 = TC_UNSIGNED(
    "ue4m4", KERN_FORMAT(ue4m4), "ue4m4-32", 5,
    "Unsigned E4M4 inputs (bias 7, saturating at 496) stored in 8 bits, widened to FP16 on "
    "tensor cores, FP32 accumulation; non-negative data (wgmma on Hopper)");

/* Order is the order of `help engines`; roles are chosen by rank (engine.h),
 * not by position, except that equal ranks go to the earlier row. */
const engine *const engine_table[] = {
    &engine_cpu,
    &engine_cpu_exact,
    &engine_cpu_fp16,
    &engine_cpu_bf16,
    &engine_cpu_tf32,
    &engine_cpu_fp8_e4m3,
    &engine_cpu_fp8_e5m2,
    &engine_cpu_int8,
    &engine_cpu_ue5m3,
    &engine_cpu_ue4m4,
    &engine_fasted,
    &engine_bf16,
    &engine_tf32,
    &engine_fp8_e4m3,
    &engine_fp8_e5m2,
    &engine_int8,
    &engine_ue5m3,
    &engine_ue4m4,
    &engine_exact,
    &engine_fp64,
    &engine_ted,
    &engine_ted_index,
    NULL,
};

const engine *engine_find(const char *name)
{
    for (const engine *const *e = engine_table; *e; e++)
        if (strcmp((*e)->name, name) == 0)
            return *e;
    return NULL;
}
