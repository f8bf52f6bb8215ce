/* FASTED host driver, for every number format: upload and conversion
 * (FP64 host -> FP32 rounded to odd -> the format on the device, squared
 * norms as the format's traits form them), the device-side dataset cache,
 * the kernel choice (fasted_choose) and FASTED's side of the common launch
 * loop (kern_drive.cu): bounded batches of tiles from the work queue, and
 * the redo list of tiles whose pairs did not fit the buffer. The kernels
 * are in fasted_mma.cuh and fasted_wgmma.cuh, the formats in fmt_*.cu. */
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "fasted_format.cuh"
#include "fasted_run.cuh"
#include "fasted_int.cuh"
#include "fasted_wgmma.cuh"
#include "kern_drive.cuh"
#include "kern_gather.cuh"
#include "kern_multi.cuh"
#include "kern_pool.cuh"
#include "kern_util.cuh"
#include "kernels.h"
#include "tile_sched.h"

#define FASTED_CHUNK_BYTES ((size_t)32 << 20) /* FP32 staging chunk */
#define FASTED_MIN_CAP ((size_t)1 << 15)      /* a warp emits at most 2*64*64 pairs */

/* The converted dataset, kept on each device across runs: one slot per
 * device ordinal, touched only by the thread running on that device. */
struct fasted_ds {
    const void *x;
    size_t n, d;
    uint64_t hash;
    int dev;
    const kern_format *fmt;
    const double *center; /* the means subtracted (NULL: none) */
    double scale;         /* the values multiplied by it (0: none) */
    uint16_t *X;
    float *s;
    size_t n_alloc, dp; /* rows allocated; values a row (padded) */
    size_t bytes;       /* device bytes held */
    int from;           /* the device it was copied from; -1: converted here */
};
static fasted_ds g_ds_dev[KERN_DEV_SLOTS];
/* The whole dataset a view's rows are gathered from (a->base_n), beside
 * the slot a run's own rows use: a subset run between two cut runs (whose
 * layouts the first slot holds) converts nothing (kernels/exact.cu's
 * EXACT_SLOTS, the same for the FP64 rows). */
static fasted_ds g_base_dev[KERN_DEV_SLOTS];
/* A layout's rows (the cluster cut's: a->rows, not a view), in a slot of
 * their own beside an ordinary run's: a k-distance or a count between two
 * runs over one cut (HDBSCAN*'s forest at the cut's eps) converts neither
 * again (kernels/exact.cu's slots, the same for the FP64 rows). */
static fasted_ds g_lay_dev[KERN_DEV_SLOTS];

static fasted_ds &fasted_slot(const kern_join_args *a)
{
    return a->rows && !a->base_n ? g_lay_dev[a->device] : g_ds_dev[a->device];
}

static void fasted_free_ds(fasted_ds &g_ds)
{
    if (g_ds.X || g_ds.s) {
        int cur = 0;
        cudaGetDevice(&cur);
        cudaSetDevice(g_ds.dev);
        cudaFree(g_ds.X);
        cudaFree(g_ds.s);
        cudaSetDevice(cur);
    }
    memset(&g_ds, 0, sizeof g_ds);
}

void exact_release(void);     /* kernels/exact.cu: its FP64 rows */
void fp64_grid_release(void); /* kernels/fp64_grid.cu: its index and rows */
void ted_index_release(void); /* kernels/ted_index.cu: its index and rows */
void kct_release(void);       /* kernels/kern_curve_tail.cu: its pinned buffer, streams */
void kd_exact_release(void);  /* kernels/fasted_kdist_exact.cu: exact's k-distance's rows */
void kb_release(void);        /* kernels/fp64_kdist.cu: the brute-force k-distance's rows */
static void fasted_stage_host_free(int dev);

extern "C" void kern_fasted_release(void)
{
    for (int d = 0; d < KERN_DEV_SLOTS; d++) {
        fasted_free_ds(g_ds_dev[d]);
        fasted_free_ds(g_base_dev[d]);
        fasted_free_ds(g_lay_dev[d]);
        fasted_stage_host_free(d);
    }
    exact_release();
    fp64_grid_release();
    ted_index_release();
    kct_release();
    kd_exact_release();
    kb_release();
    kern_drive_release();
    cudaGetLastError();
}

unsigned long long fasted_tiles_total(unsigned T, unsigned U, int sym, int order)
{
    return sym ? ts_tri_items(ts_tri{T, order}) : ts_square_items(ts_square{T, U, order});
}

/* FP64 -> FP32 rounding to odd: with 24 >= 11 + 2 bits, rounding the result
 * to FP16 (nearest) on the device gives exactly the nearest FP16 of the
 * double, with no double-rounding error. */
static inline float fasted_round_odd(double x)
{
    float f = (float)x;
    if ((double)f != x && f == f) {
        unsigned u;
        memcpy(&u, &f, 4);
        if (fabs((double)f) > fabs(x))
            u -= 1;
        u |= 1u;
        memcpy(&f, &u, 4);
    }
    return f;
}

/* Rows [r0, r0 + rows) of a->x (dst holds them from row r0): each
 * value as FP64, less its row's centre (kern_row_center: the column means,
 * or a layout's origin of the row) first, then times sc (a power of two:
 * exact), in FP64, then rounded to odd: the format's rounding of the
 * centred, scaled value. Rows are widened to FP64 a small block at a
 * time, in a buffer of this thread's own. */
static void fasted_to_float(const kern_join_args *a, size_t r0, float *dst, size_t rows, double sc)
{
    const size_t d = a->d, blk = std::max((size_t)1, ((size_t)1 << 13) / d);
    std::vector<double> buf(std::min(blk, rows) * d);
    for (size_t i0 = 0; i0 < rows; i0 += blk) {
        const size_t m = std::min(blk, rows - i0);
        kern_rows_f64(a, r0 + i0, m, buf.data());
        const double *src = buf.data();
        float *o = dst + i0 * d;
        for (size_t i = 0; i < m; i++) {
            const double *center = kern_row_center(a, r0 + i0 + i);
            for (size_t k = 0; k < d; k++)
                o[i * d + k] =
                    fasted_round_odd((center ? src[i * d + k] - center[k] : src[i * d + k]) * sc);
        }
    }
}

