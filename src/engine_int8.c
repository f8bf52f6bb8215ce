/* int8: 8-bit integer inputs on the integer tensor cores (kernels/fmt_int8.cu:
 * S32 dot products, exact integer distances), so on data whose values are
 * all integers in [0, 255] (u8) or [-128, 127] (s8) its pair set is fp64's.
 * The row picks the kernel format from the data (src/int8_plan.h); other
 * data are refused with one line, or quantized under `set int8-scale on`
 * (metrics inexact and int8_scale). No centring: it would make the values
 * non-integers. */
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "int8_plan.h"
#include "kernels.h"

KERN_FORMAT_DECL(int8_u8);
KERN_FORMAT_DECL(int8_s8);

static int int8_run(const join_spec *s, join_result *res)
{
    int8_plan pl;
    int rc = int8_plan_for(s->ds, s->opts ? s->opts->int8_scale : 0, s->engine->name, &pl);
    if (rc)
        return rc;
    rc = engine_gpu_run_fmt(s, res, pl.u8 ? KERN_FORMAT(int8_u8) : KERN_FORMAT(int8_s8),
                            pl.inexact ? pl.scale : 0);
    int8_plan_record(&pl, res);
    return rc;
}

const engine engine_int8 = {
    .name = "int8",
    .precision = "int8-32",
    .summary = "8-bit integer inputs (u8 or s8 by the data), S32 accumulation on tensor cores: "
               "exact on 8-bit integer data",
    .gpu = 1,
    .run = int8_run,
    /* Its eps decision is exact (integers), but the distances it carries
     * and bins by are FP32 values: sweep snaps its edges to floats. */
    .dist = ENGINE_DIST_FP32,
    .exact = 0,
    .in_bits = 8,
    .format = KERN_FORMAT(int8_u8),
    .kjoin = kern_fasted_run,
    .lab = "int8",
    .lab_bits = 8,
};
