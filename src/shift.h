/* `set shift on` for the unsigned formats (ue5m3, ue4m4): each column
 * translated by its minimum, so every value is >= 0 and distances do not
 * change. The engines subtract the vector as they subtract centring's
 * means (the host data are untouched) and record metric "shifted". */
#ifndef TCJ_SHIFT_H
#define TCJ_SHIFT_H

#include "dataset.h"

/* The d column minima of ds (NULL for an empty dataset), kept for the last
 * dataset asked (keyed by its hash, data pointer and sizes). */
const double *shift_mins(const dataset *ds);

/* 0 when every value of ds is >= 0; else TCJ_EINVAL and one line in
 * err_msg: "WHO: DATASET has a negative value (...); FMT holds no sign: set
 * shift on, or use ALT". The last dataset found non-negative is
 * remembered (as shift_mins keys it), so a warm run does not scan again. */
int shift_refuse_negative(const dataset *ds, const char *who, const char *fmt, const char *alt);

#endif