/* Host threads convert one chunk (rows from r0 into dst). */
static void fasted_to_float_par(const kern_join_args *a, size_t r0, float *dst, size_t rows,
                                double sc)
{
    const size_t d = a->d;
    kern_par_rows(rows, d, [=](unsigned, size_t b0, size_t b1) {
        if (b0 < b1)
            fasted_to_float(a, r0 + b0, dst + b0 * d, b1 - b0, sc);
    });
}

/* Host FP32 staging and its device twin, two of each (double-buffered);
 * the chunk halves while the budget or the device refuses it. The pinned
 * host halves outlive the run (g_stage): pinning 2 x 32 MB takes longer
 * than converting a chunk, and every run of a new format, centring or
 * dataset uploads (the precision lab does it once a format). */
struct fasted_stage {
    float *h[2], *d[2];
    size_t bytes;
};

/* One pair of pinned halves per device ordinal (its thread's alone). */
struct fasted_stage_host {
    float *h[2];
    size_t bytes;
};
static fasted_stage_host g_stage_dev[KERN_DEV_SLOTS];

static void fasted_stage_host_free(int dev)
{
    fasted_stage_host &g_stage = g_stage_dev[dev];
    for (int b = 0; b < 2; b++)
        cudaFreeHost(g_stage.h[b]);
    memset(&g_stage, 0, sizeof g_stage);
}

static void fasted_stage_free(kern_run *k, fasted_stage *sg)
{
    for (int b = 0; b < 2; b++) {
        kern_free(k, sg->d[b], sg->bytes);
        sg->h[b] = sg->d[b] = NULL;
    }
}

static int fasted_stage_alloc(kern_run *k, fasted_stage *sg, size_t row_bytes)
{
    const int dev = k->a->device;
    fasted_stage_host &g_stage = g_stage_dev[dev];
    size_t want = FASTED_CHUNK_BYTES;
    for (;;) {
        memset(sg, 0, sizeof *sg);
        sg->bytes = want + row_bytes;
        int rc = 0;
        for (int b = 0; b < 2 && rc == 0; b++)
            rc = kern_malloc(k, (void **)&sg->d[b], sg->bytes, "the FP32 staging buffer");
        if (rc == 0 && g_stage.bytes < sg->bytes) {
            fasted_stage_host_free(dev);
            for (int b = 0; b < 2 && rc == 0; b++)
                rc = kern_malloc_host((void **)&g_stage.h[b], sg->bytes, "the FP32 staging buffer");
            if (rc == 0)
                g_stage.bytes = sg->bytes;
            else
                fasted_stage_host_free(dev);
        }
        if (rc == 0) {
            sg->h[0] = g_stage.h[0];
            sg->h[1] = g_stage.h[1];
            return 0;
        }
        fasted_stage_free(k, sg);
        if (rc != KERN_ENOMEM || want <= row_bytes)
            return rc;
        want = want / 2 > row_bytes ? want / 2 : row_bytes;
        k->r->shrunk = 1;
    }
}

/* The format whose rows and norms fmt's kernels read (ops.rows_of). */
static const kern_format *fasted_rows_fmt(const kern_format *fmt)
{
    return fmt->ops->rows_of ? fmt->ops->rows_of : fmt;
}

/* The slot holds this run's dataset in this format's rows. */
static bool fasted_ds_is(const fasted_ds &g, const kern_join_args *a, const kern_format *fmt)
{
    return g.X && g.x == a->x && g.n == a->n && g.d == a->d && g.hash == a->hash &&
           fasted_rows_fmt(g.fmt) == fasted_rows_fmt(fmt) && g.center == a->center &&
           g.scale == a->scale;
}

/* The source's slot for the devices that copy it. */
static void fasted_publish(kern_queue *q, const fasted_ds *g)
{
    kern_shared_ds up;
    if (g) {
        up.state = 1;
        up.dev = g->dev;
        up.X = g->X;
        up.X_bytes = g->n_alloc * g->dp * (size_t)g->fmt->elem_bytes;
        up.s = g->s;
        up.s_bytes = g->n_alloc * sizeof(float);
        up.key = g;
    } else {
        up.state = -1;
    }
    kern_queue_publish(q, &up);
}

/* Convert once, copy to every device: this device's slot filled with a
 * copy of the source device's converted rows and norms (cudaMemcpyPeer;
 * direct over NVLink or PCIe where peer access is possible, else staged by
 * the driver), byte for byte what the source converted. */
static int fasted_copy_ds(kern_run *k, const kern_format *fmt, const kern_shared_ds &up)
{
    const kern_join_args *a = k->a;
    kern_join_result *r = k->r;
    cudaStream_t st = k->st;
    fasted_ds &g_ds = fasted_slot(a);
    const fasted_ds &src = *(const fasted_ds *)up.key;
    double t0 = kern_now();
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, a->device, up.dev) == cudaSuccess && can)
        cudaDeviceEnablePeerAccess(up.dev, 0); /* already enabled: an error to ignore */
    cudaGetLastError();
    int rc = kern_malloc(k, (void **)&g_ds.X, up.X_bytes, "the dataset");
    if (rc == 0)
        rc = kern_malloc(k, (void **)&g_ds.s, up.s_bytes, "the squared norms");
    if (rc) {
        kern_free(k, g_ds.X, up.X_bytes);
        g_ds.X = NULL;
        return rc;
    }
    g_ds.dev = a->device;
    g_ds.bytes = up.X_bytes + up.s_bytes;
