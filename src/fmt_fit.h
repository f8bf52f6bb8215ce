/* How a dataset fits each number format of the precision lab (`info`):
 * values beyond the largest finite value, nonzero values that round to
 * zero, negative values an unsigned format refuses, the power-of-two scale
 * the 8-bit float formats would apply (largest |v| just under the format's
 * largest finite value), and whether the int8 engines would be exact (all
 * values integers in [0, 255] or [-128, 127]). One table row per format.
 * Library code: nothing here prints. */
#ifndef TCJ_FMT_FIT_H
#define TCJ_FMT_FIT_H

#include <stddef.h>

#include "dataset.h"
#include "format.h"

/* A format's row (src/format.h): the fit reads its name, max (largest
 * finite value), min_sub (smallest positive, subnormal, value),
 * is_unsigned (negative values are refused) and scaled (the engines scale
 * the data by a power of two first). */
typedef struct tc_format fmt_fit_format;

/* The range table is the format table: terminated by a row with name
 * NULL; a row with max 0 (int8) is not a range format (fmt_fit_find
 * skips it, fmt_fit_is_range says so). */
#define fmt_fit_formats tc_formats
static inline int fmt_fit_is_range(const fmt_fit_format *f)
{
    return f->max > 0;
}

typedef struct fmt_fit {
    int scale;        /* scaled formats: the data are multiplied by 2^scale */
    size_t overflow;  /* |v| 2^scale > max */
    size_t underflow; /* 0 < |v| 2^scale < min_sub: becomes 0 */
    size_t negative;  /* unsigned formats: v < 0 */
} fmt_fit;

/* The fit of ds's values to format f. */
void fmt_fit_compute(const dataset *ds, const fmt_fit_format *f, fmt_fit *out);
/* The row of fmt_fit_formats named name (an engine row's .lab), or NULL. */
const fmt_fit_format *fmt_fit_find(const char *name);
/* The fit of the values an engine converts: ds less center (NULL: none),
 * so a scaled format's scale is the one its run applies. The last answers
 * are kept (a few, keyed by the dataset's hash, sizes, center and f): a
 * run asks once, a comparison once per block of rows. Thread-safe. */
void fmt_fit_engine(const dataset *ds, const double *center, const fmt_fit_format *f, fmt_fit *out);

/* int8: FMT_INT8_U8 when every value is an integer in [0, 255] (preferred
 * when both hold), FMT_INT8_S8 in [-128, 127], FMT_INT8_NO otherwise;
 * *nonint counts the values that are not integers, *lo and *hi give the
 * range. */
enum { FMT_INT8_NO = 0, FMT_INT8_S8, FMT_INT8_U8 };
int fmt_fit_int8(const dataset *ds, size_t *nonint, double *lo, double *hi);

#endif
