/* The engines' persistent settings: their defaults (src/engine_opts.h). */
#include <string.h>

#include "engine_opts.h"

void engine_opts_default(engine_opts *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 0;
    o->symmetric = 1;
    o->fasted_off = 0;
    o->ted_paper = 0;
    o->index_k = 6;
    o->batch_pairs = (size_t)1 << 22;
    o->device = 0;
}

const engine_opts *engine_opts_or_default(const engine_opts *o, engine_opts *def)
{
    if (o)
        return o;
    engine_opts_default(def);
    return def;
}
