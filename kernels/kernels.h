/* The C interface to everything in kernels/. Host code includes only this
 * header; kernels/ includes no host header but this one. Every function
 * returns 0 or a negative KERN_E* code and leaves a message in
 * kern_error(); a CUDA error fails the call, never the process. */
#ifndef TCJ_KERNELS_H
#define TCJ_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cluster_types.h"
#include "exact_bound.h"

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

/* ---- One run of any GPU engine: its arguments and its result ----
 * Every GPU engine (the FASTED formats, fp64, ted, ted-index) takes this
 * struct and runs through one launch/drain loop (kernels/kern_drive.cu):
 * bounded launches, cancel checked and progress reported between them,
 * pair buffers drained to pair_fn, CUDA-event kernel timing, and buffers
 * made smaller when the device (or mem_cap) cannot hold them. */
/* Converts m values of a dataset's element type at src to FP64, exactly
 * (the host's element table, src/dtype.c, supplies one per type). */
typedef void (*kern_to_f64_fn)(const void *src, size_t m, double *dst);
/* Element types the device widens exactly (exact keeps its rows in the
 * dataset's own type; kernels/exact.cu). The same numbers as src/dtype.h's
 * ids, so engine_gpu.c passes the id; a type added there and not here is
 * widened on the host instead. */
enum { KERN_X_F64 = 0, KERN_X_F32 = 1, KERN_X_F16 = 2, KERN_X_U8 = 3 };

/* A work queue outside this process (tcjoin-mpi's ranks,
 * src/cli/mpi_run.c): when a run's args carry one, every join entry runs
 * through kern_multi_run (one device too) and the devices' queue asks it
 * for the ranges of the engine's own work-item list (FASTED's tiles,
 * exact's, the FP64 engines' items), so that processes running the same
 * whole run share its list, its symmetric half included. Both callbacks
 * may be called from several host threads (one per device of a list). */
typedef struct kern_tiles {
    /* The run's list is `total` items of kernel `variant`: the queue's
     * number for it into *list, 0; nonzero when the other processes' list
     * differs (a one-line reason into why[why_len]). Called once a list. */
    int (*open)(void *ctx, unsigned long long total, const char *variant, int *list, char *why,
                size_t why_len);
    /* The next range [*b, *e) of list `list` for one of this process's
     * ndev devices, at least `least` and at most `most` items where that
     * many are left; 0 when none is left or the run is stopping. */
    int (*take)(void *ctx, int list, unsigned long long least, unsigned long long most, int ndev,
                unsigned long long *b, unsigned long long *e);
    void *ctx;
} kern_tiles;

/* One launch's pairs on the device (kern_join_args.pair_dev): np pairs
 * (pi[k], pj[k]) of the run's rows, d2 as the host's pair_fn would get it:
 * ((const double *)pd)[k] where d2_bytes is 8, else the FP32
 * ((const float *)pd)[k] widened and times d2_scale (0: 1; FP8's scale). */
typedef struct kern_pair_batch {
    const uint32_t *pi, *pj;
    const void *pd;
    int d2_bytes;
    double d2_scale;
    unsigned long long np;
} kern_pair_batch;

