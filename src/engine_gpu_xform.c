/* The format transforms of a GPU run (src/engine_gpu_int.h): centring and
 * the unsigned formats' shift leave distances unchanged; a scaled format's
 * power of two changes them by an exact factor the kernels undo. */
#include <math.h>

#include "center.h"
#include "center_exact.h"
#include "engine_gpu_int.h"
#include "shift.h"

/* An unsigned row (ue5m3, ue4m4): with `set shift on` the column minima
 * take the place of centring's means in *center (*shifted = 1); without,
 * negative data are refused with one line. 0 for every other row. */
static int gpu_unsigned(const engine *e, const dataset *ds, const engine_opts *o,
                        const double **center, int *shifted)
{
    *shifted = 0;
    if (!e->shifts)
        return 0;
    if (!o->shift)
        return shift_refuse_negative(ds, e->name, e->lab, "fasted or bf16");
    *center = shift_mins(ds);
    *shifted = 1;
    return 0;
}

/* A row whose format is scaled (FP8): the power of two its run applies to
 * the (centred) data, into fit; 0 when the format is not. */
static int gpu_scale(const engine *e, const dataset *ds, const double *center, fmt_fit *fit)
{
    const fmt_fit_format *ff = e->format ? fmt_fit_find(e->lab) : NULL;
    if (!ff || !ff->scaled)
        return 0;
    fmt_fit_engine(ds, center, ff, fit);
    return 1;
}

int engine_gpu_xform(const engine *e, const dataset *ds, const engine_opts *o, const double *eps,
                     double scale, kern_join_args *a, gpu_xform *x)
{
    x->shifted = x->scaled = 0;
    a->center = !e->centers       ? NULL
                : e->exact && eps ? center_pick_exact(ds, o->center, *eps)
                : e->exact        ? center_pick_kdist(ds, o->center)
                                  : center_pick(ds, o->center, e->center_auto);
    int rc = gpu_unsigned(e, ds, o, &a->center, &x->shifted);
    if (rc)
        return rc;
    x->scaled = gpu_scale(e, ds, a->center, &x->fit);
    if (x->scaled)
        a->scale = ldexp(1.0, x->fit.scale);
    else if (scale)
        a->scale = scale;
    return 0;
}
