/* FASTED's number formats and the kernel choice: the teaching switches
 * and their variant names, the compiled configurations, the format
 * descriptors (kern_fmt_NAME), the device's capabilities and
 * fasted_choose, the format probe, FASTED's device cache, and the
 * promotion chunk sizes the kernels and the tests share. */
#ifndef TCJ_KERN_FORMATS_H
#define TCJ_KERN_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- FASTED: the tensor-core join, one template for every number format
 * (kernels/fasted*.cu[h], one instance file kernels/fmt_*.cu per format) ---- */
/* FASTED-SECTION */
/* Teaching switches, one bit each. kern_fasted_switches names them; each
 * switch off alone is a compiled variant (a named configuration one line
 * off all_on), and so is async-copy together with pipeline (the paper
 * disables memcpy_async with its pipeline). */
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

typedef struct kern_switch {
    unsigned bit;     /* FASTED_OFF_* */
    const char *name; /* "order", "smem-buffer", ... (the variant is "no-" name) */
} kern_switch;
/* Every switch, terminated by a row with name NULL. */
extern const kern_switch kern_fasted_switches[];
/* Variant name of an off mask: "all-on", "no-swizzle", "no-async-copy+pipeline",
 * ... ("mma.sync all-on" for wgmma off alone); "invalid" for a mask that is
 * no compiled variant. Static storage. */
const char *kern_fasted_variant_name(unsigned off);

/* One compiled mma.sync configuration of a format. */
typedef struct kern_variant {
    unsigned off; /* FASTED_OFF_* bits it turns off (0: all on) */
    int bm, bn;   /* block tile (points) */
    int minb;     /* blocks per SM it is built for */
    size_t smem;  /* dynamic shared memory without the histogram */
} kern_variant;

/* A number format of the tensor-core join, defined by its instance file
 * kernels/fmt_NAME.cu (kern_fmt_NAME): the storage, conversion and norms,
 * its MMA instructions and the configurations compiled for it. */
struct fasted_fmt_ops;
typedef struct kern_format {
    const char *name; /* "fp16", "bf16", "tf32" */
    int elem_bytes;   /* bytes per stored value on the device */
    int min_cc;       /* compute capability its mma.sync needs (80 = sm_80) */
    size_t wg_smem;   /* 0: no wgmma kernel; else its dynamic shared memory without histogram */
    int int_dist;     /* exact integer distances (int8): thresholds are integers (eps2_u) */
    const kern_variant *variants; /* variants[0] is all-on */
    int nvariants;
    const struct fasted_fmt_ops *ops; /* kernels/ only */
    int widen; /* stored in 8 bits, widened to FP16 in the kernels (ue5m3, ue4m4) */
    /* The device holds every value times 2^value_log2 (ue4m4: -8, so that
     * its codes shifted by 6 are FP16 bit patterns): the host scales the
     * data, eps^2 and the histogram edges by it on top of
     * kern_join_args.scale and the distances back (exact: a power of two). */
    int value_log2;
} kern_format;

/* Engine rows name a format with KERN_FORMAT(name); a build without CUDA
 * has none (NULL). */
#define KERN_FORMAT_DECL(f) extern const kern_format kern_fmt_##f
#ifdef TCJ_CUDA
#define KERN_FORMAT(f) (&kern_fmt_##f)
#else
#define KERN_FORMAT(f) ((const kern_format *)0)
#endif
KERN_FORMAT_DECL(fp16);

/* What the device offers to the kernel choice. */
typedef struct kern_caps {
    int cc;            /* compute capability, major*10 + minor */
    int wgmma;         /* kern_device_has_wgmma */
    size_t smem_optin; /* dynamic shared memory a block may opt in to */
} kern_caps;

enum { FASTED_KIND_MMA = 1, FASTED_KIND_WGMMA = 2 };
typedef struct fasted_choice {
    int kind;              /* FASTED_KIND_* */
    const kern_variant *v; /* MMA: the configuration */
    int order;             /* 1: 8x8 squares of tiles; 0: row by row */
    size_t smem;           /* dynamic shared memory of the launch, histogram included */
    char variant[64];      /* the name the run reports */
    char why[200];         /* the reason when the choice fails */
} fasted_choice;
/* The kernel for a run: a pure function of the switches off, the output
 * mode, the format, the device and the histogram's size. 0, or KERN_EINVAL
 * / KERN_ENODEV with the reason in out->why. */
int fasted_choose(unsigned off, int mode, const kern_format *fmt, const kern_caps *caps,
                  size_t hist_nbins, fasted_choice *out);

/* The format's device conversion of n FP32 values, each as a one-value
 * row: codes gets the stored value of each (elem_bytes bytes each) and sq
 * its squared norm as the format's norms form it (v^2 for one value). x
 * as the host hands values to the device: already times
 * 2^fmt->value_log2, and sq in those units. For tests against the host's
 * rounding (tests/gpu/g_ue8.c). */
int kern_format_probe(const kern_format *fmt, int dev, const float *x, size_t n, void *codes,
                      float *sq);

/* Free FASTED's device-side dataset cache and every engine's cached
 * buffers. */
void kern_fasted_release(void);
/* Tests: FASTED's cached dataset on device dev, an FNV-1a digest of its
 * converted rows and squared norms as stored there, and *from the device
 * it was copied from over a device list (-1: converted on dev).
 * KERN_EINVAL when dev holds none. */
int kern_fasted_cache_digest(int dev, uint64_t *digest, int *from);

/* FP8 on the wgmma kernel without `set fp8-acc fast`: the tensor core
 * sums chunks of this many 128-value k slices, each then added into FP32
 * registers (kernels/fmt_fp8.cu); the GPU test's band follows it. 2 (256
 * values): 1 costs 5% more kernel time on the H200 (docs/FORMATS.md). */
#define KERN_FP8_PROMOTE_SLICES 2
/* exact's FP16 pass at large d (kernels/exact_kern.cuh): chunks of 2 slices, 128
 * FP16 values, summed in the tensor core and added in FP32. */
#define KERN_FP16X_PROMOTE_SLICES 2
#define KERN_FP16X_PROMOTE_VALUES 128

#ifdef __cplusplus
}
#endif

#endif
