/* The engine table: one row per engine. A new engine is one new file and
 * one row here; a new tensor-core format is one row in src/format_table.c,
 * which gives both of its engines. */
#include <stddef.h>
#include <string.h>

#include "cpu_emul.h"
#include "engine.h"
#include "format.h"
#include "kernels.h"

extern const engine engine_cpu;
extern const engine engine_cpu_exact;
extern const engine engine_fp64;
extern const engine engine_exact;
extern const engine engine_ted;
extern const engine engine_ted_index;
extern const engine engine_ladder;

/* The tensor-core formats' rows: a GPU engine (run by kern_fasted_run in
 * the format the row names, kernels/fmt_NAME.cu; engine_available checks
 * the device and its compute capability) and its CPU twin cpu-<format>
 * per row of tc_formats (src/format_table.c), generated from it at build
 * time (scripts/gen_formats.c). */
#include "format_engines.inc"

/* Order is the order of `help engines`; roles are chosen by rank (engine.h),
 * not by position, except that equal ranks go to the earlier row. */
const engine *const engine_table[] = {
    &engine_cpu,
    &engine_cpu_exact,
    TC_FORMAT_CPU_ENGINES TC_FORMAT_GPU_ENGINES &engine_exact,
    &engine_fp64,
    &engine_ted,
    &engine_ted_index,
    &engine_ladder,
    NULL,
};

const engine *engine_find(const char *name)
{
    for (const engine *const *e = engine_table; *e; e++)
        if (strcmp((*e)->name, name) == 0)
            return *e;
    return NULL;
}
