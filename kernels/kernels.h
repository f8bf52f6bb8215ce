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
    KERN_ESINK = -9, /* the host callback asked to stop */
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
/* Teaching switches, one bit each (src/fasted_opts.c holds the names and
 * texts). Only one may be off at a time: each one-off set is a compiled
 * variant. */
enum {
    FASTED_OFF_ORDER = 1u << 0,       /* block tiles row by row, not 8x8 squares */
    FASTED_OFF_SMEM_BUFFER = 1u << 1, /* warps read fragments from global memory */
    FASTED_OFF_ASYNC_COPY = 1u << 2,  /* plain loads + st.shared instead of cp.async */
    FASTED_OFF_PIPELINE = 1u << 3,    /* one shared-memory stage */
    FASTED_OFF_RESIDENCY = 1u << 4,   /* one block per SM */
    FASTED_OFF_WARP_TILE = 1u << 5,   /* 32x32 warp tiles (64x64 block tiles) */
    FASTED_OFF_SWIZZLE = 1u << 6,     /* plain row-major shared memory */
    FASTED_OFF_ALIGN = 1u << 7,       /* shared buffers offset by 16 bytes */
    FASTED_OFF_WGMMA = 1u << 8,       /* Hopper: the mma.sync kernel, not wgmma + TMA */
};
#define FASTED_OFF_ALL 0x1ffu

/* Output modes, the same meaning as join_mode. */
enum { KFASTED_COUNT = 0, KFASTED_PERPOINT = 1, KFASTED_PAIRS = 2, KFASTED_HIST = 3 };

typedef struct kern_fasted_args {
    const double *x; /* host, n*d row-major */
    size_t n, d;
    uint64_t hash; /* dataset content hash: with x, n, d the device cache key */
    size_t q0, q1; /* query rows [q0, q1); candidates are all rows */
    int mode;      /* KFASTED_* */
    double eps;    /* pairs with d2 <= fp32(eps*eps); HIST: d2 <= edges[nbins] */
    int symmetric; /* upper-triangle tiles only (used when q0 == 0 && q1 == n) */
    unsigned off;  /* FASTED_OFF_* bits, at most one set */
    int device;
    uint64_t *counts;     /* PERPOINT: q1-q0 entries, zeroed by the call */
    kern_pair_fn pair_fn; /* PAIRS */
    void *pair_ctx;
    size_t batch_pairs;         /* at most this many pairs per pair_fn call */
    const double *hist_edges;   /* HIST: nbins+1 ascending squared distances */
    size_t hist_nbins;          /* at most 4096 */
    uint64_t *hist;             /* nbins entries, zeroed by the call */
    uint64_t *hist_below;       /* pairs with d2 <= edges[0] */
    const volatile int *cancel; /* checked between launches */
    void (*progress)(void *ctx, double frac);
    void *progress_ctx;
} kern_fasted_args;

typedef struct kern_fasted_result {
    uint64_t pairs; /* pairs for the query rows, self-pairs included */
    /* Seconds by phase. h2d: host FP64->FP32 (round to odd) + copy;
     * convert: FP32->FP16 kernels; norms: squared norms kernel; kernel: join
     * kernels alone (events, summed); drain: pair copies + pair_fn calls. */
    double t_h2d, t_convert, t_norms, t_kernel, t_drain;
    int cache_hit; /* the converted dataset was already on the device */
    size_t d_padded;
    int symmetric;            /* symmetric tiles were actually used */
    unsigned off;             /* the variant run */
    size_t launches, refills; /* kernel launches; launches that filled the pair buffer */
    char variant[96];
    char device_name[128];
} kern_fasted_result;

/* Run the FASTED FP16-32 join. */
int kern_fasted_run(const kern_fasted_args *a, kern_fasted_result *r);
/* Free the device-side dataset cache and buffers. */
void kern_fasted_release(void);
/* Name of the variant for an off mask ("all-on", "no-swizzle", ...). */
const char *kern_fasted_variant_name(unsigned off);

/* ---- FP64 reference engines (kernels/fp64*.cu, kernels/ted*.cu) ---- */
/* FP64-SECTION */
/* Output modes of the FP64 engines, the same meaning as join_mode. */
enum { KF64_COUNT = 0, KF64_PERPOINT = 1, KF64_PAIRS = 2, KF64_HIST = 3 };

/* Pair batches of the FP64 engines: d2 stays double. i, j global rows. */
typedef int (*kern_pair64_fn)(void *ctx, size_t k, const uint32_t *i, const uint32_t *j,
                              const double *d2);

/* One run of kern_fp64_run / kern_ted_run / kern_ted_index_run. The caller
 * fills the inputs; the call fills the outputs. */
typedef struct kern_f64_job {
    const double *x; /* host, n*d row-major */
    size_t n, d;
    double eps;             /* pairs with d2 <= eps*eps (HIST: d2 <= edges[nbins]) */
    size_t q0, q1;          /* query rows [q0, q1); candidates are all rows */
    int mode;               /* KF64_* */
    uint64_t *counts;       /* PERPOINT: q1-q0 entries, zeroed by the call */
    kern_pair64_fn pair_fn; /* PAIRS */
    void *pair_ctx;
    size_t batch_pairs;       /* at most this many pairs per pair_fn call */
    const double *hist_edges; /* HIST: nbins+1 ascending squared distances */
    size_t hist_nbins;
    uint64_t *hist;             /* nbins entries, zeroed by the call */
    uint64_t *hist_below;       /* pairs with d2 <= edges[0] */
    const volatile int *cancel; /* checked between launches */
    int device;
    int ted_paper; /* ted: 1 = the paper's m8n8k4 kernel, 0 = redesigned */
    int index_k;   /* ted-index: dimensions indexed (capped by d) */
    int symmetric; /* compute tiles on/above the diagonal only (where it applies) */

    uint64_t pairs;                                /* pairs found, self-pairs included */
    double t_h2d, t_prep, t_kernel, t_d2h, t_sink; /* seconds by phase */
    size_t d_padded;
    char variant[96];
    char device_name[128];
} kern_f64_job;

/* Exact FP64 on CUDA cores, direct (a-b)^2 form, no FMA contraction. */
int kern_fp64_run(kern_f64_job *job);
/* TED-Join brute force on FP64 tensor cores (paper form or redesigned). */
int kern_ted_run(kern_f64_job *job);
/* TED-Join with the grid index over the first index_k dimensions. */
int kern_ted_index_run(kern_f64_job *job);

#ifdef __cplusplus
}
#endif

#endif