typedef struct kern_join_args {
    /* host, n*d row-major in the dataset's own element type: read only
     * through kern_rows_f64 / kern_row_f64, a block of rows at a time, so
     * no FP64 copy of the whole dataset is made on the host */
    const void *x;
    size_t x_bytes;          /* bytes of one value of x */
    kern_to_f64_fn x_to_f64; /* x's values as FP64; NULL: x is FP64 (double) */
    /* x's element type where a kernel can widen it itself (KERN_X_*, the
     * order of src/dtype.h's ids); any other value: only x_to_f64 knows */
    int x_type;
    size_t n, d;
    uint64_t hash; /* dataset content hash: with x, n, d, format a device cache key */
    size_t q0, q1; /* query rows [q0, q1); candidates are all rows (but see c0) */
    /* A cross run (kern_stream_run's chunk pairs; 0: an ordinary run):
     * queries [0, q1) read from x (q0 must be 0), candidates [c0, n) only,
     * read from xc (its first row is row c0); rows [q1, c0) are zero
     * padding, neither side. c0 is a multiple of KERN_STREAM_ALIGN. No
     * pair has i == j. A symmetric cross run counts every pair it finds in
     * both orders (COUNT 2, PAIRS (i, j) and (j, i), HIST 2, PERPOINT both
     * rows: counts then has n entries, kern_count_rows). Engines that
     * cannot (ted-index's and exact's grid index) refuse it with
     * KERN_ECROSS; they must then compute d2 in FP64 within kern_stream_run's
     * slab margin (kernels/kern_stream_slab.c). */
    size_t c0;
    const void *xc;
    int mode;   /* KJOIN_* */
    double eps; /* pairs with d2 <= eps*eps in the engine's arithmetic; HIST: d2 <= edges[nbins] */
    int symmetric; /* upper-triangle tiles only where the engine and mode allow it */
    int device;
    /* Several devices (every join entry: fasted and its formats, exact,
     * fp64, ted, ted-index; kern_fasted_kdist by blocks of query rows):
     * ndevices > 0 runs on these distinct ordinals through one queue of
     * work-item ranges and device is ignored (a list of one still takes
     * the queue path); 0: device alone. */
    int devices[KERN_MAX_DEVICES];
    int ndevices;
    /* NULL, or the queue shared with other processes (kern_tiles): this
     * run computes only the items it takes; its counts, histogram and
     * pairs are its share, the caller adds the processes' together. */
    const kern_tiles *tiles;
    uint64_t *counts;     /* PERPOINT: q1-q0 entries, zeroed by the call */
    kern_pair_fn pair_fn; /* PAIRS */
    void *pair_ctx;
    /* PAIRS through kern_drive (fasted's formats, exact): when set, each
     * launch's final pairs (after exact's refinement) stay on the device
     * and go to this instead of pair_fn: pi, pj np rows of the run in
     * device memory, valid until the launch stream's next work, handed on
     * that stream (a cudaStream_t) of run->device; whatever it enqueues
     * there runs before the next launch. run is the launch's own args:
     * where its rows are a layout's (the cluster cut: run->rows, run->n)
     * the rows are the layout's, to be mapped through run->rows. A KERN_E*
     * code (its message set) stops the run. DBSCAN's passes
     * (kernels/kern_dbscan.cu) and its curve's rounds (kern_curve.cu). */
    int (*pair_dev)(void *ctx, const struct kern_join_args *run, void *stream,
                    const struct kern_pair_batch *b);
    void *pair_dev_ctx;
    /* With pair_dev: the consumer reads no d2 (DBSCAN's passes), so exact
     * hands on a pair its bound puts inside without summing it in FP64
     * (its d2 NaN); fasted's d2 cost nothing and are there. */
    int pair_dev_ids;
    size_t batch_pairs;                       /* at most this many pairs per pair_fn call (0: 4M) */
    const double *hist_edges;                 /* HIST: nbins+1 ascending squared distances */
    size_t hist_nbins;                        /* at most 4096 */
    uint64_t *hist;                           /* nbins entries, zeroed by the call */
    uint64_t *hist_below;                     /* pairs with d2 <= edges[0] */
    const volatile int *cancel;               /* checked between launches */
    void (*progress)(void *ctx, double frac); /* after each launch: fraction of the work done */
    void *progress_ctx;
    /* Device bytes this run may hold, cached data included; 0: what the
     * device has. Buffers shrink to fit; a dataset that does not fit
     * is streamed by kern_stream_run. */
    size_t mem_cap;
    /* FASTED family */
    const struct kern_format *format; /* NULL: fp16 */
    /* Low-precision formats and exact: d FP64 column means subtracted
     * before conversion (NULL: none); distances are unchanged, the FP16
     * error shrinks with the norms. Part of the device cache's key. */
    const double *center;
    /* FASTED formats: every value (after centring) multiplied by scale
     * before conversion (0: none); eps^2 and the histogram edges are scaled
     * alike and the distances reported divided by scale^2. The FP8 formats
     * take powers of two (exact in FP64 and FP32, so the decisions are the
     * unscaled arithmetic's), int8 any positive value (`set int8-scale`'s
     * quantization). Part of the device cache's key. */
    double scale;
    unsigned off; /* FASTED_OFF_* bits: 0, one bit, or a compiled combination */
    /* FP8 on the wgmma kernel: 1 = the tensor core's own (~13-bit)
     * accumulation over all of k, 0 = each chunk of KERN_FP8_PROMOTE_SLICES
     * 128-value k slices added into FP32 registers (`set fp8-acc`). */
    int acc_fast;
    /* TED */
    int ted_paper; /* ted: 1 = the paper's m8n8k4 kernel, 0 = redesigned */
    int index_k;   /* ted-index: dimensions indexed (capped by d) */
    /* Grid engines: the dimensions by variance, largest first (d entries;
     * NULL: the run's own, kernels/kern_dims.h). kern_stream_run's slab
     * runs pass the whole dataset's, so each pair's d2 is summed in the
     * whole run's order (ted-index uploads its rows in it). */
    const int *dim_order;
    /* A cluster layout (exact's pass only; kern_cluster_run sets it): run
     * row v is the dataset's row rows[v], or padding (KERN_ROW_PAD: zero
     * values, never in a pair); it is centred on origins + d * origin_of[v]
     * (KERN_ORIGIN_NONE: not centred) instead of center; and only pairs
     * within one cluster are joined, cluster c being run rows [clu[c],
     * clu[c + 1]), each a multiple of KERN_STREAM_ALIGN (nclu clusters; 0:
     * no layout). Part of the device caches' key through hash. exact's
     * pass honours all of it; FASTED's own kernels would also count each
     * padding row's pair with itself (exact drops those). */
    const uint32_t *rows;
    const double *origins;
    const uint8_t *origin_of;
    const size_t *clu;
    int nclu;
    /* The tile cut (kern_tiles_run; with a layout of one cluster): of its
     * blocks of KERN_STREAM_ALIGN run rows, only the listed pairs are
     * joined, pair t being blocks blk[2t] <= blk[2t + 1] (nblk pairs; 0:
     * every pair of each cluster). An engine that joins more pairs still
     * gives the run's results: every pair the list leaves out is proved
     * farther apart than the run's threshold. */
    const uint32_t *blk;
    size_t nblk;
    /* kern_fasted_kdist: one flag a query row (NULL: FASTED's own
     * k-distance). Set, the k-distance is exact's: a row whose K nearest
     * the passes' error bound encloses is decided in FP64 on the device
     * (fp64's direct form: the cpu engine's value) and flagged 1; the
     * others keep the passes' estimate and 0. */
    unsigned char *kd_exact;
    /* A subset run (kern_subset_run; exact alone, COUNT and PAIRS): the
     * run's rows are the dataset's rows sub[0..nsub) (distinct), the first
     * sub_q of them its query rows: the pairs with a query row among them
     * are joined, each once (q0, q1 must be 0, n). Counts and pairs are the
     * dataset's rows. NULL: every row. */
    const uint32_t *sub;
    size_t nsub, sub_q;
    /* A layout whose rows are the dataset's own rows as converted for an
     * ordinary run (a subset run's: no origins, the run's centre and
     * scale): base_n is the dataset's row count and base_hash its hash,
     * and the run gathers its rows on the device from the engine's copy of
     * the whole dataset (made first where it is not held) instead of
     * converting them from the host. 0: from the host. */
    size_t base_n;
    uint64_t base_hash;
} kern_join_args;
#define KERN_ROW_PAD 0xffffffffu
#define KERN_ORIGIN_NONE 0xffu

