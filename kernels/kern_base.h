/* What every part of the C interface to kernels/ rests on: the KERN_E*
 * codes and kern_error(), the trace switches, the devices (one, several
 * of one host, the features each offers), the host's pair callback and
 * the output modes. Plain C; kernels.h includes it. */
#ifndef TCJ_KERN_BASE_H
#define TCJ_KERN_BASE_H

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
    KERN_ENOMEM = -3, /* the device (or the run's memory cap) cannot hold what the run needs */
    KERN_EINVAL = -1,
    KERN_ESINK = -9, /* the host callback asked to stop */
    /* the engine takes no cross run (kern_join_args.c0): its index covers
     * every row; kern_stream_run cuts it in slabs instead */
    KERN_ECROSS = -10,
};

/* The last error message of this thread's kernel calls. */
const char *kern_error(void);
/* Set it (host code of kernels/ written in C): returns code. */
int kern_fail_msg(int code, const char *msg);
/* 1 when the binary holds CUDA code (built with nvcc). */
int kern_built_with_cuda(void);
/* TCJOIN_TRACE (kernels/kern_trace.c): what to trace, a comma list of
 * parts, each a row of kern_trace.c's table: "steps" (the step lines on
 * stderr: where a run's time goes), "cut-dump=FILE" (each new layout of
 * the cluster cut written to FILE); "1" or "all" every part that prints
 * on stderr (what the variable always meant); "0" none. Read once. */
typedef enum kern_trace_part {
    KERN_TRACE_STEPS,
    KERN_TRACE_CUT_DUMP,
    KERN_TRACE_NPARTS,
} kern_trace_part;
/* Whether the step lines are on (every step line asks this), and a mark
 * of a run's host steps (the milliseconds since the previous one) on
 * stderr. */
int kern_trace_on(void);
void kern_trace_mark(const char *what);
/* The file part p writes to, or NULL when p is off (or writes none). */
const char *kern_trace_file(kern_trace_part p);
/* Trace as spec says (a TCJOIN_TRACE value; NULL: nothing), instead of
 * what the environment said: 0, or KERN_EINVAL with kern_error naming the
 * first word that is no part (the other words are taken). Tests. */
int kern_trace_set(const char *spec);

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

/* ---- Several GPUs of one host (`set devices`; docs/SCALING.md) ----
 * A join given a list of devices shares its work-item list among them
 * through one queue of ranges, a host thread per device. */
#define KERN_MAX_DEVICES 8

/* One device's share of a run over several. */
typedef struct kern_device_share {
    int device;               /* CUDA ordinal */
    unsigned long long items; /* work items (block tiles) it took from the queue */
    size_t launches;
    double t_kernel; /* its join kernels (events, summed) */
    uint64_t pairs;  /* pairs it found (PAIRS: drained to the sink) */
} kern_device_share;

/* Host callback receiving pair batches drained from a device buffer:
 * i, j global rows, d2 the squared distance as the engine computed it
 * (an FP32 value widened exactly, or FP64). Return 0 to go on, nonzero to
 * stop. */
typedef int (*kern_pair_fn)(void *ctx, size_t k, const uint32_t *i, const uint32_t *j,
                            const double *d2);

/* Output modes of every GPU engine, the same meaning as join_mode. */
enum { KJOIN_COUNT = 0, KJOIN_PERPOINT = 1, KJOIN_PAIRS = 2, KJOIN_HIST = 3 };

/* ---- Device features: one predicate per feature, for both sides ----
 * From a compute capability (major*10 + minor), pure (kernels/fasted_choose.c): */
int kern_cc_has_f64_mma(int cc); /* FP64 tensor cores: sm_80, sm_90 and later data-centre parts */
int kern_cc_has_fp8_mma(int cc); /* FP8 mma.sync: sm_89 and later */
int kern_cc_has_wgmma(int cc);   /* wgmma + TMA: exactly sm_90 (the sm_90a code) */
/* For a device: the predicate above, and for wgmma also that the driver
 * loaded this binary's sm_90a code and exports the tensor-map encoder.
 * 0 when the device does not exist (kern_error() says why). */
int kern_device_has_f64_mma(int dev);
int kern_device_has_fp8_mma(int dev);
int kern_device_has_wgmma(int dev);

#ifdef __cplusplus
}
#endif

#endif
