/* The hooks' pointer and the per-rank file names (src/dist.h). */
#include "dist.h"

#include <stdio.h>
#include <string.h>

const dist_ops *dist;

static char dist_path[4096];

size_t dist_chunk(size_t left, size_t total, int ranks)
{
    size_t r = ranks > 0 ? (size_t)ranks : 1;
    size_t floor = total / (64 * r);
    if (floor < 1)
        floor = 1;
    size_t c = left / (2 * r);
    if (c < floor)
        c = floor;
    return c < left ? c : left;
}

const char *dist_rank_path(const char *path)
{
    if (!dist || dist->nranks < 2)
        return path;
    snprintf(dist_path, sizeof dist_path, "%s.%d", path, dist->rank);
    return dist_path;
}

int dist_own_file(const char *path)
{
    return !dist || dist->rank == 0 || strcmp(path, dist_path) == 0;
}
