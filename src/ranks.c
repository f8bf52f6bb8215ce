/* Collectives over the ranks (src/ranks.h): tcjoin-mpi's hooks, or
 * nothing in one process. */
#include "ranks.h"

#include "dist.h"
#include "err.h"

int ranks_count(void)
{
    return dist && dist->nranks > 1 ? dist->nranks : 1;
}

/* A hook tcjoin-mpi left unset: a build error, said rather than ignored
 * (each rank would go on with its share alone). */
static int ranks_missing(const char *what)
{
    return err_set(TCJ_EUNSUP, "ranks: this program cannot %s over its ranks", what);
}

int ranks_forest_merge(uint32_t *parent, size_t n)
{
    if (ranks_count() < 2)
        return 0;
    return dist->forest_merge ? dist->forest_merge(parent, n) : ranks_missing("merge forests");
}

int ranks_min_i32(int32_t *v, size_t n)
{
    if (ranks_count() < 2)
        return 0;
    return dist->min_i32 ? dist->min_i32(v, n) : ranks_missing("reduce labels");
}

int ranks_min_f64(double *v, size_t n)
{
    if (ranks_count() < 2)
        return 0;
    return dist->min_f64 ? dist->min_f64(v, n) : ranks_missing("reduce distances");
}

int ranks_sum_u64(uint64_t *v, size_t n)
{
    if (ranks_count() < 2)
        return 0;
    return dist->sum_u64 ? dist->sum_u64(v, n) : ranks_missing("sum counts");
}

int ranks_merge_lists(curve_list *l, size_t n)
{
    if (ranks_count() < 2)
        return 0;
    return dist->merge_lists ? dist->merge_lists(l, n) : ranks_missing("merge the curve's lists");
}