/* What the exact engine's refinement did, summed over the devices and the
 * chunk runs of a run (kern_exact_add). */
typedef struct kern_exact_counts {
    uint64_t refined; /* candidate pairs computed again in FP64 */
    uint64_t band;    /* pairs (each unordered pair once when symmetric) the bound left */
    uint64_t listed;  /* candidates the pass listed for the FP64 classify (COUNT: its band) */
    /* Refined pairs summed in fp64's own order: those the screen could not
     * decide, and in PAIRS mode every kept pair (it carries fp64's d2). */
    uint64_t sequential;
    /* The refinement's kernels (classify to fp64's order, events), a part
     * of t_kernel: what the FP64 stages cost beside the pass. Like
     * t_kernel, the largest device's over several devices. */
    double t_refine;
} kern_exact_counts;

static inline void kern_exact_add(kern_exact_counts *r, const kern_exact_counts *x)
{
    r->refined += x->refined;
    r->band += x->band;
    r->listed += x->listed;
    r->sequential += x->sequential;
    r->t_refine += x->t_refine;
}

typedef struct kern_join_result {
    uint64_t pairs; /* pairs for the query rows, self-pairs included */
    /* Seconds by phase. h2d: host preparation and copies to the device;
     * convert (convert_name): conversion kernels; prep (prep_name): norms
     * or index; kernel: join kernels alone (events, summed); d2h: copies
     * back; sink: pair_fn. A NULL name: the engine has no such phase. */
    double t_h2d, t_convert, t_prep, t_kernel, t_d2h, t_sink;
    const char *convert_name, *prep_name;
    int cache_hit; /* the converted dataset was already on the device */
    size_t d_padded;
    int symmetric;            /* symmetric tiles were actually used */
    unsigned off;             /* FASTED: the variant run */
    size_t launches, refills; /* kernel launches; launches whose pair buffer overflowed */
    size_t pair_cap;          /* PAIRS: pairs the device buffer holds */
    size_t mem_peak;          /* device bytes the run held at most (its own and cached) */
    int shrunk;               /* buffers were made smaller to fit the device or mem_cap */
    kern_exact_counts ex;     /* exact's counters */
    int centred;              /* the data were centred (args.center) before conversion */
    char variant[96];
    char device_name[128];
    /* A run over a device list: each device's share (ndevices entries);
     * the phases above are then the longest device's, pairs, launches,
     * refills and refined summed, mem_peak the largest device's. */
    int ndevices;
    kern_device_share share[KERN_MAX_DEVICES];
    /* A run streamed in row chunks because the dataset did not fit the
     * device (kern_stream_run): the chunks (0: not streamed), their rows,
     * and the engine runs over chunk pairs; the phases and counters above
     * are then summed over those runs (mem_peak: the largest). */
    unsigned chunks;
    size_t chunk_rows;
    size_t chunk_runs;
    /* Streamed in slabs (an engine that takes no cross run): chunks are
     * slabs of chunk_rows query rows along dimension slab_dim of the rows
     * sorted by it, and halo_rows the rows within reach of a slab that its
     * run held besides them, summed over the runs. */
    int slabs, slab_dim;
    uint64_t halo_rows;
    /* Cut by clusters (kern_cluster_run, exact's cluster path): the groups
     * of clusters joined (0: not cut) and the share of the n^2 ordered
     * pairs the run joined. */
    unsigned clusters;
    double cluster_work;
    /* Cut by tiles (kern_tiles_run, exact's tile path): the blocks of
     * KERN_STREAM_ALIGN rows (0: not cut) and the share of the block pairs
     * of the upper triangle the run joined. */
    size_t tile_blocks;
    double tile_work;
    /* Pairs whose distance a pruning path computed (the FP64 grid's
     * candidates, a refilled PAIRS item's again), summed over devices and
     * chunk runs; 0: the run examined all of its pairs (n^2 or its cut's
     * share). */
    uint64_t examined;
    /* Pairs such a path decided without a distance (the FP64 grid's
     * sub-cells: every pair within one is within eps), and DBSCAN's
     * dense cells on it: sub-cells of minpts rows or more, core without
     * a distance, and the rows they hold. */
    uint64_t skipped, dense_cells, dense_rows;
} kern_join_result;

/* Rows of a cross run's candidate start (kern_join_args.c0) are a
 * multiple of this: whole 256-row wgmma column tiles (exact's per-tile
 * bound maxima are indexed by column / 256). */
