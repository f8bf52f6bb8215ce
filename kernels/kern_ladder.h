/* The teaching ladder (`ladder`): its table of rungs, the check and the
 * run of a rung with a kernel file of its own, and the cuBLAS yardstick
 * the rungs are timed against. */
#ifndef TCJ_KERN_LADDER_H
#define TCJ_KERN_LADDER_H

#include <stddef.h>
#include <stdint.h>

#include "kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The teaching ladder (`ladder`, docs/TEACHING.md) ----
 * The ε-join in COUNT mode built up one idea a rung, from a CUDA-core loop
 * to FASTED on Hopper. Rungs 1..KERN_LADDER_OWN are small self-contained
 * kernel files under kernels/ladder/ (kern_ladder_run); the rungs after
 * them are FASTED's production kernel (the fasted engine's format rows)
 * run by the host. The table is plain C (kernels/ladder_rungs.c), so a
 * build without CUDA shows and validates it too. */
#define KERN_LADDER_OWN 10 /* rungs with a kernel file of their own */
typedef struct kern_ladder_rung {
    int id;             /* 1-based rung number */
    const char *name;   /* "naive", "smem", ..., "wgmma", "wgmma-fp8" */
    const char *idea;   /* what this rung adds to the one before, one line */
    const char *file;   /* its kernel file (rungs past KERN_LADDER_OWN: FASTED's) */
    const char *unit;   /* "cuda-fp32" CUDA cores, "tc-fp16", "tc-fp8", "tc-int8" */
    const char *blas;   /* the cuBLAS yardstick's dtype: "fp32", "fp16", "fp8", "int8" */
    const char *engine; /* NULL: kern_ladder_run; else the engine row that runs it */
    int symmetric;      /* computes the block tiles on and above the diagonal only */
    int min_cc;         /* compute capability it needs (major*10 + minor) */
    int bm, bn, bk, wm, wn, tm, tn, stages, threads, minb; /* kernels/ladder_cfg.h */
    int prev; /* the rung it differs from (0: none); `ladder diff` */
} kern_ladder_rung;
extern const kern_ladder_rung kern_ladder_rungs[]; /* terminated by id 0 */
int kern_ladder_count(void);
const kern_ladder_rung *kern_ladder_find(int id); /* NULL when there is none */
/* Dynamic shared memory a block of an own rung asks for (bytes). */
size_t kern_ladder_smem(const kern_ladder_rung *r);
/* The rung's tile parameters, checked before any launch: their own
 * consistency (tiles divide, threads cover the tile, at most 1024 threads)
 * and, given a device (NULL: skip those), its compute capability and
 * shared memory per block. 0, or KERN_EINVAL/KERN_ENODEV
 * with one line in why. Pure C. */
int kern_ladder_check(const kern_ladder_rung *r, const kern_device *dv, char *why, size_t size);

typedef struct kern_ladder_args {
    int rung;       /* an own rung's id, 1..KERN_LADDER_OWN */
    int device;     /* CUDA ordinal */
    const float *x; /* host, n*d row-major FP32 (the tensor-core rungs round to FP16) */
    size_t n, d;
    double eps; /* pairs with d2 <= (float)(eps*eps) in FP32 are counted */
    int reps;   /* timed launches after one warm-up (>= 1); the fastest is kept */
    const volatile int *cancel;
} kern_ladder_args;
typedef struct kern_ladder_result {
    uint64_t pairs;                    /* ordered pairs (i, j) within eps, self-pairs included */
    double t_h2d, t_convert, t_kernel; /* seconds; t_kernel the fastest timed launch */
    int reps;                          /* launches timed */
    size_t d_padded;                   /* d as the kernel computed it (zeros appended) */
    int regs;                          /* registers a thread (cudaFuncGetAttributes) */
    int blocks_per_sm;                 /* resident blocks a multiprocessor (occupancy API) */
    unsigned long long blocks;         /* blocks launched */
    char variant[96];                  /* "r08 cp-async 64x64x64 3 stages" */
} kern_ladder_result;
/* Run an own rung: upload (FP32, and FP16 for the tensor-core rungs, rows
 * and d padded with zeros), norms, then the kernel reps+1 times; counts
 * every ordered pair (i, j), i, j < n. Checks the rung first
 * (kern_ladder_check). 0 or an error code with kern_error(). */
int kern_ladder_run(const kern_ladder_args *a, kern_ladder_result *r);

/* The cuBLAS yardstick (`ladder`): X*X^T, X n x d of the dtype ("fp32":
 * cublasSgemm on CUDA cores; "fp16", "int8": cublasGemmEx with FP32 / INT32
 * accumulation; "fp8": cublasLt e4m3 with FP32 accumulation), the full
 * product, timed with events, fastest of reps after a warm-up. libcublas
 * (and libcublasLt) are opened with dlopen at run time: cuBLAS is a
 * benchmark yardstick, never a build or run dependency. 0 with *seconds,
 * or KERN_ENODEV/KERN_EGPU with kern_error() saying why (no library, the
 * dtype not supported on this device). */
int kern_cublas_gemm(int device, const char *dtype, size_t n, size_t d, int reps, double *seconds);

#ifdef __cplusplus
}
#endif

#endif