#define CP_TRY(call) KERN_CUDA_GOTO(call, done)
    CP_TRY(cudaMemcpyPeerAsync(g_ds.X, a->device, up.X, up.dev, up.X_bytes, st));
    CP_TRY(cudaMemcpyPeerAsync(g_ds.s, a->device, up.s, up.dev, up.s_bytes, st));
    CP_TRY(cudaStreamSynchronize(st));
#undef CP_TRY
    r->t_h2d = kern_now() - t0;
    g_ds.x = src.x;
    g_ds.n = src.n;
    g_ds.d = src.d;
    g_ds.hash = src.hash;
    g_ds.fmt = fmt;
    g_ds.center = src.center;
    g_ds.scale = src.scale;
    g_ds.dp = src.dp;
    g_ds.n_alloc = src.n_alloc;
    g_ds.from = up.dev;
done:
    if (rc) {
        kern_uncharge(k, g_ds.bytes);
        fasted_free_ds(g_ds);
    }
    return rc;
}

static int fasted_convert_ds(kern_run *k, const kern_format *fmt, fasted_ds &g_ds);

/* Rows allocated for n: whole 256-row tiles past n (the wgmma kernel's B
 * tiles and symmetric super tiles), zero rows. */
static size_t fasted_rows_alloc(size_t n)
{
    return (n + 255) / 256 * 256 + 256;
}

/* Values a row holds in fmt: d padded to whole 128-byte k slices. */
static size_t fasted_row_values(size_t d, const kern_format *fmt)
{
    const size_t per_slice = (size_t)FASTED_BK * 2 / (size_t)fmt->elem_bytes;
    return (d + per_slice - 1) / per_slice * per_slice;
}

/* A view's rows (a->base_n) gathered on the device from the slot's whole
 * dataset into v, the run's own (pooled): the rows the slot converted, so
 * the pass reads exactly what an ordinary run reads; a padding row is
 * zeros with the norm that keeps it out of every pair (as
 * fasted_convert_ds marks a layout's). */
static int fasted_view(kern_run *k, const fasted_ds &g, fasted_ds *v, uint32_t **rows)
{
    const kern_join_args *a = k->a;
    const size_t row_bytes = g.dp * (size_t)g.fmt->elem_bytes;
    const size_t n_alloc = fasted_rows_alloc(a->n);
    *v = g;
    v->X = NULL;
    v->s = NULL;
    v->n = a->n;
    v->n_alloc = n_alloc;
    v->bytes = n_alloc * (row_bytes + sizeof(float)) + a->n * 4;
    int rc;
    if ((rc = kern_malloc_pooled(k, (void **)&v->X, n_alloc * row_bytes, "the subset's rows")) ||
        (rc =
             kern_malloc_pooled(k, (void **)&v->s, n_alloc * sizeof(float), "the subset's rows")) ||
        (rc = kern_malloc_pooled(k, (void **)rows, a->n * 4, "the subset's rows")))
        return rc;
    const double t0 = kern_now();
    KERN_CUDA(cudaMemcpyAsync(*rows, a->rows, a->n * 4, cudaMemcpyHostToDevice, k->st));
    KERN_CUDA(kern_gather_rows(g.X, *rows, a->n, n_alloc, row_bytes, v->X, k->st));
    float pad;
    const uint32_t pad_bits = 0x7f7f7f7fu;
    memcpy(&pad, &pad_bits, 4);
    KERN_CUDA(kern_gather_norms<float>(g.s, *rows, a->n, n_alloc, pad, v->s, k->st));
    k->r->t_h2d += kern_now() - t0;
    return 0;
}

/* The device bytes fasted_convert_ds takes for a's rows in fmt. */
static size_t fasted_ds_bytes(const kern_join_args *a, const kern_format *fmt)
{
    return fasted_rows_alloc(a->n) *
           (fasted_row_values(a->d, fmt) * (size_t)fmt->elem_bytes + sizeof(float));
}

/* Upload and convert unless the cache holds this dataset in this format.
 * Over a device list (q) the list's first device converts and publishes
 * its slot; the others copy it (convert once, copy to every device). */
static int fasted_upload(kern_run *k, const kern_format *fmt, kern_queue *q)
{
    const kern_join_args *a = k->a;
    if (a->base_n) {
        /* A view of the dataset's rows: the whole dataset in its own
         * slot, on this device alone (kern_subset_run views on one device
         * only), its rows gathered after (fasted_view). */
        if (q && kern_queue_source(a) == a->device)
            fasted_publish(q, NULL);
        const kern_join_args b = kern_base_args(a);
        fasted_ds &g_base = g_base_dev[a->device];
        if (fasted_ds_is(g_base, &b, fmt) && g_base.dev == a->device) {
            k->r->cache_hit = 1;
            return kern_charge(k, g_base.bytes, "the dataset");
        }
        fasted_free_ds(g_base);
        k->a = &b;
        const int rc = fasted_convert_ds(k, fmt, g_base);
        k->a = a;
        return rc;
    }
    fasted_ds &g_ds = fasted_slot(a);
    const bool source = q && kern_queue_source(a) == a->device;
    if (fasted_ds_is(g_ds, a, fmt) && g_ds.dev == a->device) {
        k->r->cache_hit = 1;
        if (source)
            fasted_publish(q, &g_ds);
        return kern_charge(k, g_ds.bytes, "the dataset");
    }
    fasted_free_ds(g_ds);
    /* the other slots are a cache: the run's room comes first */
    if (!kern_pool_cache_may_keep(fasted_ds_bytes(a, fmt)))
        for (fasted_ds *o : {&g_ds_dev[a->device], &g_base_dev[a->device], &g_lay_dev[a->device]})
            fasted_free_ds(*o);
    if (q && !source) {
        kern_shared_ds up;
        int got = kern_queue_shared(q, &up);
        if (got < 0)
            return got;
        /* The source's slot is this run's dataset in this format (its key
         * is checked again: a source that converted something else is not
         * copied). */
        if (got && fasted_ds_is(*(const fasted_ds *)up.key, a, fmt))
            return fasted_copy_ds(k, fmt, up);
    }
    int rc = fasted_convert_ds(k, fmt, g_ds);
    if (source)
        fasted_publish(q, rc ? NULL : &g_ds);
    return rc;
}

