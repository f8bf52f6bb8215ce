/* What every rung of the teaching ladder shares (kernels.h, "The teaching
 * ladder"): the device-side view of the data and the count helper. The
 * mainloops are NOT here on purpose: the diff between two consecutive rung
 * files is the lesson, so each file carries its whole kernel. */
#ifndef TCJ_LADDER_COMMON_CUH
#define TCJ_LADDER_COMMON_CUH

#include <cuda_fp16.h>
#include <stddef.h>

#include "kern_util.cuh"
#include "kernels.h"
#include "ladder_cfg.h"

/* Rows are padded to LADDER_ROW_PAD and d to LADDER_K_PAD with zeros, so
 * every rung's block tile and k slice divide the padded shape and no
 * mainloop needs a bounds check; zero rows and columns add 0 to every sum. */
#define LADDER_ROW_PAD 128
#define LADDER_K_PAD 64

/* The device-side view every kernel takes by value. */
typedef struct ladder_view {
    const float *xf;           /* n_pad x ld FP32 rows (CUDA-core rungs) */
    const __half *xh;          /* n_pad x ld FP16 rows (tensor-core rungs), NULL on 1..4 */
    const float *norm;         /* n_pad |x_i|^2 in FP32 (of the FP16 values on 5..10) */
    size_t n, n_pad, ld;       /* rows, padded rows, padded row length */
    float eps2;                /* pairs with d2 <= eps2 count */
    unsigned long long *count; /* ordered pairs found */
} ladder_view;

/* Add a warp's per-lane counts to the total with one atomic: every lane of
 * the warp must call it (a full-mask shuffle). */
__device__ __forceinline__ void ladder_count_add(const ladder_view &v, unsigned c)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        c += __shfl_xor_sync(0xffffffffu, c, o);
    const unsigned tid = threadIdx.x + blockDim.x * threadIdx.y; /* 2-D blocks on 1..3 */
    if ((tid & 31) == 0 && c)
        atomicAdd(v.count, (unsigned long long)c);
}

/* gridDim.y is at most 65535: the 2-D rungs launch their block rows in
 * chunks, passing the chunk's first block row m0 to the kernel. */
#define LADDER_GRID_Y_MAX 65535u
/* gridDim.x is at most 2^31 - 1: rung 10's 1-D grid launches in chunks. */
#define LADDER_GRID_X_MAX 0x7fffffffull

/* One own rung's kernel as the driver (ladder_run.cu) sees it: the
 * __global__ function (attributes, occupancy, shared-memory opt-in) and a
 * launcher that covers all n_pad x n_pad pairs (several launches when the
 * grid is over its limits), checks each launch, and adds the blocks it
 * launched to *blocks. smem is the table's size (kern_ladder_smem), which
 * the launcher checks against its own layout. 0, or KERN_EINVAL (a layout
 * that disagrees with the table) / KERN_EGPU with kern_error(). */
typedef struct ladder_kernel {
    const void *func;
    bool fp16; /* reads xh and the FP16 rows' norms (else xf, FP32 norms) */
    int (*launch)(const ladder_view &v, size_t smem, unsigned long long *blocks);
} ladder_kernel;

extern const ladder_kernel ladder_r01, ladder_r02, ladder_r03, ladder_r04, ladder_r05, ladder_r06,
    ladder_r07, ladder_r08, ladder_r09, ladder_r10;

/* A launcher's answer when the table's shared memory (kern_ladder_smem)
 * and its kernel's layout disagree: the two must be fixed together. */
static inline int ladder_smem_differs(int rung, size_t table, size_t kernel)
{
    return kern_fail(KERN_EINVAL,
                     "ladder rung %d: the table's %zu bytes of shared memory differ from the "
                     "kernel's %zu",
                     rung, table, kernel);
}

/* The 2-D launch shared by rungs 1..9: tiles x tiles blocks of bm x bn
 * pairs, block rows in chunks of LADDER_GRID_Y_MAX. */
template <class K>
static int ladder_launch_2d(K kernel, const ladder_view &v, int bm, int bn, dim3 block, size_t smem,
                            unsigned long long *blocks)
{
    const size_t tm = v.n_pad / bm, tn = v.n_pad / bn;
    for (size_t m0 = 0; m0 < tm; m0 += LADDER_GRID_Y_MAX) {
        const size_t rows = tm - m0 < LADDER_GRID_Y_MAX ? tm - m0 : LADDER_GRID_Y_MAX;
        kernel<<<dim3((unsigned)tn, (unsigned)rows), block, smem>>>(v, m0);
        KERN_CUDA(cudaGetLastError());
        *blocks += (unsigned long long)rows * tn;
    }
    return 0;
}

#endif
