/* f32 points for the streaming drivers' tests (t_stream, t_stream_kd):
 * the kernel args over them, and the direct (a-b)^2 squared distance of
 * two rows summed in FP64 in dimension order, the tests' independent
 * reference. */
#ifndef TCJ_TEST_DIRECT_F32_H
#define TCJ_TEST_DIRECT_F32_H

#include <stddef.h>
#include <string.h>

#include "kernels.h"

static inline void f32_to_f64(const void *src, size_t m, double *dst)
{
    const float *s = src;
    for (size_t i = 0; i < m; i++)
        dst[i] = s[i];
}

/* Args of a run over all n rows of x (n x d f32 values), the rest zero. */
static inline void f32_args(kern_join_args *a, const float *x, size_t n, size_t d)
{
    memset(a, 0, sizeof *a);
    a->x = x;
    a->x_bytes = sizeof(float);
    a->x_to_f64 = f32_to_f64;
    a->x_type = KERN_X_F32;
    a->n = n;
    a->d = d;
    a->hash = 12345;
    a->q1 = n;
}

/* The same form over two rows already widened to FP64. */
static inline double direct_d2_f64(const double *a, const double *b, size_t d)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double t = a[k] - b[k];
        s = s + t * t;
    }
    return s;
}

static inline double direct_d2(const float *x, size_t d, size_t i, size_t j)
{
    double s = 0;
    for (size_t k = 0; k < d; k++) {
        const double t = (double)x[i * d + k] - (double)x[j * d + k];
        s = s + t * t;
    }
    return s;
}

#endif