#define KERN_STREAM_ALIGN 256

/* Where row i of a run lives on the host: its first value in the
 * dataset's own type, or NULL for a cross run's or a layout's padding
 * rows. */
static inline const void *kern_row_ptr(const kern_join_args *a, size_t i)
{
    if (a->rows)
        return a->rows[i] == KERN_ROW_PAD ? NULL
                                          : (const char *)a->x + a->rows[i] * a->d * a->x_bytes;
    if (a->c0 && i >= a->q1) {
        if (i < a->c0)
            return NULL;
        return (const char *)a->xc + (i - a->c0) * a->d * a->x_bytes;
    }
    return (const char *)a->x + i * a->d * a->x_bytes;
}

/* The run's rows [i0, i0 + count) as the pointer `p` of each contiguous
 * run of them (NULL: padding), for copies that must not widen. */
static inline size_t kern_rows_span(const kern_join_args *a, size_t i0, size_t count,
                                    const void **p)
{
    if (a->rows) { /* the rows that follow one another in the dataset */
        size_t m = 1;
        const int pad = a->rows[i0] == KERN_ROW_PAD;
        while (m < count &&
               (pad ? a->rows[i0 + m] == KERN_ROW_PAD : a->rows[i0 + m] == a->rows[i0] + m))
            m++;
        *p = kern_row_ptr(a, i0);
        return m;
    }
    size_t end = i0 + count;
    if (a->c0 && i0 < a->q1 && end > a->q1)
        end = a->q1;
    else if (a->c0 && i0 >= a->q1 && i0 < a->c0 && end > a->c0)
        end = a->c0;
    *p = kern_row_ptr(a, i0);
    return end - i0;
}

/* Rows [i0, i0 + count) of the run as FP64 into dst (count*d values);
 * a cross run's padding rows are zeros. */
static inline void kern_rows_f64(const kern_join_args *a, size_t i0, size_t count, double *dst)
{
    while (count) {
        const void *src;
        const size_t m = kern_rows_span(a, i0, count, &src);
        if (!src)
            memset(dst, 0, m * a->d * sizeof(double));
        else if (a->x_to_f64)
            a->x_to_f64(src, m * a->d, dst);
        else
            memcpy(dst, src, m * a->d * sizeof(double));
        i0 += m;
        count -= m;
        dst += m * a->d;
    }
}

/* Row i of the run as FP64: a pointer into x when x is FP64, else buf (d
 * values) filled. */
static inline const double *kern_row_f64(const kern_join_args *a, size_t i, double *buf)
{
    const void *p = kern_row_ptr(a, i);
    if (p && !a->x_to_f64)
        return (const double *)p;
    kern_rows_f64(a, i, 1, buf);
    return buf;
}

/* Entries of a PERPOINT run's counts: one per query row, or one per row
 * of a symmetric cross run (its candidates count too). */
/* The centre run row v is taken about (NULL: none): a layout's origin of
 * the row, else the run's centre. */
static inline const double *kern_row_center(const kern_join_args *a, size_t v)
{
    if (a->origin_of)
        return a->origin_of[v] == KERN_ORIGIN_NONE ? (const double *)0
                                                   : a->origins + a->d * a->origin_of[v];
    return a->center;
}

/* The whole dataset a layout's rows are gathered from (a->base_n): an
 * ordinary run's arguments over it. */
static inline kern_join_args kern_base_args(const kern_join_args *a)
{
    kern_join_args b = *a;
    b.n = a->base_n;
    b.hash = a->base_hash;
    b.q0 = 0;
    b.q1 = a->base_n;
    b.c0 = 0;
    b.xc = (const void *)0;
    b.rows = (const uint32_t *)0;
    b.origins = (const double *)0;
    b.origin_of = (const uint8_t *)0;
    b.clu = (const size_t *)0;
    b.nclu = 0;
    b.blk = (const uint32_t *)0;
    b.nblk = 0;
    b.base_n = 0;
    b.base_hash = 0;
    return b;
}

static inline size_t kern_count_rows(const kern_join_args *a)
{
    return a->c0 && a->symmetric ? a->n : a->q1 - a->q0;
}

/* An engine's kernel entry. */
typedef int (*kern_join_fn)(const kern_join_args *a, kern_join_result *r);
/* fn over a's run, streamed when the dataset does not fit the device (or
 * a->mem_cap): first the whole run; when that fails for memory before any
 * pair reached the sink, the rows are cut into chunks of R rows (R a
 * multiple of KERN_STREAM_ALIGN, halved until a chunk pair's runs fit) and
 * fn runs once per chunk (its own pairs) and once per pair of chunks (a
 * cross run, kern_join_args.c0; both orders of chunk pairs when the
 * engine's run is not symmetric). An engine that refuses a cross run
 * (KERN_ECROSS) is cut in slabs instead: the rows sorted along one
 * dimension, one run per slab of R of them as query rows with every row
 * within reach of the slab as candidates. Counts, per-point counts,
 * histograms and pairs are those of the whole run, rows renumbered to the
 * dataset's; r sums the runs and says how they were cut (chunks,
 * chunk_rows, chunk_runs; slabs, slab_dim, halo_rows). Pure host code
 * (kernels/kern_stream.c, kern_stream_slab.c): a CPU build and the unit
 * tests run it over any fn. */
