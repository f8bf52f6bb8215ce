/* How the int8 engines (int8 on the GPU, cpu-int8) take a dataset: as
 * unsigned (u8) or signed (s8) 8-bit integers, exactly when every value is
 * an integer in [0, 255] or [-128, 127], or quantized (`set int8-scale on`:
 * multiplied by 255/max or 127/max|v| and rounded to nearest, ties to
 * even). Library code: nothing here prints. */
#ifndef TCJ_INT8_PLAN_H
#define TCJ_INT8_PLAN_H

#include "dataset.h"
#include "engine.h"

/* The largest d whose dot products stay exact in S32 (d 255^2 < 2^31). */
#define INT8_MAX_D 33025

typedef struct int8_plan {
    int u8;       /* 1: unsigned [0, 255], 0: signed [-128, 127] */
    double scale; /* values are rint(v scale); 1 for integer data */
    int inexact;  /* quantized: distances are not the data's */
} int8_plan;

/* The plan for ds, or TCJ_EINVAL with one line naming the first value
 * that does not fit, what int8 takes and what to use instead (who names
 * the engine). quantize: `set int8-scale`. The answer for the last dataset
 * is kept (keyed by its hash and sizes). */
int int8_plan_for(const dataset *ds, int quantize, const char *who, int8_plan *out);

/* One value as the int8 engines take it: rint(v scale) (ties to even). */
double int8_value(const int8_plan *p, double v);

/* What both int8 engines record about a run: the variant gains ", u8" or
 * ", s8" (", quantized" too when so), and the metrics inexact and, when
 * quantized, int8_scale. */
void int8_plan_record(const int8_plan *p, join_result *res);

#endif
