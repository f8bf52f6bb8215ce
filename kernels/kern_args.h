/* One run of any GPU engine: its arguments (kern_join_args, with the
 * work queue shared with other processes and the device pair batch), its
 * result (kern_join_result, exact's counters), the helpers that read a
 * run's rows on the host, the engine entry's type kern_join_fn, and the
 * streamed runs over a dataset larger than the device (kern_stream_run,
 * the k-distance's cut and kern_stream_kdist). */
#ifndef TCJ_KERN_ARGS_H
#define TCJ_KERN_ARGS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "kern_base.h"

#ifdef __cplusplus
extern "C" {
#endif

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

#ifdef __cplusplus
}
#endif

#endif