int kern_stream_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r);
/* A k-distance's cut (kern_stream_kdist): the query rows [q0, q1) of
 * the dataset, whose candidates are those rows themselves and the rest of
 * the dataset in pieces of at most `rows` rows (kern_kd_pieces). */
typedef struct kern_kd_cut {
    size_t q0, q1, rows;
} kern_kd_cut;
/* A k-distance entry: out[q - a->q0] = the K-th smallest d2(q, j) over the
 * rows j != q, for a's query rows. With a cut (NULL: none) the query rows
 * are the cut's (a's q0, q1 are ignored; out[q - cut->q0]) and no run may
 * hold more than the cut's query rows and one piece (a cross run, queries
 * the cut's rows, candidates the piece: kern_join_args.c0). */
typedef int (*kern_kd_fn)(const kern_join_args *a, int K, const kern_kd_cut *cut, double *out,
                          kern_join_result *r);
/* The pieces of a cut of n rows: rows [0, cut->q0) and [cut->q1, n) in
 * order, each cut into pieces of at most cut->rows rows, as [b0[t], b1[t])
 * for t below the count returned (at most n / cut->rows + 2 entries). */
size_t kern_kd_pieces(size_t n, const kern_kd_cut *cut, size_t *b0, size_t *b1);
/* The device-cache hash of one run of a cut: the dataset's hash h mixed
 * with the cut's query rows and the piece starting at row b0 (b0 ==
 * cut->q0: the query rows alone). */
uint64_t kern_kd_hash(uint64_t h, const kern_kd_cut *cut, size_t b0);
/* fn's k-distance, streamed when the dataset does not fit the device (or
 * a->mem_cap): first the whole computation; when that fails for memory,
 * the query rows are cut into chunks of R rows (R a multiple of
 * KERN_STREAM_ALIGN, a third of the rows first, halved until the runs
 * fit), and fn computes each chunk over the chunk and the rest of the
 * rows in pieces of R (kern_kd_cut). The answers are the whole
 * computation's: a k-distance is decided by its row's d2 values alone,
 * and each run computes them as the whole run does. r sums the runs and
 * says how they were cut (chunks, chunk_rows, chunk_runs: runs of a
 * chunk's rows against itself or a piece). Pure host code
 * (kernels/kern_stream_kd.c). */
int kern_stream_kdist(kern_kd_fn fn, const kern_join_args *a, int K, double *out,
                      kern_join_result *r);
/* FASTED in the args' format. */
int kern_fasted_run(const kern_join_args *a, kern_join_result *r);
/* Exact FP64 on CUDA cores, direct (a-b)^2 form, no FMA contraction. */
int kern_fp64_run(const kern_join_args *a, kern_join_result *r);
/* TED-Join brute force on FP64 tensor cores (paper form or redesigned). */
int kern_ted_run(const kern_join_args *a, kern_join_result *r);
/* TED-Join with the grid index over the first index_k dimensions. */
int kern_ted_index_run(const kern_join_args *a, kern_join_result *r);
/* exact's FP64 grid path (src/engine_exact.c chooses it for low d and a
 * large band): kern_fp64_run's arithmetic over the candidates of
 * ted-index's grid index, on the rows as given (no centring, no scale,
 * symmetric ignored as fp64 ignores it): fp64's results in every mode.
 * Refuses data that are not finite (KERN_EINVAL). */
int kern_fp64_grid_run(const kern_join_args *a, kern_join_result *r);
/* The FP64 grid at d <= 3 counts a query's own sub-cell (every pair in
 * one is within eps) without distances where it holds this many rows or
 * more (kern_join_result.skipped): at S = 32 on uniform data a sub-cell
 * holds about one row, and splitting the candidate ranges around a few
 * rows costs more than their distances. */
#define KERN_GRID_OWN_MIN 8
/* DBSCAN's three passes on the FP64 grid path, one device (the first of
 * a's list), every row a query (q0 = 0, q1 = n), at a->eps: core (n, out)
 * = at least minpts rows within eps, itself included (no per-point count
 * leaves the device); labels (n, out): src/cluster/dbscan.h's labels, numbered on
 * the device (the components of the eps-graph's core-core edges numbered
 * 0, 1, ... in order of each one's smallest core row; a non-core row the
 * smallest number among its core neighbours', -1 when it has none);
 * *pairs the eps-join's pairs (self included), *core_s the core pass's
 * seconds; r->pairs the unions called: core-core pairs (i < j) within
 * eps found while their rows were not yet known to share a component.
 * kernels/epi_cluster.cuh. */
int kern_fp64_grid_dbscan(const kern_join_args *a, uint64_t minpts, uint8_t *core, int32_t *labels,
                          unsigned long long *pairs, double *core_s, kern_join_result *r);
/* The k-distance over the FP64 grid on one device (the first of a's list;
 * kernels/grid_kdist.cu): out[q - q0] for query rows [q0, q1) = the k-th
 * smallest d2 to another row, kern_fp64_run's arithmetic (cpu's values
 * exactly); passes at radius r0, 2 r0, ... (r0 > 0: a guess; narrowed
 * where the cells are far denser). 1 <= k <= 256, k <= n - 1. */
int kern_fp64_grid_kdist(const kern_join_args *a, int k, double r0, double *out,
                         kern_join_result *r);
