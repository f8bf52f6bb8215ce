/* The Hopper (sm_90a) FASTED kernel's host interface, used by fasted.cu:
 * wgmma.mma_async fed by the bulk tensor copy engine, 128x256 block tiles.
 * The kernel is in fasted_wgmma.cu. */
#ifndef TCJ_FASTED_WGMMA_CUH
#define TCJ_FASTED_WGMMA_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "fasted_int.cuh"

#define FASTED_WG_BM 128 /* block tile rows (query points): 2 consumer warpgroups of 64 */
#define FASTED_WG_BN 256 /* block tile columns (candidates): one m64n256k16 per k16 */
#define FASTED_WG_THREADS 384

/* 1 when the wgmma kernel can run on device dev: compute capability
 * exactly 9.0, the sm_90a code is what the driver loaded, and the driver
 * exports cuTensorMapEncodeTiled. Probed once per device. */
int fasted_wg_usable(int dev);

/* Dynamic shared memory of the kernel, with nbins histogram bins (0 when
 * not HIST). */
size_t fasted_wg_smem(int nbins);

/* Work items for the block-tile grid of p (p->T, p->U set by
 * fasted_wg_grid). */
unsigned long long fasted_wg_items(const fasted_params *p);

/* Set p->T and p->U for the wgmma tiling: symmetric runs walk 256x256
 * super tiles of the upper triangle, two 128-row block tiles each. */
void fasted_wg_grid(fasted_params *p, size_t nq, size_t n);

/* One persistent launch over p's work items; X has n_alloc rows of dp
 * halves. Returns the launch's CUDA status. */
cudaError_t fasted_wg_launch(const fasted_params *p, int pairs, size_t n_alloc, int grid,
                             size_t smem, cudaStream_t st);

#endif
