/* cpu-fp8-e4m3 and cpu-fp8-e5m2: the FP8 engines' arithmetic emulated on
 * the CPU (src/cpu_emul.h says step by step what is emulated): the data
 * (centred when `set center` says so) times the power of two that brings
 * the largest |v| just under the format's largest finite value (448, 57344:
 * src/fmt_fit.h), every value rounded to the format (src/fmt_round.h: to
 * nearest even, saturating), then FP32 norms and products as for FP16
 * (every FP8 value is an FP16 value; products are exact in FP32). */
#include "cpu_emul.h"
#include "engine.h"
#include "fmt_round.h"

/* abs_err: half the smallest subnormal, in the scaled units. */
static const cpu_emul_format fmt_e4m3 = {
    .name = "fp8-e4m3", .round = fp8_e4m3_round, .abs_err = 0x1p-10};
static const cpu_emul_format fmt_e5m2 = {
    .name = "fp8-e5m2", .round = fp8_e5m2_round, .abs_err = 0x1p-17};

static int e4m3_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_e4m3, s, res);
}

static int e5m2_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_e5m2, s, res);
}

const engine engine_cpu_fp8_e4m3 = {
    .name = "cpu-fp8-e4m3",
    .precision = "e4m3-32",
    .summary = "CPU emulation of the fp8-e4m3 engine: FP8 E4M3 inputs scaled by a power of two, "
               "FP32 accumulation",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 4,
    .available = NULL,
    .run = e4m3_run,
    .centers = 1,
    .center_auto = 1,
    .lab = "fp8-e4m3",
    .lab_bits = 8,
};

const engine engine_cpu_fp8_e5m2 = {
    .name = "cpu-fp8-e5m2",
    .precision = "e5m2-32",
    .summary = "CPU emulation of the fp8-e5m2 engine: FP8 E5M2 inputs scaled by a power of two, "
               "FP32 accumulation",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 3,
    .available = NULL,
    .run = e5m2_run,
    .centers = 1,
    .center_auto = 1,
    .lab = "fp8-e5m2",
    .lab_bits = 8,
};