/* The k-distance by brute force in FP64 on one device (the first of a's
 * list; kernels/fp64_kdist.cu): out[q - q0] as kern_fp64_grid_kdist's,
 * every query row against every row. For small work: exact's auto takes
 * it where (q1 - q0) n d is at most KERN_KDIST_BRUTE_WORK, where the
 * tensor-core passes' and the grid's fixed costs exceed the products. 1 <= k <= 256, k <= n - 1. */
#define KERN_KDIST_BRUTE_WORK 17179869184.0 /* 2^34 */
int kern_fp64_kdist_brute(const kern_join_args *a, int k, double *out, kern_join_result *r);
/* DBSCAN's three passes on the device as fn's PAIRS runs (fn: a
 * kern_join_fn that drives its PAIRS through kern_drive: kern_fasted_run,
 * kern_exact_run, kern_exact_clusters_*), the pairs consumed there
 * (pair_dev): the eps-graph of the same row's PAIRS run, a's options and
 * transforms, every row a query, on a's device or over its device list.
 * Core flags from the counted pairs (self included, >= minpts); the
 * union-find of core-core pairs; a non-core row's core neighbours kept in
 * minpts - 2 slots where they fit, else a border pass. Out: io->core (n),
 * io->ncore, io->root (cluster_types.h's dbscan_dev_io; labels unused,
 * numbered 0), io->core_s, io->pairs, and rcore (the core pass: its run,
 * pairs the PERPOINT sum), r the union and border passes (pairs: the
 * union pass's listed pairs). KERN_ENOMEM when the dataset does not fit a
 * device (no streamed form: the caller falls back to the generic passes).
 * kernels/kern_dbscan.cu. */
int kern_dbscan(kern_join_fn fn, const kern_join_args *a, dbscan_dev_io *io,
                kern_join_result *rcore, kern_join_result *r);
/* The merging after a curve join where its lists are (src/cluster/
 * curve_merging.c, curve_merging_run: the same passes, the same results), given on a round's io
 * (curve_round_io.merge, curve_core_io.merge): the lists stay on the first
 * device and are merged there, io->list left unwritten (done = 1); where
 * the merging's state (106 bytes a row) does not fit, done = 0 and the
 * lists come back as without it. kern_curve_merge_run takes the lists
 * (and kb: NULL, or the K nearest's bounds) in the current device's memory.
 * kernels/kern_curve_merge.cu. */
int kern_curve_merge_run(size_t n, curve_list *list, const double *kb, curve_merge *m);
/* The rows a later join of DBSCAN's curve queries, found on the current
 * device as the merging there finds them (kernels/kern_curve_later.cu,
 * kcl_rows) from host arrays: curve_later_rows's (src/cluster/curve_later.h)
 * rows into rows (n, uint32), *m of them and then the largest open
 * component's *mb. For the tests; 0 or an error code. */
int kern_curve_later_rows(size_t n, const double *core, const uint32_t *comp,
                          const curve_edge *bound, const uint32_t *part, uint32_t *rows, size_t *m,
                          size_t *mb);
/* One Boruvka join of DBSCAN's curve (src/cluster/dbscan_curve.c) with its pairs
 * consumed on the device (pair_dev), over fn's PAIRS run at a->eps on a's
 * device or device list (fn as kern_dbscan's). Each pair (i, j), i != j,
 * after the layout's rows (run->rows) and then `at` are applied: where
 * reach2 is set, reach2[i] = min(reach2[i], max(core2[j], d2)); its edge
 * w = max(core2[i], core2[j], d2), when w <= max2 and comp[i] != comp[j],
 * offered to both ends' lists: each list holds the CURVE_LIST least
 * edges it was offered by (w, a, b), a < b, each once, as a max-heap
 * (e[0] the heaviest), whatever order the pairs come in: the host sink's
 * lists (src/cluster/curve_list.c, curve_list_put) exactly. list (n, out) is written
 * whole; reach2 (n) in and out; where io->merge made the curve's end
 * (finished), neither: its take had the sorted arrays. Several devices: each keeps its own,
 * merged on the first. KERN_ENOMEM when the state or the dataset does not
 * fit a device (the caller takes the host sink). kernels/kern_curve.cu. */
int kern_curve_round(kern_join_fn fn, const kern_join_args *a, const curve_round_io *io,
                     kern_join_result *r);
/* One Boruvka round of HDBSCAN*'s tree beyond the curve's forest
 * (src/cluster/hdbscan_mst.c), on a's device (a list's first): for the
 * components that search (at least half of those but io->skip, the
 * smallest first), each one's lightest mutual-reachability edge to
 * another, exactly (FP64's direct form; edges by (w, a, b)), into
 * io->best by root (INFINITY for the others). FASTED's pass in a's format
 * and transforms with the masked nearest-neighbour epilogue estimates each
 * row's; exact's error bound screens the rows, the rest are decided in
 * FP64 on the device. Where the components are few, the rest of the tree
 * at once instead: each component's edge towards io->skip in it
 * (kernels/kern_mst.cu, ms_pair_round). a: every row (q0 0, q1 n), no
 * layout.
 * KERN_ENOMEM where the state or the dataset does not fit, or the data's
 * type is none the device reads (the caller takes the host's round). */
