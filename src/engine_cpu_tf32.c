/* cpu-tf32: the tf32 engine's arithmetic emulated on the CPU (src/cpu_emul.h
 * says step by step what is emulated). TF32: every coordinate rounded from
 * FP64 to 11 significand bits (10 stored) in FP32's exponent range, to
 * nearest, ties to even (src/fmt_round.h: overflow to Inf, gradual
 * underflow). */
#include "cpu_emul.h"
#include "engine.h"
#include "fmt_round.h"

static const cpu_emul_format fmt_tf32 = {.name = "tf32", .round = tf32_round};

static int tf32_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_tf32, s, res);
}

const engine engine_cpu_tf32 = {
    .name = "cpu-tf32",
    .precision = "tf32-32",
    .summary = "CPU emulation of the tf32 engine: TF32 inputs, FP32 accumulation",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 11,
    .available = NULL,
    .run = tf32_run,
    .centers = 2,
    .lab = "tf32",
    .lab_bits = 32,
};
