/* A GPU run's kern_join_args from the dataset and the session's options:
 * the part the join and the k-distance share (src/engine_gpu_int.h). */
#include <string.h>

#include "devices.h"
#include "engine_gpu_int.h"

/* The dataset as the kernels read it: in its own type, widened to FP64 a
 * block of rows at a time by the type's row of src/dtype.c. */
static void gpu_data(const dataset *ds, kern_join_args *a)
{
    const dtype *t = dataset_dtype(ds);
    a->x = ds->v;
    a->x_bytes = t->bytes;
    a->x_to_f64 = t->id == DTYPE_F64 ? NULL : t->to_f64;
    a->x_type = (int)t->id;
}
_Static_assert(KERN_X_F64 == (int)DTYPE_F64 && KERN_X_F32 == (int)DTYPE_F32 &&
                   KERN_X_F16 == (int)DTYPE_F16 && KERN_X_U8 == (int)DTYPE_U8,
               "kernels.h's element types follow src/dtype.h's ids");

void engine_gpu_args(const dataset *ds, size_t q0, size_t q1, const engine_opts *o,
                     const volatile int *cancel, void (*progress)(void *ctx, double frac),
                     void *progress_ctx, const struct kern_format *fmt, kern_join_args *a)
{
    memset(a, 0, sizeof *a);
    gpu_data(ds, a);
    a->n = ds->n;
    a->d = ds->d;
    a->hash = ds->hash;
    a->q0 = q0;
    a->q1 = q1;
    a->cancel = cancel;
    a->progress = progress;
    a->progress_ctx = progress_ctx;
    a->format = fmt;
    /* The options, once. Over a `set devices` list the work is shared out
     * (tiles for a join, blocks of query rows for the k-distance). */
    a->symmetric = o->symmetric;
    a->device = o->device;
    a->ndevices = devices_resolve(o, a->devices);
    if (a->ndevices > 0)
        a->device = a->devices[0];
    a->batch_pairs = o->batch_pairs ? o->batch_pairs : (size_t)1 << 22;
    a->mem_cap = o->gpu_mem;
    a->off = o->fasted_off;
    a->acc_fast = o->fp8_acc_fast;
    a->ted_paper = o->ted_paper;
    a->index_k = o->index_k;
}

int engine_gpu_pairs_args(const engine *e, const dataset *ds, size_t q0, size_t q1, double eps,
                          const engine_opts *o, double scale, const volatile int *cancel,
                          void (*progress)(void *ctx, double frac), void *progress_ctx,
                          kern_join_args *a, gpu_xform *x)
{
    engine_gpu_args(ds, q0, q1, o, cancel, progress, progress_ctx, e->format, a);
    a->eps = eps;
    a->mode = KJOIN_PAIRS;
    return engine_gpu_xform(e, ds, o, &eps, scale, a, x);
}
