/* cpu-ue5m3 and cpu-ue4m4: the unsigned 8-bit formats' arithmetic emulated
 * on the CPU (src/cpu_emul.h says step by step what is emulated): every
 * coordinate rounded from FP64 to the format (src/fmt8.h: to nearest, ties
 * to even; ue5m3 overflows to Inf past 61440, ue4m4 saturates at 496), then
 * FP32 norms and products as for FP16 (every value of both formats is an
 * FP16 value). Negative data are refused: the formats have no sign. */
#include <math.h>
#include <stdio.h>

#include "cpu_emul.h"
#include "engine.h"
#include "err.h"
#include "fmt8.h"
#include "shift.h"

/* The first negative coordinate, if any, as one line naming what to do. */
static int ue8_check(const cpu_emul_format *f, const dataset *ds)
{
    char who[32];
    snprintf(who, sizeof who, "cpu-%s", f->name);
    return shift_refuse_negative(ds, who, f->name, "cpu-fp16 or cpu-bf16");
}

static const cpu_emul_format fmt_ue5m3 = {
    .name = "ue5m3", .round = ue5m3_round, .check = ue8_check, .abs_err = 0x1p-18, .shifts = 1};
static const cpu_emul_format fmt_ue4m4 = {.name = "ue4m4",
                                          .round = ue4m4_round,
                                          .check = ue8_check,
                                          .abs_err = 0x1p-11,
                                          .saturates_at = UE4M4_MAX,
                                          .shifts = 1};

static int ue5m3_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_ue5m3, s, res);
}

static int ue4m4_run(const join_spec *s, join_result *res)
{
    return cpu_emul_run(&fmt_ue4m4, s, res);
}

const engine engine_cpu_ue5m3 = {
    .name = "cpu-ue5m3",
    .precision = "ue5m3-32",
    .summary = "CPU emulation of unsigned E5M3 inputs (FP16's top bits, no sign), FP32 "
               "accumulation; non-negative data",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 4,
    .available = NULL,
    .run = ue5m3_run,
    .lab = "ue5m3",
    .lab_bits = 8,
};

const engine engine_cpu_ue4m4 = {
    .name = "cpu-ue4m4",
    .precision = "ue4m4-32",
    .summary = "CPU emulation of unsigned E4M4 inputs (bias 7, saturating at 496), FP32 "
               "accumulation; non-negative data",
    .gpu = 0,
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 5,
    .available = NULL,
    .run = ue4m4_run,
    .lab = "ue4m4",
    .lab_bits = 8,
};