/* Convert the dataset into this device's slot: FP32 staged from the host,
 * the format's conversion and the norms on the device, those of the
 * format whose rows fmt's kernels read (ops.rows_of). */
static int fasted_convert_ds(kern_run *k, const kern_format *fmt, fasted_ds &g_ds)
{
    const kern_join_args *a = k->a;
    const fasted_fmt_ops *rf = fasted_rows_fmt(fmt)->ops;
    kern_join_result *r = k->r;
    cudaStream_t st = k->st;
    const size_t dp = fasted_row_values(a->d, fmt);
    const size_t row_bytes = dp * (size_t)fmt->elem_bytes;
    const size_t n_alloc = fasted_rows_alloc(a->n);
    int rc = kern_malloc(k, (void **)&g_ds.X, n_alloc * row_bytes, "the dataset");
    if (rc == 0)
        rc = kern_malloc(k, (void **)&g_ds.s, n_alloc * sizeof(float), "the squared norms");
    if (rc) {
        kern_free(k, g_ds.X, n_alloc * row_bytes);
        g_ds.X = NULL;
        return rc;
    }
    g_ds.dev = a->device;
    g_ds.bytes = n_alloc * row_bytes + n_alloc * sizeof(float);
    KERN_CUDA(cudaMemsetAsync(g_ds.X, 0, n_alloc * row_bytes, st));

    fasted_stage sg;
    if ((rc = fasted_stage_alloc(k, &sg, a->d * sizeof(float))) != 0)
        return rc;
    const size_t rows_chunk = std::max((size_t)1, (sg.bytes - a->d * 4) / (a->d * sizeof(float)));
    const size_t nchunks = (a->n + rows_chunk - 1) / rows_chunk;
    std::vector<cudaEvent_t> ev(2 * nchunks + 2, (cudaEvent_t)NULL);
    cudaEvent_t copied[2] = {NULL, NULL};
    bool used[2] = {false, false};
    double t0 = kern_now(), conv = 0;
#define UP_TRY(call) KERN_CUDA_GOTO(call, done)
    for (auto &e : ev)
        UP_TRY(cudaEventCreate(&e));
    UP_TRY(cudaEventCreateWithFlags(&copied[0], cudaEventDisableTiming));
    UP_TRY(cudaEventCreateWithFlags(&copied[1], cudaEventDisableTiming));
    for (size_t c = 0; c < nchunks; c++) {
        const int b = c & 1;
        const size_t r0 = c * rows_chunk, rows = std::min(rows_chunk, a->n - r0);
        if (used[b])
            UP_TRY(cudaEventSynchronize(copied[b]));
        fasted_to_float_par(a, r0, sg.h[b], rows, fasted_scale(a, fmt));
        UP_TRY(cudaMemcpyAsync(sg.d[b], sg.h[b], rows * a->d * 4, cudaMemcpyHostToDevice, st));
        UP_TRY(cudaEventRecord(ev[2 * c], st));
        rf->convert(sg.d[b], (char *)g_ds.X + r0 * row_bytes, rows, a->d, dp, st);
        UP_TRY(cudaGetLastError());
        UP_TRY(cudaEventRecord(ev[2 * c + 1], st));
        UP_TRY(cudaEventRecord(copied[b], st));
        used[b] = true;
    }
    UP_TRY(cudaEventRecord(ev[2 * nchunks], st));
    rf->norms(g_ds.X, g_ds.s, n_alloc, dp, st);
    UP_TRY(cudaGetLastError());
    /* A layout's padding rows (zeros) pair with nothing but themselves: a
     * norm so large (0x7f7f7f7f, 3.4e38; two of them sum to +inf) that d2
     * passes no threshold. Their self-pairs (d2 0 by definition) are
     * listed, and exact's classify drops them (exact_bnd_kernel). Each
     * cluster's padding follows its rows (a subset's query rows' padding
     * too, kern_subset.c): a memset a run of them. */
    for (size_t v = 0; a->rows && v < a->n;) {
        if (a->rows[v] != KERN_ROW_PAD) {
            v++;
            continue;
        }
        size_t e = v;
        while (e < a->n && a->rows[e] == KERN_ROW_PAD)
            e++;
        UP_TRY(cudaMemsetAsync(g_ds.s + v, 0x7f, (e - v) * sizeof(float), st));
        v = e;
    }
    UP_TRY(cudaEventRecord(ev[2 * nchunks + 1], st));
    UP_TRY(cudaStreamSynchronize(st));
    for (size_t c = 0; c < nchunks; c++)
        conv += kern_event_s(ev[2 * c], ev[2 * c + 1]);
    r->t_prep = kern_event_s(ev[2 * nchunks], ev[2 * nchunks + 1]);
    r->t_convert = conv;
    r->t_h2d = std::max(0.0, (kern_now() - t0) - conv - r->t_prep);
    g_ds.x = a->x;
    g_ds.n = a->n;
    g_ds.d = a->d;
    g_ds.hash = a->hash;
    g_ds.fmt = fmt;
    g_ds.center = a->center;
    g_ds.scale = a->scale;
    g_ds.dp = dp;
    g_ds.n_alloc = n_alloc;
    g_ds.from = -1;
done:
#undef UP_TRY
    for (auto &e : ev)
        if (e)
            cudaEventDestroy(e);
    for (int b = 0; b < 2; b++)
        if (copied[b])
            cudaEventDestroy(copied[b]);
    fasted_stage_free(k, &sg);
    if (rc) {
        kern_uncharge(k, g_ds.bytes);
        fasted_free_ds(g_ds);
    }
    return rc;
}

