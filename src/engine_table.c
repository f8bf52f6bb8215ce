/* The engine table: one row per engine. A new engine is one new file and
 * one row here. */
#include <string.h>

#include "engine.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;
extern const engine engine_cpu_bf16;
extern const engine engine_cpu_tf32;
extern const engine engine_fasted;
extern const engine engine_fp64;
extern const engine engine_ted;
extern const engine engine_ted_index;

/* Order is the order of `help engines`; roles are chosen by rank (engine.h),
 * not by position, except that equal ranks go to the earlier row. */
const engine *const engine_table[] = {
    &engine_cpu,      &engine_cpu_fp16,  &engine_cpu_bf16,
    &engine_cpu_tf32, &engine_fasted,    &engine_fp64,
    &engine_ted,      &engine_ted_index, NULL,
};

const engine *engine_find(const char *name)
{
    for (const engine *const *e = engine_table; *e; e++)
        if (strcmp((*e)->name, name) == 0)
            return *e;
    return NULL;
}
