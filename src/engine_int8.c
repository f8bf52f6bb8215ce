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

/* The int8 row's run (its row: tc_formats, src/format_table.c). */
int engine_int8_run(const join_spec *s, join_result *res)
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
