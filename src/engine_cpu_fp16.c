/* cpu-fp16: FASTED's arithmetic emulated on the CPU (src/cpu_emul.h says
 * step by step what is emulated), so accuracy versus precision can be
 * studied without a GPU. FP16: every coordinate rounded to binary16, to
 * nearest, ties to even, straight from the FP64 value (|x| >= 65520 becomes
 * Inf, tiny values subnormal or 0), as __float2half_rn does on the GPU. */
#include "cpu_emul.h"
#include "engine.h"
#include "fp16.h"

static const cpu_emul_format fmt_fp16 = {.name = "fp16", .round = fp16_round};

static int f16_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_fp16, s, res);
}

const engine engine_cpu_fp16 = {
    .name = "cpu-fp16",
    .precision = "fp16-32",
    .summary = "CPU emulation of FASTED's FP16-in, FP32-accumulate arithmetic",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 11,
    .available = NULL,
    .run = f16_run,
    .centers = 2,
    .lab = "fp16",
    .lab_bits = 16,
};