int kern_mst_round(const kern_join_args *a, mst_round_io *io, kern_join_result *r);
/* The radius-neighbours graph of fn's PAIRS run at a->eps over every row
 * (q0 = 0, q1 = n), its pairs kept on a's device (pair_dev; graph_dev_io,
 * kernels/cluster_types.h): row i's entries the pairs (i, j) the run
 * lists, (i, i) only with io->include_self, each with the d2 the run's
 * pair_fn would get. Out: io->indptr, and io->kept holding the entries in
 * (i, j) order on the device (32 bytes an entry while it sorts, 16 after)
 * until kern_graph_copy writes indices (indptr[n] columns) and, where
 * dist is set, the distances (d2 > 0 ? sqrt(d2) : 0) into host memory,
 * or kern_graph_free. KERN_ENOMEM where the entries do not fit the
 * device, or the run would be over several devices or processes (the
 * caller's host route then). kernels/kern_graph.cu. */
struct kern_graph;
int kern_graph_run(kern_join_fn fn, const kern_join_args *a, graph_dev_io *io, kern_join_result *r);
int kern_graph_copy(struct kern_graph *g, int32_t *indices, double *dist);
uint64_t kern_graph_entries(const struct kern_graph *g); /* indptr[n] */
void kern_graph_free(struct kern_graph *g);              /* NULL: nothing */
/* The core distances of DBSCAN's curve (src/cluster/dbscan_curve.c) from fn's
 * PAIRS run at a->eps (the curve's max) over every row (q0 = 0, q1 = n),
 * its pairs consumed on the device (pair_dev) on a's device or device
 * list: each pair (i, j), i != j, after the layout's rows, offers d2 to
 * row i and to row j; each row keeps the K least d2 offered by distinct
 * rows j (each row counted once, however often its pair comes). Out:
 * core2[i] (a->n) the k-th least (k <= K), +inf where fewer than k rows
 * were offered or above max2; where list is set, from row i's K kept
 * (d2, j) the curve's first round (kernels/knn_lists.h): list[i],
 * reach2[i], kb[i] (with merge, its curve's end there: merge->finished). Several devices: each
 * keeps its own sets, merged on the first. KERN_ENOMEM when the state (12K + 16 bytes a row; 12K +
 * 152 more on the first device with list) does not fit a device (the caller's host route then).
 * kernels/kern_curve_core.cu. */
int kern_curve_core(kern_join_fn fn, const kern_join_args *a, const curve_core_io *io,
                    kern_join_result *r);
/* exact: FASTED (fp16) candidates at eps^2 + the bound, each computed again
 * in FP64 as kern_fp64_run computes it: fp64's results in every mode. */
int kern_exact_run(const kern_join_args *a, kern_join_result *r);
/* ---- Subset runs (kernels/kern_subset.c) ----
 * A run over the rows a->sub (kern_join_args.sub) as a layout of one
 * group: the query rows first, then the others, each part padded to whole
 * blocks of KERN_STREAM_ALIGN rows, and only the block pairs with a query
 * block joined (the tile cut's list), so no pair of two other rows is
 * computed. Its one origin is the run's centre (zeros where it has none),
 * so each row is converted as an ordinary run converts it, and its
 * padding rows are marked as a layout's are (KERN_ORIGIN_NONE). On one device the layout views the
 * dataset's rows (base_n): the engine gathers them on the device from its copy of the whole
 * dataset, which stays resident for the next run, and a run costs its
 * kernels and a few launches of host work whatever its rows. fn must
 * honour a layout and its tile list (exact's pass). Pure host code. */
typedef struct kern_subset_layout {
    uint32_t *rows;     /* n entries: dataset rows, KERN_ROW_PAD for padding */
    uint8_t *origin_of; /* n entries: 0, KERN_ORIGIN_NONE for padding */
    double *zero;       /* d zeros: the one origin where the run has no centre */
    size_t n;           /* run rows: whole blocks */
    size_t qb;          /* blocks of query rows */
    uint32_t *blk;      /* nblk pairs (I, J), I <= J, I < qb */
    size_t nblk;
    uint64_t hash; /* the rows' content hash, mixed with the dataset's */
} kern_subset_layout;
int kern_subset_layout_make(const kern_join_args *a, kern_subset_layout *L);
void kern_subset_layout_free(kern_subset_layout *L);
int kern_subset_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r);
/* ---- The cluster cut (kernels/kern_cluster.c, the plan; kernels/
 * kern_stream_clu.c, the run) ----
 * Rows far from one origin make FP16's error, and so exact's band, large;
 * rows in clusters are near their own cluster's centre. The cut clusters
 * the rows (k-means on a sample, every row then to its nearest centre, in
 * FP64), groups the clusters that are not proved farther apart than eps
 * (centres farther apart than eps and both radii: by the triangle
 * inequality no pair of theirs is within eps, with a margin for the
 * engine's FP64 d2, a pair FP64 puts in being within eps (1 + (d + 2)
 * 2^-53) of each other), and runs fn once over a layout of the groups
 * (kern_join_args.rows, origins, clu): each group's members padded to
 * whole tiles and centred on the group's origin, only pairs within a group
 * joined; fn must honour the layout (exact's pass does). The values are
 * scaled down by a power of two where the centred values pass FP16's
 * range (as exact scales its data). Counts, per-point counts, histograms
 * and pairs are the whole run's, rows renumbered to the dataset's; r says
 * how the rows were cut (clusters: the groups, cluster_work). The
 * clustering depends on the rows only, the layout on its groups; both are
 * kept across runs of one dataset. Only an ordinary symmetric run is cut
 * (q0 = 0, q1 = n, no cross run, clusters of min_rows rows, all values
 * finite, at least two groups), and with force 0 only where the run joins at most
 * KERN_CLU_KEEP of the n^2 pairs; else fn runs the whole as asked. Pure
 * host code: a CPU build and the unit tests run it over any fn that keeps
 * the layout's contract. */
