/* The C interface to everything in kernels/. Host code includes only this
 * header; kernels/ includes no host header but this one. Every function
 * returns 0 or a negative KERN_E* code and leaves a message in
 * kern_error(); a CUDA error fails the call, never the process. */
#ifndef TCJ_KERNELS_H
#define TCJ_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    KERN_OK = 0,
    KERN_ENODEV = -4, /* no usable CUDA device / built without CUDA */
    KERN_EGPU = -5,   /* a CUDA call failed */
    KERN_ECANCEL = -6,
    KERN_EINVAL = -1,
    KERN_ESINK = -9,  /* the host callback asked to stop */
};

/* The last error message of this thread's kernel calls. */
const char *kern_error(void);
/* 1 when the binary holds CUDA code (built with nvcc). */
int kern_built_with_cuda(void);

typedef struct kern_device {
    char name[96];
    int major, minor; /* compute capability */
    int sms;
    size_t global_mem, l2_bytes, smem_per_block_optin;
    int clock_khz, mem_clock_khz;
    int driver_version, runtime_version;
} kern_device;

/* Number of CUDA devices (0 with a message when there is no driver or no
 * device, or the build has no CUDA). */
int kern_device_count(void);
int kern_device_info(int dev, kern_device *out);

/* Host callback receiving pair batches drained from a device buffer:
 * i, j global rows, d2 squared distance (engine precision). Return 0 to go
 * on, nonzero to stop. */
typedef int (*kern_pair_fn)(void *ctx, size_t k, const uint32_t *i, const uint32_t *j,
                            const float *d2);

/* ---- FASTED (kernels/fasted*.cu) ---- */
/* FASTED-SECTION */

/* ---- FP64 reference engines (kernels/fp64*.cu, kernels/ted*.cu) ---- */
/* FP64-SECTION */

#ifdef __cplusplus
}
#endif

#endif