/* FASTED's side of the launch loop: the work queue's tiles in bounded
 * launches, and the redo list of tiles whose pairs did not fit. On one
 * device the range [t_next, t_stop) is the whole list; over several, each
 * range comes from the run's queue (q) when the last is done. */
struct fasted_eng {
    fasted_params p;
    const void *func;
    const fasted_ds *ds;
    int use_wg, grid;
    size_t smem;
    unsigned long long total, chunk, t_next, t_stop;
    unsigned long long chunk0; /* the first launch's chunk: launches never get smaller */
    kern_queue *q;
    unsigned long long taken; /* items taken from q */
    unsigned nredo;
    int cur;
    fasted_ctrl *ctl;
    fasted_redo *redo[2];
    size_t redo_cap; /* entries of each redo list */
    const fasted_post *post;
};

/* Zero the control words (valid_end at its largest) for the next launch;
 * enqueued after a launch is read, so the copy is not timed as kernel. */
static int fasted_ctl_reset(fasted_eng *f, cudaStream_t st)
{
    fasted_ctrl c0;
    memset(&c0, 0, sizeof c0);
    c0.valid_end = ~0ull;
    KERN_CUDA(cudaMemcpyAsync(f->ctl, &c0, sizeof c0, cudaMemcpyHostToDevice, st));
    return 0;
}

static int fasted_more(void *e)
{
    fasted_eng *f = (fasted_eng *)e;
    if (f->nredo > 0 || f->t_next < f->t_stop)
        return 1;
    /* A launch takes at least 8 tiles a block, so a range is worth its
     * launch; at most the single device's chunk. */
    if (!f->q ||
        !kern_queue_take(f->q, (unsigned long long)f->grid * 8, f->chunk, &f->t_next, &f->t_stop))
        return 0;
    f->taken += f->t_stop - f->t_next;
    return 1;
}

static int fasted_launch(void *e, kern_run *k)
{
    fasted_eng *f = (fasted_eng *)e;
    fasted_params &p = f->p;
    p.ctl = f->ctl; /* reset by fasted_ctl_reset, outside the timed launch */
    p.redo_in = f->redo[f->cur];
    p.nredo_in = f->nredo;
    p.redo_out = f->redo[f->cur ^ 1];
    p.t_base = f->t_next;
    p.t_end = f->nredo > 0 ? f->t_next : std::min(f->t_stop, f->t_next + f->chunk);
    p.pi = k->pi;
    p.pj = k->pj;
    p.pd = (float *)k->pd;
    p.cap = k->cap;
    if (f->use_wg)
        KERN_CUDA(fasted_wg_launch(f->func, &p, f->ds->n_alloc, f->ds->fmt->widen, f->grid, f->smem,
                                   k->st));
    void *args[] = {&p};
    if (!f->use_wg)
        KERN_CUDA(
            cudaLaunchKernel(f->func, dim3(f->grid), dim3(FASTED_THREADS), args, f->smem, k->st));
    return 0;
}

/* Kernel time a launch aims at. Each launch costs the host a round trip
 * (the control words, the engine's collect) while the GPU waits, and
 * exact more, whose refinement follows each launch. The
 * first launch takes chunk0 (64 tiles a block); the later ones are sized
 * from its pace to about this long, so a run of a few milliseconds (n =
 * 1e5, d = 128: 19 launches of 64 tiles a block) takes a handful, while
 * cancel and progress still come every few milliseconds. */
#define FASTED_LAUNCH_S 5e-3

/* The next chunk from the launch just read: `items` fresh tiles (no redo)
 * in t seconds, `listed` pairs written (PAIRS; 0 otherwise) into a buffer
 * of k->cap.
 * At most 8x the last a step (one launch's pace is a rough guide), at
 * most what fills half the buffer at this launch's pairs per tile, never
 * below chunk0; halved after an overflow. Over a device queue (f->q) the
 * chunk stays: the queue's ranges balance the devices. */
static void fasted_pace(fasted_eng *f, const kern_run *k, unsigned long long items, double t,
                        unsigned long long listed, int overflow)
{
    if (f->q || items == 0)
        return;
    double want = (double)f->chunk;
    if (overflow)
        want = want / 2;
    else if (t > 0)
        want = std::min((double)items * (FASTED_LAUNCH_S / t), 8.0 * (double)f->chunk);
    if (listed > 0)
        want = std::min(want, (double)items * (0.5 * (double)k->cap) / (double)listed);
    want = std::min(want, (double)f->total);
    f->chunk = std::max(f->chunk0, (unsigned long long)want);
}

static int fasted_collect(void *e, kern_run *k, kern_step *s)
{
    fasted_eng *f = (fasted_eng *)e;
    const fasted_params &p = f->p;
    fasted_ctrl c1;
    KERN_CUDA(cudaMemcpy(&c1, f->ctl, sizeof c1, cudaMemcpyDeviceToHost));
    const unsigned long long items = f->nredo + (p.t_end - p.t_base);
    const unsigned long long fetched = std::min(c1.queue, items);
    const int pairs = k->a->mode == KJOIN_PAIRS;
    const unsigned long long np = pairs ? std::min(c1.pos, c1.valid_end) : 0;
    /* A launch of fresh tiles paces the next (kern_drive has waited for it). */
    if (f->nredo == 0 && p.t_end > p.t_base)
        fasted_pace(f, k, p.t_end - p.t_base, kern_event_s(k->e0, k->e1), np,
                    pairs && c1.full != 0);
    if (pairs) {
        s->np = std::min(np, (unsigned long long)k->cap);
        s->overflow = c1.full != 0;
        unsigned nout = c1.nredo;
        if (nout + (f->nredo - std::min(fetched, (unsigned long long)f->nredo)) > f->redo_cap)
            return kern_fail_msg(KERN_EGPU, "fasted: the redo list overflowed (a kernel held more "
                                            "tiles than the list's bound)");
        if (fetched < f->nredo) {
            /* Redo items this launch never reached go on. */
            KERN_CUDA(cudaMemcpyAsync(f->redo[f->cur ^ 1] + nout, f->redo[f->cur] + fetched,
                                      (f->nredo - fetched) * sizeof(fasted_redo),
                                      cudaMemcpyDeviceToDevice, k->st));
            nout += (unsigned)(f->nredo - fetched);
        }
        if (f->nredo == 0)
            f->t_next = p.t_base + fetched;
        f->nredo = nout;
        f->cur ^= 1;
        if (f->post && f->post->refine) {
            int rc = f->post->refine(f->post->ctx, k, s);
            if (rc)
                return rc;
        }
    } else {
        k->r->pairs += c1.count;
        f->t_next = p.t_end;
    }
    if (f->q) {
        /* Items of the list this launch finished (none for a redo launch). */
        if (p.t_end > p.t_base)
            f->q->done += f->t_next - p.t_base;
        s->frac = (double)f->q->done.load() / (double)f->total;
    } else {
        s->frac = (double)f->t_next / (double)f->total;
    }
    return fasted_ctl_reset(f, k->st);
}

