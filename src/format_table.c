/* The tensor-core number formats, one row each (src/format.h says what is
 * derived from a row). Order is the order of `help engines`, `info` and
 * `precisions`. bf16 and tf32 keep FP32's exponent (largest (2 - 2^-7)
 * 2^127 and (2 - 2^-10) 2^127; smallest subnormals 2^-133 and 2^-136); FP8
 * E4M3 is the finite-only OCP variant the tensor cores take (448, 2^-9),
 * E5M2 the IEEE-like one (57344, 2^-16); the unsigned formats as
 * docs/FORMATS.md. */
#include <string.h>

#include "format.h"
#include "fmt8.h"
#include "fmt_round.h"
#include "fp16.h"

const tc_format tc_formats[] = {
    {
        .name = "fp16",
        .max = 65504.0,
        .min_sub = 0x1p-24,
        .bits = 11,
        .storage_bits = 16,
        .round = fp16_round,
        .engine = "fasted",
        .kern = "fp16",
        .precision = "fp16-32",
        .summary = "FASTED: FP16 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else "
                   "mma.sync)",
        .cpu_summary = "CPU emulation of FASTED's FP16-in, FP32-accumulate arithmetic",
        .rank_default = 2,
        .center_local = 1,
    },
    {
        .name = "bf16",
        .max = 0x1.fep127,
        .min_sub = 0x1p-133,
        .bits = 8,
        .storage_bits = 16,
        .round = bf16_round,
        .engine = "bf16",
        .kern = "bf16",
        .precision = "bf16-32",
        .summary = "BF16 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else "
                   "mma.sync)",
        .cpu_summary = "CPU emulation of the bf16 engine: BF16 inputs, FP32 accumulation",
        .center_local = 1,
    },
    {
        .name = "tf32",
        .max = 0x1.ffcp127,
        .min_sub = 0x1p-136,
        .bits = 11,
        .storage_bits = 32,
        .round = tf32_round,
        .engine = "tf32",
        .kern = "tf32",
        .precision = "tf32-32",
        .summary = "TF32 inputs, FP32 accumulation on tensor cores (wgmma on Hopper, else "
                   "mma.sync)",
        .cpu_summary = "CPU emulation of the tf32 engine: TF32 inputs, FP32 accumulation",
        .center_local = 1,
    },
    {
        .name = "fp8-e4m3",
        .max = 448.0,
        .min_sub = 0x1p-9,
        .scaled = 1,
        .bits = 4,
        .storage_bits = 8,
        .round = fp8_e4m3_round,
        .engine = "fp8-e4m3",
        .kern = "fp8_e4m3",
        .precision = "e4m3-32",
        .summary = "FP8 E4M3 inputs scaled by a power of two; on Hopper (wgmma) tensor-core sums "
                   "of 256 products added in FP32 (set fp8-acc), on sm_89 (mma.sync) "
                   "accumulation narrower than FP32",
        .cpu_summary = "CPU emulation of the fp8-e4m3 engine: FP8 E4M3 inputs scaled by a power "
                       "of two, FP32 accumulation",
        .center_auto = 1,
    },
    {
        .name = "fp8-e5m2",
        .max = 57344.0,
        .min_sub = 0x1p-16,
        .scaled = 1,
        .bits = 3,
        .storage_bits = 8,
        .round = fp8_e5m2_round,
        .engine = "fp8-e5m2",
        .kern = "fp8_e5m2",
        .precision = "e5m2-32",
        .summary = "FP8 E5M2 inputs scaled by a power of two; on Hopper (wgmma) tensor-core sums "
                   "of 256 products added in FP32 (set fp8-acc), on sm_89 (mma.sync) "
                   "accumulation narrower than FP32",
        .cpu_summary = "CPU emulation of the fp8-e5m2 engine: FP8 E5M2 inputs scaled by a power "
                       "of two, FP32 accumulation",
        .center_auto = 1,
    },
    {
        .name = "int8",
        .bits = 8,
        .storage_bits = 8,
        .engine = "int8",
        .kern = "int8_u8",
        .precision = "int8-32",
        .summary = "8-bit integer inputs (u8 or s8 by the data), S32 accumulation on tensor "
                   "cores: exact on 8-bit integer data",
        /* Its eps decision is exact (integers), but the distances it
         * carries and bins by are FP32 values: sweep snaps its edges to
         * floats. */
        .cpu_summary = "CPU twin of the int8 engine: 8-bit integer data (or quantized by set "
                       "int8-scale), exact integer distances",
        .integer = 1,
    },
    {
        .name = "ue5m3",
        .max = UE5M3_MAX,
        .min_sub = 0x1p-17,
        .is_unsigned = 1,
        .bits = 4,
        .storage_bits = 8,
        .round = ue5m3_round,
        .engine = "ue5m3",
        .kern = "ue5m3",
        .precision = "ue5m3-32",
        .summary = "Unsigned E5M3 inputs (FP16's top bits, no sign) stored in 8 bits, widened to "
                   "FP16 on tensor cores, FP32 accumulation; non-negative data (wgmma on Hopper)",
        .cpu_summary = "CPU emulation of unsigned E5M3 inputs (FP16's top bits, no sign), FP32 "
                       "accumulation; non-negative data",
    },
    {
        .name = "ue4m4",
        .max = UE4M4_MAX,
        .min_sub = 0x1p-10,
        .is_unsigned = 1,
        .bits = 5,
        .storage_bits = 8,
        .round = ue4m4_round,
        .saturates_at = UE4M4_MAX,
        .engine = "ue4m4",
        .kern = "ue4m4",
        .precision = "ue4m4-32",
        .summary = "Unsigned E4M4 inputs (bias 7, saturating at 496) stored in 8 bits, widened to "
                   "FP16 on tensor cores, FP32 accumulation; non-negative data (wgmma on Hopper)",
        .cpu_summary = "CPU emulation of unsigned E4M4 inputs (bias 7, saturating at 496), FP32 "
                       "accumulation; non-negative data",
    },
    {.name = NULL},
};

const tc_format *tc_format_find(const char *name)
{
    for (const tc_format *f = tc_formats; name && f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}
