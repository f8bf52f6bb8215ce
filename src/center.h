/* Centring for the low-precision engines (`set center auto|on|off`):
 * distances do not change when every point is translated, but the error of
 * FP16 (or BF16, TF32) inputs and FP32 norms grows with the points' norms,
 * so those engines may subtract the FP64 column means before converting.
 * The host data and the FP64 engines are untouched. This module decides,
 * per dataset and setting, whether an engine centres and hands it the
 * means (computed once per dataset and cached). Library code: nothing
 * here prints. */
#ifndef TCJ_CENTER_H
#define TCJ_CENTER_H

#include <stddef.h>

#include "dataset.h"

/* The setting's values (engine_opts.center). DEFAULT is auto for the
 * exact engines and off for the others. */
enum { CENTER_DEFAULT = 0, CENTER_AUTO, CENTER_ON, CENTER_OFF, CENTER_LOCAL };

/* What centring would do to a dataset: the largest norm of its rows as
 * loaded and after subtracting the column means, and the largest |v| of
 * each. */
typedef struct center_facts {
    double nmax_raw, nmax_centred;
    double vmax_raw, vmax_centred;
} center_facts;

/* The column means (d values) and facts of ds, computed once per dataset
 * (keyed by its hash, n and d) and kept until another dataset asks; the
 * pointer stays valid until then. NULL for an empty dataset, and NULL
 * with a TCJ_ENOMEM line in err_msg when the means' memory (3 ranges x d
 * doubles, src/mem.h) cannot be had; err_msg is cleared otherwise. */
const double *center_means(const dataset *ds, center_facts *facts);

/* Whether an engine that honours the setting centres ds: ON yes, OFF no,
 * AUTO when centring shrinks the largest norm at least 2x; DEFAULT is AUTO
 * for an exact engine (exact = 1) and OFF otherwise; never when a column's
 * mean is not finite (the data hold Inf or NaN). Returns the means to
 * subtract, or NULL for no centring. The exact engines' AUTO weighs their
 * error bound at the run's eps instead: center_pick_exact
 * (src/center_exact.h). */
const double *center_pick(const dataset *ds, int setting, int exact);

/* "auto", "on", "off" or "default": the setting as shown. */
const char *center_name(int setting);

#endif
