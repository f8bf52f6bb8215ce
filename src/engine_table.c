/* The engine table: one row per engine. A new engine is one new file and
 * one row here. */
#include <string.h>

#include "engine.h"

extern const engine engine_cpu;
extern const engine engine_cpu_fp16;

const engine *const engine_table[] = {
    &engine_cpu,
    &engine_cpu_fp16,
    NULL,
};

const engine *engine_find(const char *name)
{
    for (const engine *const *e = engine_table; *e; e++)
        if (strcmp((*e)->name, name) == 0)
            return *e;
    return NULL;
}
