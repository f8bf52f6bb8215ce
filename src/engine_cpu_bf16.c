/* cpu-bf16: the bf16 engine's arithmetic emulated on the CPU (src/cpu_emul.h
 * says step by step what is emulated). BF16: every coordinate rounded from
 * FP64 to 8 significand bits in FP32's exponent range, to nearest, ties to
 * even (src/fmt_round.h: overflow to Inf, gradual underflow). */
#include "cpu_emul.h"
#include "engine.h"
#include "fmt_round.h"

static const cpu_emul_format fmt_bf16 = {.name = "bf16", .round = bf16_round};

static int bf16_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_bf16, s, res);
}

const engine engine_cpu_bf16 = {
    .name = "cpu-bf16",
    .precision = "bf16-32",
    .summary = "CPU emulation of the bf16 engine: BF16 inputs, FP32 accumulation",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 8,
    .available = NULL,
    .run = bf16_run,
    .centers = 2,
    .lab = "bf16",
    .lab_bits = 16,
};