double fasted_scale(const kern_join_args *a, const kern_format *fmt)
{
    return (a->scale ? a->scale : 1.0) * ldexp(1.0, fmt->value_log2);
}

extern "C" int kern_format_probe(const kern_format *fmt, int dev, const float *x, size_t n,
                                 void *codes, float *sq)
{
    if (kern_device_count() <= 0)
        return KERN_ENODEV;
    /* One value a row, padded to one k slice; whole 128-row norm blocks. */
    const size_t dp = (size_t)FASTED_BK * 2 / (size_t)fmt->elem_bytes;
    const size_t rows = (n + 127) / 128 * 128, row_bytes = dp * (size_t)fmt->elem_bytes;
    float *dx = NULL, *ds = NULL;
    char *dX = NULL;
    std::vector<char> hX(rows * row_bytes);
    int rc = 0;
#define PR_TRY(call) KERN_CUDA_GOTO(call, done)
    PR_TRY(cudaSetDevice(dev));
    PR_TRY(cudaMalloc(&dx, std::max(n, (size_t)1) * 4));
    PR_TRY(cudaMalloc(&dX, rows * row_bytes));
    PR_TRY(cudaMalloc(&ds, rows * 4));
    PR_TRY(cudaMemset(dX, 0, rows * row_bytes));
    PR_TRY(cudaMemcpy(dx, x, n * 4, cudaMemcpyHostToDevice));
    fmt->ops->convert(dx, dX, n, 1, dp, 0);
    PR_TRY(cudaGetLastError());
    fmt->ops->norms(dX, ds, rows, dp, 0);
    PR_TRY(cudaGetLastError());
    PR_TRY(cudaMemcpy(hX.data(), dX, rows * row_bytes, cudaMemcpyDeviceToHost));
    PR_TRY(cudaMemcpy(sq, ds, n * 4, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        memcpy((char *)codes + i * fmt->elem_bytes, &hX[i * row_bytes], fmt->elem_bytes);
done:
#undef PR_TRY
    cudaFree(dx);
    cudaFree(dX);
    cudaFree(ds);
    return rc;
}

extern "C" int kern_fasted_cache_digest(int dev, uint64_t *digest, int *from)
{
    if (dev < 0 || dev >= KERN_DEV_SLOTS || !g_ds_dev[dev].X)
        return kern_fail(KERN_EINVAL, "device %d holds no FASTED dataset", dev);
    const fasted_ds &g = g_ds_dev[dev];
    std::vector<unsigned char> h(g.n_alloc * g.dp * (size_t)g.fmt->elem_bytes +
                                 g.n_alloc * sizeof(float));
    const size_t xb = g.n_alloc * g.dp * (size_t)g.fmt->elem_bytes;
    int cur = 0, rc = 0;
    cudaGetDevice(&cur);
#define DG_TRY(call) KERN_CUDA_GOTO(call, done)
    DG_TRY(cudaSetDevice(dev));
    DG_TRY(cudaMemcpy(h.data(), g.X, xb, cudaMemcpyDeviceToHost));
    DG_TRY(cudaMemcpy(h.data() + xb, g.s, g.n_alloc * sizeof(float), cudaMemcpyDeviceToHost));
#undef DG_TRY
    {
        uint64_t v = 14695981039346656037ull; /* FNV-1a */
        for (unsigned char c : h)
            v = (v ^ c) * 1099511628211ull;
        *digest = v;
        *from = g.from;
    }
done:
    cudaSetDevice(cur);
    return rc;
}

/* One device's share of a run over several (kern_multi_fn). */
static int fasted_run_queue(const kern_join_args *a, kern_join_result *r, kern_queue *q,
                            unsigned long long *items)
{
    return fasted_run_q(a, r, NULL, q, items);
}

extern "C" int kern_fasted_run(const kern_join_args *a, kern_join_result *r)
{
    if (a->ndevices > 0 || a->tiles)
        return kern_multi_run(a, r, fasted_run_queue);
    return fasted_run(a, r, NULL);
}

int fasted_run(const kern_join_args *a, kern_join_result *r, const fasted_post *post)
{
    return fasted_run_q(a, r, post, NULL, NULL);
}

int fasted_run_q(const kern_join_args *a, kern_join_result *r, const fasted_post *post,
                 kern_queue *q, unsigned long long *items)
{
    const kern_format *fmt = a->format ? a->format : &kern_fmt_fp16;
    kern_run k;
    int rc = kern_begin(&k, a, r, fmt->name, 0);
    if (rc)
        return rc;
    r->convert_name = "convert";
    r->prep_name = "norms";
    r->off = a->off;
    r->centred = a->center != NULL || a->origin_of != NULL;
    const fasted_ds &g_ds = fasted_slot(a);
    const kern_caps caps = {k.cc, fasted_wg_usable(a->device), k.prop.sharedMemPerBlockOptin};
    fasted_choice ch;
    fasted_eng f;
    memset(&f, 0, sizeof f);
    const size_t nq = a->q1 - a->q0, nc = kern_count_rows(a);
    unsigned *d_counts = NULL;
    void *d_clu = NULL; /* a layout's blocks (p.clu_*) */
    float *d_edges = NULL;
    unsigned long long *d_hist = NULL;
    std::vector<float> edges_f;
    const void *func_pairs = NULL;
    fasted_ds view; /* a view's rows (a->base_n): the run's own */
    memset(&view, 0, sizeof view);
    uint32_t *view_rows = NULL;
    int fast = 0; /* FP8 without promotion (a->acc_fast) */
    fasted_params &p = f.p;
    kern_work w;
#define FASTED_TRY(call) KERN_CUDA_GOTO(call, out)
#define FASTED_RC(call)                                                                            \
    do {                                                                                           \
        if ((rc = (call)) != 0)                                                                    \
            goto out;                                                                              \
    } while (0)
    if ((rc = fasted_choose(a->off, a->mode, fmt, &caps, a->hist_nbins, &ch)) != 0) {
        rc = kern_fail(rc, "%s", ch.why);
        goto out;
    }
    f.use_wg = ch.kind == FASTED_KIND_WGMMA;
    /* The run's variant says when it kept the tensor core's accumulation. */
    fast = f.use_wg && a->acc_fast && fmt->ops->wg_func_fast;
    if (f.use_wg) {
        f.func = fast ? fmt->ops->wg_func_fast : fmt->ops->wg_func;
        func_pairs = fast ? fmt->ops->wg_func_fast_pairs : fmt->ops->wg_func_pairs;
    } else {
        fmt->ops->mma_kernels(ch.v->off, &f.func, &func_pairs);
    }
    if (!f.func || !func_pairs) {
        rc = kern_fail(KERN_EINVAL, "%s: the %s kernel is not compiled", fmt->name, ch.variant);
        goto out;
    }
    if (a->mode == KJOIN_PAIRS)
        f.func = func_pairs;
    snprintf(r->variant, sizeof r->variant, "%s%s", ch.variant, fast ? " fast-acc" : "");

    FASTED_RC(fasted_upload(&k, fmt, q));
    f.ds = &g_ds;
    if (a->base_n) {
        FASTED_RC(fasted_view(&k, g_base_dev[a->device], &view, &view_rows));
        f.ds = &view;
    }
    r->d_padded = f.ds->dp;
    r->symmetric = a->symmetric && a->q0 == 0 && (a->q1 == a->n || a->c0);
    p.X = f.ds->X;
    p.s = f.ds->s;
    p.ld = (int)(f.ds->dp * (size_t)fmt->elem_bytes / 2);
    p.n = (unsigned)a->n;
    p.q0 = (unsigned)a->q0;
    p.q1 = (unsigned)a->q1;
    p.sym = r->symmetric;
    p.c0 = (unsigned)a->c0;
    p.order = ch.order;
    p.mode = a->mode;
    if (f.use_wg) {
        fasted_wg_grid(&p, nq, a->n);
    } else {
        p.T = (unsigned)((nq + ch.v->bm - 1) / ch.v->bm);
        p.U = (unsigned)((a->n - a->c0 + ch.v->bn - 1) / ch.v->bn);
    }
    if (a->nclu > 0) {
        /* A layout: the table of each cluster's diagonal block's tiles, or
         * of the tile cut's block pairs' (rows a multiple of
         * KERN_STREAM_ALIGN, which every tile divides), its upper triangle
         * when symmetric (the wgmma kernel's items are then tile halves:
         * t >> 1). */
        const size_t ur = f.use_wg ? (fasted_tri(p) ? 2 * FASTED_WG_BM : FASTED_WG_BM) : ch.v->bm;
        const size_t uc = f.use_wg ? FASTED_WG_BN : ch.v->bn;
        const ts_layout lay = {ur,      uc,     fasted_tri(p), a->clu,
                               a->nclu, a->blk, a->nblk,       KERN_STREAM_ALIGN};
        const double t_tab = kern_now();
        uint32_t *tab;
        size_t ntab;
        if (ts_table_fill(&lay, &tab, &ntab))
            FASTED_RC(kern_fail(KERN_ENOMEM, "out of host memory for the layout's tiles"));
        cudaError_t te = cudaSuccess;
        int trc = kern_malloc(&k, &d_clu, std::max((size_t)1, ntab) * sizeof(uint2),
                              "the layout's tiles");
        if (!trc && (te = cudaMemcpy(d_clu, tab, ntab * sizeof(uint2), cudaMemcpyHostToDevice)))
            trc = kern_cuda_fail(te, "cudaMemcpy(the layout's tiles)", __FILE__, __LINE__);
        free(tab);
        FASTED_RC(trc);
        p.tiles = ts_table{(const uint32_t *)d_clu, ntab};
        r->t_h2d += kern_now() - t_tab; /* host preparation and its copy */
    }
    f.smem = ch.smem;
    if (a->mode == KJOIN_HIST) {
        p.eps2 = (float)a->hist_edges[a->hist_nbins];
        p.nbins = (int)a->hist_nbins;
    } else if (post) {
        /* The least float at or above eps2_min: no pair below it is lost. */
        p.eps2 = (float)post->eps2_min;
        if ((double)p.eps2 < post->eps2_min)
            p.eps2 = nextafterf(p.eps2, INFINITY);
    } else {
        p.eps2 = (float)(a->eps * a->eps);
    }
    /* Scaled data: the thresholds times scale^2 (for a power of two exact,
     * so the comparisons are those of the unscaled arithmetic); pairs' d2
     * come back divided by it. An integer format compares exact integer
     * d2 with the integer part of the FP64 threshold: fp64's decision. */
    {
        const double sc = fasted_scale(a, fmt);
        p.eps2 = (float)((double)p.eps2 * sc * sc);
        /* HIST: the top edge as the bins see it (FP32, scaled). */
        const double thr = a->mode == KJOIN_HIST ? (double)p.eps2
                           : post                ? post->eps2_min * sc * sc
                                                 : a->eps * a->eps * sc * sc;
        p.eps2_u = thr >= 4294967295.0 ? 0xffffffffu : thr >= 0 ? (unsigned)floor(thr) : 0u;
        k.d2_scale = 1.0 / (sc * sc);
    }
    f.grid = k.prop.multiProcessorCount * (f.use_wg ? 1 : ch.v->minb);
    if (post && post->params)
        FASTED_RC(post->params(post->ctx, &k, &p, f.use_wg));

    FASTED_RC(kern_malloc(&k, (void **)&f.ctl, sizeof(fasted_ctrl), "the control block"));
    /* Redo entries one launch can write: a block holds at most
     * FASTED_WG_SLOTS tiles when the buffer fills (the wgmma kernels' work
     * slots; mma.sync holds one) and hands back one more it took; a launch
     * of redo items writes at most as many as it read. */
    f.redo_cap = (size_t)f.grid * (FASTED_WG_SLOTS + 1);
    for (int b = 0; b < 2; b++)
        FASTED_RC(kern_malloc(&k, (void **)&f.redo[b], f.redo_cap * sizeof(fasted_redo),
                              "the redo list"));
    FASTED_RC(fasted_ctl_reset(&f, k.st));
    if (a->mode == KJOIN_PERPOINT) {
        FASTED_RC(kern_malloc(&k, (void **)&d_counts, std::max(nc, (size_t)1) * 4,
                              "the per-point counts"));
        FASTED_TRY(cudaMemsetAsync(d_counts, 0, nc * 4, k.st));
        p.counts = d_counts;
    }
    if (a->mode == KJOIN_HIST) {
        edges_f.resize(a->hist_nbins + 1);
        const double sc = fasted_scale(a, fmt);
        for (size_t b = 0; b <= a->hist_nbins; b++)
            edges_f[b] = (float)((double)(float)a->hist_edges[b] * sc * sc);
        FASTED_RC(kern_malloc(&k, (void **)&d_edges, edges_f.size() * 4, "the histogram"));
        FASTED_RC(kern_malloc(&k, (void **)&d_hist, edges_f.size() * 8, "the histogram"));
        FASTED_TRY(cudaMemcpyAsync(d_edges, edges_f.data(), edges_f.size() * 4,
                                   cudaMemcpyHostToDevice, k.st));
        FASTED_TRY(cudaMemsetAsync(d_hist, 0, edges_f.size() * 8, k.st));
        p.edges = d_edges;
        p.hist = d_hist;
    }
    /* Once a run, not before each launch: the launches are timed. */
    FASTED_TRY(
        cudaFuncSetAttribute(f.func, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)f.smem));
    f.total = f.use_wg ? fasted_wg_items(&p) : fasted_tiles_total(p.T, p.U, fasted_tri(p), p.order);
    if (p.tiles.tab) /* the wgmma kernel's symmetric items are tile halves */
        f.total = p.tiles.n * (f.use_wg && fasted_tri(p) ? 2 : 1);
    /* Bounded launches: the host checks cancel and reports progress
     * between them; 64 tiles per block keeps the tail of each small, and
     * fasted_pace sizes the later ones by time. */
    f.chunk = f.chunk0 = std::max((unsigned long long)f.grid * 64, f.total / 64 + 1);
    f.t_stop = q ? 0 : f.total;
    f.q = q;
    if (q)
        FASTED_RC(kern_queue_open(q, a->device, f.total, r->variant));
    f.post = post;
    if (post && post->setup)
        FASTED_RC(post->setup(post->ctx, &k));
    w = kern_work{&f,
                  post ? post->d2_bytes : 4,
                  FASTED_MIN_CAP,
                  post ? post->extra_per_pair : 0,
                  fasted_more,
                  fasted_launch,
                  fasted_collect};
    FASTED_RC(kern_drive(&k, &w));
    if (a->mode == KJOIN_PERPOINT) {
        double td = kern_now();
        std::vector<unsigned> hc(nc);
        FASTED_TRY(cudaMemcpy(hc.data(), d_counts, nc * 4, cudaMemcpyDeviceToHost));
        uint64_t sum = 0;
        for (size_t q = 0; q < nc; q++) {
            a->counts[q] = hc[q];
            sum += hc[q];
        }
        r->pairs = sum;
        r->t_d2h += kern_now() - td;
    }
    if (a->mode == KJOIN_HIST) {
        double td = kern_now();
        std::vector<unsigned long long> hh(a->hist_nbins + 1);
        FASTED_TRY(cudaMemcpy(hh.data(), d_hist, hh.size() * 8, cudaMemcpyDeviceToHost));
        uint64_t sum = 0;
        *a->hist_below = hh[0];
        for (size_t b = 0; b < a->hist_nbins; b++)
            a->hist[b] = hh[b + 1];
        for (auto v : hh)
            sum += v;
        r->pairs = sum;
        r->t_d2h += kern_now() - td;
    }
out:
#undef FASTED_TRY
#undef FASTED_RC
    cudaFree(f.ctl);
    cudaFree(f.redo[0]);
    cudaFree(f.redo[1]);
    cudaFree(d_counts);
    cudaFree(d_clu);
    cudaFree(d_edges);
    cudaFree(d_hist);
    kern_pool_free(view.X);
    kern_pool_free(view.s);
    kern_pool_free(view_rows);
    kern_end(&k);
    if (items)
        *items = f.taken;
    return rc;
}
