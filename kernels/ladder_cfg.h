/* The teaching ladder's rungs (docs/TEACHING.md, `ladder`): each rung's
 * tile parameters, written once here and read by both sides: the rung
 * files under kernels/ladder/ static_assert that their constants equal
 * these, and the plain-C rung table (kernels/ladder_rungs.c) shows and
 * validates them, with or without CUDA.
 *
 * BM, BN: the block tile (rows of A, rows of B); BK: the k slice one
 * shared-memory stage holds; WM, WN: a warp's tile (0: no warp tiling);
 * TM, TN: a thread's register tile (CUDA-core rungs); ST: shared-memory
 * stages; TH: threads a block; MINB: blocks a multiprocessor is asked to
 * keep resident (__launch_bounds__). Units: rows and k values. */
#ifndef TCJ_LADDER_CFG_H
#define TCJ_LADDER_CFG_H

/* r01 naive: one thread per pair, rows read from global memory */
#define LADDER_R01_BM 16
#define LADDER_R01_BN 16
#define LADDER_R01_TH 256

/* r02 smem: 32x32 pairs a block, k slices of 32 staged in shared memory */
#define LADDER_R02_BM 32
#define LADDER_R02_BN 32
#define LADDER_R02_BK 32
#define LADDER_R02_TH 1024

/* r03 gemm-form: r02's tiles, |a|^2 + |b|^2 - 2a.b (one FMA a value) */
#define LADDER_R03_BM 32
#define LADDER_R03_BN 32
#define LADDER_R03_BK 32
#define LADDER_R03_TH 1024

/* r04 reg-tile: 128x128 block tile, 8x8 pairs a thread from registers */
#define LADDER_R04_BM 128
#define LADDER_R04_BN 128
#define LADDER_R04_BK 16
#define LADDER_R04_TM 8
#define LADDER_R04_TN 8
#define LADDER_R04_TH 256

/* r05 wmma: FP16 tensor cores through WMMA 16x16x16, 4 warps of 32x32 */
#define LADDER_R05_BM 64
#define LADDER_R05_BN 64
#define LADDER_R05_BK 32
#define LADDER_R05_WM 32
#define LADDER_R05_WN 32
#define LADDER_R05_TH 128

/* r06 mma.sync + ldmatrix: PTX m16n8k16 from shared memory, row-major */
#define LADDER_R06_BM 64
#define LADDER_R06_BN 64
#define LADDER_R06_BK 64
#define LADDER_R06_WM 32
#define LADDER_R06_WN 32
#define LADDER_R06_TH 128

/* r07 swizzle: r06 with 16-byte chunks XOR-swizzled by row */
#define LADDER_R07_BM 64
#define LADDER_R07_BN 64
#define LADDER_R07_BK 64
#define LADDER_R07_WM 32
#define LADDER_R07_WN 32
#define LADDER_R07_TH 128

/* r08 cp.async: r07 fed by a multi-stage cp.async pipeline */
#define LADDER_R08_BM 64
#define LADDER_R08_BN 64
#define LADDER_R08_BK 64
#define LADDER_R08_WM 32
#define LADDER_R08_WN 32
#define LADDER_R08_ST 3
#define LADDER_R08_TH 128

/* r09 fasted-tiles: FASTED's 128x128 block of 2x2 warps of 64x64, two
 * blocks a multiprocessor */
#define LADDER_R09_BM 128
#define LADDER_R09_BN 128
#define LADDER_R09_BK 64
#define LADDER_R09_WM 64
#define LADDER_R09_WN 64
#define LADDER_R09_ST 3
#define LADDER_R09_TH 128
#define LADDER_R09_MINB 2

/* r10 symmetric: r09 over the block tiles on and above the diagonal */
#define LADDER_R10_BM 128
#define LADDER_R10_BN 128
#define LADDER_R10_BK 64
#define LADDER_R10_WM 64
#define LADDER_R10_WN 64
#define LADDER_R10_ST 3
#define LADDER_R10_TH 128
#define LADDER_R10_MINB 2

#endif