#define KERN_CLU_MIN_ROWS 2048 /* a group's tiles fill an H200 (docs/ACCURACY.md) */
#define KERN_CLU_KEEP 0.5
int kern_cluster_run(kern_join_fn fn, const kern_join_args *a, kern_join_result *r, int force,
                     size_t min_rows);
/* exact over the cluster cut: `set exact-path clusters` (force) and auto
 * beyond the grid's reach (where the run joins at most half the pairs). */
int kern_exact_clusters_run(const kern_join_args *a, kern_join_result *r);
int kern_exact_clusters_auto_run(const kern_join_args *a, kern_join_result *r);
/* After a run that r says was cut (r->clusters > 0; the last run, one at
 * a time): each of the dataset's n rows' group into part. No pair of rows
 * in two groups is within the run's eps (the groups are proved apart), so
 * the groups bound where the run's edges go (the curve's closed
 * components, src/cluster/dbscan_curve.c). 0, or KERN_EINVAL where no layout of n
 * rows is held. */
int kern_cluster_parts(size_t n, uint32_t *part);
/* ---- The tile cut (kernels/kern_tiles.c) ----
 * Where the rows spread over a few dimensions against eps (d from 4 to
 * 16, the LiDAR and simulation data), most blocks of rows that lie
 * together are far from most others: the cut orders the rows by a k-d
 * tree (each node split at a whole block of KERN_STREAM_ALIGN rows, along
 * its widest dimension), takes each block's FP64 bounding box, and at the
 * run's threshold lists the pairs of blocks whose boxes are within it (a
 * traversal of the tree's node pairs, a pair pruned when its boxes are
 * farther apart than the threshold with a margin of 2^-40 relative, far
 * beyond an FP64 d2's (d + 2) 2^-53), and runs fn once over the rows in
 * that order (kern_join_args.rows, one cluster centred as the run was,
 * blk): only the listed tiles are joined. Results are the whole run's,
 * rows renumbered to the dataset's; r says how (tile_blocks, tile_work).
 * The order depends on the rows only and is kept across runs of one
 * dataset (an FP64 copy of the rows while it is built; then 4 bytes a row
 * and two boxes a block), the list on the threshold too (the last one
 * kept). Only an ordinary symmetric run is cut (as the cluster cut, all
 * values finite, at least KERN_TILE_MIN_ROWS rows, a list of at most
 * KERN_TILE_MAX_PAIRS block pairs), and with force 0 only where it joins * at most KERN_TILE_KEEP
 * of the block pairs; else other runs the whole. Before it builds the order, force 0 estimates that
 * share on the tree of every 16th row (blocks of 16 rows hold a plan's block's share of the data):
 * an estimate above KERN_TILE_KEEP runs other without the plan. */
#define KERN_TILE_MIN_ROWS (4 * KERN_STREAM_ALIGN)
#define KERN_TILE_KEEP 0.6
#define KERN_TILE_MAX_PAIRS ((size_t)1 << 26) /* 512 MB of list */
#define KERN_TILE_MAX_D 16                    /* auto tries the cut up to here */
int kern_tiles_run(kern_join_fn fn, kern_join_fn other, const kern_join_args *a,
                   kern_join_result *r, int force);
/* Plans the tile cut has built since the program started (tests). */
size_t kern_tiles_plans_for_tests(void);
/* exact over the tile cut: `set exact-path tiles` (force); and exact's
 * auto beyond the grid: the tile cut where d <= KERN_TILE_MAX_D and it
 * pays, else the cluster cut's rule (kern_exact_clusters_auto_run). */
int kern_exact_tiles_run(const kern_join_args *a, kern_join_result *r);
int kern_exact_auto_run(const kern_join_args *a, kern_join_result *r);
/* k-distance in FASTED's arithmetic and the args' format: out[q - q0] =
 * the k-th smallest d2(q, j) over all rows j != q, for the query rows
 * [q0, q1), as the join's epilogue computes d2 (widened to double). Uses
 * x, n, d, hash, q0, q1, symmetric, device, format, off, mem_cap,
 * batch_pairs, cancel and progress of a, and devices/ndevices (the query
 * rows in blocks from one queue, as kern_join_args says); r gets the summed
 * timings of its passes (over a device list: each device's, the longest
 * kept, and its share) (kernels/fasted_kdist.cu). A dataset larger than
 * the device (or mem_cap) is streamed (kern_stream_kdist). */
int kern_fasted_kdist(const kern_join_args *a, int k, double *out, kern_join_result *r);

/* Pass A's bounds of kern_fasted_kdist from host arrays, on the current
 * device: for each of rows rows of nchunk chunk minima (non-negative or
 * +inf), u2 the k-th smallest and (u2w not NULL) u2w the k2-th, with the
 * minima held in registers (regs) or read from memory each step. For the
 * tests; 0 or an error code. */
int kern_kd_bounds(const float *mins, size_t rows, unsigned nchunk, int k, int k2, float *u2,
                   float *u2w, int regs);

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
