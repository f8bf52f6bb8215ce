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

/* Host threads over rows [0, rows): f(t, r0, r1) for each thread t's
 * range (at most KERN_PAR_THREADS threads, one when the work, rows x per_row values, is
 * under 2^18). The calling thread takes the last range. */
#include <algorithm>
#include <thread>
#include <vector>
#define KERN_PAR_THREADS 16
template <class F> static void kern_par_rows(size_t rows, size_t per_row, F f)
{
    unsigned nt = std::thread::hardware_concurrency();
    nt = std::min(std::max(nt, 1u), (unsigned)KERN_PAR_THREADS);
    if (rows * per_row < ((size_t)1 << 18))
        nt = 1;
    const size_t per = (rows + nt - 1) / nt;
    std::vector<std::thread> th;
    for (unsigned t = 0; t + 1 < nt; t++)
        th.emplace_back(f, t, std::min(rows, t * per), std::min(rows, (t + 1) * per));
    f(nt - 1, std::min(rows, (size_t)(nt - 1) * per), rows);
    for (auto &t : th)
        t.join();
}

/* Pair s's d2 in a launch's pair distances as the host's pair_fn gets it
 * (kern_pair_batch in kernels.h): the FP64 value where d2_bytes is 8, else
 * the FP32 value widened and times sc (0: 1; FP8's scale). One place, for
 * the device's consumers and the host's drain alike. */
__host__ __device__ __forceinline__ double kern_pair_d2(const void *pd, int d2_bytes, double sc,
                                                        unsigned long long s)
{
    return d2_bytes == 8 ? ((const double *)pd)[s]
                         : (double)((const float *)pd)[s] * (sc != 0 ? sc : 1.0);
}

/* Check the last launch. */
#define KERN_LAUNCH_CHECK(what) KERN_CUDA(cudaGetLastError())

#endif
