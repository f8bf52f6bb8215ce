/* Element types a dataset is kept in (u8, f16, f32, f64): one table row per
 * type with its name, size and the conversions of a block of values. A new
 * element type is one new row. */
#ifndef TCJ_DTYPE_H
#define TCJ_DTYPE_H

#include <stddef.h>

/* f64 first: a zeroed dataset is FP64. */
typedef enum dtype_id { DTYPE_F64, DTYPE_F32, DTYPE_F16, DTYPE_U8, DTYPE_COUNT } dtype_id;

typedef struct dtype {
    dtype_id id;
    const char *name; /* "u8", "f16", "f32", "f64" */
    size_t bytes;     /* bytes of one value */
    /* m values at src widened to FP64 / FP32 (exact for every type but f64
     * to f32, which rounds to nearest). */
    void (*to_f64)(const void *src, size_t m, double *dst);
    void (*to_f32)(const void *src, size_t m, float *dst);
    /* m FP64 values stored in this type: to nearest (ties to even; u8
     * clamps to [0, 255] and rounds), exact for values the type holds. */
    void (*from_f64)(const double *src, size_t m, void *dst);
    /* 1 when v is held exactly by this type (NaN: only by f16, f32, f64). */
    int (*holds)(double v);
} dtype;

extern const dtype dtype_table[DTYPE_COUNT];
/* By name ("u8", "f16", "f32", "f64"); NULL when unknown. */
const dtype *dtype_find(const char *name);
static inline const dtype *dtype_get(dtype_id id)
{
    return &dtype_table[id];
}
/* "u8 f16 f32 f64", for messages. */
const char *dtype_names(void);

#endif
