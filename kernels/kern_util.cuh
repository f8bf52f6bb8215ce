/* Helpers shared by the kernels/ .cu files: checked CUDA calls and the error message. */
#ifndef TCJ_KERN_UTIL_CUH
#define TCJ_KERN_UTIL_CUH

#include <cuda_runtime.h>

int kern_fail(int code, const char *fmt, ...);
int kern_cuda_fail(cudaError_t e, const char *what, const char *file, int line);

/* Check a CUDA call; on failure leave a message and return KERN_EGPU from
 * the enclosing function (which must return int). */
#define KERN_CUDA(call)                                                                            \
    do {                                                                                           \
        cudaError_t kern_e_ = (call);                                                              \
        if (kern_e_ != cudaSuccess)                                                                \
            return kern_cuda_fail(kern_e_, #call, __FILE__, __LINE__);                             \
    } while (0)

/* The same in a function that cleans up at a label: leave the message, set
 * the enclosing rc, go to label. */
#define KERN_CUDA_GOTO(call, label)                                                                \
    do {                                                                                           \
        cudaError_t kern_e_ = (call);                                                              \
        if (kern_e_ != cudaSuccess) {                                                              \
            rc = kern_cuda_fail(kern_e_, #call, __FILE__, __LINE__);                               \
            goto label;                                                                            \
        }                                                                                          \
    } while (0)

/* Check the last launch. */
#define KERN_LAUNCH_CHECK(what) KERN_CUDA(cudaGetLastError())

#endif
