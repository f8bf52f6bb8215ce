/* The driver shared by the CPU engines (cpu, cpu-fp16): query-block by
 * candidate-block loop, pthreads, the four output modes of join_spec, the
 * pair buffers and the sink mutex, cancel and progress. An engine supplies
 * only how to compute one query row against one candidate block. */
#ifndef TCJ_CPU_JOIN_H
#define TCJ_CPU_JOIN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "cpu_grid.h"
#include "cpu_simd.h"
#include "engine.h"

/* CPU_GROUP, the candidates' lane group: src/cpu_simd.h. */

typedef struct cpu_kernel {
    /* Lay out candidate rows [c0, c1) in the worker's scratch (e.g. groups
     * of CPU_GROUP rows transposed to [k][lane], padded to a whole group);
     * called when a worker moves to a new candidate block. May be NULL. */
    void (*prepare)(const void *ctx, void *scratch, size_t c0, size_t c1);
    /* Optional, indexed joins (grid set): prepare for the query rows of
     * grid cell `cell` (src/cpu_emul_local.c converts candidates relative
     * to the cell's origin); used instead of prepare. */
    void (*prepare_cell)(const void *ctx, void *scratch, size_t cell, size_t c0, size_t c1);
    size_t scratch_row_bytes;  /* scratch bytes per candidate row */
    size_t scratch_head_bytes; /* scratch bytes before them, zeroed once (a multiple of 64) */
    /* Squared distances of query row q to candidate rows [c0, c1), into
     * out[0 .. c1-c0) (out has room for c1-c0 rounded up to CPU_GROUP), as
     * the engine computes them widened to double. A value above lim may be
     * replaced by any other value above lim (the short-circuit); NaN counts
     * as above. Called from worker threads. */
    void (*row)(const void *ctx, const void *scratch, size_t q, size_t c0, size_t c1, double lim,
                double *out);
    /* Optional: rows [q, q+nr) at once, nr <= rows_max, row r's values at
     * out + r*ostride, each as row would compute it (the join driver uses
     * it when set: one candidate load serves several rows). */
    void (*rows)(const void *ctx, const void *scratch, size_t q, size_t nr, size_t c0, size_t c1,
                 double lim, double *out, size_t ostride);
    size_t rows_max;
    /* Optional: set where row and rows are cpu_simd's FP64 direct form
     * over the dataset's rows widened to FP64 (the cpu engine), so an
     * exact search over a k-d tree (src/kd_tree.h) computes the same
     * bits; these are its kernels. */
    const cpu_simd_ops *f64_direct;
    /* Optional, for COUNT and PERPOINT: cnt[r] += how many candidates of
     * [c0, c1) row q+r joins (d2 <= lim, where lim is eps2 in those
     * modes), for r < nr <= rows_max, with no values stored. */
    void (*count)(const void *ctx, const void *scratch, size_t q, size_t nr, size_t c0, size_t c1,
                  double lim, uint64_t *cnt);
    /* Optional, for the k-distance over a grid (src/cpu_kdist.c): lay the
     * rows out in g's cell order, so that prepare and row take positions
     * of g; NULL g: the data's own order again. */
    void (*regrid)(const void *ctx, const cpu_grid *g);
    /* Optional: a grid index (src/cpu_grid.h) the engine built for this
     * join's radius; row numbers given to prepare, row and rows are then
     * positions in grid->order, and each query row meets only the rows of
     * its cell's neighbour cells. */
    const cpu_grid *grid;
    const void *ctx;
    size_t row_bytes; /* bytes of one stored row, to size candidate blocks */
    /* Thresholds as the engine compares them: a pair is in the join when
     * d2 <= eps2; HIST edges as they are compared (nbins+1 values). */
    double eps2;
    const double *edges;
    const char *name; /* for res->variant */
    const char *path; /* instruction set of the kernels, for res->variant */
} cpu_kernel;

/* A prepare step for rows of d values of elem bytes each at x: candidate
 * rows [c0, c1) into scratch as groups of CPU_GROUP rows transposed to
 * [k][lane], the lanes past c1 zero (all bits 0: +0.0 in float or double).
 * Inline so that elem is a constant in each engine's copy. */
static inline void cpu_join_transpose(void *scratch, const void *x, size_t elem, size_t d,
                                      size_t c0, size_t c1)
{
    char *p = scratch;
    for (size_t g = c0; g < c1; g += CPU_GROUP, p += d * CPU_GROUP * elem)
        for (size_t w = 0; w < CPU_GROUP; w++) {
            const char *row = g + w < c1 ? (const char *)x + (g + w) * d * elem : NULL;
            for (size_t k = 0; k < d; k++) {
                char *cell = p + (k * CPU_GROUP + w) * elem;
                if (row)
                    memcpy(cell, row + k * elem, elem);
                else
                    memset(cell, 0, elem);
            }
        }
}

/* Run spec over rows [q0, q1) with k; fills pairs, kernel_seconds, the
 * "compute" and "sink" phases, device and variant. Returns 0, TCJ_ECANCEL,
 * or the sink's error code with its message. */
int cpu_join_run(const join_spec *spec, const cpu_kernel *k, join_result *res);

/* CPU_INDEX_* of engine_opts.cpu_index (`set cpu-index`) */
enum { CPU_INDEX_AUTO, CPU_INDEX_OFF, CPU_INDEX_ON, CPU_INDEX_N };
/* What the options (NULL: the defaults) ask of the index: CPU_INDEX_AUTO,
 * _OFF or _ON. */
int cpu_join_index_want(const engine_opts *o);
/* "auto", "off", "on" to CPU_INDEX_*; -1 when unknown. */
int cpu_index_parse(const char *name);
const char *cpu_index_name(int idx);

/* Whether spec's join over pairs within radius r per coordinate (every
 * pair the engine can report has |a_j - b_j| <= r along each dimension)
 * runs on a grid index: built into g and 1 when the options allow it and
 * it prunes (or is forced on and can be built); else 0 and g holds
 * nothing; TCJ_ENOMEM (negative, one line)
 * when the index does not fit in memory. The build time is the "index"
 * phase of res. */
int cpu_join_index(const join_spec *spec, double r, cpu_grid *g, join_result *res);

/* Threads the spec's options ask for (0 = online CPUs), at least 1. */
int cpu_join_threads(const engine_opts *o);

/* The CPU drivers' worker pool (cpu_join_run, the k-distance driver): the
 * shared state each worker updates when it is done (under mu: *finished
 * += 1, then a signal on cv) and the rows it has finished. */
typedef struct cpu_pool {
    pthread_mutex_t *mu;
    pthread_cond_t *cv;
    const int *finished;
    const atomic_size_t *rows_done;
    size_t nq;                                /* rows in all: progress is rows_done / nq */
    void (*progress)(void *ctx, double frac); /* may be NULL */
    void *progress_ctx;
} cpu_pool;
/* Run fn on nthr worker records (record t at args + t*stride) in threads
 * while the calling thread reports progress every 100 ms; when no thread
 * can be started, run the first record here. Returns when every worker is
 * done. */
void cpu_pool_run(const cpu_pool *p, int nthr, void *(*fn)(void *), void *args, size_t stride);
/* "model name" of /proc/cpuinfo, or "unknown CPU". Static string. */
const char *cpu_join_model(void);

#endif
